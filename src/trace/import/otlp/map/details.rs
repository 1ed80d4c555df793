//! The `gen_ai.client.inference.operation.details` log record and the model-call span it was
//! emitted in describe the same call (openai-v2 and the other instrumentations built on
//! `opentelemetry-util-genai` send the span without content and the record with it). Read
//! apart they were two model calls, counting the call's tokens twice and leaving the run
//! without its question. The record is held until its span is mapped, and the span is read
//! with the record's attributes it lacks: one model call, with its content.
//!
//! A record whose span was mapped before it came (a live exporter sending the span first), or
//! whose span never comes, is still shown, as the model call it describes.

use std::borrow::Cow;

use super::super::logs::LogRec;
use super::super::span::Span;
use super::{DETAILS, MAX_PENDING, Out, SessionMap};

impl SessionMap {
    /// Keeps a details record until its span is mapped; `false` when it must be mapped now
    /// (no span named, the span already mapped, or too many held).
    pub(super) fn hold_details(&mut self, rec: &LogRec) -> bool {
        let Some(id) = rec.span else { return false };
        if self.calls_seen.contains(&id) || self.held.len() >= MAX_PENDING {
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
        self.calls_seen.insert(id);
        let rec = self.held.remove(&id)?;
        let mut merged = sp.clone();
        for (k, v) in &rec.attrs {
            if sp.attr(k).is_none() {
                merged.attrs.push((Cow::Owned(k.to_string()), v.clone()));
            }
        }
        Some(merged)
    }

    /// Maps the details records still held (their span never came), in time order.
    pub(crate) fn flush_details(&mut self, out: &mut Vec<Out>) {
        let mut recs: Vec<LogRec> = std::mem::take(&mut self.early);
        recs.extend(self.held.drain().map(|(_, r)| r));
        recs.sort_by_key(|r| r.time);
        for r in &recs {
            debug_assert_eq!(r.event, DETAILS);
            // No longer held: mapped as the call it describes.
            self.calls_seen.extend(r.span);
            self.log_record(r, out);
        }
    }
}
