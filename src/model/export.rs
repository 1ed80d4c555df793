//! Σ at a step rendered for other tools: DIMACS CNF, SMT-LIB 2, the prompt bullet list of
//! seed 000's `export_prompt()`, seed 001's `export_prompt()` (the agent's prompt: its
//! instructions, the norms, the beliefs relevant to a question), and JSON.
//!
//! DIMACS and SMT-LIB need ground formulas: quantifiers are grounded over the active domain
//! of the exported Σ (the constants of its beliefs, contract §3), exactly as the engine does.
//! DIMACS goes through the engine's own Tseitin encoder ([`crate::logic::cnf`]), so the file
//! is equisatisfiable with Σ as the engine sees it; a `c` comment header maps every atom to
//! its variable and every belief id to its definition literal. SMT-LIB keeps the formula
//! structure (one `assert` per belief, the id in a comment), with atoms as quoted symbols.
//!
//! A belief whose formula does not parse (or cannot be grounded) cannot be encoded: DIMACS and
//! SMT-LIB list it in a comment and leave it out, the prompt shows its text as written, JSON
//! has it with `"error"`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Value, json};
use varisat::Lit;

use crate::logic::cnf::Tseitin;
use crate::logic::formula::{Atom, Formula, Term};
use crate::logic::ground::{self, DEFAULT_INSTANCE_CAP};
use crate::trace::event::Role;

use super::bdi::{BdiLog, BdiState, GroundBelief};
use super::timeline::BeliefView;
use crate::trace::TraceLog;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// DIMACS CNF.
    Dimacs,
    /// SMT-LIB 2.
    Smtlib,
    /// `- φ (source=S, p=0.90)` per belief.
    Prompt,
    /// Seed 001's prompt: the ASSERT / QUERY / ANSWER instructions, the norms, and the
    /// beliefs relevant to a question.
    AgentPrompt,
    /// A JSON object with the beliefs (and, for a BDI session, the BDI state).
    Json,
}

impl Format {
    /// Parses the contract name.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "dimacs" => Format::Dimacs,
            "smtlib" => Format::Smtlib,
            "prompt" => Format::Prompt,
            "agent-prompt" => Format::AgentPrompt,
            "json" => Format::Json,
            _ => return None,
        })
    }
}

/// What is being exported, for headers.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    /// The session name.
    pub session: &'a str,
    /// The step.
    pub step: u32,
}

/// Renders Σ in a format.
pub fn export(beliefs: &[BeliefView<'_>], format: Format, header: Header<'_>) -> String {
    match format {
        Format::Dimacs => dimacs(beliefs, header),
        Format::Smtlib => smtlib(beliefs, header),
        Format::Prompt => prompt(beliefs),
        Format::AgentPrompt => agent_prompt_of(beliefs, None),
        Format::Json => json(beliefs, header),
    }
}

/// Seed 001's instructions to the agent (§4, *Exporting to Prompt*), as the paper quotes
/// them, followed by its "epistemic guidelines" paragraph.
pub const AGENT_INSTRUCTIONS: &str = "You are an agent with certain known facts and rules \
(listed below). You must ensure your reasoning is logically consistent with these and obey \
the given norms. When you deduce a new fact, state it with an ASSERT tag. If you reach a \
conclusion or answer, use ANSWER tag. If you find a contradiction or need to check something, \
you may use QUERY.\nYour goal is to maintain a consistent knowledge state. Do not assume facts \
without proof or explicit assumption. If unsure, ask via QUERY. Adhere to all provided norms \
strictly.";

/// One belief as seed 001's prompt lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptBelief<'a> {
    /// The formula, when it parses (the relevance filter reads its symbols).
    pub formula: Option<Formula>,
    /// The text shown: the Unicode printing, or the text as written when it does not parse.
    pub text: String,
    /// Its source (`unknown` when none).
    pub source: &'a str,
    /// Its confidence.
    pub confidence: f64,
    /// Whether it is a norm (always listed).
    pub norm: bool,
}

