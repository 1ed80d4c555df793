//! The Python emitter (`clients/python/doxascope_emit.py`): the example agent's output
//! validates and contains every event kind; the emitter is thread-safe over a Unix socket
//! and TCP, and rejects values the format forbids. Skipped, with a message, without python3.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use doxascope::trace::{Item, Kind, Reader, ReaderConfig};

fn python() -> Option<Command> {
    let ok = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("python3 not found: skipping the Python emitter test");
        return None;
    }
    Some(Command::new("python3"))
}

fn client_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("clients/python")
}

/// Reads a trace; panics on any problem. Returns (kind, seq, session) per event.
fn read(bytes: &[u8]) -> Vec<(String, u64, String)> {
    let mut r = Reader::new("py", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(bytes, &mut items);
    r.finish(&mut items);
    items
        .into_iter()
        .map(|it| match it {
            Item::Event(e) => (e.kind_name().to_string(), e.seq, e.session.to_string()),
            Item::Problem(p) => panic!("problem in the Python output: {p:?}"),
        })
        .collect()
}

#[test]
fn example_agent_output_validates_and_has_every_kind() {
    let Some(mut py) = python() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("example.jsonl");
    let st = py
        .arg(client_dir().join("example_agent.py"))
        .arg("--out")
        .arg(&out)
        .status()
        .expect("run python3");
    assert!(st.success());
    let v = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("validate")
        .arg(&out)
        .output()
        .expect("run validate");
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(v.status.success(), "{text}");
    assert!(text.contains("0 errors, 0 warnings"), "{text}");
    let events = read(&std::fs::read(&out).expect("read"));
    for k in Kind::ALL {
        assert!(
            events.iter().any(|(kind, _, _)| kind == k.as_str()),
            "the example never emits {k}"
        );
    }
    assert_eq!(events[0].0, "session");
    let seqs: Vec<u64> = events.iter().map(|e| e.1).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
}

/// Eight threads share one emitter: every line arrives whole, `seq` is 1..=N in line order.
const THREADS_SCRIPT: &str = r#"
import sys, threading
sys.path.insert(0, sys.argv[1])
from doxascope_emit import Emitter
em = Emitter(sys.argv[2], session="threads")
def work(t):
    for i in range(100):
        em.announce("p%d_%d -> q" % (t, i), id="b%d_%d" % (t, i), text="é" * (i % 7))
ts = [threading.Thread(target=work, args=(t,)) for t in range(8)]
for t in ts: t.start()
for t in ts: t.join()
em.close()
"#;

fn check_threads(bytes: &[u8]) {
    let events = read(bytes);
    assert_eq!(events.len(), 800);
    for (i, (kind, seq, session)) in events.iter().enumerate() {
        assert_eq!(kind, "announce");
        assert_eq!(*seq, i as u64 + 1);
        assert_eq!(session, "threads");
    }
}

#[cfg(unix)]
#[test]
fn shared_emitter_over_a_unix_socket() {
    use std::os::unix::net::UnixListener;
    let Some(mut py) = python() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dx.sock");
    let listener = UnixListener::bind(&path).expect("bind");
    let mut child = py
        .arg("-c")
        .arg(THREADS_SCRIPT)
        .arg(client_dir())
        .arg(format!("unix:{}", path.display()))
        .spawn()
        .expect("python3");
    let (mut conn, _) = listener.accept().expect("accept");
    let mut bytes = Vec::new();
    conn.read_to_end(&mut bytes).expect("read");
    assert!(child.wait().expect("wait").success());
    check_threads(&bytes);
}

#[test]
fn shared_emitter_over_tcp_and_to_a_file() {
    use std::net::TcpListener;
    let Some(mut py) = python() else { return };
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mut child = py
        .arg("-c")
        .arg(THREADS_SCRIPT)
        .arg(client_dir())
        .arg(format!("tcp:127.0.0.1:{port}"))
        .spawn()
        .expect("python3");
    let (mut conn, _) = listener.accept().expect("accept");
    let mut bytes = Vec::new();
    conn.read_to_end(&mut bytes).expect("read");
    assert!(child.wait().expect("wait").success());
    check_threads(&bytes);

    let Some(mut py) = python() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("t.jsonl");
    let st = py
        .arg("-c")
        .arg(THREADS_SCRIPT)
        .arg(client_dir())
        .arg(&file)
        .status()
        .expect("python3");
    assert!(st.success());
    check_threads(&std::fs::read(&file).expect("read"));
}

#[test]
fn forbidden_values_raise_before_anything_is_written() {
    let Some(mut py) = python() else { return };
    let script = r#"
import io, sys
sys.path.insert(0, sys.argv[1])
from doxascope_emit import Emitter, EmitError
buf = io.StringIO()
em = Emitter(buf)
bad = [
    lambda: em.announce("p", role="boss"),
    lambda: em.announce("p", confidence=1.5),
    lambda: em.retract("p", by="nobody"),
    lambda: em.verify("p", outcome="maybe"),
    lambda: em.verify(),
    lambda: em.query("p", answer="YES"),
    lambda: em.turn(reply="yes"),
    lambda: em.step("p1", "S1", status="running"),
    lambda: em.plan("p1", steps=[{"kind": "fetch"}]),
    lambda: em.postcondition("p1", "S1", tier=4),
    lambda: em.review([{"plan": "p1", "action": "burn"}]),
    lambda: em.intention("i1", files="data.csv"),
    lambda: em.plan("p1", steps=[{"id": "S1", "compute": 3}]),
    lambda: em.step("p1", "S1", tool_calls=[{"args": {}}]),
    lambda: em.step("p1", "S1", inputs=[1, 2]),
    lambda: em.satisfaction("i1", True, correct="yes"),
    lambda: em.announce("p", confidence=float("nan")),
    lambda: em.emit(""),
]
for i, f in enumerate(bad):
    try:
        f()
    except ValueError:
        continue
    sys.exit("case %d did not raise" % i)
assert buf.getvalue() == "", buf.getvalue()
em.announce("p", id="ok")
assert buf.getvalue().count("\n") == 1
em.close()
# A closed emitter raises EmitError, or counts the drop when asked to.
try:
    em.log("late")
    sys.exit("writing after close did not raise")
except EmitError:
    pass
quiet = Emitter(io.StringIO(), errors="count")
quiet.close()
quiet.log("late")
assert quiet.dropped == 1
"#;
    let out = py
        .arg("-c")
        .arg(script)
        .arg(client_dir())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A run written with the emitter's failure-taxonomy fields (files, tool calls, a computation,
/// the expected answer, a recorded failure mode) reads clean, and the audit finds what the
/// fields describe.
#[test]
fn failure_taxonomy_fields_reach_the_audit() {
    let Some(mut py) = python() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("gaia.jsonl");
    let script = r#"
import sys
sys.path.insert(0, sys.argv[1])
from doxascope_emit import Emitter
with Emitter(sys.argv[2], session="gaia-7") as em:
    em.intention("int-1", type="sum_from_file", satisfaction="ground_belief(final_answer) is known",
                 files=["menu_sales.xlsx"])
    em.plan("p1", steps=[
        {"id": "S1", "kind": "fetch", "post": "ground_belief(total) is known"},
        {"id": "S2", "kind": "compute", "deps": ["S1"], "compute": "round(total / 1000, 1)",
         "output": "thousands"},
        {"id": "S3", "kind": "synthesize", "deps": ["S2"]}])
    em.step("p1", "S1", status="done", tool_calls=[{"tool": "web_search", "args": {"q": "sales"}}],
            new_beliefs=[{"name": "total", "value": 2450000, "source": "web_search"}])
    em.step("p1", "S2", status="done", new_beliefs=[{"name": "thousands", "value": "245.0"}])
    em.step("p1", "S3", status="done", summary="FINAL ANSWER: 245.0")
    em.satisfaction("int-1", ok=True, expected_answer="89.7", correct=False,
                    failure_mode="incorrect_computation")
"#;
    let st = py
        .arg("-c")
        .arg(script)
        .arg(client_dir())
        .arg(&out)
        .status()
        .expect("python3");
    assert!(st.success());
    let v = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["validate"])
        .arg(&out)
        .output()
        .expect("validate");
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    let a = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", "--json"])
        .arg(&out)
        .output()
        .expect("audit");
    let j: serde_json::Value = serde_json::from_slice(&a.stdout).expect("json");
    let codes: Vec<&str> = j["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    // 2450000 / 1000 is 2450, not 245.0; the file was never read; the harness's label names
    // only one of the two.
    assert!(codes.contains(&"incorrect-computation"), "{codes:?}");
    assert!(codes.contains(&"file-read-avoided"), "{codes:?}");
    let rec = j["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["code"] == "failure-mode-recorded")
        .expect("the recorded mode is surfaced");
    assert_eq!(rec["evidence"]["verdict"], "agree");
}
