//! Where an event was read from, said in terms of the file the user has: for a v1 file its
//! `file:line`; for a file an importer converted, the place in the SOURCE file the importer
//! recorded (`x_from`): `source.jsonl:3` when the source has lines (OTLP JSON lines), else
//! the member or JSON path (`run.eval, samples/1_epoch_1.json: events[4]`). A line of the
//! converted v1 stream is never shown under the source's name: the user cannot open it. When
//! the converted stream itself is opened (a file `doxascope import` wrote), its own line is
//! shown, with the source's place named as the source's.

use crate::trace::Event;

/// The place in its source an importer recorded for an event (`x_from`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePlace {
    /// The source's line, when the source has lines (`line 3, span …`).
    pub line: Option<u64>,
    /// The place as the importer wrote it (raw: sanitize before showing).
    pub text: String,
}

/// The place in the source `ev` was imported from; `None` for an event of a v1 file (or one
/// the importer gave no place).
pub fn source_place(ev: &Event) -> Option<SourcePlace> {
    match ev.extra.value("x_from") {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Some(SourcePlace {
            line: source_line(&s).map(|(n, _)| n),
            text: s,
        }),
        _ => None,
    }
}

/// Where `ev` came from. `imported`: whether its file was converted by an importer (then its
/// `origin.line` is a line of the converted stream, not of the file).
pub fn place(ev: &Event, imported: bool) -> String {
    let file = &*ev.origin.file;
    let from = match ev.extra.value("x_from") {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Some(s),
        _ => None,
    };
    match from {
        // A v1 file `doxascope import` wrote: the user can open this file at its line, and
        // the place named by `x_from` is in the source it was converted from, not here.
        Some(loc) if !imported => format!(
            "{file}:{} (byte {}), imported from {loc} of its source",
            ev.origin.line, ev.origin.offset
        ),
        Some(loc) => match source_line(&loc) {
            Some((n, "")) => format!("{file}:{n}"),
            Some((n, rest)) => format!("{file}:{n} ({rest})"),
            None => format!("{file}, {loc}"),
        },
        None if imported => format!("{file} (the importer recorded no place in it)"),
        None => format!("{file}:{} (byte {})", ev.origin.line, ev.origin.offset),
    }
}

/// `line N` or `line N, more` as `(N, "more")`.
fn source_line(loc: &str) -> Option<(u64, &str)> {
    let rest = loc.strip_prefix("line ")?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let n = rest[..digits].parse().ok()?;
    let tail = rest[digits..].trim_start_matches([',', ' ']);
    Some((n, tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Item, Reader, ReaderConfig};

    fn ev(name: &str, text: &str) -> Event {
        let mut r = Reader::new(name, ReaderConfig::default());
        let mut out = Vec::new();
        r.feed(text.as_bytes(), &mut out);
        r.finish(&mut out);
        out.into_iter()
            .find_map(|i| match i {
                Item::Event(e) => Some(e),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn an_imported_event_names_its_place_in_the_source() {
        let line =
            "{\"kind\":\"log\"}\n{\"kind\":\"tool_call\",\"x_from\":\"line 3, span 00ff\"}\n";
        let mut r = Reader::new("run.jsonl", ReaderConfig::default());
        let mut out = Vec::new();
        r.feed(line.as_bytes(), &mut out);
        r.finish(&mut out);
        let second = out
            .into_iter()
            .filter_map(|i| match i {
                Item::Event(e) => Some(e),
                _ => None,
            })
            .nth(1)
            .unwrap();
        assert_eq!(place(&second, true), "run.jsonl:3 (span 00ff)");
        let member = ev(
            "a.eval",
            r#"{"kind":"log","x_from":"samples[0].events[4]"}"#,
        );
        assert_eq!(place(&member, true), "a.eval, samples[0].events[4]");
        let bare = ev("b.json", r#"{"kind":"log"}"#);
        assert!(!place(&bare, true).contains(":1"), "{}", place(&bare, true));
        assert_eq!(place(&bare, false), "b.json:1 (byte 0)");
        // The converted stream read as a v1 file: its own line, and the source's place as
        // the source's, never under this file's name.
        assert_eq!(
            place(&member, false),
            "a.eval:1 (byte 0), imported from samples[0].events[4] of its source"
        );
    }
}
