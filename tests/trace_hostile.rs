//! Hostile input (catalogue §C of the reliability research): the reader never panics, never
//! overflows the stack, never silently rounds numbers it relies on, and bounds its memory.

use doxascope::trace::{Item, ProblemCode, Reader, ReaderConfig, Severity};
use proptest::prelude::*;

fn read(bytes: &[u8], cap: usize) -> Vec<Item> {
    let mut r = Reader::new(
        "h.jsonl",
        ReaderConfig {
            max_line_bytes: cap,
        },
    );
    let mut out = Vec::new();
    r.feed(bytes, &mut out);
    r.finish(&mut out);
    out
}

fn single_problem(line: &str) -> (ProblemCode, String) {
    match read(line.as_bytes(), 1 << 20).as_slice() {
        [Item::Problem(p)] => {
            assert_eq!(p.severity, Severity::Error, "{p:?}");
            (p.code, p.message.clone())
        }
        other => panic!("{line}: expected one error, got {other:?}"),
    }
}

#[test]
fn deep_nesting_is_a_line_error_even_on_a_small_stack() {
    // 100,000 levels would overflow any stack if the parser recursed without a limit; run on a
    // 512 KiB thread (a quarter of Rust's default for spawned threads; unoptimized builds need about
    // twice the stack of release builds, which pass at 256 KiB).
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            let mut line = String::from("{\"kind\":\"log\",\"meta\":");
            line.push_str(&"[".repeat(100_000));
            line.push('\n');
            line.push_str("{\"kind\":\"log\",\"meta\":");
            line.push_str(&"{\"a\":".repeat(100_000));
            line.push('\n');
            read(line.as_bytes(), 1 << 22)
        })
        .expect("spawn");
    let items = handle.join().expect("no stack overflow, no panic");
    assert_eq!(items.len(), 2);
    for it in items {
        let Item::Problem(p) = it else {
            panic!("{it:?}")
        };
        assert!(p.message.contains("recursion limit exceeded"), "{p:?}");
    }
}

