//! The BDI model of seed 004: schema and ground beliefs, desires, intentions, plans as DAGs
//! with per-step status and postconditions, satisfaction, the plan library and reviews.
//!
//! # Design
//!
//! While replaying, every BDI event is appended, stamped with its step, to one of a few
//! append-only logs ([`BdiLog`]); nothing is overwritten. The state at step t
//! ([`BdiState`]) is then a pure function of those logs and t: the prefix of each log up to t
//! (found by binary search, since steps only grow), folded into "latest value per key" maps.
//! This is the same idea as checkpoints-plus-replay with the checkpoint at step 0, but each
//! log holds only its own kind, so the fold touches only the BDI events before t (a few
//! thousand even in a million-event trace, see `benches/model.rs`), and history (a ground
//! belief's value at every upsert) costs nothing extra: it is the log itself.
//!
//! Ground beliefs are upserted by name from `belief` events and from the `new_beliefs` of a
//! `step` with `status: done` (convention 9 of `docs/samples.md`). A `plan` event whose id
//! was seen before replaces that plan from then on (a replan); `step` and `postcondition`
//! events refer to the plan with their id current at the time.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::trace::Event;
use crate::trace::TraceLog;
use crate::trace::brief::Gist;
use crate::trace::event::Kind;
use crate::trace::event::{
    Belief, Body, Decision, Intention, Plan, PlanOrigin, PlanStep, StepStatus,
};

use super::timeline::event_at;

/// Marks a top-level `belief` event in [`Upsert::nested`].
const TOP: u32 = u32::MAX;

/// One write of a ground belief.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upsert {
    /// The step of the event.
    pub step: u32,
    /// The event (a `belief`, or a `step` whose `new_beliefs` wrote it).
    pub event: u32,
    /// Index into the step's `new_beliefs`, or `u32::MAX` for a `belief` event.
    pub nested: u32,
    /// Index of the name in [`BdiLog::names`].
    pub name: u32,
}

/// A `retract` that ended a ground belief (a memory edit: see `docs/import.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroundRetraction {
    /// The step of the `retract`.
    pub step: u32,
    /// The `retract` event's position.
    pub event: u32,
    /// Index of the name in [`BdiLog::names`].
    pub name: u32,
    /// The write it ended, as an index into [`BdiLog::upserts`].
    pub upsert: u32,
}

/// A `plan` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRecord {
    /// The plan id (`id` of the event; `plan-N` by position when absent).
    pub id: String,
    /// The step of the event.
    pub step: u32,
    /// The event position.
    pub event: u32,
}

/// A `step` or `postcondition` event, resolved to the plan record current at the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRef {
    /// The step of the event.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// Index into [`BdiLog::plans`], `None` if the plan id was never seen before.
    pub plan: Option<u32>,
}

/// The append-only BDI history of one session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BdiLog {
    /// `schema_belief` events: (step, event).
    pub schema: Vec<(u32, u32)>,
    /// `desire` events: (step, event).
    pub desires: Vec<(u32, u32)>,
    /// Ground belief names, in order of first write.
    pub names: Vec<String>,
    name_ix: hashbrown::HashMap<String, u32>,
    /// Every ground-belief write, in order.
    pub upserts: Vec<Upsert>,
    /// Every retraction of a ground belief, in order.
    pub retractions: Vec<GroundRetraction>,
    /// Per name, the write that holds now (`None` once retracted).
    held: Vec<Option<u32>>,
    /// `intention` events: (step, event).
    pub intentions: Vec<(u32, u32)>,
    /// `plan` events.
    pub plans: Vec<PlanRecord>,
    current_plan: hashbrown::HashMap<String, u32>,
    /// `step` events.
    pub steps: Vec<StepRef>,
    /// Per key, the `step` events whose `inputs` name it: (step, event), in order. Kept
    /// during the replay so that a key's readers are found without reading the steps again
    /// (the detail pane asks on every frame).
    reads: hashbrown::HashMap<crate::trace::event::Text, Vec<(u32, u32)>>,
    /// `postcondition` events.
    pub postconditions: Vec<StepRef>,
    /// `satisfaction` events: (step, event).
    pub satisfactions: Vec<(u32, u32)>,
    /// `review` events: (step, event).
    pub reviews: Vec<(u32, u32)>,
    /// `plan_stats` events: (step, event).
    pub plan_stats: Vec<(u32, u32)>,
}

/// How many entries of each kind a session's BDI log will hold (see
/// [`super::timeline::Counts`]); `upserts` counts `belief` events and `step` events' listed
/// beliefs, an upper bound (only `done` steps write theirs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    schema: usize,
    desires: usize,
    upserts: usize,
    intentions: usize,
    plans: usize,
    steps: usize,
    postconditions: usize,
    satisfactions: usize,
    reviews: usize,
    plan_stats: usize,
}

