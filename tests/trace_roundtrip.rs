//! Every kind survives serialize -> parse unchanged, unknown fields included; contract
//! defaults are materialized when a line is read.

use doxascope::trace::event::{Outcome, Role};
use doxascope::trace::{Body, Event, Item, Kind, Reader, ReaderConfig};
use serde_json::{Value, json};

/// One line per kind with every field the contract names set, plus an unknown field.
fn full_lines() -> Vec<Value> {
    let env = |kind: &str, seq: u64| {
        json!({"kind": kind, "seq": seq, "ts": "2026-02-03T04:05:06.789+01:00",
               "session": "rt", "x_unknown": {"kept": [1, "two", null]}})
    };
    let with = |kind: &str, seq: u64, body: Value| {
        let mut v = env(kind, seq);
        if let (Some(m), Value::Object(b)) = (v.as_object_mut(), body) {
            m.extend(b);
        }
        v
    };
    vec![
        with(
            "session",
            1,
            json!({"agent": "a", "model": "m", "meta": {"k": 1}}),
        ),
        with(
            "announce",
            2,
            json!({"id": "b1", "formula": "∀x. Parent(x, bob) → Older(x, bob)",
            "source": "tool:ping_test", "role": "norm", "confidence": 0.25,
            "because": ["b0"], "text": "naïve \"quoted\" text"}),
        ),
        with(
            "retract",
            3,
            json!({"target": "b1", "reason": "r", "by": "revision"}),
        ),
        with(
            "verify",
            4,
            json!({"formula": "p", "formulas": ["q", "r"], "outcome": "ungrounded",
            "because": ["b1"], "method": "sat", "tier": 2, "detail": {"core": ["b1"]}}),
        ),
        with(
            "revise",
            5,
            json!({"trigger": "!p", "retracted": ["b1", "b2"], "policy": "greedy"}),
        ),
        with("query", 6, json!({"formula": "p | q", "answer": "unknown"})),
        with("answer", 7, json!({"text": "yes", "formula": "p"})),
        with(
            "thought",
            8,
            json!({"text": "so", "asserts": ["p", "q -> r"]}),
        ),
        with(
            "world",
            9,
            json!({"atoms": ["p", "q"], "rules": ["p -> q"],
            "truth": {"p": true, "q": false}}),
        ),
        with(
            "turn",
            10,
            json!({"question": "p?", "reply": "UNKNOWN", "literal": "!p",
            "truth": false}),
        ),
        with(
            "belief",
            11,
            json!({"name": "t", "value": {"h": 2, "m": 1}, "unit": "h:m",
            "source": "tool:search"}),
        ),
        with("schema_belief", 12, json!({"text": "times are h:mm:ss"})),
        with("desire", 13, json!({"text": "answer"})),
        with(
            "intention",
            14,
            json!({"id": "I1", "type": "answer_question", "goal": "g",
            "satisfaction": "ground_belief(x) is known", "open_parameters": ["runner"]}),
        ),
        with(
            "plan",
            15,
            json!({"id": "P1", "intention_type": "answer_question",
            "context_conditions": ["online"], "origin": "library",
            "steps": [{"id": "S1", "kind": "fetch", "description": "d",
                       "post": "ground_belief(x) is known", "x_step": 1},
                      {"id": "S2", "kind": "verify_by_hand", "deps": ["S1"]}]}),
        ),
        with(
            "step",
            16,
            json!({"plan": "P1", "step": "S1", "status": "done", "post_met": true,
            "new_beliefs": [{"name": "x", "value": 3, "x_nested": true}], "summary": "s"}),
        ),
        with(
            "postcondition",
            17,
            json!({"plan": "P1", "step": "S1", "tier": 1, "ok": false,
            "failure_mode": "missing", "program": "ground_belief(x) is known",
            "detail": "not found"}),
        ),
        with("satisfaction", 18, json!({"intention": "I1", "ok": true})),
        with(
            "review",
            19,
            json!({"decisions": [{"plan": "P1", "action": "refine",
            "note": "n", "x_d": 0}]}),
        ),
        with(
            "plan_stats",
            20,
            json!({"plan": "P1", "use_count": 3, "success_count": 2,
            "failure_count": 1}),
        ),
        with("log", 21, json!({"level": "info", "message": "m"})),
        with(
            "score",
            22,
            json!({"name": "accuracy", "value": 0.75, "label": "good",
            "explanation": "e", "target": "a1", "source": "llm"}),
        ),
        with("score", 23, json!({"name": "correct", "value": "C"})),
        with("score", 24, json!({"name": "passed", "value": false})),
        with(
            "gate",
            25,
            json!({"id": "q1", "formula": "p -> q", "because": ["b1"]}),
        ),
        with("some_future_kind", 26, json!({"anything": [1, 2]})),
    ]
}