#[test]
fn sequence_numbers_are_never_silently_rounded() {
    for (line, needle) in [
        (
            r#"{"kind":"log","seq":123456789012345678901234567890}"#,
            "non-negative integer",
        ),
        (r#"{"kind":"log","seq":-1}"#, "non-negative integer"),
        (r#"{"kind":"log","seq":1.5}"#, "non-negative integer"),
        (r#"{"kind":"log","seq":"7"}"#, "non-negative integer"),
        (r#"{"kind":"log","v":0}"#, "positive integer"),
        (r#"{"kind":"log","ts":1e400}"#, "number out of range"),
        (r#"{"kind":"log","ts":NaN}"#, "expected value"),
        (r#"{"kind":"log","message":"\ud800"}"#, "hex escape"),
        (
            r#"{"kind":"plan_stats","use_count":2.5}"#,
            "non-negative integer",
        ),
        (r#"{"kind":"postcondition","tier":4}"#, "must be 1, 2 or 3"),
        (
            r#"{"kind":"announce","formula":"p","confidence":-0.1}"#,
            "greater than 0 and at most 1",
        ),
        (
            r#"{"kind":"announce","formula":"p","confidence":0}"#,
            "greater than 0 and at most 1",
        ),
        (
            r#"{"kind":"announce","formula":"p","because":["a",3]}"#,
            "item 1 is a number",
        ),
        (r#"{"kind":"log","x":1,"x":2}"#, "duplicate field `x`"),
        (
            r#"{"kind":"log","session":"a","session":"b"}"#,
            "duplicate field `session`",
        ),
        (r#"{"kind":7}"#, "field `kind` to be a string"),
        ("\0\0\0", "expected value"),
    ] {
        let (_, msg) = single_problem(line);
        assert!(msg.contains(needle), "{line}: {msg:?} lacks {needle:?}");
    }
}

#[test]
fn an_endless_line_is_skipped_with_bounded_memory() {
    // 64 MiB without a newline, fed in 64 KiB chunks, with a 1 MiB cap: the reader reports it
    // once at the newline and then reads the next line normally. It never holds more than the
    // cap (the buffer is cleared as soon as the cap is passed).
    let mut r = Reader::new(
        "big.jsonl",
        ReaderConfig {
            max_line_bytes: 1 << 20,
        },
    );
    let chunk = vec![b'a'; 64 * 1024];
    let mut out = Vec::new();
    for _ in 0..1024 {
        r.feed(&chunk, &mut out);
    }
    assert!(out.is_empty());
    r.feed(b"\n{\"kind\":\"log\"}\n", &mut out);
    r.finish(&mut out);
    match out.as_slice() {
        [Item::Problem(p), Item::Event(e)] => {
            assert_eq!(p.code, ProblemCode::LineTooLong);
            assert!(p.message.contains("67108864 bytes"), "{}", p.message);
            assert_eq!(e.origin.line, 2);
            assert_eq!(e.origin.offset, 64 * 1024 * 1024 + 1);
        }
        other => panic!("{other:?}"),
    }
}

/// A last line cut right after a key's colon (a trace still being written, a copy taken
/// mid-line): every loader reports it as a problem, none panics, and every headless command
/// ends with its own exit code.
#[test]
fn a_line_cut_right_after_a_colon_is_a_problem_not_a_panic() {
    let good = r#"{"kind":"announce","formula":"p","seq":1,"confidence":0.5}"#;
    let mut cuts = Vec::new();
    for key in [
        "seq",
        "confidence",
        "ts",
        "v",
        "use_count",
        "tier",
        "formula",
        "kind",
    ] {
        let at = format!(r#"{{"kind":"announce","formula":"q","{key}":"#);
        cuts.push(at.clone());
        cuts.push(format!("{at} "));
        cuts.push(format!("{at}-"));
    }
    for cut in &cuts {
        let text = format!("{good}\n{cut}");
        let items = read(text.as_bytes(), 1 << 20);
        assert!(
            matches!(items.last(), Some(Item::Problem(_))),
            "{cut}: {items:?}"
        );
        let mut briefs = Vec::new();
        doxascope::trace::read_all_briefs(
            "h.jsonl",
            text.as_bytes(),
            ReaderConfig::default(),
            |b| briefs.push(b),
        )
        .unwrap();
        assert!(
            matches!(briefs.last(), Some(doxascope::trace::BriefItem::Problem(_))),
            "{cut}: {briefs:?}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    for (n, cut) in [
        r#"{"kind":"log","seq":"#,
        r#"{"kind":"announce","formula":"p","confidence":"#,
    ]
    .iter()
    .enumerate()
    {
        let file = dir.path().join(format!("cut{n}.jsonl"));
        std::fs::write(&file, format!("{good}\n{cut}")).unwrap();
        let f = file.to_str().unwrap();
        for args in [
            vec!["audit", f],
            vec!["export", f, "--format", "json"],
            vec!["validate", f],
            vec!["history", "p", f],
            vec!["report", f, "-o", "-"],
        ] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.code() != Some(101) && !err.contains("panicked"),
                "{args:?}: {:?} {err}",
                out.status
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary bytes: no panic, and every problem points at a line that exists.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
        for item in read(&bytes, 64) {
            let line = match &item {
                Item::Event(e) => e.origin.line,
                Item::Problem(p) => p.origin.line,
            };
            prop_assert!(line >= 1 && line <= lines);
        }
    }

    /// Arbitrary JSON-ish text built from the format's own tokens: no panic, and anything
    /// accepted writes back to a line that reads as the same event.
    #[test]
    fn accepted_events_round_trip(
        parts in prop::collection::vec(
            prop_oneof![
                Just("\"kind\":\"announce\""), Just("\"kind\":\"verify\""), Just("\"kind\":\"x\""),
                Just("\"formula\":\"p -> q\""), Just("\"formulas\":[\"a\"]"),
                Just("\"role\":\"norm\""), Just("\"confidence\":0.5"), Just("\"seq\":3"),
                Just("\"ts\":12.5"), Just("\"session\":\"s\\u001b\""), Just("\"id\":\"b1\""),
                Just("\"because\":[]"), Just("\"x_extra\":{\"k\":[1,2]}"), Just("\"outcome\":\"entailed\""),
            ],
            0..7,
        )
    ) {
        let line = format!("{{{}}}", parts.join(","));
        let items = read(line.as_bytes(), 1 << 20);
        if let [Item::Event(e)] = items.as_slice() {
            let again = read(e.to_json_line().as_bytes(), 1 << 20);
            let expected = vec![Item::Event(e.clone())];
            prop_assert_eq!(again, expected);
        }
    }
}
