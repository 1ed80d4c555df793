//! The OTLP/HTTP receiver against hostile clients (issue 28): cross-origin writes from web
//! pages, decompression and amplification bombs, slow and idle clients holding every slot,
//! oversized values, retried spans. Every limit is set small here so each test stays small
//! in time and memory; the bombs are built on the fly.

use std::io::Write as _;
use std::time::Duration;

use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, ArrayValue, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc::Receiver;

const PROTO: &str = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf";
const JSON: &str = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json";

fn kv(k: &str, v: &str) -> KeyValue {
    KeyValue {
        key: k.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(v.into())),
        }),
        ..Default::default()
    }
}

fn span(trace: u8, id: u8, parent: Option<u8>, name: &str) -> Span {
    Span {
        trace_id: [[0u8; 15].as_slice(), &[trace]].concat(),
        span_id: [[0u8; 7].as_slice(), &[id]].concat(),
        parent_span_id: parent.map_or(Vec::new(), |p| [[0u8; 7].as_slice(), &[p]].concat()),
        name: name.into(),
        start_time_unix_nano: 1_767_225_600_000_000_000 + u64::from(id) * 1000,
        end_time_unix_nano: 1_767_225_600_000_000_000 + u64::from(id) * 1000 + 500,
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

/// Reads one answer: (status, headers, body); `None` when the connection closed first.
async fn answer(conn: &mut TcpStream) -> Option<(u16, String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut tmp))
            .await
            .expect("an answer in time")
            .ok()?;
        if n == 0 {
            return None;
        }
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
                return Some((status, headers, buf[i + 4..i + 4 + len].to_vec()));
            }
        }
    }
}

/// One HTTP/1.1 exchange on an open connection.
async fn exchange(conn: &mut TcpStream, head: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let req = format!(
        "{head}\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    conn.write_all(req.as_bytes()).await.expect("write");
    conn.write_all(body).await.expect("write body");
    answer(conn)
        .await
        .expect("an answer before the connection closed")
}

async fn connect(addr: &str) -> TcpStream {
    TcpStream::connect(addr).await.expect("connect")
}

/// Whatever the hub said within `ms` milliseconds.
async fn drain(rx: &mut Receiver<LiveEvent>, ms: u64) -> Vec<LiveEvent> {
    let mut out = Vec::new();
    let end = tokio::time::Instant::now() + Duration::from_millis(ms);
    while let Ok(Some(ev)) = tokio::time::timeout_at(end, rx.recv()).await {
        out.push(ev);
    }
    out
}

fn opened(evs: &[LiveEvent]) -> usize {
    evs.iter()
        .filter(|e| matches!(e, LiveEvent::Opened { .. }))
        .count()
}

#[tokio::test]
async fn web_pages_cannot_write_spans_cross_origin() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig::default()).await;
    let own_port = addr.rsplit(':').next().expect("port").to_string();
    let body = request(vec![span(1, 1, None, "invoke_agent a")]).encode_to_vec();
    let json = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"00000000000000000000000000000002","spanId":"0000000000000001","name":"x"}]}]}]}"#;
    let mut conn = connect(&addr).await;
    // What a form or fetch() without a preflight can send: no type, text, form, multipart.
    for head in [
        "POST /v1/traces HTTP/1.1".to_string(),
        "POST /v1/traces HTTP/1.1\r\nContent-Type: text/plain".into(),
        "POST /v1/traces HTTP/1.1\r\nContent-Type: text/plain;charset=UTF-8".into(),
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded".into(),
        "POST /v1/traces HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=b".into(),
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/jsonx".into(),
    ] {
        let (status, _, _) = exchange(&mut conn, &head, json).await;
        assert_eq!(status, 415, "{head}");
    }
    // A page's origin, even with the right type (after a preflight a browser would send it).
    for origin in [
        "http://evil.example".to_string(),
        "null".into(),
        format!("http://evil.example:{own_port}"),
        format!("https://127.0.0.1:{own_port}"),
    ] {
        let head = format!("{PROTO}\r\nOrigin: {origin}");
        let (status, _, resp) = exchange(&mut conn, &head, &body).await;
        assert_eq!(status, 403, "{origin}");
        assert!(!resp.is_empty());
        let head = format!("{JSON}\r\nOrigin: {origin}");
        let (status, _, _) = exchange(&mut conn, &head, json).await;
        assert_eq!(status, 403, "{origin}");
    }
    assert_eq!(
        opened(&drain(&mut rx, 300).await),
        0,
        "a refused request made a session"
    );
    // The receiver's own origin and none at all (the SDKs, the Collector) are taken.
    let head = format!("{PROTO}\r\nOrigin: http://127.0.0.1:{own_port}");
    let (status, _, _) = exchange(&mut conn, &head, &body).await;
    assert_eq!(status, 200);
    let (status, _, _) = exchange(
        &mut conn,
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json; charset=utf-8",
        json,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(opened(&drain(&mut rx, 300).await), 2);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(data).expect("gzip");
    gz.finish().expect("gzip")
}

