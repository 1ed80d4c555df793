//! `doxascope audit --json` on every bundled sample, against golden files and against the
//! expectations of `docs/samples.md` (which findings, at which step, with which evidence).
//!
//! The golden files (`tests/golden/audit/<sample>.json`) pin the whole output; rewrite them
//! with `UPDATE_GOLDEN=1 cargo test --test audit_golden` and review the diff by hand against
//! `docs/samples.md`. The explicit assertions below say what the golden content must mean, so
//! a careless update cannot bless a wrong audit.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const SAMPLES: &[&str] = &[
    "treasure-hunt",
    "dns-troubleshooting",
    "alice-bob-norms",
    "greedysat-stress",
    "kipchoge-bdi",
    "bdi-bookkeeping",
    "bdi-bad-retrieval",
    "bdi-file-read",
    "bdi-computation",
    "bdi-answer-format",
];

/// Samples with a golden file but no expectations in `docs/samples.md` (the reader's
/// malformed-input sample: it pins the `parse-error` findings and their locations).
const GOLDEN_ONLY: &[&str] = &["broken"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `audit --json` on a sample (path relative to the crate root, so the locations in the
/// output do not depend on where the checkout lives).
fn audit(sample: &str, extra: &[&str]) -> (Value, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .current_dir(root())
        .arg("audit")
        .arg("--json")
        .args(extra)
        .arg(format!("sample-traces/{sample}.jsonl"))
        .output()
        .expect("run doxascope");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{sample}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (v, out.status.code().unwrap_or(-1))
}

fn golden_path(sample: &str) -> PathBuf {
    root()
        .join("tests/golden/audit")
        .join(format!("{sample}.json"))
}

fn check_golden(sample: &str, actual: &Value) {
    let path = golden_path(sample);
    let text = serde_json::to_string_pretty(actual).expect("serialize") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).expect("mkdir");
        std::fs::write(&path, &text).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    let want: Value = serde_json::from_str(&want).expect("golden is JSON");
    assert_eq!(
        &want,
        actual,
        "{sample}: audit output differs from {}; if the change is intended, rerun with \
         UPDATE_GOLDEN=1 and review the diff",
        path.display()
    );
}

/// (code, severity, step) of every finding.
fn findings(v: &Value) -> Vec<(String, String, u64)> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or("").to_string(),
                f["severity"].as_str().unwrap_or("").to_string(),
                f["step"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn cell(v: &Value, claimed: &str, recomputed: &str) -> u64 {
    v["claimed_vs_recomputed"][claimed][recomputed]
        .as_u64()
        .expect("matrix cell")
}

fn matrix_total(v: &Value) -> u64 {
    let mut n = 0;
    for row in v["claimed_vs_recomputed"]
        .as_object()
        .expect("matrix")
        .values()
    {
        for c in row.as_object().expect("row").values() {
            n += c.as_u64().expect("count");
        }
    }
    n
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn goldens_match() {
    for s in SAMPLES.iter().chain(GOLDEN_ONLY) {
        let (v, _) = audit(s, &[]);
        check_golden(s, &v);
    }
}

#[test]
fn treasure_hunt_step_5_revised_as_the_paper_resolves_it() {
    let (v, code) = audit("treasure-hunt", &[]);
    assert_eq!(code, 0);
    // The contradiction at step 15 is handled by the revise at 19, whose policy (confidence)
    // retracts exactly what it names; Σ ends consistent; the query and the answer after it
    // agree with Σ.
    assert!(findings(&v).is_empty(), "{:?}", findings(&v));
    assert_eq!(cell(&v, "newinfo", "newinfo"), 2);
    assert_eq!(cell(&v, "entailed", "entailed"), 1);
    assert_eq!(cell(&v, "contradiction", "contradiction"), 1);
    assert_eq!(matrix_total(&v), 4);
    // Another policy would have chosen otherwise: greedy (Algorithm 1, whose fallback keeps
    // the newest beliefs) drops the one-room constraint instead of the map's B. Said as a
    // note only: the trace names its own policy.
    let (g, code) = audit("treasure-hunt", &["--policy", "greedy"]);
    assert_eq!(code, 0);
    let notes: Vec<&Value> = g["findings"].as_array().expect("findings").iter().collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["code"], "revision-policy-mismatch");
    assert_eq!(notes[0]["severity"], "info");
    assert_eq!(notes[0]["step"], 19);
}

/// The state before the revision is still the paper's step 5: the announcement of the
/// user's correction makes Σ inconsistent, with one of the two minimal conflicts.
#[test]
fn treasure_hunt_step_5_is_a_contradiction_until_the_revision() {
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .current_dir(root())
        .args([
            "repl",
            "--json",
            "--at",
            "17",
            "sample-traces/treasure-hunt.jsonl",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(b"consistent\n")?;
            c.wait_with_output()
        })
        .expect("run repl");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["consistent"], false);
    let mut conflict: Vec<String> = v["conflict"]
        .as_array()
        .expect("conflict")
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect();
    conflict.sort();
    assert!(
        conflict == ["t3-not-a", "t5-user-a"] || conflict == ["t1-domain", "t2-map-b", "t5-user-a"],
        "not one of the two minimal conflicts: {conflict:?}"
    );
}

#[test]
fn dns_has_no_findings() {
    let (v, code) = audit("dns-troubleshooting", &[]);
    assert_eq!(code, 0);
    assert!(findings(&v).is_empty(), "{:?}", findings(&v));
    assert_eq!(cell(&v, "newinfo", "newinfo"), 4);
    assert_eq!(cell(&v, "ungrounded", "newinfo"), 1);
    assert_eq!(cell(&v, "entailed", "entailed"), 1);
    assert_eq!(matrix_total(&v), 6);
}

#[test]
fn alice_bob_one_wrong_gate_verdict() {
    let (v, code) = audit("alice-bob-norms", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("claimed-outcome-mismatch".into(), "error".into(), 17),
            ("thought-contradicts-sigma".into(), "error".into(), 22)
        ]
    );
    // The thought that reasons toward revealing the address goes against the norm.
    let t = &v["findings"][1];
    assert_eq!(strings(&t["formulas"]), ["RevealAddress(alice)"]);
    assert_eq!(strings(&t["evidence"]["conflict"]), ["n1-no-address"]);
    assert_eq!(strings(&t["evidence"]["norms"]), ["n1-no-address"]);
    let f = &v["findings"][0];
    assert_eq!(f["evidence"]["claimed"], "ungrounded");
    assert_eq!(f["evidence"]["recomputed"], "entailed");
    assert_eq!(strings(&f["formulas"]), ["Older(alice, carol)"]);
    // One of the supports is the one docs/samples.md names.
    let supports: Vec<Vec<String>> = f["evidence"]["supports"]
        .as_array()
        .expect("supports")
        .iter()
        .map(|s| {
            let mut s = strings(s);
            s.sort();
            s
        })
        .collect();
    assert!(
        supports.contains(&vec![
            "d1-older-ab".to_string(),
            "f2-parent".into(),
            "r1-parent-older".into(),
            "r2-older-trans".into()
        ]),
        "{supports:?}"
    );
    assert_eq!(cell(&v, "newinfo", "newinfo"), 2);
    assert_eq!(cell(&v, "entailed", "entailed"), 1);
    assert_eq!(cell(&v, "ungrounded", "entailed"), 1);
    assert_eq!(cell(&v, "ungrounded", "newinfo"), 1);
    assert_eq!(cell(&v, "contradiction", "contradiction"), 1);
    assert_eq!(matrix_total(&v), 6);
}

