//! Writing certificates to a directory: `doxascope audit --certificates DIR` and the REPL's
//! `check φ --certificate DIR` / `entails φ --certificate DIR` (docs/certificates.md).
//!
//! Every verdict doxascope recomputes (each `verify`'s gate, each `query`'s and each
//! `answer`'s `entails`) is two satisfiability questions, Σ ∧ ψ and Σ ∧ ¬ψ, with Σ as it stood
//! just before the event. Each question gets its own certificate, built from scratch by
//! [`crate::logic::certificate::certify`]: a DIMACS file, and a DRAT proof when the answer
//! is "unsatisfiable" or a model file when it is "satisfiable". `DIR/index.json` lists every
//! file as `{"session", "step", "event", "formula", "claimed", "verdict", "question",
//! "answer", "certified", "agrees", "cnf", "proof" | "model"}` with paths relative to DIR:
//! `claimed` is what the trace said (when it said something), `verdict` what the
//! recomputation said, `certified` what the two certificates of the event imply,
//! and `agrees` whether they are the same (a disagreement is a bug of doxascope's, shown
//! rather than hidden).
//!
//! A verdict the recomputation could not give (a timeout, a formula over a cap) has no
//! certificate; a certificate that could not be made (its own timeout) is an index entry
//! with an `error` and no files.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::logic::certificate::{
    Answer, CertOptions, Certificate, Premise, Question, certify, certify_over, entails_of,
    theta_of,
};
use crate::logic::engine::Outcome;
use crate::logic::formula::Formula;
use crate::logic::parse::parse;

use super::Model;
use super::recompute::{Recomputed, Unknown};
use super::timeline::{Timeline, load_at};

/// The index's file name inside the directory.
pub const INDEX: &str = "index.json";

/// What kind of verdict a pair of certificates backs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Θ(Σ, ψ): `contradiction`, `entailed` or `newinfo`.
    Gate,
    /// `entails ψ`: `entailed`, `contradicted` or `unknown`.
    Entails,
}

impl Verdict {
    /// The verdict the two answers imply.
    fn certified(self, with_query: bool, with_negation: bool) -> &'static str {
        match self {
            Verdict::Gate => theta_of(with_query, with_negation).as_str(),
            Verdict::Entails => entails_of(with_query, with_negation).as_str(),
        }
    }
}

/// One verdict to certify: Σ, the formula, and what was claimed about them.
pub struct Item<'a> {
    /// The session name.
    pub session: &'a str,
    /// The step of the event (or the REPL's step).
    pub step: u64,
    /// The event kind or REPL command (`verify`, `query`, `answer`, `check`, `entails`).
    pub event: &'a str,
    /// The formula as written.
    pub text: &'a str,
    /// The formula parsed.
    pub formula: &'a Formula,
    /// Σ just before the event.
    pub sigma: &'a [Premise<'a>],
    /// With cited premises (`because`): those of Σ with every rule and norm, for the third
    /// question ([`Question::Grounding`]) that decides `ungrounded`; `None` without.
    pub premises: Option<&'a [Premise<'a>]>,
    /// The kind of verdict.
    pub kind: Verdict,
    /// The verdict doxascope recomputed.
    pub verdict: &'a str,
    /// What the trace claimed (a `verify`'s outcome, a `query`'s answer), if anything.
    pub claimed: Option<Value>,
    /// The file names' stem, unique within the directory.
    pub stem: String,
    /// More header lines (where the event is).
    pub context: Vec<String>,
}

/// Settings of a certificate run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How long one certificate's solve may take.
    pub timeout: Duration,
    /// The cap on quantifier instances per formula.
    pub instance_cap: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(10),
            instance_cap: crate::logic::ground::DEFAULT_INSTANCE_CAP,
        }
    }
}