impl Counts {
    /// Counts one event.
    pub(crate) fn add(&mut self, body: &Body) {
        match body {
            Body::SchemaBelief(_) => self.schema += 1,
            Body::Desire(_) => self.desires += 1,
            Body::Belief(_) => self.upserts += 1,
            Body::Intention(_) => self.intentions += 1,
            Body::Plan(_) => self.plans += 1,
            Body::Step(s) => {
                self.steps += 1;
                if s.status == Some(StepStatus::Done) {
                    self.upserts += s.new_beliefs.len();
                }
            }
            Body::Postcondition(_) => self.postconditions += 1,
            Body::Satisfaction(_) => self.satisfactions += 1,
            Body::Review(_) => self.reviews += 1,
            Body::PlanStats(_) => self.plan_stats += 1,
            _ => {}
        }
    }
}

impl BdiLog {
    /// Reserves room for what pushing the counted events will add.
    pub(crate) fn reserve(&mut self, c: &Counts) {
        self.schema.reserve_exact(c.schema);
        self.desires.reserve_exact(c.desires);
        self.upserts.reserve_exact(c.upserts);
        self.intentions.reserve_exact(c.intentions);
        self.plans.reserve_exact(c.plans);
        self.steps.reserve_exact(c.steps);
        self.postconditions.reserve_exact(c.postconditions);
        self.satisfactions.reserve_exact(c.satisfactions);
        self.reviews.reserve_exact(c.reviews);
        self.plan_stats.reserve_exact(c.plan_stats);
    }

