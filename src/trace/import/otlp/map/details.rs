//! The `gen_ai.client.inference.operation.details` log record and the model-call span it was
//! emitted in describe the same call (openai-v2 and the other instrumentations built on
//! `opentelemetry-util-genai` send the span without content and the record with it). Read
//! apart they were two model calls, counting the call's tokens twice and leaving the run
//! without its question. The record is held until its span is mapped, and the span is read
//! with the record's attributes it lacks: one model call, with its content.
//!
//! A record whose span was mapped before it came (a live exporter that sends the span
//! first: lines already written cannot be rewritten) amends that call: an `llm_call` with
//! `x_amends` = the call's span id and the record's content, without the tokens, time and
//! failure the call already has, so the call is counted once (`model::usage`). A record
//! whose span never comes is shown, as the model call it describes.

use std::borrow::Cow;

use super::super::logs::LogRec;
use super::super::span::Span;
use super::{DETAILS, MAX_PENDING, Out, Pending, SessionMap};

impl SessionMap {
    /// Keeps a details record until its span is mapped; `false` when it must be mapped now
    /// (no span named, or too many held).
    pub(super) fn hold_details(&mut self, rec: &LogRec) -> bool {
        let Some(id) = rec.span else { return false };
        if self.held.len() >= MAX_PENDING {
            return false;
        }
        // Two records for one call: the first is shown apart, the later one merged.
        if let Some(older) = self.held.insert(id, rec.clone()) {
            self.early.push(older);
        }
        true
    }

    /// The model-call span `sp` with its held details record's attributes it lacks, when a
    /// record is held for it.
    pub(super) fn with_details<'a>(&mut self, sp: &Span<'a>) -> Option<Span<'a>> {
        let id = sp.id?;
        if self.calls_seen.len() >= MAX_PENDING {
            self.calls_seen.clear();
        }
        self.calls_seen.insert(id, sp.parent);
        let rec = self.held.remove(&id)?;
        let mut merged = sp.clone();
        for (k, v) in &rec.attrs {
            if sp.attr(k).is_none() {
                merged.attrs.push((Cow::Owned(k.to_string()), v.clone()));
            }
        }
        Some(merged)
    }

    /// A details record as the model call it describes, its span not (yet) mapped.
    pub(super) fn details_call(&mut self, rec: &LogRec, out: &mut Vec<Out>) {
        let sp = record_span(rec, None, rec.span);
        // Read as a model call whatever its operation is named.
        let mut mine = Pending::default();
        self.llm(&sp, &mut mine, None, out);
    }

    /// A details record of the call of span `call` (child of `parent`), mapped before it
    /// came: the call's amendment. What it says of the run (its question, its answer) goes
    /// to the call's parent, as the call's own would have.
    pub(super) fn amend(
        &mut self,
        rec: &LogRec,
        call: u64,
        parent: Option<u64>,
        out: &mut Vec<Out>,
    ) {
        let sp = record_span(rec, Some(call), parent);
        let mut mine = Pending::default();
        self.llm(&sp, &mut mine, Some(call), out);
        if let Some(p) = parent {
            if self.pending.len() >= MAX_PENDING && !self.pending.contains_key(&p) {
                self.pending.clear();
            }
            self.pending.entry(p).or_default().merge(mine);
        }
    }

    /// Maps the details records still held (their span never came), in time order, and the
    /// scores still waiting for their model call (`evaluation.rs`): the session's end.
    pub(crate) fn flush_details(&mut self, out: &mut Vec<Out>) {
        let mut recs: Vec<LogRec> = std::mem::take(&mut self.early);
        recs.extend(self.held.drain().map(|(_, r)| r));
        recs.sort_by_key(|r| r.time);
        for r in &recs {
            debug_assert_eq!(r.event, DETAILS);
            self.details_call(r, out);
        }
        self.flush_scores(out);
    }
}

/// A details record read as the span of the model call it describes.
fn record_span(rec: &LogRec, id: Option<u64>, parent: Option<u64>) -> Span<'static> {
    let op = rec.str_attr("gen_ai.operation.name").unwrap_or("chat");
    Span {
        trace: rec.trace,
        id,
        parent,
        name: Cow::Owned(op.to_string()),
        start: rec.time,
        end: rec.time,
        error: rec.str_attr("error.type").is_some(),
        status_message: None,
        attrs: rec.attrs.clone(),
        events: Vec::new(),
        resource: rec.resource.clone(),
        location: std::sync::Arc::from("log record"),
    }
}