fn parse_all(text: &str) -> Vec<Event> {
    let mut r = Reader::new("rt.jsonl", ReaderConfig::default());
    let mut out = Vec::new();
    r.feed(text.as_bytes(), &mut out);
    r.finish(&mut out);
    out.into_iter()
        .map(|i| match i {
            Item::Event(e) => e,
            Item::Problem(p) => panic!("unexpected problem: {p:?}"),
        })
        .collect()
}

#[test]
fn every_kind_round_trips_with_unknown_fields() {
    let lines = full_lines();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["kind"].as_str()).collect();
    for k in Kind::ALL {
        assert!(kinds.contains(&k.as_str()), "no round-trip line for {k}");
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let first = parse_all(&text);
    assert_eq!(first.len(), lines.len());
    for (ev, line) in first.iter().zip(&lines) {
        // Nothing in the original line is lost: every field appears in the re-serialized form
        // with the same value.
        let back: Value = serde_json::from_str(&ev.to_json_line()).expect("our output is JSON");
        for (k, v) in line.as_object().expect("object") {
            let got = &back[k];
            let same = match (got.as_f64(), v.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => got == v,
            };
            assert!(same, "{}: field {k}: {got} != {v}", ev.kind_name());
        }
        assert_eq!(
            ev.extra.value("x_unknown"),
            Some(json!({"kept": [1, "two", null]}))
        );
    }
    let again_text: String = first.iter().map(|e| e.to_json_line() + "\n").collect();
    let second = parse_all(&again_text);
    assert_eq!(first, second);
}

#[test]
fn contract_defaults_are_materialized() {
    let evs = parse_all(
        "{\"kind\":\"announce\",\"formula\":\"p\"}\n\n{\"kind\":\"verify\",\"formula\":\"p\"}\n",
    );
    let Body::Announce(a) = &evs[0].body else {
        panic!("announce expected")
    };
    assert_eq!(a.role, Role::Fact);
    assert_eq!(a.confidence, 1.0);
    assert_eq!(evs[0].v, 1);
    assert_eq!(evs[0].seq, 1, "seq defaults to the line number");
    assert_eq!(evs[1].seq, 3);
    assert_eq!(
        &*evs[0].session, "rt.jsonl",
        "session defaults to the file name"
    );
    assert!(!evs[0].seq_given && !evs[0].session_given && !evs[0].v_given);
    let Body::Verify(v) = &evs[1].body else {
        panic!("verify expected")
    };
    assert_eq!(v.outcome, None::<Outcome>);
    // Defaults that depend on the reading context are not written back.
    let line: Value = serde_json::from_str(&evs[0].to_json_line()).expect("json");
    assert!(line.get("seq").is_none() && line.get("session").is_none());
    assert_eq!(line["role"], "fact");
}

#[test]
fn session_defaults_to_the_last_path_component() {
    let mut r = Reader::new("/var/log/agents/run-7.jsonl", ReaderConfig::default());
    let mut out = Vec::new();
    r.feed(b"{\"kind\":\"log\"}", &mut out);
    r.finish(&mut out);
    let Some(Item::Event(e)) = out.first() else {
        panic!("one event expected: {out:?}")
    };
    assert_eq!(&*e.session, "run-7.jsonl");
    assert_eq!(&*e.origin.file, "/var/log/agents/run-7.jsonl");
}

#[test]
fn timestamps_order_across_offsets_and_unix_seconds() {
    let evs = parse_all(concat!(
        "{\"kind\":\"log\",\"ts\":\"2026-02-03T04:05:06+01:00\"}\n",
        "{\"kind\":\"log\",\"ts\":1770087906}\n",
    ));
    let a = evs[0].ts.as_ref().expect("ts").unix_seconds;
    let b = evs[1].ts.as_ref().expect("ts").unix_seconds;
    assert_eq!(a, b, "the same instant in two spellings");
}
