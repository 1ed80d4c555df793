//! The ids a session's announce and verify events cite (their `because`), each with whether
//! it was in Σ at the step before: read once for the checks that ask about citations
//! (`stale-citation`, and the premises `unsupported-thought-premise` follows).
//!
//! Each of those checks decoded every announce and verify event of the session and looked
//! every cited id up in the session's records by id, a table that grows with the session and
//! misses the cache on a long one: on the 10M trace the two walks were a tenth of the audit,
//! and more than half of what the audit spent beyond ten times the 1M audit (issue 31).

use super::Cx;
use super::thought::steps;
use crate::trace::event::{Body, Kind, Text, body_of};

/// One announce or verify event that cites at least one id.
pub(crate) struct Citing {
    /// Its step in the session.
    pub(crate) step: u32,
    /// Its position in the log.
    pub(crate) event: u32,
    /// What it cites, in its order.
    pub(crate) cited: Vec<Cited>,
}

/// One id a [`Citing`] event cites.
pub(crate) struct Cited {
    pub(crate) id: Text,
    /// A record of the id was in Σ at the step before the citing event.
    pub(crate) held: bool,
    /// It is the citing announcement's own id.
    pub(crate) own: bool,
}

/// The session's citing events, in step order.
pub(crate) fn of(cx: &Cx<'_>) -> Vec<Citing> {
    let ids = cx.ids();
    let mut out = Vec::new();
    for (step, pos) in steps(cx, &[Kind::Announce, Kind::Verify]) {
        let ev = cx.log.events.load(pos as usize);
        let (own, because) = match body_of(&ev) {
            Some(Body::Announce(a)) => (ev.as_deref().and_then(|e| e.id.as_deref()), &a.because),
            Some(Body::Verify(v)) => (None, &v.because),
            _ => continue,
        };
        if because.is_empty() {
            continue;
        }
        let before = step - 1;
        let cited = because
            .iter()
            .map(|c| Cited {
                held: ids.active(c, before).is_some(),
                own: own == Some(c.as_str()),
                id: c.clone(),
            })
            .collect();
        out.push(Citing {
            step,
            event: pos,
            cited,
        });
    }
    out
}
