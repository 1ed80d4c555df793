//! The detail pane: the item selected in the last focused list pane (or the timeline's
//! cursor) in full: its fields, provenance, the audit's findings about it and the raw event.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cx, Scroll, block, fallback, kv_line};
use crate::model::audit::Severity as FindingSeverity;
use crate::sanitize::sanitize;
use crate::trace::{Body, Event};
use crate::tui::app::{App, Effect, Pane};
use crate::tui::audit_job::At;
use crate::tui::data::{RowItem, enum_name};
use crate::tui::highlight::Lang;
use crate::tui::keys::Action;
use crate::tui::text::{bytes_spans, lines as text_lines, spans};

/// The detail pane's state: its scroll.
#[derive(Debug, Default)]
pub struct DetailPane {
    /// The scroll.
    pub scroll: Scroll,
}

impl DetailPane {
    /// The selection keys scroll.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        match cx.delta(a) {
            Some(d) => {
                self.scroll.by(d);
                Vec::new()
            }
            None => fallback(a, cx),
        }
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let b = block(app, Pane::Detail, String::new());
        let inner = b.inner(area);
        f.render_widget(b, area);
        let on_timeline = !matches!(app.detail_from, Pane::Sigma | Pane::Verify | Pane::Retract);
        let lines = match app.cursor_item() {
            Some(RowItem::Problem(k)) if on_timeline => problem_lines(app, k),
            _ => {
                let Some(pos) = app
                    .selected_event()
                    .or_else(|| app.cursor_event().map(|(p, _)| p))
                else {
                    return;
                };
                detail_lines(app, pos)
            }
        };
        let top = self.scroll.shown(lines.len(), usize::from(inner.height));
        let p = Paragraph::new(lines).scroll((top as u16, 0));
        f.render_widget(p, inner);
    }
}

/// How many of a key's last values and reads the detail pane describes.
const KEY_TAIL: usize = 6;

/// For an event that wrote ground beliefs (a `belief`, a done step's `new_beliefs`): each
/// key's life up to the shown step, the values with who wrote them and how they ended, and
/// the steps that read the key (`model::keylife`): the memory next to where it changed.
/// The last [`KEY_TAIL`] values and reads are shown, the earlier ones counted (`history
/// KEY` in the REPL lists them all): the pane is drawn on every frame, and a key written a
/// million times must not make time travel slow.
fn key_lines(app: &App, ev: &Event, out: &mut Vec<Line<'static>>) {
    let th = app.theme.clone();
    let names: Vec<&str> = match &ev.body {
        Body::Belief(b) => vec![&b.name],
        Body::Step(st) => st.new_beliefs.iter().map(|b| b.name.as_str()).collect(),
        _ => return,
    };
    let Some(s) = app.sess() else {
        return;
    };
    for name in names {
        let Some(life) = crate::model::keylife::key_life(
            &s.tl,
            &app.store.log,
            name,
            app.step(),
            Some(KEY_TAIL),
        ) else {
            continue;
        };
        let mut l = vec![Span::styled(format!("{:<11}", "values of"), th.dim)];
        l.extend(spans(name, th.accent, th.marker));
        out.push(Line::from(l));
        if life.earlier_writes > 0 {
            out.push(Line::from(Span::styled(
                format!(
                    "  … {} earlier value{} (history {} lists them)",
                    life.earlier_writes,
                    if life.earlier_writes == 1 { "" } else { "s" },
                    sanitize(name)
                ),
                th.dim,
            )));
        }
        for w in &life.writes {
            let mut l = vec![Span::styled(format!("  {:>5}  ", w.step), th.dim)];
            l.extend(spans(&w.formula, th.text, th.marker));
            l.push(Span::styled("  ← ", th.dim));
            l.extend(spans(&w.writer, th.dim, th.marker));
            if let Some(x) = w.ended {
                let how = match x.by.as_str() {
                    "superseded" => "overwritten".to_string(),
                    "reannounced" => "written again".to_string(),
                    by => format!("retracted by {by}"),
                };
                l.push(Span::styled(format!("  {how} at {}", x.step), th.retracted));
            }
            out.push(Line::from(l));
        }
        if !life.reads.is_empty() {
            let mut reads: Vec<String> = life
                .reads
                .iter()
                .map(|r| format!("{} ({})", r.step, r.by))
                .collect();
            if life.earlier_reads > 0 {
                reads.insert(0, format!("{} earlier", life.earlier_reads));
            }
            let mut l = vec![Span::styled(format!("{:<11}", "read by"), th.dim)];
            l.extend(spans(&reads.join(", "), th.text, th.marker));
            out.push(Line::from(l));
        }
    }
}

