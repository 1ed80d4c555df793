//! `score-failed`: a score that says the scored work failed (issue 26 item 4). What counts as
//! failed is [`crate::model::scores::passed`]'s documented rule; the finding sits on what the
//! score scores (the answer, the tool call, the model call), or on the score itself when it
//! scores the whole run, so `e` lands on the work that failed.

use super::{Code, Cx};
use crate::model::scores::{self, Scored};

/// The message of a failed score's finding.
pub(super) fn message(s: &Scored) -> String {
    let mut m = format!("the score {}", scores::badge(&s.score));
    if let Some(src) = &s.score.source {
        m.push_str(&format!(" by {src}"));
    }
    match s.target {
        Some(t) => m.push_str(&format!(" at step {} says step {t} failed", s.step)),
        None => m.push_str(" says the run failed"),
    }
    m.push('.');
    m
}

/// Where a failed score's finding sits: its target's (step, log position), else its own.
pub(super) fn place(cx_tl: &crate::model::Timeline, s: &Scored) -> (u32, u32) {
    s.target
        .and_then(|t| cx_tl.event_pos_at(t).map(|p| (t, p)))
        .unwrap_or((s.step, s.pos))
}

pub(super) fn check(cx: &mut Cx<'_>) {
    if cx.tl.scores().is_empty() {
        return;
    }
    for s in scores::of_session(cx.log, cx.tl) {
        if s.passed != Some(false) {
            continue;
        }
        let (step, pos) = place(cx.tl, &s);
        let mut f = cx
            .finding(Code::ScoreFailed, step, pos, message(&s))
            .with("name", s.score.name.as_str())
            .with("score_step", s.step);
        if let Some(v) = &s.score.value {
            f = f.with("value", v);
        }
        if let Some(l) = &s.score.label {
            f = f.with("label", l.as_str());
        }
        if let Some(x) = &s.score.explanation {
            f = f.with("explanation", x.as_str());
        }
        cx.push(f);
    }
}
