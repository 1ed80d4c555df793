//! The live gate's answers: Θ(Σ, φ) on a live session's Σ at the moment it asks, with a
//! minimal conflict and every minimal repair (see `docs/live.md` and [`crate::trace::gate`]).
//!
//! A [`ReplGate`] keeps its own replay of the session (the model layer's, fed the items the
//! hub shows it) and answers each gate with the REPL's `check` on Σ at the session's last
//! step, so a gate's verdict is the one `check φ` gives in the REPL at that step; the
//! repairs are `whatif`'s enumeration of minimal corrections ([`crate::model::whatif::room_for`]).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::logic::engine::{BeliefSpec, Outcome};
use crate::model::Model;
use crate::model::recompute::RecomputeOptions;
use crate::trace::Item;
use crate::trace::event::{Body, Event, Gate};
use crate::trace::gate::{GateAnswer, GateFactory, Gatekeeper};

use super::{Command, EmptyTrace, FormulaArg, ModelSigma, Repl, Reply, TraceSigma};

/// Answers the gates of one live session on its replay.
#[derive(Debug, Default)]
pub struct ReplGate {
    model: Arc<Model>,
    /// Items seen since the last answer, replayed when the next gate comes.
    pending: Vec<Item>,
}

/// What a gate decided.
struct Decision {
    outcome: Outcome,
    conflict: Vec<String>,
    sigma_consistent: bool,
    repairs: Vec<Vec<String>>,
    complete: bool,
}

impl ReplGate {
    /// A gatekeeper for a new session.
    pub fn new() -> Self {
        ReplGate::default()
    }

    /// What a live hub takes to answer gates with [`ReplGate`]s
    /// ([`crate::trace::live::LiveConfig::gatekeeper`]).
    pub fn factory() -> GateFactory {
        GateFactory(Arc::new(|| Box::new(ReplGate::new())))
    }

    /// Replays the items seen since the last gate.
    fn catch_up(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        // Only this gatekeeper holds the model between answers: the REPL of an answer is
        // gone by the time the next items arrive.
        if let Some(m) = Arc::get_mut(&mut self.model) {
            m.extend(std::mem::take(&mut self.pending));
        }
    }

    /// Θ(Σ, φ) with its conflict and repairs, on Σ at the session's last step.
    fn decide(&self, session: &str, gate: &Gate) -> Result<Decision, String> {
        let trace: Box<dyn TraceSigma> = match self.model.timeline(session) {
            Some(_) => Box::new(ModelSigma::new(self.model.clone(), session)),
            None => Box::new(EmptyTrace),
        };
        let sigma = trace.sigma_at(trace.last_step());
        let mut repl = Repl::new(trace);
        let command = Command::Check {
            formula: FormulaArg {
                text: gate.formula.to_string(),
                column: 1,
            },
            because: gate.because.iter().map(|b| b.to_string()).collect(),
            certificate: None,
        };
        let reply = repl.run(&command).map_err(|e| e.to_text())?;
        let Reply::Check {
            outcome,
            theta,
            conflict,
            prior_conflict,
            ..
        } = reply
        else {
            return Err("internal error: check gave another reply".into());
        };
        let sigma_consistent = prior_conflict.is_empty();
        let ids = |ms: &[super::Member]| ms.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
        let mut d = Decision {
            outcome,
            conflict: if sigma_consistent {
                ids(&conflict)
            } else {
                ids(&prior_conflict)
            },
            sigma_consistent,
            repairs: Vec::new(),
            complete: true,
        };
        if theta == Outcome::Contradiction && sigma_consistent {
            let phi = crate::logic::parse::parse(&gate.formula)
                .map_err(|e| format!("column {}: {}", e.column, e.message))?;
            let members = sigma
                .into_iter()
                .map(|b| {
                    BeliefSpec::new(b.id, b.formula)
                        .role(b.role)
                        .confidence(b.confidence)
                        .step(b.step)
                })
                .collect();
            let spec = BeliefSpec::new("\u{0}gate", phi);
            let (repairs, complete) =
                crate::model::whatif::room_for(members, &spec, &RecomputeOptions::default())
                    .map_err(|e| e.to_string())?;
            d.repairs = repairs;
            d.complete = complete;
        }
        Ok(d)
    }
}

impl Gatekeeper for ReplGate {
    fn observe(&mut self, item: &Item) {
        self.pending.push(item.clone());
    }

    fn answer(&mut self, ev: &Event) -> GateAnswer {
        self.catch_up();
        let id = ev.id.as_deref().map(str::to_string);
        let Body::Gate(gate) = &ev.body else {
            return GateAnswer {
                reply: json!({"reply_to": id, "error": "not a gate"}).to_string(),
                record: None,
            };
        };
        match self.decide(&ev.session, gate) {
            Ok(d) => answered(&ev.session, id, gate, &d),
            Err(message) => GateAnswer {
                reply: json!({"reply_to": id, "error": message}).to_string(),
                record: None,
            },
        }
    }
}

/// The reply line and the `verify` record of a decided gate.
fn answered(session: &str, id: Option<String>, gate: &Gate, d: &Decision) -> GateAnswer {
    let reply = json!({
        "reply_to": id,
        "outcome": d.outcome.as_str(),
        "conflict": d.conflict,
        "repairs": d.repairs,
        "repairs_complete": d.complete,
        "sigma_consistent": d.sigma_consistent,
    });
    let mut detail = format!(
        "asked by the agent through the live gate{}",
        id.as_deref().map_or(String::new(), |i| format!(" ({i})"))
    );
    if !d.conflict.is_empty() {
        detail.push_str(&format!("; conflict: {}", d.conflict.join(", ")));
    }
    if !d.repairs.is_empty() {
        let rs: Vec<String> = d
            .repairs
            .iter()
            .map(|r| format!("{{{}}}", r.join(", ")))
            .collect();
        detail.push_str(&format!("; repairs: {}", rs.join(" or ")));
    }
    let mut record = json!({
        "kind": "verify",
        "session": session,
        "formula": gate.formula.to_string(),
        "outcome": d.outcome.as_str(),
        "method": "gate",
        "detail": detail,
    });
    if !gate.because.is_empty() {
        record["because"] = Value::from(
            gate.because
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>(),
        );
    }
    GateAnswer {
        reply: reply.to_string(),
        record: Some(record.to_string()),
    }
}
