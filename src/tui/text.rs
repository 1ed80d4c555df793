//! Untrusted text to spans: the only way trace text becomes something the terminal draws.
//!
//! Every string that came from a trace (formulas, ids, sources, messages, raw JSON) goes
//! through [`crate::sanitize::segments`] here; printable runs keep the caller's style and
//! each marker (the visible stand-in for a control, bidi or invisible character) gets the
//! theme's marker style, so it cannot be mistaken for the same characters typed literally.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use unicode_width::UnicodeWidthChar;

use crate::sanitize::{Options, Segment, segments};

/// Sanitized single-line spans of `s`, printable runs in `style`, markers in `marker`.
pub fn spans(s: &str, style: Style, marker: Style) -> Vec<Span<'static>> {
    spans_with(s, style, marker, Options::default())
}

/// Like [`spans`] with explicit sanitizer options.
pub fn spans_with(s: &str, style: Style, marker: Style, opts: Options) -> Vec<Span<'static>> {
    segments(s, opts)
        .into_iter()
        .map(|seg| match seg {
            Segment::Text(t) => Span::styled(t.into_owned(), style),
            Segment::Marker(m) => Span::styled(m, marker),
        })
        .collect()
}

/// Sanitized multi-line text: line feeds become line breaks, everything else as [`spans`].
pub fn lines(s: &str, style: Style, marker: Style) -> Vec<Line<'static>> {
    let opts = Options {
        keep_newlines: true,
        max_bytes: 64 * 1024,
    };
    let mut out = vec![Line::default()];
    for seg in segments(s, opts) {
        match seg {
            Segment::Text(t) => {
                let mut parts = t.split('\n');
                if let Some(first) = parts.next()
                    && !first.is_empty()
                    && let Some(l) = out.last_mut()
                {
                    l.spans.push(Span::styled(first.to_string(), style));
                }
                for p in parts {
                    out.push(Line::from(Span::styled(p.to_string(), style)));
                }
            }
            Segment::Marker(m) => {
                if let Some(l) = out.last_mut() {
                    l.spans.push(Span::styled(m, marker));
                }
            }
        }
    }
    out
}

/// Sanitized spans of bytes that may not be UTF-8 (a bad line as read): valid text as
/// [`spans`], each invalid byte as a marker `\xNN`.
pub fn bytes_spans(bytes: &[u8], style: Style, marker: Style) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    for chunk in bytes.utf8_chunks() {
        out.extend(spans(chunk.valid(), style, marker));
        for b in chunk.invalid() {
            out.push(Span::styled(format!("\\x{b:02X}"), marker));
        }
    }
    out
}

/// `spans` without their first `cols` display columns (a horizontally scrolled row). A wide
/// character cut in two leaves a space for its visible half, so the columns after it stay
/// where they were.
pub fn skip_columns(spans: Vec<Span<'static>>, cols: usize) -> Vec<Span<'static>> {
    use unicode_width::UnicodeWidthChar;
    if cols == 0 {
        return spans;
    }
    let mut left = cols;
    let mut out = Vec::new();
    for s in spans {
        if left == 0 {
            out.push(s);
            continue;
        }
        let mut kept = String::new();
        for c in s.content.chars() {
            let w = c.width().unwrap_or(0);
            if left == 0 {
                kept.push(c);
            } else if w > left {
                kept.push_str(&" ".repeat(w - left));
                left = 0;
            } else {
                left -= w;
            }
        }
        if !kept.is_empty() {
            out.push(Span::styled(kept, s.style));
        }
    }
    out
}

/// The widest start of `s` that takes at most `w` cells.
fn head(s: &str, w: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += UnicodeWidthChar::width(c).unwrap_or(0);
        if used > w {
            return &s[..i];
        }
    }
    s
}

