//! [`ModelSigma`]: the REPL's trace layer read from a replayed [`Model`], the same replay
//! (`model::timeline`) that the panes, `audit` and `export` read, so Σ at a step is the same
//! set of beliefs everywhere.

use std::sync::Arc;

use crate::logic::engine::Role;
use crate::model::Model;

use super::{TraceBelief, TraceSigma};

/// Σ of one session of a replayed [`Model`], for the REPL.
pub struct ModelSigma {
    model: Arc<Model>,
    session: String,
}

impl ModelSigma {
    /// The REPL's view of `session` in `model`.
    pub fn new(model: Arc<Model>, session: impl Into<String>) -> Self {
        ModelSigma {
            model,
            session: session.into(),
        }
    }
}

/// The engine's role for a trace role.
pub(crate) fn engine_role(role: crate::trace::event::Role) -> Role {
    use crate::trace::event::Role as R;
    match role {
        R::Fact => Role::Fact,
        R::Rule => Role::Rule,
        R::Norm => Role::Norm,
        R::Assumption => Role::Assumption,
    }
}

impl TraceSigma for ModelSigma {
    fn session(&self) -> &str {
        &self.session
    }

    fn model(&self) -> Option<(&Arc<Model>, &str)> {
        Some((&self.model, &self.session))
    }

    fn last_step(&self) -> u64 {
        self.model
            .timeline(&self.session)
            .map_or(0, |t| u64::from(t.len()))
    }

    fn ground_at(&self, step: u64) -> Vec<(String, String)> {
        let step = u32::try_from(step).unwrap_or(u32::MAX);
        let Some(tl) = self.model.timeline(&self.session) else {
            return Vec::new();
        };
        crate::model::bdi::state_at(tl.bdi_log(), self.model.log(), step)
            .ground
            .iter()
            .map(|g| {
                let value = g
                    .value
                    .map(crate::trace::import::write::as_text)
                    .unwrap_or_default();
                (g.name.to_string(), value)
            })
            .collect()
    }

    fn sigma_at(&self, step: u64) -> Vec<TraceBelief> {
        let step = u32::try_from(step).unwrap_or(u32::MAX);
        let Some(views) = self.model.sigma_at(&self.session, step) else {
            return Vec::new();
        };
        // A belief whose formula does not parse is reported by validate and the audit; it
        // cannot take part in reasoning, so it is left out of the REPL's Σ (the recomputation
        // leaves it out of the engine the same way).
        views
            .iter()
            .filter_map(|v| {
                Some(TraceBelief {
                    id: v.id().to_string(),
                    formula: v.formula().ok()?,
                    role: engine_role(v.role()),
                    source: v.source().unwrap_or("").to_string(),
                    confidence: v.confidence(),
                    step: u64::from(v.step()),
                    because: v.because().iter().map(|b| b.to_string()).collect(),
                })
            })
            .collect()
    }
}
