//! What two runs did besides believing: their tool calls, model calls, thoughts, answers,
//! scores and errors, aligned and compared (the part of `doxascope diff` that imported runs
//! need, since most of what they record is not a belief).
//!
//! Each run is read into one sequence per [`Item`] kind, in step order. The two sequences of
//! a kind are aligned by a longest common subsequence of their keys (the tool's name, the
//! model, the score's name, ...), so a run that called one tool more still pairs the calls
//! that follow; the unmatched items between two matched pairs are paired in order (a call of
//! another tool at the same place), and what is left over is only in one run. A pair differs
//! when any compared field differs. Ids, timestamps, durations and token counts are not
//! compared: they differ between any two runs.

use serde_json::{Value, json};

use super::{Run, lcs};
use crate::model::failure::{What, failure_of};
use crate::sanitize::sanitize;
use crate::trace::Event;
use crate::trace::event::Body;

/// The kinds of things compared, in the order they are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Item {
    /// A `tool_call` event, or a tool call of a plan `step`: tool, args, result, status, error.
    ToolCall,
    /// An `llm_call`: model, input messages, output, tool requests, finish reasons.
    ModelCall,
    /// A `thought`: its text.
    Thought,
    /// An `answer`: text, formula, hedged.
    Answer,
    /// A `score`: name, value, label.
    Score,
    /// A failure other than a tool call's (which its status carries): an error `log`, a
    /// failed model call or agent run (see [`crate::model::failure`]).
    Error,
}

impl Item {
    /// Every kind, in report order.
    pub const ALL: [Item; 6] = [
        Item::ToolCall,
        Item::ModelCall,
        Item::Thought,
        Item::Answer,
        Item::Score,
        Item::Error,
    ];

    /// Its name in the report and in JSON (`tool_call`, `llm_call`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Item::ToolCall => "tool_call",
            Item::ModelCall => "llm_call",
            Item::Thought => "thought",
            Item::Answer => "answer",
            Item::Score => "score",
            Item::Error => "error",
        }
    }

    /// What it is called in a sentence.
    pub fn noun(self) -> &'static str {
        match self {
            Item::ToolCall => "tool call",
            Item::ModelCall => "model call",
            Item::Thought => "thought",
            Item::Answer => "answer",
            Item::Score => "score",
            Item::Error => "error",
        }
    }
}

/// One occurrence of an item in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    /// Its kind.
    pub item: Item,
    /// Which one of its kind in the run (0-based).
    pub index: usize,
    /// The step of the event that holds it.
    pub step: u32,
    /// What it is aligned by (tool name, model, score name; empty when none).
    pub key: String,
    /// The compared fields, as written (raw; sanitize before showing).
    pub fields: Fields,
}

/// An item that differs between the runs, or that only one run has.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemDiff {
    /// Its kind.
    pub item: Item,
    /// In the first run (`None`: only the second has it).
    pub a: Option<Occurrence>,
    /// In the second run.
    pub b: Option<Occurrence>,
    /// The fields that differ (every field of the side present when one side is missing).
    pub fields: Vec<&'static str>,
}

/// The compared fields of an occurrence, by name.
pub type Fields = Vec<(&'static str, Value)>;

/// How many items of each kind each run has.
pub type Counts = Vec<(Item, usize, usize)>;

fn extra(ev: &Event, k: &'static str) -> Option<(&'static str, Value)> {
    ev.extra.value(k).map(|v| (k, v))
}

fn text_field(k: &'static str, t: Option<&str>) -> Option<(&'static str, Value)> {
    t.map(|t| (k, Value::String(t.to_string())))
}

/// Whether a tool call failed, as every face of doxascope reads it.
fn status_of(ev: &Event) -> &'static str {
    if failure_of(ev).is_some() {
        "error"
    } else {
        "ok"
    }
}