    /// Releases spare capacity (after a one-shot replay).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.schema.shrink_to_fit();
        self.desires.shrink_to_fit();
        self.names.shrink_to_fit();
        self.upserts.shrink_to_fit();
        self.retractions.shrink_to_fit();
        self.held.shrink_to_fit();
        self.intentions.shrink_to_fit();
        self.plans.shrink_to_fit();
        self.steps.shrink_to_fit();
        self.reads.shrink_to_fit();
        self.reads.values_mut().for_each(Vec::shrink_to_fit);
        self.postconditions.shrink_to_fit();
        self.satisfactions.shrink_to_fit();
        self.reviews.shrink_to_fit();
        self.plan_stats.shrink_to_fit();
    }

    fn name(&mut self, n: &str) -> u32 {
        if let Some(&i) = self.name_ix.get(n) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(n.to_string());
        self.name_ix.insert(n.to_string(), i);
        self.held.push(None);
        i
    }

    fn upsert(&mut self, u: Upsert) {
        if let Some(h) = self.held.get_mut(u.name as usize) {
            *h = Some(self.upserts.len() as u32);
        }
        self.upserts.push(u);
    }

    /// Ends the ground belief `name` (or `name` trimmed) if it is held: the `retract` at
    /// `step`, position `pos`, names it. Returns the index of the retraction in
    /// [`BdiLog::retractions`], or `None` when no ground belief of that name is held.
    pub(crate) fn retract_ground(&mut self, step: u32, pos: u32, name: &str) -> Option<u32> {
        let n = self
            .name_ix
            .get(name)
            .or_else(|| self.name_ix.get(name.trim()))
            .copied()?;
        let upsert = self.held.get_mut(n as usize)?.take()?;
        self.retractions.push(GroundRetraction {
            step,
            event: pos,
            name: n,
            upsert,
        });
        Some(self.retractions.len() as u32 - 1)
    }

    /// The value a ground-belief retraction ended (the write it took back).
    pub fn retracted<'a>(&'a self, log: &'a TraceLog, k: u32) -> Option<GroundBelief<'a>> {
        let r = self.retractions.get(k as usize)?;
        self.ground_view(log, self.upserts.get(r.upsert as usize)?, 1)
    }

    fn plan_ref(&self, plan: Option<&str>) -> Option<u32> {
        plan.and_then(|p| self.current_plan.get(p).copied())
    }

    /// Records the event at `pos` (step `step`) if it is a BDI event, from its gist.
    pub(crate) fn push(&mut self, step: u32, pos: u32, g: &Gist) {
        let Some(kind) = g.kind() else {
            return;
        };
        match (kind, g) {
            (Kind::SchemaBelief, _) => self.schema.push((step, pos)),
            (Kind::Desire, _) => self.desires.push((step, pos)),
            (_, Gist::Belief(w)) => {
                let name = self.name(&w.name);
                self.upsert(Upsert {
                    step,
                    event: pos,
                    nested: TOP,
                    name,
                });
            }
            (Kind::Intention, _) => self.intentions.push((step, pos)),
            (_, Gist::Plan(id)) => {
                let id = id
                    .as_ref()
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| format!("plan-{}", self.plans.len() + 1));
                let idx = self.plans.len() as u32;
                self.current_plan.insert(id.clone(), idx);
                self.plans.push(PlanRecord {
                    id,
                    step,
                    event: pos,
                });
            }
            (_, Gist::Step(s)) => {
                let plan = self.plan_ref(s.plan.as_deref());
                self.steps.push(StepRef {
                    step,
                    event: pos,
                    plan,
                });
                for k in &s.reads {
                    match self.reads.get_mut(k.as_str()) {
                        Some(v) => v.push((step, pos)),
                        None => {
                            self.reads.insert(k.clone(), vec![(step, pos)]);
                        }
                    }
                }
                for (k, b) in s.wrote.iter().enumerate() {
                    let name = self.name(&b.name);
                    self.upsert(Upsert {
                        step,
                        event: pos,
                        nested: k as u32,
                        name,
                    });
                }
            }
            (_, Gist::Postcondition(plan)) => {
                let plan = self.plan_ref(plan.as_deref());
                self.postconditions.push(StepRef {
                    step,
                    event: pos,
                    plan,
                });
            }
            (Kind::Satisfaction, _) => self.satisfactions.push((step, pos)),
            (Kind::Review, _) => self.reviews.push((step, pos)),
            (Kind::PlanStats, _) => self.plan_stats.push((step, pos)),
            _ => {}
        }
    }

    /// The `step` events that read ground belief `key` (their `inputs` name it): (step,
    /// event), in order.
    pub fn reads_of(&self, key: &str) -> &[(u32, u32)] {
        self.reads.get(key).map_or(&[], Vec::as_slice)
    }

    /// Whether the session has no BDI event at all.
    pub fn is_empty(&self) -> bool {
        self.schema.is_empty()
            && self.desires.is_empty()
            && self.upserts.is_empty()
            && self.intentions.is_empty()
            && self.plans.is_empty()
            && self.steps.is_empty()
            && self.postconditions.is_empty()
            && self.satisfactions.is_empty()
            && self.reviews.is_empty()
            && self.plan_stats.is_empty()
    }

    /// Whether a ground belief named `name` is held at step `t`: written at or before `t`
    /// and not retracted since its last write.
    pub fn known_by(&self, name: &str, t: u32) -> bool {
        let Some(&k) = self.name_ix.get(name) else {
            return false;
        };
        let Some(written) = self.upserts[..self.upserts.partition_point(|u| u.step <= t)]
            .iter()
            .rev()
            .find(|u| u.name == k)
        else {
            return false;
        };
        !prefix(&self.retractions, t, |r| r.step)
            .iter()
            .any(|r| r.name == k && r.step > written.step)
    }

    /// The retractions of the ground belief `name` up to step `t`, in order.
    pub fn retractions_of<'a>(
        &'a self,
        name: &str,
        t: u32,
    ) -> impl Iterator<Item = &'a GroundRetraction> + 'a {
        let k = self.name_ix.get(name).copied();
        prefix(&self.retractions, t, |r| r.step)
            .iter()
            .filter(move |r| Some(r.name) == k)
    }

    /// doxascope's recomputation of a done step's tier-1 postcondition at the step it
    /// reported done; `None` when the step is not done or its postcondition is not tier-1.
    pub fn recompute_post(&self, sv: &StepView<'_>) -> Option<bool> {
        if sv.state != StepState::Done {
            return None;
        }
        let post = match sv.def.post.as_deref() {
            Some(Value::String(s)) => s.as_str(),
            _ => return None,
        };
        let name = tier1_name(post)?;
        let done_at = sv.events.last().map_or(0, |e| e.0);
        Some(self.known_by(name, done_at))
    }

    /// The belief body an upsert wrote.
    pub fn upsert_body<'a>(&self, log: &'a TraceLog, u: &Upsert) -> Option<&'a Belief> {
        match &event_at(log, u.event).body {
            Body::Belief(b) if u.nested == TOP => Some(b),
            Body::Step(s) => s.new_beliefs.get(u.nested as usize),
            _ => None,
        }
    }

    /// Every write of the ground belief `name` up to step `t`: its value history.
    pub fn history<'a>(&'a self, log: &'a TraceLog, name: &str, t: u32) -> Vec<GroundBelief<'a>> {
        let Some(&n) = self.name_ix.get(name) else {
            return Vec::new();
        };
        let end = self.upserts.partition_point(|u| u.step <= t);
        self.upserts[..end]
            .iter()
            .filter(|u| u.name == n)
            .filter_map(|u| self.ground_view(log, u, 1))
            .collect()
    }

    fn ground_view<'a>(
        &'a self,
        log: &'a TraceLog,
        u: &Upsert,
        writes: u32,
    ) -> Option<GroundBelief<'a>> {
        let b = self.upsert_body(log, u)?;
        Some(GroundBelief {
            name: &self.names[u.name as usize],
            value: b.value.as_deref(),
            unit: b.unit.as_deref(),
            source: b.source.as_deref(),
            step: u.step,
            event: u.event,
            from_step_event: u.nested != TOP,
            writes,
        })
    }
}