#[test]
fn greedysat_revisions_are_clean_and_greedy_recomputes_them() {
    for extra in [&[][..], &["--policy", "greedy"][..]] {
        let (v, code) = audit("greedysat-stress", extra);
        assert_eq!(code, 0, "{extra:?}");
        assert!(findings(&v).is_empty(), "{extra:?}: {:?}", findings(&v));
        assert_eq!(cell(&v, "entailed", "entailed"), 5);
        assert_eq!(cell(&v, "newinfo", "newinfo"), 1);
        assert_eq!(cell(&v, "contradiction", "contradiction"), 2);
        assert_eq!(matrix_total(&v), 8);
    }
    // Another policy would have retracted something else: said, but only as a note.
    let (v, code) = audit("greedysat-stress", &["--policy", "recency"]);
    assert_eq!(code, 0);
    for f in v["findings"].as_array().expect("findings") {
        assert_eq!(f["code"], "revision-policy-mismatch");
        assert_eq!(f["severity"], "info");
    }
}

#[test]
fn kipchoge_false_positive_and_deadlock() {
    let (v, code) = audit("kipchoge-bdi", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("postcondition-false-positive".into(), "warning".into(), 18),
            ("unexpected-belief-name".into(), "info".into(), 18),
            ("dag-deadlock".into(), "warning".into(), 19),
            ("failure-mode-recorded".into(), "info".into(), 19),
        ]
    );
    // The harness's own label agrees with what doxascope found at that step.
    let rec = &v["findings"][3]["evidence"];
    assert_eq!(rec["recorded"], "verification_false_positive");
    assert_eq!(rec["verdict"], "agree");
    assert_eq!(rec["scope"], "plan-1/S1");
    let odd = &v["findings"][1]["evidence"];
    assert_eq!(odd["name"], "marathon_record_time");
    assert_eq!(odd["written_by"], "plan-1/S1");
    assert_eq!(
        strings(&odd["similar_expected"]),
        ["kipchoge_marathon_time"]
    );
    let fp = &v["findings"][0]["evidence"];
    assert_eq!(fp["plan"], "plan-1");
    assert_eq!(fp["step"], "S1");
    assert_eq!(fp["expected"], "kipchoge_marathon_time");
    assert_eq!(strings(&fp["wrote"]), ["marathon_record_time"]);
    let mut ground = strings(&fp["ground_beliefs"]);
    ground.sort();
    assert_eq!(
        ground,
        [
            "marathon_record_time",
            "numerator",
            "rate_entity",
            "rounding_unit",
            "target_entity"
        ]
    );
    let dl = &v["findings"][2]["evidence"];
    assert_eq!(dl["plan"], "plan-1");
    assert_eq!(strings(&dl["unfinished"]), ["S1", "S3", "S4", "S5"]);
    assert_eq!(dl["replanned"], true);
    assert_eq!(matrix_total(&v), 0);
}

