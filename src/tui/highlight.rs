//! Syntax highlighting with syntect: the raw event JSON in the detail pane and formulas.
//!
//! The syntax sets (syntect's bundled syntaxes, and `themes/formula.sublime-syntax`) and the
//! two `.tmTheme` files are compiled in and loaded once, on a background thread started by
//! [`warm_up`] before the first frame; until they are ready the views draw plain text, so
//! loading never delays the first frame. Highlighting costs about 20 µs a line, so callers
//! highlight only what is visible and cache the result ([`Cache`]).
//!
//! Highlighted pieces are still untrusted text: they go through [`super::text::spans`].

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme as SynTheme, ThemeSet};
use syntect::parsing::{SyntaxDefinition, SyntaxSet};

use super::text;

const FORMULA_SYNTAX: &str = include_str!("../../themes/formula.sublime-syntax");
const DARK: &str = include_str!("../../themes/doxascope-dark.tmTheme");
const LIGHT: &str = include_str!("../../themes/doxascope-light.tmTheme");

/// The loaded syntaxes and themes.
pub struct Assets {
    /// syntect's bundled syntaxes (JSON is the one used). Kept as loaded: adding a syntax
    /// to this set would rebuild it, which re-serializes and compresses every bundled
    /// syntax (over a second of CPU, taken from the load of the file being opened).
    bundled: SyntaxSet,
    /// The formula syntax alone.
    formula: SyntaxSet,
    themes: HashMap<String, SynTheme>,
}

impl Assets {
    /// The syntax of `lang` with the set it belongs to.
    fn syntax(&self, lang: Lang) -> Option<(&SyntaxSet, &syntect::parsing::SyntaxReference)> {
        match lang {
            Lang::Json => Some((
                &self.bundled,
                self.bundled.find_syntax_by_extension("json")?,
            )),
            Lang::Formula => Some((&self.formula, self.formula.find_syntax_by_extension("dxf")?)),
        }
    }
}

static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();

fn load() -> Option<Assets> {
    let bundled = SyntaxSet::load_defaults_newlines();
    let mut builder = syntect::parsing::SyntaxSetBuilder::new();
    // The formula syntax is compiled in; failing to load it would be a build defect, so the
    // JSON highlighting still works without it.
    if let Ok(def) = SyntaxDefinition::load_from_str(FORMULA_SYNTAX, true, None) {
        builder.add(def);
    }
    let formula = builder.build();
    let mut themes = HashMap::new();
    for (name, src) in [("doxascope-dark", DARK), ("doxascope-light", LIGHT)] {
        if let Ok(t) = ThemeSet::load_from_reader(&mut Cursor::new(src.as_bytes())) {
            themes.insert(name.to_string(), t);
        }
    }
    let assets = Assets {
        bundled,
        formula,
        themes,
    };
    warm(&assets);
    Some(assets)
}

/// Highlights a sample of each language once: syntect compiles a syntax's regexes on first
/// use (tens of milliseconds for JSON), and that must happen here, off the UI thread, not
/// in the first frame that shows a raw event or a formula. The compiled regexes live in the
/// shared syntax set.
fn warm(a: &Assets) {
    let samples = [
        (
            Lang::Json,
            "{\"kind\":\"announce\",\"seq\":1,\"id\":\"b1\",\"formula\":\"p -> q\",\"confidence\":0.9,\"ok\":true,\"x\":null,\"l\":[1,2]}\n",
        ),
        (Lang::Formula, "forall x. (p(x) & !q) -> (r | s) <-> t\n"),
    ];
    for (lang, src) in samples {
        if let (Some((set, syntax)), Some(th)) = (a.syntax(lang), a.themes.values().next()) {
            let mut h = HighlightLines::new(syntax, th);
            for line in src.split_inclusive('\n') {
                let _ = h.highlight_line(line, set);
            }
        }
    }
}

/// Starts loading the assets on a background thread (idempotent).
pub fn warm_up() {
    if ASSETS.get().is_none() {
        let _ = std::thread::Builder::new()
            .name("doxascope-syntax".into())
            .spawn(|| {
                let _ = ASSETS.get_or_init(load);
            });
    }
}

