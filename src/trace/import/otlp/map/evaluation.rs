//! `gen_ai.evaluation.result`, as a span event or as a log record (the GenAI conventions
//! allow both), is a `score`: `gen_ai.evaluation.name`, `…score.value`, `…score.label` and
//! `…explanation` as the score's name, value, label and explanation. What it scores is the
//! span it was emitted in (the conventions: "SHOULD be parented to the GenAI operation span
//! being evaluated"), whose one event carries the span id as its `id`; without a span,
//! `gen_ai.response.id` is kept (`x_response_id`).
//!
//! A record that names a `gen_ai.response.id` scores the model call with that response id
//! (`llm_call`'s `response_id`), whichever span it was emitted in, if any: an evaluator that
//! runs after the call, outside its span, has only the response id to say what it scored.
//! The call may come after the score (live, a span is sent when it ends): the score waits for
//! it, and is shown at the end of the session, aimed as before and said, when none comes.

use std::borrow::Cow;

use super::super::json_value::Json;
use super::super::span::{Attrs, Span, Val, attr};
use super::{MAX_PENDING, Obj, Out, SessionMap, push_hex};

/// The `score` an evaluation's attributes give, aimed at span `target`; the caller adds the
/// span ids and emits it.
pub(super) fn score(session: &str, attrs: &Attrs<'_>, target: Option<u64>) -> Obj {
    let a = |k: &str| attr(attrs, k);
    let mut o = Obj::new("score", session);
    o.str(
        "name",
        a("gen_ai.evaluation.name")
            .and_then(Val::as_str)
            .unwrap_or("evaluation"),
    );
    match a("gen_ai.evaluation.score.value").map(Val::to_json) {
        Some(v @ (Json::Num(_) | Json::Str(_) | Json::Bool(_))) => o.json("value", &v),
        // A score is one number, string or bool; anything else is kept as text.
        Some(Json::Null) | None => {}
        Some(other) => o.str("value", &other.to_json_string()),
    }
    o.opt(
        "label",
        a("gen_ai.evaluation.score.label").and_then(Val::as_str),
    );
    if let Some(x) = a("gen_ai.evaluation.explanation").and_then(Val::as_str) {
        o.text("explanation", x);
    }
    if let Some(id) = target {
        let mut hex = Vec::with_capacity(16);
        push_hex(&mut hex, id.into(), 16);
        o.str("target", &String::from_utf8_lossy(&hex));
    }
    o.opt(
        "x_response_id",
        a("gen_ai.response.id").and_then(Val::as_str),
    );
    if let Some(err) = a("error.type").and_then(Val::as_str) {
        o.str("error", err);
    }
    o
}

/// A score naming a response id that no model call of the session had yet, held until one
/// has it (a live exporter sends the model-call span after the record it emitted, and a
/// record may be emitted in a run's span, not the call's).
#[derive(Debug)]
pub(super) struct Waiting {
    response: String,
    attrs: Attrs<'static>,
    /// The span it was emitted in: its target when no call has the response id.
    span: Option<u64>,
    parent: Option<u64>,
    from: Option<String>,
    ts: Option<i128>,
}

/// Where a score was emitted: the span (and its parent and place in a file) it came in.
pub(super) struct Place {
    pub span: Option<u64>,
    pub parent: Option<u64>,
    pub from: Option<String>,
}

impl Place {
    /// A span's place: the span event's.
    pub(super) fn of(sp: &Span<'_>) -> Place {
        Place {
            span: sp.id,
            parent: sp.parent,
            from: match (sp.location.starts_with("line "), sp.id) {
                (true, Some(id)) => Some(format!("{}, span {id:016x}", sp.location)),
                _ => None,
            },
        }
    }
}

impl SessionMap {
    /// Maps a `gen_ai.evaluation.result` emitted at `place`. It scores the model call whose
    /// `gen_ai.response.id` it names, when it names one (the conventions' other way to say
    /// what is scored); else the span it was emitted in. A score naming a response no call
    /// of the session has yet is held until one has it (`flush_details` shows it unmatched).
    pub(super) fn evaluation(
        &mut self,
        attrs: &Attrs<'_>,
        place: Place,
        ts: Option<i128>,
        out: &mut Vec<Out>,
    ) {
        let response = attr(attrs, "gen_ai.response.id").and_then(Val::as_str);
        let target = match response {
            None => place.span,
            Some(r) => match self.responses.get(r) {
                Some(&call) => Some(call),
                // Emitted in a model call already shown, which names no response id.
                None if place.span.is_some_and(|s| self.calls_seen.contains_key(&s)) => place.span,
                None if self.waiting.len() < MAX_PENDING => {
                    self.waiting.push(Waiting {
                        response: r.to_string(),
                        attrs: attrs
                            .iter()
                            .map(|(k, v)| (Cow::Owned(k.to_string()), v.to_static()))
                            .collect(),
                        span: place.span,
                        parent: place.parent,
                        from: place.from,
                        ts,
                    });
                    return;
                }
                None => place.span,
            },
        };
        self.emit_score(attrs, target, &place, ts, out);
    }

    fn emit_score(
        &mut self,
        attrs: &Attrs<'_>,
        target: Option<u64>,
        place: &Place,
        ts: Option<i128>,
        out: &mut Vec<Out>,
    ) {
        let mut o = score(&self.name, attrs, target);
        if let Some(id) = place.span {
            o.hex("x_span", id.into(), 16);
        }
        if let Some(p) = place.parent {
            o.hex("x_parent", p.into(), 16);
        }
        o.opt("x_from", place.from.as_deref());
        self.emit(o, ts, out);
    }