#[test]
fn summary_counts_agree_with_findings() {
    for s in SAMPLES {
        let (v, code) = audit(s, &[]);
        let fs = findings(&v);
        let count = |sev: &str| fs.iter().filter(|f| f.1 == sev).count() as u64;
        assert_eq!(v["summary"]["findings"], fs.len() as u64, "{s}");
        assert_eq!(v["summary"]["errors"], count("error"), "{s}");
        assert_eq!(v["summary"]["warnings"], count("warning"), "{s}");
        assert_eq!(v["summary"]["infos"], count("info"), "{s}");
        let failing = count("error") + count("warning") > 0;
        assert_eq!(code, i32::from(failing), "{s}");
        for f in v["findings"].as_array().expect("findings") {
            let msg = f["message"].as_str().expect("message");
            assert!(msg.ends_with('.'), "{s}: not a sentence: {msg}");
            assert!(msg.chars().next().is_some_and(char::is_uppercase), "{msg}");
        }
    }
}

#[test]
fn bdi_bookkeeping_early_dispatch_and_impossible_counters() {
    let (v, code) = audit("bdi-bookkeeping", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("step-before-dependencies".into(), "warning".into(), 5),
            ("plan-stats-inconsistent".into(), "warning".into(), 15),
        ]
    );
    let early = &v["findings"][0]["evidence"];
    assert_eq!(early["plan"], "plan-m");
    assert_eq!(early["step"], "S2");
    assert_eq!(strings(&early["unmet"]), ["S1"]);
    let stats = &v["findings"][1]["evidence"];
    assert_eq!(stats["use_count"], 0);
    assert_eq!(stats["success_count"], 5);
}

