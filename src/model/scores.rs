//! Scores of a session and what each scores: the one reading of "did this score fail" and
//! "which event does it score" that the timeline's rows, the detail pane, `:scores`,
//! `report` and the audit's `score-failed` share.
//!
//! # When a score failed
//!
//! A score says the scored work failed only when it says so in a way whose meaning does not
//! depend on an unknown scale:
//!
//! - `passed` is `false` (an importer writes it when the source's scale says what passing
//!   is: Inspect's `C`, `I`, `N` and its 0 and 1, `docs/import.md`);
//! - else the `value` is `false`, or Inspect's letter `I` (incorrect) or `N` (no answer);
//! - else the `value` or the `label` is one of the words `fail`, `failed`, `failure`,
//!   `incorrect`, `wrong` or `false` (any case).
//!
//! It passed by the same rules with `true`, `C`, `pass`, `passed`, `correct`, `yes`, `ok`,
//! `success` or `right` (and failed with `no` too). Any other number or label is neither: 0.2
//! may be a good toxicity and a bad accuracy, and doxascope does not guess which. For the same
//! reason a score whose name says a high value is bad (`hallucination`, `toxicity`, `error`,
//! `harm`, `bias`, `unsafe`: [`NEGATIVE_METRICS`]) is read only through its `passed`.
//!
//! This one rule is read everywhere: the timeline's colours, the session list, the audit's
//! `score-failed` and its judge against the solver (`score-passes-contradicted`).

use crate::model::Timeline;
use crate::trace::TraceLog;
use crate::trace::event::{Body, Score, ScoreValue};

/// A score of a session, with its verdict and the event it scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The step of the `score` event (1-based).
    pub step: u32,
    /// Its log position.
    pub pos: u32,
    /// The score as the trace holds it (raw; sanitize before showing).
    pub score: Score,
    /// Whether it passed ([`passed`]); `None` when the score does not say.
    pub passed: Option<bool>,
    /// The step of the event it scores; `None` for the whole run (no target) or a target the
    /// session does not hold.
    pub target: Option<u32>,
}

/// Words that say a value or a label failed, and passed.
const FAIL_WORDS: [&str; 7] = [
    "fail",
    "failed",
    "failure",
    "incorrect",
    "wrong",
    "false",
    "no",
];
const PASS_WORDS: [&str; 8] = [
    "pass", "passed", "correct", "true", "yes", "ok", "success", "right",
];

/// Score names (as substrings, without case) whose high values are bad: their values and
/// labels are not read, only an explicit `passed`.
pub const NEGATIVE_METRICS: [&str; 6] = ["hallucinat", "toxic", "error", "harm", "bias", "unsafe"];

fn word_verdict(w: &str) -> Option<bool> {
    let w = w.trim().to_ascii_lowercase();
    if FAIL_WORDS.contains(&w.as_str()) {
        Some(false)
    } else if PASS_WORDS.contains(&w.as_str()) {
        Some(true)
    } else {
        None
    }
}

/// Whether a score says the scored work passed (see the module docs); `None` when it does
/// not say.
pub fn passed(sc: &Score) -> Option<bool> {
    if let Some(p) = sc.passed {
        return Some(p);
    }
    let name = sc.name.to_lowercase();
    if NEGATIVE_METRICS.iter().any(|m| name.contains(m)) {
        return None;
    }
    let by_value = match &sc.value {
        Some(ScoreValue::Bool(b)) => Some(*b),
        Some(ScoreValue::Text(t)) => match t.trim() {
            "C" => Some(true),
            "I" | "N" => Some(false),
            other => word_verdict(other),
        },
        _ => None,
    };
    by_value.or_else(|| sc.label.as_deref().and_then(word_verdict))
}

