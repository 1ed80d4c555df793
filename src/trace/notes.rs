//! Bookmarks and notes: a person's marks on a trace, kept beside it and never in it.
//!
//! A [`Note`] marks a step of a session, or a belief at that step, with an optional text (a
//! note without text is a bookmark). Notes live in a *sidecar* file next to the trace:
//! `run.jsonl` gets `run.jsonl.notes.json`. When the trace's directory is not writable (a
//! read-only checkout, a shared log directory) or the trace came from standard input, they go to
//! the user's data directory instead: `$XDG_DATA_HOME/doxascope/notes/` (default
//! `~/.local/share/doxascope/notes/`), in a file named after the trace and a hash of its full
//! path. Reading looks in both places, the sidecar first. The trace file itself is never
//! opened for writing.
//!
//! The file is one JSON document (`{"doxascope_notes": 1, "trace": ..., "notes": [...]}`),
//! written whole to a new temporary file and renamed over the old one, so a crash never leaves
//! half a file. Every change takes a lock and re-reads the file first, so two writers of one
//! trace's notes add to each other's notes rather than overwrite them. A sidecar that holds
//! notes and cannot be written is an error, never a silent move to the data directory (which
//! would hide them behind it). Nothing in the file is lost: an entry this version cannot read
//! is written back unchanged, and a file that cannot be read (too large, not UTF-8, not JSON)
//! is kept under a fresh `.broken` name before a new one is written. Only regular files are
//! read, at most [`MAX_FILE`] bytes of it, and no name in the directory is trusted (a FIFO, a
//! device or a planted symlink is never followed into). Texts are capped at [`MAX_TEXT`]
//! characters; like everything read from a file, they are untrusted and are sanitized (or
//! HTML-escaped) before they are shown.

mod file;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use file::Contents;

/// The longest note text kept, in characters (longer texts are cut).
pub const MAX_TEXT: usize = 4096;

/// The largest notes file read (a bigger one is left alone and reported).
pub const MAX_FILE: u64 = 16 << 20;

/// A mark on a step or a belief of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// Its number in the file (stable; `unnote N` removes it).
    pub id: u64,
    /// The session.
    pub session: String,
    /// The step.
    pub step: u32,
    /// The belief id, when it marks a belief.
    pub belief: Option<String>,
    /// The text; empty for a bookmark.
    pub text: String,
    /// When it was made (RFC 3339, UTC).
    pub created: String,
}

impl Note {
    /// Whether it is a bookmark (no text).
    pub fn is_bookmark(&self) -> bool {
        self.text.is_empty()
    }

    fn to_json(&self) -> Value {
        json!({
            "id": self.id, "session": self.session, "step": self.step,
            "belief": self.belief, "text": self.text, "created": self.created,
        })
    }

    fn from_json(v: &Value) -> Option<Note> {
        Some(Note {
            id: v.get("id")?.as_u64()?,
            session: v.get("session")?.as_str()?.to_string(),
            step: u32::try_from(v.get("step")?.as_u64()?).ok()?,
            belief: match v.get("belief") {
                None | Some(Value::Null) => None,
                Some(b) => Some(b.as_str()?.to_string()),
            },
            text: v.get("text")?.as_str()?.chars().take(MAX_TEXT).collect(),
            created: v
                .get("created")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    }
}

/// The notes of one trace file, and where they are kept.
#[derive(Debug, Clone)]
pub struct NoteStore {
    trace: String,
    sidecar: Option<PathBuf>,
    fallback: Option<PathBuf>,
    /// Where the notes were read from or last written to.
    location: Option<PathBuf>,
    /// The file at `location` could not be read: it is kept aside before it is replaced.
    broken: bool,
    /// Something that is not a regular file is at the sidecar's name.
    sidecar_foreign: bool,
    notes: Vec<Note>,
    /// Entries this version could not read, written back as they were.
    kept: Vec<Value>,
    /// What was wrong with the file, if anything (shown to the user).
    problems: Vec<String>,
}

/// FNV-1a: a hash that is the same in every build, for file names.
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The user's data directory for notes.
pub fn data_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("share"))
        })?;
    Some(base.join("doxascope").join("notes"))
}

/// The sidecar of a trace file: `run.jsonl` → `run.jsonl.notes.json`; none for standard input
/// or a live session (anything that is not a file).
pub fn sidecar_path(trace: &str) -> Option<PathBuf> {
    let p = Path::new(trace);
    if trace == "-" || !p.is_file() {
        return None;
    }
    let name = p.file_name()?.to_string_lossy().into_owned();
    Some(p.with_file_name(format!("{name}.notes.json")))
}