/// The symbols of a formula the relevance filter compares: propositional atoms, quoted
/// propositions, predicate names and constants (never bound variables).
pub fn symbols(f: &Formula, out: &mut BTreeSet<String>) {
    let mut atoms = BTreeSet::new();
    ground::atoms(f, &mut atoms);
    for a in atoms {
        match a {
            Atom::Prop(p) => {
                out.insert(p);
            }
            Atom::Quoted(q) => {
                out.insert(format!("\"{q}\""));
            }
            // A key is the symbol: beliefs about one key share it whatever its value.
            Atom::Value(v) => {
                out.insert(v.key);
            }
            Atom::Pred(name, args) => {
                out.insert(name);
                for t in args {
                    if let Term::Const(c) = t {
                        out.insert(c);
                    }
                }
            }
        }
    }
}

/// Seed 001's `export_prompt()`: its instructions (the ASSERT / QUERY / ANSWER tags), every
/// norm of Σ (always listed: "they are few and high-level"), then the beliefs relevant to
/// `query`: those sharing a symbol (a predicate, a constant, a propositional atom) with it, the
/// paper's one-step relevance filter. Without a query every belief is listed. A belief whose
/// formula does not parse is listed only without a query (its symbols are unknown).
pub fn agent_prompt(beliefs: &[PromptBelief<'_>], query: Option<&Formula>) -> String {
    let mut want = BTreeSet::new();
    if let Some(q) = query {
        symbols(q, &mut want);
    }
    let line =
        |b: &PromptBelief<'_>| format!("- {} (source={}, p={:.2})", b.text, b.source, b.confidence);
    let norms: Vec<String> = beliefs.iter().filter(|b| b.norm).map(line).collect();
    let others: Vec<&PromptBelief<'_>> = beliefs.iter().filter(|b| !b.norm).collect();
    let relevant: Vec<String> = others
        .iter()
        .filter(|b| match (query, &b.formula) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(_), Some(f)) => {
                let mut s = BTreeSet::new();
                symbols(f, &mut s);
                !s.is_disjoint(&want)
            }
        })
        .map(|b| line(b))
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "{AGENT_INSTRUCTIONS}");
    let _ = writeln!(out);
    let _ = writeln!(out, "Norms:");
    if norms.is_empty() {
        let _ = writeln!(out, "- none");
    }
    for n in &norms {
        let _ = writeln!(out, "{n}");
    }
    let _ = writeln!(out);
    match query {
        Some(q) => {
            let _ = writeln!(
                out,
                "Known facts and rules relevant to {q} ({} of {}; the others share no predicate, \
                 constant or atom with it):",
                relevant.len(),
                others.len()
            );
        }
        None => {
            let _ = writeln!(out, "Known facts and rules ({}):", others.len());
        }
    }
    if relevant.is_empty() {
        let _ = writeln!(out, "- none");
    }
    for r in &relevant {
        let _ = writeln!(out, "{r}");
    }
    out
}

