//! Seed 004's **avoiding a file read**: an intention names files (`files`) and no step of
//! its window called a `read_file` tool on one of them; the steps that searched the web
//! instead are the evidence, and the finding is an error when the intention's answer is
//! scored wrong.

use std::collections::BTreeSet;

use super::{Detected, Mode, Scene, Score, Scored, Tally, Unread, mentions, searched, tool_is};
use crate::model::audit::{Code, Cx, Severity};
use crate::trace::event::{Body, StepStatus, body_of};

/// For each intention window: the files it names that no step read, and the steps that
/// searched instead. Read before the answers are scored (a wrong answer an unread file
/// explains is not blamed on retrieval).
pub(super) fn unread<'s>(sc: &Scene<'s>) -> Vec<Unread<'s>> {
    let bl = sc.bl;
    let mut unread: Vec<Unread<'s>> = Vec::new();
    for w in &sc.windows {
        let mut read: BTreeSet<&str> = BTreeSet::new();
        let mut searches: Vec<(u32, u32, String)> = Vec::new();
        // Step events are recorded in step order: a window's are one run of them, found by
        // bisection (a scan of every step per intention grew with the square of the session).
        let from = bl.steps.partition_point(|s| s.step < w.start);
        let to = from + bl.steps[from..].partition_point(|s| s.step < w.end);
        for sr in &bl.steps[from..to] {
            let loaded = sc.log.events.load(sr.event as usize);
            let Some(Body::Step(s)) = body_of(&loaded) else {
                continue;
            };
            for c in s
                .tool_calls
                .iter()
                .filter(|c| tool_is(&c.tool, "read_file"))
            {
                for f in &w.files {
                    if c.args.as_deref().is_some_and(|a| mentions(a, f)) {
                        read.insert(f);
                    }
                }
            }
            if searched(s) && s.status != Some(StepStatus::Dispatched) {
                let name = format!(
                    "{}/{}",
                    s.plan.as_deref().unwrap_or("?"),
                    s.step.as_deref().unwrap_or("?")
                );
                if !searches.iter().any(|x| x.2 == name) {
                    searches.push((sr.step, sr.event, name));
                }
            }
        }
        let missing: Vec<&str> = w
            .files
            .iter()
            .copied()
            .filter(|f| !read.contains(f))
            .collect();
        unread.push((missing, searches));
    }
    unread
}

/// The avoided file reads, once the answers are scored: one finding per intention with a
/// file unread, placed at its first search, else its first satisfaction, else itself.
pub(super) fn check(
    cx: &Cx<'_>,
    sc: &Scene<'_>,
    unread: &[Unread<'_>],
    scored: &[Scored],
    tally: &mut Tally,
) {
    let bl = sc.bl;
    for (i, w) in sc.windows.iter().enumerate() {
        let (missing, searches) = &unread[i];
        if missing.is_empty() {
            continue;
        }
        let wrong = scored
            .iter()
            .any(|s| s.window == Some(i) && s.score == Score::Wrong);
        let (at_step, at_event) = searches
            .first()
            .map(|x| (x.0, x.1))
            .or_else(|| {
                // In step order, as the steps: the window's first, by bisection.
                let k = bl.satisfactions.partition_point(|x| x.0 < w.start);
                bl.satisfactions.get(k).filter(|x| x.0 < w.end).copied()
            })
            .unwrap_or((w.start, w.pos));
        let names: Vec<&str> = searches.iter().map(|x| x.2.as_str()).collect();
        let instead = if names.is_empty() {
            String::new()
        } else {
            format!("; {} searched the web instead", names.join(", "))
        };
        let id = w.id.unwrap_or("the intention");
        tally.out.push(
            cx.finding(
                Code::FileReadAvoided,
                at_step,
                at_event,
                format!(
                    "The task of {id} names {}, but no step read {} with read_file{instead}{}.",
                    missing.join(", "),
                    if missing.len() == 1 { "it" } else { "them" },
                    if wrong {
                        ", and the answer is wrong"
                    } else {
                        ""
                    }
                ),
            )
            .severity(if wrong {
                Severity::Error
            } else {
                Severity::Warning
            })
            .with("intention", id)
            .with("files", &w.files)
            .with("unread", missing)
            .with("searched_instead", &names)
            .with("answer_wrong", wrong),
        );
        tally.detected.push(Detected {
            mode: Mode::AvoidedFileRead,
            window: Some(i),
            plan: None,
            steps: names.iter().map(|n| n.to_string()).collect(),
            plan_level: true,
        });
    }
}
