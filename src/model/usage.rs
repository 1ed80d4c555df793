//! Model calls made readable: what an `llm_call` says (model, tokens, finish reason, the
//! first words of its output) and the token totals of a session, per model and per agent
//! run.
//!
//! The importers keep each source's usage as it wrote it (`docs/import.md`): OpenTelemetry
//! spans give `input_tokens`, `output_tokens`, `cache_read_tokens`, `cache_write_tokens`,
//! `reasoning_tokens`, `total_tokens` on the event; Inspect a `usage` object
//! (`input_tokens_cache_read`, `reasoning_tokens`, ...); Langfuse `usage` (`input`,
//! `output`, `total`, `cache_read_input_tokens`, ...); LangSmith the provider's usage
//! (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`,
//! `completion_tokens_details.reasoning_tokens`). [`Tokens::of`] reads all of them.
//!
//! A run's totals are counted from the model calls inside it (by the span tree, `x_span` and
//! `x_parent`, when the events carry it; else every call after the run's `intention` up to
//! the next one) and shown beside the totals the framework reports on the run itself
//! (`gen_ai.usage.*` on an agent span, pydantic-ai's aggregated usage), which may differ
//! when the framework counts calls the trace does not hold.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::trace::event::Body;
use crate::trace::{Event, TraceLog};

use super::timeline::{Timeline, load_at};

/// Token counts; a count the source does not give is `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input (prompt) tokens, cached ones included.
    pub input: Option<u64>,
    /// Output (completion) tokens, reasoning included.
    pub output: Option<u64>,
    /// Input tokens read from the provider's cache.
    pub cache_read: Option<u64>,
    /// Input tokens written to the cache.
    pub cache_write: Option<u64>,
    /// Reasoning tokens.
    pub reasoning: Option<u64>,
    /// The total the source gives (else input + output).
    pub total: Option<u64>,
}

fn num(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The first of `keys` present in `obj` (a path: `a.b`).
fn first(obj: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| {
        let mut v = obj;
        for part in k.split('.') {
            v = v.get(part)?;
        }
        num(Some(v))
    })
}

const INPUT: &[&str] = &["input_tokens", "prompt_tokens", "input", "promptTokens"];
const OUTPUT: &[&str] = &[
    "output_tokens",
    "completion_tokens",
    "output",
    "completionTokens",
];
const CACHE_READ: &[&str] = &[
    "cache_read_tokens",
    "input_tokens_cache_read",
    "cache_read_input_tokens",
    "prompt_tokens_details.cached_tokens",
    "input_token_details.cache_read",
    "input_cached_tokens",
    "cached_tokens",
];
const CACHE_WRITE: &[&str] = &[
    "cache_write_tokens",
    "input_tokens_cache_write",
    "cache_creation_input_tokens",
    "input_token_details.cache_creation",
];
const REASONING: &[&str] = &[
    "reasoning_tokens",
    "completion_tokens_details.reasoning_tokens",
    "output_token_details.reasoning",
    "output_reasoning_tokens",
];
const TOTAL: &[&str] = &["total_tokens", "total", "totalTokens"];

impl Tokens {
    /// The tokens an event records, from its own fields or its `usage` object; `None` when
    /// it records none.
    pub fn of(ev: &Event) -> Option<Tokens> {
        let mut fields = serde_json::Map::new();
        for (k, v) in ev.extra.iter() {
            if let Ok(v) = serde_json::from_str::<Value>(v.get()) {
                fields.insert(k.to_string(), v);
            }
        }
        let own = Value::Object(fields);
        let usage = own.get("usage").cloned().unwrap_or(Value::Null);
        let read = |keys: &[&str]| first(&own, keys).or_else(|| first(&usage, keys));
        // On the event itself only the explicit names count (`input` there is a prompt).
        let read_own = |keys: &[&str]| {
            first(
                &own,
                &keys
                    .iter()
                    .copied()
                    .filter(|k| k.ends_with("tokens") || k.contains('.'))
                    .collect::<Vec<_>>(),
            )
            .or_else(|| first(&usage, keys))
        };
        let t = Tokens {
            input: read_own(INPUT),
            output: read_own(OUTPUT),
            cache_read: read(CACHE_READ),
            cache_write: read(CACHE_WRITE),
            reasoning: read(REASONING),
            total: read_own(TOTAL),
        };
        (t != Tokens::default()).then_some(t)
    }

