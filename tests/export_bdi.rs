//! `export --format json` of a BDI session carries the whole BDI state at the step
//! (issue 13, item 2): before, the Kipchoge sample exported `"beliefs": []` and nothing else.

use std::process::Command;

use serde_json::Value;

fn export(file: &str, at: u32) -> Value {
    let path = format!("{}/sample-traces/{file}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["export", "--format", "json", "--at", &at.to_string(), &path])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x["name"].as_str().or(x["id"].as_str()).expect("name"))
        .collect()
}

#[test]
fn kipchoge_before_any_plan() {
    let b = &export("kipchoge-bdi.jsonl", 12)["bdi"];
    assert_eq!(b["schema_beliefs"].as_array().map(Vec::len), Some(3));
    assert_eq!(b["desires"].as_array().map(Vec::len), Some(1));
    assert_eq!(b["intention"]["id"], "int-1");
    assert_eq!(
        names(&b["ground_beliefs"]),
        ["rate_entity", "rounding_unit", "target_entity"]
    );
    assert_eq!(b["plans"], Value::Array(vec![]));
}

#[test]
fn kipchoge_at_the_false_positive() {
    let b = &export("kipchoge-bdi.jsonl", 19)["bdi"];
    let p1 = &b["plans"][0];
    assert_eq!(p1["id"], "plan-1");
    assert_eq!(p1["deadlocked"], true);
    let s1 = &p1["steps"][0];
    assert_eq!(s1["state"], "done");
    assert_eq!(s1["post_met"], true);
    assert_eq!(s1["recomputed"], false);
    assert_eq!(s1["verdict"], "disputed");
    assert_eq!(
        s1["checks"][0]["failure_mode"],
        "verification_false_positive"
    );
    assert_eq!(p1["steps"][1]["verdict"], "passed");
}

#[test]
fn kipchoge_at_the_end_has_history_library_and_reviews() {
    let b = &export("kipchoge-bdi.jsonl", 40)["bdi"];
    let ground = b["ground_beliefs"].as_array().expect("array");
    let numerator = ground
        .iter()
        .find(|g| g["name"] == "numerator")
        .expect("numerator");
    // Written by plan-1's S2 (step 16) and again by plan-2's S2 (step 24).
    assert_eq!(numerator["writes"], 2);
    let steps: Vec<u64> = numerator["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|h| h["step"].as_u64().expect("step"))
        .collect();
    assert_eq!(steps, [16, 24]);
    let lib: Vec<(String, Value, Value, Value, Value)> = b["library"]
        .as_array()
        .expect("library")
        .iter()
        .map(|e| {
            (
                e["id"].as_str().expect("id").to_string(),
                e["use_count"].clone(),
                e["success_count"].clone(),
                e["failure_count"].clone(),
                e["decision"]["action"].clone(),
            )
        })
        .collect();
    assert_eq!(
        lib,
        [
            (
                "plan-1".into(),
                1.into(),
                0.into(),
                1.into(),
                "remove".into()
            ),
            ("plan-2".into(), 1.into(), 1.into(), 0.into(), "keep".into()),
        ]
    );
    assert_eq!(b["reviews"].as_array().map(Vec::len), Some(2));
    assert_eq!(b["satisfaction"][0]["ok"], true);
    assert!(
        b["plans"][1]["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .all(|s| s["verdict"] == "passed")
    );
}

#[test]
fn a_session_without_bdi_events_exports_as_before() {
    let v = export("alice-bob-norms.jsonl", 5);
    assert!(v.get("bdi").is_none(), "{v}");
    assert!(v["beliefs"].is_array());
}