/// The file in the data directory for a trace: its name and a hash of its full path.
pub fn fallback_path(trace: &str) -> Option<PathBuf> {
    let full = fs::canonicalize(trace)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| trace.to_string());
    let name: String = Path::new(trace)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "stdin".into())
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    Some(data_dir()?.join(format!("{name}-{:016x}.notes.json", fnv(full.as_bytes()))))
}

/// Why a note was not saved, with what was typed, so nothing typed is lost with it.
pub fn not_saved(e: &std::io::Error, text: &str) -> String {
    if text.trim().is_empty() {
        format!("cannot write the notes: {e}; the bookmark was not saved")
    } else {
        format!(
            "cannot write the notes: {e}; the note was not saved: {}",
            text.trim()
        )
    }
}

/// What happens to a file that could not be read.
fn kept_aside(path: &Path) -> String {
    format!(
        "it is kept as {}.broken (or .broken.1, .broken.2, … when taken) when a note is next \
         written",
        path.display()
    )
}

/// Now, as RFC 3339 UTC with seconds.
fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = super::time::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

impl NoteStore {
    /// The notes of the trace file `trace` (as given on the command line), read from its
    /// sidecar or, when there is none, from the data directory. Problems with the file are
    /// kept in [`NoteStore::problems`]; nothing fails.
    pub fn open(trace: &str) -> NoteStore {
        let mut s = NoteStore {
            trace: trace.to_string(),
            sidecar: sidecar_path(trace),
            fallback: fallback_path(trace),
            location: None,
            broken: false,
            sidecar_foreign: false,
            notes: Vec::new(),
            kept: Vec::new(),
            problems: Vec::new(),
        };
        s.reload();
        s
    }

    /// Reads the file again (another viewer may have written to it). The sidecar is read
    /// when there is a regular file at its name, else the data directory's file; something
    /// else at the sidecar's name (a FIFO, a device, a directory) is never read nor replaced.
    pub fn reload(&mut self) {
        self.notes.clear();
        self.kept.clear();
        self.problems.clear();
        self.location = None;
        self.broken = false;
        self.sidecar_foreign = false;
        let candidates = [(self.sidecar.clone(), true), (self.fallback.clone(), false)];
        for (path, is_sidecar) in candidates {
            let Some(path) = path else { continue };
            match file::read(&path, MAX_FILE) {
                Contents::Missing => {}
                Contents::Foreign(why) => {
                    self.problems.push(format!("{} {why}", path.display()));
                    self.sidecar_foreign |= is_sidecar;
                }
                Contents::Broken(why) => {
                    self.set_broken(&path, &why);
                    return;
                }
                Contents::Text(text) => {
                    self.location = Some(path.clone());
                    self.parse(&path, &text);
                    return;
                }
            }
        }
    }

    /// Marks the file at `path` as one that could not be read: it is kept aside, never
    /// replaced, when a note is next written.
    fn set_broken(&mut self, path: &Path, why: &str) {
        self.location = Some(path.to_path_buf());
        self.broken = true;
        self.problems
            .push(format!("{} {why}; {}", path.display(), kept_aside(path)));
    }