/// Totals of a certificate run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Verdicts certified (each two questions, three for a verify citing premises).
    pub verdicts: usize,
    /// Certificates written (questions answered).
    pub certificates: usize,
    /// Verdicts whose certificates imply another verdict than the recomputation's.
    pub disagreements: usize,
    /// Questions that could not be certified (their own timeout, a cap).
    pub failed: usize,
    /// Verdicts without certificate because the recomputation gave none.
    pub uncertified: usize,
}

/// Certifies one verdict: writes both questions' files (and the grounding question's, with
/// cited premises) into `dir` and returns their index entries.
pub fn write_item(
    dir: &Path,
    item: &Item<'_>,
    opts: &Options,
    totals: &mut Totals,
) -> io::Result<Vec<Value>> {
    let mut certs: Vec<(Question, Result<Certificate, String>)> = Vec::new();
    let grounding = item.premises.map(|_| Question::Grounding);
    for q in Question::BOTH.into_iter().chain(grounding) {
        let copts = CertOptions {
            instance_cap: opts.instance_cap,
            deadline: Some(Instant::now() + opts.timeout),
            ..CertOptions::default()
        };
        let mut context = vec![
            format!("session: {}", item.session),
            format!("step: {} ({})", item.step, item.event),
        ];
        context.extend(item.context.iter().cloned());
        let c = match (q, item.premises) {
            (Question::Grounding, Some(p)) => {
                certify_over(p, item.sigma, item.formula, q, &context, &copts)
            }
            _ => certify(item.sigma, item.formula, q, &context, &copts),
        }
        .map_err(|e| e.to_string());
        certs.push((q, c));
    }
    let answers: Vec<Option<bool>> = certs
        .iter()
        .map(|(_, c)| c.as_ref().ok().map(Certificate::satisfiable))
        .collect();
    let certified = match (answers[0], answers[1], answers.get(2).copied()) {
        // The engine refines only a consistent Δ: `ungrounded` when the cited premises with
        // the rules and norms leave ¬ψ satisfiable.
        (Some(false), Some(b), _) => Some(item.kind.certified(false, b)),
        (Some(a), Some(b), None) => Some(item.kind.certified(a, b)),
        (Some(a), Some(b), Some(Some(g))) => Some(if g {
            Outcome::Ungrounded.as_str()
        } else {
            item.kind.certified(a, b)
        }),
        _ => None,
    };
    totals.verdicts += 1;
    if certified.is_some_and(|c| c != item.verdict) {
        totals.disagreements += 1;
    }
    let mut entries = Vec::new();
    for (q, c) in certs {
        let mut e = json!({
            "session": item.session,
            "step": item.step,
            "event": item.event,
            "formula": item.text,
            "verdict": item.verdict,
            "question": q.text(),
        });
        if let Some(c) = &item.claimed {
            e["claimed"] = c.clone();
        }
        if let Some(c) = certified {
            e["certified"] = json!(c);
            e["agrees"] = json!(c == item.verdict);
        }
        match c {
            Ok(cert) => {
                totals.certificates += 1;
                let cnf = format!("{}-{}.cnf", item.stem, q.tag());
                fs::write(dir.join(&cnf), &cert.cnf)?;
                e["cnf"] = json!(cnf);
                match &cert.answer {
                    Answer::Unsat { proof } => {
                        let name = format!("{}-{}.drat", item.stem, q.tag());
                        fs::write(dir.join(&name), proof)?;
                        e["answer"] = json!("unsatisfiable");
                        e["proof"] = json!(name);
                    }
                    Answer::Sat { .. } => {
                        let name = format!("{}-{}.model", item.stem, q.tag());
                        fs::write(dir.join(&name), cert.model_text().unwrap_or_default())?;
                        e["answer"] = json!("satisfiable");
                        e["model"] = json!(name);
                    }
                }
            }
            Err(msg) => {
                totals.failed += 1;
                e["error"] = json!(msg);
            }
        }
        entries.push(e);
    }
    Ok(entries)
}