/// The items one event holds.
fn items_of(ev: &Event) -> Vec<(Item, String, Fields)> {
    let mut out = Vec::new();
    match (&ev.body, ev.kind_name()) {
        (Body::Unknown(_), "tool_call") => {
            let tool = ev.extra.value("tool").map_or(String::new(), |v| match v {
                Value::String(s) => s,
                v => v.to_string(),
            });
            let mut f = vec![("tool", Value::String(tool.clone()))];
            f.extend(extra(ev, "args"));
            f.extend(extra(ev, "result"));
            f.push(("status", Value::String(status_of(ev).into())));
            f.extend(extra(ev, "error").filter(|(_, v)| !v.is_null()));
            out.push((Item::ToolCall, tool, f));
        }
        (Body::Step(s), _) => {
            for c in &s.tool_calls {
                let mut f = vec![("tool", Value::String(c.tool.to_string()))];
                f.extend(c.args.as_deref().map(|v| ("args", v.clone())));
                f.extend(c.result.as_deref().map(|v| ("result", v.clone())));
                let st = if c.error.is_some() { "error" } else { "ok" };
                f.push(("status", Value::String(st.into())));
                f.extend(text_field("error", c.error.as_deref()));
                out.push((Item::ToolCall, c.tool.to_string(), f));
            }
        }
        // An amendment's call is compared as the call (`usage::is_amendment`).
        (Body::Unknown(_), "llm_call") if !crate::model::usage::is_amendment(ev) => {
            let model = ev.extra.value("model").map_or(String::new(), |v| match v {
                Value::String(s) => s,
                v => v.to_string(),
            });
            let mut f = vec![("model", Value::String(model.clone()))];
            for k in [
                "input",
                "output",
                "tool_calls",
                "finish_reasons",
                "stop_reason",
            ] {
                f.extend(extra(ev, k));
            }
            out.push((Item::ModelCall, model, f));
        }
        (Body::Thought(t), _) => {
            let f: Vec<_> = text_field("text", t.text.as_deref()).into_iter().collect();
            out.push((Item::Thought, String::new(), f));
        }
        (Body::Answer(a), _) => {
            let mut f: Vec<_> = text_field("text", a.text.as_deref()).into_iter().collect();
            f.extend(text_field("formula", a.formula.as_deref()));
            f.extend(a.hedged.map(|h| ("hedged", Value::Bool(h))));
            out.push((Item::Answer, String::new(), f));
        }
        (Body::Score(s), _) => {
            let mut f = vec![("name", Value::String(s.name.to_string()))];
            f.extend(s.value.as_ref().map(|v| ("value", json!(v))));
            f.extend(text_field("label", s.label.as_deref()));
            out.push((Item::Score, s.name.to_string(), f));
        }
        _ => {}
    }
    if let Some(fail) = failure_of(ev)
        && fail.what != What::ToolCall
    {
        let key = format!("{} {}", fail.what.noun(), fail.name);
        let f = vec![
            ("what", Value::String(fail.what.noun().into())),
            ("name", Value::String(fail.name)),
            ("message", Value::String(fail.message)),
        ];
        out.push((Item::Error, key, f));
    }
    out
}

/// Every item of a run, per kind, in step order.
pub fn items(run: Run<'_>) -> Vec<Vec<Occurrence>> {
    let mut out: Vec<Vec<Occurrence>> = vec![Vec::new(); Item::ALL.len()];
    for (i, &pos) in run.tl.event_positions().iter().enumerate() {
        let Some(ev) = run.log.events.load(pos as usize) else {
            continue;
        };
        for (item, key, fields) in items_of(&ev) {
            let list = &mut out[item as usize];
            list.push(Occurrence {
                item,
                index: list.len(),
                step: i as u32 + 1,
                key,
                fields,
            });
        }
    }
    out
}

/// The value of field `name`, if the occurrence has it.
pub fn field<'o>(o: &'o Occurrence, name: &str) -> Option<&'o Value> {
    o.fields.iter().find(|f| f.0 == name).map(|f| &f.1)
}

/// The names of the fields that differ between two occurrences (a field only one has
/// differs).
fn differing(x: &Occurrence, y: &Occurrence) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = x.fields.iter().chain(&y.fields).map(|f| f.0).collect();
    names.dedup();
    let mut seen = Vec::new();
    for n in names {
        if seen.contains(&n) {
            continue;
        }
        if field(x, n) != field(y, n) {
            seen.push(n);
        }
    }
    seen
}

fn one_sided(item: Item, a: Option<&Occurrence>, b: Option<&Occurrence>) -> ItemDiff {
    let side = a.or(b).expect("one side");
    ItemDiff {
        item,
        a: a.cloned(),
        b: b.cloned(),
        fields: side.fields.iter().map(|f| f.0).collect(),
    }
}

