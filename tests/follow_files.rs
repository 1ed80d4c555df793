//! Scripted real-file operations against the follower (coreutils `tests/tail` style): every
//! case asserts the exact sequence of statuses, events (with their line numbers) and problems,
//! so a lost or repeated record fails the test.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use doxascope::trace::follow::{FollowConfig, FollowItem, FollowStatus, Follower};
use doxascope::trace::{Body, Item};
use proptest::prelude::*;

fn line(tag: &str) -> String {
    format!("{{\"kind\":\"log\",\"message\":\"{tag}\"}}\n")
}

fn lines(tags: &[&str]) -> String {
    tags.iter().map(|t| line(t)).collect()
}

fn append(path: &Path, text: &str) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open for append");
    f.write_all(text.as_bytes()).expect("append");
}

fn status_name(s: &FollowStatus) -> String {
    match s {
        FollowStatus::Error(_) => "Error".into(),
        FollowStatus::PollingOnly(_) => "PollingOnly".into(),
        FollowStatus::Symlink { outside: false, .. } => "Symlink".into(),
        FollowStatus::Symlink { outside: true, .. } => "SymlinkOutside".into(),
        FollowStatus::Tail { .. } => "Tail".into(),
        other => format!("{other:?}"),
    }
}

/// `Following`, `a@1` (event with message `a` read on line 1), `Json@2` (problem on line 2).
fn render(items: Vec<FollowItem>) -> Vec<String> {
    let mut out = Vec::new();
    for item in items {
        match item {
            FollowItem::Status(s) => out.push(status_name(&s)),
            FollowItem::Items(batch) => {
                assert!(!batch.is_empty(), "empty batch delivered");
                for it in batch {
                    out.push(match it {
                        Item::Event(ev) => match &ev.body {
                            Body::Log(l) => format!(
                                "{}@{}",
                                l.message.as_deref().unwrap_or("?"),
                                ev.origin.line
                            ),
                            other => format!("{other:?}"),
                        },
                        Item::Problem(p) => format!("{:?}@{}", p.code, p.origin.line),
                    });
                }
            }
        }
    }
    out
}

fn cfg() -> FollowConfig {
    FollowConfig {
        notify: false,
        ..FollowConfig::default()
    }
}

fn poll(f: &mut Follower) -> Vec<String> {
    render(f.poll_once())
}

#[test]
fn appends_in_pieces_and_partial_lines_are_delivered_once_complete() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &lines(&["a", "b"]));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1", "b@2"]);
    assert!(poll(&mut f).is_empty());
    let c = line("c");
    let (x, rest) = c.split_at(5);
    let (y, z) = rest.split_at(10);
    append(&p, x);
    assert!(poll(&mut f).is_empty(), "a partial line is not delivered");
    append(&p, y);
    assert!(poll(&mut f).is_empty());
    append(&p, z);
    assert_eq!(poll(&mut f), ["c@3"]);
    // A line and the start of the next in one write.
    let e = line("e");
    append(&p, &format!("{}{}", line("d"), &e[..7]));
    assert_eq!(poll(&mut f), ["d@4"]);
    append(&p, &e[7..]);
    assert_eq!(poll(&mut f), ["e@5"]);
    assert!(poll(&mut f).is_empty());
}

#[test]
fn truncation_is_reported_and_the_file_re_read_from_zero() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &lines(&["a", "b"]));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1", "b@2"]);
    File::create(&p).unwrap(); // `: > t.jsonl`
    assert_eq!(poll(&mut f), ["Truncated"]);
    assert!(poll(&mut f).is_empty(), "truncation is reported once");
    append(&p, &line("c"));
    assert_eq!(poll(&mut f), ["c@1"]);
}

#[test]
fn truncate_and_rewrite_past_the_old_offset_is_caught_by_the_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &lines(&["a", "b"]));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1", "b@2"]);
    // Same inode, larger than what was read, different first bytes.
    fs::write(&p, lines(&["x", "y", "z"])).unwrap();
    assert_eq!(poll(&mut f), ["Truncated", "x@1", "y@2", "z@3"]);
}