/// Σ at step `t` of a session as premises: every active belief whose formula parses (one
/// that does not is not in the recomputation's Σ either), ground beliefs as their value
/// atoms, with the ids of those left out.
/// Each record's formula is decoded and parsed once (`parsed`, by record index), not once
/// per verdict, and without pinning its event: a walk over a long trace would otherwise
/// keep every announcement decoded.
fn sigma_at(
    model: &Model,
    tl: &Timeline,
    t: u32,
    parsed: &mut HashMap<u32, Option<(Formula, bool)>>,
) -> (Vec<(String, Formula, bool)>, Vec<String>) {
    use crate::trace::event::{Body, Role};
    let mut held = Vec::new();
    let mut left = Vec::new();
    let beliefs = tl.beliefs();
    let end = beliefs.partition_point(|r| r.announced <= t);
    for (i, r) in beliefs[..end].iter().enumerate() {
        if !r.active_at(t) {
            continue;
        }
        let f = parsed.entry(i as u32).or_insert_with(|| {
            // A ground belief's record stands for its value atom (the replay's announcement).
            if let Some(a) = tl.ground_announce(i as u32) {
                return parse(&a.formula).ok().map(|f| (f, false));
            }
            let ev = load_at(model.log(), r.event)?;
            match &ev.body {
                Body::Announce(a) if r.formula_ok => parse(&a.formula)
                    .ok()
                    .map(|f| (f, matches!(a.role, Role::Rule | Role::Norm))),
                _ => None,
            }
        });
        match f {
            Some((f, hard)) => held.push((r.id.to_string(), f.clone(), *hard)),
            None => left.push(r.id.to_string()),
        }
    }
    (held, left)
}

/// Σ at a step as premises (id, formula, whether a rule or norm) and the ids left out,
/// cached between the verdicts of one step.
type SigmaAt = (u32, Vec<(String, Formula, bool)>, Vec<String>);

/// One recomputed verdict of a session, to certify.
struct Found<'a> {
    step: u32,
    event: u32,
    kind_name: &'static str,
    kind: Verdict,
    verdict: Result<&'static str, &'a Unknown>,
    claimed: Option<Value>,
}

fn verdicts(rc: &Recomputed) -> Vec<Found<'_>> {
    let mut out: Vec<Found> = Vec::new();
    for v in &rc.verifies {
        out.push(Found {
            step: v.step,
            event: v.event,
            kind_name: "verify",
            kind: Verdict::Gate,
            // The refined outcome: `ungrounded` is certified by a third question.
            verdict: v.result.as_ref().map(|g| g.outcome.as_str()),
            claimed: v.claimed.map(|c| json!(c)),
        });
    }
    for q in &rc.queries {
        out.push(Found {
            step: q.step,
            event: q.event,
            kind_name: "query",
            kind: Verdict::Entails,
            verdict: q.result.as_ref().map(|e| e.as_str()),
            claimed: q.claimed.map(|c| json!(c)),
        });
    }
    for a in &rc.answers {
        out.push(Found {
            step: a.step,
            event: a.event,
            kind_name: "answer",
            kind: Verdict::Entails,
            verdict: a.result.as_ref().map(|e| e.as_str()),
            claimed: None,
        });
    }
    out.sort_by_key(|f| (f.step, f.event));
    out
}

/// The formula text of the event at `pos` (a verify's formulas joined by ∧ as the
/// recomputation joins them), with where the event is (`file:line`) and a verify's cited
/// premises when it cites any.
fn formula_text(model: &Model, pos: u32) -> Option<(String, String, Option<Vec<String>>)> {
    use crate::trace::event::Body;
    let ev = load_at(model.log(), pos)?;
    let origin = format!("{}:{}", &*ev.origin.file, ev.origin.line);
    let because = match &ev.body {
        Body::Verify(v) if !v.because.is_empty() => {
            Some(v.because.iter().map(|b| b.to_string()).collect())
        }
        _ => None,
    };
    let text = match &ev.body {
        Body::Verify(v) => {
            let texts: Vec<&str> = v.all_formulas().collect();
            match texts.len() {
                0 => None,
                1 => Some(texts[0].to_string()),
                _ => Some(
                    texts
                        .iter()
                        .map(|t| format!("({t})"))
                        .collect::<Vec<_>>()
                        .join(" & "),
                ),
            }
        }
        Body::Query(q) => Some(q.formula.to_string()),
        Body::Answer(a) => a.formula.as_deref().map(str::to_string),
        _ => None,
    }?;
    Some((text, origin, because))
}

