//! The display sanitizer: the one function every piece of untrusted text passes through before
//! it reaches a terminal, whether as an error message on stderr or as a TUI span.
//!
//! Traces come from agents, and agents copy text from tools and web pages. A string in a trace
//! may carry escape sequences (clearing the screen, setting the window title, writing the
//! clipboard), carriage returns that overwrite what was printed, bidi overrides that reorder
//! what the reader sees, or invisible characters that hide instructions. None of it may reach
//! the terminal raw, and none of it may silently disappear either: each such character is
//! replaced by a visible marker, so the reader sees that it was there.
//!
//! The raw text is never modified; sanitizing happens only on the way to the screen.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
use unicode_script::{Script, UnicodeScript};
use unicode_security::MixedScript;

/// The default cap on the number of bytes of one field shown in a single-line view.
pub const DEFAULT_MAX_BYTES: usize = 4096;

/// How many combining marks in a row are kept before the rest are summarized (`…+N`).
const MAX_COMBINING_RUN: usize = 8;

/// A piece of sanitized text: either plain printable text or a visible marker standing for a
/// character that must not reach the terminal. Views style markers distinctly so that a marker
/// cannot be confused with the same characters typed literally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Printable text, safe to draw as is.
    Text(Cow<'a, str>),
    /// A visible stand-in for a control, format, bidi or invisible character.
    Marker(String),
}

/// Options for [`segments`].
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Keep line feeds as line breaks (multi-line detail views); otherwise show `⏎`.
    pub keep_newlines: bool,
    /// Show at most this many bytes of the input, then `… (N bytes more)`.
    pub max_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            keep_newlines: false,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// What to do with one character.
enum Class {
    Keep,
    Combining,
    Marker(String),
}

fn classify(c: char, keep_newlines: bool) -> Class {
    let u = c as u32;
    match c {
        // Printable ASCII before the category lookup, which it always passes: most trace
        // text is ASCII, and the lookup (a search of Unicode's tables) was a tenth of an
        // audit's time, spent on reports' messages.
        ' '..='~' => Class::Keep,
        '\n' if keep_newlines => Class::Keep,
        '\n' => Class::Marker("⏎".into()),
        '\t' => Class::Marker("→".into()),
        // C0 controls become their control pictures (U+2400 + n), DEL becomes ␡.
        '\u{0}'..='\u{1f}' => Class::Marker(char::from_u32(0x2400 + u).unwrap_or('?').to_string()),
        '\u{7f}' => Class::Marker("␡".into()),
        // C1 controls (CSI U+009B among them) are as dangerous as ESC on some terminals.
        '\u{80}'..='\u{9f}' => Class::Marker(format!("\\u{{{u:x}}}")),
        // Bidi embeddings, overrides, isolates and marks reorder what the reader sees.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            Class::Marker(format!("⟨U+{u:04X}⟩"))
        }
        // Zero-width and other invisible format characters, line/paragraph separators,
        // Hangul fillers, interlinear annotation, soft hyphen, the BOM.
        '\u{200b}'..='\u{200d}'
        | '\u{2060}'..='\u{2064}'
        | '\u{206a}'..='\u{206f}'
        | '\u{feff}'
        | '\u{ad}'
        | '\u{34f}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{17b4}'
        | '\u{17b5}'
        | '\u{180e}'
        | '\u{3164}'
        | '\u{ffa0}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{2028}'
        | '\u{2029}' => Class::Marker(format!("⟨U+{u:04X}⟩")),
        // Tag characters smuggle hidden ASCII; show what they spell.
        '\u{e0000}'..='\u{e007f}' => {
            let shown = char::from_u32(u - 0xe0000)
                .filter(|c| c.is_ascii_graphic() || *c == ' ')
                .map(|c| format!("⟨tag:{c}⟩"))
                .unwrap_or_else(|| format!("⟨U+{u:04X}⟩"));
            Class::Marker(shown)
        }
        // Private use and noncharacters: no meaning a reader could rely on.
        '\u{e000}'..='\u{f8ff}'
        | '\u{f0000}'..='\u{10ffff}'
        | '\u{fdd0}'..='\u{fdef}'
        | '\u{fffe}'
        | '\u{ffff}' => Class::Marker(format!("⟨U+{u:04X}⟩")),
        // Variation selectors change how the character before them is drawn (text or emoji
        // form, a glyph variant) while being invisible themselves: an id with one renders
        // like an id without.
        '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' | '\u{180b}'..='\u{180f}' => {
            Class::Marker(format!("⟨U+{u:04X}⟩"))
        }
        // Skin-tone modifiers: a terminal draws one after an emoji as a separate glyph, as a
        // combined one, or as one after some bases only, and ratatui's width table cannot
        // know which; a wrong guess leaves stale glyphs behind on the next frame. The text
        // form has one width everywhere.
        '\u{1f3fb}'..='\u{1f3ff}' => Class::Marker(format!(
            "⟨tone-{}⟩",
            ["1-2", "3", "4", "5", "6"][(u - 0x1f3fb) as usize]
        )),
        // Regional indicators: a pair is a flag, drawn one or two cells wide by terminals
        // that know the pair, and two letter boxes by those that do not. Shown as its
        // letters (pairs are joined by `segments`).
        '\u{1f1e6}'..='\u{1f1ff}' => {
            Class::Marker(format!("⟨flag:{}⟩", char::from(b'A' + (u - 0x1f1e6) as u8)))
        }
        _ => match c.general_category() {
            // Every format character (Cf), by category rather than by a list that misses
            // new ones (U+0600, U+06DD, U+070F, U+13430, U+1D173 ...), and every other
            // control or unassigned code point.
            GeneralCategory::Format
            | GeneralCategory::Control
            | GeneralCategory::Surrogate
            | GeneralCategory::Unassigned
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator => Class::Marker(format!("⟨U+{u:04X}⟩")),
            // Combining marks of every script (a flood of them, "Zalgo", is capped so that
            // one grapheme cannot grow without bound).
            GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark => Class::Combining,
            _ => Class::Keep,
        },
    }
}