#[tokio::test]
async fn request_bodies_share_one_budget_across_connections() {
    let (_live, _rx, _l, addr) = hub(LiveConfig {
        otlp_buffer_total: 256 * 1024,
        otlp_buffer_wait: Duration::from_millis(300),
        ..LiveConfig::default()
    })
    .await;
    let big = request(vec![span(1, 1, None, &"n".repeat(200_000))]).encode_to_vec();
    let small = request(vec![span(2, 1, None, &"m".repeat(100_000))]).encode_to_vec();
    // A holds 200 kB of the 256 KiB by sending half its body and waiting.
    let mut a = connect(&addr).await;
    let head = format!(
        "{PROTO}\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        big.len()
    );
    a.write_all(head.as_bytes()).await.expect("write");
    a.write_all(&big[..big.len() / 2]).await.expect("write");
    tokio::time::sleep(Duration::from_millis(200)).await;
    // B does not fit beside it: asked to come back (503 with Retry-After), not queued forever.
    let mut b = connect(&addr).await;
    let (status, headers, _) = exchange(&mut b, PROTO, &small).await;
    assert_eq!(status, 503, "{headers}");
    assert!(headers.to_ascii_lowercase().contains("retry-after: 1"));
    // Once A is done, B's retry fits (on a new connection: the refused body was not read).
    a.write_all(&big[big.len() / 2..]).await.expect("write");
    let (status, _, _) = answer(&mut a).await.expect("A's answer");
    assert_eq!(status, 200);
    let mut b = connect(&addr).await;
    let (status, _, _) = exchange(&mut b, PROTO, &small).await;
    assert_eq!(status, 200);
    // A gzip body that inflates past the whole budget is refused while inflating (413),
    // though under the per-request bound.
    let bomb = gzip(&vec![b' '; 4 << 20]);
    assert!(bomb.len() < 16 * 1024);
    let (status, _, _) =
        exchange(&mut b, &format!("{JSON}\r\nContent-Encoding: gzip"), &bomb).await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn sixteen_concurrent_gzip_bombs_are_all_refused_and_a_real_request_gets_through() {
    let (_live, _rx, _l, addr) = hub(LiveConfig {
        otlp_max_decoded: 1 << 20,
        otlp_buffer_total: 4 << 20,
        ..LiveConfig::default()
    })
    .await;
    // 16 MiB of spaces in about 16 kB; its trailer says 16 MiB.
    let bomb = std::sync::Arc::new(gzip(&vec![b' '; 16 << 20]));
    assert!(bomb.len() < 40_000);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (addr, bomb) = (addr.clone(), bomb.clone());
        tasks.push(tokio::spawn(async move {
            let mut c = connect(&addr).await;
            exchange(&mut c, &format!("{JSON}\r\nContent-Encoding: gzip"), &bomb)
                .await
                .0
        }));
    }
    for t in tasks {
        assert_eq!(t.await.expect("task"), 413);
    }
    // A bomb whose trailer lies (claims 10 bytes) is stopped at the bound while inflating.
    let mut liar = bomb.to_vec();
    let n = liar.len();
    liar[n - 4..].copy_from_slice(&10u32.to_le_bytes());
    let mut c = connect(&addr).await;
    let (status, _, _) =
        exchange(&mut c, &format!("{JSON}\r\nContent-Encoding: gzip"), &liar).await;
    assert_eq!(status, 413);
    let body = gzip(&request(vec![span(3, 1, None, "ok")]).encode_to_vec());
    let (status, _, _) =
        exchange(&mut c, &format!("{PROTO}\r\nContent-Encoding: gzip"), &body).await;
    assert_eq!(status, 200);
}

/// A protobuf request of `n` empty spans (two bytes each), written by hand.
fn empty_spans_proto(n: usize) -> Vec<u8> {
    let mut scope = Vec::with_capacity(2 * n);
    for _ in 0..n {
        scope.extend_from_slice(&[0x12, 0x00]);
    }
    let mut rs = Vec::new();
    push_len_field(&mut rs, 2, &scope);
    let mut req = Vec::new();
    push_len_field(&mut req, 1, &rs);
    req
}

