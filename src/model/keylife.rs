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
    /// The values, in order of writing (the last ones only when a tail was asked for).
    pub writes: Vec<KeyWrite>,
    /// The reads, in order (the last ones only when a tail was asked for).
    pub reads: Vec<KeyRead>,
    /// Values written before those in `writes`, left out by the tail.
    pub earlier_writes: usize,
    /// Reads before those in `reads`, left out by the tail.
    pub earlier_reads: usize,
}

/// The life of ground belief `key` up to step `upto`; `None` when no ground belief of that
/// name was written by then. With `tail`, only the last `tail` values and reads are read
/// and described (the others are counted): a view drawn on every frame asks for a tail, so
/// its cost is bounded whatever the length of the session.
///
/// The writes and reads come from indexes the replay keeps
/// ([`Timeline::ground_records_of`], [`super::bdi::BdiLog::reads_of`]); only the events
/// described are read from the log.
pub fn key_life(
    tl: &Timeline,
    log: &TraceLog,
    key: &str,
    upto: u32,
    tail: Option<usize>,
) -> Option<KeyLife> {
    let records = tl.ground_records_of(key);
    let records = &records[..records.partition_point(|&i| {
        tl.beliefs
            .get(i as usize)
            .is_some_and(|r| r.announced <= upto)
    })];
    if records.is_empty() {
        return None;
    }
    let reads = tl.bdi_log().reads_of(key);
    let reads = &reads[..reads.partition_point(|&(step, _)| step <= upto)];
    let (records, earlier_writes) = last(records, tail);
    let (reads, earlier_reads) = last(reads, tail);
    let writes = records
        .iter()
        .filter_map(|&i| {
            let r = tl.beliefs.get(i as usize)?;
            let a = tl.ground_announce(i);
            Some(KeyWrite {
                record: i,
                step: r.announced,
                event: r.event,
                formula: a.map(|a| a.formula.to_string()).unwrap_or_default(),
                source: a.and_then(|a| a.source.as_ref().map(|s| s.to_string())),
                writer: writer(log, r.event),
                ended: r.retraction.filter(|x| x.step <= upto),
            })
        })
        .collect();
    let reads = reads
        .iter()
        .map(|&(step, event)| KeyRead {
            step,
            event,
            by: match load_at(log, event).as_ref().map(|e| &e.body) {
                Some(Body::Step(st)) => plan_step(st),
                _ => String::new(),
            },
        })
        .collect();
    Some(KeyLife {
        writes,
        reads,
        earlier_writes,
        earlier_reads,
    })
}

/// The last `tail` items of `items` (all without a tail), and how many come before them.
fn last<T>(items: &[T], tail: Option<usize>) -> (&[T], usize) {
    let skip = tail.map_or(0, |t| items.len().saturating_sub(t));
    (&items[skip..], skip)
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
        let life = key_life(tl, m.log(), "x", 4, None).unwrap();
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
        let early = key_life(tl, m.log(), "x", 2, None).unwrap();
        assert_eq!(early.writes.len(), 1);
        assert!(early.writes[0].ended.is_none());
        assert!(key_life(tl, m.log(), "y", 4, None).is_none());
    }

    /// The walk `key_life` did before the replay kept indexes: every record of Σ, and every
    /// step event decoded again. An independent oracle for the indexed answer.
    fn walked(tl: &Timeline, log: &TraceLog, key: &str, upto: u32) -> Option<KeyLife> {
        let writes: Vec<KeyWrite> = (0..tl.beliefs.len() as u32)
            .filter(|&i| tl.is_ground(i))
            .filter_map(|i| Some((i, tl.beliefs.get(i as usize)?)))
            .filter(|(_, r)| r.id == key && r.announced <= upto)
            .map(|(i, r)| KeyWrite {
                record: i,
                step: r.announced,
                event: r.event,
                formula: tl.ground_announce(i).unwrap().formula.to_string(),
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
        let reads = (1u32..)
            .zip(tl.event_positions())
            .filter(|&(step, _)| step <= upto)
            .filter_map(|(step, &pos)| match &load_at(log, pos)?.body {
                Body::Step(st) if st.inputs.as_ref().is_some_and(|m| m.contains_key(key)) => {
                    Some(KeyRead {
                        step,
                        event: pos,
                        by: plan_step(st),
                    })
                }
                _ => None,
            })
            .collect();
        Some(KeyLife {
            writes,
            reads,
            ..KeyLife::default()
        })
    }

    fn line(k: usize, keys: &[usize]) -> String {
        const NAMES: [&str; 3] = ["x", "y", "z"];
        let key = NAMES[keys[0] % 3];
        let other = NAMES[keys[1] % 3];
        match k % 6 {
            0 => format!(
                r#"{{"kind":"belief","name":"{key}","value":{},"source":"s{k}"}}"#,
                keys[2] % 3
            ),
            1 => format!(
                r#"{{"kind":"step","plan":"p","step":"S{k}","status":"dispatched","inputs":{{"{key}":1,"{other}":2}}}}"#
            ),
            2 => format!(
                r#"{{"kind":"step","plan":"p","step":"S{k}","status":"done","inputs":{{"{other}":0}},"new_beliefs":[{{"name":"{key}","value":{}}}],"summary":"w"}}"#,
                keys[2] % 4
            ),
            3 => format!(r#"{{"kind":"retract","target":"{key}"}}"#),
            4 => format!(r#"{{"kind":"announce","formula":"{key} -> q","id":"{other}"}}"#),
            _ => format!(r#"{{"kind":"step","plan":"p","step":"S{k}","status":"failed"}}"#),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
        /// The indexed life equals the walk of the whole session at every step, and a tail
        /// is the walk's last items with the rest counted.
        #[test]
        fn the_indexes_answer_what_the_walk_finds(
            lines in proptest::collection::vec((0usize..60, proptest::collection::vec(0usize..9, 3)), 1..40),
            tail in 0usize..4,
        ) {
            let text: String = lines.iter().map(|(k, keys)| line(*k, keys) + "\n").collect();
            let m = Model::from_bytes("k.jsonl", text.as_bytes());
            let s = m.sessions()[0].to_string();
            let tl = m.timeline(&s).unwrap();
            for upto in 0..=tl.len() {
                for key in ["x", "y", "z"] {
                    let want = walked(tl, m.log(), key, upto);
                    proptest::prop_assert_eq!(key_life(tl, m.log(), key, upto, None), want.clone());
                    let got = key_life(tl, m.log(), key, upto, Some(tail));
                    let want = want.map(|w| {
                        let (ws, ew) = last(&w.writes, Some(tail));
                        let (rs, er) = last(&w.reads, Some(tail));
                        KeyLife { writes: ws.to_vec(), reads: rs.to_vec(), earlier_writes: ew, earlier_reads: er }
                    });
                    proptest::prop_assert_eq!(got, want);
                }
            }
        }
    }
}