/// A ground belief's value at some step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundBelief<'a> {
    /// The name (upsert key).
    pub name: &'a str,
    /// The value written.
    pub value: Option<&'a Value>,
    /// Its unit.
    pub unit: Option<&'a str>,
    /// Its source.
    pub source: Option<&'a str>,
    /// The step of the write.
    pub step: u32,
    /// The event position of the write.
    pub event: u32,
    /// Whether a `step` event's `new_beliefs` wrote it (rather than a `belief` event).
    pub from_step_event: bool,
    /// How many writes of this name happened up to the state's step.
    pub writes: u32,
}

/// The status of a plan step at some point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepState {
    /// No `step` event for it yet.
    Pending,
    /// Dispatched, not finished.
    Dispatched,
    /// Finished.
    Done,
    /// Failed.
    Failed,
}

impl StepState {
    /// A short name.
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Pending => "pending",
            StepState::Dispatched => "dispatched",
            StepState::Done => "done",
            StepState::Failed => "failed",
        }
    }
}

/// One checked postcondition (a `postcondition` event).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PostCheck<'a> {
    /// The tier (1, 2, 3), if given.
    pub tier: Option<u8>,
    /// Whether it passed, if given.
    pub ok: Option<bool>,
    /// How it failed.
    pub failure_mode: Option<&'a str>,
    /// The check program.
    pub program: Option<&'a str>,
    /// The step of the event.
    pub step: u32,
    /// The event position.
    pub event: u32,
}

/// A plan step at some point: its definition and its progress.
#[derive(Debug, Clone, PartialEq)]
pub struct StepView<'a> {
    /// The definition in the plan.
    pub def: &'a PlanStep,
    /// Its status.
    pub state: StepState,
    /// The latest self-reported `post_met`.
    pub post_met: Option<bool>,
    /// Steps of the `step` events for it, in order.
    pub events: Vec<(u32, u32)>,
    /// The checked postconditions, in order (every tier).
    pub checks: Vec<PostCheck<'a>>,
}

