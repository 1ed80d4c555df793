//! The registry of checks is the one source of the docs' finding table and of
//! `audit --list-checks`; every example trace it names draws its finding.

use std::process::Command;

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, audit, finding_table};

const BEGIN: &str =
    "<!-- finding-table:begin (generated from the registry; tests/audit_registry.rs) -->\n";
const END: &str = "<!-- finding-table:end -->";

fn docs_table() -> String {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/trace-format.md"))
            .expect("docs/trace-format.md");
    let start = docs.find(BEGIN).expect("the finding table's begin marker") + BEGIN.len();
    let end = docs[start..].find(END).expect("its end marker") + start;
    docs[start..end].to_string()
}

#[test]
fn the_docs_finding_table_is_the_registry() {
    let want = finding_table();
    let have = docs_table();
    if have != want {
        let out = concat!(env!("CARGO_MANIFEST_DIR"), "/target/finding-table.md");
        let _ = std::fs::write(out, &want);
        panic!(
            "docs/trace-format.md's finding table differs from the registry; the table the \
             registry gives is in {out}:\n{want}"
        );
    }
    // Every code has its row, once.
    for c in Code::ALL {
        let row = format!("| `{}` | {} |", c.as_str(), c.default_severity());
        assert_eq!(have.matches(&row).count(), 1, "{c}");
    }
}

#[test]
fn every_code_has_a_doc_paragraph() {
    for c in Code::ALL {
        let doc = c.doc();
        assert!(doc.len() > 20 && doc.ends_with('.'), "{c}: {doc:?}");
    }
}

#[test]
fn every_example_trace_draws_its_finding() {
    let mut checked = 0;
    for c in Code::ALL {
        let Some(path) = c.example() else { continue };
        let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
        let model = Model::load(&[full.as_str()]).unwrap_or_else(|e| panic!("{path}: {e}"));
        let r = audit(&model, &AuditOptions::default());
        assert!(
            r.findings.iter().any(|f| f.code == *c),
            "{path} does not draw {c}: {:#?}",
            r.findings
        );
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn list_checks_needs_no_file_and_lists_every_code() {
    let o = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", "--list-checks"])
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    for c in Code::ALL {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(c.as_str()))
            .unwrap_or_else(|| panic!("{c} missing from --list-checks"));
        assert!(line.contains(c.default_severity().as_str()), "{line}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", "--list-checks", "--json"])
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let codes: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["code"].as_str())
        .collect();
    let all: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(codes, all);
}
