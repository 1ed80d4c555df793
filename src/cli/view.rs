//! `doxascope view [FILE...]` and the default form `doxascope FILE...`: the TUI.
//!
//! Before the terminal is taken over, everything that can be said in plain text is said on
//! stderr: a first argument that looks like a mistyped command, files that cannot be read
//! once (`--no-follow`) or never (directories), a `--listen` path that would land at the
//! filesystem root, and the config file's problems.

use std::path::{Path, PathBuf};

use crate::trace::live::ListenAddr;

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `view` (and of the bare `doxascope`).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Trace files: v1 JSON Lines (followed as they grow), or another tool's trace
    /// (OpenTelemetry OTLP JSON of spans and logs, Inspect AI, Langfuse, LangSmith, Letta,
    /// Graphiti, LangGraph checkpoints, mem0; detected from the content, imported and read
    /// once); `-` reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Read the files once instead of following them as they grow.
    #[arg(long)]
    no_follow: bool,
    /// Refuse to follow a path that is a symbolic link (by default a link is followed and
    /// its target shown, with a warning when it leaves the link's directory).
    #[arg(long)]
    no_follow_symlinks: bool,
    /// Open at this step (and pause following).
    #[arg(long, value_name = "STEP")]
    at: Option<u64>,
    /// Open on this session (as `repl --session`). When the files are read once
    /// (`--no-follow`, other formats) a name they do not hold is an error listing the names;
    /// a followed file or a live source may still bring it, so the view waits and says so.
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// Accept live sessions: `unix:PATH` (absolute, in a private directory) or
    /// `tcp:127.0.0.1:PORT` for v1 lines; `otlp:127.0.0.1:4318` (or `otlp:PORT`) for an
    /// OpenTelemetry OTLP/HTTP receiver (POST /v1/traces and /v1/logs, protobuf or JSON, gzip;
    /// POST /v1/span_annotations takes Phoenix span annotations as scores).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    listen: Option<ListenAddr>,
    /// With --listen or `-`: spool files of ended live sessions kept on disk (default
    /// 10000, and at most 4 GiB of them); past it the oldest are deleted, and the view says so.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    spool_files: Option<u64>,
    /// The palette: dark or light (default: the config file's `theme`, else dark).
    #[arg(long, value_name = "NAME")]
    theme: Option<String>,
    /// Read the files as this format instead of detecting it (`v1` for a trace whose start
    /// looks like binary data, such as the NULs `copytruncate` leaves).
    #[arg(long, value_name = "NAME", value_parser = super::import::parse_format)]
    format: Option<crate::trace::import::Format>,
}

impl Args {
    /// Whether nothing at all was asked (bare `doxascope`).
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
            && !self.no_follow
            && !self.no_follow_symlinks
            && self.at.is_none()
            && self.session.is_none()
            && self.listen.is_none()
            && self.spool_files.is_none()
            && self.theme.is_none()
            && self.format.is_none()
    }

    /// A compact rendering for tests of the argument parser.
    #[cfg(test)]
    pub(crate) fn debug_summary(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|p| p.display().to_string()).collect();
        let mut s = format!("[{}]", files.join(", "));
        if self.no_follow {
            s.push_str(" no_follow");
        }
        if let Some(a) = self.at {
            s.push_str(&format!(" at={a}"));
        }
        if let Some(l) = &self.listen {
            s.push_str(&format!(" listen={l}"));
        }
        if let Some(t) = &self.theme {
            s.push_str(&format!(" theme={t}"));
        }
        s
    }
}

/// An example socket address that works whether or not `XDG_RUNTIME_DIR` is set (the docs
/// use the same one).
const LISTEN_EXAMPLE: &str = "unix:${XDG_RUNTIME_DIR:-$HOME/.cache}/doxascope/live.sock";