/// Whether `c` belongs to a word: letters, digits, marks and `_` (an identifier's characters,
/// in any script).
fn is_word_char(c: char) -> bool {
    c == '_'
        || c.is_alphanumeric()
        || matches!(
            c.general_category(),
            GeneralCategory::NonspacingMark
                | GeneralCategory::SpacingMark
                | GeneralCategory::EnclosingMark
        )
}

/// The words of `s` (maximal runs of letters, digits, marks and `_`) that hold a non-ASCII
/// character, as byte ranges. ASCII-only text has none, cheaply.
pub fn non_ascii_words(s: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    if s.is_ascii() {
        return out;
    }
    let mut start = None;
    let mut ascii = true;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        // A character shown as a marker ends the word: the halves are judged apart, as the
        // reader sees them.
        if i < s.len() && is_word_char(c) && !matches!(classify(c, false), Class::Marker(_)) {
            if start.is_none() {
                start = Some(i);
                ascii = true;
            }
            ascii &= c.is_ascii();
        } else if let Some(b) = start.take()
            && !ascii
        {
            out.push(b..i);
        }
    }
    out
}

/// The scripts a word mixes, in order of first appearance, when it mixes scripts the way a
/// look-alike does (Unicode TS #39's resolved script set is empty: `аdmin` with a Cyrillic
/// `а`); `None` for a word of one script, including the combinations one writing system uses
/// (Japanese Han, Hiragana and Katakana). Browsers flag such domain names for the same reason.
pub fn mixed_scripts(word: &str) -> Option<Vec<&'static str>> {
    if word.is_ascii() || word.is_single_script() {
        return None;
    }
    let mut scripts: Vec<&'static str> = Vec::new();
    for c in word.chars() {
        let sc = c.script();
        if matches!(sc, Script::Common | Script::Inherited | Script::Unknown) {
            continue;
        }
        let name = sc.full_name();
        if !scripts.contains(&name) {
            scripts.push(name);
        }
    }
    Some(scripts)
}

/// The marker shown after a mixed-script word.
fn mixed_marker(scripts: &[&str]) -> String {
    format!("⟨mixed:{}⟩", scripts.join("+"))
}

fn is_regional(c: char) -> bool {
    ('\u{1f1e6}'..='\u{1f1ff}').contains(&c)
}

/// Splits untrusted text into printable runs and visible markers.
pub fn segments(s: &str, opts: Options) -> Vec<Segment<'_>> {
    let (shown, rest) = if s.len() > opts.max_bytes {
        let mut end = opts.max_bytes;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        (&s[..end], s.len() - end)
    } else {
        (s, 0)
    };
    // Printable ASCII (and line feeds kept) is one run as it is: a test of its bytes, not a
    // walk of its characters, for the text most traces hold.
    let plain = |b: &u8| matches!(b, b' '..=b'~') || (*b == b'\n' && opts.keep_newlines);
    let mut out = if shown.as_bytes().iter().all(plain) {
        let mut out = Vec::with_capacity(2);
        if !shown.is_empty() {
            out.push(Segment::Text(Cow::Borrowed(shown)));
        }
        out
    } else {
        segments_by_char(shown, opts)
    };
    if rest > 0 {
        out.push(Segment::Marker(format!("… ({rest} bytes more)")));
    }
    out
}

