//! Unknown fields are kept as the text they were written with (`docs/trace-format.md`,
//! "Unknown fields are kept"): exact numbers, and a cost of their own bytes, never a tree of
//! nodes per element (C45 of `shared/research/reliability-security.md`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use doxascope::trace::event::{Event, pretty_json};
use doxascope::trace::{Item, Reader, ReaderConfig};

/// Counts the bytes live on the heap and their peak, so that the test can say how much a
/// parsed trace holds without timing anything.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

/// The counters see every thread: the tests of this file run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn parse(text: &str) -> Vec<Event> {
    let mut r = Reader::new("t.jsonl", ReaderConfig::default());
    let mut out = Vec::new();
    r.feed(text.as_bytes(), &mut out);
    r.finish(&mut out);
    out.into_iter()
        .map(|i| match i {
            Item::Event(e) => e,
            Item::Problem(p) => panic!("unexpected problem: {p:?}"),
        })
        .collect()
}

/// A number no `f64` holds, a float written with a trailing zero and an object with its own
/// key order and spacing come back exactly as written: from the field, from the line written
/// back, and in the detail pane's layout. Both decoders (the fast path, and serde_json for a
/// line the fast path declines: here a `meta` nested deeper than it takes) agree.
#[test]
fn unknown_fields_are_kept_verbatim() {
    let _one = serial();
    let deep = format!("{}1{}", "[".repeat(80), "]".repeat(80));
    for meta in ["{}".to_string(), deep] {
        let line = format!(
            r#"{{"kind":"session","meta":{meta},"x_id":123456789012345678901234567890,"x_f":1.50,"x_o":{{"b": 1, "a" :[2.0e0]}}}}"#
        );
        let evs = parse(&(line + "\n"));
        let ev = &evs[0];
        let raw = |k: &str| ev.extra.get(k).map(|v| v.get().to_string());
        assert_eq!(
            raw("x_id").as_deref(),
            Some("123456789012345678901234567890")
        );
        assert_eq!(raw("x_f").as_deref(), Some("1.50"));
        assert_eq!(raw("x_o").as_deref(), Some(r#"{"b": 1, "a" :[2.0e0]}"#));
        let back = ev.to_json_line();
        assert!(
            back.contains(r#""x_id":123456789012345678901234567890,"x_f":1.50"#),
            "{back}"
        );
        let pretty = pretty_json(&back);
        assert!(
            pretty.contains("\n  \"x_id\": 123456789012345678901234567890,\n"),
            "{pretty}"
        );
        assert!(
            pretty.contains("\"b\": 1,\n    \"a\": [\n      2.0e0\n    ]"),
            "{pretty}"
        );
        // Written back and read again: the same event.
        assert_eq!(&parse(&(back + "\n"))[0].extra, &ev.extra);
    }
}

/// C45: lines of long number lists in an unknown field cost about their own size once read,
/// and at no point much more (as a `serde_json::Value` each two-byte `0,` is a 32-byte node:
/// sixteen times the text).
#[test]
fn unknown_fields_cost_their_text_not_a_tree() {
    let _one = serial();
    let list = format!("[{}0]", "0,".repeat(512 * 1024));
    let mut text = String::new();
    for i in 0..8 {
        text.push_str(&format!(
            "{{\"kind\":\"thought\",\"seq\":{i},\"text\":\"t\",\"x_data\":{list}}}\n"
        ));
    }
    let input = text.len();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let evs = parse(&text);
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    assert_eq!(evs.len(), 8);
    assert_eq!(
        evs[7].extra.get("x_data").map(|v| v.get().len()),
        Some(list.len())
    );
    assert!(
        held < input * 3 / 2,
        "{held} bytes held for {input} bytes of input"
    );
    assert!(
        peak < input * 3,
        "peak {peak} bytes for {input} bytes of input"
    );
}

fn detail_text(line: &str) -> Vec<String> {
    use doxascope::tui::app::App;
    use doxascope::tui::data::Store;
    use doxascope::tui::theme::Theme;
    doxascope::tui::highlight::load_now();
    let app = App::new(
        Store::from_bytes("t.jsonl", format!("{line}\n").as_bytes()),
        Theme::builtin("light").expect("theme"),
    );
    doxascope::tui::panes::detail::detail_lines(&app, 0)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// The detail pane shows an unknown field's number as written, and lays out at most the
/// first 64 KiB of a raw event: a 4 MiB list would be two million lines to lay out and
/// highlight on every frame (the TUI reached 1.4 GB and took a minute to show 6 such lines).
#[test]
fn the_detail_pane_shows_raw_events_exactly_and_boundedly() {
    let _one = serial();
    let lines =
        detail_text(r#"{"kind":"thought","text":"t","x_id":123456789012345678901234567890}"#);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"x_id\": 123456789012345678901234567890")),
        "{lines:#?}"
    );
    let list = format!("[{}0]", "0,".repeat(1 << 20));
    let lines = detail_text(&format!(
        r#"{{"kind":"thought","text":"t","x_data":{list}}}"#
    ));
    assert!(lines.len() < 40_000, "{} lines", lines.len());
    let last = lines.last().expect("lines");
    assert!(
        last.contains("more bytes of the raw event not shown"),
        "{last}"
    );
}

/// An unknown field nested 20,000 deep (`{"kind":"log","x":[[[…]]]}`) is kept, and the detail
/// pane shows it in bounded memory and time: only the first levels are laid out one a line,
/// the rest stays on one line. Indenting every level made 800 MB of spaces, then an abort.
#[test]
fn a_deeply_nested_unknown_field_shows_in_bounded_memory() {
    let _one = serial();
    // The layout alone: its size is linear in the input's, whatever the nesting.
    let deep = format!("{}{}", "[".repeat(4000), "]".repeat(4000));
    let pretty = pretty_json(&deep);
    assert!(
        pretty.len() < deep.len() * 2 + 2048,
        "{} bytes laid out for {}",
        pretty.len(),
        deep.len()
    );
    let shallow = pretty_json(r#"{"a":[1,{"b":2}]}"#);
    assert_eq!(
        shallow,
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ]\n}"
    );
    // Through the pane.
    let n = 20_000;
    let line = format!(
        r#"{{"kind":"log","message":"m","x":{}{}}}"#,
        "[".repeat(n),
        "]".repeat(n)
    );
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let started = std::time::Instant::now();
    let lines = detail_text(&line);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    assert!(
        lines.iter().any(|l| l.contains("[[[[")),
        "the deep part is shown"
    );
    assert!(lines.len() < 200, "{} lines", lines.len());
    assert!(peak < 256 << 20, "peak {peak} bytes");
    // The whole screen with the pane zoomed (Tab to it, `G`): drawn, so `q` is read next.
    let mut app = doxascope::tui::app::App::new(
        doxascope::tui::data::Store::from_bytes("t.jsonl", format!("{line}\n").as_bytes()),
        doxascope::tui::theme::Theme::builtin("dark").expect("theme"),
    );
    app.focus = doxascope::tui::app::Pane::Detail;
    app.zoom = true;
    let screen = doxascope::tui::ui::render_text(&mut app, 100, 30);
    assert!(screen.contains("raw event"), "{screen}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}
