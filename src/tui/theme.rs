//! Palettes: semantic style roles, read from the `themes/*.theme` files, and the per-user
//! config file.
//!
//! Views never name colors; they ask the [`Theme`] for a role (`error`, `retracted`,
//! `running`, ...). A palette file is `key = color` lines (`#rrggbb`, a color name or
//! `ansi:N`); the built-in ones are compiled in from `themes/`, so the binary needs no files
//! at run time. With `NO_COLOR` set (any non-empty value, <https://no-color.org>), every role
//! keeps its modifiers (bold, reversed, crossed out) but loses its colors, so nothing the
//! views distinguish is lost.
//!
//! The config file is `$XDG_CONFIG_HOME/doxascope/config.toml` (or
//! `~/.config/doxascope/config.toml`): `key = value` lines; `theme = "light"` and
//! `mouse = false` are understood. Unknown keys and bad lines are reported as warnings, never
//! fatal.

use std::path::PathBuf;

use ratatui::style::{Color, Modifier, Style};

/// The built-in palettes: name and file contents.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.theme")),
    ("light", include_str!("../../themes/light.theme")),
];

/// A palette: every style the views use, by role.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// The palette name.
    pub name: String,
    /// The syntect theme used for highlighting (`doxascope-dark`, `doxascope-light`).
    pub syntax: String,
    /// Whether colors are used at all (false under `NO_COLOR`).
    pub color: bool,
    /// Plain text.
    pub text: Style,
    /// Secondary text (steps, sources, hints).
    pub dim: Style,
    /// Emphasis (ids, the REPL prompt).
    pub accent: Style,
    /// Unfocused pane borders.
    pub border: Style,
    /// The focused pane's border.
    pub border_focus: Style,
    /// Pane titles.
    pub title: Style,
    /// The selected row.
    pub selection: Style,
    /// Sanitizer markers (stand-ins for control, bidi and invisible characters).
    pub marker: Style,
    /// Success (done steps, matching verdicts).
    pub ok: Style,
    /// Warnings.
    pub warn: Style,
    /// Errors, failures, mismatches.
    pub error: Style,
    /// Retracted beliefs.
    pub retracted: Style,
    /// The running plan step.
    pub running: Style,
    /// Pending plan steps.
    pub pending: Style,
    /// Beliefs in the highlighted minimal support (`w`).
    pub support: Style,
    /// Confidence bars.
    pub bar: Style,
}

/// Parses a color: `#rrggbb`, `ansi:N` or a name ratatui knows (`red`, `lightblue`, ...).
pub fn parse_color(s: &str) -> Option<Color> {
    let s = s.trim().trim_matches('"');
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() != 6 || !hex.is_ascii() {
            return None;
        }
        let v = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        return Some(Color::Rgb(v(0)?, v(2)?, v(4)?));
    }
    if let Some(n) = s.strip_prefix("ansi:") {
        return n.parse::<u8>().ok().map(Color::Indexed);
    }
    s.parse::<Color>().ok()
}

/// Splits `key = value` lines, skipping blanks and `#` comments. Returns the pairs and the
/// 1-based numbers of lines that are neither.
pub fn key_values(text: &str) -> (Vec<(String, String)>, Vec<usize>) {
    let mut pairs = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('[') {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) => {
                let v = v.trim();
                let v = v.split(" #").next().unwrap_or(v).trim();
                pairs.push((k.trim().to_string(), v.trim_matches('"').to_string()));
            }
            None => bad.push(i + 1),
        }
    }
    (pairs, bad)
}

