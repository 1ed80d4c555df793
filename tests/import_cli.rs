//! Opening any format from the command line: `import`, and `validate`, `audit`, `export`,
//! `repl` on files of other formats; unknown and broken sources get one clear line.

#[path = "support/external.rs"]
mod external;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn doxascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p: PathBuf = dir.join(name);
    std::fs::write(&p, bytes).expect("temp file");
    p.to_string_lossy().into_owned()
}

#[test]
fn v1_passes_through_import_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let v1 = b"{\"kind\":\"announce\",\"formula\":\"p\"}\n{\"kind\":\"log\"}\n";
    let f = write(dir.path(), "t.jsonl", v1);
    let o = doxascope(&["import", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(o.stdout, v1);
    assert!(
        text(&o.stderr).contains(
            "read as doxascope trace v1 (JSON lines) (v1): 2 events in 1 session, 0 notes"
        ),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn an_unknown_document_is_one_line_naming_what_it_looks_like() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = write(
        dir.path(),
        "config.json",
        b"{\n  \"name\": \"x\",\n  \"settings\": {\"a\": 1}\n}\n",
    );
    for (args, code) in [
        (vec!["import", f.as_str()], 1),
        (vec!["audit", f.as_str()], 2),
        (vec!["export", f.as_str(), "--format", "json"], 2),
    ] {
        let o = doxascope(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(
                "a JSON document with the keys \"name\", \"settings\": not a format doxascope reads"
            ),
            "{err}"
        );
        assert!(err.contains("config.json"), "{err}");
    }
    // validate reports it like a bad line: counted as an error, the other files checked.
    let good = write(dir.path(), "good.jsonl", b"{\"kind\":\"log\"}\n");
    let o = doxascope(&["validate", &f, &good]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.ends_with("1 event, 1 error, 0 warnings in 2 files\n"),
        "{out}"
    );
}

#[test]
fn archives_and_binary_files_are_refused_without_a_flood_of_line_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut zip = b"PK\x03\x04".to_vec();
    zip.extend_from_slice(&[0; 22]);
    zip.extend_from_slice(&[9, 0, 0, 0]);
    zip.extend_from_slice(b"readme.md\n\n\nmore\nlines\n");
    let z = write(dir.path(), "other.zip", &zip);
    let g = write(dir.path(), "t.jsonl.gz", b"\x1f\x8b\x08\x00\n\n\n\n");
    for (f, what) in [
        (
            &z,
            "a ZIP archive (first entry \"readme.md\") that is no Inspect AI log",
        ),
        (&g, "gzip-compressed data"),
    ] {
        let o = doxascope(&["validate", f]);
        assert_eq!(o.status.code(), Some(1));
        let out = text(&o.stdout);
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(out.contains(what), "{out}");
    }
}

#[test]
fn broken_v1_lines_are_still_reported_one_by_one() {
    // JSON lines whose first line is broken are v1 with a bad line, not an unknown format.
    let dir = tempfile::tempdir().expect("temp dir");
    let f = write(
        dir.path(),
        "t.jsonl",
        b"{\"kind\":\"announce\",\n{\"kind\":\"log\"}\noops\n",
    );
    let o = doxascope(&["validate", &f]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.ends_with("1 event, 2 errors, 0 warnings in 1 file\n"),
        "{out}"
    );
}

#[test]
fn import_format_names_are_checked() {
    let o = doxascope(&["import", "x.json", "--format", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    for name in [
        "v1",
        "otlp",
        "inspect",
        "langfuse",
        "langsmith",
        "letta",
        "graphiti",
    ] {
        assert!(
            err.contains(&format!(" {name},")) || err.contains(&format!(" {name}, found")),
            "{name}: {err}"
        );
    }
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn export_and_repl_read_other_formats_and_say_so() {
    let Some(agent) = external::path("letta/memgpt_agent_with_convo.v1-2025-03.af") else {
        return;
    };
    let agent = agent.to_str().expect("a UTF-8 path");
    let o = doxascope(&["export", agent, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("read as a Letta agent file (letta)"),
        "{}",
        text(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    // No formulas were invented: Σ is the memory blocks as value atoms (docs/trace-format.md,
    // "Value atoms"), each with its latest value; the ground beliefs keep the write history.
    let sigma: Vec<(&str, &str)> = v["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["id"].as_str().unwrap(), b["formula"].as_str().unwrap()))
        .collect();
    assert_eq!(sigma.len(), 2, "{v}");
    let (_, human) = sigma.iter().find(|(id, _)| *id == "human").unwrap();
    assert!(
        human.starts_with("human = \"") && human.contains("First name: Sam"),
        "{human}"
    );
    assert!(!human.contains("First name: Sarah"), "{human}");
    let human = v["bdi"]["ground_beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "human")
        .unwrap();
    assert!(human.to_string().contains("First name: Sam"), "{human}");
}

/// A v1 file with a bad line carrying an OSC sequence (it would retitle the terminal): the
/// bytes pass through exactly, the bad line is a note (counted, sanitized), and nothing on
/// stderr is a raw control character.
#[test]
fn bad_v1_lines_are_sanitized_notes_and_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let v1 = b"{\"kind\":\"log\",\"message\":\"ok\"}\n{\"kind\":\"log\",\"message\":\"bad\x1b]0;pwned\x07 \n";
    let f = write(dir.path(), "t.jsonl", v1);
    let o = doxascope(&["import", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(o.stdout, v1, "a pipe gets the exact bytes");
    let err = text(&o.stderr);
    assert!(
        !err.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control character on stderr: {err:?}"
    );
    assert!(err.contains("note: line 2, column"), "{err}");
    assert!(err.contains("1 event in 1 session, 1 note"), "{err}");
}
