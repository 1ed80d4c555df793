//! `doxascope audit --format sarif|junit` and `--baseline FILE`: what a CI pipeline reads.
//!
//! The SARIF log is checked against the SARIF 2.1.0 specification's required members by hand
//! (`sarif_problems`): the official JSON schema cannot be fetched here (no package of the
//! registries this project reaches ships it), so the properties a SARIF consumer relies on
//! are spelled out instead: `version`, `runs`, `tool.driver.name`, rules with an `id`, every
//! result's `message.text`, a `ruleId` whose `ruleIndex` names the same rule, a `level` from
//! the four the spec allows, and locations whose `region.startLine` is a positive integer.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use doxascope::model::audit::Code;
use doxascope::model::audit::ci::uri_of;
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("audit")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run doxascope")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// A scratch directory of its own for each test.
fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("audit-ci-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

fn write(path: &Path, lines: &[&str]) -> String {
    let mut f = std::fs::File::create(path).expect("create");
    for l in lines {
        writeln!(f, "{l}").expect("write");
    }
    path.to_string_lossy().into_owned()
}

/// Two gate verdicts that disagree with Σ (errors), an unsupported answer (a warning), and a
/// role change (info).
const TRACE: [&str; 6] = [
    r#"{"kind":"announce","seq":1,"session":"s","id":"f","formula":"p"}"#,
    r#"{"kind":"announce","seq":2,"session":"s","id":"r","formula":"p -> q","role":"rule"}"#,
    r#"{"kind":"verify","seq":3,"session":"s","formula":"q","outcome":"newinfo"}"#,
    r#"{"kind":"verify","seq":4,"session":"s","formula":"!q","outcome":"newinfo"}"#,
    r#"{"kind":"answer","seq":5,"session":"s","formula":"zz","text":"a & <b>"}"#,
    r#"{"kind":"announce","seq":6,"session":"s","id":"r","formula":"p -> q","role":"fact"}"#,
];

/// What the SARIF 2.1.0 specification requires of the members doxascope writes (see the
/// module docs); empty when the log conforms.
fn sarif_problems(log: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    if log["version"] != "2.1.0" {
        bad.push("version is not 2.1.0".to_string());
    }
    let Some(runs) = log["runs"].as_array() else {
        return vec!["runs is not an array".into()];
    };
    for (r, run) in runs.iter().enumerate() {
        let driver = &run["tool"]["driver"];
        if !driver["name"].is_string() {
            bad.push(format!("runs[{r}].tool.driver.name missing"));
        }
        let rules = driver["rules"].as_array().cloned().unwrap_or_default();
        for (i, rule) in rules.iter().enumerate() {
            if !rule["id"].is_string() {
                bad.push(format!("rule {i} has no id"));
            }
            if let Some(l) = rule["defaultConfiguration"]["level"].as_str()
                && !["none", "note", "warning", "error"].contains(&l)
            {
                bad.push(format!("rule {i} has level {l}"));
            }
        }
        let Some(results) = run["results"].as_array() else {
            bad.push(format!("runs[{r}].results is not an array"));
            continue;
        };
        for (i, res) in results.iter().enumerate() {
            if !res["message"]["text"].is_string() {
                bad.push(format!("result {i} has no message.text"));
            }
            let id = res["ruleId"].as_str();
            let at = res["ruleIndex"]
                .as_u64()
                .and_then(|k| rules.get(k as usize));
            if id.is_none() || at.map(|x| x["id"].as_str()) != Some(id) {
                bad.push(format!("result {i}: ruleIndex does not name its ruleId"));
            }
            if !["none", "note", "warning", "error"].contains(&res["level"].as_str().unwrap_or(""))
            {
                bad.push(format!("result {i} has a bad level"));
            }
            for loc in res["locations"].as_array().into_iter().flatten() {
                let pl = &loc["physicalLocation"];
                if pl.is_null() {
                    continue;
                }
                if !pl["artifactLocation"]["uri"].is_string() {
                    bad.push(format!("result {i}: no artifactLocation.uri"));
                }
                if pl["region"]["startLine"].as_u64().is_none_or(|n| n < 1) {
                    bad.push(format!(
                        "result {i}: region.startLine is not a positive integer"
                    ));
                }
            }
            if let Some(s) = res.get("baselineState")
                && !["new", "unchanged", "updated", "absent"].contains(&s.as_str().unwrap_or(""))
            {
                bad.push(format!("result {i}: bad baselineState"));
            }
        }
    }
    bad
}

#[test]
fn sarif_has_one_result_per_finding_at_its_event() {
    let d = dir("sarif");
    let file = write(&d.join("t.jsonl"), &TRACE);
    let j = json(&run(&["--json", &file]));
    let o = run(&["--format", "sarif", &file]);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    let log = json(&o);
    assert_eq!(sarif_problems(&log), Vec::<String>::new());
    let rules: Vec<&str> = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        Code::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>()
    );
    let findings = j["findings"].as_array().unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(findings.len() >= 4, "{findings:#?}");
    assert_eq!(results.len(), findings.len());
    for (f, r) in findings.iter().zip(results) {
        assert_eq!(r["ruleId"], f["code"]);
        let level = match f["severity"].as_str().unwrap() {
            "info" => "note",
            s => s,
        };
        assert_eq!(r["level"], level);
        assert_eq!(r["message"]["text"], f["message"]);
        let pl = &r["locations"][0]["physicalLocation"];
        assert_eq!(pl["region"]["startLine"], f["location"]["line"]);
        assert_eq!(pl["artifactLocation"]["uri"], uri_of(&file));
        assert!(r["partialFingerprints"]["doxascopeFinding/v1"].is_string());
    }
    // The second verify (line 4) is an error on line 4.
    let line4 = results
        .iter()
        .find(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"] == 4)
        .expect("a result on line 4");
    assert_eq!(line4["ruleId"], "claimed-outcome-mismatch");
    assert_eq!(line4["level"], "error");
}

#[test]
fn the_hand_check_catches_what_the_spec_forbids() {
    let mut log: Value = serde_json::json!({
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x", "rules": [{"id": "a"}]}},
                  "results": [{"ruleId": "a", "ruleIndex": 0, "level": "warning",
                               "message": {"text": "m"},
                               "locations": [{"physicalLocation": {
                                   "artifactLocation": {"uri": "t"}, "region": {"startLine": 1}}}]}]}]
    });
    assert!(sarif_problems(&log).is_empty());
    log["runs"][0]["results"][0]["level"] = "info".into();
    log["runs"][0]["results"][0]["ruleIndex"] = 1.into();
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    assert_eq!(sarif_problems(&log).len(), 3, "{:?}", sarif_problems(&log));
}