/// Whether `ev`'s file was converted by an importer (its lines are not the file's).
fn imported(app: &App, ev: &Event) -> bool {
    let name = std::path::Path::new(&*ev.origin.file)
        .file_name()
        .map(|n| n.to_string_lossy());
    app.sources
        .imported
        .iter()
        .any(|i| Some(i.name.as_str()) == name.as_deref())
}

/// The scores of the event at `pos` (those that name it as their target), one line each:
/// the badge, the step of the score, who scored and why.
fn score_lines(app: &App, pos: u32, out: &mut Vec<Line<'static>>) {
    let th = &app.theme;
    let Some((s, i)) = app.sess().and_then(|s| Some((s, s.event_index(pos)?))) else {
        return;
    };
    if s.tl.scores().is_empty() {
        return;
    }
    for sc in crate::model::scores::on_event(&app.store.log, &s.tl, i + 1) {
        let st = match sc.passed {
            Some(false) => th.error,
            Some(true) => th.ok,
            None => th.accent,
        };
        let mut l = vec![Span::styled(format!("{:<11}", "score"), th.dim)];
        l.extend(spans(
            &crate::model::scores::badge(&sc.score),
            st,
            th.marker,
        ));
        let mut more = format!("  (step {}", sc.step);
        if let Some(src) = &sc.score.source {
            more.push_str(&format!(", by {src}"));
        }
        more.push(')');
        if let Some(x) = &sc.score.explanation {
            more.push_str(&format!(": {x}"));
        }
        l.extend(spans(&more, th.text, th.marker));
        out.push(Line::from(l));
    }
}

fn origin_text(ev: &Event) -> String {
    format!("{}:{}", sanitize(&ev.origin.file), ev.origin.line)
}

