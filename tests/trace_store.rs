//! The event store against the eager reader: events kept as places in their file and decoded
//! when looked at are exactly the events the streaming reader gives for the same bytes, on
//! every sample, on generated traces and on hostile streams (bad lines, CRLF, BOMs, lines
//! around the length cap, no final newline), read whole or grown chunk by chunk as a follower
//! or a live session's spool grows. A line changed under the store into something else
//! than an event of its kind gives an `unreadable` event, never a panic.

use std::io::Write;

use doxascope::model::Model;
use doxascope::trace::generate::{GenConfig, write_mixed};
use doxascope::trace::{Event, Item, Problem, Reader, ReaderConfig, TraceLog};
use proptest::prelude::*;

#[path = "support/streams.rs"]
mod streams;

const CAP: usize = 80;

/// The streaming reader's output for `bytes`, fed in one piece: events and problems.
fn eager(name: &str, bytes: &[u8], cfg: ReaderConfig) -> (Vec<Event>, Vec<Problem>) {
    let mut r = Reader::new(name, cfg);
    let mut out = Vec::new();
    r.feed(bytes, &mut out);
    r.finish(&mut out);
    let mut events = Vec::new();
    let mut problems = Vec::new();
    for it in out {
        match it {
            Item::Event(e) => events.push(e),
            Item::Problem(p) => problems.push(p),
        }
    }
    (events, problems)
}

/// Every way the store hands out an event agrees with the eager event at that position.
fn check_store(log: &TraceLog, want: &[Event]) -> Result<(), TestCaseError> {
    prop_assert_eq!(log.events.len(), want.len());
    for (i, w) in want.iter().enumerate() {
        // Unpinned first (a fresh decode), then pinned, then unpinned again (borrowed).
        let fresh = log.events.load(i);
        prop_assert_eq!(fresh.as_deref(), Some(w), "load {}", i);
        prop_assert_eq!(log.events.get(i), Some(w), "get {}", i);
        let pinned = log.events.load(i);
        prop_assert_eq!(pinned.as_deref(), Some(w), "load after get {}", i);
        let origin = log.events.origin(i);
        prop_assert_eq!(origin.as_ref(), Some(&w.origin));
        prop_assert_eq!(log.events.kind(i), Some(w.kind()));
    }
    prop_assert_eq!(log.events.get(want.len()), None);
    Ok(())
}

fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(bytes).expect("write");
    f.flush().expect("flush");
    f
}

/// A whole file read into a log that keeps only where its events are.
fn lazy(path: &std::path::Path, cfg: ReaderConfig) -> TraceLog {
    let mut log = TraceLog::new();
    log.read_file(path, cfg).expect("read");
    log
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Hostile streams read whole: the same events (decoded again from the file) and the
    /// same problems as the streaming reader.
    #[test]
    fn the_lazy_store_gives_the_eager_events(bytes in streams::stream(CAP, 24)) {
        let cfg = ReaderConfig { max_line_bytes: CAP };
        let f = file_with(&bytes);
        let name = f.path().to_string_lossy().into_owned();
        let (events, problems) = eager(&name, &bytes, cfg);
        let log = lazy(f.path(), cfg);
        check_store(&log, &events)?;
        prop_assert_eq!(&log.problems, &problems);
        // Nothing was kept decoded but what `get` pinned; dropping the pins changes nothing.
        let mut log = log;
        log.events.unpin();
        prop_assert_eq!(log.events.pinned(), 0);
        check_store(&log, &events)?;
    }

    /// A file growing chunk by chunk (a follower's appends, a live session's spool): each
    /// chunk is appended to the file, then fed to a reader whose events go to a log that
    /// keeps only their places in the file. At every point the store agrees with the eager
    /// reader on what was read so far.
    #[test]
    fn a_growing_file_is_stored_as_it_grows(
        bytes in streams::stream(CAP, 24),
        cuts in proptest::collection::vec(0usize..400, 0..8),
    ) {
        let cfg = ReaderConfig { max_line_bytes: CAP };
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        let name = f.path().to_string_lossy().into_owned();
        let mut log = TraceLog::new();
        let again = std::fs::File::open(f.path()).expect("open");
        log.events.add_source(&name, again, cfg);
        let mut reader = Reader::new(&name, cfg);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
        cuts.push(bytes.len());
        cuts.sort_unstable();
        let mut at = 0;
        for c in cuts {
            f.write_all(&bytes[at..c]).expect("write");
            f.flush().expect("flush");
            let mut out = Vec::new();
            reader.feed(&bytes[at..c], &mut out);
            log.extend(out);
            at = c;
            let (want, _) = eager(&name, &bytes[..c], cfg);
            // Lines not yet terminated are not read yet.
            check_store(&log, &want[..log.events.len()])?;
        }
        let mut out = Vec::new();
        reader.finish(&mut out);
        log.extend(out);
        let (events, problems) = eager(&name, &bytes, cfg);
        check_store(&log, &events)?;
        prop_assert_eq!(&log.problems, &problems);
    }
}