#[test]
fn a_pending_partial_line_is_flushed_not_lost_when_the_file_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &format!("{}{{\"kind\":", line("a")));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    File::create(&p).unwrap();
    assert_eq!(poll(&mut f), ["Json@2", "Truncated"]);
}

#[test]
fn rotation_by_rename_and_create_drains_the_old_file_first() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let old = dir.path().join("t.jsonl.1");
    append(&p, &line("a"));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    append(&p, &line("b"));
    fs::rename(&p, &old).unwrap();
    append(&p, &line("c"));
    // The writer still holds the old file and writes its last line there.
    append(&old, &line("b2"));
    assert_eq!(poll(&mut f), ["b@2", "b2@3", "Rotated", "Following", "c@1"]);
    append(&old, &line("late"));
    append(&p, &line("d"));
    assert_eq!(poll(&mut f), ["d@2"], "the rotated file is no longer read");
}

#[test]
fn rename_away_then_create_later_waits_in_between() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &line("a"));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    append(&p, &line("b"));
    fs::rename(&p, dir.path().join("t.jsonl.1")).unwrap();
    assert_eq!(poll(&mut f), ["b@2", "Rotated", "Waiting"]);
    assert!(poll(&mut f).is_empty(), "waiting is reported once");
    append(&p, &line("c"));
    assert_eq!(poll(&mut f), ["Following", "c@1"]);
}

#[test]
fn an_unterminated_last_line_of_a_rotated_file_is_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let done = line("p");
    // A complete record without its newline, then a torn one in the next rotation.
    append(&p, &format!("{}{}", line("a"), done.trim_end()));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    fs::rename(&p, dir.path().join("1")).unwrap();
    append(&p, "{\"kind\":\"lo");
    assert_eq!(poll(&mut f), ["p@2", "Rotated", "Following"]);
    fs::rename(&p, dir.path().join("2")).unwrap();
    append(&p, &line("q"));
    assert_eq!(poll(&mut f), ["Json@1", "Rotated", "Following", "q@1"]);
}

#[test]
fn copy_truncate_loses_nothing_that_was_written_before_the_copy_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &lines(&["a", "b"]));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1", "b@2"]);
    append(&p, &line("c"));
    assert_eq!(poll(&mut f), ["c@3"]);
    // logrotate copytruncate: copy, truncate in place; the writer keeps appending.
    fs::copy(&p, dir.path().join("t.jsonl.1")).unwrap();
    OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&p, &line("d"));
    assert_eq!(poll(&mut f), ["Truncated", "d@1"]);
    // Again, but the writer outgrows the old offset before the next poll.
    fs::copy(&p, dir.path().join("t.jsonl.2")).unwrap();
    OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&p, &lines(&["e", "f", "g"]));
    assert_eq!(poll(&mut f), ["Truncated", "e@1", "f@2", "g@3"]);
}

#[test]
fn delete_and_re_create() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &line("a"));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    append(&p, &line("b"));
    fs::remove_file(&p).unwrap();
    assert_eq!(poll(&mut f), ["b@2", "Deleted", "Waiting"]);
    assert!(poll(&mut f).is_empty());
    append(&p, &line("c"));
    assert_eq!(poll(&mut f), ["Following", "c@1"]);
    // Deleted and re-created between two polls: the old file is gone, a new one is there.
    append(&p, &line("d"));
    fs::remove_file(&p).unwrap();
    append(&p, &line("e"));
    assert_eq!(poll(&mut f), ["d@2", "Replaced", "Following", "e@1"]);
}

#[test]
fn atomic_replace_by_rename_over_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let tmp = dir.path().join(".t.jsonl.tmp");
    append(&p, &line("a"));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    append(&p, &line("b"));
    fs::write(&tmp, lines(&["a", "b", "c"])).unwrap();
    fs::rename(&tmp, &p).unwrap();
    assert_eq!(
        poll(&mut f),
        ["b@2", "Replaced", "Following", "a@1", "b@2", "c@3"]
    );
    append(&p, &line("d"));
    assert_eq!(poll(&mut f), ["d@4"]);
}