/// The widest end of `s` that takes at most `w` cells.
fn tail(s: &str, w: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += UnicodeWidthChar::width(c).unwrap_or(0);
        if used > w {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// Cuts each of `texts` (already sanitized) to `w` cells with `…` where one is cut, so that
/// two different texts never read the same: the cut keeps the start (`treasure_in…`)
/// unless that makes different texts equal, then moves the `…` left until the ends that
/// tell them apart show (`treasu…_in_a`, `treasu…_in_b`), or shows a window of the middle
/// (`…_1…`, `…_2…`). Only when no such cut keeps them apart (more different texts than
/// `w` cells can spell) may two read the same.
pub fn distinct_cuts(texts: &[String], w: usize) -> Vec<String> {
    let width = |s: &str| unicode_width::UnicodeWidthStr::width(s);
    if texts.iter().all(|t| width(t) <= w) {
        return texts.to_vec();
    }
    if w <= 1 {
        return texts
            .iter()
            .map(|t| {
                if width(t) <= w {
                    t.clone()
                } else {
                    "…".repeat(w)
                }
            })
            .collect();
    }
    let cut_at = |t: &String, k: usize| -> String {
        if width(t) <= w {
            t.clone()
        } else {
            format!("{}…{}", head(t, k), tail(t, w - 1 - k))
        }
    };
    let distinct = |cuts: &[String]| {
        let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
        cuts.iter()
            .zip(texts)
            .all(|(c, t)| *seen.entry(c.as_str()).or_insert(t.as_str()) == t.as_str())
    };
    let mut first = None;
    for k in (0..w).rev() {
        let cuts: Vec<String> = texts.iter().map(|t| cut_at(t, k)).collect();
        if distinct(&cuts) {
            return cuts;
        }
        first.get_or_insert(cuts);
    }
    // They differ only in the middle: a window of the middle, `…` on both sides.
    if w >= 3 {
        let longest = texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
        for skip in 1..longest {
            let cuts: Vec<String> = texts
                .iter()
                .map(|t| {
                    if width(t) <= w {
                        return t.clone();
                    }
                    let rest: String = t.chars().skip(skip).collect();
                    let mid = head(&rest, w - 2);
                    if width(&rest) < w {
                        format!("…{rest}")
                    } else {
                        format!("…{mid}…")
                    }
                })
                .collect();
            if distinct(&cuts) {
                return cuts;
            }
        }
    }
    first.unwrap_or_default()
}

/// Whether drawn text is free of control and bidi characters; line feeds separate rows and
/// are allowed (used by tests).
pub fn is_clean(s: &str) -> bool {
    !s.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_marked_spans() {
        let m = Style::new().red();
        let s = spans("a\u{1b}]0;PWNED\u{7}b\u{202E}c", Style::new(), m);
        let text: String = s.iter().map(|s| s.content.as_ref()).collect();
        assert!(is_clean(&text), "{text:?}");
        assert!(text.starts_with('a') && text.ends_with('c'));
        assert!(s.iter().filter(|s| s.style == m).count() >= 3);
    }

    #[test]
    fn skipping_columns_keeps_the_rest_in_place() {
        let text =
            |v: Vec<Span<'static>>| v.iter().map(|s| s.content.to_string()).collect::<String>();
        let v = vec![Span::raw("ab"), Span::raw("日本"), Span::raw("cd")];
        assert_eq!(text(skip_columns(v.clone(), 0)), "ab日本cd");
        assert_eq!(text(skip_columns(v.clone(), 1)), "b日本cd");
        assert_eq!(text(skip_columns(v.clone(), 2)), "日本cd");
        // Half of 日 is skipped: a space holds its other half.
        assert_eq!(text(skip_columns(v.clone(), 3)), " 本cd");
        assert_eq!(text(skip_columns(v.clone(), 6)), "cd");
        assert_eq!(text(skip_columns(v, 99)), "");
    }

    /// Against the definition, over every width: each cut fits, a text that fits is kept,
    /// and two different texts never read the same when any cut keeps them apart.
    #[test]
    fn distinct_cuts_fit_and_keep_different_texts_apart() {
        let w_of = |s: &str| unicode_width::UnicodeWidthStr::width(s);
        for texts in [
            vec!["treasure_in_a", "treasure_in_b", "¬treasure_in_a", "p"],
            vec!["room_1_has_key", "room_2_has_key", "room_1_has_key"],
            vec!["日本語の式_a", "日本語の式_b"],
        ] {
            let texts: Vec<String> = texts.into_iter().map(String::from).collect();
            for w in 2..20 {
                let cuts = distinct_cuts(&texts, w);
                for (c, t) in cuts.iter().zip(&texts) {
                    assert!(w_of(c) <= w, "{c:?} wider than {w}");
                    if w_of(t) <= w {
                        assert_eq!(c, t);
                    }
                }
                for i in 0..texts.len() {
                    for j in 0..texts.len() {
                        if texts[i] != texts[j] && w >= 4 {
                            assert_ne!(cuts[i], cuts[j], "{texts:?} at {w}");
                        }
                    }
                }
            }
        }
        let cut = distinct_cuts(&["treasure_in_a".into(), "treasure_in_b".into()], 6);
        assert!(cut[0].ends_with('a') && cut[1].ends_with('b'), "{cut:?}");
    }

    #[test]
    fn multi_line_keeps_breaks_only() {
        let l = lines("one\ntwo\r\nthree", Style::new(), Style::new());
        assert_eq!(l.len(), 3);
        let all: String = l
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.content.to_string()))
            .collect();
        assert!(is_clean(&all));
    }
}
