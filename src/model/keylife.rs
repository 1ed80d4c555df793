//! A key's life in one view: every value a ground belief (a memory key, a state channel, a
//! seed 004 ground belief) held up to a step, who wrote each and at which step (the writing
//! event, and for a plan step its id and summary), how each value ended (overwritten,
//! re-written, retracted), and the plan steps that read the key (their `inputs`).
//!
//! It reads the replay alone ([`Timeline`]'s records of the key and the BDI log's steps);
//! the REPL's `history KEY` shows it beside the history of the key's current value atom.

use crate::trace::TraceLog;
use crate::trace::event::Body;

use super::timeline::{Retraction, Timeline, load_at};

/// One value a key held.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyWrite {
    /// Its record of Σ.
    pub record: u32,
    /// The step of the write.
    pub step: u32,
    /// The writing event.
    pub event: u32,
    /// The value atom, printed.
    pub formula: String,
    /// The belief's source.
    pub source: Option<String>,
    /// Who wrote it: `belief`, or the plan step (`step S3 of plan-2: summary`).
    pub writer: String,
    /// How the value ended, if it did by the step asked about.
    pub ended: Option<Retraction>,
}

/// A plan step that read the key (its `inputs` name it).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRead {
    /// The step of the `step` event.
    pub step: u32,
    /// The event.
    pub event: u32,
    /// The plan step's id and plan, as written (`S3 of plan-2`).
    pub by: String,
}

/// Everything [`key_life`] found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyLife {
    /// The values, in order of writing.
    pub writes: Vec<KeyWrite>,
    /// The reads, in order.
    pub reads: Vec<KeyRead>,
}

/// The life of ground belief `key` up to step `upto`; `None` when no ground belief of that
/// name was written by then.
pub fn key_life(tl: &Timeline, log: &TraceLog, key: &str, upto: u32) -> Option<KeyLife> {
    let writes: Vec<KeyWrite> = tl
        .records_of(key)
        .filter(|(i, r)| tl.is_ground(*i) && r.announced <= upto)
        .map(|(i, r)| KeyWrite {
            record: i,
            step: r.announced,
            event: r.event,
            formula: tl
                .ground_announce(i)
                .map(|a| a.formula.to_string())
                .unwrap_or_default(),
            source: tl
                .ground_announce(i)
                .and_then(|a| a.source.as_ref().map(|s| s.to_string())),
            writer: writer(log, r.event),
            ended: r.retraction.filter(|x| x.step <= upto),
        })
        .collect();
    if writes.is_empty() {
        return None;
    }
    let reads = tl
        .bdi_log()
        .steps
        .iter()
        .filter(|s| s.step <= upto)
        .filter_map(|s| {
            let ev = load_at(log, s.event)?;
            match &ev.body {
                Body::Step(st) if st.inputs.as_ref().is_some_and(|m| m.contains_key(key)) => {
                    Some(KeyRead {
                        step: s.step,
                        event: s.event,
                        by: plan_step(st),
                    })
                }
                _ => None,
            }
        })
        .collect();
    Some(KeyLife { writes, reads })
}

fn plan_step(st: &crate::trace::event::Step) -> String {
    format!(
        "{} of {}",
        st.step.as_deref().unwrap_or("?"),
        st.plan.as_deref().unwrap_or("?")
    )
}

/// Who wrote at event `pos`: `belief`, or `step S of P` with its summary.
fn writer(log: &TraceLog, pos: u32) -> String {
    let Some(ev) = load_at(log, pos) else {
        return String::new();
    };
    match &ev.body {
        Body::Step(st) => match &st.summary {
            Some(s) => format!("step {}: {s}", plan_step(st)),
            None => format!("step {}", plan_step(st)),
        },
        _ => ev.kind_name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Model, RetractedBy};

    #[test]
    fn values_writers_endings_and_reads() {
        let trace = concat!(
            r#"{"kind":"belief","seq":1,"name":"x","value":1,"source":"user"}"#,
            "\n",
            r#"{"kind":"step","seq":2,"plan":"p","step":"S1","status":"dispatched","inputs":{"x":1}}"#,
            "\n",
            r#"{"kind":"step","seq":3,"plan":"p","step":"S1","status":"done","new_beliefs":[{"name":"x","value":2,"source":"bash"}],"summary":"doubled"}"#,
            "\n",
            r#"{"kind":"retract","seq":4,"target":"x"}"#,
            "\n",
        );
        let m = Model::from_bytes("k.jsonl", trace.as_bytes());
        let s = m.sessions()[0].to_string();
        let tl = m.timeline(&s).unwrap();
        let life = key_life(tl, m.log(), "x", 4).unwrap();
        let vals: Vec<(u32, &str, &str)> = life
            .writes
            .iter()
            .map(|w| (w.step, w.formula.as_str(), w.writer.as_str()))
            .collect();
        assert_eq!(
            vals,
            [
                (1, "x = 1", "belief"),
                (3, "x = 2", "step S1 of p: doubled")
            ]
        );
        assert_eq!(
            life.writes[0].ended.map(|r| (r.step, r.by)),
            Some((3, RetractedBy::Superseded))
        );
        assert_eq!(life.writes[1].ended.map(|r| r.step), Some(4));
        assert_eq!(life.reads.len(), 1);
        assert_eq!(
            (life.reads[0].step, life.reads[0].by.as_str()),
            (2, "S1 of p")
        );
        // Up to step 2 the second value is not written yet and nothing ended.
        let early = key_life(tl, m.log(), "x", 2).unwrap();
        assert_eq!(early.writes.len(), 1);
        assert!(early.writes[0].ended.is_none());
        assert!(key_life(tl, m.log(), "y", 4).is_none());
    }
}