#[test]
fn uris_are_references_a_sarif_viewer_resolves() {
    assert_eq!(uri_of("sample-traces/a.jsonl"), "sample-traces/a.jsonl");
    assert_eq!(
        uri_of("/tmp/my trace#1.jsonl"),
        "file:///tmp/my%20trace%231.jsonl"
    );
    assert_eq!(uri_of("<stdin>"), "%3Cstdin%3E");
}

#[test]
fn junit_has_a_test_case_per_check_and_fails_the_failing_ones() {
    let d = dir("junit");
    let file = write(&d.join("t.jsonl"), &TRACE);
    let o = run(&["--format", "junit", &file]);
    assert_eq!(code(&o), 1);
    let xml = String::from_utf8(o.stdout).expect("UTF-8");
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
    assert_eq!(xml.matches("<testcase ").count(), Code::ALL.len());
    assert_eq!(xml.matches("<testsuite ").count(), 1);
    let case = |name: &str| -> &str {
        let at = xml
            .find(&format!("name=\"{name}\""))
            .unwrap_or_else(|| panic!("{name} in {xml}"));
        let end = xml[at..].find("</testcase>").map_or(xml.len(), |e| at + e);
        let next = xml[at..].find("<testcase ").map_or(xml.len(), |e| at + e);
        &xml[at..end.min(next)]
    };
    let failed = case("claimed-outcome-mismatch");
    assert!(failed.contains("<failure type=\"error\""), "{failed}");
    assert!(failed.contains("2 gate verdicts differ"), "{failed}");
    // An info finding is reported without failing its case.
    let info = case("role-changed");
    assert!(!info.contains("<failure"), "{info}");
    assert!(info.contains("<system-out>"), "{info}");
    // A check with no finding passes.
    assert!(case("dag-cycle").starts_with("name=\"dag-cycle\"/>"));
    let failures = xml.matches("<failure ").count();
    assert!(xml.contains(&format!("failures=\"{failures}\"")));
    // Text from the trace is escaped: the answer's `<b>` and `&` never open a tag.
    assert!(!xml.contains("<b>"), "{xml}");
    assert!(xml.contains("a &amp; &lt;b&gt;"), "{xml}");
}