impl<'a> StepView<'a> {
    /// A step of a plan before any event about it: pending, unclaimed, unchecked.
    pub fn pending(def: &'a PlanStep) -> Self {
        StepView {
            def,
            state: StepState::Pending,
            post_met: None,
            events: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// Applies a `step` event (at `step`, log position `event`) to this step's progress.
    pub(crate) fn apply(&mut self, s: &crate::trace::event::Step, step: u32, event: u32) {
        self.state = match s.status {
            Some(StepStatus::Dispatched) => StepState::Dispatched,
            Some(StepStatus::Done) => StepState::Done,
            Some(StepStatus::Failed) => StepState::Failed,
            None => self.state,
        };
        if s.post_met.is_some() {
            self.post_met = s.post_met;
        }
        self.events.push((step, event));
    }

    /// The latest check of the given tier.
    pub fn latest_check(&self, tier: u8) -> Option<&PostCheck<'_>> {
        self.checks.iter().rev().find(|c| c.tier == Some(tier))
    }

    /// Done, but no postcondition verdict recorded after it finished.
    pub fn awaiting_verification(&self) -> bool {
        let done_at = self.events.last().map_or(0, |e| e.0);
        self.state == StepState::Done
            && !self
                .checks
                .iter()
                .any(|c| c.ok.is_some() && c.step >= done_at)
    }

    /// The step's verdict. Only checks at or after the step's last report count: a check
    /// of an earlier run of the step says nothing of the current one.
    pub fn verdict(&self) -> Verdict {
        self.verdict_given(None)
    }

    /// The step's verdict with doxascope's own recomputation of its postcondition
    /// (`None` when it cannot recompute it). The recomputation is a check like the
    /// recorded ones and outranks them: a recorded pass it refutes does not count.
    pub fn verdict_given(&self, recomputed: Option<bool>) -> Verdict {
        let last = self.events.last().map_or(0, |e| e.1);
        let recorded = self
            .checks
            .iter()
            .rev()
            .filter(|c| c.event >= last)
            .find_map(|c| c.ok);
        let check = match (recomputed, recorded) {
            (Some(false), _) => Some(false),
            (_, Some(r)) => Some(r),
            (r, None) => r,
        };
        match self.state {
            StepState::Pending => Verdict::Pending,
            StepState::Dispatched => Verdict::Running,
            StepState::Failed => Verdict::Failed,
            StepState::Done => match (self.post_met, check) {
                (Some(true), Some(false)) => Verdict::Disputed,
                (_, Some(false)) | (Some(false), None) => Verdict::Failed,
                (_, Some(true)) => Verdict::Passed,
                (Some(true), None) => Verdict::SelfReported,
                (None, None) => Verdict::Unchecked,
            },
        }
    }

    /// Whether the postcondition was verified (the latest check with a verdict passed).
    pub fn verified(&self) -> bool {
        self.checks.iter().rev().find_map(|c| c.ok).unwrap_or(false)
    }
}

/// The X of a tier-1 postcondition `ground_belief(X) is known` (the only form doxascope
/// can recompute: true iff a ground belief named X exists at that point).
pub fn tier1_name(program: &str) -> Option<&str> {
    let s = program.trim();
    let rest = s.strip_prefix("ground_belief")?.trim_start();
    let rest = rest.strip_prefix('(')?;
    let close = rest.find(')')?;
    let name = rest[..close].trim();
    let tail: Vec<&str> = rest[close + 1..].split_whitespace().collect();
    (tail == ["is", "known"] && !name.is_empty()).then_some(name)
}

/// What is known of a step's outcome: its progress (`step` events) joined with its
/// postcondition checks, so a step that reported "done" but failed verification is never
/// shown as a plain success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Not dispatched yet.
    Pending,
    /// Dispatched, not finished.
    Running,
    /// Reported failed, or its latest check failed with no claim of success, or the
    /// executor itself said the postcondition does not hold.
    Failed,
    /// Done and the latest check with a verdict passed.
    Passed,
    /// Done, the executor claims the postcondition holds, and no check has ruled yet.
    SelfReported,
    /// Done, the executor claims the postcondition holds, and the latest check says not.
    Disputed,
    /// Done with neither a claim nor a check.
    Unchecked,
}

impl Verdict {
    /// A short name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pending => "pending",
            Verdict::Running => "running",
            Verdict::Failed => "failed",
            Verdict::Passed => "passed",
            Verdict::SelfReported => "self-reported",
            Verdict::Disputed => "disputed",
            Verdict::Unchecked => "unchecked",
        }
    }
}

/// A plan as a DAG with each step's status at some point.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanView<'a> {
    /// The plan id.
    pub id: &'a str,
    /// Index into [`BdiLog::plans`].
    pub record: u32,
    /// The step of the `plan` event.
    pub step: u32,
    /// The `plan` event position.
    pub event: u32,
    /// The plan body (intention type, context conditions, origin).
    pub plan: &'a Plan,
    /// The steps in the order the plan lists them.
    pub steps: Vec<StepView<'a>>,
    /// `step`/`postcondition` events naming a step id the plan does not have.
    pub unknown_step_events: Vec<u32>,
}

impl<'a> PlanView<'a> {
    /// The plan as announced, before any of its steps ran: every step pending.
    pub(crate) fn pending(pr: &'a PlanRecord, record: u32, plan: &'a Plan) -> Self {
        PlanView {
            id: pr.id.as_str(),
            record,
            step: pr.step,
            event: pr.event,
            plan,
            steps: plan.steps.iter().map(StepView::pending).collect(),
            unknown_step_events: Vec::new(),
        }
    }

    /// Dependencies that name no step of the plan: (step id, missing dependency).
    pub fn dangling(&self) -> Vec<(&str, &str)> {
        let ids: Vec<&str> = self.steps.iter().map(|s| s.def.id.as_str()).collect();
        let mut out = Vec::new();
        for s in &self.steps {
            for d in &s.def.deps {
                if !ids.contains(&d.as_str()) {
                    out.push((s.def.id.as_str(), d.as_str()));
                }
            }
        }
        out
    }