/// (code, severity, step) and the evidence of the finding with `code`.
fn evidence<'a>(v: &'a Value, code: &str) -> &'a Value {
    let all: Vec<&Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == code)
        .collect();
    assert_eq!(all.len(), 1, "one {code}: {all:?}");
    &all[0]["evidence"]
}

#[test]
fn bad_retrieval_is_the_papers_non_seeded_run() {
    let (v, code) = audit("bdi-bad-retrieval", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("bad-retrieval".into(), "warning".into(), 15),
            ("bad-retrieval".into(), "error".into(), 25),
            ("failure-mode-recorded".into(), "info".into(), 27),
        ]
    );
    let failed = &v["findings"][0]["evidence"];
    assert_eq!(failed["cause"], "fetch-failed");
    assert_eq!(failed["step"], "S2");
    let wrong = &v["findings"][1]["evidence"];
    assert_eq!(wrong["cause"], "wrong-answer");
    assert_eq!(wrong["answer"], "0.0003561723");
    assert_eq!(wrong["expected"], "17");
    assert_eq!(strings(&wrong["computations_checked"]), ["S3"]);
    assert_eq!(wrong["fetched"][0]["wrote"][0]["value"], "1079252848.8");
    assert_eq!(wrong["fetched"][1]["wrote"][0]["value"], "384400");
    assert_eq!(evidence(&v, "failure-mode-recorded")["verdict"], "agree");
}

#[test]
fn file_read_avoided_and_the_harness_label_disputed() {
    let (v, code) = audit("bdi-file-read", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("file-read-avoided".into(), "error".into(), 11),
            ("failure-mode-mismatch".into(), "warning".into(), 19),
        ]
    );
    let e = evidence(&v, "file-read-avoided");
    assert_eq!(strings(&e["unread"]), ["menu_sales.xlsx"]);
    assert_eq!(strings(&e["searched_instead"]), ["plan-f1/S1"]);
    assert_eq!(e["answer_wrong"], true);
    let m = evidence(&v, "failure-mode-mismatch");
    assert_eq!(m["recorded"], "bad_retrieval");
    assert_eq!(strings(&m["detected"]), ["avoided_file_read"]);
}

#[test]
fn incorrect_computation_is_bash_integer_arithmetic() {
    let (v, code) = audit("bdi-computation", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("incorrect-computation".into(), "error".into(), 20),
            ("failure-mode-recorded".into(), "info".into(), 28),
        ]
    );
    let e = evidence(&v, "incorrect-computation");
    assert_eq!(e["step"], "S3");
    assert_eq!(e["compute"], "numerator / denominator");
    assert_eq!(e["written"], "17820");
    assert_eq!(e["inputs"]["denominator"], "20.9");
    // S4 rounded S3's wrong 17820 correctly: only S3 is blamed.
    assert_eq!(evidence(&v, "failure-mode-recorded")["verdict"], "agree");
}

#[test]
fn answer_formatting_is_the_papers_seeded_near_miss() {
    let (v, code) = audit("bdi-answer-format", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        vec![
            ("answer-formatting".into(), "warning".into(), 26),
            ("failure-mode-recorded".into(), "info".into(), 28),
        ]
    );
    let e = evidence(&v, "answer-formatting");
    assert_eq!(e["answer"], "16.95");
    assert_eq!(e["expected"], "17");
    assert_eq!(evidence(&v, "failure-mode-recorded")["verdict"], "agree");
}
