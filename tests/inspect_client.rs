//! Inspect AI as a real client: `inspect-ai` from PyPI (in a venv under target/, made by
//! `scripts/setup-inspect.sh`) runs `tests/data/inspect/memory_task.py` against its mock
//! model: a tool call that writes the sample's store twice (the second replaces the first),
//! an answer, a scorer. It writes an `.eval` (zstd-compressed members) and a `.json` log;
//! doxascope opens both, by their content, and shows the store replacement as a memory
//! revision caused by the tool call.
//!
//! Without Inspect installed the test is ignored, with the reason (build.rs); under CI
//! (`CI=true`) it installs Inspect itself and fails when it cannot.

use std::path::{Path, PathBuf};
use std::process::Command;

use doxascope::model::Model;
use doxascope::model::bdi::state_at;
use doxascope::trace::Body;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn venv() -> PathBuf {
    std::env::var_os("DOXASCOPE_INSPECT_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/inspect-venv"))
}

/// Makes sure Inspect is installed (the setup script is a no-op once it is).
fn setup() {
    let o = Command::new("bash")
        .arg(root().join("scripts/setup-inspect.sh"))
        .current_dir(root())
        .output()
        .expect("bash runs");
    assert!(
        o.status.success(),
        "inspect-ai could not be installed (is the package index reachable?): {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs the task, writing a log of `format` into `dir`; returns the log's path.
fn run_task(format: &str, dir: &Path) -> PathBuf {
    let o = Command::new(venv().join("bin/python"))
        .arg(root().join("tests/data/inspect/memory_task.py"))
        .arg(format)
        .arg(dir)
        .env("INSPECT_LOG_LEVEL", "warning")
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "the Inspect task failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("log dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == format))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs[0].clone()
}

fn doxascope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("runs")
}

#[test]
#[cfg_attr(
    doxascope_no_inspect,
    ignore = "inspect-ai is not installed: run scripts/setup-inspect.sh (CI installs it)"
)]
fn inspect_logs_of_a_real_run_open_in_both_formats() {
    setup();
    let dir = tempfile::tempdir().expect("temp dir");
    for format in ["eval", "json"] {
        let log = run_task(format, &dir.path().join(format));
        // Detected from the content: the same log under a name that says nothing.
        let anon = dir.path().join(format!("{format}-log.bin"));
        std::fs::copy(&log, &anon).expect("copy");
        let out = dir.path().join(format!("{format}.jsonl"));
        let o = doxascope(&[
            "import",
            anon.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("read as an Inspect AI eval log (inspect)"),
            "{err}"
        );
        // validate and audit read the log itself.
        let v = doxascope(&["validate", log.to_str().unwrap()]);
        let vout = String::from_utf8_lossy(&v.stdout);
        assert_eq!(v.status.code(), Some(0), "{vout}");
        assert!(
            vout.contains("0 errors, 0 warnings in 1 file (1 file imported: inspect)"),
            "{vout}"
        );
        let a = doxascope(&["audit", log.to_str().unwrap()]);
        assert_eq!(
            a.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&a.stdout)
        );

        let m = Model::load(&[&log]).expect("loads");
        assert_eq!(m.imported().len(), 1);
        let tl = &m.timelines()[0];
        assert!(tl.errors().is_empty(), "{format}: {:?}", tl.errors());
        let kinds = |k: &str| {
            tl.event_positions()
                .iter()
                .filter(|&&p| m.log().events[p as usize].kind_name() == k)
                .count()
        };
        assert_eq!(
            kinds("llm_call"),
            3,
            "{format}: three scripted model outputs"
        );
        assert_eq!(kinds("tool_call"), 2, "{format}");
        assert_eq!(
            kinds("belief"),
            4,
            "{format}: Chad, then Sarah, and the two tool results as observations"
        );
        assert_eq!(kinds("retract"), 1, "{format}");
        assert_eq!(kinds("score"), 1, "{format}");
        assert_eq!(kinds("answer"), 1, "{format}");
        // The store's replace is a retraction of "Chad", caused by the second tool call.
        let r = &tl.retracts()[0];
        let old = tl.bdi_log().retracted(m.log(), r.ground.unwrap()).unwrap();
        assert_eq!((old.name, old.value), ("name", Some(&Value::from("Chad"))));
        let cause = &m.log().events[tl.event_pos_at(r.step - 1).unwrap() as usize];
        assert_eq!(cause.kind_name(), "tool_call");
        assert_eq!(cause.extra.value("args").unwrap()["value"], "Sarah");
        let Body::Retract(x) = &m.log().events[r.event as usize].body else {
            panic!()
        };
        let id = cause.id.as_deref().unwrap();
        assert!(x.reason.as_deref().unwrap().contains(id), "{:?}", x.reason);
        let held = state_at(tl.bdi_log(), m.log(), tl.len());
        assert_eq!(
            held.ground_belief("name").and_then(|g| g.value),
            Some(&Value::from("Sarah"))
        );
        // Each call's result is an observation of its own, apart from the store's key.
        let observed: Vec<_> = held
            .ground
            .iter()
            .filter(|g| g.name.starts_with("tool:remember#"))
            .map(|g| g.value)
            .collect();
        assert_eq!(
            observed,
            [Some(&Value::from("remembered name")); 2],
            "{format}"
        );
        // The score grades the answer.
        let (step, pos) = tl.scores()[0];
        let Body::Score(s) = &m.log().events[pos as usize].body else {
            panic!()
        };
        assert_eq!(
            s.value.as_ref().map(|v| v.to_string()).as_deref(),
            Some("C")
        );
        let target = tl.score_target(m.log(), step).expect("the answer");
        let answer = &m.log().events[tl.event_pos_at(target).unwrap() as usize];
        let Body::Answer(a) = &answer.body else {
            panic!()
        };
        assert_eq!(a.text.as_deref(), Some("Your name is Sarah."));
    }
}
