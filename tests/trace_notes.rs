//! Bookmarks and notes: kept in a sidecar next to the trace (the trace is never written),
//! in the user's data directory when the sidecar cannot be written, listed by step, removed by
//! number; a broken notes file is kept aside rather than lost, entries this version cannot
//! read are written back unchanged, and note texts are sanitized before they are shown.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use doxascope::model::Model;
use doxascope::repl::{ModelSigma, Repl};
use doxascope::trace::notes::{NoteStore, sidecar_path};

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join("treasure-hunt.jsonl")
}

/// A copy of the treasure-hunt sample in a fresh directory.
fn trace_in(dir: &Path) -> PathBuf {
    let p = dir.join("run.jsonl");
    std::fs::copy(sample(), &p).unwrap();
    p
}

fn repl_on(trace: &Path) -> Repl {
    let m = Model::load(&[trace]).unwrap();
    let session = m.timelines()[0].name().to_string();
    let file = m.file_of(&session).unwrap().to_string();
    let mut r = Repl::new(Box::new(ModelSigma::new(Arc::new(m), session)));
    r.set_note_store(NoteStore::open(&file));
    r
}

fn doxascope(args: &[&str], data: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .env("XDG_DATA_HOME", data)
        .output()
        .unwrap()
}

#[test]
fn notes_live_in_a_sidecar_and_never_in_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let before = std::fs::read(&trace).unwrap();
    let mut r = repl_on(&trace);
    r.run_line("at 8").unwrap();
    let n = r.run_line("note the map says B").unwrap().to_json("note");
    assert_eq!(n["note"]["step"], 8);
    assert_eq!(n["note"]["text"], "the map says B");
    assert_eq!(n["in_data_dir"], false);
    let side = sidecar_path(trace.to_str().unwrap()).unwrap();
    assert_eq!(side, dir.path().join("run.jsonl.notes.json"));
    assert_eq!(n["location"], side.display().to_string());
    assert!(side.is_file());
    // A bookmark on a belief, then one on a belief not in Σ (refused).
    r.run_line("at 11").unwrap();
    let b = r
        .run_line("note --belief t3-not-a")
        .unwrap()
        .to_json("note");
    assert_eq!(b["note"]["bookmark"], true);
    assert_eq!(b["note"]["belief"], "t3-not-a");
    assert!(r.run_line("note --belief t5-user-a later").is_err());
    // Listed by step, with their numbers; one removed.
    let l = r.run_line("notes").unwrap().to_json("notes");
    let steps: Vec<u64> = l["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [8, 11]);
    r.run_line("unnote 1").unwrap();
    assert!(r.run_line("unnote 1").is_err());
    let l = r.run_line("notes").unwrap().to_json("notes");
    assert_eq!(l["notes"].as_array().unwrap().len(), 1);
    // A second viewer of the same trace sees them and adds to them.
    let mut other = repl_on(&trace);
    other.run_line("note from the other window").unwrap();
    let l = r.run_line("notes").unwrap().to_json("notes");
    assert_eq!(l["notes"].as_array().unwrap().len(), 2);
    // The trace was never touched.
    assert_eq!(std::fs::read(&trace).unwrap(), before);
}

#[test]
fn notes_fall_back_to_the_data_directory_when_the_sidecar_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    // A read-only directory is the real case; root writes there anyway, so when a probe
    // write succeeds a directory where the sidecar would go makes it unwritable instead.
    use std::os::unix::fs::PermissionsExt;
    let side = sidecar_path(trace.to_str().unwrap()).unwrap();
    let perms = std::fs::metadata(dir.path()).unwrap().permissions();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let privileged = std::fs::write(dir.path().join(".probe"), b"").is_ok();
    if privileged {
        let _ = std::fs::remove_file(dir.path().join(".probe"));
        std::fs::set_permissions(dir.path(), perms.clone()).unwrap();
        std::fs::create_dir(&side).unwrap();
    }
    let t = trace.to_str().unwrap();
    let out = doxascope(
        &["notes", t, "--add", "kept elsewhere", "--at", "3", "--json"],
        data.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["in_data_dir"], true);
    let loc = v["location"].as_str().unwrap();
    assert!(
        loc.starts_with(
            data.path()
                .join("doxascope")
                .join("notes")
                .to_str()
                .unwrap()
        ),
        "{loc}"
    );
    assert!(loc.contains("run.jsonl-"), "{loc}");
    // Read back from there.
    let out = doxascope(&["notes", t, "--json"], data.path());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["notes"][0]["text"], "kept elsewhere");
    assert_eq!(v["notes"][0]["step"], 3);
    std::fs::set_permissions(dir.path(), perms).unwrap();
}

