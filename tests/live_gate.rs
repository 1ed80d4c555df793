//! The live gate over a real socket: the Python emitter (`clients/python/doxascope_emit.py`)
//! announces beliefs to a hub that answers gates with [`ReplGate`], asks `gate(φ)` and gets
//! Θ(Σ, φ) on the session's Σ at that moment, with a minimal conflict and every minimal
//! repair, on the same connection. The consumer (the TUI) is handed each gate followed by
//! the verification it asked for.

use std::collections::BTreeSet;
use std::time::Duration;

use doxascope::repl::gate::ReplGate;
use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
use doxascope::trace::{Body, Item};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::Receiver;

fn gated_config() -> LiveConfig {
    LiveConfig {
        gatekeeper: Some(ReplGate::factory()),
        ..LiveConfig::default()
    }
}

async fn tcp_hub(cfg: LiveConfig) -> (Receiver<LiveEvent>, doxascope::trace::live::Listener, u16) {
    let (live, rx) = Live::new(cfg);
    let listener = live
        .listen(&"tcp:127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let ListenAddr::Tcp(addr) = listener.local_addr().clone() else {
        panic!()
    };
    (rx, listener, addr.port())
}

/// `gate:ID` and `verify:METHOD:OUTCOME` for what the consumer is handed, up to `Closed`.
async fn consumed(rx: &mut Receiver<LiveEvent>) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("a live event in time")
            .expect("the hub is up");
        match ev {
            LiveEvent::Items { items, .. } => {
                for it in items {
                    let Item::Event(e) = it else { continue };
                    match &e.body {
                        Body::Gate(_) => {
                            out.push(format!("gate:{}", e.id.as_deref().unwrap_or("-")))
                        }
                        Body::Verify(v) => out.push(format!(
                            "verify:{}:{:?}",
                            v.method.as_deref().unwrap_or("-"),
                            v.outcome
                        )),
                        _ => {}
                    }
                }
            }
            LiveEvent::Closed { .. } => return out,
            _ => {}
        }
    }
}

const AGENT: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[2])
from doxascope_emit import Emitter
out = {}
with Emitter("tcp:127.0.0.1:" + sys.argv[1], session="hunt") as em:
    em.announce("(treasure_in_a | treasure_in_b) & !(treasure_in_a & treasure_in_b)",
                id="t1-domain", role="assumption", source="user")
    em.announce("treasure_in_b", id="t2-map-b", source="tool:ask_map", confidence=0.95)
    out["a"] = em.gate("treasure_in_a", id="q1")
    out["not_a"] = em.gate("!treasure_in_a", id="q2")
    out["c"] = em.gate("treasure_in_c")
    out["cited"] = em.gate("!treasure_in_a", id="q3", because=["t2-map-b"])
    out["bad"] = em.gate("((", id="q4")
    em.retract("t2-map-b", reason="the map was old", by="agent")
    out["a_after"] = em.gate("treasure_in_a", id="q5")
print(json.dumps(out))
"#;

fn ids(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_emitter_gates_over_a_socket() {
    let (mut rx, _listener, port) = tcp_hub(gated_config()).await;
    let clients = concat!(env!("CARGO_MANIFEST_DIR"), "/clients/python");
    let agent = tokio::process::Command::new("python3")
        .args(["-c", AGENT, &port.to_string(), clients])
        .output();
    let (agent, seen) = tokio::join!(agent, consumed(&mut rx));
    let agent = agent.expect("python3 runs");
    assert!(
        agent.status.success(),
        "the agent failed: {}",
        String::from_utf8_lossy(&agent.stderr)
    );
    let r: Value = serde_json::from_slice(&agent.stdout).expect("the agent prints JSON");

    // Domain + map: A contradicts them; either one given up makes room for A.
    assert_eq!(r["a"]["reply_to"], "q1");
    assert_eq!(r["a"]["outcome"], "contradiction");
    assert_eq!(
        ids(&r["a"]["conflict"]),
        ["t1-domain", "t2-map-b"].map(String::from).into()
    );
    let repairs: BTreeSet<BTreeSet<String>> = r["a"]["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(ids)
        .collect();
    assert_eq!(
        repairs,
        [
            BTreeSet::from(["t1-domain".to_string()]),
            BTreeSet::from(["t2-map-b".to_string()])
        ]
        .into()
    );
    assert_eq!(r["not_a"]["outcome"], "entailed");
    assert_eq!(r["not_a"]["conflict"], serde_json::json!([]));
    assert_eq!(r["not_a"]["repairs"], serde_json::json!([]));
    assert_eq!(r["c"]["outcome"], "newinfo");
    assert_eq!(r["c"]["reply_to"], "gate-1");
    // The map alone does not entail ¬A without the domain constraint.
    assert_eq!(r["cited"]["outcome"], "ungrounded");
    assert_eq!(r["bad"]["reply_to"], "q4");
    assert!(
        r["bad"]["error"].as_str().unwrap().contains("column"),
        "{}",
        r["bad"]
    );
    // Σ at that moment: the map is gone, so A is new information now.
    assert_eq!(r["a_after"]["outcome"], "newinfo");

    assert_eq!(
        seen,
        [
            "gate:q1",
            "verify:gate:Some(Contradiction)",
            "gate:q2",
            "verify:gate:Some(Entailed)",
            "gate:gate-1",
            "verify:gate:Some(Newinfo)",
            "gate:q3",
            "verify:gate:Some(Ungrounded)",
            "gate:q4",
            "gate:q5",
            "verify:gate:Some(Newinfo)",
        ]
    );
}

#[tokio::test]
async fn without_a_gatekeeper_a_gate_is_shown_and_not_answered() {
    let (mut rx, _listener, port) = tcp_hub(LiveConfig::default()).await;
    let mut c = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    c.write_all(b"{\"kind\":\"gate\",\"id\":\"q1\",\"formula\":\"p\"}\n")
        .await
        .unwrap();
    c.shutdown().await.unwrap();
    let mut reply = String::new();
    let n = BufReader::new(&mut c).read_line(&mut reply).await.unwrap();
    assert_eq!(n, 0, "no reply expected: {reply}");
    assert_eq!(consumed(&mut rx).await, ["gate:q1"]);
}