/// Certifies every recomputed verdict of one session into `dir`, appending index entries.
/// `number` distinguishes the sessions' file names.
pub fn write_session(
    dir: &Path,
    model: &Model,
    rc: &Recomputed,
    number: usize,
    opts: &Options,
    index: &mut Vec<Value>,
    totals: &mut Totals,
) -> io::Result<()> {
    let Some(tl) = model.timeline(&rc.session) else {
        return Ok(());
    };
    let mut cached: Option<SigmaAt> = None;
    let mut parsed: HashMap<u32, Option<(Formula, bool)>> = HashMap::new();
    for f in verdicts(rc) {
        let Ok(verdict) = f.verdict else {
            totals.uncertified += 1;
            continue;
        };
        let Some((text, origin, because)) = formula_text(model, f.event) else {
            continue;
        };
        let Ok(formula) = parse(&text) else {
            continue;
        };
        let before = f.step - 1;
        if cached.as_ref().is_none_or(|c| c.0 != before) {
            let (held, left) = sigma_at(model, tl, before, &mut parsed);
            cached = Some((before, held, left));
        }
        let Some((_, held, left)) = cached.as_ref() else {
            continue;
        };
        let sigma: Vec<Premise> = held
            .iter()
            .map(|(id, formula, _)| Premise { id, formula })
            .collect();
        let premises: Option<Vec<Premise>> = because.as_ref().map(|cited| {
            held.iter()
                .filter(|(id, _, hard)| *hard || cited.contains(id))
                .map(|(id, formula, _)| Premise { id, formula })
                .collect()
        });
        let mut context = vec![format!("event: {origin}")];
        if !left.is_empty() {
            context.push(format!(
                "not in Σ (their formulas do not parse): {}",
                left.join(", ")
            ));
        }
        let item = Item {
            session: &rc.session,
            step: u64::from(f.step),
            event: f.kind_name,
            text: &text,
            formula: &formula,
            sigma: &sigma,
            premises: premises.as_deref(),
            kind: f.kind,
            verdict,
            claimed: f.claimed,
            stem: format!("s{number}-step{}-{}", f.step, f.kind_name),
            context,
        };
        index.extend(write_item(dir, &item, opts, totals)?);
    }
    Ok(())
}

/// Writes `entries` as `DIR/index.json`, after the entries already there when `append`
/// (the REPL adds to a directory one check at a time).
pub fn write_index(dir: &Path, mut entries: Vec<Value>, append: bool) -> io::Result<PathBuf> {
    let path = dir.join(INDEX);
    if append
        && let Ok(text) = fs::read_to_string(&path)
        && let Ok(Value::Array(mut old)) = serde_json::from_str::<Value>(&text)
    {
        old.append(&mut entries);
        entries = old;
    }
    let text = serde_json::to_string_pretty(&Value::Array(entries)).map_err(io::Error::other)?;
    fs::write(&path, text + "\n")?;
    Ok(path)
}

/// Certifies every recomputed verdict of every session into `dir` (created if missing) and
/// writes its index.
pub fn write_all(
    dir: &Path,
    model: &Model,
    recomputed: &[Recomputed],
    opts: &Options,
) -> io::Result<Totals> {
    fs::create_dir_all(dir)?;
    let mut index = Vec::new();
    let mut totals = Totals::default();
    for (i, rc) in recomputed.iter().enumerate() {
        write_session(dir, model, rc, i + 1, opts, &mut index, &mut totals)?;
    }
    write_index(dir, index, false)?;
    Ok(totals)
}