#[test]
fn a_file_created_after_start_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("later.jsonl");
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Waiting"]);
    assert!(poll(&mut f).is_empty());
    append(&p, &line("a")[..10]);
    assert_eq!(poll(&mut f), ["Following"]);
    append(&p, &line("a")[10..]);
    assert_eq!(poll(&mut f), ["a@1"]);
}

#[test]
fn non_regular_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    fs::create_dir(&p).unwrap();
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["NotRegular"]);
    assert!(poll(&mut f).is_empty(), "a refusal is reported once");
    fs::remove_dir(&p).unwrap();
    assert_eq!(poll(&mut f), ["Waiting"]);
    // A FIFO with no writer: a blocking open would hang here forever.
    let made = std::process::Command::new("mkfifo").arg(&p).status();
    if made.is_ok_and(|s| s.success()) {
        assert_eq!(poll(&mut f), ["NotRegular"]);
        fs::remove_file(&p).unwrap();
    }
    append(&p, &line("a"));
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
}

#[test]
fn fifty_rotations_lose_and_repeat_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Waiting"]);
    let mut got = Vec::new();
    for i in 0..50 {
        append(&p, &lines(&[&format!("{i}a"), &format!("{i}b")]));
        if i % 3 == 0 {
            got.extend(poll(&mut f));
        }
        append(&p, &line(&format!("{i}c")));
        // `mv t t.N && touch t`: by name, a file that comes and goes between two polls is
        // never seen, so the new file is created at once, as logrotate does.
        fs::rename(&p, dir.path().join(format!("t.{i}"))).unwrap();
        File::create(&p).unwrap();
        got.extend(poll(&mut f));
    }
    let events: Vec<String> = got
        .iter()
        .filter(|s| s.contains('@'))
        .map(|s| s.split('@').next().unwrap_or_default().to_string())
        .collect();
    let expected: Vec<String> = (0..50)
        .flat_map(|i| [format!("{i}a"), format!("{i}b"), format!("{i}c")])
        .collect();
    assert_eq!(events, expected);
    assert_eq!(got.iter().filter(|s| *s == "Rotated").count(), 50);
}

