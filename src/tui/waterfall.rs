//! `:spans`: the session's span tree as a waterfall, each call and run indented under its
//! parent with its start, its duration and a bar placed on the session's time axis (the
//! picture of otel-tui's and Langfuse's trace views). The tree is the model's
//! ([`crate::model::spans`]); this only lays it out as text.

use crate::model::clock::{format_duration, format_offset};
use crate::model::spans::SpanRow;

/// Columns of the bar.
const BAR: usize = 30;

/// The waterfall of `rows` around `step` (the rows from the last one at or before it), at
/// most `height` rows; the title says which rows are shown.
pub fn lines(rows: &[SpanRow], step: u32, height: usize) -> (String, Vec<String>) {
    if rows.is_empty() {
        return (
            "span tree".into(),
            vec!["no spans in this session (no event names its parent or a duration)".into()],
        );
    }
    let end = rows
        .iter()
        .filter_map(|r| Some(r.start? + r.duration_ms.unwrap_or(0.0) / 1000.0))
        .fold(0.0f64, f64::max)
        .max(1e-6);
    let height = height.max(1);
    let at = rows.iter().rposition(|r| r.step <= step).unwrap_or(0);
    let first = at
        .saturating_sub(height / 4)
        .min(rows.len().saturating_sub(height));
    let last = (first + height).min(rows.len());
    let mut out = Vec::with_capacity(last - first);
    for r in &rows[first..last] {
        let indent = "  ".repeat(r.depth.min(12) as usize);
        let mark = if r.failed { "✗ " } else { "" };
        let name = format!("{indent}{mark}{} {}", r.kind, r.label);
        let name: String = name.chars().take(40).collect();
        let start = r.start.map(format_offset).unwrap_or_default();
        let took = r.duration_ms.map(format_duration).unwrap_or_default();
        let mut bar = vec![' '; BAR];
        if let Some(s) = r.start {
            let a = ((s / end) * BAR as f64).floor() as usize;
            let a = a.min(BAR - 1);
            let len = r
                .duration_ms
                .map_or(1, |d| ((d / 1000.0 / end) * BAR as f64).round() as usize)
                .clamp(1, BAR - a);
            for c in &mut bar[a..a + len] {
                *c = if r.failed { '▒' } else { '█' };
            }
        }
        let bar: String = bar.into_iter().collect();
        let cursor = if r.step == rows[at].step { "▶" } else { " " };
        out.push(format!(
            "{cursor}{:>6} {name:<40} {start:>9} {took:>6} │{bar}│",
            r.step
        ));
    }
    let title = format!(
        "span tree: rows {}-{} of {} (run :spans at another step to see others)",
        first + 1,
        last,
        rows.len()
    );
    (title, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: u32, depth: u32, start: f64, ms: f64, failed: bool) -> SpanRow {
        SpanRow {
            step,
            depth,
            kind: "tool_call".into(),
            label: format!("t{step}"),
            start: Some(start),
            duration_ms: Some(ms),
            failed,
        }
    }

    #[test]
    fn bars_sit_on_the_sessions_time_axis() {
        let rows = [
            row(1, 0, 0.0, 10_000.0, false),
            row(2, 1, 0.0, 5_000.0, false),
            row(3, 1, 5.0, 5_000.0, true),
        ];
        let (_, l) = lines(&rows, 3, 10);
        let bar = |s: &str| s.split('│').nth(1).unwrap().to_string();
        assert_eq!(bar(&l[0]), "█".repeat(30));
        assert_eq!(bar(&l[1]), format!("{}{}", "█".repeat(15), " ".repeat(15)));
        assert_eq!(bar(&l[2]), format!("{}{}", " ".repeat(15), "▒".repeat(15)));
        assert!(l[2].starts_with("▶     3   ✗ tool_call t3"), "{}", l[2]);
        assert!(l[1].contains("  +0.000s  5.00s"), "{}", l[1]);
    }
}