    /// The total: the one given, else input + output.
    pub fn total(&self) -> Option<u64> {
        self.total.or(match (self.input, self.output) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        })
    }

    /// Adds another count in (a count either side has is kept).
    pub fn add(&mut self, o: &Tokens) {
        fn sum(a: &mut Option<u64>, b: Option<u64>) {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0).saturating_add(b));
            }
        }
        let total = match (self.total(), o.total()) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        sum(&mut self.input, o.input);
        sum(&mut self.output, o.output);
        sum(&mut self.cache_read, o.cache_read);
        sum(&mut self.cache_write, o.cache_write);
        sum(&mut self.reasoning, o.reasoning);
        self.total = total;
    }

    /// `in 1124 out 23 cache 512 reasoning 40`: the counts the source gave.
    pub fn brief(&self) -> String {
        let mut parts = Vec::new();
        for (label, v) in [
            ("in", self.input),
            ("out", self.output),
            ("cache", self.cache_read),
            ("cache-write", self.cache_write),
            ("reasoning", self.reasoning),
        ] {
            if let Some(n) = v {
                parts.push(format!("{label} {n}"));
            }
        }
        if parts.is_empty()
            && let Some(t) = self.total
        {
            parts.push(format!("total {t}"));
        }
        parts.join(" ")
    }
}

/// What one `llm_call` says, for its timeline row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelCall {
    /// The model (the response's model when it differs from the one asked for).
    pub model: Option<String>,
    /// Its tokens.
    pub tokens: Option<Tokens>,
    /// Why it stopped (`stop`, `tool_calls`, `length`, ...).
    pub finish: Option<String>,
    /// Its output text (raw).
    pub output: Option<String>,
    /// The tools it asked for.
    pub tool_requests: Vec<String>,
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().filter_map(as_text).collect();
            (!parts.is_empty()).then(|| parts.join(","))
        }
        other => Some(other.to_string()),
    }
}

/// Whether an `llm_call` amends a call shown before it (`x_amends`: the content that came
/// after the call, `docs/import.md`) rather than being a call of its own: counted once, as
/// that call.
pub fn is_amendment(ev: &Event) -> bool {
    ev.kind_name() == "llm_call" && ev.extra.value("x_amends").is_some()
}

/// What an `llm_call` event says; `None` for any other event.
pub fn model_call(ev: &Event) -> Option<ModelCall> {
    if !matches!(ev.body, Body::Unknown(_)) || ev.kind_name() != "llm_call" {
        return None;
    }
    let get = |k: &str| ev.extra.value(k);
    let model = ["response_model", "model"]
        .iter()
        .find_map(|k| get(k).as_ref().and_then(as_text));
    let finish = ["finish_reasons", "stop_reason", "finish_reason"]
        .iter()
        .find_map(|k| get(k).as_ref().and_then(as_text));
    let output = get("output").as_ref().and_then(as_text);
    let tool_requests = match get("tool_calls") {
        Some(Value::Array(calls)) => calls
            .iter()
            .filter_map(|c| {
                c.get("name")
                    .or_else(|| c.get("function").and_then(|f| f.get("name").or(Some(f))))
                    .and_then(Value::as_str)
                    .or_else(|| c.as_str())
                    .map(str::to_string)
            })
            .collect(),
        _ => Vec::new(),
    };
    Some(ModelCall {
        model,
        tokens: Tokens::of(ev),
        finish,
        output,
        tool_requests,
    })
}

/// The messages of a model call as a transcript: (who, text) in order: the messages it was
/// sent (`input`: `[{role, text}]` as the importers write it, or `{role, content}`;
/// Inspect's `x_last_input`), then its reasoning-free output and the tools it asked for.
/// Empty for an event that is not an `llm_call`.
pub fn transcript(ev: &Event) -> Vec<(String, String)> {
    let Some(call) = model_call(ev) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match ev.extra.value("input") {
        Some(Value::Array(msgs)) => {
            for m in &msgs {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("message");
                let text = m
                    .get("text")
                    .or_else(|| m.get("content"))
                    .and_then(as_text)
                    .unwrap_or_default();
                let mut text = text;
                if let Some(n) = m.get("truncated").and_then(Value::as_u64) {
                    text.push_str(&format!(" […cut: {n} bytes in all]"));
                }
                out.push((role.to_string(), text));
            }
        }
        Some(Value::String(s)) => out.push(("input".into(), s)),
        _ => {
            if let Some(n) = ev.extra.value("input_messages").and_then(|v| v.as_u64())
                && n > 1
            {
                out.push((
                    "input".into(),
                    format!("{} earlier messages (not in the trace)", n - 1),
                ));
            }
            if let Some(Value::String(last)) = ev.extra.value("x_last_input") {
                let (role, text) = last
                    .split_once(": ")
                    .map_or(("input", last.as_str()), |(r, t)| (r, t));
                out.push((role.to_string(), text.to_string()));
            }
        }
    }
    if let Some(o) = call.output.filter(|o| !o.trim().is_empty()) {
        out.push(("assistant".into(), o));
    }
    if let Some(Value::Array(calls)) = ev.extra.value("tool_calls") {
        for c in &calls {
            let name = c
                .get("name")
                .or_else(|| c.get("function").and_then(|f| f.get("name").or(Some(f))))
                .and_then(Value::as_str)
                .or_else(|| c.as_str())
                .unwrap_or("?");
            let args = c
                .get("arguments")
                .or_else(|| c.get("args"))
                .or_else(|| c.get("function").and_then(|f| f.get("arguments")))
                .map(|a| match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            out.push(("tool request".into(), format!("{name}({args})")));
        }
    }
    out
}

/// The first `n` words of a text, on one line, with `…` when there was more.
pub fn first_words(text: &str, n: usize) -> String {
    let mut words = text.split_whitespace();
    let head: Vec<&str> = words.by_ref().take(n).collect();
    let mut s = head.join(" ");
    if words.next().is_some() {
        s.push('…');
    }
    s
}

/// The token totals of one agent run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTotals {
    /// The intention's id.
    pub id: String,
    /// Its type (the agent's name).
    pub name: String,
    /// The step of its `intention`.
    pub step: u32,
    /// Model calls counted in it.
    pub calls: u64,
    /// Their tokens added up.
    pub counted: Tokens,
    /// The totals the framework reports on the run itself.
    pub reported: Option<Tokens>,
}