fn push_len_field(out: &mut Vec<u8>, field: u8, payload: &[u8]) {
    out.push(field << 3 | 2);
    let mut n = payload.len() as u64;
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
    out.extend_from_slice(payload);
}

#[tokio::test]
async fn requests_past_the_span_and_value_caps_get_413_before_decoding() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        otlp_max_spans: 1000,
        otlp_max_values: 1000,
        ..LiveConfig::default()
    })
    .await;
    let mut conn = connect(&addr).await;
    let (status, _, body) = exchange(&mut conn, PROTO, &empty_spans_proto(5000)).await;
    assert_eq!(status, 413);
    assert!(String::from_utf8_lossy(&body).contains("spans"));
    let json = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
        vec!["{}"; 5000].join(",")
    );
    let (status, _, _) = exchange(&mut conn, JSON, json.as_bytes()).await;
    assert_eq!(status, 413);
    // The same as a bare list of spans, a shape the decoder also takes.
    let list = format!("[{}]", vec!["{}"; 5000].join(","));
    let (status, _, _) = exchange(&mut conn, JSON, list.as_bytes()).await;
    assert_eq!(status, 413);
    // Attributes on one span, as a list and nested in an array value.
    let mut many = span(4, 1, None, "a");
    many.attributes = (0..5000).map(|i| kv(&format!("k{i}"), "")).collect();
    let (status, _, _) = exchange(&mut conn, PROTO, &request(vec![many]).encode_to_vec()).await;
    assert_eq!(status, 413);
    let mut nested = span(4, 2, None, "a");
    nested.attributes = vec![KeyValue {
        key: "list".into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::ArrayValue(ArrayValue {
                values: vec![AnyValue::default(); 5000],
            })),
        }),
        ..Default::default()
    }];
    let (status, _, _) = exchange(&mut conn, PROTO, &request(vec![nested]).encode_to_vec()).await;
    assert_eq!(status, 413);
    let attrs: Vec<String> = (0..5000)
        .map(|i| format!(r#"{{"key":"k{i}","value":{{"stringValue":""}}}}"#))
        .collect();
    let json = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"00000000000000000000000000000005","spanId":"0000000000000001","name":"x","attributes":[{}]}}]}}]}}]}}"#,
        attrs.join(",")
    );
    let (status, _, _) = exchange(&mut conn, JSON, json.as_bytes()).await;
    assert_eq!(status, 413);
    assert_eq!(opened(&drain(&mut rx, 200).await), 0);
    // Within the caps, the same shapes are taken.
    let (status, _, _) = exchange(&mut conn, PROTO, &empty_spans_proto(900)).await;
    assert_eq!(status, 200);
    let mut fine = span(6, 1, None, "a");
    fine.attributes = (0..900).map(|i| kv(&format!("k{i}"), "")).collect();
    let (status, _, _) = exchange(&mut conn, PROTO, &request(vec![fine]).encode_to_vec()).await;
    assert_eq!(status, 200);
}

#[test]
fn eight_million_empty_spans_are_refused_at_their_encoded_size() {
    // 16 MiB of two-byte spans: decoded, 8 M spans would take gigabytes.
    let body = empty_spans_proto(8 << 20);
    let t = std::time::Instant::now();
    let r = doxascope::trace::otlp_http::request_to_v1(&body, false, false, 64 << 20);
    assert_eq!(r.map(|_| ()).map_err(|e| e.0), Err(413));
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

/// A client that holds a connection doing nothing useful, reconnecting whenever it is
/// closed: `mode` 0 idles, 1 drips a request's headers, 2 drips a body.
async fn nuisance(addr: String, mode: u8, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::atomic::Ordering::Relaxed;
    while !stop.load(Relaxed) {
        let Ok(mut c) = TcpStream::connect(&addr).await else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let drip: &[u8] = match mode {
            0 => b"",
            1 => b"POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            _ => {
                let head = "POST /v1/traces HTTP/1.1\r\nContent-Type: application/x-protobuf\r\nContent-Length: 100000\r\n\r\n";
                if c.write_all(head.as_bytes()).await.is_err() {
                    continue;
                }
                &[0u8; 100_000]
            }
        };
        let mut tmp = [0u8; 1024];
        let mut i = 0;
        loop {
            if stop.load(Relaxed) {
                return;
            }
            if i < drip.len() {
                if c.write_all(&drip[i..i + 1]).await.is_err() {
                    break;
                }
                i += 1;
            }
            // Closed by the receiver: reconnect at once.
            match tokio::time::timeout(Duration::from_millis(100), c.read(&mut tmp)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                _ => {}
            }
        }
    }
}

