//! `gen_ai.evaluation.result`, as a span event or as a log record (the GenAI conventions
//! allow both), is a `score`: `gen_ai.evaluation.name`, `…score.value`, `…score.label` and
//! `…explanation` as the score's name, value, label and explanation. What it scores is the
//! span it was emitted in (the conventions: "SHOULD be parented to the GenAI operation span
//! being evaluated"), whose one event carries the span id as its `id`; without a span,
//! `gen_ai.response.id` is kept (`x_response_id`) so the reader can find the response.

use super::super::json_value::Json;
use super::super::span::{Attrs, Val, attr};
use super::{Obj, push_hex};

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
