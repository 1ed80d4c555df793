//! The OTLP/HTTP receiver (`--listen otlp:...`) at the protocol level: what it answers to
//! protobuf and JSON (gzip too), to malformed, oversized, misrouted and too frequent
//! requests, and that a trace sent over several requests is one live session that ends once
//! its root span is in. The requests are written by hand here on purpose (each edge case
//! exactly); the real OpenTelemetry SDK is driven in `tests/otlp_python.rs`.

use std::io::Write as _;
use std::time::Duration;

use doxascope::trace::live::{CloseReason, ListenAddr, Live, LiveConfig, LiveEvent, Peer};
use doxascope::trace::{Item, Kind};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc::Receiver;

fn kv(k: &str, v: &str) -> KeyValue {
    KeyValue {
        key: k.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(v.into())),
        }),
        ..Default::default()
    }
}

fn span(trace: u8, id: u8, parent: Option<u8>, name: &str, attrs: Vec<KeyValue>) -> Span {
    Span {
        trace_id: [[0u8; 15].as_slice(), &[trace]].concat(),
        span_id: [[0u8; 7].as_slice(), &[id]].concat(),
        parent_span_id: parent.map_or(Vec::new(), |p| [[0u8; 7].as_slice(), &[p]].concat()),
        name: name.into(),
        start_time_unix_nano: 1_767_225_600_000_000_000 + u64::from(id) * 1000,
        end_time_unix_nano: 1_767_225_600_000_000_000 + u64::from(id) * 1000 + 500,
        attributes: attrs,
        ..Default::default()
    }
}

fn request(spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![kv("service.name", "svc")],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

fn tool(trace: u8, id: u8) -> Span {
    span(
        trace,
        id,
        Some(1),
        "execute_tool search",
        vec![
            kv("gen_ai.operation.name", "execute_tool"),
            kv("gen_ai.tool.name", "search"),
        ],
    )
}

fn agent(trace: u8) -> Span {
    span(
        trace,
        1,
        None,
        "invoke_agent a",
        vec![
            kv("gen_ai.operation.name", "invoke_agent"),
            kv("gen_ai.agent.name", "a"),
        ],
    )
}

async fn hub(
    cfg: LiveConfig,
) -> (
    Live,
    Receiver<LiveEvent>,
    doxascope::trace::live::Listener,
    String,
) {
    let (live, rx) = Live::new(cfg);
    let addr: ListenAddr = "otlp:127.0.0.1:0".parse().expect("addr");
    let l = live.listen(&addr).await.expect("listen");
    let ListenAddr::Otlp(a) = l.local_addr().clone() else {
        panic!("not otlp")
    };
    (live, rx, l, a.to_string())
}

/// One HTTP/1.1 exchange on an open connection: (status, headers, body).
async fn exchange(
    conn: &mut tokio::net::TcpStream,
    head: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let req = format!(
        "{head}\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    conn.write_all(req.as_bytes()).await.expect("write");
    conn.write_all(body).await.expect("write body");
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut tmp))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(
            n > 0,
            "connection closed: {}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let headers = String::from_utf8_lossy(&buf[..i]).to_string();
            let len: usize = headers
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0);
            if buf.len() >= i + 4 + len {
                let status = headers[9..12].parse().expect("status");
                return (status, headers, buf[i + 4..i + 4 + len].to_vec());
            }
        }
    }
}

/// Events of the hub until `pred` holds on what was gathered (kinds per session).
async fn gather(
    rx: &mut Receiver<LiveEvent>,
    until: impl Fn(&[LiveEvent]) -> bool,
) -> Vec<LiveEvent> {
    let mut got = Vec::new();
    while !until(&got) {
        let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out; so far: {got:#?}"))
            .expect("hub alive");
        got.push(ev);
    }
    got
}

fn kinds(evs: &[LiveEvent]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match e {
            LiveEvent::Items { items, .. } => Some(items),
            _ => None,
        })
        .flatten()
        .map(|it| match it {
            Item::Event(e) => e.kind_name().to_string(),
            Item::Problem(p) => panic!("bad line from the receiver: {p:?}"),
        })
        .collect()
}

