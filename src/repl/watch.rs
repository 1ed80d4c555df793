//! Watchpoints and breakpoints: `watch φ|KEY`, `break CODE`, `unwatch`, and `continue
//! [back]`, which travels in time to the nearest step where a watched formula changes status,
//! a watched key changes value, or a finding of a watched code is, naming the event.
//!
//! The steps come from the answers the REPL already gives: `history φ` (the formula's
//! change points, or a key's life when the argument names a ground belief) and the audit's
//! findings of the session. Nothing here decides a status itself.

use crate::model::audit::{AuditOptions, Code, audit};

use super::command::CommandError;
use super::reply::{HistoryLine, Stop};
use super::{Command, FormulaArg, Repl, ReplError, Reply};

/// What a point watches.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PointKind {
    /// A formula, a belief id or a key (`history` tells which).
    Watch(FormulaArg),
    /// A finding code.
    Break(Code),
}

/// One watchpoint or breakpoint, with the step `continue` last stopped at for it (listed by
/// `watch` so a user sees which point paused following).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    kind: PointKind,
    last: Option<u64>,
}

impl Point {
    fn new(kind: PointKind) -> Self {
        Point { kind, last: None }
    }

    fn describe(&self) -> String {
        match &self.kind {
            PointKind::Watch(f) => format!("watch {}", f.text),
            PointKind::Break(c) => format!("break {}", c.as_str()),
        }
    }

    /// `watch #N` / `break #N`, how a hit names its point.
    fn label(&self, n: usize) -> String {
        match &self.kind {
            PointKind::Watch(_) => format!("watch #{n}"),
            PointKind::Break(_) => format!("break #{n}"),
        }
    }
}

/// `watch φ|KEY`; without an argument, the list of points.
pub(crate) fn watch(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Watch(f) = cmd else {
        return Err(ReplError::new(cmd.name(), "internal error: wrong command"));
    };
    let Some(f) = f else {
        return Ok(points(r));
    };
    // Asked once now, so that a formula that does not parse is refused when it is set.
    r.run(&Command::History(f.clone())).map_err(|e| ReplError {
        command: "watch".into(),
        ..e
    })?;
    r.points.push(Point::new(PointKind::Watch(f.clone())));
    Ok(points(r))
}

/// `break CODE`
pub(crate) fn brk(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Break(code) = cmd else {
        return Err(ReplError::new(cmd.name(), "internal error: wrong command"));
    };
    let Some(code) = Code::from_name(code) else {
        return Err(ReplError::new(
            "break",
            format!("no finding code `{code}` (`doxascope audit --help` lists them)"),
        ));
    };
    r.points.push(Point::new(PointKind::Break(code)));
    Ok(points(r))
}

/// `unwatch [N]`: removes watchpoint N, or all of them.
pub(crate) fn unwatch(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Unwatch(n) = cmd else {
        return Err(ReplError::new(cmd.name(), "internal error: wrong command"));
    };
    match n {
        None => r.points.clear(),
        Some(n) if *n >= 1 && (*n as usize) <= r.points.len() => {
            r.points.remove(*n as usize - 1);
        }
        Some(n) => {
            return Err(ReplError::new(
                "unwatch",
                format!("no watchpoint {n} ({} set)", r.points.len()),
            ));
        }
    }
    Ok(points(r))
}

/// `continue [back]`: time travel to the nearest step after (before) the current one where a
/// point triggers.
pub(crate) fn cont(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Continue { back } = cmd else {
        return Err(ReplError::new(cmd.name(), "internal error: wrong command"));
    };
    if r.points.is_empty() {
        return Err(ReplError::new(
            "continue",
            "no watchpoints: set one with `watch φ`, `watch KEY` or `break CODE`",
        ));
    }
    let from = r.step;
    let mut hits: Vec<(u64, usize, String)> = Vec::new();
    for (i, p) in r.points.clone().iter().enumerate() {
        hits.extend(triggers(r, p, i + 1)?.into_iter().map(|(s, t)| (s, i, t)));
    }
    let nearest = if *back {
        hits.iter().map(|h| h.0).filter(|&s| s < from).max()
    } else {
        hits.iter().map(|h| h.0).filter(|&s| s > from).min()
    };
    // `history` moved nothing; travel only once the stop is known.
    r.run(&Command::At(nearest.unwrap_or(from)))?;
    let hits: Vec<String> = match nearest {
        Some(s) => hits
            .into_iter()
            .filter(|h| h.0 == s)
            .map(|(s, i, text)| {
                r.points[i].last = Some(s);
                text
            })
            .collect(),
        None => Vec::new(),
    };
    let mut reply = points(r);
    if let Reply::Watch { stop, .. } = &mut reply {
        *stop = Some(Stop {
            from,
            back: *back,
            step: nearest,
            last: r.trace.last_step(),
            hits,
        });
    }
    Ok(reply)
}

