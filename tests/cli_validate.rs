//! `doxascope validate` run as a user runs it: exit codes, output format, sanitization.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn doxascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("temp file");
    p.to_string_lossy().into_owned()
}

#[test]
fn clean_file_exits_0_with_a_summary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = write(
        dir.path(),
        "ok.jsonl",
        b"{\"kind\":\"announce\",\"formula\":\"p\"}\n{\"kind\":\"log\",\"message\":\"hi\"}\n",
    );
    let o = doxascope(&["validate", &f]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(stdout(&o), "2 events, 0 errors, 0 warnings in 1 file\n");
}

#[test]
fn warnings_alone_exit_0_errors_exit_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let warn = write(
        dir.path(),
        "warn.jsonl",
        b"{\"kind\":\"log\",\"seq\":1}\n{\"kind\":\"log\",\"seq\":1}\n",
    );
    let o = doxascope(&["validate", &warn]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.starts_with(&format!("{warn}:2:")) && out.contains(": warning: duplicate seq 1"),
        "{out}"
    );
    assert!(
        out.ends_with("2 events, 0 errors, 1 warning in 1 file\n"),
        "{out}"
    );

    let err = write(dir.path(), "err.jsonl", b"{\"kind\":\"log\"}\n{\"kind\":\n");
    let o = doxascope(&["validate", &warn, &err]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains(&format!("{err}:2:8: error: EOF while parsing")),
        "{out}"
    );
    assert!(
        out.ends_with("3 events, 1 error, 1 warning in 2 files\n"),
        "{out}"
    );
}

#[test]
fn missing_file_exits_2_but_checks_the_others() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = write(dir.path(), "bad.jsonl", b"oops\n");
    let missing = dir.path().join("nope.jsonl");
    let missing = missing.to_string_lossy();
    let o = doxascope(&["validate", &missing, &bad]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nope.jsonl: cannot read"), "{err}");
    let out = stdout(&o);
    assert!(out.contains(&format!("{bad}:1:1: error: ")), "{out}");
    assert!(out.contains("1 error") && out.contains("(1 file could not be read)"));
}

#[test]
fn bad_arguments_exit_2_and_help_exits_0() {
    assert_eq!(doxascope(&["validate"]).status.code(), Some(2));
    assert_eq!(doxascope(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        doxascope(&["validate", "--max-line-bytes", "lots", "x"])
            .status
            .code(),
        Some(2)
    );
    let help = doxascope(&["validate", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("FILE"));
}

#[test]
fn hostile_bytes_never_reach_the_terminal() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Raw and escaped controls in values that end up in error messages, and an escape
    // sequence in the file name itself.
    let f = write(
        dir.path(),
        "evil\u{1b}]0;x\u{7}.jsonl",
        b"{\"kind\":\"announce\",\"formula\":\"p\",\"role\":\"\\u001b[2J\\u009b31m\"}\n\
          {\"kind\":\"log\",\"ts\":\"\\u001b]52;c;AAAA\\u0007\"}\n\
          {\"kind\":\"\x1b[31mred\"}\n",
    );
    let o = doxascope(&["validate", &f]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    for c in out.chars() {
        let u = c as u32;
        assert!(
            c == '\n' || !(u < 0x20 || (0x7f..=0x9f).contains(&u)),
            "control U+{u:04X} in output: {out:?}"
        );
    }
    assert!(
        out.contains("␛[2J"),
        "escapes are shown, not executed: {out}"
    );
    assert_eq!(out.lines().count(), 4, "{out}");
}

#[test]
fn stdin_and_the_line_cap_option() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["validate", "--max-line-bytes", "40", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            b"{\"kind\":\"log\"}\n{\"kind\":\"log\",\"message\":\"a rather long message\"}\n",
        )
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.starts_with("<stdin>:2:1: error: line is 48 bytes long, over the limit of 40 bytes"),
        "{out}"
    );
    assert!(
        out.ends_with("1 event, 1 error, 0 warnings in 1 file\n"),
        "{out}"
    );
}

/// A log whose first 64 KiB were zeroed (`copytruncate` while the writer kept its offset) is
/// refused as binary by detection; `--format v1` reads it as v1 on `validate`, `audit` and
/// `view`, the NUL line one problem and the events after it read.
#[test]
fn format_v1_reads_a_trace_whose_head_is_nuls() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = vec![0u8; 64 * 1024];
    bytes.extend_from_slice(b"\n{\"kind\":\"announce\",\"formula\":\"p\"}\n{\"kind\":\"log\"}\n");
    let f = write(dir.path(), "holed.jsonl", &bytes);
    let refused = doxascope(&["validate", &f]);
    assert!(
        stdout(&refused).contains("binary"),
        "detection refuses it: {}",
        stdout(&refused)
    );
    let o = doxascope(&["validate", "--format", "v1", &f]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("2 events, 1 error"), "{out}");
    let o = doxascope(&["audit", "--format", "v1", "--json", &f]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["summary"].is_object(), "{v}");
    let o = doxascope(&["audit", &f]);
    assert_eq!(o.status.code(), Some(2));
    // `view` checks its files before taking the terminal: without --format the head is
    // refused there; with it the file goes to the viewer (which here has no terminal).
    let o = doxascope(&["view", "--no-follow", &f]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("binary"));
    let o = doxascope(&["view", "--no-follow", "--format", "v1", &f]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("binary"), "{err}");
}
