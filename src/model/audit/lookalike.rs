//! `mixed-script-atom` and `confusable-atoms`: names that render like other names.
//!
//! `admin` and `аdmin` (Cyrillic `а`) are different atoms to the solver and the same word to
//! a reader, so an agent steered by injected text could believe `аdmin` while an auditor
//! reads `admin`. Browsers face the same trick with domain names and flag them by Unicode
//! TS #39: a name mixing scripts within one word is suspect, and so is a name of another
//! script whose confusable skeleton equals a name already in use.
//!
//! The check reads formula texts only (announce, query, verify, answer). A session whose
//! formulas are all ASCII, nearly every one, costs a look at each such event's line bytes
//! (no decode when they are ASCII without `\u` escapes); only when a non-ASCII word exists
//! is every word of the session's formulas taken apart for skeletons.

use std::collections::{BTreeMap, BTreeSet};

use unicode_security::confusable_detection::skeleton;

use super::thought::steps;
use super::{Code, Cx};
use crate::sanitize::{mixed_scripts, non_ascii_words};
use crate::trace::event::{Body, Kind};

/// The formula texts of one event.
fn formula_texts(body: &Body) -> Vec<&str> {
    match body {
        Body::Announce(a) => vec![&a.formula],
        Body::Query(q) => vec![&q.formula],
        Body::Verify(v) => v.all_formulas().collect(),
        Body::Answer(a) => a.formula.as_deref().into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Every word (identifier or quoted word) of a formula text.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c == '_' || c.is_alphanumeric() || is_mark(c)))
        .filter(|w| !w.is_empty())
}

fn is_mark(c: char) -> bool {
    use unicode_properties::{GeneralCategory as G, UnicodeGeneralCategory};
    matches!(
        c.general_category(),
        G::NonspacingMark | G::SpacingMark | G::EnclosingMark
    )
}

pub(super) fn check(cx: &mut Cx<'_>) {
    // The events that carry formulas, in step order.
    let formulas = steps(
        cx,
        &[Kind::Announce, Kind::Query, Kind::Verify, Kind::Answer],
    );
    // First use of each non-ASCII word: (step, event). A line that is plain ASCII has none,
    // and is not decoded (this pass decoded every event of the session: 6% of the 10M
    // audit, issue 31).
    let mut suspects: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for &(step, pos) in &formulas {
        if cx.log.events.plain_ascii(pos as usize) == Some(true) {
            continue;
        }
        let Some(ev) = cx.log.events.load(pos as usize) else {
            continue;
        };
        for text in formula_texts(&ev.body) {
            for r in non_ascii_words(text) {
                suspects.entry(text[r].to_string()).or_insert((step, pos));
            }
        }
    }
    if suspects.is_empty() {
        return;
    }
    // Skeleton → the distinct words of the session that have it.
    let mut by_skeleton: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for &(_, pos) in &formulas {
        let Some(ev) = cx.log.events.load(pos as usize) else {
            continue;
        };
        for text in formula_texts(&ev.body) {
            for w in words(text) {
                by_skeleton
                    .entry(skeleton(w).collect())
                    .or_default()
                    .insert(w.to_string());
            }
        }
    }
    let mut paired: BTreeSet<(String, String)> = BTreeSet::new();
    for (word, &(step, event)) in &suspects {
        let key: String = skeleton(word).collect();
        let twins: Vec<&String> = by_skeleton
            .get(&key)
            .into_iter()
            .flatten()
            .filter(|w| *w != word)
            .collect();
        if let Some(scripts) = mixed_scripts(word) {
            let mut message = format!(
                "`{word}` mixes {} letters in one name",
                scripts.join(" and ")
            );
            if let Some(t) = twins.first() {
                message.push_str(&format!(", and renders like `{t}`, a different atom"));
            }
            message.push('.');
            let f = cx
                .finding(Code::MixedScriptAtom, step, event, message)
                .with("atom", word)
                .with("scripts", &scripts)
                .with("looks_like", &twins);
            cx.push(f);
        } else if let Some(t) = twins.first() {
            // One script, but it can pass for a name in another: report each pair once.
            let pair = if word < *t {
                (word.clone(), (*t).clone())
            } else {
                ((*t).clone(), word.clone())
            };
            if paired.insert(pair) {
                let f = cx
                    .finding(
                        Code::ConfusableAtoms,
                        step,
                        event,
                        format!("`{word}` and `{t}` look alike but are different atoms."),
                    )
                    .with("atom", word)
                    .with("looks_like", &twins);
                cx.push(f);
            }
        }
    }
}