/// Aligns one kind's two sequences and lists what differs, in order.
fn diff_kind(item: Item, xs: &[Occurrence], ys: &[Occurrence]) -> Vec<ItemDiff> {
    let kx: Vec<&str> = xs.iter().map(|o| o.key.as_str()).collect();
    let ky: Vec<&str> = ys.iter().map(|o| o.key.as_str()).collect();
    let mut matched = lcs(&kx, &ky);
    matched.push((xs.len(), ys.len()));
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (mi, mj) in matched {
        // The gap before the match: paired in order, then the rest one-sided.
        while i < mi || j < mj {
            let (x, y) = (xs[i..mi].first(), ys[j..mj].first());
            match (x, y) {
                (Some(x), Some(y)) => out.push(ItemDiff {
                    item,
                    a: Some(x.clone()),
                    b: Some(y.clone()),
                    fields: differing(x, y),
                }),
                _ => out.push(one_sided(item, x, y)),
            }
            i += usize::from(x.is_some());
            j += usize::from(y.is_some());
        }
        if let (Some(x), Some(y)) = (xs.get(mi), ys.get(mj)) {
            let fields = differing(x, y);
            if !fields.is_empty() {
                out.push(ItemDiff {
                    item,
                    a: Some(x.clone()),
                    b: Some(y.clone()),
                    fields,
                });
            }
        }
        i = mi + 1;
        j = mj + 1;
    }
    out
}

/// What differs between the two runs' items, kind by kind in [`Item::ALL`] order, each in
/// the order of the runs; and how many items of each kind each run has.
pub fn diff_items(a: Run<'_>, b: Run<'_>) -> (Vec<ItemDiff>, Counts) {
    let (ia, ib) = (items(a), items(b));
    let mut out = Vec::new();
    let mut counts = Vec::new();
    for item in Item::ALL {
        let (xs, ys) = (&ia[item as usize], &ib[item as usize]);
        counts.push((item, xs.len(), ys.len()));
        out.extend(diff_kind(item, xs, ys));
    }
    (out, counts)
}

/// A field's value on one line: a string as is, anything else as compact JSON; cut to
/// `MAX_VALUE` characters and sanitized.
pub fn value_text(v: Option<&Value>) -> String {
    const MAX_VALUE: usize = 160;
    let s = match v {
        None => return "absent".to_string(),
        Some(Value::String(s)) => format!("{s:?}"),
        Some(v) => v.to_string(),
    };
    let mut cut: String = s.chars().take(MAX_VALUE).collect();
    if cut.len() < s.len() {
        cut.push('…');
    }
    sanitize(&cut)
}

/// `#2 get_current_time at step 4`, or `absent`.
pub fn occurrence_text(o: &Option<Occurrence>) -> String {
    match o {
        None => "absent".to_string(),
        Some(o) if o.key.is_empty() => format!("#{} at step {}", o.index + 1, o.step),
        Some(o) => format!("#{} {} at step {}", o.index + 1, sanitize(&o.key), o.step),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;

    fn model(lines: &[&str]) -> Model {
        Model::from_bytes("t.jsonl", (lines.join("\n") + "\n").as_bytes())
    }

    fn diffs(a: &[&str], b: &[&str]) -> Vec<ItemDiff> {
        let (ma, mb) = (model(a), model(b));
        let ra = Run::of(&ma, &ma.timelines()[0]);
        let rb = Run::of(&mb, &mb.timelines()[0]);
        diff_items(ra, rb).0
    }

    const T: &str = r#"{"kind":"tool_call","tool":"t","args":{"x":1},"result":"r"}"#;
    const U: &str = r#"{"kind":"tool_call","tool":"u","args":{},"result":"s"}"#;

    #[test]
    fn an_extra_call_is_one_sided_and_the_calls_after_it_still_pair() {
        let d = diffs(&[T, T], &[U, T, T]);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert!(d[0].a.is_none());
        assert_eq!(d[0].b.as_ref().unwrap().key, "u");
    }

    #[test]
    fn another_tool_at_the_same_place_is_paired_and_named() {
        let d = diffs(&[T], &[U]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].fields, ["tool", "args", "result"]);
    }

    #[test]
    fn a_failed_call_differs_by_status_and_an_error_log_is_an_error() {
        let failed =
            r#"{"kind":"tool_call","tool":"t","args":{"x":1},"result":"r","status":"error"}"#;
        let d = diffs(&[T], &[failed]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].fields, ["status"]);
        let log = r#"{"kind":"log","level":"error","message":"boom"}"#;
        let d = diffs(&[T], &[T, log]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].item, Item::Error);
    }

    #[test]
    fn the_same_items_do_not_differ() {
        let all = [
            T,
            r#"{"kind":"llm_call","model":"m","output":"hi","input_tokens":3}"#,
            r#"{"kind":"answer","text":"42"}"#,
            r#"{"kind":"score","name":"acc","value":1}"#,
        ];
        assert!(diffs(&all, &all).is_empty());
        // Token counts and ids are not compared.
        let other = [
            T,
            r#"{"kind":"llm_call","id":"z","model":"m","output":"hi","input_tokens":9}"#,
            r#"{"kind":"answer","text":"42"}"#,
            r#"{"kind":"score","name":"acc","value":1}"#,
        ];
        assert!(diffs(&all, &other).is_empty());
    }
}