    /// A dependency cycle, as step ids, if there is one (iterative DFS).
    pub fn cycle(&self) -> Option<Vec<&str>> {
        let n = self.steps.len();
        let ix: HashMap<&str, usize> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.def.id.as_str(), i))
            .collect();
        let adj: Vec<Vec<usize>> = self
            .steps
            .iter()
            .map(|s| {
                s.def
                    .deps
                    .iter()
                    .filter_map(|d| ix.get(d.as_str()).copied())
                    .collect()
            })
            .collect();
        // 0 = unseen, 1 = on the stack, 2 = done.
        let mut color = vec![0u8; n];
        for root in 0..n {
            if color[root] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            color[root] = 1;
            while let Some(&mut (v, ref mut next)) = stack.last_mut() {
                if let Some(&w) = adj[v].get(*next) {
                    *next += 1;
                    match color[w] {
                        0 => {
                            color[w] = 1;
                            stack.push((w, 0));
                        }
                        1 => {
                            let start = stack.iter().position(|&(u, _)| u == w).unwrap_or(0);
                            return Some(
                                stack[start..]
                                    .iter()
                                    .map(|&(u, _)| self.steps[u].def.id.as_str())
                                    .collect(),
                            );
                        }
                        _ => {}
                    }
                } else {
                    color[v] = 2;
                    stack.pop();
                }
            }
        }
        None
    }

    /// Steps that could be dispatched now: pending, and every dependency done with its
    /// postcondition verified (convention 9 of `docs/samples.md`).
    pub fn ready(&self) -> Vec<&str> {
        let by_id: HashMap<&str, &StepView<'_>> =
            self.steps.iter().map(|s| (s.def.id.as_str(), s)).collect();
        self.steps
            .iter()
            .filter(|s| s.state == StepState::Pending)
            .filter(|s| {
                s.def.deps.iter().all(|d| {
                    by_id
                        .get(d.as_str())
                        .is_some_and(|x| x.state == StepState::Done && x.verified())
                })
            })
            .map(|s| s.def.id.as_str())
            .collect()
    }

    /// Whether every step is done.
    pub fn complete(&self) -> bool {
        self.steps.iter().all(|s| s.state == StepState::Done)
    }

    /// Steps in flight: dispatched, or done and still awaiting their postcondition verdict
    /// (convention 9 of `docs/samples.md`: the harness checks every step right after it
    /// finishes, so that window is not a deadlock).
    pub fn in_flight(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter(|s| s.state == StepState::Dispatched || s.awaiting_verification())
            .map(|s| s.def.id.as_str())
            .collect()
    }

    /// Deadlocked: incomplete, nothing in flight, nothing ready.
    pub fn deadlocked(&self) -> bool {
        !self.complete() && self.in_flight().is_empty() && self.ready().is_empty()
    }
}

/// A plan of the library with its counters.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryEntry<'a> {
    /// The plan id.
    pub id: &'a str,
    /// Generated or from the library (of its latest `plan` event).
    pub origin: Option<PlanOrigin>,
    /// How many `plan` events carried this id.
    pub versions: u32,
    /// The latest `plan_stats` counters: use, success, failure.
    pub use_count: Option<u64>,
    /// Successes.
    pub success_count: Option<u64>,
    /// Failures.
    pub failure_count: Option<u64>,
    /// The latest review decision about it.
    pub decision: Option<&'a Decision>,
}

/// The satisfaction verdicts seen so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SatisfactionView<'a> {
    /// The intention id.
    pub intention: Option<&'a str>,
    /// The verdict.
    pub ok: Option<bool>,
    /// The step of the event.
    pub step: u32,
}

/// The current intention.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntentionView<'a> {
    /// Its id.
    pub id: Option<&'a str>,
    /// The body (type, goal, satisfaction condition, open parameters).
    pub intention: &'a Intention,
    /// The step of the event.
    pub step: u32,
    /// The event position.
    pub event: u32,
}

/// The BDI state at one step.
#[derive(Debug, Clone, PartialEq)]
pub struct BdiState<'a> {
    /// The step.
    pub step: u32,
    /// Schema beliefs, in order.
    pub schema_beliefs: Vec<&'a str>,
    /// Ground beliefs: the latest write of every name, sorted by name.
    pub ground: Vec<GroundBelief<'a>>,
    /// Desires, in order.
    pub desires: Vec<&'a str>,
    /// The latest intention.
    pub intention: Option<IntentionView<'a>>,
    /// The current version of every plan, in order of first appearance.
    pub plans: Vec<PlanView<'a>>,
    /// Satisfaction verdicts, in order.
    pub satisfaction: Vec<SatisfactionView<'a>>,
    /// The plan library: every plan id seen, with counters and review decisions.
    pub library: Vec<LibraryEntry<'a>>,
    /// All review decisions, in order, with their step.
    pub reviews: Vec<(u32, &'a Decision)>,
}

