//! Every command example in README.md and docs/*.md works as written.
//!
//! The examples are the fenced `sh` blocks (and plain blocks that start with a `$ ` prompt).
//! Each block runs in a fresh directory with `sample-traces/` and `clients/` linked in, the
//! files the docs assume the user has (`agent.jsonl`, `run.jsonl`, …) made from a sample,
//! `doxascope` first on `PATH`, `HOME` a fresh directory and `XDG_RUNTIME_DIR` unset (the
//! case a documented socket path once got wrong). Lines run in order, through `sh`:
//!
//! - a `$ ` line's output follows it in the block: the command's stdout must begin with it;
//! - `doxascope` headless commands must exit 0 (1 is allowed for `audit` and `validate`, whose
//!   samples have findings on purpose, and `diff`, whose 1 says the runs differ) with no usage
//!   error;
//! - TUI commands (`view`, the bare form) must get as far as starting the TUI, which without a
//!   terminal stops with "the TUI needs a terminal": the arguments were accepted and every
//!   check made before the screen is taken passed;
//! - live demo play (paced, minutes long) must still be running cleanly after a few seconds;
//! - other lines (`mkdir -p …`, a Python agent writing a file) must exit 0;
//! - `cargo` lines are skipped (this test runs under cargo), and a Python agent writing to a
//!   socket must name an address a `doxascope view --listen` line of the same block uses.

#[path = "support/external.rs"]
mod external;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Files the docs' examples assume the user already has.
const USER_FILES: &[&str] = &["my-trace.jsonl", "run.jsonl", "agent.jsonl", "other.jsonl"];

/// Traces of other tools the docs' examples assume (docs/import.md), copied from the real
/// files in ../shared/external-traces/; without those, the examples naming them are skipped
/// (and counted on stderr).
const OTHER_TOOLS_FILES: &[(&str, &str)] = &[
    ("logs/run.eval", "inspect/log_message_deduplication.eval"),
    (
        "logs/browser.json",
        "inspect/2025-05-12T20-27-36-04-00_browser.json",
    ),
    ("agent.af", "letta/memgpt_agent_with_convo.v1-2025-03.af"),
    ("trace.json", "langfuse/claude-agent-2025-12-22.trace.json"),
    (
        "runs.json",
        "langsmith-langgraph/langsmith_js_wrap_openai_default.json",
    ),
    ("graph.json", "memory/graphiti_edges.json"),
];

struct Example {
    file: String,
    line: usize,
    command: String,
    expected: Vec<String>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The blocks of examples in a Markdown text, each a list of commands in order.
fn blocks(file: &str, text: &str) -> Vec<Vec<Example>> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((_, l)) = lines.next() {
        let Some(lang) = l.strip_prefix("```") else {
            continue;
        };
        let mut body = Vec::new();
        for (n, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push((n + 1, l));
        }
        let prompted = body.first().is_some_and(|(_, l)| l.starts_with("$ "));
        if !(matches!(lang.trim(), "sh" | "bash" | "console" | "shell") || prompted) {
            continue;
        }
        let mut block: Vec<Example> = Vec::new();
        for (n, l) in body {
            if prompted && !l.starts_with("$ ") {
                if let Some(last) = block.last_mut() {
                    last.expected.push(l.to_string());
                }
                continue;
            }
            let cmd = l.strip_prefix("$ ").unwrap_or(l).trim();
            if cmd.is_empty() || cmd.starts_with('#') {
                continue;
            }
            block.push(Example {
                file: file.to_string(),
                line: n,
                command: cmd.to_string(),
                expected: Vec::new(),
            });
        }
        out.push(block);
    }
    out
}

/// The binary's commands, as its `--help` lists them.
fn commands() -> &'static [String] {
    static COMMANDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    COMMANDS.get_or_init(|| {
        let o = Command::new(env!("CARGO_BIN_EXE_doxascope"))
            .arg("--help")
            .output()
            .expect("--help runs");
        let help = String::from_utf8_lossy(&o.stdout).into_owned();
        help.lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect()
    })
}

/// The `doxascope` subcommand a line runs (`""` for the bare form), if it runs doxascope.
fn subcommand(cmd: &str) -> Option<String> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "doxascope")?;
    let next = words.get(i + 1).copied().unwrap_or("");
    Some(if commands().iter().any(|c| c == next) {
        next.to_string()
    } else {
        String::new()
    })
}

/// A command's output after it exits, or `None` when it is still running after `secs`
/// (then it is killed with its process group).
fn run_for(mut cmd: Command, secs: u64) -> (Option<i32>, String, String, bool) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().expect("sh runs");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let ereader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let end = Instant::now() + Duration::from_secs(secs);
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break Some(st);
        }
        if Instant::now() > end {
            timed_out = true;
            // SAFETY: kill(2) on the process group this test created; no memory involved.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = String::from_utf8_lossy(&reader.join().expect("stdout")).into_owned();
    let err = String::from_utf8_lossy(&ereader.join().expect("stderr")).into_owned();
    (status.and_then(|s| s.code()), out, err, timed_out)
}

