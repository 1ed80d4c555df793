//! A bad line is shown by its content, not only its position: the reader keeps the start of
//! every line it could not read as an event (bounded, at a character boundary, bytes as
//! read), and the TUI shows it escaped in the timeline row and the detail pane.

use doxascope::trace::{EXCERPT_BYTES, Item, Problem, Reader, ReaderConfig};
use doxascope::tui::app::{App, Pane};
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::text::is_clean;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;

fn problems(bytes: &[u8], cfg: ReaderConfig) -> Vec<Problem> {
    let mut r = Reader::new("t.jsonl", cfg);
    let mut items = Vec::new();
    r.feed(bytes, &mut items);
    r.finish(&mut items);
    items
        .into_iter()
        .filter_map(|i| match i {
            Item::Problem(p) => Some(p),
            Item::Event(_) => None,
        })
        .collect()
}

#[test]
fn a_bad_line_keeps_its_start_as_read() {
    let long = format!("{{\"kind\":\"log\",\"message\":\"{}é\"", "x".repeat(200));
    let input = format!(
        "not json at all\n{long}\n{{\"kind\":\"log\",\"x\":\"\\u001b\u{1b}[2J\"\n{{\"kind\":\"announce\"}}\n"
    );
    let mut bytes = input.into_bytes();
    bytes.extend_from_slice(b"{\"kind\":\"log\",\"message\":\"\xff\xfe\"}\n");
    let ps = problems(&bytes, ReaderConfig::default());
    assert_eq!(ps.len(), 5, "{ps:#?}");
    let ex = |i: usize| ps[i].excerpt.clone().expect("an excerpt");
    assert_eq!(&*ex(0).bytes, b"not json at all");
    assert_eq!(ex(0).len, 15);
    // Long lines: the first EXCERPT_BYTES bytes, and the whole length.
    assert_eq!(ex(1).bytes.len(), EXCERPT_BYTES);
    assert_eq!(ex(1).len, long.len() as u64);
    assert!(long.as_bytes().starts_with(&ex(1).bytes));
    // Escapes are kept as read (the screen escapes them).
    assert!(ex(2).bytes.contains(&0x1b));
    // A line that parses but is not a valid event (a field problem) has its excerpt too.
    assert_eq!(&*ex(3).bytes, b"{\"kind\":\"announce\"}");
    // Invalid UTF-8 is kept as bytes.
    assert!(ex(4).bytes.ends_with(b"\xff\xfe\"}"));
}

#[test]
fn the_cut_never_splits_a_character_and_an_overlong_line_keeps_only_its_length() {
    for pad in 0..4 {
        let line = format!("{}{}", "a".repeat(EXCERPT_BYTES - 2 + pad), "日本語");
        let ps = problems(format!("{line}\n").as_bytes(), ReaderConfig::default());
        let e = ps[0].excerpt.clone().unwrap();
        assert!(
            std::str::from_utf8(&e.bytes).is_ok(),
            "pad {pad}: {:?}",
            e.bytes
        );
        assert!(e.bytes.len() <= EXCERPT_BYTES && e.bytes.len() + 3 > EXCERPT_BYTES);
    }
    let ps = problems(
        format!("{}\n", "y".repeat(100)).as_bytes(),
        ReaderConfig { max_line_bytes: 50 },
    );
    let e = ps[0].excerpt.clone().unwrap();
    assert!(e.bytes.is_empty());
    assert_eq!(e.len, 100);
}

#[test]
fn the_timeline_and_the_detail_pane_show_a_bad_lines_content_escaped() {
    highlight::load_now();
    let bytes = b"{\"kind\":\"log\",\"message\":\"ok\"}\n{\"kind\":\"announce\",\"formula\":\"rain\" \"wet\"} \x1b]0;PWNED\x07\xff\n";
    let mut app = App::new(
        Store::from_bytes("t.jsonl", bytes),
        Theme::builtin("dark").unwrap(),
    );
    app.goto(1);
    app.focus = Pane::Timeline;
    app.detail_from = Pane::Timeline;
    app.zoom = true;
    let s = render_text(&mut app, 200, 20);
    assert!(is_clean(&s), "{s}");
    assert!(
        s.contains(r#"⟫ {"kind":"announce","formula":"rain" "wet"} ␛]0;PWNED␇\xFF"#),
        "{s}"
    );
    app.focus = Pane::Detail;
    let s = render_text(&mut app, 200, 20);
    assert!(is_clean(&s), "{s}");
    assert!(
        s.contains(r#"line       {"kind":"announce","formula":"rain" "wet"} ␛]0;PWNED␇\xFF"#),
        "{s}"
    );
}