/// One line of a replay-heavy trace: announcements that reuse ids and formulas (spelled
/// differently, some not parsing), retractions and revisions by id, by formula and by
/// nothing active, verifications, queries and BDI events, in two sessions.
fn replay_line() -> impl Strategy<Value = String> {
    let formula = prop::sample::select(vec![
        "p",
        "q",
        "p & q",
        "(p&q)",
        " p ",
        "p ∧ q",
        "!p",
        "p -> q",
        "(",
        "p &",
        "forall x. P(x)",
    ]);
    let id = prop::sample::select(vec!["b1", "b2", "b3", " b1", "p", "p & q"]);
    let session = prop::sample::select(vec!["s1", "s2"]);
    let role = prop::sample::select(vec!["", r#","role":"rule""#, r#","role":"norm""#]);
    let j = |s: &str| serde_json::to_string(s).expect("a string");
    prop_oneof![
        4 => (formula.clone(), prop::option::of(id.clone()), role, session.clone()).prop_map(
            move |(f, id, role, s)| {
                let id = id.map(|i| format!(r#","id":{}"#, j(i))).unwrap_or_default();
                format!(r#"{{"kind":"announce","session":"{s}","formula":{}{id}{role}}}"#, j(f))
            }
        ),
        2 => (prop_oneof![id.clone(), formula.clone()], session.clone()).prop_map(move |(t, s)| {
            format!(r#"{{"kind":"retract","session":"{s}","target":{},"by":"agent"}}"#, j(t))
        }),
        1 => (
            prop::option::of(prop_oneof![id.clone(), formula.clone()]),
            prop::collection::vec(prop_oneof![id, formula.clone()], 0..3),
            session.clone(),
        )
            .prop_map(move |(t, r, s)| {
                let t = t.map(|t| format!(r#","trigger":{}"#, j(t))).unwrap_or_default();
                let r: Vec<String> = r.into_iter().map(j).collect();
                format!(r#"{{"kind":"revise","session":"{s}"{t},"retracted":[{}]}}"#, r.join(","))
            }),
        1 => (formula.clone(), session.clone()).prop_map(move |(f, s)| {
            format!(r#"{{"kind":"verify","session":"{s}","formulas":[{},"p"],"outcome":"contradiction"}}"#, j(f))
        }),
        1 => (formula, session.clone()).prop_map(move |(f, s)| {
            format!(r#"{{"kind":"query","session":"{s}","formula":{}}}"#, j(f))
        }),
        1 => (session, prop::sample::select(vec![
            r#""kind":"plan","id":"P1""#,
            r#""kind":"plan""#,
            r#""kind":"step","plan":"P1","status":"done","new_beliefs":[{"name":"m","value":1}]"#,
            r#""kind":"step","plan":"P1","status":"failed""#,
            r#""kind":"postcondition","plan":"P1","tier":2"#,
            r#""kind":"belief","name":"m","value":2"#,
            r#""kind":"desire","text":"d""#,
            r#""kind":"mystery","x":1"#,
        ])).prop_map(|(s, body)| format!(r#"{{{body},"session":"{s}"}}"#)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The model loaded from a file (each event replayed from its brief, made by the load's
    /// scanner or from the decoded event) equals the model replayed from the events in
    /// memory, on traces that exercise every rule of the replay.
    #[test]
    fn replaying_briefs_equals_replaying_events(
        lines in prop::collection::vec(replay_line(), 0..40),
    ) {
        let text = lines.join("\n");
        let f = file_with(text.as_bytes());
        let name = f.path().to_string_lossy().into_owned();
        let from_file = Model::load(&[f.path()]).expect("load");
        let in_memory = Model::from_bytes(&name, text.as_bytes());
        prop_assert_eq!(from_file.timelines(), in_memory.timelines());
    }
}

/// Every bundled sample and a generated trace of every kind: the lazy store, and the model
/// loaded from the file (replayed as it is read) equal the eager reader and the model
/// replayed from memory.
#[test]
fn samples_and_generated_traces_load_lazily_as_they_read_eagerly() {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir("sample-traces")
        .expect("sample-traces")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    let dir = tempfile::tempdir().expect("temp dir");
    for (seed, sessions) in [(7u64, 8u32), (3, 1)] {
        let path = dir.path().join(format!("gen-{seed}.jsonl"));
        let mut bytes = Vec::new();
        let cfg = GenConfig {
            events: 30_000,
            seed,
            sessions,
            atoms: 40,
        };
        write_mixed(&mut bytes, &cfg).expect("in memory");
        std::fs::write(&path, &bytes).expect("write");
        files.push(path);
    }
    for path in &files {
        let bytes = std::fs::read(path).expect("read");
        let name = path.to_string_lossy().into_owned();
        let cfg = ReaderConfig::default();
        let (events, problems) = eager(&name, &bytes, cfg);
        let log = lazy(path, cfg);
        check_store(&log, &events).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(log.problems, problems, "{name}");
        let from_file = Model::load(std::slice::from_ref(path)).expect("load");
        let in_memory = Model::from_bytes(&name, &bytes);
        assert_eq!(from_file.timelines(), in_memory.timelines(), "{name}");
        assert_eq!(from_file.log().events, events, "{name}");
        // The load kept nothing decoded.
        assert_eq!(from_file.log().events.pinned(), 0, "{name}");
    }
}

/// A file rewritten under the store: an event whose line no longer holds an event of its
/// kind is shown as `unreadable` with the reason; lines that did not change still decode.
#[test]
fn a_file_changed_on_disk_gives_unreadable_events_not_wrong_ones() {
    let text = "{\"kind\":\"announce\",\"formula\":\"p\",\"id\":\"a\"}\n\
                {\"kind\":\"log\",\"message\":\"hello\"}\n\
                {\"kind\":\"announce\",\"formula\":\"q\",\"id\":\"b\"}\n";
    let f = file_with(text.as_bytes());
    let log = lazy(f.path(), ReaderConfig::default());
    assert_eq!(log.events.len(), 3);
    // Same length, other content: the second line becomes an announce, the third garbage.
    let changed = text
        .replace(
            "{\"kind\":\"log\",\"message\":\"hello\"}",
            "{\"kind\":\"announce\",\"formula\":\"x\"}",
        )
        .replace(
            "\"formula\":\"q\",\"id\":\"b\"}",
            "\"formula\":\"q\",\"id\":\"b\"",
        );
    std::fs::write(f.path(), changed).expect("rewrite");
    assert_eq!(log.events[0].kind_name(), "announce");
    for i in [1, 2] {
        let ev = &log.events[i];
        assert_eq!(ev.kind_name(), "unreadable", "event {i}: {ev:?}");
        let why = ev.extra.value("error").expect("an error field");
        assert!(
            why.as_str().is_some_and(|w| w.contains("changed on disk")),
            "{why}"
        );
        assert_eq!(ev.origin.line, i as u64 + 1);
    }
    // Truncated to nothing: still no panic, every event unreadable.
    std::fs::write(f.path(), b"").expect("truncate");
    let log2 = {
        let mut l = TraceLog::new();
        let again = std::fs::File::open(f.path()).expect("open");
        l.events
            .add_source(&f.path().to_string_lossy(), again, ReaderConfig::default());
        let (events, _) = eager(
            &f.path().to_string_lossy(),
            text.as_bytes(),
            ReaderConfig::default(),
        );
        for e in events {
            l.push(Item::Event(e));
        }
        l
    };
    assert_eq!(log2.events.len(), 3);
    assert!(log2.events.iter().all(|e| e.kind_name() == "unreadable"));
}

/// Lines are read again through windows of the file kept per thread (one read serves a
/// few hundred lines). Files opened one after another on one thread, with lines at the same
/// offsets and of the same kind, never show each other's lines, even when a file's memory
/// is freed and the next one could take its place.
#[test]
fn files_read_on_one_thread_never_show_each_others_lines() {
    for round in 10..60 {
        let text = format!(
            "{{\"kind\":\"log\",\"message\":\"first of {round}\"}}\n\
             {{\"kind\":\"log\",\"message\":\"second of {round}\"}}\n"
        );
        let f = file_with(text.as_bytes());
        let log = lazy(f.path(), ReaderConfig::default());
        for (i, which) in ["first", "second"].iter().enumerate() {
            let ev = log.events.load(i).expect("an event");
            let want = format!("{which} of {round}");
            assert_eq!(
                serde_json::to_value(&*ev).expect("json")["message"],
                serde_json::Value::from(want)
            );
        }
    }
}

/// A line longer than a window, between short ones, and a last line without its newline:
/// each decodes as the streaming reader read it, in file order and out of it.
#[test]
fn long_lines_and_an_unterminated_last_line_load_as_read() {
    let long = "x".repeat(200_000);
    let text = format!(
        "{{\"kind\":\"log\",\"message\":\"a\"}}\n\
         {{\"kind\":\"log\",\"message\":\"{long}\"}}\n\
         {{\"kind\":\"log\",\"message\":\"b\"}}\n\
         {{\"kind\":\"log\",\"message\":\"c\"}}"
    );
    let cfg = ReaderConfig::default();
    let f = file_with(text.as_bytes());
    let name = f.path().to_string_lossy().into_owned();
    let (events, problems) = eager(&name, text.as_bytes(), cfg);
    assert_eq!(events.len(), 4, "{problems:?}");
    let log = lazy(f.path(), cfg);
    for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
        for i in order {
            assert_eq!(log.events.load(i).as_deref(), Some(&events[i]), "event {i}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// Some events' lines gathered into a spool of their own (as the audit does for a
    /// session whose lines are spread over the file): every event still decodes to the
    /// eager reader's, gathered or not, and the gathered ones are read from the spool: once
    /// the file is emptied, they still decode (on a thread with no window of the file) while
    /// the others are `unreadable`, until the gathering ends.
    #[test]
    fn gathered_lines_decode_as_read_and_come_from_their_spool(
        bytes in streams::stream(CAP, 24),
        picks in proptest::collection::vec(any::<bool>(), 24),
    ) {
        let cfg = ReaderConfig { max_line_bytes: CAP };
        let f = file_with(&bytes);
        let name = f.path().to_string_lossy().into_owned();
        let (events, _) = eager(&name, &bytes, cfg);
        let log = lazy(f.path(), cfg);
        // In any order: a session's steps need not be in file order.
        let chosen: Vec<u32> = (0..events.len() as u32)
            .rev()
            .filter(|&i| picks.get(i as usize).copied().unwrap_or(false))
            .collect();
        let gathering = log.events.gather(&chosen).expect("a spool");
        prop_assert_eq!(gathering.len(), chosen.len());
        // Unpinned looks only: a pinned event would be handed out whatever the file holds.
        for (i, want) in events.iter().enumerate() {
            let (got, origin) = (log.events.load(i), log.events.origin(i));
            prop_assert_eq!(got.as_deref(), Some(want), "load {}", i);
            prop_assert_eq!(origin.as_ref(), Some(&want.origin));
        }
        std::fs::write(f.path(), b"").expect("empty the file");
        std::thread::scope(|s| {
            s.spawn(|| -> Result<(), TestCaseError> {
                for (i, want) in events.iter().enumerate() {
                    let got = log.events.load(i).expect("an event");
                    if chosen.contains(&(i as u32)) {
                        prop_assert_eq!(&*got, want, "gathered {}", i);
                    } else {
                        prop_assert_eq!(got.kind_name(), "unreadable", "not gathered {}", i);
                    }
                }
                Ok(())
            })
            .join()
            .expect("no panic")
        })?;
        drop(gathering);
        std::thread::scope(|s| {
            s.spawn(|| -> Result<(), TestCaseError> {
                for i in 0..events.len() {
                    let got = log.events.load(i).expect("an event");
                    prop_assert_eq!(got.kind_name(), "unreadable", "after the gathering {}", i);
                }
                Ok(())
            })
            .join()
            .expect("no panic")
        })?;
    }
}

/// `gather_sparse` spools a session only when its lines are many and spread: not one that
/// holds the file's lines in a row, not a short one.
#[test]
fn only_many_spread_lines_are_gathered() {
    let text: String = (0..20_000)
        .map(|i| format!("{{\"kind\":\"log\",\"message\":\"m{i}\"}}\n"))
        .collect();
    let f = file_with(text.as_bytes());
    let log = lazy(f.path(), ReaderConfig::default());
    let every_third: Vec<u32> = (0..20_000).step_by(3).collect();
    let dense: Vec<u32> = (0..10_000).collect();
    let short: Vec<u32> = (0..20_000).step_by(8).take(1000).collect();
    assert!(log.events.gather_sparse(&every_third).is_some());
    assert!(log.events.gather_sparse(&dense).is_none());
    assert!(log.events.gather_sparse(&short).is_none());
}