/// [`agent_prompt`] over Σ at a step of a trace.
pub fn agent_prompt_of(beliefs: &[BeliefView<'_>], query: Option<&Formula>) -> String {
    let items: Vec<PromptBelief<'_>> = beliefs
        .iter()
        .map(|b| {
            let formula = b.formula().ok();
            PromptBelief {
                text: formula
                    .as_ref()
                    .map_or_else(|| b.formula_text().trim().to_string(), |f| f.to_string()),
                formula,
                source: b.source().unwrap_or("unknown"),
                confidence: b.confidence(),
                norm: b.role() == Role::Norm,
            }
        })
        .collect();
    agent_prompt(&items, query)
}

/// Seed 000's `export_prompt()`: one `- φ (source=S, p=0.90)` line per belief, formulas in
/// the Unicode printing. A missing source prints as `unknown`.
pub fn prompt(beliefs: &[BeliefView<'_>]) -> String {
    let mut out = String::new();
    for b in beliefs {
        let f = match b.formula() {
            Ok(f) => f.to_string(),
            Err(_) => b.formula_text().trim().to_string(),
        };
        let _ = writeln!(
            out,
            "- {f} (source={}, p={:.2})",
            b.source().unwrap_or("unknown"),
            b.confidence()
        );
    }
    out
}

/// Parses and grounds every belief over the domain of the whole set.
fn grounded(beliefs: &[BeliefView<'_>]) -> Vec<Result<Formula, String>> {
    let parsed: Vec<Result<Formula, String>> = beliefs
        .iter()
        .map(|b| {
            b.formula()
                .map_err(|e| format!("does not parse at column {}: {}", e.column, e.message))
        })
        .collect();
    let mut domain = BTreeSet::new();
    for f in parsed.iter().flatten() {
        ground::domain_constants(f, &mut domain);
    }
    let domain: Vec<String> = domain.into_iter().collect();
    // Each belief in its witnessed form (`logic::ground`), as the engine holds it.
    parsed
        .into_iter()
        .map(|r| {
            r.and_then(|f| {
                ground::ground(&ground::witnessed(&f), &domain, DEFAULT_INSTANCE_CAP)
                    .map_err(|e| e.to_string())
            })
        })
        .collect()
}

fn one_line(s: &str) -> String {
    // Comments end at the line end; a newline in an id or message must not end them early.
    crate::sanitize::sanitize(s).replace(['\n', '\r'], " ")
}

fn dimacs_lit(l: Lit) -> String {
    l.to_dimacs().to_string()
}

/// DIMACS CNF: the Tseitin encoding of every belief plus a unit clause asserting it.
pub fn dimacs(beliefs: &[BeliefView<'_>], header: Header<'_>) -> String {
    let mut enc = Tseitin::new();
    let mut clauses: Vec<Vec<Lit>> = Vec::new();
    let mut defs: Vec<(String, Result<Lit, String>)> = Vec::new();
    for (b, g) in beliefs.iter().zip(grounded(beliefs)) {
        let r = g.and_then(|f| enc.encode(&f, &mut clauses).map_err(|e| format!("{e:?}")));
        if let Ok(l) = r {
            clauses.push(vec![l]);
        }
        defs.push((b.id().to_string(), r));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "c doxascope export: session {}, step {}, {} beliefs",
        one_line(header.session),
        header.step,
        beliefs.len()
    );
    let mut atoms: Vec<(&Atom, varisat::Var)> = enc.atoms().collect();
    atoms.sort_by_key(|(_, v)| v.index());
    for (a, v) in atoms {
        let _ = writeln!(
            out,
            "c atom {} {}",
            v.to_dimacs(),
            one_line(&Formula::Atom(a.clone()).to_string())
        );
    }
    for (id, r) in &defs {
        match r {
            Ok(l) => {
                let _ = writeln!(out, "c belief {} {}", dimacs_lit(*l), one_line(id));
            }
            Err(e) => {
                let _ = writeln!(out, "c skipped {}: {}", one_line(id), one_line(e));
            }
        }
    }
    let _ = writeln!(out, "p cnf {} {}", enc.num_vars(), clauses.len());
    for c in &clauses {
        for l in c {
            out.push_str(&dimacs_lit(*l));
            out.push(' ');
        }
        out.push_str("0\n");
    }
    out
}

/// An SMT-LIB quoted symbol: `|...|` may hold anything but `|` and `\`, which are replaced.
fn symbol(a: &Atom) -> String {
    let text = match a {
        Atom::Prop(p) => p.clone(),
        Atom::Quoted(q) => format!("\"{q}\""),
        Atom::Value(_) => a.to_string(),
        Atom::Pred(p, args) => {
            let args: Vec<&str> = args
                .iter()
                .map(|t| match t {
                    Term::Var(v) | Term::Const(v) => v.as_str(),
                })
                .collect();
            format!("{p}({})", args.join(", "))
        }
    };
    // The text may come from a quoted proposition: sanitize it like any displayed string.
    format!("|{}|", one_line(&text).replace(['|', '\\'], "_"))
}

fn smt_expr(f: &Formula, out: &mut String) {
    // Recursion is bounded by the parser's depth limit (grounding does not deepen a tree
    // beyond one level per quantifier).
    let list = |op: &str, fs: &[Formula], out: &mut String| {
        out.push('(');
        out.push_str(op);
        for g in fs {
            out.push(' ');
            smt_expr(g, out);
        }
        out.push(')');
    };
    match f {
        Formula::True => out.push_str("true"),
        Formula::False => out.push_str("false"),
        Formula::Atom(a) => out.push_str(&symbol(a)),
        Formula::Not(g) => {
            out.push_str("(not ");
            smt_expr(g, out);
            out.push(')');
        }
        Formula::And(fs) if fs.is_empty() => out.push_str("true"),
        Formula::Or(fs) if fs.is_empty() => out.push_str("false"),
        Formula::And(fs) if fs.len() == 1 => smt_expr(&fs[0], out),
        Formula::Or(fs) if fs.len() == 1 => smt_expr(&fs[0], out),
        Formula::And(fs) => list("and", fs, out),
        Formula::Or(fs) => list("or", fs, out),
        Formula::Implies(a, b) => {
            out.push_str("(=> ");
            smt_expr(a, out);
            out.push(' ');
            smt_expr(b, out);
            out.push(')');
        }
        Formula::Iff(a, b) => {
            out.push_str("(= ");
            smt_expr(a, out);
            out.push(' ');
            smt_expr(b, out);
            out.push(')');
        }
        // Ground formulas have no quantifiers; this arm is only reached if grounding was
        // skipped, and then the body is the best rendering available.
        Formula::Forall(_, g) | Formula::Exists(_, g) => smt_expr(g, out),
    }
}

/// SMT-LIB 2: one `declare-const` per atom, one `assert` per belief with its id in a comment.
pub fn smtlib(beliefs: &[BeliefView<'_>], header: Header<'_>) -> String {
    let g = grounded(beliefs);
    let mut atoms = BTreeSet::new();
    for f in g.iter().flatten() {
        ground::atoms(f, &mut atoms);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "; doxascope export: session {}, step {}, {} beliefs",
        one_line(header.session),
        header.step,
        beliefs.len()
    );
    out.push_str("(set-logic QF_UF)\n");
    for a in &atoms {
        let _ = writeln!(out, "(declare-const {} Bool)", symbol(a));
    }
    one_value_per_key(&atoms, &mut out);
    for (b, r) in beliefs.iter().zip(g) {
        match r {
            Ok(f) => {
                let _ = writeln!(
                    out,
                    "; {} ({}, source={}, p={:.2})",
                    one_line(b.id()),
                    role_name(b.role()),
                    one_line(b.source().unwrap_or("unknown")),
                    b.confidence()
                );
                let mut e = String::new();
                smt_expr(&f, &mut e);
                let _ = writeln!(out, "(assert {e})");
            }
            Err(e) => {
                let _ = writeln!(out, "; skipped {}: {}", one_line(b.id()), one_line(&e));
            }
        }
    }
    out.push_str("(check-sat)\n");
    out
}

/// The functional constraint of value atoms (a key holds one value at a time), which the
/// engine adds itself: pairwise exclusions of the values of each key.
fn one_value_per_key(atoms: &BTreeSet<Atom>, out: &mut String) {
    let mut by_key: std::collections::BTreeMap<&str, Vec<&Atom>> = Default::default();
    for a in atoms {
        if let Atom::Value(v) = a {
            by_key.entry(v.key.as_str()).or_default().push(a);
        }
    }
    for (key, vals) in by_key.into_iter().filter(|(_, v)| v.len() > 1) {
        let _ = writeln!(out, "; one value at a time: {}", one_line(key));
        for (i, a) in vals.iter().enumerate() {
            for b in &vals[i + 1..] {
                let _ = writeln!(out, "(assert (not (and {} {})))", symbol(a), symbol(b));
            }
        }
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Fact => "fact",
        Role::Rule => "rule",
        Role::Norm => "norm",
        Role::Assumption => "assumption",
    }
}

/// One belief as a JSON object (also used by the REPL's `sigma`).
pub fn belief_json(b: &BeliefView<'_>) -> Value {
    let mut v = json!({
        "id": b.id(),
        "formula": b.formula_text(),
        "role": role_name(b.role()),
        "source": b.source(),
        "confidence": b.confidence(),
        "because": b.because(),
        "step": b.step(),
        "seq": b.event.seq,
        "origin": {"file": &*b.origin().file, "line": b.origin().line},
        "text": b.text(),
    });
    match b.formula() {
        Ok(f) => v["normalized"] = Value::String(crate::logic::print::normalized(&f)),
        Err(e) => {
            v["error"] = json!({"message": e.message, "column": e.column});
        }
    }
    v
}

/// A JSON object: the session, the step and the beliefs.
pub fn json(beliefs: &[BeliefView<'_>], header: Header<'_>) -> String {
    json_with_bdi(beliefs, header, None)
}

fn ground_json(g: &GroundBelief<'_>) -> Value {
    json!({
        "name": g.name,
        "value": g.value,
        "unit": g.unit,
        "source": g.source,
        "step": g.step,
        "from_step_event": g.from_step_event,
    })
}

/// The whole BDI state at a step (seed 004): schema beliefs, ground beliefs with every
/// write of each (upsert history), desires, the intention, every plan's steps with their
/// verdicts (see [`crate::model::bdi::StepView::verdict_given`]), satisfaction records, the
/// plan library with its counters and review decisions.
pub fn bdi_json(st: &BdiState<'_>, bl: &BdiLog, log: &TraceLog) -> Value {
    let ground: Vec<Value> = st
        .ground
        .iter()
        .map(|g| {
            let mut v = ground_json(g);
            v["writes"] = json!(g.writes);
            v["history"] = bl
                .history(log, g.name, st.step)
                .iter()
                .map(ground_json)
                .collect();
            v
        })
        .collect();
    let plans: Vec<Value> = st
        .plans
        .iter()
        .map(|p| {
            json!({
                "id": p.id,
                "step": p.step,
                "intention_type": p.plan.intention_type,
                "origin": p.plan.origin,
                "context_conditions": p.plan.context_conditions,
                "complete": p.complete(),
                "deadlocked": p.deadlocked(),
                "steps": p.steps.iter().map(|s| json!({
                    "id": s.def.id,
                    "kind": s.def.kind,
                    "deps": s.def.deps,
                    "post": s.def.post,
                    "state": s.state.as_str(),
                    "post_met": s.post_met,
                    "recomputed": bl.recompute_post(s),
                    "verdict": s.verdict_given(bl.recompute_post(s)).as_str(),
                    "checks": s.checks.iter().map(|c| json!({
                        "tier": c.tier,
                        "ok": c.ok,
                        "failure_mode": c.failure_mode,
                        "step": c.step,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "step": st.step,
        "schema_beliefs": st.schema_beliefs,
        "desires": st.desires,
        "ground_beliefs": ground,
        "intention": st.intention.as_ref().map(|i| json!({
            "id": i.id,
            "step": i.step,
            "body": i.intention,
        })),
        "plans": plans,
        "satisfaction": st.satisfaction.iter().map(|s| json!({
            "intention": s.intention,
            "ok": s.ok,
            "step": s.step,
        })).collect::<Vec<_>>(),
        "library": st.library.iter().map(|e| json!({
            "id": e.id,
            "origin": e.origin,
            "versions": e.versions,
            "use_count": e.use_count,
            "success_count": e.success_count,
            "failure_count": e.failure_count,
            "decision": e.decision,
        })).collect::<Vec<_>>(),
        "reviews": st.reviews.iter().map(|(step, d)| json!({
            "step": step,
            "decision": d,
        })).collect::<Vec<_>>(),
    })
}

/// [`json`] with the session's BDI state beside Σ under `"bdi"` (only for a session that
/// has BDI events, so the export of a purely logical session is unchanged).
pub fn json_with_bdi(beliefs: &[BeliefView<'_>], header: Header<'_>, bdi: Option<Value>) -> String {
    json_full(beliefs, header, bdi, None)
}

/// [`json_with_bdi`] with seed 000's inconsistency log up to the step
/// ([`crate::model::inconsistency`]) under `"inconsistencies"`, when given.
pub fn json_full(
    beliefs: &[BeliefView<'_>],
    header: Header<'_>,
    bdi: Option<Value>,
    inconsistencies: Option<Value>,
) -> String {
    let mut v = json!({
        "session": header.session,
        "step": header.step,
        "beliefs": beliefs.iter().map(belief_json).collect::<Vec<_>>(),
    });
    if let Some(b) = bdi {
        v["bdi"] = b;
    }
    if let Some(i) = inconsistencies {
        v["inconsistencies"] = i;
    }
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}
