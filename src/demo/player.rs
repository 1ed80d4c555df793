//! Pacing for the live demo: releases events at a watchable pace, with pause, single-step and
//! speed control.
//!
//! The player is sans-IO: the caller passes the current [`Instant`] to [`Player::poll`] from
//! its own tick loop (the TUI's event loop, or the plain-text printer), so it never sleeps,
//! never spawns a thread, and tests drive it with made-up instants. Each event waits a delay
//! that depends on its kind (a new turn waits longest, so a viewer can read the question
//! before the reply, gate and revision follow), divided by the speed.

use std::time::{Duration, Instant};

use crate::trace::{Body, Event, Kind};

/// The slowest and fastest speeds [`Player::slower`] and [`Player::faster`] reach.
pub const MIN_SPEED: f64 = 0.125;
/// See [`MIN_SPEED`].
pub const MAX_SPEED: f64 = 64.0;

/// The delay before `ev` at speed 1.
pub fn base_delay(ev: &Event) -> Duration {
    let ms = match ev.kind() {
        Some(Kind::Session) => 0,
        Some(Kind::World) => 300,
        Some(Kind::Turn) => 1500,
        Some(Kind::Verify) => 500,
        // The world's rules scroll by quickly; the agent's commitments are the story.
        Some(Kind::Announce) => match &ev.body {
            Body::Announce(a) if a.source.as_deref() == Some("world") => 80,
            _ => 400,
        },
        Some(Kind::Revise) => 700,
        Some(Kind::Retract) => 400,
        Some(Kind::Log) => 600,
        _ => 300,
    };
    Duration::from_millis(ms)
}

/// Plays an event stream at a pace.
pub struct Player<I: Iterator<Item = Event>> {
    src: I,
    pending: Option<Event>,
    /// When the pending event is due; set when it becomes pending or when play resumes.
    due: Option<Instant>,
    paused: bool,
    speed: f64,
    /// The source has given its last event.
    exhausted: bool,
}

impl<I: Iterator<Item = Event>> Player<I> {
    /// A player at speed 1, not paused.
    pub fn new(src: I) -> Self {
        Player {
            src,
            pending: None,
            due: None,
            paused: false,
            speed: 1.0,
            exhausted: false,
        }
    }

    fn scaled(&self, ev: &Event) -> Duration {
        base_delay(ev).div_f64(self.speed)
    }

    fn load(&mut self, now: Instant) {
        if self.pending.is_none() && !self.exhausted {
            self.pending = self.src.next();
            self.exhausted = self.pending.is_none();
            self.due = self.pending.as_ref().map(|e| now + self.scaled(e));
        }
    }

    /// The events due at `now`, in order (empty while paused). Call it from a tick loop.
    pub fn poll(&mut self, now: Instant) -> Vec<Event> {
        let mut out = Vec::new();
        if self.paused {
            return out;
        }
        loop {
            let was_empty = self.pending.is_none();
            self.load(if was_empty {
                // Chain from the previous event's due time so a late poll does not slow the
                // pace; the first event counts from now.
                self.due.filter(|d| *d <= now).unwrap_or(now)
            } else {
                now
            });
            match (&self.pending, self.due) {
                (Some(_), Some(due)) if due <= now => {
                    if let Some(e) = self.pending.take() {
                        out.push(e);
                    }
                }
                _ => return out,
            }
        }
    }

    /// When the next event is due (`None` when paused or finished): how long a loop may sleep.
    pub fn next_due(&mut self, now: Instant) -> Option<Instant> {
        if self.paused {
            return None;
        }
        self.load(now);
        self.due
    }

    /// Releases the rest of the current turn at once: the next event, and every following
    /// event up to (not including) the next `turn` or `session`. Works while paused.
    pub fn step(&mut self, now: Instant) -> Vec<Event> {
        let mut out = Vec::new();
        self.load(now);
        if let Some(e) = self.pending.take() {
            out.push(e);
        }
        loop {
            self.load(now);
            match self.pending.as_ref().and_then(Event::kind) {
                Some(Kind::Turn | Kind::Session) | None => break,
                _ => {
                    if let Some(e) = self.pending.take() {
                        out.push(e);
                    }
                }
            }
        }
        if self.pending.is_none() {
            self.load(now);
        }
        // After a step the next event waits its full delay again.
        self.due = self
            .pending
            .as_ref()
            .map(|e| now + base_delay(e).div_f64(self.speed));
        out
    }

    /// Pauses play.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Resumes play; the pending event gets its full delay from `now`.
    pub fn resume(&mut self, now: Instant) {
        if self.paused {
            self.paused = false;
            self.due = self.pending.as_ref().map(|e| now + self.scaled(e));
        }
    }

    /// Pause ↔ play.
    pub fn toggle_pause(&mut self, now: Instant) {
        if self.paused {
            self.resume(now);
        } else {
            self.pause();
        }
    }