/// The lines of the detail pane for the event at `pos`.
pub fn detail_lines(app: &App, pos: u32) -> Vec<Line<'static>> {
    let th = app.theme.clone();
    let Some(ev) = app.store.event(pos).cloned() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut kv = |k: &str, v: &str, st: Style| out.push(kv_line(&th, k, v, st));
    kv("kind", ev.kind_name(), th.accent);
    kv("session", &ev.session, th.text);
    kv("seq", &ev.seq.to_string(), th.text);
    kv(
        "from",
        &crate::trace::provenance::place(&ev, imported(app, &ev)),
        th.text,
    );
    if let Some(id) = &ev.id {
        kv("id", id, th.accent);
    }
    if let Body::Announce(a) = &ev.body {
        kv("role", &enum_name(&a.role), th.text);
        kv("source", a.source.as_deref().unwrap_or("–"), th.text);
        kv("confidence", &format!("{:.2}", a.confidence), th.text);
        if let Some(t) = &a.text {
            kv("text", t, th.text);
        }
    }
    let formula = match &ev.body {
        Body::Announce(a) => Some(a.formula.to_string()),
        Body::Query(q) => Some(q.formula.to_string()),
        Body::Verify(v) => Some(v.all_formulas().collect::<Vec<_>>().join(", ")),
        _ => None,
    };
    if let Some(fm) = formula {
        let hl = app.hl.get(Lang::Formula, &fm, &th.syntax, th.marker);
        let mut l = vec![Span::styled(format!("{:<11}", "formula"), th.dim)];
        match hl.and_then(|v| v.into_iter().next()) {
            Some(line) => l.extend(line.spans),
            None => l.extend(spans(&fm, th.text, th.marker)),
        }
        out.push(Line::from(l));
    }
    // Provenance: the cited premises back to the lines that announced them.
    let because = match &ev.body {
        Body::Announce(a) => a.because.clone(),
        Body::Verify(v) => v.because.clone(),
        _ => Vec::new(),
    };
    if !because.is_empty() {
        out.push(Line::from(Span::styled("because", th.dim)));
        let s = app.sess();
        for c in because {
            // By the id index: a cited id that was never announced must not cost a pass
            // over Σ every frame.
            let found = s.and_then(|s| {
                s.record_before(&c, pos)
                    .and_then(|r| s.tl.beliefs().get(r as usize))
            });
            let mut l = vec![Span::raw("  ")];
            l.extend(spans(&c, th.accent, th.marker));
            match found.and_then(|b| app.store.event(b.event)) {
                Some(pe) => l.push(Span::styled(format!("  ← {}", origin_text(pe)), th.dim)),
                None => l.push(Span::styled(
                    "  ← not announced before (ungrounded)",
                    th.error,
                )),
            }
            out.push(Line::from(l));
        }
    }
    key_lines(app, &ev, &mut out);
    score_lines(app, pos, &mut out);
    // What the audit found about this event, in its own words.
    let found: Vec<(String, FindingSeverity, String)> = app
        .sess()
        .and_then(|s| s.event_index(pos))
        .zip(app.view().analysis.as_ref())
        .map(|(i, a)| {
            a.on_event(i)
                .map(|f| (f.code.to_string(), f.severity, f.message.clone()))
                .collect()
        })
        .unwrap_or_default();
    for (code, sev, message) in found {
        let st = if sev >= FindingSeverity::Warning {
            th.error
        } else {
            th.warn
        };
        let mut l = vec![Span::styled(format!("{:<11}", "finding"), th.dim)];
        l.extend(spans(&format!("{code} ({sev}) "), st, th.marker));
        l.extend(spans(&message, th.text, th.marker));
        out.push(Line::from(l));
    }
    out.push(Line::from(Span::styled("raw event", th.dim)));
    // Laid out token by token: fields in line order, numbers exactly as written. Only the
    // first RAW_SHOWN bytes: a 4 MiB list in one field would be two million lines to lay
    // out and highlight on every frame.
    let raw = ev.to_json_line();
    let mut cut = raw.len().min(RAW_SHOWN);
    while !raw.is_char_boundary(cut) {
        cut -= 1;
    }
    let pretty = crate::trace::event::pretty_json(&raw[..cut]);
    match app.hl.get(Lang::Json, &pretty, &th.syntax, th.marker) {
        Some(l) => out.extend(l),
        None => out.extend(text_lines(&pretty, th.text, th.marker)),
    }
    if cut < raw.len() {
        out.push(Line::from(Span::styled(
            format!(
                "… {} more bytes of the raw event not shown",
                raw.len() - cut
            ),
            th.dim,
        )));
    }
    out
}

/// How much of a raw event the detail pane lays out (see `docs/reliability.md`).
const RAW_SHOWN: usize = 64 * 1024;