/// Certifies one verdict the REPL gave (`check φ --certificate DIR`, `entails φ
/// --certificate DIR`) into `dir` (created if missing), adding its entries to the
/// directory's index; returns them.
pub fn write_one(dir: &Path, item: Item<'_>, opts: &Options) -> io::Result<Vec<Value>> {
    fs::create_dir_all(dir)?;
    // Numbered after what the directory's index already lists, so that checks written one
    // after another into the same directory never overwrite each other.
    let before = fs::read_to_string(dir.join(INDEX))
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<Value>>(&t).ok())
        .map_or(0, |v| v.len());
    let item = Item {
        stem: format!("{}-{}", item.stem, before / 2 + 1),
        ..item
    };
    let mut totals = Totals::default();
    let entries = write_item(dir, &item, opts, &mut totals)?;
    write_index(dir, entries.clone(), true)?;
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::certificate::{model_satisfies, parse_dimacs};
    use crate::model::recompute::RecomputeOptions;
    use crate::trace::generate::{GenConfig, write_mixed};

    /// Quantified Σ: the certificates ground over the same active domain as the engine
    /// (the constants of Σ and the question), through retractions that shrink it, so they
    /// imply the recomputed verdicts on the seed-001 sample and on the issue's
    /// retraction case. A change to the quantifier semantics on one side only fails here.
    #[test]
    fn quantified_verdicts_agree_with_the_recomputation() {
        let lines = [
            r#"{"kind":"announce","id":"qb","formula":"Q(b)"}"#,
            r#"{"kind":"announce","id":"qc","formula":"Q(c)"}"#,
            r#"{"kind":"verify","formula":"exists x. (P(x) & ~Q(x))","outcome":"newinfo"}"#,
            r#"{"kind":"announce","id":"ex","formula":"exists x. (P(x) & ~Q(x))"}"#,
            r#"{"kind":"verify","formula":"P(b) | P(c)","outcome":"entailed"}"#,
            r#"{"kind":"retract","target":"qb"}"#,
            r#"{"kind":"verify","formula":"P(b) | P(c)","outcome":"newinfo"}"#,
            r#"{"kind":"query","formula":"forall x. Q(x)","answer":"no"}"#,
            r#"{"kind":"announce","id":"all","formula":"forall x. (P(x) -> R(x))","role":"rule"}"#,
            r#"{"kind":"query","formula":"exists y. R(y)","answer":"yes"}"#,
            r#"{"kind":"answer","formula":"R(c)","text":"c"}"#,
        ];
        let hand = Model::from_bytes("q.jsonl", (lines.join("\n") + "\n").as_bytes());
        let sample = Model::load(&[concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/sample-traces/alice-bob-norms.jsonl"
        )])
        .unwrap();
        for model in [hand, sample] {
            let rcs: Vec<Recomputed> = model
                .timelines()
                .iter()
                .filter_map(|tl| model.recompute(tl.name(), &RecomputeOptions::default()))
                .collect();
            let dir = tempfile::tempdir().unwrap();
            let t = write_all(dir.path(), &model, &rcs, &Options::default()).unwrap();
            assert!(t.verdicts >= 6, "{t:?}");
            assert_eq!(
                (t.disagreements, t.failed, t.uncertified),
                (0, 0, 0),
                "{t:?}"
            );
            let index = fs::read_to_string(dir.path().join(INDEX)).unwrap();
            assert!(index.contains("unsatisfiable") && index.contains("\"satisfiable\""));
        }
    }

    /// Ground beliefs are members of Σ as their value atoms, in the certificates as in the
    /// recomputation: a verdict that rests on a memory record (and on its overwrite) is
    /// certified as the recomputation decides it.
    #[test]
    fn ground_beliefs_are_in_the_certified_sigma() {
        let lines = [
            r#"{"kind":"belief","name":"status","value":"due","source":"memory:x"}"#,
            r#"{"kind":"verify","formula":"status = \"paid\"","outcome":"contradiction"}"#,
            r#"{"kind":"announce","id":"r","formula":"ok -> status = \"paid\"","role":"rule"}"#,
            r#"{"kind":"verify","formula":"~ok","outcome":"entailed"}"#,
            r#"{"kind":"belief","name":"status","value":"paid","source":"memory:x"}"#,
            r#"{"kind":"verify","formula":"status = \"paid\"","outcome":"entailed"}"#,
        ];
        let model = Model::from_bytes("kv.jsonl", (lines.join("\n") + "\n").as_bytes());
        let rcs: Vec<Recomputed> = model
            .timelines()
            .iter()
            .filter_map(|tl| model.recompute(tl.name(), &RecomputeOptions::default()))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let t = write_all(dir.path(), &model, &rcs, &Options::default()).unwrap();
        assert_eq!(t.verdicts, 3, "{t:?}");
        assert_eq!(
            (t.disagreements, t.failed, t.uncertified),
            (0, 0, 0),
            "{t:?}"
        );
    }

    /// Differential: on generated traces (few atoms, so that verdicts of every kind occur,
    /// `ungrounded` included) the certificates, built from scratch from the replay's Σ,
    /// imply exactly the verdicts the engine's incremental recomputation gave; every model satisfies its CNF, every
    /// proof ends in the empty clause, and the index lists both questions of each verdict.
    #[test]
    fn certificates_agree_with_the_recomputation_on_generated_traces() {
        for seed in [3, 11] {
            let mut bytes = Vec::new();
            let cfg = GenConfig {
                events: 700,
                seed,
                sessions: 2,
                atoms: 6,
            };
            write_mixed(&mut bytes, &cfg).unwrap();
            let model = Model::from_bytes("gen.jsonl", &bytes);
            let ro = RecomputeOptions {
                audit: None,
                ..RecomputeOptions::default()
            };
            let rcs: Vec<Recomputed> = model
                .timelines()
                .iter()
                .filter_map(|tl| model.recompute(tl.name(), &ro))
                .collect();
            let dir = tempfile::tempdir().unwrap();
            let t = write_all(dir.path(), &model, &rcs, &Options::default()).unwrap();
            assert!(t.verdicts > 50, "{t:?}");
            assert_eq!(t.disagreements, 0, "{t:?}");
            assert_eq!(t.failed, 0, "{t:?}");
            // Two questions per verdict, a third for each verify citing premises.
            assert!(t.certificates > 2 * t.verdicts, "{t:?}");
            let index: Vec<Value> =
                serde_json::from_str(&fs::read_to_string(dir.path().join(INDEX)).unwrap()).unwrap();
            assert_eq!(index.len(), t.certificates);
            let mut verdicts = std::collections::BTreeSet::new();
            let (mut proofs, mut models) = (0, 0);
            for e in &index {
                assert_eq!(e["agrees"], true);
                verdicts.insert(e["verdict"].as_str().unwrap().to_string());
                let cnf = fs::read_to_string(dir.path().join(e["cnf"].as_str().unwrap())).unwrap();
                if let Some(m) = e["model"].as_str() {
                    models += 1;
                    let text = fs::read_to_string(dir.path().join(m)).unwrap();
                    let lits: Vec<i64> = text
                        .lines()
                        .filter_map(|l| l.strip_prefix("v "))
                        .flat_map(|l| l.split_whitespace().map(|w| w.parse::<i64>().unwrap()))
                        .filter(|&l| l != 0)
                        .collect();
                    assert!(model_satisfies(&parse_dimacs(&cnf).unwrap(), &lits));
                } else {
                    proofs += 1;
                    let p =
                        fs::read_to_string(dir.path().join(e["proof"].as_str().unwrap())).unwrap();
                    assert!(p.ends_with("0\n") && p.lines().last() == Some("0"), "{p}");
                }
            }
            assert!(proofs > 0 && models > 0, "{proofs} {models}");
            assert!(verdicts.len() >= 4, "{verdicts:?}");
            assert!(verdicts.contains("ungrounded"), "{verdicts:?}");
        }
    }
}