#[derive(Debug, Clone)]
enum Op {
    /// Write `n` complete lines in pieces cut at these fractions, polling between pieces or not.
    Write {
        n: usize,
        cuts: Vec<u8>,
        poll_between: bool,
    },
    Poll,
    Rotate,
    Replace,
    Truncate,
    DeleteRecreate,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1usize..4, proptest::collection::vec(any::<u8>(), 0..4), any::<bool>())
            .prop_map(|(n, cuts, poll_between)| Op::Write { n, cuts, poll_between }),
        2 => Just(Op::Poll),
        1 => Just(Op::Rotate),
        1 => Just(Op::Replace),
        1 => Just(Op::Truncate),
        1 => Just(Op::DeleteRecreate),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Differential test against a model of what `tail -F` must show: every line written is
    /// delivered exactly once, in order, with the line number it has in its file, and each
    /// file switch is reported with the right status.
    #[test]
    fn any_schedule_of_writes_and_switches_delivers_each_line_once(
        ops in proptest::collection::vec(op(), 1..25)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        fs::write(&p, "").unwrap();
        let mut f = Follower::new(&p, cfg());
        let mut got = poll(&mut f);
        let mut want = vec!["Following".to_string()];
        let mut next = 0usize;
        let mut line_no = 0u64; // lines in the current file
        let mut spare = 0usize;
        for op in ops {
            match op {
                Op::Write { n, cuts, poll_between } => {
                    let mut text = String::new();
                    // (end offset, expected rendering) of each line, in order.
                    let mut ends = Vec::new();
                    for _ in 0..n {
                        line_no += 1;
                        text.push_str(&line(&format!("l{next}")));
                        ends.push((text.len(), format!("l{next}@{line_no}")));
                        next += 1;
                    }
                    let mut shown = 0;
                    let mut at: Vec<usize> =
                        cuts.iter().map(|c| *c as usize * text.len() / 256).collect();
                    at.push(text.len());
                    at.sort_unstable();
                    let mut from = 0;
                    let mut reported = false;
                    for to in at {
                        append(&p, &text[from..to]);
                        if poll_between {
                            got.extend(poll(&mut f));
                            while shown < ends.len() && ends[shown].0 <= to {
                                want.push(ends[shown].1.clone());
                                shown += 1;
                            }
                            // A poll that finds no new bytes after an unterminated line
                            // reports the stall, once.
                            let partial = to - text[..to].rfind('\n').map_or(0, |i| i + 1);
                            if from == to && partial > 0 && !reported {
                                want.push(format!("Pending {{ bytes: {partial} }}"));
                                reported = true;
                            } else if from != to {
                                reported = false;
                            }
                        }
                        from = to;
                    }
                    want.extend(ends[shown..].iter().map(|e| e.1.clone()));
                }
                Op::Poll => got.extend(poll(&mut f)),
                Op::Rotate => {
                    spare += 1;
                    fs::rename(&p, dir.path().join(format!("old{spare}"))).unwrap();
                    fs::write(&p, "").unwrap();
                    got.extend(poll(&mut f));
                    want.extend(["Rotated".to_string(), "Following".to_string()]);
                    line_no = 0;
                }
                Op::Replace => {
                    let tmp = dir.path().join("tmp");
                    fs::write(&tmp, "").unwrap();
                    fs::rename(&tmp, &p).unwrap();
                    got.extend(poll(&mut f));
                    want.extend(["Replaced".to_string(), "Following".to_string()]);
                    line_no = 0;
                }
                Op::Truncate => {
                    // What was never read before a truncation is gone: read it first.
                    got.extend(poll(&mut f));
                    if line_no > 0 {
                        OpenOptions::new().write(true).open(&p).unwrap().set_len(0).unwrap();
                        got.extend(poll(&mut f));
                        want.push("Truncated".to_string());
                        line_no = 0;
                    }
                }
                Op::DeleteRecreate => {
                    fs::remove_file(&p).unwrap();
                    got.extend(poll(&mut f));
                    fs::write(&p, "").unwrap();
                    got.extend(poll(&mut f));
                    want.extend(["Deleted", "Waiting", "Following"].map(String::from));
                    line_no = 0;
                }
            }
        }
        got.extend(poll(&mut f));
        prop_assert_eq!(got, want);
    }
}

/// The spawned thread with notifications: a long poll interval, so prompt delivery can only
/// come from the notify hint.
#[test]
fn the_follower_thread_delivers_promptly_on_notification() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let cfg = FollowConfig {
        poll_interval: Duration::from_secs(30),
        ..FollowConfig::default()
    };
    let (handle, mut rx) = Follower::spawn(&p, cfg).unwrap();
    let mut seen = Vec::new();
    let mut wait_for = |seen: &mut Vec<String>, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !seen.iter().any(|s| s == what) {
            match rx.try_recv() {
                Ok(item) => {
                    let r = render(vec![item]);
                    assert!(
                        !r.iter().any(|s| s == "PollingOnly"),
                        "inotify unavailable: {r:?}"
                    );
                    seen.extend(r);
                }
                Err(_) => {
                    assert!(
                        Instant::now() < deadline,
                        "timed out waiting for {what}: {seen:?}"
                    );
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    };
    wait_for(&mut seen, "Waiting");
    append(&p, &line("a"));
    wait_for(&mut seen, "a@1");
    append(&p, &line("b"));
    wait_for(&mut seen, "b@2");
    fs::rename(&p, dir.path().join("t.1")).unwrap();
    append(&p, &line("c"));
    wait_for(&mut seen, "c@1");
    assert_eq!(
        seen.iter()
            .filter(|s| s.contains('@'))
            .cloned()
            .collect::<Vec<_>>(),
        ["a@1", "b@2", "c@1"]
    );
    assert!(seen.iter().any(|s| s == "Rotated"));
    handle.stop();
}

#[test]
fn the_parent_directory_removed_and_re_created_is_recovered_from() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("logs");
    fs::create_dir(&sub).unwrap();
    let p = sub.join("t.jsonl");
    append(&p, &line("a"));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    append(&p, &line("b"));
    fs::remove_dir_all(&sub).unwrap();
    assert_eq!(poll(&mut f), ["b@2", "Deleted", "Waiting"]);
    fs::create_dir(&sub).unwrap();
    append(&p, &line("c"));
    assert_eq!(poll(&mut f), ["Following", "c@1"]);
}

