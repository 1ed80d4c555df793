//! The registry's readers: the docs' finding table, `audit --list-checks`, and the loop that
//! runs the checks registered as units of their own.
//!
//! The table itself is the `codes!` invocation in `model/audit.rs`: one row per code, so a
//! code cannot exist without its severity, summary, doc paragraph and (when a unit) its check.

use serde_json::{Value, json};

use super::{Code, Cx};

/// Runs every check registered as a unit, in table order (after the grouped passes: a unit
/// reads only the model, never another check's findings).
pub(super) fn run_units(cx: &mut Cx<'_>) {
    for code in Code::ALL {
        if let Some(check) = code.check() {
            check(cx);
        }
    }
}

/// Markdown table cells cannot hold a `|` or a line break.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The finding table of docs/trace-format.md (*Audit findings*), one row per code in
/// registry order: code, severity, when it is reported, what it needs, an example trace.
pub fn finding_table() -> String {
    let mut out = String::from(
        "| code | severity | when it is reported | what it needs | example |\n|---|---|---|---|---|\n",
    );
    for c in Code::ALL {
        let example = c.example().map_or("—".to_string(), |e| format!("`{e}`"));
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            c.as_str(),
            c.default_severity(),
            cell(&c.doc()),
            cell(c.needs().unwrap_or("—")),
            example
        ));
    }
    out
}

/// `audit --list-checks`: each code with its severity and one-line summary, then its doc
/// paragraph, what it needs and its example, indented.
pub fn list_checks() -> String {
    let width = Code::ALL
        .iter()
        .map(|c| c.as_str().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for c in Code::ALL {
        let (one, _) = c.fragments();
        out.push_str(&format!(
            "{:<width$}  {:<7}  {one}\n    {}\n",
            c.as_str(),
            c.default_severity().as_str(),
            c.doc()
        ));
        if let Some(n) = c.needs() {
            out.push_str(&format!("    needs: {n}\n"));
        }
        if let Some(e) = c.example() {
            out.push_str(&format!("    example: {e}\n"));
        }
    }
    out
}

/// `audit --list-checks --json`: the registry as a JSON array of
/// `{code, severity, summary, doc, needs, example}`.
pub fn list_checks_json() -> Value {
    Value::Array(
        Code::ALL
            .iter()
            .map(|c| {
                json!({
                    "code": c.as_str(),
                    "severity": c.default_severity().as_str(),
                    "summary": c.fragments().0,
                    "doc": c.doc(),
                    "needs": c.needs(),
                    "example": c.example(),
                })
            })
            .collect(),
    )
}

/// The codes as `audit --help` lists them.
pub fn help_text() -> String {
    let names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    format!(
        "Exit status: 0 when no finding is a warning or an error (with --baseline: none that \
         the baseline lacks), 1 when one is, 2 for unusable input or arguments.\n\nFinding codes (`--list-checks` says what each means): {}.",
        names.join(", ")
    )
}