    /// Reads the notes out of the file's text.
    fn parse(&mut self, path: &Path, text: &str) {
        let doc: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                self.location = Some(path.to_path_buf());
                self.broken = true;
                self.problems.push(format!(
                    "{}:{}:{}: not a notes file ({e}); {}",
                    path.display(),
                    e.line(),
                    e.column(),
                    kept_aside(path)
                ));
                return;
            }
        };
        let Some(entries) = doc.get("notes").and_then(Value::as_array) else {
            self.set_broken(path, "is JSON but holds no list of notes");
            return;
        };
        for (i, v) in entries.iter().enumerate() {
            match Note::from_json(v) {
                Some(n) => self.notes.push(n),
                None => {
                    self.problems.push(format!(
                        "{}: note {} could not be read; it is kept as it is",
                        path.display(),
                        i + 1
                    ));
                    self.kept.push(v.clone());
                }
            }
        }
    }

    /// The trace file the notes are about.
    pub fn trace(&self) -> &str {
        &self.trace
    }

    /// Where the notes are kept (`None` until a note exists).
    pub fn location(&self) -> Option<&Path> {
        self.location.as_deref()
    }

    /// Whether they are kept in the data directory rather than next to the trace.
    pub fn in_data_dir(&self) -> bool {
        self.location.is_some() && self.location == self.fallback
    }

    /// What was wrong with the file.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// Every note, in the order they were made.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The notes of one session, by step.
    pub fn of_session(&self, session: &str) -> Vec<&Note> {
        let mut v: Vec<&Note> = self.notes.iter().filter(|n| n.session == session).collect();
        v.sort_by_key(|n| (n.step, n.id));
        v
    }

    /// Adds a note (an empty text is a bookmark) and writes the file; returns it. The file is
    /// read again under the lock first, so notes another writer added are kept. On an error
    /// nothing was written and the note is not listed.
    pub fn add(
        &mut self,
        session: &str,
        step: u32,
        belief: Option<&str>,
        text: &str,
    ) -> io::Result<Note> {
        let _lock = self.lock()?;
        self.reload();
        let note = Note {
            id: self.notes.iter().map(|n| n.id).max().unwrap_or(0) + 1,
            session: session.to_string(),
            step,
            belief: belief.map(str::to_string),
            text: text.trim().chars().take(MAX_TEXT).collect(),
            created: now(),
        };
        self.notes.push(note.clone());
        match self.save() {
            Ok(()) => Ok(note),
            Err(e) => {
                self.notes.pop();
                Err(e)
            }
        }
    }

    /// Removes note `id` and writes the file; `false` when there is none.
    pub fn remove(&mut self, id: u64) -> io::Result<bool> {
        let _lock = self.lock()?;
        self.reload();
        let before = self.notes.len();
        self.notes.retain(|n| n.id != id);
        if self.notes.len() == before {
            return Ok(false);
        }
        self.save().map(|()| true)
    }

    /// The lock every writer of these notes takes: on the trace's directory, or on the data
    /// directory for a trace that is not a file.
    fn lock(&self) -> io::Result<file::Lock> {
        let dir = match (&self.sidecar, &self.fallback) {
            (Some(s), _) => s.parent().map(Path::to_path_buf),
            (None, Some(f)) => {
                let d = f.parent().map(Path::to_path_buf);
                if let Some(d) = &d {
                    fs::create_dir_all(d)?;
                }
                d
            }
            (None, None) => None,
        };
        match dir {
            Some(d) if d.as_os_str().is_empty() => file::lock(Path::new(".")),
            Some(d) => file::lock(&d),
            None => Ok(file::Lock::none()),
        }
    }

    fn document(&self) -> Value {
        let mut notes: Vec<Value> = self.notes.iter().map(Note::to_json).collect();
        notes.extend(self.kept.iter().cloned());
        let name = Path::new(&self.trace)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.trace.clone());
        json!({"doxascope_notes": 1, "trace": name, "notes": notes})
    }

    /// Where a save may go, in order. A sidecar that holds notes is the only place (falling
    /// back elsewhere would hide its notes behind it); otherwise the sidecar when its name is
    /// free, then the data directory.
    fn targets(&self) -> Vec<PathBuf> {
        if let Some(l) = &self.location
            && self.sidecar.as_ref() == Some(l)
        {
            return vec![l.clone()];
        }
        let side = self.sidecar.clone().filter(|_| !self.sidecar_foreign);
        [side, self.fallback.clone()]
            .into_iter()
            .flatten()
            .collect()
    }

    /// Writes the notes (see [`NoteStore::targets`]). A file that could not be read is kept
    /// under a fresh `.broken` name first; a place that held the notes and cannot be written
    /// is an error, never a silent move elsewhere.
    fn save(&mut self) -> io::Result<()> {
        let text = serde_json::to_string_pretty(&self.document()).map_err(io::Error::other)?;
        let mut last_err = io::Error::other("no place to keep notes (no HOME or data directory)");
        for target in self.targets() {
            let held = self.location.as_ref() == Some(&target);
            let written = if held && self.broken {
                file::keep_aside(&target).and_then(|_| file::write_atomic(&target, &text))
            } else {
                file::write_atomic(&target, &text)
            };
            match written {
                Ok(()) => {
                    // Notes moved to the sidecar leave the data-directory copy behind as it
                    // was; reading prefers the sidecar, so the newer file wins.
                    self.location = Some(target);
                    self.broken = false;
                    return Ok(());
                }
                Err(e) if held => return Err(e),
                Err(e) => last_err = e,
            }
        }
        Err(last_err)
    }
}