/// The lines of the detail pane for the reader problem at index `k` of the shown session:
/// `file:line:column: message`, as `doxascope validate` prints it, and the audit's finding.
pub fn problem_lines(app: &App, k: u32) -> Vec<Line<'static>> {
    let th = &app.theme;
    let Some(s) = app.sess() else {
        return Vec::new();
    };
    let Some(p) = s
        .problems
        .get(k as usize)
        .and_then(|&(_, q)| app.store.problem(q))
    else {
        return Vec::new();
    };
    // What the line held, escaped (controls and invisible characters as markers, bytes that
    // are not UTF-8 as \xNN), so the line can be recognised without opening the file.
    let line_row = p.excerpt.as_ref().map(|e| {
        let mut l = vec![Span::styled(format!("{:<11}", "line"), th.dim)];
        if e.bytes.is_empty() {
            l.push(Span::styled(
                format!("not kept ({} bytes, over the length cap)", e.len),
                th.dim,
            ));
        } else {
            l.extend(bytes_spans(&e.bytes, th.text, th.marker));
            if (e.bytes.len() as u64) < e.len {
                l.push(Span::styled(
                    format!(" … ({} of {} bytes shown)", e.bytes.len(), e.len),
                    th.dim,
                ));
            }
        }
        Line::from(l)
    });
    let mut out = Vec::new();
    let mut kv = |k: &str, v: &str, st: Style| out.push(kv_line(th, k, v, st));
    let sev = match p.severity {
        crate::trace::Severity::Error => "error: the line is not an event",
        crate::trace::Severity::Warning => "warning: the line was kept",
    };
    let st = match p.severity {
        crate::trace::Severity::Error => th.error,
        crate::trace::Severity::Warning => th.warn,
    };
    kv("kind", super::timeline::problem_kind(p), st);
    kv("severity", sev, th.text);
    kv(
        "at",
        &format!(
            "{}:{}:{}: {}",
            p.origin.file, p.origin.line, p.column, p.message
        ),
        th.error,
    );
    if let Some(field) = &p.field {
        kv("field", field, th.text);
    }
    if let Some(l) = line_row {
        out.push(l);
    }
    let mut kv = |k: &str, v: &str, st: Style| out.push(kv_line(th, k, v, st));
    kv(
        "step",
        &format!("read after step {}", s.problems[k as usize].0),
        th.text,
    );
    if let Some(a) = &app.view().analysis {
        for f in a
            .findings
            .iter()
            .filter(|(at, _)| *at == At::Problem(k))
            .map(|(_, f)| f)
        {
            kv(
                "finding",
                &format!("{} ({}) {}", f.code, f.severity, f.message),
                th.text,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::data::Store;

    /// A key written 20 times and read by 10 steps: the pane describes the last
    /// [`KEY_TAIL`] of each and counts the rest, so a frame's work does not grow with them.
    #[test]
    fn a_keys_long_life_shows_its_tail_and_counts_the_rest() {
        let mut t = String::new();
        for k in 0..20 {
            t += &format!("{{\"kind\":\"belief\",\"name\":\"x\",\"value\":{k}}}\n");
            if k % 2 == 1 {
                t += &format!(
                    "{{\"kind\":\"step\",\"plan\":\"p\",\"step\":\"S{k}\",\"status\":\"dispatched\",\"inputs\":{{\"x\":{k}}}}}\n"
                );
            }
        }
        let theme = crate::tui::theme::Theme::builtin("dark").unwrap();
        let mut app = App::new(Store::from_bytes("t.jsonl", t.as_bytes()), theme);
        let last = u64::from(app.sess().unwrap().len());
        app.goto_step(last - 1);
        let (_, ev) = app.cursor_event().unwrap();
        let mut out = Vec::new();
        key_lines(&app, ev, &mut out);
        let text: Vec<String> = out
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let values: Vec<&String> = text.iter().filter(|l| l.contains("x = ")).collect();
        assert_eq!(values.len(), KEY_TAIL, "{text:#?}");
        assert!(values.last().unwrap().contains("x = 19"), "{text:#?}");
        assert!(
            text.iter()
                .any(|l| l.contains("14 earlier values (history x lists them)")),
            "{text:#?}"
        );
        let reads = text.iter().find(|l| l.starts_with("read by")).unwrap();
        // The shown step is the last write; the step after it (S19) has not read yet.
        assert!(reads.contains("3 earlier, 12 (S7 of p)"), "{reads}");
        assert!(reads.ends_with("27 (S17 of p)"), "{reads}");
    }
}
