//! `doxascope notes FILE [--session NAME] [--json]`, `--add TEXT [--at STEP] [--belief ID]`,
//! `--remove N`: the bookmarks and notes kept beside a trace (see [`crate::trace::notes`]):
//! list them, add one, remove one. The trace is never written to.
//!
//! Exit 0 on success, 2 for unusable input or arguments (an unknown session, a step past the
//! end, a belief not in Σ at the step, notes that cannot be written anywhere).

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::model::Model;
use crate::sanitize::sanitize;
use crate::trace::notes::{Note, NoteStore, not_saved};

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `notes`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trace file (JSON Lines).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Only this session's notes (and the session `--add` marks, when the file holds several).
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// Add a note with this text (an empty text is a bookmark).
    #[arg(long, value_name = "TEXT", conflicts_with = "remove")]
    add: Option<String>,
    /// The step the added note marks (default: the last step).
    #[arg(long, value_name = "STEP", requires = "add")]
    at: Option<u32>,
    /// The belief the added note marks (it must be in Σ at the step).
    #[arg(long, value_name = "ID", requires = "add")]
    belief: Option<String>,
    /// Remove note N.
    #[arg(long, value_name = "N")]
    remove: Option<u64>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn note_json(n: &Note) -> Value {
    json!({"id": n.id, "session": n.session, "step": n.step, "belief": n.belief,
           "text": n.text, "bookmark": n.is_bookmark(), "created": n.created})
}

fn note_text(n: &Note) -> String {
    let on = n
        .belief
        .as_deref()
        .map(|b| format!(" belief {}", sanitize(b)))
        .unwrap_or_default();
    let text = if n.is_bookmark() {
        "(bookmark)".to_string()
    } else {
        sanitize(&n.text)
    };
    format!(
        "#{:<3} {} step {:>5}{on}: {text}",
        n.id,
        sanitize(&n.session),
        n.step
    )
}

/// Runs `notes` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let model = match Model::load(std::slice::from_ref(&args.file)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("doxascope notes: {e}");
            return EXIT_USAGE;
        }
    };
    let trace = args.file.to_string_lossy().into_owned();
    let mut store = NoteStore::open(&trace);
    let fail = |m: String| {
        eprintln!("doxascope notes: {}", sanitize(&m));
        EXIT_USAGE
    };
    if let Some(text) = &args.add {
        let tl = match model.pick_session(args.session.as_deref()) {
            Ok(t) => t,
            Err(m) => return fail(m),
        };
        let step = args.at.unwrap_or(tl.len());
        if step > tl.len() {
            return fail(format!(
                "step {step} is past the end of session {} ({} steps)",
                tl.name(),
                tl.len()
            ));
        }
        if let Some(b) = &args.belief
            && tl.active_record(b, step).is_none()
        {
            return fail(format!("no belief {b} in Σ at step {step}"));
        }
        if let Err(e) = store.add(tl.name(), step, args.belief.as_deref(), text) {
            return fail(not_saved(&e, text));
        }
    }
    if let Some(n) = args.remove {
        match store.remove(n) {
            Ok(true) => {}
            Ok(false) => return fail(format!("no note #{n}")),
            Err(e) => return fail(format!("cannot write the notes: {e}")),
        }
    }
    let mut notes: Vec<&Note> = store
        .notes()
        .iter()
        .filter(|n| args.session.as_deref().is_none_or(|s| n.session == s))
        .collect();
    notes.sort_by(|a, b| (&a.session, a.step, a.id).cmp(&(&b.session, b.step, b.id)));
    let location = store.location().map(|p| p.display().to_string());
    let out = if args.json {
        json!({
            "trace": trace,
            "location": location,
            "in_data_dir": store.in_data_dir(),
            "problems": store.problems(),
            "notes": notes.iter().map(|n| note_json(n)).collect::<Vec<_>>(),
        })
        .to_string()
    } else {
        let mut s = String::new();
        if notes.is_empty() {
            s.push_str("no bookmarks or notes");
        }
        for (i, n) in notes.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            s.push_str(&note_text(n));
        }
        if let Some(l) = &location {
            s.push_str(&format!("\n  kept in {}", sanitize(l)));
        }
        for p in store.problems() {
            s.push_str(&format!("\n  warning: {}", sanitize(p)));
        }
        s
    };
    let _ = writeln!(std::io::stdout().lock(), "{out}");
    EXIT_OK
}