/// [`segments`] of `shown` (already cut to its cap), character by character.
fn segments_by_char(shown: &str, opts: Options) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut run_start = 0;
    let mut combining = 0usize;
    let mut dropped_combining = 0usize;
    let flush_dropped = |out: &mut Vec<Segment<'_>>, n: &mut usize| {
        if *n > 0 {
            out.push(Segment::Marker(format!("…+{n}")));
            *n = 0;
        }
    };
    // Words mixing scripts get a marker after them (`аdmin⟨mixed:Cyrillic+Latin⟩`), so a
    // look-alike never renders exactly like what it imitates.
    let mut mixed = non_ascii_words(shown)
        .into_iter()
        .filter_map(|r| mixed_scripts(&shown[r.clone()]).map(|sc| (r.end, mixed_marker(&sc))))
        .peekable();
    let mut chars = shown.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if let Some((_, m)) = mixed.next_if(|(end, _)| *end == i) {
            if dropped_combining > 0 {
                flush_dropped(&mut out, &mut dropped_combining);
            } else if run_start < i {
                out.push(Segment::Text(Cow::Borrowed(&shown[run_start..i])));
            }
            combining = 0;
            out.push(Segment::Marker(m));
            run_start = i;
        }
        let mut class = classify(c, opts.keep_newlines);
        let mut width = c.len_utf8();
        // A pair of regional indicators is one flag: `⟨flag:US⟩`, not two markers.
        if let (Class::Marker(m), Some(&(_, next))) = (&mut class, chars.peek())
            && is_regional(c)
            && is_regional(next)
        {
            m.insert(
                m.len() - "⟩".len(),
                char::from(b'A' + (next as u32 - 0x1f1e6) as u8),
            );
            width += next.len_utf8();
            chars.next();
        }
        match class {
            Class::Keep => {
                if dropped_combining > 0 {
                    run_start = i;
                    flush_dropped(&mut out, &mut dropped_combining);
                }
                combining = 0;
            }
            Class::Combining => {
                combining += 1;
                if combining > MAX_COMBINING_RUN {
                    if dropped_combining == 0 && run_start < i {
                        out.push(Segment::Text(Cow::Borrowed(&shown[run_start..i])));
                    }
                    dropped_combining += 1;
                    run_start = i + c.len_utf8();
                } else if dropped_combining > 0 {
                    run_start = i;
                }
            }
            Class::Marker(m) => {
                if run_start < i && dropped_combining == 0 {
                    out.push(Segment::Text(Cow::Borrowed(&shown[run_start..i])));
                }
                flush_dropped(&mut out, &mut dropped_combining);
                combining = 0;
                out.push(Segment::Marker(m));
                run_start = i + width;
            }
        }
    }
    if dropped_combining > 0 {
        flush_dropped(&mut out, &mut dropped_combining);
    } else if run_start < shown.len() {
        out.push(Segment::Text(Cow::Borrowed(&shown[run_start..])));
    }
    if let Some((_, m)) = mixed.next() {
        out.push(Segment::Marker(m));
    }
    out
}

/// Sanitizes untrusted text for a single-line view, joining the segments into one string.
pub fn sanitize(s: &str) -> String {
    sanitize_with(s, Options::default())
}

/// Sanitizes untrusted text with the given options, joining the segments into one string.
pub fn sanitize_with(s: &str, opts: Options) -> String {
    let mut out = String::with_capacity(s.len().min(opts.max_bytes) + 8);
    for seg in segments(s, opts) {
        match seg {
            Segment::Text(t) => out.push_str(&t),
            Segment::Marker(m) => out.push_str(&m),
        }
    }
    out
}

