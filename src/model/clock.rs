//! Time in a session: how long an event took (`duration_ms`), how far into the run it
//! happened (its `ts` against the session's first), and which step a time names (`:time`).
//!
//! Importers keep every source's timing as `duration_ms` (`docs/import.md`); v1 traces may
//! write it too. Times within an imported session never go back (the importers keep them in
//! order), so the step at a time is found by bisection; in a v1 trace whose times go back
//! the answer is a step at or after the time, not necessarily the first.

use crate::trace::{Event, TraceLog};

use super::timeline::{Timeline, load_at};

/// The event's `duration_ms`, when it has one that is a finite, non-negative number.
pub fn duration_ms(ev: &Event) -> Option<f64> {
    let v = ev.extra.value("duration_ms")?;
    let ms = match v {
        serde_json::Value::Number(n) => n.as_f64()?,
        serde_json::Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    (ms.is_finite() && ms >= 0.0).then_some(ms)
}

/// A duration as a person reads it: `850ms`, `1.23s`, `12.5s`, `2m03s`, `1h02m`.
pub fn format_duration(ms: f64) -> String {
    if ms < 1.0 && ms > 0.0 {
        return "<1ms".into();
    }
    if ms < 1000.0 {
        return format!("{}ms", ms.round() as u64);
    }
    let s = ms / 1000.0;
    if s < 10.0 {
        format!("{s:.2}s")
    } else if s < 60.0 {
        format!("{s:.1}s")
    } else if s < 3600.0 {
        let whole = s.round() as u64;
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else {
        let m = (s / 60.0).round() as u64;
        format!("{}h{:02}m", m / 60, m % 60)
    }
}

/// Time since the session's start: `+0.000s`, `+12.5s`, `+2m03s`.
pub fn format_offset(secs: f64) -> String {
    if secs < 0.0 {
        return format!("-{}", format_offset(-secs).trim_start_matches('+'));
    }
    if secs < 60.0 {
        format!("+{secs:.3}s")
    } else {
        format!("+{}", format_duration(secs * 1000.0))
    }
}

/// The session's first time: the `ts` of its first event that has one (looking at the
/// first 64 events at most: a session's opening events carry one if any do).
pub fn start_of(log: &TraceLog, tl: &Timeline) -> Option<f64> {
    tl.event_positions()
        .iter()
        .take(64)
        .find_map(|&p| load_at(log, p)?.ts.as_ref().map(|t| t.unix_seconds))
}

/// A time `:time` names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeTarget {
    /// Seconds after the session's first time (`+12.5s`, `+2m`, `+500ms`, `12.5`).
    Offset(f64),
    /// A time of day, seconds after midnight UTC, on the session's first day (`14:02:11`).
    TimeOfDay(f64),
    /// An instant, Unix seconds (`2026-03-01T14:02:11Z`).
    Instant(f64),
}

/// Parses what follows `:time`: `+12.5s`, `+1m30s`, `+500ms`, `90` (seconds after the
/// start), `14:02`, `14:02:11.5` (UTC), or an RFC 3339 date-time.
pub fn parse_target(s: &str) -> Result<TimeTarget, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("a time: +12.5s (after the start), 14:02:11 (UTC) or a date-time".into());
    }
    if let Some(t) = crate::trace::time::parse_rfc3339(s) {
        return Ok(TimeTarget::Instant(t));
    }
    if s.contains(':') {
        let parts: Vec<&str> = s.split(':').collect();
        let num = |x: &str| x.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
        let hms = match parts.as_slice() {
            [h, m] => num(h).zip(num(m)).map(|(h, m)| (h, m, 0.0)),
            [h, m, sec] => match (num(h), num(m), num(sec)) {
                (Some(h), Some(m), Some(x)) => Some((h, m, x)),
                _ => None,
            },
            _ => None,
        };
        return match hms {
            Some((h, m, x)) if h < 24.0 && m < 60.0 && x < 61.0 && h.fract() == 0.0 => {
                Ok(TimeTarget::TimeOfDay(h * 3600.0 + m * 60.0 + x))
            }
            _ => Err(format!("not a time of day: {s} (HH:MM or HH:MM:SS, UTC)")),
        };
    }
    let rest = s.strip_prefix('+').unwrap_or(s);
    parse_span(rest)
        .map(TimeTarget::Offset)
        .ok_or_else(|| format!("not a time: {s} (+12.5s, +1m30s, +500ms, 14:02:11)"))
}

/// `12.5s`, `1m30s`, `500ms`, `2h`, `90` (seconds) in seconds.
fn parse_span(s: &str) -> Option<f64> {
    if let Ok(v) = s.parse::<f64>() {
        return (v.is_finite() && v >= 0.0).then_some(v);
    }
    let mut total = 0.0;
    let mut rest = s;
    let mut any = false;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&n| n > 0)?;
        let v: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let (unit, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return None;
        };
        total += v * unit;
        rest = &rest[len..];
        any = true;
    }
    any.then_some(total)
}

/// The step of the first event at or after `target` (1-based); `None` when the session has
/// no times, or every time is before it.
pub fn step_at(log: &TraceLog, tl: &Timeline, target: TimeTarget) -> Option<u32> {
    let start = start_of(log, tl)?;
    let at = match target {
        TimeTarget::Offset(s) => start + s,
        TimeTarget::Instant(t) => t,
        TimeTarget::TimeOfDay(s) => {
            let day = (start / 86_400.0).floor() * 86_400.0;
            let t = day + s;
            // A run that goes past midnight: a time of day before the start is the next day.
            if t < start - 1e-9 && start - day > s {
                t + 86_400.0
            } else {
                t
            }
        }
    };
    let pos = tl.event_positions();
    // The time of event i, or of the next event that has one (within 64).
    let ts_from = |i: usize| -> Option<(usize, f64)> {
        (i..pos.len().min(i + 64))
            .find_map(|j| Some((j, load_at(log, pos[j])?.ts.as_ref()?.unix_seconds)))
    };
    let (mut lo, mut hi) = (0usize, pos.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match ts_from(mid) {
            Some((_, t)) if t < at => lo = mid + 1,
            Some(_) => hi = mid,
            None => lo = mid + 1,
        }
    }
    let (j, _) = ts_from(lo)?;
    Some(j as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_a_person_writes_them() {
        for (s, want) in [
            ("+12.5s", TimeTarget::Offset(12.5)),
            ("12.5", TimeTarget::Offset(12.5)),
            ("+1m30s", TimeTarget::Offset(90.0)),
            ("+500ms", TimeTarget::Offset(0.5)),
            ("+2h", TimeTarget::Offset(7200.0)),
            ("14:02", TimeTarget::TimeOfDay(50_520.0)),
            ("14:02:11.5", TimeTarget::TimeOfDay(50_531.5)),
        ] {
            assert_eq!(parse_target(s), Ok(want), "{s}");
        }
        assert!(matches!(
            parse_target("2026-03-01T09:00:00Z"),
            Ok(TimeTarget::Instant(_))
        ));
        for bad in ["", "+", "12x", "25:00", "1:2:3:4", "+-3s", "soon"] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_read_at_their_scale() {
        assert_eq!(format_duration(0.4), "<1ms");
        assert_eq!(format_duration(850.0), "850ms");
        assert_eq!(format_duration(1234.0), "1.23s");
        assert_eq!(format_duration(12_500.0), "12.5s");
        assert_eq!(format_duration(123_000.0), "2m03s");
        assert_eq!(format_duration(3_720_000.0), "1h02m");
        assert_eq!(format_offset(0.0), "+0.000s");
        assert_eq!(format_offset(123.0), "+2m03s");
    }
}