/// `--listen`: the address syntax of [`ListenAddr`], plus refusals of socket paths that are
/// almost certainly a mistake. `unix:$XDG_RUNTIME_DIR/doxascope/live.sock` with the variable
/// unset becomes `unix:/doxascope/live.sock`, and the listener would create `/doxascope` at
/// the filesystem root (it creates a missing directory); a relative path depends on the
/// directory the viewer happens to start in, and agents rarely start in the same one.
fn parse_listen(s: &str) -> Result<ListenAddr, String> {
    let addr: ListenAddr = s.parse().map_err(|e| format!("{e}"))?;
    if let ListenAddr::Unix(path) = &addr {
        if let Some(why) = unsafe_socket_path(path) {
            return Err(format!(
                "{why}; an unset variable (such as $XDG_RUNTIME_DIR) in the path? Use a \
                 directory of your own, e.g. --listen \"{LISTEN_EXAMPLE}\""
            ));
        }
    }
    Ok(addr)
}

/// Why a Unix socket path is refused at parse time, if it is.
fn unsafe_socket_path(path: &Path) -> Option<String> {
    let shown = path.display();
    if !path.is_absolute() {
        return Some(format!("the socket path {shown} is relative"));
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    if dir == Path::new("/") {
        return Some(format!(
            "the socket path {shown} is directly in the filesystem root"
        ));
    }
    if dir.parent() == Some(Path::new("/")) && !dir.exists() {
        return Some(format!(
            "the socket path {shown} would create the directory {} at the filesystem root",
            dir.display()
        ));
    }
    None
}

/// Runs the TUI and returns the exit code.
pub(crate) fn run(args: Args) -> i32 {
    let follow = !args.no_follow;
    if let Err(msg) = check_files(&args.files, follow) {
        eprintln!("doxascope: {msg}");
        return EXIT_USAGE;
    }
    let imported = match import_files(&args.files, args.format) {
        Ok(i) => i,
        Err(msg) => {
            eprintln!("doxascope: {msg}");
            return EXIT_USAGE;
        }
    };
    if let Some(name) = &args.session
        && let Err(msg) = check_session(&args, &imported, name)
    {
        eprintln!("doxascope: {msg}");
        return EXIT_USAGE;
    }
    super::config_warnings_to_stderr();
    match crate::tui::run(options(args, imported)) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            // Standard error may be the terminal that went away: never panic on it.
            let _ =
                std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("doxascope: {e}\n"));
            EXIT_USAGE
        }
    }
}

/// What the TUI is asked to do.
fn options(args: Args, imported: Vec<crate::tui::ImportedSource>) -> crate::tui::Options {
    crate::tui::Options {
        files: args.files,
        follow: !args.no_follow,
        at: args.at,
        session: args.session,
        theme: args.theme,
        listen: args.listen,
        spool_files: args
            .spool_files
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        no_follow_symlinks: args.no_follow_symlinks,
        demo: None,
        race: None,
        diff: None,
        imported,
    }
}

/// `--session NAME` when everything is read once (`--no-follow`, or only files of other
/// formats, which are never followed) and nothing comes live: the name must be among the
/// sessions of the files. A followed file or a live source may still bring it, so then the
/// view waits for it (and says which sessions there are).
fn check_session(
    args: &Args,
    imported: &[crate::tui::ImportedSource],
    name: &str,
) -> Result<(), String> {
    let once = !args.files.is_empty()
        && args.listen.is_none()
        && !args.files.iter().any(|p| p.as_os_str() == "-")
        && (args.no_follow
            || args
                .files
                .iter()
                .all(|p| imported.iter().any(|i| i.path == *p)));
    if !once {
        return Ok(());
    }
    let mut names: Vec<String> = Vec::new();
    for p in &args.files {
        let m = match imported.iter().find(|i| i.path == *p) {
            Some(i) => crate::model::Model::from_spooled(&p.display().to_string(), &i.v1)
                .map_err(|e| format!("cannot read the converted lines again: {e}"))?,
            None => crate::model::Model::load_as(std::slice::from_ref(p), args.format)
                .map_err(|e| e.to_string())?,
        };
        if m.timeline(name).is_some() {
            return Ok(());
        }
        names.extend(m.sessions().iter().map(|s| crate::sanitize::sanitize(s)));
    }
    Err(format!(
        "no session named {:?}; sessions: {}",
        crate::sanitize::sanitize(name),
        if names.is_empty() {
            "none (the files hold no events)".to_string()
        } else {
            names.join(", ")
        }
    ))
}

