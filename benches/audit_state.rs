//! The audit of an agent's state written and read at every step, the shape of the traces
//! agents already write (a LangGraph checkpoint's key, a memory block, a counter): each step
//! writes a `belief` of one name with a new value, then a `step` reads it as an input. Σ holds
//! one belief throughout, so the audit must grow with the steps alone. Run with
//! `cargo bench --bench audit_state`; `AUDIT_STATE_STEPS=N` sets the smaller size (the larger
//! is four times it), `AUDIT_STATE_RUNS=N` the runs per size (the least CPU time is kept).
//!
//! Target (issue 31): linear, four times the steps within 4.4x the CPU time. Before, the
//! `stale-input` check compared every read with every earlier write, `flip-flop` every value
//! with every earlier one, and each of Σ's solves paid for up to 4,096 retired writes: 8,000
//! steps took 5.5 s and 16,000 took 15.9 s.

use std::fmt::Write as _;
use std::hint::black_box;

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, audit};

#[path = "support/proc.rs"]
mod proc;
use proc::cpu_seconds;

/// The trace: a plan, then per step a write of `rate` and a step reading it. A read in
/// sixteen uses a value the name held before (a `stale-input` finding each).
fn trace(steps: u32) -> Vec<u8> {
    let mut s = String::from(r#"{"kind":"plan","id":"p","steps":[{"id":"S1","kind":"compute"}]}"#);
    s.push('\n');
    for i in 0..steps {
        let used = if i % 16 == 15 { i - 8 } else { i };
        let _ = writeln!(
            s,
            r#"{{"kind":"belief","name":"rate","value":{i},"source":"tool:meter"}}"#
        );
        let _ = writeln!(
            s,
            r#"{{"kind":"step","plan":"p","step":"S1","status":"done","inputs":{{"rate":{used}}}}}"#
        );
    }
    s.into_bytes()
}

/// The least CPU time of `runs` audits of `bytes`, replay included, and its finding count.
fn measure(bytes: &[u8], runs: usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut findings = 0;
    for _ in 0..runs {
        let c0 = cpu_seconds();
        let model = Model::from_bytes("state.jsonl", bytes);
        let report = black_box(audit(&model, &AuditOptions::default()));
        best = best.min(cpu_seconds() - c0);
        findings = report.findings.len();
    }
    (best, findings)
}

fn main() {
    let small: u32 = std::env::var("AUDIT_STATE_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16_000);
    let runs: usize = std::env::var("AUDIT_STATE_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let mut cpu = Vec::new();
    for steps in [small, 4 * small] {
        let (c, findings) = measure(&trace(steps), runs);
        println!("{steps} steps: {c:.2} s CPU (least of {runs}), {findings} findings");
        cpu.push(c);
    }
    let ratio = cpu[1] / cpu[0].max(0.01);
    println!(
        "4x the steps: {ratio:.2}x the CPU (target <= 4.4x): {}",
        if ratio <= 4.4 { "met" } else { "NOT met" }
    );
}