/// Loads the assets on the calling thread (tests, benchmarks).
pub fn load_now() {
    let _ = ASSETS.get_or_init(load);
}

/// The assets, if loaded.
pub fn assets() -> Option<&'static Assets> {
    ASSETS.get().and_then(Option::as_ref)
}

/// Which language a text is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// JSON (the raw event).
    Json,
    /// The formula language.
    Formula,
}

fn to_style(s: syntect::highlighting::Style) -> Style {
    let mut out = Style::new().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    out
}

/// Highlights `src` as lines of spans, or `None` while the assets are loading or when the
/// theme is unknown (the caller draws plain text). Every piece is sanitized.
pub fn highlight(src: &str, lang: Lang, theme: &str, marker: Style) -> Option<Vec<Line<'static>>> {
    let a = assets()?;
    let (set, syntax) = a.syntax(lang)?;
    let th = a.themes.get(theme)?;
    let mut h = HighlightLines::new(syntax, th);
    let mut out = Vec::new();
    for line in src.split_inclusive('\n') {
        let pieces = h.highlight_line(line, set).ok()?;
        let mut spans: Vec<Span<'static>> = Vec::new();
        for (st, piece) in pieces {
            let piece = piece.strip_suffix('\n').unwrap_or(piece);
            if piece.is_empty() {
                continue;
            }
            spans.extend(text::spans(piece, to_style(st), marker));
        }
        out.push(Line::from(spans));
    }
    Some(out)
}

/// A bounded cache of highlighted texts, keyed by the caller (event position, formula).
/// It fills itself while a frame draws, so it takes `&self` (drawing only reads the app).
#[derive(Debug, Default)]
pub struct Cache {
    map: std::cell::RefCell<HashMap<(Lang, String), Vec<Line<'static>>>>,
}

/// Entries kept before the cache is cleared (a simple bound: the visible set is far smaller).
const CACHE_CAP: usize = 4096;

impl Cache {
    /// The highlighted lines of `src`, computed once; `None` while assets load.
    pub fn get(
        &self,
        lang: Lang,
        src: &str,
        theme: &str,
        marker: Style,
    ) -> Option<Vec<Line<'static>>> {
        let key = (lang, src.to_string());
        let mut map = self.map.borrow_mut();
        if !map.contains_key(&key) {
            let lines = highlight(src, lang, theme, marker)?;
            if map.len() >= CACHE_CAP {
                map.clear();
            }
            map.insert(key.clone(), lines);
        }
        map.get(&key).cloned()
    }

    /// Drops everything (after a theme change).
    pub fn clear(&self) {
        self.map.borrow_mut().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_and_json_highlight_with_distinct_colors() {
        load_now();
        let a = assets().expect("assets load");
        assert!(a.syntax(Lang::Formula).is_some());
        assert!(a.syntax(Lang::Json).is_some());
        assert_eq!(a.themes.len(), 2);
        let l = highlight(
            "¬p ∧ Older(alice, bob)",
            Lang::Formula,
            "doxascope-dark",
            Style::new(),
        )
        .unwrap();
        let styles: std::collections::HashSet<_> = l[0].spans.iter().map(|s| s.style.fg).collect();
        assert!(styles.len() >= 3, "{l:?}");
        let j = highlight(
            "{\"kind\": \"x\\u001b]0;T\"}",
            Lang::Json,
            "doxascope-light",
            Style::new(),
        )
        .unwrap();
        let s: String = j[0].spans.iter().map(|s| s.content.to_string()).collect();
        assert!(s.contains("kind"));
    }

    #[test]
    fn raw_escape_in_highlighted_text_is_marked() {
        load_now();
        let m = Style::new().add_modifier(Modifier::REVERSED);
        let l = highlight("{\"a\": \"x\u{1b}[2Jy\"}", Lang::Json, "doxascope-dark", m).unwrap();
        let s: String = l[0].spans.iter().map(|s| s.content.to_string()).collect();
        assert!(text::is_clean(&s), "{s:?}");
        assert!(l[0].spans.iter().any(|s| s.style == m));
    }
}