#[tokio::test]
async fn an_exporter_gets_through_while_every_slot_is_held_by_drips_and_idlers() {
    let (live, _rx, _l, addr) = hub(LiveConfig {
        max_connections: 6,
        evict_slow_after: Duration::from_millis(300),
        ..LiveConfig::default()
    })
    .await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for mode in [0, 0, 1, 1, 2, 2, 0, 1, 2] {
        tasks.push(tokio::spawn(nuisance(addr.clone(), mode, stop.clone())));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let body = request(vec![span(7, 1, None, "ok")]).encode_to_vec();
    let mut ok = 0;
    // Each export is tried up to three times, as OTLP exporters retry a failed export.
    for _ in 0..10 {
        for _attempt in 0..3 {
            let mut c = connect(&addr).await;
            let req = format!(
                "{PROTO}\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            let through = c.write_all(req.as_bytes()).await.is_ok()
                && c.write_all(&body).await.is_ok()
                && matches!(answer(&mut c).await, Some((200, _, _)));
            tokio::time::sleep(Duration::from_millis(150)).await;
            if through {
                ok += 1;
                break;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    // Before eviction none got through (0 of 10, however often retried). Under a loaded
    // test run (two cores, the whole suite in parallel, or an audit beside it) a slot may
    // free a little late for a first attempt (6 to 8 of 10 got through at once in full
    // runs); with the retries an exporter makes, nearly all must.
    assert!(ok >= 9, "{ok} of 10 exports got through in three attempts");
    assert!(live.stats().evicted > 0);
}

/// Events of the hub until a session closes; every item must be an event.
async fn until_closed(
    rx: &mut Receiver<LiveEvent>,
) -> (Vec<doxascope::trace::Event>, Option<std::path::PathBuf>) {
    let mut events = Vec::new();
    let mut spool = None;
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("the session ends in time")
            .expect("hub alive");
        match ev {
            LiveEvent::Opened { spool: s, .. } => spool = s,
            LiveEvent::Items { items, .. } => {
                for it in items {
                    match it {
                        doxascope::trace::Item::Event(e) => events.push(e),
                        doxascope::trace::Item::Problem(p) => panic!("a line was refused: {p:?}"),
                    }
                }
            }
            LiveEvent::Closed { .. } => return (events, spool),
            _ => {}
        }
    }
}

/// Every line of a spool file, read back: the count of events, and no problem.
fn read_back(path: &std::path::Path) -> usize {
    use doxascope::trace::{Item, Reader, ReaderConfig};
    let bytes = std::fs::read(path).expect("spool file");
    let mut r = Reader::new("spool", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(&bytes, &mut items);
    r.finish(&mut items);
    for it in &items {
        assert!(matches!(it, Item::Event(_)), "{it:?}");
    }
    items.len()
}

#[tokio::test]
async fn oversized_values_are_cut_before_spooling_and_every_line_reads_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        spool_dir: Some(dir.path().to_path_buf()),
        otlp_trace_grace: Duration::from_millis(100),
        ..LiveConfig::default()
    })
    .await;
    let mut conn = connect(&addr).await;
    // A 15 MiB name: answered 200, shown cut with its length said.
    let huge = request(vec![span(8, 1, None, &"n".repeat(15 << 20))]).encode_to_vec();
    let (status, _, _) = exchange(&mut conn, PROTO, &huge).await;
    assert_eq!(status, 200);
    let (events, spool) = until_closed(&mut rx).await;
    let raw: Vec<String> = events.iter().map(|e| e.to_json_line()).collect();
    let cut = raw
        .iter()
        .find(|l| l.contains("x_truncated"))
        .unwrap_or_else(|| panic!("no event says it was cut: {raw:?}"));
    assert!(cut.len() < 100_000, "{}", cut.len());
    assert!(
        cut.contains(&(15u64 << 20).to_string()),
        "the length is said"
    );
    let spool = spool.expect("a spool file");
    assert_eq!(read_back(&spool), events.len());
    // Control characters take six bytes each once escaped: a line still past the reader's
    // cap becomes a warning in its place, never a skipped line.
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        spool_dir: Some(dir.path().join("second")),
        otlp_trace_grace: Duration::from_millis(100),
        max_message_bytes: 200_000,
        ..LiveConfig::default()
    })
    .await;
    let mut conn = connect(&addr).await;
    let mut sp = span(9, 1, None, &"\u{1}".repeat(60_000));
    sp.attributes = vec![
        kv("gen_ai.operation.name", "execute_tool"),
        kv("gen_ai.tool.name", &"\u{2}".repeat(60_000)),
    ];
    let (status, _, _) = exchange(&mut conn, PROTO, &request(vec![sp]).encode_to_vec()).await;
    assert_eq!(status, 200);
    let (events, spool) = until_closed(&mut rx).await;
    let raw: Vec<String> = events.iter().map(|e| e.to_json_line()).collect();
    assert!(
        raw.iter().any(|l| l.contains("over the line limit")),
        "{raw:?}"
    );
    assert_eq!(read_back(&spool.expect("a spool file")), events.len());
}

