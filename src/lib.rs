//! doxascope: inspect the belief states of LLM agents.
//!
//! # The map
//!
//! The crate is layered; each layer depends only on the ones listed before it.
//!
//! - [`logic`]: formulas, the parser and printer, grounding over the active domain, Tseitin
//!   CNF, the incremental SAT engine (gate Θ, entailment, minimal supports and conflicts),
//!   revision policies, graded beliefs. No I/O.
//! - [`trace`]: the trace format v1 (event schema), the loss-free streaming reader, the index,
//!   whole-file loading on every core, the trace generator, following files, live sockets.
//! - [`model`]: the one replay of a session's events (Σ at every step as validity intervals,
//!   the BDI state, the verification and retraction logs), the recomputation that checks
//!   every claim with the solver, the audit and its findings, the export formats.
//! - [`repl`]: the one command engine of the TUI's `:` line and `doxascope repl`: Σ at a step
//!   with the hand-issued layer, a log of what each typed command did.
//! - [`tui`], [`cli`], [`demo`]: the faces. Panes, keys and the event loop; the headless
//!   subcommands and their exit codes; seed 003's belief-revision demo.
//! - [`sanitize`]: beside all of them, the one function through which every string from a
//!   trace reaches a terminal.
//!
//! `docs/architecture.md` shows how an event flows through them.
//!
//! # To change X, open Y
//!
//! - A new event kind or field: `trace/event.rs` and `trace/fields.rs`, then
//!   `docs/trace-format.md` and its JSON schema (`tests/trace_schema.rs` keeps the three in
//!   step), then its meaning in `model/timeline.rs` or `model/bdi.rs`.
//! - What Σ is at a step (announce, retract, re-announcement): `model/timeline.rs`, the one
//!   replay the panes, `audit`, `export` and the REPL read.
//! - A new audit finding: its row in the registry (the `codes!` table of `model/audit.rs`:
//!   doc paragraph, severity, summary, `needs`, `example`, `check`), the check as a function
//!   of its own in `model/audit/*` (thoughts: `thought.rs`; seed 001's invariants:
//!   `invariants.rs`; revisions and tool use: `rationality.rs`), a test trace that triggers it
//!   and a near miss, a line in the README; docs/trace-format.md's finding table is generated
//!   from the registry (tests/audit_registry.rs).
//! - A new REPL command: a row in `repl/command.rs` (it carries its function), the function
//!   in `repl/exec.rs`, its reply in `repl/reply.rs`.
//! - A new engine question: a `State` method in `logic/engine/explain.rs` (minimal sets,
//!   countermodels), `snapshot.rs` (gate-like questions) or `grade.rs`, one line in
//!   `logic/engine/handle.rs` (shared by both handles), then its call from `repl/exec.rs` or
//!   `model/recompute.rs`. How Σ is stored and changed: `logic/engine/state.rs`; a revision
//!   policy: `logic/engine/revise.rs`; where requests run and the timeout: `handle.rs`.
//! - A pane of the TUI (what it shows, its selection, its keys): its file under
//!   `tui/panes/` (`sigma.rs`, `plan.rs`, `verify.rs`, `retract.rs`, `timeline.rs`,
//!   `detail.rs`, `repl.rs`), each with its state, `on_action` and `draw`; a new pane as the
//!   module doc of `tui/panes/mod.rs` says.
//! - A key: `tui/keys.rs` (one table feeds dispatch and help), its action in `App::apply`
//!   (`tui/app.rs`) when it is about the whole screen, else in the pane's `on_action`.
//! - What the TUI keeps per session (cursor, follow, audit, support): `SessionView` in
//!   `tui/app.rs`; the layouts, header and hint bar: `tui/ui.rs`. The session list (`o`,
//!   `:sessions`): `tui/panes/sessions.rs`, its figures per session and which sessions are
//!   parts of one conversation: `model/sessions.rs`.
//! - Minimal corrections (the repairs `whatif` lists): `logic/engine/corrections.rs`.
//! - The demo (`doxascope demo`): dialogues and the solver run in `demo/run.rs`, its events in
//!   `demo/emit.rs`, pacing in `demo/player.rs`; two policies raced (`--race`):
//!   `demo/race.rs`, shown by `tui/panes/race.rs` and as text by `cli/race.rs`.
//! - A question across a whole run or two runs: `model/history.rs` (`history φ`),
//!   `model/diff.rs` (`doxascope diff`), `model/whatif.rs` (`whatif`), answered for the REPL
//!   in `repl/across.rs`; the HTML report is `model/report.rs`; bookmarks and notes beside a
//!   trace are `trace/notes.rs`; `docs/across.md` describes them.
//! - Certificates of the verdicts (CNF, DRAT proof or model, built from scratch):
//!   `logic/certificate.rs`; writing them and `index.json`: `model/certificates.rs`. A
//!   report's re-check record and `verify-report`: `model/recheck.rs` (SHA-256 in
//!   `trace/sha256.rs`); `docs/certificates.md` describes both.
//! - What counts as a failed tool call, model call, agent run or error log: `model/failure.rs`
//!   (read by the audit's `model/audit/runtime.rs`, the timeline's `✗` and `level:error`, the
//!   plan pane). Durations, time since the start and `:time`: `model/clock.rs`; tokens, model
//!   call rows, transcripts and totals (`:tokens`): `model/usage.rs`; the span tree
//!   (`:spans`): `model/spans.rs`, drawn by `tui/waterfall.rs`.
//! - What a score scores and whether it failed (the rows' `★`, the detail pane, `:scores`,
//!   `report`, the audit's `score-failed`): `model/scores.rs`. Where an imported event was in
//!   its source file (the detail pane's `from`, the audit's location): `trace/provenance.rs`.
//! - A subcommand: `cli/mod.rs` and a file of its own under `cli/`.
//! - The audit's CI forms (SARIF, JUnit) and baselines: `model/audit/ci.rs` (`docs/ci.md`);
//!   the tier-2 condition language (postconditions, satisfaction conditions re-run):
//!   `model/condition.rs`, read by `model/audit/tiers.rs` and the plan and verification panes;
//!   a judge's score against the solver: `model/audit/judge.rs`.
//! - Value atoms (`key = value`): the AST in `logic/formula.rs` (canonical values), syntax in
//!   `logic/parse.rs` and `logic/print.rs`, the one-value-per-key constraint where atoms get
//!   their variables (`logic/cnf.rs`); ground beliefs as records of Σ in
//!   `model/timeline.rs`; a key's life (`history KEY`) in `model/keylife.rs`.
//! - The MCP server (`doxascope mcp`) and its tools: `cli/mcp.rs` (each tool is a REPL
//!   command, the audit, or `export`'s and `diff`'s rendering; `docs/mcp.md`).
//! - The live gate (a `gate` line answered on its connection): the seam in `trace/gate.rs`,
//!   the socket side in `trace/live.rs`, the answer (the REPL's `check` on the session's
//!   replay, repairs from `model/whatif.rs`) in `repl/gate.rs`; `docs/live.md`.
//! - Watchpoints and breakpoints (`watch`, `break`, `continue`): `repl/watch.rs`; pausing
//!   following in the TUI where one triggers: `tui/app/watch.rs`.
//! - What an OpenTelemetry span or log record becomes: `trace/import/otlp/map.rs` (log
//!   records are read by `otlp/logs.rs`); the OTLP/HTTP receiver's paths:
//!   `trace/otlp_http.rs`.
//! - What the viewer keeps of live sessions: `tui/sources.rs` (an ended session's events
//!   released, read again from its spool file when shown, taken out of the list), the
//!   slots in `tui/data.rs` (`Store::unload`, `retire`), the spool directory's bounds in
//!   `trace/live.rs` (`SpoolLedger`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod demo;
pub mod logic;
pub mod model;
pub mod repl;
pub mod sanitize;
pub mod trace;
pub mod tui;
