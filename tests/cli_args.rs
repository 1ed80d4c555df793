//! The command line as a new user meets it: options before or after the files, a mistyped
//! command, a directory instead of a file, config warnings, `--listen` paths from unset
//! variables, and shell completions.
//!
//! The TUI needs a terminal; without one (as here) it stops with "needs a terminal" after the
//! arguments were accepted and every plain-text check has run, so reaching that message is
//! how these tests know the arguments were understood.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_doxascope"));
    // No user config leaks in: each test that wants one sets its own.
    c.env("XDG_CONFIG_HOME", "/nonexistent-doxascope-test")
        .stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The arguments were accepted and the TUI was about to start.
fn reached_the_tui(o: &Output) -> bool {
    o.status.code() == Some(2) && stderr(o).contains("the TUI needs a terminal")
}

#[test]
fn view_options_are_accepted_before_and_after_the_file() {
    let f = sample("treasure-hunt.jsonl");
    for args in [
        vec!["--theme", "light", &f],
        vec!["--at", "5", &f],
        vec!["--no-follow", &f],
        vec![&f, "--no-follow", "--at", "5", "--theme", "light"],
        vec!["--at=5", &f, "--theme=dark", "--no-follow"],
        vec!["view", "--theme", "light", &f, "--at", "5"],
    ] {
        let o = run(&args);
        assert!(reached_the_tui(&o), "{args:?}: {}", stderr(&o));
    }
    // A bad option is still an error, named.
    let o = run(&["--thme", "light", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--thme"), "{}", stderr(&o));
}

#[test]
fn a_mistyped_command_is_not_taken_for_a_file() {
    let f = sample("treasure-hunt.jsonl");
    let o = run(&["valdate", &f]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("did you mean `validate`?"),
        "{}",
        stderr(&o)
    );
    let o = run(&["adit", &f]);
    assert!(
        stderr(&o).contains("did you mean `audit`?"),
        "{}",
        stderr(&o)
    );
    // A command after view options is pointed out too.
    let o = run(&["--theme", "light", "validate", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`validate` is a command"),
        "{}",
        stderr(&o)
    );
    // A file that exists under a command-like name is a file.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(&f, dir.path().join("valdate")).expect("copy");
    let o = bin()
        .current_dir(dir.path())
        .args(["valdate"])
        .output()
        .expect("runs");
    assert!(reached_the_tui(&o), "{}", stderr(&o));
}

#[test]
fn a_directory_is_not_a_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().to_string_lossy().into_owned();
    for args in [vec!["--no-follow", &d], vec![&d], vec!["view", &d]] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("not a regular file"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // Followed, a directory beside a real file is reported by its follower in the TUI; the
    // file is still shown.
    let f = sample("treasure-hunt.jsonl");
    assert!(reached_the_tui(&run(&[&d, &f])));
    // Read once, a missing file is an error before the screen is taken.
    let missing = dir.path().join("nope.jsonl");
    let o = run(&["--no-follow", &missing.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot open"), "{}", stderr(&o));
}

fn with_config(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("doxascope");
    std::fs::create_dir_all(&conf).expect("mkdir");
    std::fs::write(conf.join("config.toml"), text).expect("config");
    let home = dir.path().to_path_buf();
    (dir, home)
}

#[test]
fn config_problems_are_printed_before_the_tui_starts() {
    let (_dir, home) = with_config("theem = \"light\"\nmouse = maybe\n");
    let o = bin()
        .env("XDG_CONFIG_HOME", &home)
        .arg(sample("treasure-hunt.jsonl"))
        .output()
        .expect("runs");
    let e = stderr(&o);
    let path = home.join("doxascope").join("config.toml");
    assert!(
        e.contains(&format!(
            "doxascope: warning: {}: unknown key theem",
            path.display()
        )),
        "{e}"
    );
    assert!(e.contains("mouse must be true or false"), "{e}");
    // Warnings come first and do not stop the viewer.
    assert!(reached_the_tui(&o), "{e}");
    assert!(e.find("theem") < e.find("needs a terminal"), "{e}");
    // A clean config prints nothing of the kind.
    let (_dir, home) = with_config("theme = \"light\"\n");
    let o = bin()
        .env("XDG_CONFIG_HOME", &home)
        .arg(sample("treasure-hunt.jsonl"))
        .output()
        .expect("runs");
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn listen_refuses_paths_made_from_an_unset_variable() {
    // What `--listen unix:$XDG_RUNTIME_DIR/doxascope/live.sock` becomes with it unset.
    let o = run(&["view", "--listen", "unix:/doxascope/live.sock"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("filesystem root"), "{e}");
    assert!(!Path::new("/doxascope").exists());
    let o = run(&["--listen", "unix:doxascope/live.sock"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("relative"), "{}", stderr(&o));
    // The documented fallback parses with the variable unset (through a shell, as typed).
    let dir = tempfile::tempdir().expect("tempdir");
    let o = Command::new("sh")
        .env_remove("XDG_RUNTIME_DIR")
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", "/nonexistent-doxascope-test")
        .stdin(Stdio::null())
        .args([
            "-c",
            "exec \"$0\" view --listen \"unix:${XDG_RUNTIME_DIR:-$HOME/.cache}/doxascope/live.sock\"",
            env!("CARGO_BIN_EXE_doxascope"),
        ])
        .output()
        .expect("sh runs");
    assert!(reached_the_tui(&o), "{}", stderr(&o));
}

#[test]
fn completions_are_generated_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let script = String::from_utf8(o.stdout).expect("UTF-8");
        for word in ["doxascope", "validate", "audit", "no-follow", "theme"] {
            assert!(script.contains(word), "{shell}: {word} missing");
        }
        // Where the shell is installed, the script must at least parse.
        let check = match shell {
            "bash" => Some(("bash", vec!["-n"])),
            "zsh" => Some(("zsh", vec!["-n"])),
            "fish" => Some(("fish", vec!["--no-execute"])),
            _ => None,
        };
        if let Some((sh, flags)) = check
            && Command::new(sh).arg("-c").arg("true").output().is_ok()
        {
            let dir = tempfile::tempdir().expect("tempdir");
            let p = dir.path().join("script");
            std::fs::write(&p, &script).expect("write");
            let o = Command::new(sh)
                .args(&flags)
                .arg(&p)
                .output()
                .expect("runs");
            assert!(o.status.success(), "{shell}: {}", stderr(&o));
        }
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bare_doxascope_prints_the_overview_and_help_works() {
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Usage: doxascope [OPTIONS] [FILE]..."));
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for w in ["--theme", "--at", "--no-follow", "--listen", "completions"] {
        assert!(out.contains(w), "{w} missing from --help:\n{out}");
    }
}

#[test]
fn help_texts_speak_to_users_not_to_the_design_notes() {
    let mut helps = vec![run(&["--help"])];
    for sub in [
        "view",
        "validate",
        "audit",
        "repl",
        "export",
        "demo",
        "completions",
    ] {
        helps.push(run(&[sub, "--help"]));
    }
    for o in helps {
        assert_eq!(o.status.code(), Some(0));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(!text.contains("contract"), "{text}");
    }
    let o = run(&["repl", "--help"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--session NAME picks one"));
}

#[test]
fn repl_over_two_files_asks_for_a_session_by_name() {
    let o = bin()
        .args([
            "repl",
            &sample("treasure-hunt.jsonl"),
            &sample("dns-troubleshooting.jsonl"),
        ])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("--session"), "{e}");
    assert!(
        e.contains("treasure-hunt.jsonl") && e.contains("dns-troubleshooting.jsonl"),
        "{e}"
    );
}

#[test]
fn manual_pages_are_generated() {
    let o = run(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = String::from_utf8_lossy(&o.stdout);
    assert!(page.contains(".TH doxascope 1"), "{page}");
    assert!(page.contains("completions"), "{page}");
    let o = run(&["man", "audit"]);
    assert_eq!(o.status.code(), Some(0));
    let page = String::from_utf8_lossy(&o.stdout);
    assert!(page.contains(".TH doxascope-audit 1"), "{page}");
    assert!(page.contains("policy"), "{page}");
    let o = run(&["man", "nope"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `--help`, `view --help`, `import --help` and the man pages say what doxascope reads: every
/// importer by name (`Format::ALL`, so a new importer cannot go unmentioned), OpenTelemetry
/// and OTLP, and where it shows a live session it names the `otlp:` receiver.
#[test]
fn help_and_man_pages_name_opentelemetry_and_every_importer() {
    use doxascope::trace::import::Format;
    let pages: [(&[&str], bool); 6] = [
        (&["--help"], true),
        (&["view", "--help"], true),
        (&["import", "--help"], false),
        (&["man"], true),
        (&["man", "view"], true),
        (&["man", "import"], false),
    ];
    for (args, live) in pages {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        // roff escapes hyphens and wraps lines: compare words, lowercased.
        let text = String::from_utf8_lossy(&o.stdout)
            .replace("\\-", "-")
            .replace('\n', " ")
            .to_lowercase();
        assert!(
            text.contains("opentelemetry"),
            "{args:?} does not name OpenTelemetry"
        );
        assert!(
            text.contains("otlp json"),
            "{args:?} does not name OTLP JSON files"
        );
        for f in Format::ALL {
            assert!(
                text.contains(f.name()),
                "{args:?} does not name the {} importer",
                f.title()
            );
        }
        if live {
            assert!(
                text.contains("otlp:127.0.0.1:4318") && text.contains("/v1/logs"),
                "{args:?} does not name the OTLP receiver"
            );
        }
    }
}