    /// Whether play is paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// The speed factor (1 = normal).
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Sets the speed, clamped to [`MIN_SPEED`]..=[`MAX_SPEED`] (non-finite values are
    /// ignored). The pending event's remaining wait is rescaled.
    pub fn set_speed(&mut self, speed: f64, now: Instant) {
        if !speed.is_finite() {
            return;
        }
        let new = speed.clamp(MIN_SPEED, MAX_SPEED);
        if let Some(due) = self.due {
            let left = due.saturating_duration_since(now);
            self.due = Some(now + left.mul_f64(self.speed / new));
        }
        self.speed = new;
    }

    /// Doubles the speed.
    pub fn faster(&mut self, now: Instant) {
        self.set_speed(self.speed * 2.0, now);
    }

    /// Halves the speed.
    pub fn slower(&mut self, now: Instant) {
        self.set_speed(self.speed / 2.0, now);
    }

    /// Whether every event has been released, as far as the player has looked (a view that
    /// cannot poll says "finished" with it; [`Player::is_finished`] looks ahead).
    pub fn has_finished(&self) -> bool {
        self.exhausted && self.pending.is_none()
    }

    /// Whether every event has been released.
    pub fn is_finished(&mut self, now: Instant) -> bool {
        self.load(now);
        self.pending.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::{DemoConfig, DemoEvents};

    fn events() -> Vec<Event> {
        let cfg = DemoConfig {
            error_rate: 0.3,
            seed: 5,
            ..DemoConfig::default()
        };
        DemoEvents::new(cfg, 2).collect()
    }

    fn kinds(evs: &[Event]) -> Vec<String> {
        evs.iter().map(|e| e.kind_name().to_string()).collect()
    }

    #[test]
    fn releases_events_in_order_at_the_pace_of_their_delays() {
        let all = events();
        let t0 = Instant::now();
        let mut p = Player::new(all.clone().into_iter());
        let mut got = p.poll(t0);
        assert_eq!(kinds(&got), ["session"], "the session has no delay");
        assert!(p.poll(t0 + Duration::from_millis(299)).is_empty());
        got.extend(p.poll(t0 + Duration::from_millis(300)));
        assert_eq!(got.last().map(Event::kind_name), Some("world"));
        // A late poll catches up with everything due, without slowing the pace.
        let mut t = t0 + Duration::from_millis(300);
        let total: Duration = all.iter().skip(2).map(base_delay).sum();
        t += total;
        assert!(!p.has_finished(), "events are still to come");
        got.extend(p.poll(t));
        assert_eq!(got, all);
        assert!(p.has_finished(), "the header says the demo has finished");
        assert!(p.is_finished(t));
        assert!(p.poll(t + Duration::from_secs(60)).is_empty());
    }

    #[test]
    fn pause_holds_everything_and_step_releases_one_turn() {
        let all = events();
        let t0 = Instant::now();
        let mut p = Player::new(all.clone().into_iter());
        let _ = p.poll(t0);
        p.pause();
        assert!(p.is_paused());
        assert!(p.poll(t0 + Duration::from_secs(3600)).is_empty());
        assert_eq!(p.next_due(t0), None);
        // Steps while paused: the world and its rules up to the first turn, then one turn
        // with its gate, commitment and revision.
        let first = p.step(t0);
        assert_eq!(first.first().map(Event::kind_name), Some("world"));
        assert!(first.iter().all(|e| e.kind_name() != "turn"));
        let turn = p.step(t0);
        assert_eq!(turn[0].kind_name(), "turn");
        assert!(turn[1..].iter().all(|e| e.kind_name() != "turn"));
        assert!(
            p.poll(t0 + Duration::from_secs(3600)).is_empty(),
            "still paused"
        );
        p.toggle_pause(t0);
        assert!(!p.is_paused());
        let mut rest = p.poll(t0 + Duration::from_secs(3600));
        let mut replayed = vec![all[0].clone()];
        replayed.extend(first);
        replayed.extend(turn);
        replayed.append(&mut rest);
        assert_eq!(replayed, all);
    }

    #[test]
    fn producer_and_player_can_move_to_another_thread() {
        fn assert_send<T: Send>() {}
        assert_send::<DemoEvents>();
        assert_send::<Player<DemoEvents>>();
    }

    #[test]
    fn speed_scales_the_delays() {
        let all = events();
        let t0 = Instant::now();
        let mut p = Player::new(all.into_iter());
        let _ = p.poll(t0);
        p.faster(t0);
        p.faster(t0);
        assert_eq!(p.speed(), 4.0);
        // The world waits 300 ms at speed 1: 75 ms at speed 4.
        assert!(p.poll(t0 + Duration::from_millis(74)).is_empty());
        assert_eq!(kinds(&p.poll(t0 + Duration::from_millis(75))), ["world"]);
        for _ in 0..20 {
            p.faster(t0);
        }
        assert_eq!(p.speed(), MAX_SPEED);
        for _ in 0..20 {
            p.slower(t0);
        }
        assert_eq!(p.speed(), MIN_SPEED);
        p.set_speed(f64::NAN, t0);
        assert_eq!(p.speed(), MIN_SPEED);
    }
}
