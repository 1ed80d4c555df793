//! Watchpoints while following: when new events arrive in a followed view that has
//! watchpoints or breakpoints (`:watch φ|KEY`, `:break CODE`), the REPL job is asked
//! `continue` from the last step already checked; a stop pauses following at its step and
//! names the point and the event. The REPL engine decides every trigger
//! ([`crate::repl`]'s `watch`); this only moves the view and says why.

use super::{App, Purpose};
use crate::repl::{ReplError, Reply, Stop};

/// A view's watchpoints as the TUI tracks them (the points themselves live in the REPL job).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchState {
    /// How many points the REPL job last reported for this session (0: nothing to check).
    pub points: usize,
    /// The last step already checked: a check asks `continue` from here.
    pub from: u64,
    /// A check was sent and not answered yet (one at a time; data meanwhile waits).
    pub pending: bool,
    /// Why following paused (`watch #1: φ became entailed (was unknown) at step 8 ← …`);
    /// `None` when it did not pause for a point.
    pub paused: Option<String>,
}

impl App {
    /// The shown session's last step (its event count).
    fn last_step(&self) -> u64 {
        self.sess().map_or(0, |s| u64::from(s.len()))
    }

    /// While the shown view follows and has points, asks the REPL job whether one triggers
    /// in the events that arrived since the last check (queued like a typed command; the
    /// event loop hands it over).
    pub(super) fn watch_check(&mut self) {
        let last = self.last_step();
        let session = self.session;
        let v = self.view_mut();
        if !v.follow || v.watch.points == 0 || v.watch.pending || last <= v.watch.from {
            return;
        }
        let from = v.watch.from;
        v.watch.pending = true;
        v.watch.from = last;
        self.queue_command("continue".into(), from, Purpose::Watch { session });
    }

    /// Following resumes (`f`, or `:continue` with nothing left to stop at): the pause is
    /// over, and what arrived after the stop is checked.
    pub(super) fn watch_resume(&mut self) {
        self.view_mut().watch.paused = None;
        self.watch_check();
    }

    /// A prompt command's reply: `:watch`, `:break` and `:unwatch` tell how many points are
    /// set; `:continue` moves the pause to its stop, or resumes following when none is left.
    pub(super) fn watch_prompt_reply(&mut self, r: &Reply) {
        let last = self.last_step();
        let Reply::Watch { points, stop } = r else {
            return;
        };
        // `:continue` travels to where a point triggered.
        if let Some(Stop {
            step: Some(step), ..
        }) = stop
        {
            self.view_mut().follow = false;
            self.goto_step(*step);
        }
        let v = self.view_mut();
        if v.watch.points == 0 {
            // What was shown before the first point was set is not re-checked.
            v.watch.from = last;
        }
        v.watch.points = points.len();
        match stop {
            // A `:continue` while paused moves the pause; elsewhere it is plain time travel.
            Some(Stop {
                step: Some(step),
                hits,
                ..
            }) if v.watch.paused.is_some() => {
                let msg = hits.join("; ");
                v.watch.paused = Some(msg.clone());
                v.watch.from = *step;
                self.status = msg;
            }
            Some(Stop { step: None, .. }) if v.watch.paused.is_some() => {
                v.follow = true;
                self.goto(i64::MAX);
                self.view_mut().follow = true;
                self.status = "following (no watchpoint triggers after the stop)".into();
                self.watch_resume();
            }
            _ => {}
        }
    }

    /// The answer to a check sent by [`App::watch_check`] for `session`.
    pub(super) fn on_watch_reply(&mut self, session: usize, result: Result<Reply, ReplError>) {
        let shown = session == self.session;
        let last = self.last_step();
        let Some(v) = self.views.get_mut(session) else {
            return;
        };
        v.watch.pending = false;
        let (points, stop) = match result {
            Ok(Reply::Watch { points, stop }) => (points.len(), stop),
            // The REPL job started afresh (another session was shown): its points are gone.
            _ => (0, None),
        };
        v.watch.points = points;
        if let Some(Stop {
            step: Some(step),
            hits,
            ..
        }) = stop
            && v.follow
            && shown
        {
            let msg = hits.join("; ");
            v.follow = false;
            v.watch.from = step;
            v.watch.paused = Some(msg.clone());
            self.goto_step(step);
            self.status = msg;
            self.dirty = true;
        } else if shown && last > self.view().watch.from {
            // More arrived while this check ran.
            self.watch_check();
        }
    }
}