/// Collects rendered items from a follower thread until `what` shows up (or fails after 10 s).
fn wait_for(rx: &mut tokio::sync::mpsc::Receiver<FollowItem>, seen: &mut Vec<String>, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.iter().any(|s| s == what) {
        match rx.try_recv() {
            Ok(item) => seen.extend(render(vec![item])),
            Err(_) => {
                assert!(
                    Instant::now() < deadline,
                    "timed out waiting for {what}: {seen:?}"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Without notifications (NFS, exhausted inotify watches) the periodic poll alone follows
/// appends, a removed and re-created directory and a rotation.
#[test]
fn the_follower_thread_works_on_polling_alone() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("logs");
    let p = sub.join("t.jsonl");
    let cfg = FollowConfig {
        poll_interval: Duration::from_millis(20),
        notify: false,
        ..FollowConfig::default()
    };
    let (handle, mut rx) = Follower::spawn(&p, cfg).unwrap();
    let mut seen = Vec::new();
    wait_for(&mut rx, &mut seen, "Waiting");
    fs::create_dir(&sub).unwrap();
    append(&p, &line("a"));
    wait_for(&mut rx, &mut seen, "a@1");
    fs::remove_dir_all(&sub).unwrap();
    wait_for(&mut rx, &mut seen, "Deleted");
    fs::create_dir(&sub).unwrap();
    append(&p, &line("b"));
    wait_for(&mut rx, &mut seen, "b@1");
    append(&p, &line("c"));
    fs::rename(&p, sub.join("t.1")).unwrap();
    append(&p, &line("d"));
    wait_for(&mut rx, &mut seen, "d@1");
    let events: Vec<&String> = seen.iter().filter(|s| s.contains('@')).collect();
    assert_eq!(events, ["a@1", "b@1", "c@2", "d@1"]);
    handle.stop();
}

/// coreutils `inotify-rotate`: rotation repeated 50 times against the notify-driven thread,
/// because the racy orderings of events and polls are rare.
#[test]
fn fifty_rotations_against_the_notify_thread() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    File::create(&p).unwrap();
    let (handle, mut rx) = Follower::spawn(&p, FollowConfig::default()).unwrap();
    let mut seen = Vec::new();
    // Until the thread has opened the first file, a rotation would hide it (by name, a file
    // renamed away before it was ever opened is not followed).
    wait_for(&mut rx, &mut seen, "Following");
    for i in 0..50 {
        append(&p, &line(&format!("{i}a")));
        append(&p, &line(&format!("{i}b")));
        fs::rename(&p, dir.path().join(format!("t.{i}"))).unwrap();
        File::create(&p).unwrap();
        append(&p, &line(&format!("{i}c")));
        wait_for(&mut rx, &mut seen, &format!("{i}c@1"));
    }
    let events: Vec<String> = seen
        .iter()
        .filter(|s| s.contains('@'))
        .map(|s| s.split('@').next().unwrap_or_default().to_string())
        .collect();
    let mut expected = Vec::new();
    for i in 0..50 {
        expected.extend([format!("{i}a"), format!("{i}b"), format!("{i}c")]);
    }
    assert_eq!(events, expected);
    assert_eq!(seen.iter().filter(|s| *s == "Rotated").count(), 50);
    handle.stop();
}

#[test]
fn a_stalled_unterminated_line_is_reported_once_and_never_parsed_early() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let b = line("b");
    append(&p, &format!("{}{}", line("a"), &b[..10]));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    assert_eq!(poll(&mut f), ["Pending { bytes: 10 }"]);
    assert!(poll(&mut f).is_empty(), "a stall is reported once");
    append(&p, &b[10..20]);
    assert!(poll(&mut f).is_empty(), "growing again: not stalled");
    assert_eq!(poll(&mut f), ["Pending { bytes: 20 }"]);
    append(&p, &b[20..]);
    assert_eq!(poll(&mut f), ["b@2"]);
    assert!(poll(&mut f).is_empty(), "nothing pending after a newline");
}

#[test]
fn symlinks_are_followed_by_name_and_hostile_targets_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let real = dir.path().join("real.jsonl");
    append(&real, &line("a"));
    std::os::unix::fs::symlink(&real, &p).unwrap();
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Symlink", "Following", "a@1"]);
    append(&real, &line("b"));
    assert_eq!(poll(&mut f), ["b@2"]);
    // Re-pointed at a device that never ends: refused, never read, and the target (outside
    // the directory) is named.
    fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
    assert_eq!(poll(&mut f), ["Rotated", "SymlinkOutside", "NotRegular"]);
    // A symlink loop is an ordinary error, reported once.
    fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink(&p, &p).unwrap();
    assert_eq!(poll(&mut f), ["Error"]);
    assert!(poll(&mut f).is_empty());
    fs::remove_file(&p).unwrap();
    assert_eq!(poll(&mut f), ["Waiting"]);
}

#[test]
fn an_over_long_line_is_skipped_with_bounded_memory_and_reading_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let mut c = cfg();
    c.reader.max_line_bytes = 1000;
    c.read_chunk = 4096;
    let mut f = Follower::new(&p, c);
    assert_eq!(poll(&mut f), ["Waiting"]);
    append(&p, &"x".repeat(300_000));
    assert_eq!(poll(&mut f), ["Following"]);
    append(&p, &format!("\n{}", line("a")));
    assert_eq!(poll(&mut f), ["LineTooLong@1", "a@2"]);
}

