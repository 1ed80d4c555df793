//! Certificates anyone can check (docs/certificates.md): `doxascope audit --certificates DIR`
//! and the REPL's `check`/`entails --certificate DIR`, checked without doxascope.
//!
//! Proofs go to dratify (PyPI; a DRAT checker sharing no code with varisat, run as its pure
//! Python engine) and models are evaluated clause by clause by `tests/support/
//! check_certificates.py`: the treasure hunt's certificates and those of a T1 workload trace
//! (600 steps of `benches/data/trace_T1.txt`, written by `scripts/t1_trace.py`, whose claims
//! PySAT decided) are all accepted, and tampered ones are rejected.
//!
//! Without dratify installed (`scripts/setup-dratify.sh`, into `target/drat-venv`) those
//! tests are ignored, with the reason (build.rs); under CI (`CI=true`) they install it
//! themselves and fail when they cannot. The tests that need no Python run everywhere.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use doxascope::logic::certificate::{model_satisfies, parse_dimacs};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn venv_python() -> PathBuf {
    std::env::var_os("DOXASCOPE_DRAT_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/drat-venv"))
        .join("bin/python")
}

/// Makes sure dratify is installed (the setup script is a no-op once it is).
fn setup() {
    let o = Command::new("bash")
        .arg(root().join("scripts/setup-dratify.sh"))
        .current_dir(root())
        .output()
        .expect("bash runs");
    assert!(
        o.status.success(),
        "dratify could not be installed (is the package index reachable?): {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn doxascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("doxascope runs")
}

fn audit_certificates(trace: &Path, dir: &Path) {
    let o = doxascope(&[
        "audit",
        trace.to_str().unwrap(),
        "--certificates",
        dir.to_str().unwrap(),
    ]);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("0 disagreement(s)"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn index(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("index.json")).expect("index.json");
    serde_json::from_str(&text).expect("index.json is JSON")
}

/// Runs the independent checker over a directory.
fn check_dir(dir: &Path) -> Value {
    let o = Command::new(venv_python())
        .arg(root().join("tests/support/check_certificates.py"))
        .arg(dir)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "the checker failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("the checker's summary")
}

/// Checks one CNF with a proof (`--proof`) or a model (`--model`); true when accepted.
fn check_one(mode: &str, cnf: &Path, other: &Path) -> bool {
    let o = Command::new(venv_python())
        .arg(root().join("tests/support/check_certificates.py"))
        .args([mode, cnf.to_str().unwrap(), other.to_str().unwrap()])
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim() == "accepted"
}

fn count(summary: &Value, kind: &str, verdict: &str) -> usize {
    summary[kind][verdict].as_array().map_or(0, Vec::len)
}

/// Every entry names its files relative to the directory, says which question it answers,
/// and its certificates imply the verdict recomputed; each verdict has both questions.
fn index_is_complete(entries: &[Value], dir: &Path) {
    assert!(!entries.is_empty());
    for e in entries {
        for key in ["session", "step", "formula", "verdict", "question", "cnf"] {
            assert!(!e[key].is_null(), "{key} missing in {e}");
        }
        assert!(dir.join(e["cnf"].as_str().unwrap()).is_file());
        let evidence = e["proof"].as_str().or(e["model"].as_str()).unwrap();
        assert!(dir.join(evidence).is_file());
        assert_eq!(
            e["answer"].as_str(),
            Some(if e["proof"].is_string() {
                "unsatisfiable"
            } else {
                "satisfiable"
            })
        );
        assert_eq!(e["agrees"], Value::Bool(true), "{e}");
        assert_eq!(e["certified"], e["verdict"]);
    }
    // Per verdict (one step each): both questions, and the grounding question when the
    // verify cites premises.
    let mut by_step: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for e in entries {
        let cnf = e["cnf"].as_str().unwrap();
        let verdict = ["-not-psi.cnf", "-psi.cnf", "-grounding.cnf"]
            .iter()
            .find_map(|t| cnf.strip_suffix(t))
            .unwrap();
        by_step
            .entry(verdict)
            .or_default()
            .push(e["question"].as_str().unwrap());
    }
    for qs in by_step.values() {
        assert!(
            qs[..2] == ["Σ ∧ ψ satisfiable?", "Σ ∧ ¬ψ satisfiable?"]
                && qs[2..]
                    .iter()
                    .all(|q| *q == "cited ∧ rules ∧ norms ∧ ¬ψ satisfiable?"),
            "{qs:?}"
        );
    }
}

/// Without Python: the treasure hunt's certificates are complete, every model satisfies
/// its CNF (checked here on the DIMACS text), and the verdicts are the recomputed ones: the
/// contradiction at step 14 is Σ ∧ ψ unsatisfiable, with a proof.
#[test]
fn treasure_hunt_certificates_are_complete_and_models_hold() {
    let dir = tempfile::tempdir().unwrap();
    audit_certificates(
        &root().join("sample-traces/treasure-hunt.jsonl"),
        dir.path(),
    );
    let entries = index(dir.path());
    index_is_complete(&entries, dir.path());
    // Four verifies, a query and two answers with a formula: seven verdicts, two of them
    // verifies citing premises (a third question each).
    assert_eq!(entries.len(), 16);
    let step10: Vec<&Value> = entries.iter().filter(|e| e["step"] == 10).collect();
    assert_eq!(step10.len(), 3);
    // The cited premises entail ¬treasure_in_a: grounded, so the verdict stays entailed.
    assert_eq!(step10[2]["answer"], "unsatisfiable");
    assert_eq!(step10[2]["certified"], "entailed");
    let step14: Vec<&Value> = entries.iter().filter(|e| e["step"] == 14).collect();
    assert_eq!(step14.len(), 3);
    assert!(step14.iter().all(|e| e["verdict"] == "contradiction"));
    let pos = step14
        .iter()
        .find(|e| e["question"] == "Σ ∧ ψ satisfiable?")
        .unwrap();
    assert_eq!(pos["answer"], "unsatisfiable");
    let cnf = std::fs::read_to_string(dir.path().join(pos["cnf"].as_str().unwrap())).unwrap();
    assert!(
        cnf.contains("c atom ") && cnf.contains(" treasure_in_a\n"),
        "{cnf}"
    );
    assert!(
        cnf.contains("c belief ") && cnf.contains(" t2-map-b\n"),
        "{cnf}"
    );
    for e in &entries {
        let Some(m) = e["model"].as_str() else {
            continue;
        };
        let cnf = std::fs::read_to_string(dir.path().join(e["cnf"].as_str().unwrap())).unwrap();
        let model = std::fs::read_to_string(dir.path().join(m)).unwrap();
        let lits: Vec<i64> = model
            .lines()
            .filter_map(|l| l.strip_prefix("v "))
            .flat_map(|l| l.split_whitespace().map(|w| w.parse::<i64>().unwrap()))
            .filter(|&l| l != 0)
            .collect();
        let clauses = parse_dimacs(&cnf).unwrap();
        assert!(model_satisfies(&clauses, &lits), "{m}");
        // A readable line per atom.
        assert!(model.contains("c treasure_in_a="), "{model}");
    }
}

/// The REPL writes the certificates of `check` and `entails` into one directory, one
/// after another, listing both in its index, and says so in its reply (text and JSON).
#[test]
fn repl_check_and_entails_write_certificates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("certs");
    let script = format!(
        "at 14\ncheck treasure_in_a --certificate {0}\nentails treasure_in_b --certificate {0}\ncheck treasure_in_a\n",
        d.display()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["repl", "--json"])
        .arg(root().join("sample-traces/treasure-hunt.jsonl"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 4);
    let check = &replies[1];
    assert_eq!(check["outcome"], "contradiction", "{check}");
    assert_eq!(check["certificate"]["certified"], "contradiction");
    assert_eq!(check["certificate"]["agrees"], true);
    assert_eq!(replies[2]["certificate"]["certified"], "entailed");
    // Without the option the reply has no certificate key.
    assert!(replies[3].get("certificate").is_none(), "{}", replies[3]);
    let entries = index(&d);
    assert_eq!(entries.len(), 4);
    index_is_complete(&entries, &d);
    assert_eq!(entries[0]["event"], "check");
    assert_eq!(entries[2]["event"], "entails");
    // Distinct files for each command.
    let cnfs: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e["cnf"].as_str().unwrap()).collect();
    assert_eq!(cnfs.len(), 4);
    // The text reply names the directory and each question's answer.
    let o = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("repl")
        .arg(root().join("sample-traces/treasure-hunt.jsonl"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut o = o;
    o.stdin
        .take()
        .unwrap()
        .write_all(format!("at 14\ncheck treasure_in_a --certificate {}\n", d.display()).as_bytes())
        .unwrap();
    let text = String::from_utf8_lossy(&o.wait_with_output().unwrap().stdout).to_string();
    assert!(text.contains("certificates in"), "{text}");
    assert!(text.contains("Σ ∧ ψ satisfiable? unsatisfiable"), "{text}");
    assert_eq!(index(&d).len(), 6);
}

/// `check φ because ID...`: the third question certifies the refinement. At step 14 Σ
/// entails treasure_in_b (the map), but the cited ¬treasure_in_a alone does not: the
/// grounding question is satisfiable, and the certified verdict is `ungrounded`, as the REPL
/// said; citing the map instead grounds it (unsatisfiable, with a proof).
#[test]
fn repl_certifies_an_ungrounded_check() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("c");
    let script = format!(
        "at 14\ncheck treasure_in_b because t3-not-a --certificate {0}\ncheck treasure_in_b because t2-map-b --certificate {0}\n",
        d.display()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["repl", "--json"])
        .arg(root().join("sample-traces/treasure-hunt.jsonl"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies[1]["outcome"], "ungrounded", "{}", replies[1]);
    assert_eq!(replies[1]["certificate"]["certified"], "ungrounded");
    assert_eq!(replies[1]["certificate"]["agrees"], true);
    assert_eq!(replies[2]["outcome"], "entailed", "{}", replies[2]);
    assert_eq!(replies[2]["certificate"]["certified"], "entailed");
    let entries = index(&d);
    assert_eq!(entries.len(), 6);
    index_is_complete(&entries, &d);
    assert_eq!(entries[2]["answer"], "satisfiable");
    assert_eq!(entries[5]["answer"], "unsatisfiable");
}

/// dratify accepts every proof of the treasure hunt, and every model is accepted.
#[test]
#[cfg_attr(
    doxascope_no_dratify,
    ignore = "dratify is not installed (bash scripts/setup-dratify.sh)"
)]
fn dratify_accepts_the_treasure_hunt() {
    setup();
    let dir = tempfile::tempdir().unwrap();
    audit_certificates(
        &root().join("sample-traces/treasure-hunt.jsonl"),
        dir.path(),
    );
    let s = check_dir(dir.path());
    assert_eq!(s["entries"], 16);
    assert_eq!(count(&s, "proofs", "rejected"), 0, "{s}");
    assert_eq!(count(&s, "models", "rejected"), 0, "{s}");
    assert_eq!(count(&s, "proofs", "accepted"), 6, "{s}");
    assert_eq!(count(&s, "models", "accepted"), 10, "{s}");
}

/// The T1 workload: 600 steps whose claims PySAT decided. Every certificate is accepted,
/// the certified verdicts are PySAT's, and tampered certificates are rejected: a CNF whose
/// query unit is flipped (a satisfiable formula, which no proof can refute), a model with
/// the query's literal flipped. (T1's refutations all follow by unit propagation, so its
/// proofs have no lemma to tamper with; the pigeonhole test below has.)
#[test]
#[cfg_attr(
    doxascope_no_dratify,
    ignore = "dratify is not installed (bash scripts/setup-dratify.sh)"
)]
fn dratify_accepts_the_t1_workload_and_rejects_tampering() {
    setup();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t1.jsonl");
    let o = Command::new(venv_python())
        .arg(root().join("scripts/t1_trace.py"))
        .arg(root().join("benches/data/trace_T1.txt"))
        .arg(&trace)
        .arg("600")
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let certs = dir.path().join("certs");
    audit_certificates(&trace, &certs);
    let entries = index(&certs);
    index_is_complete(&entries, &certs);
    assert_eq!(entries.len(), 1200);
    // The certified verdict of each verify is the one PySAT claimed in the trace.
    let claims: Vec<String> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "verify")
        .map(|v| v["outcome"].as_str().unwrap().to_string())
        .collect();
    let certified: Vec<&str> = entries
        .iter()
        .step_by(2)
        .map(|e| e["certified"].as_str().unwrap())
        .collect();
    assert_eq!(claims, certified);
    assert!(claims.iter().any(|c| c == "contradiction"));
    assert!(claims.iter().any(|c| c == "entailed"));

    let s = check_dir(&certs);
    assert_eq!(count(&s, "proofs", "rejected"), 0, "{s}");
    assert_eq!(count(&s, "models", "rejected"), 0, "{s}");
    let proofs = count(&s, "proofs", "accepted");
    assert!(proofs >= 28, "{s}");
    assert_eq!(proofs + count(&s, "models", "accepted"), 1200);

    let tampered = dir.path().join("tampered");
    std::fs::create_dir_all(&tampered).unwrap();
    let mut flips = 0;
    for e in entries.iter().filter(|e| e["proof"].is_string()) {
        let cnf_path = certs.join(e["cnf"].as_str().unwrap());
        let proof_path = certs.join(e["proof"].as_str().unwrap());
        let cnf = std::fs::read_to_string(&cnf_path).unwrap();
        // Flip the unit clause asserting the query: Σ ∧ ψ becomes Σ ∧ ¬ψ and back. The
        // other question of the verdict is satisfiable here except when Σ itself is not.
        let q: i64 = cnf
            .lines()
            .find_map(|l| l.strip_prefix("c query "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap()
            .parse()
            .unwrap();
        let unit = format!("\n{q} 0\n");
        assert!(cnf.contains(&unit));
        let flipped = cnf.replacen(&unit, &format!("\n{} 0\n", -q), 1);
        let f = tampered.join("flipped.cnf");
        std::fs::write(&f, &flipped).unwrap();
        let other_sat = entries.iter().any(|o| {
            o["step"] == e["step"] && o["question"] != e["question"] && o["model"].is_string()
        });
        if other_sat {
            assert!(
                !check_one("--proof", &f, &proof_path),
                "a proof of {} refuted a satisfiable CNF",
                e["cnf"]
            );
        }
        flips += usize::from(other_sat);
    }
    assert!(flips > 0);
    // A model with the query's literal flipped falsifies the query's unit clause.
    let e = entries.iter().find(|e| e["model"].is_string()).unwrap();
    let cnf_path = certs.join(e["cnf"].as_str().unwrap());
    let cnf = std::fs::read_to_string(&cnf_path).unwrap();
    let q: i64 = cnf
        .lines()
        .find_map(|l| l.strip_prefix("c query "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let model_path = certs.join(e["model"].as_str().unwrap());
    assert!(check_one("--model", &cnf_path, &model_path));
    let model = std::fs::read_to_string(&model_path).unwrap();
    let bad: String = model
        .lines()
        .map(|l| match l.strip_prefix("v ") {
            Some(v) => {
                let lits: Vec<String> = v
                    .split_whitespace()
                    .map(|w| {
                        let l: i64 = w.parse().unwrap();
                        if l.abs() == q.abs() { -l } else { l }.to_string()
                    })
                    .collect();
                format!("v {}\n", lits.join(" "))
            }
            None => format!("{l}\n"),
        })
        .collect();
    let bad_path = tampered.join("bad.model");
    std::fs::write(&bad_path, bad).unwrap();
    assert!(!check_one("--model", &cnf_path, &bad_path));
}

/// A refutation unit propagation cannot find: five pigeons, four holes (Σ seats four, the
/// verify asks for the fifth to have a hole). The proof's lemmas are needed: dratify
/// accepts it whole, and rejects it without its lemmas, with one lemma's literals changed
/// to their negations, or with the lemmas in reverse order.
#[test]
#[cfg_attr(
    doxascope_no_dratify,
    ignore = "dratify is not installed (bash scripts/setup-dratify.sh)"
)]
fn dratify_rejects_a_tampered_pigeonhole_proof() {
    setup();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("php.jsonl");
    let mut lines = Vec::new();
    for h in 1..=4 {
        for p in 1..=5 {
            for q in p + 1..=5 {
                lines.push(format!(
                    r#"{{"kind":"announce","session":"php","formula":"!(p{p}h{h} & p{q}h{h})","role":"rule"}}"#
                ));
            }
        }
    }
    for p in 1..=4 {
        lines.push(format!(
            r#"{{"kind":"announce","session":"php","formula":"p{p}h1 | p{p}h2 | p{p}h3 | p{p}h4"}}"#
        ));
    }
    lines.push(
        r#"{"kind":"verify","session":"php","formula":"p5h1 | p5h2 | p5h3 | p5h4","outcome":"contradiction"}"#
            .to_string(),
    );
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let certs = dir.path().join("certs");
    audit_certificates(&trace, &certs);
    let entries = index(&certs);
    index_is_complete(&entries, &certs);
    let e = entries.iter().find(|e| e["proof"].is_string()).unwrap();
    assert_eq!(e["verdict"], "contradiction");
    let cnf = certs.join(e["cnf"].as_str().unwrap());
    let proof = certs.join(e["proof"].as_str().unwrap());
    assert!(check_one("--proof", &cnf, &proof));
    let text = std::fs::read_to_string(&proof).unwrap();
    let lemmas: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('d') && l.trim() != "0")
        .collect();
    assert!(lemmas.len() > 2, "{text}");
    let write = |name: &str, body: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    // Only the empty clause.
    assert!(!check_one(
        "--proof",
        &cnf,
        &write("empty.drat", "0\n".into())
    ));
    // The first lemma's literals negated: not implied by the formula.
    let first = lemmas[0];
    let negated: String = first
        .split_whitespace()
        .map(|w| match w.parse::<i64>().unwrap() {
            0 => "0".to_string(),
            l => (-l).to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let altered = text.replacen(&format!("{first}\n"), &format!("{negated}\n"), 1);
    assert_ne!(altered, text);
    assert!(!check_one("--proof", &cnf, &write("altered.drat", altered)));
    // The lemmas in reverse order, then the empty clause.
    let reversed: String = lemmas
        .iter()
        .rev()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + "0\n";
    assert!(!check_one(
        "--proof",
        &cnf,
        &write("reversed.drat", reversed)
    ));
}