/// The files of other formats among `files`, imported now, before the terminal is taken
/// over, so that a broken one is a plain one-line error. Only regular files that exist are
/// looked at (a FIFO or a file still to come is v1, read as it is written); v1 files are
/// left to the view, which follows them.
pub(crate) fn import_files(
    files: &[PathBuf],
    forced: Option<crate::trace::import::Format>,
) -> Result<Vec<crate::tui::ImportedSource>, String> {
    use crate::trace::import::{Format, OpenError, Opened, open_path_watched};
    let mut out = Vec::new();
    if forced == Some(Format::V1) {
        // Every file is v1 and left to the view, whatever its head looks like.
        return Ok(out);
    }
    for p in files {
        if p.as_os_str() == "-" || !std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let shown = crate::sanitize::sanitize(&p.display().to_string());
        // The view's load of the first file's spool, when it is streamed, starts as the
        // spool is written (only the first: the view loads its files in order).
        let mut early = None;
        let mut watch = |tail| early = crate::tui::EarlyLoad::start(p, tail).ok();
        let first = out.is_empty();
        match open_path_watched(p, forced, first.then_some(&mut watch as _)) {
            Ok(Opened::V1(_)) => {}
            Ok(Opened::Imported(format, imp)) => {
                let n = imp.notes.len();
                if n > 0 {
                    eprintln!(
                        "doxascope: {shown}: read as {} ({}), {n} note{} (`doxascope import \
                         {shown}` lists them)",
                        format.title(),
                        format.name(),
                        if n == 1 { "" } else { "s" }
                    );
                }
                out.push(crate::tui::ImportedSource {
                    path: p.clone(),
                    format,
                    notes: n,
                    v1: std::sync::Arc::new(imp),
                    early: early.filter(|e| e.complete()),
                });
            }
            Err(OpenError::Io(e)) => return Err(format!("cannot read {shown}: {e}")),
            Err(OpenError::Import(e)) => {
                return Err(format!(
                    "{shown}: {}",
                    crate::sanitize::sanitize(&e.to_string())
                ));
            }
        }
    }
    Ok(out)
}

/// Files that can never be shown. A directory is not a trace: with `--no-follow` it is an
/// error, as a missing file is; when following, a directory among other files is reported by
/// its follower ("not a regular file; not followed") and the others are shown, but when every
/// path is a directory nothing can ever be read.
fn check_files(files: &[PathBuf], follow: bool) -> Result<(), String> {
    let named: Vec<&PathBuf> = files.iter().filter(|p| p.as_os_str() != "-").collect();
    let dirs: Vec<&PathBuf> = named.iter().copied().filter(|p| p.is_dir()).collect();
    let shown = |p: &Path| crate::sanitize::sanitize(&p.display().to_string());
    if let Some(d) = dirs.first()
        && (!follow || (dirs.len() == files.len()))
    {
        return Err(format!(
            "{}: not a regular file (a directory); nothing to read",
            shown(d)
        ));
    }
    if !follow {
        // `stat`, not `open`: opening a FIFO here would block, or (opened and closed) cost
        // its writer a broken pipe before the viewer opens it for real.
        for p in named {
            if let Err(e) = std::fs::metadata(p) {
                return Err(format!("cannot open {}: {e}", shown(p)));
            }
        }
    }
    Ok(())
}