#[tokio::test]
async fn protobuf_and_gzip_json_requests_become_one_session_per_trace() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig::default()).await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    // Trace 7 in two requests: the tool span first (protobuf), the agent root later (JSON).
    let body = request(vec![tool(7, 2)]).encode_to_vec();
    let (status, headers, resp) = exchange(
        &mut conn,
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf",
        &body,
    )
    .await;
    assert_eq!(status, 200, "{headers}");
    assert!(
        headers
            .to_ascii_lowercase()
            .contains("content-type: application/x-protobuf")
    );
    let r = ExportTraceServiceResponse::decode(&resp[..]).expect("a response message");
    assert_eq!(r.partial_success, None);
    let json = serde_json::json!({"resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
    "scopeSpans": [{"spans": [{
        "traceId": "00000000000000000000000000000007", "spanId": "0000000000000001",
        "parentSpanId": "", "name": "invoke_agent a",
        "startTimeUnixNano": "1767225600000001000", "endTimeUnixNano": "1767225600000009000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": "a"}}
        ]}]}]}]});
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(json.to_string().as_bytes()).expect("gzip");
    let body = gz.finish().expect("gzip");
    let (status, _, resp) = exchange(
        &mut conn,
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\nContent-Encoding: gzip",
        &body,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(resp, b"{}");
    // One session: opened, named, its events, and ended once the root is in (grace 2 s).
    let evs = gather(&mut rx, |g| {
        g.iter().any(|e| matches!(e, LiveEvent::Closed { .. }))
    })
    .await;
    let opened: Vec<&LiveEvent> = evs
        .iter()
        .filter(|e| matches!(e, LiveEvent::Opened { .. }))
        .collect();
    assert_eq!(opened.len(), 1, "{evs:#?}");
    assert!(matches!(
        opened[0],
        LiveEvent::Opened {
            peer: Peer::Otlp(_),
            ..
        }
    ));
    assert!(
        evs.iter()
            .any(|e| matches!(e, LiveEvent::Named { name, .. } if name == "svc 0000000000000007"))
    );
    assert_eq!(kinds(&evs), ["session", "tool_call", "intention"]);
    assert!(evs.iter().any(|e| matches!(
        e,
        LiveEvent::Closed {
            reason: CloseReason::Eof,
            ..
        }
    )));
}

#[tokio::test]
async fn bad_requests_get_4xx_and_the_receiver_goes_on() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        otlp_max_body: 1000,
        ..LiveConfig::default()
    })
    .await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let proto = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf";
    // Not protobuf: 400 with a google.rpc.Status (field 2: the message).
    let (status, _, body) = exchange(&mut conn, proto, b"\xff\xff\xff\xff garbage").await;
    assert_eq!(status, 400);
    assert!(
        String::from_utf8_lossy(&body).contains("protobuf"),
        "{body:?}"
    );
    let json = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json";
    let (status, _, body) = exchange(&mut conn, json, b"{\"resourceSpans\": 5}").await;
    assert_eq!(status, 400);
    assert!(
        String::from_utf8_lossy(&body).contains("\"code\":3"),
        "{body:?}"
    );
    let (status, _, _) = exchange(&mut conn, json, b"{\"something\": 1}").await;
    assert_eq!(status, 400);
    let (status, _, _) = exchange(&mut conn, proto, &vec![0u8; 2000]).await;
    assert_eq!(status, 413);
    // A body past the bound is not read to its end: that connection is closed.
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\nContent-Encoding: br",
        b"{}",
    )
    .await;
    assert_eq!(status, 415);
    let (status, _, _) = exchange(&mut conn, "POST /v1/metrics HTTP/1.1", b"").await;
    assert_eq!(status, 404);
    let (status, headers, _) = exchange(&mut conn, "GET /v1/traces HTTP/1.1", b"").await;
    assert_eq!(status, 405);
    assert!(headers.to_ascii_lowercase().contains("allow: post"));
    // The same connection still takes a good request.
    let body = request(vec![agent(9)]).encode_to_vec();
    let (status, _, _) = exchange(&mut conn, proto, &body).await;
    assert_eq!(status, 200);
    let evs = gather(&mut rx, |g| kinds(g).len() >= 2).await;
    let refused = evs
        .iter()
        .filter(|e| matches!(e, LiveEvent::Rejected { .. }))
        .count();
    assert_eq!(refused, 7, "{evs:#?}");
    assert_eq!(kinds(&evs), ["session", "intention"]);
}