#[test]
fn a_baseline_fails_only_on_new_findings_whatever_the_lines() {
    let d = dir("baseline");
    let old = write(&d.join("old.jsonl"), &TRACE);
    let base_json = d.join("base.json");
    std::fs::write(&base_json, run(&["--json", &old]).stdout).expect("write");
    let base_sarif = d.join("base.sarif");
    std::fs::write(&base_sarif, run(&["--format", "sarif", &old]).stdout).expect("write");
    for base in [&base_json, &base_sarif] {
        let b = base.to_str().unwrap();
        // The same findings: nothing new.
        let o = run(&["--baseline", b, &old]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        // The trace re-generated under another name, with a line before its events (every
        // line moves) and one more disagreeing verdict: only that one is new.
        let mut lines = vec![r#"{"kind":"log","seq":0,"session":"s","message":"start"}"#];
        lines.extend(TRACE);
        lines.push(
            r#"{"kind":"verify","seq":9,"session":"s","formula":"p","outcome":"contradiction"}"#,
        );
        let new = write(&d.join("new.jsonl"), &lines);
        let o = run(&["--format", "sarif", "--baseline", b, &new]);
        assert_eq!(code(&o), 1);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("1 new finding(s)"), "{stderr}");
        let results = json(&o)["runs"][0]["results"].as_array().unwrap().clone();
        let new_ones: Vec<&Value> = results
            .iter()
            .filter(|r| r["baselineState"] == "new")
            .collect();
        assert_eq!(new_ones.len(), 1, "{results:#?}");
        assert_eq!(new_ones[0]["properties"]["seq"], 9);
        assert!(results.iter().all(|r| r["baselineState"].is_string()));
        // JUnit under the baseline fails only the new finding's check.
        let o = run(&["--format", "junit", "--baseline", b, &new]);
        let xml = String::from_utf8_lossy(&o.stdout);
        assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
        assert!(xml.contains("(in the baseline)"), "{xml}");
    }
    // The same verdict on another event is another finding: a baseline is not a mute button.
    let mut moved: Vec<&str> = TRACE.to_vec();
    moved[2] = r#"{"kind":"verify","seq":7,"session":"s","formula":"q","outcome":"newinfo"}"#;
    let moved = write(&d.join("moved.jsonl"), &moved);
    assert_eq!(
        code(&run(&["--baseline", base_json.to_str().unwrap(), &moved])),
        1
    );
}

#[test]
fn bad_baselines_and_formats_are_usage_errors() {
    let d = dir("usage");
    let file = write(&d.join("t.jsonl"), &TRACE);
    let junk = d.join("junk.json");
    std::fs::write(&junk, "{\"neither\": 1}").expect("write");
    let o = run(&["--baseline", junk.to_str().unwrap(), &file]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("baseline"));
    assert_eq!(code(&run(&["--baseline", "/nonexistent/b.json", &file])), 2);
    assert_eq!(
        code(&run(&["--format", "sarif", "--format", "junit", &file])),
        2
    );
    assert_eq!(code(&run(&["--format", "xml", &file])), 2);
    // An input format and an output form together.
    let o = run(&["--format", "v1", "--format", "sarif", &file]);
    assert_eq!(code(&o), 1);
    assert_eq!(sarif_problems(&json(&o)), Vec::<String>::new());
}