    /// A model call was mapped (span `call`, response `response`): it takes the scores that
    /// wait for its response id, or that were emitted in its span.
    pub(super) fn call_mapped(&mut self, call: u64, response: Option<&str>, out: &mut Vec<Out>) {
        if let Some(r) = response {
            if self.responses.len() >= MAX_PENDING {
                self.responses.clear();
            }
            self.responses.insert(r.to_string(), call);
        }
        if self.waiting.is_empty() {
            return;
        }
        let (mine, rest): (Vec<Waiting>, Vec<Waiting>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| Some(w.response.as_str()) == response || w.span == Some(call));
        self.waiting = rest;
        for w in mine {
            let place = Place {
                span: w.span,
                parent: w.parent,
                from: w.from,
            };
            self.emit_score(&w.attrs, Some(call), &place, w.ts, out);
        }
    }

    /// Shows the scores still waiting (no model call had their response id): aimed at the
    /// span they were emitted in, as before, and each said by a warning.
    pub(super) fn flush_scores(&mut self, out: &mut Vec<Out>) {
        let mut waiting = std::mem::take(&mut self.waiting);
        waiting.sort_by_key(|w| w.ts);
        for w in waiting {
            let place = Place {
                span: w.span,
                parent: w.parent,
                from: w.from,
            };
            self.emit_score(&w.attrs, w.span, &place, w.ts, out);
            let name = attr(&w.attrs, "gen_ai.evaluation.name")
                .and_then(Val::as_str)
                .unwrap_or("evaluation");
            let mut o = Obj::new("log", &self.name);
            o.str("level", "warn");
            o.text(
                "message",
                &format!(
                    "score {name} names the model response {:?}, which no model call of this \
                     session has: it is shown on {}",
                    w.response,
                    if w.span.is_some() {
                        "the span it was emitted in"
                    } else {
                        "the whole run"
                    }
                ),
            );
            if let Some(id) = w.span {
                o.hex("x_span", id.into(), 16);
            }
            self.emit(o, w.ts, out);
        }
    }
}

/// One OpenInference (Phoenix) span annotation, as Phoenix's REST API takes it
/// (`POST /v1/span_annotations`, `{"data": [{"span_id", "name", "annotator_kind", "result":
/// {"label", "score", "explanation"}, "metadata", "identifier"}]}`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Annotation {
    /// The annotated span.
    pub span: u64,
    /// What is scored.
    pub name: String,
    /// `HUMAN`, `LLM` or `CODE`.
    pub annotator_kind: String,
    /// `result.label`.
    pub label: Option<String>,
    /// `result.score`.
    pub score: Option<f64>,
    /// `result.explanation`.
    pub explanation: Option<String>,
    /// `identifier`: tells apart annotations of one name on one span.
    pub identifier: Option<String>,
    /// `metadata`, as JSON text.
    pub metadata: Option<String>,
}

impl SessionMap {
    /// A span annotation as a `score` on the annotated span's event: `label` and `score`
    /// are the score's label and value, read by the one rule of `model::scores`, and the
    /// annotator kind (lowercase) its `source`.
    pub(crate) fn annotation(&mut self, a: &Annotation, out: &mut Vec<Out>) {
        let mut o = Obj::new("score", &self.name);
        o.text("name", &a.name);
        if let Some(n) = a.score.and_then(serde_json::Number::from_f64) {
            o.json("value", &Json::Num(n));
        }
        o.opt("label", a.label.as_deref());
        if let Some(x) = &a.explanation {
            o.text("explanation", x);
        }
        o.hex("target", a.span.into(), 16);
        o.str("source", &a.annotator_kind.to_ascii_lowercase());
        o.opt("x_identifier", a.identifier.as_deref());
        if let Some(m) = &a.metadata {
            o.text("x_metadata", m);
        }
        o.str("x_source", "phoenix span annotation");
        self.emit(o, None, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::import::{Format, import};

    /// A file: a model call answering `resp-1`, and untraced evaluations naming `resp-1`
    /// and a response no call gave.
    const FILE: &str = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"chat m","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.response.id","value":{"stringValue":"resp-1"}}]}]}]}]}
{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"3","eventName":"gen_ai.evaluation.result","attributes":[{"key":"gen_ai.evaluation.name","value":{"stringValue":"matched"}},{"key":"gen_ai.response.id","value":{"stringValue":"resp-1"}}]},{"timeUnixNano":"4","eventName":"gen_ai.evaluation.result","attributes":[{"key":"gen_ai.evaluation.name","value":{"stringValue":"lost"}},{"key":"gen_ai.response.id","value":{"stringValue":"resp-9"}}]}]}]}]}
"#;

    #[test]
    fn a_score_naming_a_response_scores_its_call_and_one_naming_none_is_said() {
        let v1 = import(Format::Otlp, FILE.as_bytes(), "f.jsonl")
            .expect("import")
            .v1;
        let evs: Vec<serde_json::Value> = String::from_utf8_lossy(&v1)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a v1 line"))
            .collect();
        let score = |n: &str| {
            evs.iter()
                .find(|e| e["kind"] == "score" && e["name"] == n)
                .unwrap_or_else(|| panic!("{n}: {evs:#?}"))
        };
        let matched = score("matched");
        assert_eq!(matched["target"], "b7ad6b7169203331");
        // In the call's session, not the file's session of untraced records.
        let call = evs
            .iter()
            .find(|e| e["kind"] == "llm_call")
            .expect("the call");
        assert_eq!(matched["session"], call["session"]);
        let lost = score("lost");
        assert!(lost.get("target").is_none(), "{lost}");
        assert_eq!(lost["x_response_id"], "resp-9");
        assert!(
            evs.iter().any(|e| e["kind"] == "log"
                && e["level"] == "warn"
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("\"resp-9\""))),
            "{evs:#?}"
        );
    }
}