/// Sanitizes bytes that may not be valid UTF-8: valid text goes through [`sanitize`], each
/// invalid byte is shown as `\xNN`.
pub fn sanitize_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(&sanitize(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing the sanitizer emits may be a control character or a bidi/invisible character,
    /// whatever the input: that is the property the terminal's safety rests on.
    fn assert_safe(out: &str) {
        for c in out.chars() {
            let u = c as u32;
            assert!(
                !(u < 0x20 || (0x7f..=0x9f).contains(&u)),
                "control {u:#x} in {out:?}"
            );
            assert!(
                !matches!(classify(c, false), Class::Marker(_)),
                "unsafe char U+{u:04X} in {out:?}"
            );
        }
    }

    #[test]
    fn escape_sequences_become_visible() {
        let out = sanitize("\u{1b}[2J\u{1b}]0;pwned\u{7}FAKE OK");
        assert_eq!(out, "␛[2J␛]0;pwned␇FAKE OK");
        assert_safe(&out);
    }

    #[test]
    fn c1_and_overwrite_tricks_are_visible() {
        assert_eq!(sanitize("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(sanitize("FAIL\rOK"), "FAIL␍OK");
        assert_eq!(sanitize("A\u{8}B"), "A␈B");
    }

    #[test]
    fn bidi_and_invisible_are_marked() {
        assert_eq!(sanitize("rm \u{202e}txt.exe"), "rm ⟨U+202E⟩txt.exe");
        assert_eq!(sanitize("a\u{200b}b"), "a⟨U+200B⟩b");
        assert_eq!(sanitize("\u{e0068}\u{e0069}"), "⟨tag:h⟩⟨tag:i⟩");
    }

    #[test]
    fn every_format_character_and_variation_selector_is_marked() {
        // Format characters (Cf) outside any hand list, by category.
        for c in [
            '\u{600}',
            '\u{6dd}',
            '\u{70f}',
            '\u{13430}',
            '\u{1d173}',
            '\u{fff9}',
        ] {
            let out = sanitize(&format!("id{c}x"));
            assert_eq!(out, format!("id⟨U+{:04X}⟩x", c as u32));
        }
        // Variation selectors, standard and supplementary.
        for c in ['\u{fe00}', '\u{fe0f}', '\u{e0100}', '\u{e01ef}', '\u{180b}'] {
            let out = sanitize(&format!("a{c}"));
            assert_eq!(out, format!("a⟨U+{:04X}⟩", c as u32), "{c:?}");
        }
        // Every Cf code point of the Basic and supplementary planes is marked.
        for u in 0..0x20000u32 {
            let Some(c) = char::from_u32(u) else { continue };
            if c.general_category() == GeneralCategory::Format {
                assert!(matches!(classify(c, false), Class::Marker(_)), "U+{u:04X}");
            }
        }
    }

    #[test]
    fn combining_marks_of_every_script_are_capped() {
        // Thai (U+0E49) is outside the old list of combining blocks.
        let s = format!("ก{}", "\u{e49}".repeat(50_000));
        let out = sanitize(&s);
        // The run is capped at 8 marks; the field itself is cut at its byte cap.
        assert!(
            out.starts_with(&format!("ก{}…+", "\u{e49}".repeat(8))),
            "{out}"
        );
        assert_eq!(out.chars().filter(|&c| c == '\u{e49}').count(), 8);
        assert!(out.len() < 100, "{out}");
        // Devanagari, Hebrew points, enclosing marks.
        for m in ['\u{94d}', '\u{5c7}', '\u{20dd}'] {
            let out = sanitize(&format!("x{}", m.to_string().repeat(20)));
            // (A Latin base with Devanagari or Hebrew marks also mixes scripts, and says so.)
            assert!(out.contains("…+12"), "{m:?}: {out}");
        }
    }

    #[test]
    fn emoji_sequences_of_uncertain_width_are_shown_as_text() {
        // The case: a skin tone on a non-base emoji and a flag.
        assert_eq!(sanitize("🥲🏻 and 🇺🇸"), "🥲⟨tone-1-2⟩ and ⟨flag:US⟩");
        // A lone indicator, three in a row (a pair and a lone one), a tone on a base.
        assert_eq!(sanitize("🇺x"), "⟨flag:U⟩x");
        assert_eq!(sanitize("🇺🇸🇫"), "⟨flag:US⟩⟨flag:F⟩");
        assert_eq!(sanitize("👍🏿"), "👍⟨tone-6⟩");
        // Nothing of either range reaches the output, whatever surrounds it.
        for s in ["🇦🇧🇨🇩🇪", "a🏻🏼b", "\u{1b}🇺🇸\u{200d}🏽"] {
            let out = sanitize(s);
            assert!(
                !out.chars()
                    .any(|c| is_regional(c) || ('\u{1f3fb}'..='\u{1f3ff}').contains(&c)),
                "{out}"
            );
        }
    }

    #[test]
    fn mixed_script_words_are_marked() {
        // The case: a Cyrillic а inside a Latin word.
        assert_eq!(sanitize("аdmin"), "аdmin⟨mixed:Cyrillic+Latin⟩");
        assert_eq!(
            sanitize("user аdmin logged"),
            "user аdmin⟨mixed:Cyrillic+Latin⟩ logged"
        );
        assert_eq!(
            sanitize("Older(аlice,bob)"),
            "Older(аlice⟨mixed:Cyrillic+Latin⟩,bob)"
        );
        // Greek omicron in a Latin identifier, with a combining mark after it.
        assert_eq!(sanitize("fοo\u{301}_x"), "fοo\u{301}_x⟨mixed:Latin+Greek⟩");
        // One script per word is not marked, however many words and scripts the text holds;
        // nor is Japanese, whose writing mixes Han, Hiragana and Katakana in one word.
        for s in [
            "Москва is Moscow",
            "admin",
            "日本語のテキスト",
            "naïve café",
            "x_1 ∧ αβ",
        ] {
            assert_eq!(sanitize(s), s);
        }
        // A marker inside a word ends it: the halves are judged apart.
        assert_eq!(sanitize("ad\u{200b}мин"), "ad⟨U+200B⟩мин");
    }

    #[test]
    fn printable_unicode_is_kept() {
        assert_eq!(
            sanitize("∀x. ¬RevealAddress(x) 日本 🙂 é"),
            "∀x. ¬RevealAddress(x) 日本 🙂 é"
        );
    }

    #[test]
    fn combining_flood_is_capped() {
        let s = format!("a{}b", "\u{301}".repeat(1000));
        let out = sanitize(&s);
        assert_eq!(out, format!("a{}…+992b", "\u{301}".repeat(8)));
    }

    #[test]
    fn long_fields_are_truncated_on_a_char_boundary() {
        let s = "é".repeat(5000);
        let out = sanitize(&s);
        assert!(out.ends_with("bytes more)"));
        assert!(out.len() < 4200);
    }

    #[test]
    fn newlines_kept_only_when_asked() {
        assert_eq!(sanitize("a\nb"), "a⏎b");
        let opts = Options {
            keep_newlines: true,
            ..Options::default()
        };
        assert_eq!(sanitize_with("a\nb", opts), "a\nb");
    }

    #[test]
    fn invalid_utf8_bytes_are_shown_as_hex() {
        assert_eq!(sanitize_bytes(b"ok\xff\x1b"), "ok\\xFF␛");
    }

    /// The ASCII shortcuts agree with the general rule: no printable ASCII character is
    /// one Unicode's categories would mark or count as combining.
    #[test]
    fn printable_ascii_is_kept_by_its_category_too() {
        for c in ' '..='~' {
            assert!(
                !matches!(
                    c.general_category(),
                    GeneralCategory::Format
                        | GeneralCategory::Control
                        | GeneralCategory::Surrogate
                        | GeneralCategory::Unassigned
                        | GeneralCategory::LineSeparator
                        | GeneralCategory::ParagraphSeparator
                        | GeneralCategory::NonspacingMark
                        | GeneralCategory::EnclosingMark
                ),
                "{c:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn output_is_always_safe(s in "\\PC*|[\\x00-\\x{20}\\x{7f}-\\x{a0}\\x{200b}-\\x{206f}]*") {
            assert_safe(&sanitize(&s));
        }

        /// The shortcut for plain ASCII gives what the walk of its characters gives, up to
        /// and past the cap, with line feeds kept or not; mostly plain text with an
        /// occasional control or non-ASCII character, so that both ways are taken.
        #[test]
        fn plain_ascii_shortcut_matches_the_walk(
            s in "[ -~\\n]{0,40}|[ -~]{0,30}[\\x00-\\x{1f}\\x{7f}é\\x{202e}][ -~]{0,10}",
            keep_newlines: bool,
            max_bytes in 0usize..48,
        ) {
            let opts = Options { keep_newlines, max_bytes };
            let mut end = max_bytes.min(s.len());
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            let mut walked = segments_by_char(&s[..end], opts);
            if end < s.len() {
                walked.push(Segment::Marker(format!("… ({} bytes more)", s.len() - end)));
            }
            proptest::prop_assert_eq!(segments(&s, opts), walked);
        }
    }
}