/// B32: `traces/t.jsonl -> ../secret/key` is followed under a warning that names the target;
/// with `follow_symlinks` off it is refused without being opened, and a regular file put
/// back at the path is followed.
#[test]
fn a_symlink_leaving_its_directory_is_named_and_can_be_refused() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    let secret = dir.path().join("secret");
    fs::create_dir(&traces).unwrap();
    fs::create_dir(&secret).unwrap();
    let key = secret.join("id_key");
    append(&key, &line("s"));
    let p = traces.join("t.jsonl");
    std::os::unix::fs::symlink("../secret/id_key", &p).unwrap();
    let mut f = Follower::new(&p, cfg());
    let items = f.poll_once();
    let target = items.iter().find_map(|it| match it {
        FollowItem::Status(FollowStatus::Symlink { target, outside }) => Some((target, *outside)),
        _ => None,
    });
    assert_eq!(
        target,
        Some((&fs::canonicalize(&key).unwrap(), true)),
        "{items:?}"
    );
    let shown = FollowStatus::Symlink {
        target: key.clone(),
        outside: true,
    }
    .to_string();
    assert!(
        shown.starts_with("warning: symbolic link leaves its directory"),
        "{shown}"
    );
    assert_eq!(render(items), ["SymlinkOutside", "Following", "s@1"]);

    let strict = FollowConfig {
        follow_symlinks: false,
        ..cfg()
    };
    let mut f = Follower::new(&p, strict);
    assert_eq!(poll(&mut f), ["SymlinkRefused"]);
    assert!(poll(&mut f).is_empty(), "a refusal is reported once");
    fs::remove_file(&p).unwrap();
    append(&p, &line("a"));
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    // A followed file replaced by a link: refused too.
    fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink(&key, &p).unwrap();
    assert_eq!(poll(&mut f), ["Replaced", "SymlinkRefused"]);
}