/// `doxascope valdate FILE` would follow a file named `valdate`, waiting for it to appear.
/// When the first file does not exist, looks like a plain word (no `/`, no `.`) and is one or
/// two edits away from a command (or is a command, given after options), the user most
/// likely mistyped the command: say so instead of waiting.
pub(crate) fn typo_of_command(args: &Args, commands: &[String]) -> Option<String> {
    let first = args.files.first()?;
    let word = first.to_str()?;
    if word.contains(['/', '.']) || word == "-" || first.symlink_metadata().is_ok() {
        return None;
    }
    let best = commands
        .iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, c)| *d <= (c.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)?;
    let shown = crate::sanitize::sanitize(word);
    Some(if best.0 == 0 {
        format!(
            "`{shown}` is a command, but options came before it; write `doxascope {shown} \
             [OPTIONS]` (or `./{shown}` for a file of that name)"
        )
    } else {
        format!(
            "no file `{shown}`, and no command of that name; did you mean `{}`? (to wait for \
             a file of that name, write `./{shown}`)",
            best.1
        )
    })
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbours each cost 1 (`valdate` → `validate` is 1, `dmeo` → `demo` is 1).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_known_values() {
        assert_eq!(edit_distance("valdate", "validate"), 1);
        assert_eq!(edit_distance("dmeo", "demo"), 1);
        assert_eq!(edit_distance("audit", "audit"), 0);
        assert_eq!(edit_distance("", "repl"), 4);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("treasure", "repl"), 6);
    }

    fn args(files: &[&str]) -> Args {
        Args {
            files: files.iter().map(PathBuf::from).collect(),
            no_follow: false,
            no_follow_symlinks: false,
            at: None,
            session: None,
            listen: None,
            spool_files: None,
            theme: None,
            format: None,
        }
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn no_follow_symlinks_reaches_the_tui_options() {
        use clap::Parser;
        let on = Cli::parse_from(["view", "--no-follow-symlinks", "t.jsonl"]);
        assert!(options(on.args, Vec::new()).no_follow_symlinks);
        let off = Cli::parse_from(["view", "t.jsonl"]);
        let o = options(off.args, Vec::new());
        assert!(!o.no_follow_symlinks && o.follow);
    }

    #[test]
    fn typos_of_commands_are_caught_but_paths_are_not() {
        let cmds: Vec<String> = [
            "validate", "demo", "export", "repl", "audit", "view", "help",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let msg = typo_of_command(&args(&["valdate", "x.jsonl"]), &cmds).expect("typo");
        assert!(msg.contains("did you mean `validate`?"), "{msg}");
        assert!(typo_of_command(&args(&["audti"]), &cmds).is_some());
        assert!(typo_of_command(&args(&["validate"]), &cmds).is_some());
        for not_typo in ["valdate.jsonl", "./valdate", "-", "treasure", "x/audit"] {
            assert_eq!(
                typo_of_command(&args(&[not_typo]), &cmds),
                None,
                "{not_typo}"
            );
        }
        // An existing file of that name is a file.
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("valdate");
        std::fs::write(&p, "").expect("write");
        let cwd_free = Args {
            files: vec![p],
            ..args(&[])
        };
        assert_eq!(typo_of_command(&cwd_free, &cmds), None);
    }

    #[test]
    fn listen_paths_from_empty_variables_are_refused() {
        for bad in [
            "unix:/doxascope/live.sock",
            "unix:/live.sock",
            "unix:doxascope/live.sock",
            "unix:live.sock",
        ] {
            let e = parse_listen(bad).expect_err(bad);
            assert!(e.contains("XDG_RUNTIME_DIR"), "{e}");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let ok = format!("unix:{}/doxascope/live.sock", dir.path().display());
        assert!(parse_listen(&ok).is_ok());
        assert!(parse_listen("tcp:127.0.0.1:7357").is_ok());
        // `/tmp` exists: the listener itself refuses it (world-writable), with its reason.
        assert!(parse_listen("unix:/tmp/dx.sock").is_ok());
        assert!(parse_listen("tcp:0.0.0.0:1").is_err());
    }
}
