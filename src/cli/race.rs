//! `doxascope demo --race A,B` as text: per turn the question and reply once, then one line
//! per policy prefixed with its name; a final comparison line. `--headless` writes it at
//! once, live text play paces it a turn at a time.

use std::io::Write;
use std::time::Duration;

use crate::demo::race::{Race, Row, Side};
use crate::sanitize::sanitize;

/// The lines of dialogue `d`'s header.
fn header(race: &Race, d: usize) -> String {
    let c = &race.config;
    format!(
        "\n== race · dialogue {} · {} schedule · seed {} · error rate {} · {} vs {} ==",
        d + 1,
        c.schedule.as_str(),
        c.seed,
        c.error_rate,
        race.policies[0].as_str(),
        race.policies[1].as_str()
    )
}

fn ids(xs: &[(String, String)]) -> String {
    let v: Vec<String> = xs.iter().map(|(id, f)| format!("{id} ({f})")).collect();
    v.join(", ")
}

/// One side of a turn: `[greedy ] Σ 9  revisions 1  dropped b2 (!p)  refusals 0  fallbacks 0`.
pub(crate) fn side_line(name: &str, width: usize, s: &Side) -> String {
    let mut what = String::new();
    if !s.dropped.is_empty() {
        what.push_str(&format!("  dropped {}", ids(&s.dropped)));
    }
    if s.refused {
        what.push_str("  refused the commitment");
    } else if s.revised && s.dropped.is_empty() {
        what.push_str("  kept a contradiction");
    }
    if s.fallback {
        what.push_str("  (recency fallback)");
    }
    format!(
        "  [{name:<width$}] Σ {:<3} revisions {:<2} refusals {:<2} fallbacks {}{what}",
        s.sigma_size, s.revisions, s.refusals, s.fallbacks
    )
}

/// The lines of one turn.
fn turn_lines(race: &Race, row: &Row) -> Vec<String> {
    let width = race
        .policies
        .iter()
        .map(|p| p.as_str().len())
        .max()
        .unwrap_or(0);
    let slip = if row.reply == row.correct {
        ""
    } else {
        "   <- slip"
    };
    let commit = match &row.commitment {
        Some((id, f)) => format!("   commit {id}: {f}"),
        None => String::new(),
    };
    let mut out = vec![
        format!("\nturn {:>2}  {}", row.turn, row.question),
        format!(
            "          reply {:<7}  (correct: {}){slip}{commit}",
            row.reply.as_str(),
            row.correct.as_str()
        ),
    ];
    for (p, s) in race.policies.iter().zip(&row.sides) {
        out.push(side_line(p.as_str(), width, s));
    }
    out
}

/// The final comparison line: per policy revisions, dropped beliefs, refusals, fallbacks.
pub(crate) fn comparison(race: &Race) -> String {
    let parts: Vec<String> = (0..2)
        .map(|i| {
            let t = race.totals(i);
            format!(
                "{}: revisions {}, dropped beliefs {}, refusals {}, fallbacks {}, consistent {}/{}",
                race.policies[i].as_str(),
                t.revisions,
                t.dropped,
                t.refusals,
                t.fallbacks,
                t.consistent,
                race.dialogues.len()
            )
        })
        .collect();
    format!("\nrace finished: {} | {}", parts[0], parts[1])
}

/// Writes the whole race, waiting `per_turn` after each turn (zero: at once). A write error
/// (a closed pipe) ends it quietly.
pub(crate) fn play(race: &Race, out: &mut dyn Write, per_turn: Duration) -> std::io::Result<()> {
    for (i, d) in race.dialogues.iter().enumerate() {
        writeln!(out, "{}", sanitize_keep_breaks(&header(race, i)))?;
        for row in &d.rows {
            for line in turn_lines(race, row) {
                writeln!(out, "{}", sanitize_keep_breaks(&line))?;
            }
            out.flush()?;
            if !per_turn.is_zero() {
                std::thread::sleep(per_turn);
            }
        }
    }
    writeln!(out, "{}", sanitize_keep_breaks(&comparison(race)))?;
    out.flush()
}

fn sanitize_keep_breaks(s: &str) -> String {
    s.split('\n').map(sanitize).collect::<Vec<_>>().join("\n")
}