/// B33: a large file is followed from a bounded tail (starting at a line), and said so; the
/// first lines are not read. A later file at the path (after a rotation) is read from its
/// start.
#[test]
fn a_huge_sparse_file_is_followed_from_its_tail() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &line("first"));
    // 10 GB of holes, then a line break and one event: nothing stored, nothing to read.
    let f = OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(10 << 30).unwrap();
    drop(f);
    append(&p, &format!("\n{}", line("last")));
    let size = fs::metadata(&p).unwrap().len();
    let mut f = Follower::new(&p, cfg());
    let items = f.poll_once();
    let skipped = items.iter().find_map(|it| match it {
        FollowItem::Status(FollowStatus::Tail { skipped }) => Some(*skipped),
        _ => None,
    });
    assert_eq!(skipped, Some(size - line("last").len() as u64), "{items:?}");
    // Line numbers count from where reading started.
    assert_eq!(render(items), ["Following", "Tail", "last@1"]);
    append(&p, &line("more"));
    assert_eq!(poll(&mut f), ["more@2"]);
    let text = FollowStatus::Tail { skipped: 10 << 30 }.to_string();
    assert!(text.contains("10.0 GiB not loaded"), "{text}");
    assert!(text.contains("doxascope view --no-follow"), "{text}");
    // Rotated away: the next file is read from its start, however large.
    fs::rename(&p, dir.path().join("t.1")).unwrap();
    append(&p, &line("new"));
    assert_eq!(poll(&mut f), ["Rotated", "Following", "new@1"]);
}

/// B33's "the rest on request": after a tail start, `read_whole` reads the file again from
/// its start (announced by `ReadWhole`, the lines numbered from 1 again) and goes on
/// following its end; asking again, or for a file read whole anyway, does nothing.
#[test]
fn the_rest_of_a_large_file_is_read_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let (a, b, c) = (line("a"), line("b"), line("c"));
    append(&p, &format!("{a}{b}{c}"));
    let tail = FollowConfig {
        tail_threshold: 10,
        tail_bytes: c.len() as u64,
        // Small polls: the whole file comes over several of them, in the background.
        max_bytes_per_poll: 8,
        read_chunk: 8,
        ..cfg()
    };
    let mut f = Follower::new(&p, tail);
    assert_eq!(poll(&mut f), ["Following", "Tail", "c@1"]);
    f.read_whole();
    assert_eq!(poll(&mut f), ["ReadWhole", "a@1", "b@2", "c@3"]);
    append(&p, &line("d"));
    assert_eq!(poll(&mut f), ["d@4"]);
    f.read_whole();
    assert!(poll(&mut f).is_empty(), "already read from its start");
    let mut small = Follower::new(&p, cfg());
    assert_eq!(poll(&mut small), ["Following", "a@1", "b@2", "c@3", "d@4"]);
    small.read_whole();
    assert!(poll(&mut small).is_empty());
}

/// B33 with a tail that starts exactly at a line boundary, and a threshold not crossed.
#[test]
fn the_tail_starts_at_a_line_and_small_files_are_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let (a, b, c) = (line("a"), line("b"), line("c"));
    append(&p, &format!("{a}{b}{c}"));
    let c_len = c.len() as u64;
    let tail = |bytes| FollowConfig {
        tail_threshold: 10,
        tail_bytes: bytes,
        ..cfg()
    };
    // Exactly the last line.
    assert_eq!(
        poll(&mut Follower::new(&p, tail(c_len))),
        ["Following", "Tail", "c@1"]
    );
    // One byte more starts inside `b`: reading begins at the next line.
    assert_eq!(
        poll(&mut Follower::new(&p, tail(c_len + 1))),
        ["Following", "Tail", "c@1"]
    );
    // Below the threshold: everything.
    let whole = FollowConfig {
        tail_threshold: 1 << 20,
        tail_bytes: 1,
        ..cfg()
    };
    assert_eq!(
        poll(&mut Follower::new(&p, whole)),
        ["Following", "a@1", "b@2", "c@3"]
    );
}

