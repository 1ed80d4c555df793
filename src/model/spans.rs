//! The span tree of a session: the calls and runs nested as the source nested them, each
//! with when it started and how long it took (the picture of otel-tui's and Langfuse's
//! trace views).
//!
//! A node is an event that stands for a span, a Langfuse observation or a LangSmith run: it
//! has an `id`, and either names its parent (`x_parent`), is its span (`x_span` equal to its
//! `id`) or says how long it took (`duration_ms`). Its parent is the node whose `id` (or
//! `x_span`) its `x_parent` names; a node whose parent is not in the session is a root.
//! Children are listed in the order they appear in the session (by start time, for
//! imported traces).

use std::collections::HashMap;

use serde_json::Value;

use crate::trace::event::Body;
use crate::trace::{Event, TraceLog};

use super::clock::{duration_ms, start_of};
use super::failure::failure_of;
use super::timeline::{Timeline, load_at};

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanRow {
    /// The step of its event.
    pub step: u32,
    /// How deep it is (0 for a root).
    pub depth: u32,
    /// Its event's kind.
    pub kind: String,
    /// What it is: the tool, the model, the agent, the span's name (raw).
    pub label: String,
    /// When it started, seconds after the session's first time.
    pub start: Option<f64>,
    /// How long it took.
    pub duration_ms: Option<f64>,
    /// Whether it failed ([`failure_of`]).
    pub failed: bool,
}

fn text(ev: &Event, k: &str) -> Option<String> {
    match ev.extra.value(k)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

fn label(ev: &Event) -> String {
    match &ev.body {
        Body::Intention(i) => i.intention_type.as_deref().unwrap_or("").to_string(),
        Body::Plan(_) => ev.id.as_deref().unwrap_or("").to_string(),
        _ => ["tool", "model", "name", "query"]
            .iter()
            .find_map(|k| text(ev, k))
            .unwrap_or_default(),
    }
}

/// The span tree of `tl`, in display order (each node followed by its children).
pub fn span_tree(log: &TraceLog, tl: &Timeline) -> Vec<SpanRow> {
    // (row, parent id, own keys)
    let mut nodes: Vec<(SpanRow, Option<String>)> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for (i, &p) in tl.event_positions().iter().enumerate() {
        let Some(ev) = load_at(log, p) else { continue };
        let Some(id) = ev.id.as_deref() else { continue };
        let span = text(&ev, "x_span");
        let parent = text(&ev, "x_parent");
        let took = duration_ms(&ev);
        let is_node = span.as_deref() == Some(id)
            || parent.is_some()
            || (took.is_some() && !matches!(ev.body, Body::Log(_)));
        if !is_node {
            continue;
        }
        let k = nodes.len();
        by_key.entry(id.to_string()).or_insert(k);
        if let Some(s) = span {
            by_key.entry(s).or_insert(k);
        }
        nodes.push((
            SpanRow {
                step: i as u32 + 1,
                depth: 0,
                kind: ev.kind_name().to_string(),
                label: label(&ev),
                // Made relative below, to the earliest start.
                start: ev.ts.as_ref().map(|t| t.unix_seconds),
                duration_ms: took,
                failed: failure_of(&ev).is_some(),
            },
            parent,
        ));
    }
    // Times are since the earliest of the session's first time and the nodes' starts.
    let t0 = nodes
        .iter()
        .filter_map(|(r, _)| r.start)
        .chain(start_of(log, tl))
        .fold(f64::INFINITY, f64::min);
    for (r, _) in &mut nodes {
        r.start = r.start.map(|t| t - t0);
    }
    let parent_of: Vec<Option<usize>> = nodes
        .iter()
        .enumerate()
        .map(|(k, (_, p))| {
            p.as_ref()
                .and_then(|p| by_key.get(p).copied())
                .filter(|&q| q != k)
        })
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (k, p) in parent_of.iter().enumerate() {
        match p {
            Some(q) => children[*q].push(k),
            None => roots.push(k),
        }
    }
    // Depth first, without recursion (a deep tree must not overflow the stack); a node
    // reached twice (a cycle in the source's parent links) is listed once.
    let mut out = Vec::with_capacity(nodes.len());
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<(usize, u32)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    loop {
        while let Some((k, depth)) = stack.pop() {
            if std::mem::replace(&mut seen[k], true) {
                continue;
            }
            let mut row = nodes[k].0.clone();
            row.depth = depth;
            out.push(row);
            stack.extend(children[k].iter().rev().map(|&c| (c, depth + 1)));
        }
        // Nodes only on a cycle have no root above them: start from the first left.
        match seen.iter().position(|s| !s) {
            Some(k) => stack.push((k, 0)),
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;

    #[test]
    fn children_nest_under_their_parents_whatever_the_order() {
        let trace = [
            r#"{"kind":"llm_call","id":"c1","model":"m","x_span":"c1","x_parent":"a1","duration_ms":5,"ts":1.5}"#,
            r#"{"kind":"intention","id":"a1","type":"agent","x_span":"a1","duration_ms":20,"ts":1}"#,
            r#"{"kind":"thought","text":"hm","x_span":"c1","x_parent":"a1"}"#,
            r#"{"kind":"tool_call","id":"t1","tool":"ls","x_span":"t1","x_parent":"a1","status":"error","ts":2}"#,
            r#"{"kind":"span","id":"s9","name":"orphan","x_span":"s9","x_parent":"gone"}"#,
            r#"{"kind":"span","id":"x","name":"loop-a","x_parent":"y"}"#,
            r#"{"kind":"span","id":"y","name":"loop-b","x_parent":"x"}"#,
        ]
        .join("\n");
        let m = Model::from_bytes("t.jsonl", trace.as_bytes());
        let rows = span_tree(m.log(), &m.timelines()[0]);
        let brief: Vec<(u32, u32, &str, bool)> = rows
            .iter()
            .map(|r| (r.step, r.depth, r.label.as_str(), r.failed))
            .collect();
        assert_eq!(
            brief,
            [
                (2, 0, "agent", false),
                (1, 1, "m", false),
                (4, 1, "ls", true),
                (5, 0, "orphan", false),
                (6, 0, "loop-a", false),
                (7, 1, "loop-b", false),
            ]
        );
        assert_eq!(rows[1].start, Some(0.5));
        assert_eq!(rows[1].duration_ms, Some(5.0));
    }
}