/// Every step where `p` (point number `n`) triggers, with what happened there.
fn triggers(r: &mut Repl, p: &Point, n: usize) -> Result<Vec<(u64, String)>, ReplError> {
    let label = p.label(n);
    match &p.kind {
        PointKind::Watch(f) => {
            // A key's life is told when the key is held at the current step: ask at the end
            // of the trace, where every key written is known, then come back.
            let here = r.step;
            r.run(&Command::At(r.trace.last_step()))?;
            let reply = r.run(&Command::History(f.clone()));
            r.run(&Command::At(here))?;
            let reply = reply?;
            let Reply::History { rows, key, .. } = reply else {
                return Ok(Vec::new());
            };
            if let Some(key) = key {
                let mut out = Vec::new();
                for w in &key.writes {
                    out.push((
                        w.step,
                        format!(
                            "{label}: {} written as {} at step {} by {}",
                            f.text, w.formula, w.step, w.writer
                        ),
                    ));
                }
                return Ok(out);
            }
            Ok(rows
                .iter()
                .map(|row| (row.step, row_text(&label, &f.text, row)))
                .collect())
        }
        PointKind::Break(code) => {
            let Some((model, session)) = r.trace.model() else {
                return Ok(Vec::new());
            };
            let report = audit(model, &AuditOptions::default());
            Ok(report
                .findings
                .iter()
                .filter(|f| f.code == *code && f.session == session)
                .filter_map(|f| {
                    let step = u64::from(f.step?);
                    Some((
                        step,
                        format!("{label}: {} at step {step}: {}", code.as_str(), f.message),
                    ))
                })
                .collect())
        }
    }
}

/// One change of a watched formula, naming the event that caused it.
fn row_text(label: &str, formula: &str, row: &HistoryLine) -> String {
    let mut s = if row.status == row.previous {
        format!(
            "{label}: {formula} stayed {} at step {}",
            row.status, row.step
        )
    } else {
        format!(
            "{label}: {formula} became {} (was {}) at step {}",
            row.status, row.previous, row.step
        )
    };
    for c in &row.changes {
        if *c != "status" {
            s.push_str(&format!("; {c}"));
        }
    }
    if let Some(b) = &row.belief {
        s.push_str(&format!(" {b}"));
    }
    if let Some(e) = &row.event {
        let id = e.id.as_deref().map_or(String::new(), |i| format!(" {i}"));
        s.push_str(&format!(" ← {}{id} ({}:{})", e.kind, e.file, e.line));
    }
    s
}

/// The reply listing the points set.
fn points(r: &Repl) -> Reply {
    Reply::Watch {
        points: r
            .points
            .iter()
            .map(|p| match p.last {
                Some(s) => format!("{} (last stopped at step {s})", p.describe()),
                None => p.describe(),
            })
            .collect(),
        stop: None,
    }
}

/// The arguments of `watch`, `break`, `unwatch` and `continue` (the rows of
/// [`super::command::COMMANDS`] whose functions are in this module): `formula` reads the
/// argument as a formula, `fail` makes an error at the argument's column.
pub(super) fn parse_args(
    name: &str,
    arg: &str,
    formula: impl FnOnce() -> Result<FormulaArg, CommandError>,
    fail: impl Fn(String) -> CommandError,
) -> Result<Command, CommandError> {
    match name {
        "watch" if arg.is_empty() => Ok(Command::Watch(None)),
        "watch" => Ok(Command::Watch(Some(formula()?))),
        "break" if arg.is_empty() || arg.contains(char::is_whitespace) => {
            Err(fail("expected one finding code".into()))
        }
        "break" => Ok(Command::Break(arg.to_string())),
        "unwatch" if arg.is_empty() => Ok(Command::Unwatch(None)),
        "unwatch" => arg
            .parse::<u64>()
            .map(|n| Command::Unwatch(Some(n)))
            .map_err(|_| fail(format!("expected a watchpoint number, found `{arg}`"))),
        _ => match arg {
            "" => Ok(Command::Continue { back: false }),
            "back" => Ok(Command::Continue { back: true }),
            _ => Err(fail(format!("expected nothing or `back`, found `{arg}`"))),
        },
    }
}