#[tokio::test]
async fn a_retried_request_shows_each_span_once() {
    let (_live, mut rx, _l, addr) = hub(LiveConfig {
        otlp_trace_grace: Duration::from_millis(100),
        // A trace without its root in the session ends when idle.
        idle_timeout: Duration::from_secs(1),
        ..LiveConfig::default()
    })
    .await;
    let mut conn = connect(&addr).await;
    let mut tool = span(10, 2, Some(1), "execute_tool search");
    tool.attributes = vec![
        kv("gen_ai.operation.name", "execute_tool"),
        kv("gen_ai.tool.name", "search"),
    ];
    let mut agent = span(10, 1, None, "invoke_agent a");
    agent.attributes = vec![
        kv("gen_ai.operation.name", "invoke_agent"),
        kv("gen_ai.agent.name", "a"),
    ];
    let once = request(vec![tool.clone()]).encode_to_vec();
    for _ in 0..2 {
        let (status, _, _) = exchange(&mut conn, PROTO, &once).await;
        assert_eq!(status, 200);
    }
    // The root, with the tool span again in the same request.
    let last = request(vec![tool, agent.clone(), agent]).encode_to_vec();
    let (status, _, _) = exchange(&mut conn, PROTO, &last).await;
    assert_eq!(status, 200);
    let (events, _) = until_closed(&mut rx).await;
    let kinds: Vec<&str> = events.iter().map(|e| e.kind_name()).collect();
    assert_eq!(kinds, ["session", "tool_call", "intention"]);
    // A retry that comes after the trace's session ended opens no second copy of it.
    let (status, _, _) = exchange(&mut conn, PROTO, &last).await;
    assert_eq!(status, 200);
    assert_eq!(opened(&drain(&mut rx, 800).await), 0);
    // A new span of the trace still opens a session, with that span only.
    let mut late = span(10, 3, Some(1), "execute_tool late");
    late.attributes = vec![
        kv("gen_ai.operation.name", "execute_tool"),
        kv("gen_ai.tool.name", "late"),
    ];
    let (status, _, _) = exchange(&mut conn, PROTO, &request(vec![late]).encode_to_vec()).await;
    assert_eq!(status, 200);
    let (events, _) = until_closed(&mut rx).await;
    let kinds: Vec<&str> = events.iter().map(|e| e.kind_name()).collect();
    assert_eq!(kinds, ["session", "tool_call"]);
}

#[tokio::test]
async fn a_client_dripping_headers_or_a_body_is_cut_off_at_its_deadline() {
    let (_live, _rx, _l, addr) = hub(LiveConfig {
        otlp_header_timeout: Duration::from_millis(300),
        otlp_body_timeout: Duration::from_millis(300),
        ..LiveConfig::default()
    })
    .await;
    let t = std::time::Instant::now();
    let mut c = connect(&addr).await;
    c.write_all(b"POST /v1/traces HTTP/1.1\r\nContent-Ty")
        .await
        .expect("write");
    // Closed (hyper answers 408 or just closes): either way, well before 10 s.
    let mut tmp = [0u8; 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(5), c.read(&mut tmp)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(_)) => {}
            Err(_) => panic!("a dripped header still open after 5 s"),
        }
    }
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    let mut c = connect(&addr).await;
    c.write_all(format!("{PROTO}\r\nHost: x\r\nContent-Length: 1000\r\n\r\nab").as_bytes())
        .await
        .expect("write");
    let (status, _, _) = answer(&mut c).await.expect("an answer");
    assert_eq!(status, 408);
}