#[tokio::test]
async fn gzip_bombs_are_refused_at_the_decoded_bound() {
    let (_live, _rx, _l, addr) = hub(LiveConfig {
        otlp_max_decoded: 100_000,
        ..LiveConfig::default()
    })
    .await;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![b' '; 10_000_000]).expect("gzip");
    let bomb = gz.finish().expect("gzip");
    assert!(bomb.len() < 20_000);
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\nContent-Encoding: gzip",
        &bomb,
    )
    .await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn past_the_request_rate_the_answer_is_429_with_retry_after() {
    let (_live, _rx, _l, addr) = hub(LiveConfig {
        otlp_requests_per_sec: 1,
        ..LiveConfig::default()
    })
    .await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let proto = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf";
    let body = request(vec![]).encode_to_vec();
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let (status, headers, _) = exchange(&mut conn, proto, &body).await;
        if status == 429 {
            assert!(headers.to_ascii_lowercase().contains("retry-after: 1"));
        }
        statuses.push(status);
    }
    // A burst of two, then refused until a token comes back.
    assert_eq!(statuses, [200, 200, 429, 429]);
}

#[tokio::test]
async fn a_session_closed_by_the_limits_makes_a_partial_success() {
    // No spool directory and room for one event: the session is closed past it, and the
    // spans of its trace are reported as rejected, not silently dropped.
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        max_held_events: 1,
        ..LiveConfig::default()
    })
    .await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let proto = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf";
    let body = request((2..40).map(|i| tool(3, i)).collect()).encode_to_vec();
    let (status, _, _) = exchange(&mut conn, proto, &body).await;
    assert_eq!(status, 200);
    gather(&mut rx, |g| {
        g.iter().any(|e| {
            matches!(
                e,
                LiveEvent::Closed {
                    reason: CloseReason::MemoryLimit,
                    ..
                }
            )
        })
    })
    .await;
    let (status, _, resp) = exchange(
        &mut conn,
        proto,
        &request(vec![tool(3, 50)]).encode_to_vec(),
    )
    .await;
    assert_eq!(status, 200);
    let r = ExportTraceServiceResponse::decode(&resp[..]).expect("response");
    let p = r.partial_success.expect("a partial success");
    assert_eq!(p.rejected_spans, 1);
    assert!(p.error_message.contains("closed"), "{}", p.error_message);
}

#[test]
fn otlp_addresses_default_to_loopback_and_take_what_is_written() {
    let a: ListenAddr = "otlp:".parse().expect("parse");
    assert_eq!(a.to_string(), "otlp:127.0.0.1:4318");
    let a: ListenAddr = "otlp:4319".parse().expect("parse");
    assert_eq!(a.to_string(), "otlp:127.0.0.1:4319");
    let a: ListenAddr = "otlp:localhost:9".parse().expect("parse");
    assert_eq!(a.to_string(), "otlp:127.0.0.1:9");
    // Written out, another address is taken (a Collector on another machine sends here).
    let a: ListenAddr = "otlp:0.0.0.0:4318".parse().expect("parse");
    assert_eq!(a.to_string(), "otlp:0.0.0.0:4318");
    assert!("otlp:nowhere".parse::<ListenAddr>().is_err());
    // The JSONL socket stays loopback-only.
    assert!("tcp:0.0.0.0:1".parse::<ListenAddr>().is_err());
    let _ = Kind::ALL;
}