#[test]
fn a_broken_notes_file_is_kept_and_unknown_entries_survive() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let t = trace.to_str().unwrap();
    let side = sidecar_path(t).unwrap();
    std::fs::write(&side, "{ this is not json").unwrap();
    let store = NoteStore::open(t);
    assert_eq!(store.problems().len(), 1);
    assert!(
        store.problems()[0].contains(":1:"),
        "{:?}",
        store.problems()
    );
    let mut store = store;
    store.add("treasure-hunt.jsonl", 2, None, "fresh").unwrap();
    let mut broken = side.as_os_str().to_owned();
    broken.push(".broken");
    assert_eq!(
        std::fs::read_to_string(PathBuf::from(broken)).unwrap(),
        "{ this is not json"
    );
    // An entry from a future version is written back as it was.
    let doc = serde_json::json!({"doxascope_notes": 1, "trace": "run.jsonl", "notes": [
        {"id": 7, "session": "treasure-hunt.jsonl", "step": 4, "text": "old", "belief": null},
        {"id": 8, "shape": "circle", "future": true},
    ]});
    std::fs::write(&side, doc.to_string()).unwrap();
    let mut store = NoteStore::open(t);
    assert_eq!(store.notes().len(), 1);
    assert_eq!(store.problems().len(), 1);
    let n = store.add("treasure-hunt.jsonl", 5, None, "new").unwrap();
    assert_eq!(n.id, 8, "numbers continue after the readable ones");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    let notes = written["notes"].as_array().unwrap();
    assert!(notes.iter().any(|x| x["shape"] == "circle"));
    assert_eq!(notes.len(), 3);
}

#[test]
fn hostile_note_texts_are_sanitized_when_shown() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let t = trace.to_str().unwrap();
    let evil = "boom\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let out = doxascope(&["notes", t, "--add", evil], data.path());
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("boom"));
    let mut r = repl_on(&trace);
    let shown = r.run_line("notes").unwrap().to_text();
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    // The file keeps it as written (it is data, not display).
    let n = NoteStore::open(t);
    assert_eq!(n.notes()[0].text, evil);
    // Usage errors: a step past the end, a belief not in Σ.
    assert_eq!(
        doxascope(&["notes", t, "--add", "x", "--at", "999"], data.path())
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        doxascope(
            &[
                "notes", t, "--add", "x", "--at", "3", "--belief", "t2-map-b"
            ],
            data.path()
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        doxascope(&["notes", t, "--remove", "42"], data.path())
            .status
            .code(),
        Some(2)
    );
}