/// Item 13: "incomplete line pending" leaves the header once the line is complete, and a
/// file followed without notifications says "polling" in the header for as long as it is.
#[test]
fn the_header_forgets_a_completed_pending_line_and_says_polling() {
    use doxascope::tui::data::Store;
    use doxascope::tui::sources::Sources;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let b = line("b");
    append(&p, &format!("{}{}", line("a"), &b[..14]));
    let mut store = Store::new();
    let mut sources = Sources::default();
    let file = sources.add_file(p.clone());
    let mut f = Follower::new(&p, cfg());
    let apply = |items: Vec<FollowItem>, store: &mut Store, sources: &mut Sources| {
        for it in items {
            sources.on_follow(store, file, it);
        }
    };
    apply(f.poll_once(), &mut store, &mut sources);
    apply(f.poll_once(), &mut store, &mut sources);
    assert!(
        sources
            .header(&store, 0)
            .contains("incomplete line pending (14 bytes)"),
        "{}",
        sources.header(&store, 0)
    );
    append(&p, &b[14..]);
    apply(f.poll_once(), &mut store, &mut sources);
    assert_eq!(store.sessions[0].len(), 2);
    let h = sources.header(&store, 0);
    assert!(!h.contains("pending"), "{h}");

    // The follower thread with notifications off, or a directory that cannot be watched
    // (it does not exist yet): the periodic poll follows, and the header says so.
    let missing = dir.path().join("later").join("t.jsonl");
    let (handle, mut rx) = Follower::spawn(&missing, FollowConfig::default()).unwrap();
    let mut seen = Vec::new();
    wait_for(&mut rx, &mut seen, "PollingOnly");
    let file = sources.add_file(missing.clone());
    sources.on_follow(
        &mut store,
        file,
        FollowItem::Status(FollowStatus::PollingOnly("no such directory".into())),
    );
    sources.on_follow(
        &mut store,
        file,
        FollowItem::Status(FollowStatus::Following),
    );
    let h = sources.header(&store, 0);
    assert!(
        h.contains("t.jsonl: following; polling (no file notifications)"),
        "{h}"
    );
    handle.stop();
}

/// B37: a parked follower (descriptor closed to bound descriptors) needs no descriptor while
/// its file is unchanged, reopens it when it grows, and still sees rotation and deletion.
#[test]
fn a_parked_file_is_reopened_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    append(&p, &line("a"));
    let mut f = Follower::new(&p, cfg());
    assert_eq!(poll(&mut f), ["Following", "a@1"]);
    assert!(f.park());
    assert!(!f.holds_descriptor());
    assert!(poll(&mut f).is_empty());
    assert!(!f.holds_descriptor(), "unchanged: not reopened");
    append(&p, &line("b"));
    assert_eq!(poll(&mut f), ["b@2"]);
    assert!(f.holds_descriptor());
    // A pending partial line survives parking and is completed after.
    let c = line("c");
    append(&p, &c[..7]);
    assert!(poll(&mut f).is_empty());
    assert!(f.park());
    assert_eq!(poll(&mut f), ["Pending { bytes: 7 }"]);
    append(&p, &c[7..]);
    assert_eq!(poll(&mut f), ["c@3"]);
    // Rotated while parked: the new file is followed as the continuation.
    assert!(f.park());
    fs::rename(&p, dir.path().join("t.1")).unwrap();
    append(&p, &line("d"));
    assert_eq!(poll(&mut f), ["Rotated", "Following", "d@1"]);
    // Deleted while parked.
    assert!(f.park());
    fs::remove_file(&p).unwrap();
    assert_eq!(poll(&mut f), ["Deleted", "Waiting"]);
}
