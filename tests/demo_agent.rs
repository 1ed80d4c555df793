//! `doxascope demo --agent CMD`: the dialogue runs against an external process speaking the
//! documented JSON-lines protocol. The agents here are small shell scripts (POSIX `sh`, which
//! the command runs through anyway): one that answers by a fixed rule and logs what it was
//! asked, one that gives up, one that mumbles, one that never answers.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use doxascope::demo::eval::{evaluate_dialogues, table_for};
use doxascope::demo::run::{Ask, Dialogue};
use doxascope::demo::{DemoConfig, Label, Schedule};
use doxascope::trace::{Body, Item, Reader, ReaderConfig};
use serde_json::Value;

/// Answers NO to "Is it the case that X is not true?" (whatever rule paraphrase or cue
/// surrounds it) and YES to everything else: it believes every atom true. Logs each question
/// line to `log`.
fn rule_agent(dir: &Path, log: &Path) -> String {
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        format!(
            r#"while IFS= read -r line; do
  printf '%s\n' "$line" >> '{}'
  case "$line" in
    *'is not true?'*) printf '{{"reply":"no","why":"all true"}}\n' ;;
    *) printf '{{"reply":"YES"}}\n' ;;
  esac
done
"#,
            log.display()
        ),
    )
    .unwrap();
    format!("sh '{}'", script.display())
}

/// The same rule, for the library's scripting.
fn rule(ask: &Ask<'_>) -> Label {
    if ask.question.negated {
        Label::No
    } else {
        Label::Yes
    }
}

fn demo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("demo")
        .args(args)
        .output()
        .expect("run demo")
}

fn events(path: &Path) -> Vec<doxascope::trace::Event> {
    let bytes = std::fs::read(path).unwrap();
    let mut r = Reader::new("agent.jsonl", ReaderConfig::default());
    let mut out = Vec::new();
    r.feed(&bytes, &mut out);
    r.finish(&mut out);
    out.into_iter()
        .map(|i| match i {
            Item::Event(e) => e,
            Item::Problem(p) => panic!("bad line in the demo trace: {p:?}"),
        })
        .collect()
}