/// Runs doxascope with its memory and time bounded: a file read without bound ends the run
/// (an allocation failure) rather than the machine, and a blocked one is killed.
fn doxascope_bounded(args: &[&str], data: &Path, secs: u64) -> Output {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 500000; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .env("XDG_DATA_HOME", data)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > until {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "doxascope {args:?} did not finish within {secs} s: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[test]
fn a_symlink_planted_at_the_temporary_name_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let t = trace.to_str().unwrap();
    let side = sidecar_path(t).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    // The name the temporary file once had: the sidecar's, `.tmp` and the process id.
    let planted = with_suffix(&side, &format!(".tmp{}", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let mut store = NoteStore::open(t);
    store.add("treasure-hunt.jsonl", 2, None, "hello").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(&side).unwrap();
    assert!(meta.file_type().is_file(), "the sidecar must stay a file");
    assert!(
        std::fs::symlink_metadata(&planted)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(NoteStore::open(t).notes()[0].text, "hello");
}

#[test]
fn a_fifo_or_a_device_at_the_sidecar_name_is_neither_read_nor_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let t = trace.to_str().unwrap();
    let side = sidecar_path(t).unwrap();
    for planted in ["fifo", "/dev/zero", "/dev/urandom"] {
        let _ = std::fs::remove_file(&side);
        if planted == "fifo" {
            let ok = Command::new("mkfifo").arg(&side).status().unwrap();
            assert!(ok.success());
        } else {
            std::os::unix::fs::symlink(planted, &side).unwrap();
        }
        let out = doxascope_bounded(&["notes", t, "--add", planted, "--json"], data.path(), 20);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{planted}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["in_data_dir"], true, "{planted}: {v}");
        assert!(
            v["problems"][0]
                .as_str()
                .unwrap()
                .contains("not a regular file"),
            "{planted}: {v}"
        );
        let texts: Vec<&str> = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["text"].as_str().unwrap())
            .collect();
        assert!(texts.contains(&planted), "{planted}: {v}");
        // It is still what was planted.
        let m = std::fs::symlink_metadata(&side).unwrap();
        assert!(!m.file_type().is_file(), "{planted} was replaced");
    }
}

#[test]
fn two_writers_never_lose_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let t = trace.to_str().unwrap().to_string();
    let (writers, each) = (6, 15);
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let t = t.clone();
            std::thread::spawn(move || {
                let mut store = NoteStore::open(&t);
                for i in 0..each {
                    store
                        .add("treasure-hunt.jsonl", 1, None, &format!("w{w} n{i}"))
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let store = NoteStore::open(&t);
    assert!(store.problems().is_empty(), "{:?}", store.problems());
    let mut texts: Vec<&str> = store.notes().iter().map(|n| n.text.as_str()).collect();
    texts.sort_unstable();
    texts.dedup();
    assert_eq!(texts.len(), writers * each);
    let mut ids: Vec<u64> = store.notes().iter().map(|n| n.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), writers * each, "note numbers are unique");
}

#[test]
fn a_read_only_sidecar_fails_loudly_and_keeps_what_was_typed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let t = trace.to_str().unwrap();
    let side = sidecar_path(t).unwrap();
    NoteStore::open(t)
        .add("treasure-hunt.jsonl", 1, None, "first")
        .unwrap();
    std::fs::set_permissions(&side, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&side).unwrap();
    let out = doxascope(&["notes", t, "--add", "precious words"], data.path());
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("read-only"), "{err}");
    assert!(
        err.contains("precious words"),
        "the typed text is shown: {err}"
    );
    assert_eq!(std::fs::read(&side).unwrap(), before);
    assert!(
        !data.path().join("doxascope").exists(),
        "no note went silently elsewhere"
    );
    // The screen's `:note` says so too, with the text.
    let mut r = repl_on(&trace);
    let e = r.run_line("note keep me").unwrap_err().to_text();
    assert!(e.contains("read-only") && e.contains("keep me"), "{e}");
    let listed = NoteStore::open(t);
    assert_eq!(listed.notes().len(), 1);
    std::fs::set_permissions(&side, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn a_file_that_could_not_be_read_is_never_replaced_and_every_broken_copy_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_in(dir.path());
    let t = trace.to_str().unwrap();
    let side = sidecar_path(t).unwrap();
    // Valid notes, but over the size read.
    let pad = "x".repeat((doxascope::trace::notes::MAX_FILE + 10) as usize);
    let big = format!(r#"{{"doxascope_notes":1,"notes":[],"pad":"{pad}"}}"#);
    std::fs::write(&side, &big).unwrap();
    drop(pad);
    let mut store = NoteStore::open(t);
    assert!(
        store.problems().iter().any(|p| p.contains("larger than")),
        "{:?}",
        store.problems()
    );
    store.add("treasure-hunt.jsonl", 1, None, "one").unwrap();
    // Bad UTF-8.
    let bad = b"{\"doxascope_notes\":1,\"notes\":[],\"x\":\"\xff\"}".to_vec();
    std::fs::write(&side, &bad).unwrap();
    let mut store = NoteStore::open(t);
    assert!(
        store.problems().iter().any(|p| p.contains("UTF-8")),
        "{:?}",
        store.problems()
    );
    store.add("treasure-hunt.jsonl", 1, None, "two").unwrap();
    // Not JSON.
    std::fs::write(&side, "{ not json").unwrap();
    NoteStore::open(t)
        .add("treasure-hunt.jsonl", 1, None, "three")
        .unwrap();
    assert!(
        std::fs::read(with_suffix(&side, ".broken")).unwrap() == big.as_bytes(),
        "the oversized file is kept whole"
    );
    assert_eq!(std::fs::read(with_suffix(&side, ".broken.1")).unwrap(), bad);
    assert_eq!(
        std::fs::read_to_string(with_suffix(&side, ".broken.2")).unwrap(),
        "{ not json"
    );
    let store = NoteStore::open(t);
    assert_eq!(store.notes().len(), 1);
    assert_eq!(store.notes()[0].text, "three");
}
