//! `doxascope report` names its inputs by SHA-256, its version and options, and
//! `doxascope verify-report REPORT FILE...` says whether the report still holds: exit 0
//! when the inputs' hashes match and recomputing gives the same findings and verdicts, 1
//! naming what differs, 2 when the report has no record.

use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn doxascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("doxascope runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The SHA-256 of a file by coreutils' `sha256sum`, an implementation that is not
/// doxascope's.
fn sha256sum(p: &Path) -> String {
    let o = Command::new("sha256sum")
        .arg(p)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// A copy of the treasure hunt and its report.
fn setup(dir: &Path) -> (String, String) {
    let trace = dir.join("treasure-hunt.jsonl");
    std::fs::copy(root().join("sample-traces/treasure-hunt.jsonl"), &trace).unwrap();
    let report = dir.join("r.html");
    let o = doxascope(&[
        "report",
        trace.to_str().unwrap(),
        "-o",
        report.to_str().unwrap(),
        "--policy",
        "confidence",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        report.to_str().unwrap().to_string(),
        trace.to_str().unwrap().to_string(),
    )
}

#[test]
fn the_report_names_hashes_version_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let (report, trace) = setup(dir.path());
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains(&sha256sum(Path::new(&trace))), "no hash");
    assert!(html.contains(env!("CARGO_PKG_VERSION")));
    assert!(html.contains("<code>confidence</code>"));
    assert!(html.contains(r#"id="doxascope-recheck""#));
}

#[test]
fn an_unchanged_report_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (report, trace) = setup(dir.path());
    let o = doxascope(&["verify-report", &report, &trace]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("holds"), "{}", stdout(&o));
}

/// A claim changed in the trace: the hash differs and the audit finds a mismatch the
/// report did not have; both are named.
#[test]
fn a_changed_trace_is_named_with_the_finding_it_brings() {
    let dir = tempfile::tempdir().unwrap();
    let (report, trace) = setup(dir.path());
    let text = std::fs::read_to_string(&trace).unwrap();
    // The first verify claims newinfo; make it claim entailed.
    let changed = text.replacen(r#""outcome": "newinfo""#, r#""outcome": "entailed""#, 1);
    let changed = if changed == text {
        text.replacen(r#""outcome":"newinfo""#, r#""outcome":"entailed""#, 1)
    } else {
        changed
    };
    assert_ne!(changed, text, "no verify claim to change");
    std::fs::write(&trace, changed).unwrap();
    let o = doxascope(&["verify-report", &report, &trace]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("does not hold"), "{out}");
    assert!(out.contains("changed: SHA-256"), "{out}");
    assert!(
        out.contains("finding claimed-outcome-mismatch at step")
            && out.contains("found now but not in the report"),
        "{out}"
    );
}

/// Bytes that change nothing the audit sees still change the hash: the report no longer
/// names this input.
#[test]
fn a_changed_byte_alone_is_a_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (report, trace) = setup(dir.path());
    let mut text = std::fs::read_to_string(&trace).unwrap();
    text.push('\n');
    std::fs::write(&trace, text).unwrap();
    let o = doxascope(&["verify-report", &report, &trace]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("1 difference(s)"), "{out}");
    assert!(out.contains("input 1"), "{out}");
}

/// A verdict edited in the report's record is caught by the recomputation.
#[test]
fn an_edited_record_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let (report, trace) = setup(dir.path());
    let html = std::fs::read_to_string(&report).unwrap();
    let edited = html.replacen(r#""verify","contradiction"]"#, r#""verify","entailed"]"#, 1);
    assert_ne!(edited, html);
    std::fs::write(&report, edited).unwrap();
    let o = doxascope(&["verify-report", &report, &trace]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("report says entailed, recomputed now contradiction"),
        "{out}"
    );
}

#[test]
fn a_report_without_a_record_or_a_missing_file_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let (report, trace) = setup(dir.path());
    let plain = dir.path().join("plain.html");
    std::fs::write(&plain, "<html><body>no record</body></html>").unwrap();
    let o = doxascope(&["verify-report", plain.to_str().unwrap(), &trace]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no re-check record"));
    let gone = dir.path().join("gone.jsonl");
    let o = doxascope(&["verify-report", &report, gone.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
}