/// A score in a few words, as a timeline row carries it beside what it scores:
/// `★ accuracy 0.0 FAIL`, `★ helpfulness 0.8 (good)`.
pub fn badge(sc: &Score) -> String {
    let mut t = format!("★ {}", sc.name);
    match (&sc.value, &sc.label) {
        (Some(v), Some(l)) => t.push_str(&format!(" {v} ({l})")),
        (Some(v), None) => t.push_str(&format!(" {v}")),
        (None, Some(l)) => t.push_str(&format!(" {l}")),
        (None, None) => {}
    }
    match passed(sc) {
        Some(true) => t.push_str(" PASS"),
        Some(false) => t.push_str(" FAIL"),
        None => {}
    }
    t
}

/// The score at `step` (log position `pos`), if that event is one.
pub fn score_at(log: &TraceLog, tl: &Timeline, step: u32, pos: u32) -> Option<Scored> {
    let ev = log.events.load(pos as usize)?;
    let Body::Score(sc) = &ev.body else {
        return None;
    };
    let score = (**sc).clone();
    Some(Scored {
        step,
        pos,
        passed: passed(&score),
        target: tl.score_target(log, step),
        score,
    })
}

/// Every score of the session, in step order, with its verdict and target.
pub fn of_session(log: &TraceLog, tl: &Timeline) -> Vec<Scored> {
    tl.scores()
        .iter()
        .filter_map(|&(step, pos)| score_at(log, tl, step, pos))
        .collect()
}

/// The scores of the event at `step`: those whose target is it. Reads only the scores that
/// name the event's `id` (the replay indexes scores by the target they write), so a view
/// can ask per row and per frame.
pub fn on_event(log: &TraceLog, tl: &Timeline, step: u32) -> Vec<Scored> {
    let Some(id) = event_id(log, tl, step) else {
        return Vec::new();
    };
    tl.scores_naming(&id)
        .filter_map(|(s, pos)| score_at(log, tl, s, pos))
        .filter(|s| s.target == Some(step))
        .collect()
}

/// The `id` of the event at `step`, if it has one.
fn event_id(log: &TraceLog, tl: &Timeline, step: u32) -> Option<String> {
    tl.event_pos_at(step)
        .and_then(|p| log.events.load(p as usize))
        .and_then(|e| e.id.as_deref().map(str::to_string))
}

/// What a score scores, in words: `step 9 (answer)`, `the whole run`.
pub fn target_text(log: &TraceLog, tl: &Timeline, s: &Scored) -> String {
    match (s.target, s.score.target.as_deref()) {
        (Some(t), _) => {
            let kind = tl
                .event_pos_at(t)
                .and_then(|p| log.events.load(p as usize))
                .map(|e| e.kind_name().to_string())
                .unwrap_or_default();
            format!("step {t} ({kind})")
        }
        (None, Some(id)) => format!("{id} (not in the session)"),
        (None, None) => "the whole run".into(),
    }
}

/// The session's scores as lines of text (raw: sanitize before showing), failed ones
/// first, then in step order: `:scores` in the TUI.
pub fn lines(log: &TraceLog, tl: &Timeline) -> Vec<String> {
    let mut all = of_session(log, tl);
    if all.is_empty() {
        return vec!["no scores in this session".into()];
    }
    // A failed score is what the reader looks for first.
    all.sort_by_key(|s| (s.passed != Some(false), s.step));
    let failed = all.iter().filter(|s| s.passed == Some(false)).count();
    let mut out = vec![format!("{} scores, {failed} failed", all.len())];
    out.extend(all.iter().map(|s| line(log, tl, s)));
    out
}