/// Spans and log records per session name, as the hub delivered them.
fn by_session(evs: &[LiveEvent]) -> std::collections::BTreeMap<String, Vec<serde_json::Value>> {
    let mut names = std::collections::HashMap::new();
    let mut out = std::collections::BTreeMap::<String, Vec<serde_json::Value>>::new();
    for e in evs {
        match e {
            LiveEvent::Opened { session, name, .. } | LiveEvent::Named { session, name } => {
                names.insert(*session, name.clone());
            }
            LiveEvent::Items { session, items, .. } => {
                for it in items {
                    let Item::Event(ev) = it else {
                        panic!("bad line from the receiver: {it:?}")
                    };
                    let v = serde_json::from_str(&ev.to_json_line()).expect("json");
                    out.entry(names.get(session).cloned().unwrap_or_default())
                        .or_default()
                        .push(v);
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test]
async fn log_records_over_v1_logs_join_the_session_of_their_trace() {
    use opentelemetry_proto::tonic::collector::logs::v1::{
        ExportLogsServiceRequest, ExportLogsServiceResponse,
    };
    use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
    let (_live, mut rx, _l, addr) = hub(LiveConfig::default()).await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let proto = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf";
    let (status, _, _) =
        exchange(&mut conn, proto, &request(vec![tool(5, 2)]).encode_to_vec()).await;
    assert_eq!(status, 200);
    // A user message logged inside span 2 of trace 5, by protobuf.
    let user = LogRecord {
        time_unix_nano: 1_767_225_600_000_000_000,
        trace_id: [[0u8; 15].as_slice(), &[5]].concat(),
        span_id: [[0u8; 7].as_slice(), &[2]].concat(),
        event_name: "gen_ai.user.message".into(),
        body: Some(AnyValue {
            value: Some(any_value::Value::KvlistValue(
                opentelemetry_proto::tonic::common::v1::KeyValueList {
                    values: vec![kv("content", "is it raining?")],
                },
            )),
        }),
        ..Default::default()
    };
    let logs = ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource {
                attributes: vec![kv("service.name", "svc")],
                ..Default::default()
            }),
            scope_logs: vec![ScopeLogs {
                log_records: vec![user],
                ..Default::default()
            }],
            ..Default::default()
        }],
    };
    let (status, headers, resp) = exchange(
        &mut conn,
        "POST /v1/logs HTTP/1.1\r\nContent-Type: application/x-protobuf",
        &logs.encode_to_vec(),
    )
    .await;
    assert_eq!(status, 200, "{headers}");
    let r = ExportLogsServiceResponse::decode(&resp[..]).expect("a logs response");
    assert_eq!(r.partial_success, None);
    // An error-level record of the same trace, as gzip'd JSON with a hex trace id.
    let json = serde_json::json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [{
        "traceId": "00000000000000000000000000000005",
        "severityNumber": 17,
        "eventName": "agent.tool_result",
        "body": {"stringValue": "exit status 2"},
    }]}]}]});
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(json.to_string().as_bytes()).expect("gzip");
    let (status, _, resp) = exchange(
        &mut conn,
        "POST /v1/logs HTTP/1.1\r\nContent-Type: application/json\r\nContent-Encoding: gzip",
        &gz.finish().expect("gzip"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(resp, b"{}");
    // A body that is no logs request: refused, and the refusal reaches the viewer.
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/logs HTTP/1.1\r\nContent-Type: application/json",
        b"{\"resourceSpans\": []}",
    )
    .await;
    assert_eq!(status, 400);
    let evs = gather(&mut rx, |g| {
        kinds(g).len() >= 4 && g.iter().any(|e| matches!(e, LiveEvent::Rejected { .. }))
    })
    .await;
    let sessions = by_session(&evs);
    assert_eq!(sessions.len(), 1, "one session for trace 5: {sessions:#?}");
    let evs = sessions.values().next().expect("a session");
    let logs: Vec<_> = evs.iter().filter(|e| e["kind"] == "log").collect();
    assert_eq!(logs.len(), 2, "{evs:#?}");
    assert_eq!(logs[0]["message"], "user: is it raining?");
    assert_eq!(logs[0]["x_event"], "gen_ai.user.message");
    assert_eq!(logs[0]["x_span"], "0000000000000002");
    assert_eq!(logs[1]["level"], "error");
    assert_eq!(logs[1]["message"], "agent.tool_result: exit status 2");
}

#[tokio::test]
async fn a_logs_request_past_the_record_bound_is_refused_with_413() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        otlp_max_spans: 3,
        ..LiveConfig::default()
    })
    .await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let rec = serde_json::json!({"body": {"stringValue": "x"}});
    let json = serde_json::json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [rec, rec, rec, rec]}]}]});
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/logs HTTP/1.1\r\nContent-Type: application/json",
        json.to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 413);
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
    let req = ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            scope_logs: vec![ScopeLogs {
                log_records: vec![LogRecord::default(); 4],
                ..Default::default()
            }],
            ..Default::default()
        }],
    };
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/logs HTTP/1.1\r\nContent-Type: application/x-protobuf",
        &req.encode_to_vec(),
    )
    .await;
    assert_eq!(status, 413);
    let evs = gather(&mut rx, |g| {
        g.iter()
            .filter(|e| matches!(e, LiveEvent::Rejected { .. }))
            .count()
            >= 2
    })
    .await;
    assert!(kinds(&evs).is_empty());
}

