//! The headline of each group of `doxascope audit` findings counts findings, and says in how
//! many sessions they are: two oscillations of one session once read "2 sessions oscillate".

use std::process::Command;

#[test]
fn two_oscillations_in_one_session_are_not_two_sessions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("osc.jsonl");
    let mut t = String::new();
    for (id, f) in [("p1", "p"), ("q1", "q")] {
        for _ in 0..2 {
            t.push_str(&format!(
                "{{\"kind\":\"announce\",\"session\":\"s1\",\"id\":\"{id}\",\"formula\":\"{f}\"}}\n\
                 {{\"kind\":\"retract\",\"session\":\"s1\",\"target\":\"{id}\"}}\n"
            ));
        }
    }
    t.push_str("{\"kind\":\"log\",\"session\":\"s2\",\"message\":\"quiet\"}\n");
    std::fs::write(&path, t).expect("write");
    let o = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("audit")
        .arg(&path)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "warning: 2 oscillations between two belief states in 1 session [oscillation]"
        ),
        "{text}"
    );
    assert!(!text.contains("sessions oscillate"), "{text}");
    let o = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", "--json"])
        .arg(&path)
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        v["summary"]["headlines"],
        serde_json::json!(["2 oscillations between two belief states"])
    );
}