/// One score as a line (raw): its step, badge, target, scorer and the first line of why.
pub fn line(log: &TraceLog, tl: &Timeline, s: &Scored) -> String {
    let mut l = format!(
        "step {:>5}  {}  on {}",
        s.step,
        badge(&s.score),
        target_text(log, tl, s)
    );
    if let Some(src) = &s.score.source {
        l.push_str(&format!(" by {src}"));
    }
    if let Some(x) = &s.score.explanation {
        let first = x.lines().next().unwrap_or("");
        l.push_str(&format!(": {first}"));
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc(value: Option<ScoreValue>, label: Option<&str>, passed_: Option<bool>) -> Score {
        Score {
            name: "accuracy".into(),
            value,
            label: label.map(Into::into),
            explanation: None,
            target: None,
            source: None,
            passed: passed_,
        }
    }

    fn num(x: f64) -> Option<ScoreValue> {
        Some(ScoreValue::Number(serde_json::Number::from_f64(x).unwrap()))
    }

    fn text(t: &str) -> Option<ScoreValue> {
        Some(ScoreValue::Text(t.into()))
    }

    #[test]
    fn a_score_fails_only_when_it_says_so() {
        assert_eq!(
            passed(&sc(Some(ScoreValue::Bool(false)), None, None)),
            Some(false)
        );
        assert_eq!(
            passed(&sc(Some(ScoreValue::Bool(true)), None, None)),
            Some(true)
        );
        assert_eq!(passed(&sc(text("I"), None, None)), Some(false));
        assert_eq!(passed(&sc(text("N"), None, None)), Some(false));
        assert_eq!(passed(&sc(text("C"), None, None)), Some(true));
        assert_eq!(passed(&sc(text("P"), None, None)), None);
        assert_eq!(passed(&sc(text("Incorrect"), None, None)), Some(false));
        assert_eq!(passed(&sc(num(0.9), Some("FAIL"), None)), Some(false));
        assert_eq!(passed(&sc(num(0.0), Some("pass"), None)), Some(true));
        // A number alone says nothing: its scale is unknown.
        assert_eq!(passed(&sc(num(0.0), None, None)), None);
        assert_eq!(passed(&sc(num(0.2), Some("toxic"), None)), None);
        // The scorer's own verdict wins over the words.
        assert_eq!(
            passed(&sc(num(1.0), Some("pass"), Some(false))),
            Some(false)
        );
    }

    #[test]
    fn a_badge_names_the_score_and_its_verdict() {
        assert_eq!(
            badge(&sc(num(0.0), None, Some(false))),
            "★ accuracy 0.0 FAIL"
        );
        assert_eq!(
            badge(&sc(num(0.8), Some("good"), None)),
            "★ accuracy 0.8 (good)"
        );
        assert_eq!(badge(&sc(text("C"), None, None)), "★ accuracy C PASS");
    }

    /// `on_event` as it was before the index: every score of the session read, kept when
    /// its target is written as the event's id and resolves to the event.
    fn walked(log: &TraceLog, tl: &Timeline, step: u32) -> Vec<Scored> {
        let Some(id) = event_id(log, tl, step) else {
            return Vec::new();
        };
        of_session(log, tl)
            .into_iter()
            .filter(|s| s.score.target.as_deref() == Some(&*id) && s.target == Some(step))
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
        /// The scores of each event, read through the index, are those the walk of every
        /// score finds (ids written twice, targets before, after and nowhere).
        #[test]
        fn an_events_scores_are_those_the_walk_finds(
            lines in proptest::collection::vec((0usize..4, 0usize..4, proptest::prelude::any::<bool>()), 1..30),
        ) {
            const IDS: [&str; 4] = ["a", "b", "c", " a"];
            let text: String = lines
                .iter()
                .map(|&(kind, id, ok)| match kind {
                    0 | 1 => format!("{{\"kind\":\"answer\",\"id\":\"{}\",\"text\":\"t\"}}\n", IDS[id]),
                    2 => format!("{{\"kind\":\"score\",\"name\":\"n\",\"value\":{ok},\"target\":\"{}\"}}\n", IDS[id]),
                    _ => format!("{{\"kind\":\"score\",\"name\":\"n\",\"value\":{ok}}}\n"),
                })
                .collect();
            let m = crate::model::Model::from_bytes("s.jsonl", text.as_bytes());
            let name = m.sessions()[0].to_string();
            let tl = m.timeline(&name).unwrap();
            for step in 0..=tl.len() + 1 {
                proptest::prop_assert_eq!(on_event(m.log(), tl, step), walked(m.log(), tl, step));
            }
        }
    }
}