/// A trace ended by the open-trace bound shows what its mapping still held, as a trace that
/// ends by itself does: a model call's details record whose span never came, and a score
/// whose model call never came (said).
#[tokio::test]
async fn an_evicted_trace_shows_the_details_and_scores_it_held() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        otlp_max_sessions: 1,
        ..LiveConfig::default()
    })
    .await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let json = serde_json::json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"traceId": "00000000000000000000000000000007", "spanId": "0000000000000009",
         "timeUnixNano": "1767225600000000000",
         "eventName": "gen_ai.client.inference.operation.details",
         "attributes": [{"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
                        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5"}}]},
        {"traceId": "00000000000000000000000000000007", "spanId": "0000000000000001",
         "timeUnixNano": "1767225600000000001",
         "eventName": "gen_ai.evaluation.result",
         "attributes": [{"key": "gen_ai.evaluation.name", "value": {"stringValue": "judge"}},
                        {"key": "gen_ai.response.id", "value": {"stringValue": "r-x"}}]}
    ]}]}]});
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/logs HTTP/1.1\r\nContent-Type: application/json",
        json.to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 200);
    // Another trace: the first one is ended to make room.
    let proto = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf";
    let (status, _, _) =
        exchange(&mut conn, proto, &request(vec![tool(8, 2)]).encode_to_vec()).await;
    assert_eq!(status, 200);
    let evs = gather(&mut rx, |g| {
        let k = kinds(g);
        k.iter().any(|k| k == "llm_call") && k.iter().any(|k| k == "score")
    })
    .await;
    let sessions = by_session(&evs);
    let first = sessions
        .iter()
        .find(|(n, _)| n.ends_with("0000000000000007"))
        .map(|(_, e)| e)
        .unwrap_or_else(|| panic!("{sessions:#?}"));
    let call = first
        .iter()
        .find(|e| e["kind"] == "llm_call")
        .expect("call");
    assert_eq!(call["input_tokens"], 5);
    let score = first.iter().find(|e| e["kind"] == "score").expect("score");
    assert_eq!(score["name"], "judge");
    assert!(
        first
            .iter()
            .any(|e| e["kind"] == "log" && e["message"].as_str().unwrap_or("").contains("r-x")),
        "{first:#?}"
    );
}

/// Phoenix's span-annotation route: an annotation of a span the receiver was sent is a score
/// on that span's event in its trace's session; a request that is not JSON, or whose item is
/// wrong, is refused with the reason, and the refusal reaches the viewer.
#[tokio::test]
async fn span_annotations_score_their_spans_and_bad_ones_are_refused() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig::default()).await;
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let proto = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf";
    let (status, _, _) =
        exchange(&mut conn, proto, &request(vec![tool(5, 2)]).encode_to_vec()).await;
    assert_eq!(status, 200);
    let route = "POST /v1/span_annotations?sync=true HTTP/1.1\r\nContent-Type: application/json";
    let good = serde_json::json!({"data": [{"span_id": "0000000000000002", "name": "tool_ok",
        "annotator_kind": "HUMAN", "result": {"label": "wrong", "explanation": "bad args"}}]});
    let (status, _, body) = exchange(&mut conn, route, good.to_string().as_bytes()).await;
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["data"].as_array().map(Vec::len), Some(1), "{v}");
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/span_annotations HTTP/1.1\r\nContent-Type: application/x-protobuf",
        b"\x0a\x00",
    )
    .await;
    assert_eq!(status, 415);
    let bad = serde_json::json!({"data": [{"span_id": "2", "name": "n",
        "annotator_kind": "HUMAN", "result": {"label": "ok"}}]});
    let (status, _, body) = exchange(&mut conn, route, bad.to_string().as_bytes()).await;
    assert_eq!(status, 422, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("span_id"));
    let evs = gather(&mut rx, |g| {
        kinds(g).iter().any(|k| k == "score")
            && g.iter()
                .filter(|e| matches!(e, LiveEvent::Rejected { .. }))
                .count()
                >= 2
    })
    .await;
    let sessions = by_session(&evs);
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    let evs = sessions.values().next().expect("a session");
    let score = evs.iter().find(|e| e["kind"] == "score").expect("score");
    assert_eq!(score["target"], "0000000000000002");
    assert_eq!(score["source"], "human");
    assert!(
        evs.iter()
            .any(|e| e["kind"] == "tool_call" && e["id"] == score["target"])
    );
}