impl<'a> BdiState<'a> {
    /// The ground belief with this name.
    pub fn ground_belief(&self, name: &str) -> Option<&GroundBelief<'a>> {
        self.ground
            .binary_search_by(|g| g.name.cmp(name))
            .ok()
            .map(|i| &self.ground[i])
    }

    /// The current version of the plan `id`.
    pub fn plan(&self, id: &str) -> Option<&PlanView<'a>> {
        self.plans.iter().find(|p| p.id == id)
    }
}

fn prefix<T>(v: &[T], t: u32, step: impl Fn(&T) -> u32) -> &[T] {
    &v[..v.partition_point(|x| step(x) <= t)]
}

fn text_of(ev: &Event) -> Option<&str> {
    match &ev.body {
        Body::SchemaBelief(x) | Body::Desire(x) => x.text.as_deref(),
        _ => None,
    }
}

/// use, success and failure counts of a plan.
type Counters = (Option<u64>, Option<u64>, Option<u64>);

/// Computes the BDI state at step `t` from the session's log.
pub fn state_at<'a>(bl: &'a BdiLog, log: &'a TraceLog, t: u32) -> BdiState<'a> {
    let schema_beliefs = prefix(&bl.schema, t, |x| x.0)
        .iter()
        .filter_map(|&(_, p)| text_of(event_at(log, p)))
        .collect();
    let desires = prefix(&bl.desires, t, |x| x.0)
        .iter()
        .filter_map(|&(_, p)| text_of(event_at(log, p)))
        .collect();

    let mut latest: Vec<Option<(u32, u32)>> = vec![None; bl.names.len()];
    for (i, u) in prefix(&bl.upserts, t, |u| u.step).iter().enumerate() {
        let slot = &mut latest[u.name as usize];
        let writes = slot.map_or(0, |(_, w)| w) + 1;
        *slot = Some((i as u32, writes));
    }
    // A ground belief retracted after its last write is not held.
    for r in prefix(&bl.retractions, t, |r| r.step) {
        if let Some(slot) = latest.get_mut(r.name as usize)
            && slot.is_some_and(|(i, _)| bl.upserts[i as usize].step < r.step)
        {
            *slot = None;
        }
    }
    let mut ground: Vec<GroundBelief<'a>> = latest
        .iter()
        .flatten()
        .filter_map(|&(i, w)| bl.ground_view(log, &bl.upserts[i as usize], w))
        .collect();
    ground.sort_by(|a, b| a.name.cmp(b.name));

    let intention = prefix(&bl.intentions, t, |x| x.0)
        .last()
        .and_then(|&(step, p)| {
            let ev = event_at(log, p);
            match &ev.body {
                Body::Intention(i) => Some(IntentionView {
                    id: ev.id.as_deref(),
                    intention: i,
                    step,
                    event: p,
                }),
                _ => None,
            }
        });

    // Plans: the current record per id, in order of first appearance.
    let plan_prefix = prefix(&bl.plans, t, |p| p.step);
    let mut order: Vec<&str> = Vec::new();
    let mut current: HashMap<&str, u32> = HashMap::new();
    let mut versions: HashMap<&str, u32> = HashMap::new();
    for (i, p) in plan_prefix.iter().enumerate() {
        if current.insert(p.id.as_str(), i as u32).is_none() {
            order.push(p.id.as_str());
        }
        *versions.entry(p.id.as_str()).or_default() += 1;
    }
    let mut plans: Vec<PlanView<'a>> = Vec::new();
    let mut plan_slot: HashMap<u32, usize> = HashMap::new();
    for id in &order {
        let rec = current[id];
        let pr = &bl.plans[rec as usize];
        let Body::Plan(plan) = &event_at(log, pr.event).body else {
            continue;
        };
        plan_slot.insert(rec, plans.len());
        plans.push(PlanView::pending(pr, rec, plan));
    }
    for sr in prefix(&bl.steps, t, |s| s.step) {
        let Some(&slot) = sr.plan.and_then(|r| plan_slot.get(&r)) else {
            continue;
        };
        let Body::Step(s) = &event_at(log, sr.event).body else {
            continue;
        };
        let pv = &mut plans[slot];
        match s
            .step
            .as_deref()
            .and_then(|id| pv.steps.iter_mut().find(|x| x.def.id == id))
        {
            Some(sv) => sv.apply(s, sr.step, sr.event),
            None => pv.unknown_step_events.push(sr.event),
        }
    }
    for pr in prefix(&bl.postconditions, t, |s| s.step) {
        let Some(&slot) = pr.plan.and_then(|r| plan_slot.get(&r)) else {
            continue;
        };
        let Body::Postcondition(p) = &event_at(log, pr.event).body else {
            continue;
        };
        let pv = &mut plans[slot];
        match p
            .step
            .as_deref()
            .and_then(|id| pv.steps.iter_mut().find(|x| x.def.id == id))
        {
            Some(sv) => sv.checks.push(PostCheck {
                tier: p.tier,
                ok: p.ok,
                failure_mode: p.failure_mode.as_deref(),
                program: p.program.as_deref(),
                step: pr.step,
                event: pr.event,
            }),
            None => pv.unknown_step_events.push(pr.event),
        }
    }

    let satisfaction = prefix(&bl.satisfactions, t, |x| x.0)
        .iter()
        .filter_map(|&(step, p)| match &event_at(log, p).body {
            Body::Satisfaction(s) => Some(SatisfactionView {
                intention: s.intention.as_deref(),
                ok: s.ok,
                step,
            }),
            _ => None,
        })
        .collect();

    let mut reviews: Vec<(u32, &'a Decision)> = Vec::new();
    for &(step, p) in prefix(&bl.reviews, t, |x| x.0) {
        if let Body::Review(r) = &event_at(log, p).body {
            reviews.extend(r.decisions.iter().map(|d| (step, d)));
        }
    }
    let mut stats: BTreeMap<&str, Counters> = BTreeMap::new();
    for &(_, p) in prefix(&bl.plan_stats, t, |x| x.0) {
        if let Body::PlanStats(s) = &event_at(log, p).body
            && let Some(id) = s.plan.as_deref()
        {
            let e = stats.entry(id).or_default();
            e.0 = s.use_count.or(e.0);
            e.1 = s.success_count.or(e.1);
            e.2 = s.failure_count.or(e.2);
        }
    }
    let mut lib_order: Vec<&str> = order.clone();
    for id in stats.keys() {
        if !lib_order.contains(id) {
            lib_order.push(id);
        }
    }
    let library = lib_order
        .into_iter()
        .map(|id| {
            let origin = plans
                .iter()
                .find(|p| p.id == id)
                .and_then(|p| p.plan.origin);
            let (u, s, f) = stats.get(id).copied().unwrap_or_default();
            LibraryEntry {
                id,
                origin,
                versions: versions.get(id).copied().unwrap_or(0),
                use_count: u,
                success_count: s,
                failure_count: f,
                decision: reviews
                    .iter()
                    .rev()
                    .find(|(_, d)| d.plan.as_deref() == Some(id))
                    .map(|(_, d)| *d),
            }
        })
        .collect();

    BdiState {
        step: t,
        schema_beliefs,
        ground,
        desires,
        intention,
        plans,
        satisfaction,
        library,
        reviews,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ok: Option<bool>, event: u32) -> PostCheck<'static> {
        PostCheck {
            tier: Some(1),
            ok,
            failure_mode: None,
            program: None,
            step: event,
            event,
        }
    }

    /// Every combination of state, claim, recorded check and recomputation against the
    /// rules written out independently of `verdict_given`'s match.
    #[test]
    fn verdict_truth_table() {
        let def: PlanStep = serde_json::from_str(r#"{"id":"S1"}"#).expect("step");
        let states = [
            StepState::Pending,
            StepState::Dispatched,
            StepState::Done,
            StepState::Failed,
        ];
        let tri = [None, Some(false), Some(true)];
        for state in states {
            for claim in tri {
                for recorded in tri {
                    for recomputed in tri {
                        // A check before the last report (event 5) must be ignored.
                        for stale in [false, true] {
                            let sv = StepView {
                                def: &def,
                                state,
                                post_met: claim,
                                events: vec![(5, 5)],
                                checks: vec![check(recorded, if stale { 4 } else { 6 })],
                            };
                            let rec = if stale { None } else { recorded };
                            let refuted = recomputed == Some(false) || rec == Some(false);
                            let confirmed =
                                !refuted && (rec == Some(true) || recomputed == Some(true));
                            let want = match state {
                                StepState::Pending => Verdict::Pending,
                                StepState::Dispatched => Verdict::Running,
                                StepState::Failed => Verdict::Failed,
                                StepState::Done if refuted && claim == Some(true) => {
                                    Verdict::Disputed
                                }
                                StepState::Done
                                    if refuted || claim == Some(false) && !confirmed =>
                                {
                                    Verdict::Failed
                                }
                                StepState::Done if confirmed => Verdict::Passed,
                                StepState::Done if claim == Some(true) => Verdict::SelfReported,
                                StepState::Done => Verdict::Unchecked,
                            };
                            assert_eq!(
                                sv.verdict_given(recomputed),
                                want,
                                "{state:?} claim {claim:?} recorded {recorded:?} \
                                 recomputed {recomputed:?} stale {stale}"
                            );
                        }
                    }
                }
            }
        }
    }
}