impl Theme {
    /// A built-in palette by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Theme::from_text(n, text).0)
    }

    /// The names of the built-in palettes.
    pub fn names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// Builds a palette from a palette file; returns it with warnings about bad lines.
    pub fn from_text(name: &str, text: &str) -> (Theme, Vec<String>) {
        let mut t = Theme::plain(name);
        t.color = true;
        let (pairs, bad) = key_values(text);
        let mut warnings: Vec<String> = bad
            .into_iter()
            .map(|l| format!("theme {name}: line {l} is not `key = value`"))
            .collect();
        for (k, v) in pairs {
            if k == "syntax" {
                t.syntax = v;
                continue;
            }
            let Some(c) = parse_color(&v) else {
                warnings.push(format!("theme {name}: {k}: not a color: {v}"));
                continue;
            };
            let fg = Style::new().fg(c);
            match k.as_str() {
                "text" => t.text = fg,
                "dim" => t.dim = fg,
                "accent" => t.accent = fg.add_modifier(Modifier::BOLD),
                "border" => t.border = fg,
                "border_focus" => t.border_focus = fg.add_modifier(Modifier::BOLD),
                "title" => t.title = fg.add_modifier(Modifier::BOLD),
                "selection_bg" => t.selection = Style::new().bg(c).add_modifier(Modifier::BOLD),
                "marker" => t.marker = Style::new().fg(c).add_modifier(Modifier::REVERSED),
                "ok" => t.ok = fg,
                "warn" => t.warn = fg.add_modifier(Modifier::BOLD),
                "error" => t.error = fg.add_modifier(Modifier::BOLD),
                "retracted" => t.retracted = fg.add_modifier(Modifier::CROSSED_OUT),
                "running" => t.running = fg.add_modifier(Modifier::BOLD),
                "pending" => t.pending = fg,
                "support" => t.support = fg.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                "bar" => t.bar = fg,
                _ => warnings.push(format!("theme {name}: unknown key {k}")),
            }
        }
        (t, warnings)
    }

    /// The colorless palette (`NO_COLOR`): distinctions by modifiers only.
    pub fn plain(name: &str) -> Theme {
        let s = Style::new();
        Theme {
            name: name.to_string(),
            syntax: String::new(),
            color: false,
            text: s,
            dim: s.add_modifier(Modifier::DIM),
            accent: s.add_modifier(Modifier::BOLD),
            border: s,
            border_focus: s.add_modifier(Modifier::BOLD),
            title: s.add_modifier(Modifier::BOLD),
            selection: s.add_modifier(Modifier::REVERSED),
            marker: s.add_modifier(Modifier::REVERSED),
            ok: s,
            warn: s.add_modifier(Modifier::BOLD),
            error: s.add_modifier(Modifier::BOLD),
            retracted: s.add_modifier(Modifier::CROSSED_OUT | Modifier::DIM),
            running: s.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            pending: s.add_modifier(Modifier::DIM),
            support: s.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            bar: s,
        }
    }

    /// The palette to use: `--theme` over the config file over `dark`; `NO_COLOR` strips
    /// colors. An unknown name is an error listing the known ones.
    pub fn select(cli: Option<&str>, config: &Config, no_color: bool) -> Result<Theme, String> {
        let name = cli.or(config.theme.as_deref()).unwrap_or("dark");
        let Some(t) = Theme::builtin(name) else {
            return Err(format!(
                "unknown theme {:?}; available: {}",
                crate::sanitize::sanitize(name),
                Theme::names().join(", ")
            ));
        };
        if no_color {
            Ok(Theme {
                syntax: t.syntax,
                ..Theme::plain(name)
            })
        } else {
            Ok(t)
        }
    }
}

/// Whether `NO_COLOR` asks for no colors.
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Settings from the per-user config file.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `theme = NAME`.
    pub theme: Option<String>,
    /// `mouse = false`: leave the mouse to the terminal. On by default, as in lnav (the wheel
    /// scrolls, a click selects); `m` releases it to select text.
    pub mouse: bool,
    /// Problems found while reading the file, shown in the status line.
    pub warnings: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: None,
            mouse: true,
            warnings: Vec::new(),
        }
    }
}

impl Config {
    /// Where the config file lives.
    pub fn path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("doxascope").join("config.toml"))
    }

    /// Reads the config file; a missing file is the default config.
    pub fn load() -> Config {
        match Config::path().map(std::fs::read_to_string) {
            Some(Ok(text)) => Config::parse(&text),
            _ => Config::default(),
        }
    }

    /// Parses config text.
    pub fn parse(text: &str) -> Config {
        let mut c = Config::default();
        let (pairs, bad) = key_values(text);
        for l in bad {
            c.warnings
                .push(format!("config: line {l} is not `key = value`"));
        }
        for (k, v) in pairs {
            match k.as_str() {
                "theme" => c.theme = Some(v),
                "mouse" => match v.as_str() {
                    "true" => c.mouse = true,
                    "false" => c.mouse = false,
                    _ => c
                        .warnings
                        .push("config: mouse must be true or false".to_string()),
                },
                _ => c.warnings.push(format!(
                    "config: unknown key {}",
                    crate::sanitize::sanitize(&k)
                )),
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_palettes_parse_without_warnings() {
        for (name, text) in BUILTIN {
            let (t, w) = Theme::from_text(name, text);
            assert!(w.is_empty(), "{name}: {w:?}");
            assert!(t.color);
            assert!(t.error.fg.is_some());
            assert!(t.syntax.starts_with("doxascope-"));
        }
    }

    #[test]
    fn colors_parse() {
        assert_eq!(parse_color("#0a0b0c"), Some(Color::Rgb(10, 11, 12)));
        assert_eq!(parse_color("ansi:33"), Some(Color::Indexed(33)));
        assert_eq!(parse_color("red"), Some(Color::Red));
        assert_eq!(parse_color("#12"), None);
        assert_eq!(parse_color("#ééé"), None);
    }

    #[test]
    fn no_color_keeps_modifiers_drops_colors() {
        let t = Theme::select(Some("light"), &Config::default(), true).unwrap();
        assert!(!t.color);
        for s in [t.text, t.error, t.retracted, t.selection, t.marker] {
            assert_eq!(s.fg, None);
            assert_eq!(s.bg, None);
        }
        assert!(t.retracted.add_modifier.contains(Modifier::CROSSED_OUT));
    }

    #[test]
    fn cli_wins_over_config_and_unknown_names_are_errors() {
        let cfg = Config::parse("theme = \"light\"\nmouse = true\nbogus = 1\nnot a line\n");
        assert_eq!(cfg.theme.as_deref(), Some("light"));
        assert!(cfg.mouse);
        assert_eq!(cfg.warnings.len(), 2);
        assert_eq!(Theme::select(None, &cfg, false).unwrap().name, "light");
        assert_eq!(
            Theme::select(Some("dark"), &cfg, false).unwrap().name,
            "dark"
        );
        let e = Theme::select(Some("neon"), &cfg, false).unwrap_err();
        assert!(e.contains("dark, light"), "{e}");
    }
}