/// The token totals of a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Model calls in the session.
    pub calls: u64,
    /// Their tokens added up.
    pub session: Tokens,
    /// Per model: calls and tokens.
    pub by_model: BTreeMap<String, (u64, Tokens)>,
    /// Per agent run, in the order they started.
    pub by_run: Vec<RunTotals>,
}

impl Totals {
    /// The totals as lines of text (raw: sanitize before showing): the session, each
    /// model, each run with what the framework reported beside what was counted.
    pub fn lines(&self) -> Vec<String> {
        let tokens = |t: &Tokens| {
            let b = t.brief();
            match t.total() {
                Some(n) if !b.is_empty() => format!("{b} (total {n})"),
                _ if b.is_empty() => "no token counts".into(),
                _ => b,
            }
        };
        let calls = |n: u64| format!("{n} model call{}", if n == 1 { "" } else { "s" });
        let mut out = vec![format!(
            "session: {}, {}",
            calls(self.calls),
            tokens(&self.session)
        )];
        for (m, (n, t)) in &self.by_model {
            out.push(format!("  model {m}: {}, {}", calls(*n), tokens(t)));
        }
        for r in &self.by_run {
            let mut line = format!(
                "  run {} {} (step {}): {}, {}",
                r.id,
                r.name,
                r.step,
                calls(r.calls),
                tokens(&r.counted)
            );
            if let Some(rep) = &r.reported {
                line.push_str(&format!("; the run reports {}", tokens(rep)));
            }
            out.push(line);
        }
        out
    }
}

/// The token totals of the session `tl`.
pub fn totals(log: &TraceLog, tl: &Timeline) -> Totals {
    let mut t = Totals::default();
    // span id → parent span id, and span id → run index.
    let mut parent: HashMap<String, String> = HashMap::new();
    let mut run_of_span: HashMap<String, usize> = HashMap::new();
    // (run index or none, tokens, span) of every model call.
    let mut calls: Vec<(Option<usize>, Tokens, Option<String>)> = Vec::new();
    let mut current: Option<usize> = None;
    let text = |ev: &Event, k: &str| match ev.extra.value(k) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    for (i, &p) in tl.event_positions().iter().enumerate() {
        let Some(ev) = load_at(log, p) else { continue };
        let span = text(&ev, "x_span");
        if let (Some(s), Some(par)) = (&span, text(&ev, "x_parent")) {
            parent.insert(s.clone(), par);
        }
        match &ev.body {
            Body::Intention(it) => {
                let id = ev.id.as_deref().unwrap_or("").to_string();
                t.by_run.push(RunTotals {
                    id: id.clone(),
                    name: it.intention_type.as_deref().unwrap_or("").to_string(),
                    step: i as u32 + 1,
                    calls: 0,
                    counted: Tokens::default(),
                    reported: Tokens::of(&ev),
                });
                let k = t.by_run.len() - 1;
                current = Some(k);
                run_of_span.insert(span.unwrap_or(id), k);
            }
            Body::Unknown(_) if ev.kind_name() == "llm_call" && !is_amendment(&ev) => {
                let tokens = Tokens::of(&ev).unwrap_or_default();
                t.calls += 1;
                t.session.add(&tokens);
                let model = model_call(&ev)
                    .and_then(|m| m.model)
                    .unwrap_or_else(|| "(no model)".into());
                let e = t.by_model.entry(model).or_default();
                e.0 += 1;
                e.1.add(&tokens);
                let par = text(&ev, "x_parent");
                calls.push((current, tokens, par));
            }
            _ => {}
        }
    }
    for (fallback, tokens, par) in calls {
        // Up the span tree to the nearest run; the latest run before the call otherwise.
        let mut run = None;
        let mut at = par;
        let mut hops = 0;
        while let Some(s) = at {
            if let Some(&k) = run_of_span.get(&s) {
                run = Some(k);
                break;
            }
            hops += 1;
            if hops > 256 {
                break;
            }
            at = parent.get(&s).cloned();
        }
        if let Some(k) = run.or(fallback) {
            let r = &mut t.by_run[k];
            r.calls += 1;
            r.counted.add(&tokens);
        }
    }
    t
}