fn workdir(tmp: &Path) -> PathBuf {
    let cwd = tmp.join("work");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    for d in ["sample-traces", "clients"] {
        std::os::unix::fs::symlink(repo().join(d), cwd.join(d)).expect("symlink");
    }
    for f in USER_FILES {
        std::fs::copy(
            repo().join("sample-traces").join("treasure-hunt.jsonl"),
            cwd.join(f),
        )
        .expect("copy");
    }
    if let Some(external) = external::dir() {
        for (f, src) in OTHER_TOOLS_FILES {
            let to = cwd.join(f);
            std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            // The one graph written for the tests lives in the repository.
            let from = if *src == "memory/graphiti_edges.json" {
                repo().join("tests/data/graphiti_edges.json")
            } else {
                external.join(src)
            };
            std::fs::copy(&from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        }
    }
    std::fs::create_dir_all(tmp.join("home")).expect("home");
    cwd
}

fn python3() -> bool {
    Command::new("python3")
        .arg("-c")
        .arg("pass")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_documented_command_works_as_written() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_doxascope"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let has_python = python3();
    let has_external = external::dir().is_some();
    let mut skipped_external = 0;
    let mut ran = 0;
    let mut failures = Vec::new();
    for file in doc_files() {
        let name = file
            .strip_prefix(repo())
            .unwrap_or(&file)
            .display()
            .to_string();
        if name == "docs/reliability.md" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("read doc");
        for block in blocks(&name, &text) {
            let tmp = tempfile::tempdir().expect("tempdir");
            let cwd = workdir(tmp.path());
            let listens: Vec<String> = block
                .iter()
                .filter(|e| e.command.contains("--listen"))
                .map(|e| e.command.clone())
                .collect();
            for ex in &block {
                let at = format!("{}:{}: {}", ex.file, ex.line, ex.command);
                let c = &ex.command;
                if c.starts_with("cargo ") {
                    continue;
                }
                if !has_external && OTHER_TOOLS_FILES.iter().any(|(f, _)| c.contains(f)) {
                    skipped_external += 1;
                    continue;
                }
                let sub = subcommand(c);
                if c.starts_with("python3 ") {
                    if let Some(i) = c.find("unix:").or_else(|| c.find("tcp:")) {
                        let addr: String = c[i..]
                            .chars()
                            .take_while(|ch| !ch.is_whitespace() && *ch != '"')
                            .collect();
                        if !listens.iter().any(|l| l.contains(&addr)) {
                            failures.push(format!(
                                "{at}: no `doxascope view --listen` line of this block \
                                 listens on {addr}"
                            ));
                        }
                        continue;
                    }
                    if !has_python {
                        continue;
                    }
                }
                let mut cmd = Command::new("sh");
                cmd.arg("-c")
                    .arg(c)
                    .current_dir(&cwd)
                    .env("PATH", &path)
                    .env("HOME", tmp.path().join("home"))
                    .env("XDG_CONFIG_HOME", tmp.path().join("config"))
                    .env_remove("XDG_RUNTIME_DIR")
                    .env_remove("NO_COLOR");
                let live_demo = sub.as_deref() == Some("demo")
                    && !c.contains("--headless")
                    && !c.contains("--eval");
                let tui = matches!(sub.as_deref(), Some("view" | ""));
                let secs = if live_demo { 4 } else { 300 };
                let (code, out, err, timed_out) = run_for(cmd, secs);
                ran += 1;
                let ok = if live_demo {
                    // Paced play: running, printing the dialogue, and no complaint.
                    (timed_out || code == Some(0)) && err.is_empty() && out.contains("turn")
                } else if tui {
                    code == Some(2) && err.contains("the TUI needs a terminal")
                } else {
                    let allowed_one = matches!(sub.as_deref(), Some("audit" | "validate" | "diff"));
                    !timed_out && (code == Some(0) || (allowed_one && code == Some(1)))
                };
                if !ok {
                    failures.push(format!(
                        "{at}\n  exit {code:?} (timed out: {timed_out})\n  stderr: {}\n  stdout: {}",
                        err.trim(),
                        out.lines().take(5).collect::<Vec<_>>().join("\n          ")
                    ));
                    continue;
                }
                if !ex.expected.is_empty() {
                    let got: Vec<&str> = out.lines().map(str::trim_end).collect();
                    let want: Vec<&str> = ex.expected.iter().map(|l| l.trim_end()).collect();
                    if got.len() < want.len() || got[..want.len()] != want[..] {
                        failures.push(format!(
                            "{at}\n  documented output:\n{}\n  actual output:\n{}",
                            want.join("\n"),
                            got.join("\n")
                        ));
                    }
                }
            }
        }
    }
    if skipped_external > 0 {
        eprintln!(
            "skipped {skipped_external} example(s) on other tools' files: \
             ../shared/external-traces is not here"
        );
    }
    assert!(
        ran >= 15,
        "only {ran} examples found: is the extraction broken?"
    );
    assert!(
        failures.is_empty(),
        "{} documented example(s) do not work as written:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_extraction_finds_commands_prompts_and_their_output() {
    let md = "text\n```sh\n$ printf 'x\\n' | doxascope repl t.jsonl\nout 1\nout 2\n```\n\
              ```rust\nlet x = 1;\n```\n\
              ```\n$ doxascope demo --eval\nrow\n```\n```\nnot a command\n```\n\
              ```sh\ndoxascope view f.jsonl   # comment\n# only a comment\n```\n";
    let b = blocks("x.md", md);
    assert_eq!(b.len(), 3);
    assert_eq!(b[2].len(), 1);
    assert_eq!(b[2][0].command, "doxascope view f.jsonl   # comment");
    assert!(b[2][0].expected.is_empty());
    assert_eq!(b[0][0].command, "printf 'x\\n' | doxascope repl t.jsonl");
    assert_eq!(b[0][0].expected, ["out 1", "out 2"]);
    assert_eq!(b[0][0].line, 3);
    assert_eq!(b[1][0].command, "doxascope demo --eval");
    assert_eq!(b[1][0].expected, ["row"]);
    assert_eq!(
        subcommand("printf x | doxascope repl t").as_deref(),
        Some("repl")
    );
    assert_eq!(subcommand("doxascope f.jsonl").as_deref(), Some(""));
    assert_eq!(subcommand("cargo test"), None);
    assert_eq!(subcommand("doxascope man audit").as_deref(), Some("man"));
}