#[test]
fn the_agents_replies_drive_the_dialogue_through_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("asked.jsonl");
    let out = dir.path().join("agent-trace.jsonl");
    let o = demo(&[
        "--headless",
        "--out",
        out.to_str().unwrap(),
        "--dialogues",
        "2",
        "--turns",
        "6",
        "--seed",
        "5",
        "--agent",
        &rule_agent(dir.path(), &log),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // What the agent was asked: one line per question, every field of the protocol.
    let asked: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON question per line"))
        .collect();
    assert_eq!(asked.len(), 12);
    for (k, q) in asked.iter().enumerate() {
        assert_eq!(q["dialogue"], (k / 6 + 1) as u64);
        assert_eq!(q["turn"], (k % 6 + 1) as u64);
        assert_eq!(q["turns"], 6);
        assert_eq!(q["answers"], serde_json::json!(["YES", "NO", "UNKNOWN"]));
        assert!(q["atoms"].as_array().is_some_and(|a| a.len() >= 5));
        assert!(q["rules"].as_array().is_some_and(|r| {
            !r.is_empty()
                && r.iter()
                    .all(|x| x.as_str().is_some_and(|s| s.ends_with('.')))
        }));
        assert!(
            q["beliefs"]
                .as_str()
                .is_some_and(|b| b.starts_with("So far, we"))
        );
    }
    // The trace: the agent's replies, its questions, and the commitments they make.
    let evs = events(&out);
    let mut turns = 0;
    for e in &evs {
        match &e.body {
            Body::Session(s) => {
                assert_eq!(s.model.as_deref(), Some("external"));
                let meta = s.meta.as_deref().unwrap();
                assert!(
                    meta["agent_command"]
                        .as_str()
                        .is_some_and(|c| c.contains("agent.sh"))
                );
            }
            Body::Turn(t) => {
                let q = &asked[turns];
                assert_eq!(t.question.as_deref(), q["question"].as_str());
                let negated = t.question.as_deref().unwrap().contains("is not true?");
                let want = if negated { "NO" } else { "YES" };
                assert_eq!(
                    t.reply.map(|r| format!("{r:?}").to_uppercase()),
                    Some(want.to_string())
                );
                turns += 1;
            }
            _ => {}
        }
    }
    assert_eq!(turns, 12);
    // The belief summary tells the agent what it committed before: by turn 2 of each
    // dialogue, the atom of turn 1 (always committed: this agent never says UNKNOWN).
    for d in 0..2 {
        let first: &Value = &asked[d * 6];
        let second: &Value = &asked[d * 6 + 1];
        assert!(
            first["beliefs"]
                .as_str()
                .unwrap()
                .starts_with("So far, we believe nothing")
        );
        assert!(
            second["beliefs"]
                .as_str()
                .unwrap()
                .starts_with("So far, we believe that")
        );
    }
    // The trace validates and audits like any demo trace.
    let v = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("validate")
        .arg(&out)
        .output()
        .unwrap();
    assert!(v.status.success());
}

#[test]
fn eval_with_an_agent_is_the_table_of_its_replies() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("asked.jsonl");
    let o = demo(&[
        "--eval",
        "--dialogues",
        "4",
        "--seed",
        "2",
        "--agent",
        &rule_agent(dir.path(), &log),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = String::from_utf8(o.stdout).unwrap();
    // The same replies through the library give the same table, byte for byte.
    let cmd = rule_agent(dir.path(), &log);
    let cfg = DemoConfig {
        seed: 2,
        ..DemoConfig::default()
    };
    let mut evals = Vec::new();
    for schedule in [Schedule::Random, Schedule::Stress] {
        let c = DemoConfig { schedule, ..cfg };
        let ds: Vec<Dialogue> = (0..4)
            .map(|i| Dialogue::script_with(&c, i, Some(&cmd), &mut |a| Ok(rule(a))).unwrap())
            .collect();
        evals.push(evaluate_dialogues(&c, &ds).unwrap());
    }
    assert_eq!(got, table_for(&cfg, &evals, Some(&cmd), 0));
    assert!(got.starts_with("External agent `sh "), "{got}");
    // 2 schedules × 4 dialogues × 10 turns, one process for all of them.
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 80);
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let p: PathBuf = dir.join(name);
    std::fs::write(&p, body).unwrap();
    format!("sh '{}'", p.display())
}

#[test]
fn an_agent_that_fails_ends_the_run_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    // Gives up after two questions.
    let quitter = script(
        dir.path(),
        "quit.sh",
        "read -r a; echo '{\"reply\":\"YES\"}'; read -r b; echo '{\"reply\":\"NO\"}'; exit 3\n",
    );
    let o = demo(&[
        "--headless",
        "--out",
        out.to_str().unwrap(),
        "--agent",
        &quitter,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dialogue 1, turn 3"), "{err}");
    assert!(
        err.contains("exit status: 3") || err.contains("closed its output"),
        "{err}"
    );
    // Never answers: the timeout says so.
    let mute = script(dir.path(), "mute.sh", "sleep 30\n");
    let o = demo(&[
        "--eval",
        "--dialogues",
        "1",
        "--agent-timeout",
        "0.5",
        "--agent",
        &mute,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no reply within"), "{err}");
    // A command that does not exist.
    let o = demo(&["--eval", "--agent", "/no/such/agent-binary"]);
    assert_eq!(o.status.code(), Some(1));
    // Mumbling is not fatal: a reply naming no label counts as UNKNOWN, and is said.
    let mumbler = script(
        dir.path(),
        "mumble.sh",
        "while IFS= read -r l; do echo 'well, maybe'; done\n",
    );
    let o = demo(&[
        "--eval",
        "--dialogues",
        "1",
        "--schedule",
        "random",
        "--agent",
        &mumbler,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("counted as UNKNOWN): 10."), "{text}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("names none of YES, NO, UNKNOWN"));
    // --agent and --error-rate do not go together.
    assert_eq!(
        demo(&["--eval", "--agent", &mumbler, "--error-rate", "0.2"])
            .status
            .code(),
        Some(2)
    );
}

/// `demo` with its memory (virtual, 800 MB) and time bounded: a run that buffers without
/// bound fails on an allocation instead of taking the machine, one that hangs is killed. Its
/// output goes to files, not pipes: a process the agent left behind may hold them open, and
/// the run is over when doxascope exits.
fn demo_bounded(args: &[&str], secs: u64) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 800000; exec \"$0\" demo \"$@\"")
        .arg(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("demo {args:?} did not end within {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
    }
}

#[test]
fn a_flooding_agent_ends_the_run_in_bounded_memory() {
    let o = demo_bounded(
        &[
            "--eval",
            "--dialogues",
            "10",
            "--agent",
            r#"yes '{"reply":"YES"}'"#,
        ],
        60,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("without being asked"), "{err}");
    assert!(!err.contains("memory allocation"), "{err}");
}

/// Whether process `pid` is alive (a zombie is not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

#[test]
fn what_the_agent_started_in_the_background_ends_with_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let agent = script(
        dir.path(),
        "spawner.sh",
        &format!(
            "sleep 300 & echo $! > '{}'\nwhile IFS= read -r l; do echo '{{\"reply\":\"YES\"}}'; done\n",
            pidfile.display()
        ),
    );
    let o = demo_bounded(&["--eval", "--dialogues", "1", "--agent", &agent], 60);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while alive(pid) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let survived = alive(pid);
    if survived {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    assert!(
        !survived,
        "the agent's background child {pid} outlived the demo"
    );
}

#[test]
fn the_agents_group_ends_even_when_doxascope_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let agent = script(
        dir.path(),
        "slow.sh",
        &format!(
            "sleep 300 >/dev/null 2>&1 & echo $! > '{}'\nwhile IFS= read -r l; do sleep 0.2; echo '{{\"reply\":\"YES\"}}'; done\n",
            pidfile.display()
        ),
    );
    let mut demo = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["demo", "--eval", "--dialogues", "20", "--agent", &agent])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let pid: u32 = loop {
        if let Some(p) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break p;
        }
        assert!(std::time::Instant::now() < until, "the agent never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(demo.try_wait().unwrap().is_none(), "the run is still going");
    demo.kill().unwrap(); // SIGKILL: no cleanup runs in doxascope.
    demo.wait().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(pid) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let survived = alive(pid);
    if survived {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    assert!(
        !survived,
        "the agent's background child {pid} outlived a killed doxascope"
    );
}
