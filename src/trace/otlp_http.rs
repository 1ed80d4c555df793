//! The OTLP/HTTP receiver behind `--listen otlp:HOST:PORT`: `POST /v1/traces` with a
//! protobuf (`application/x-protobuf`) or JSON (`application/json`) `ExportTraceServiceRequest`,
//! gzip-compressed or not, as the OpenTelemetry SDKs' and the Collector's `otlphttp`
//! exporters send it (HTTP/1.1, hyper on tokio; protobuf decoded by prost with
//! `opentelemetry-proto`'s messages).
//!
//! Every trace becomes a live session of the [`Live`] hub: the spans are mapped to v1 by the
//! file importer's mapping ([`crate::trace::import::otlp`]) and the lines are written into
//! the session's stream, so backpressure, the memory bounds and the spool file of
//! [`crate::trace::live`] apply unchanged, and a spooled session is a v1 file `audit` reads.
//! A request is answered once its lines are in the session's stream: a slow viewer slows the
//! exporter down (it waits for the answer) rather than losing spans.
//!
//! Answers, per the OTLP specification: 200 with an `ExportTraceServiceResponse` (in the
//! request's encoding; `partial_success` counts spans of traces that could not be shown,
//! such as a session closed by the memory bound without a spool file); 400 with a `Status`
//! for a body that does not decode (the receiver goes on); 404 / 405 for other paths and
//! methods; 413 past [`LiveConfig::otlp_max_body`] or [`LiveConfig::otlp_max_decoded`]; 415
//! for other content types; 429 with `Retry-After` past
//! [`LiveConfig::otlp_requests_per_sec`] (both SDKs and the Collector retry it).
//!
//! A trace's session ends ("ended") [`LiveConfig::otlp_trace_grace`] after its root span
//! arrived with nothing after it, or after [`LiveConfig::idle_timeout`] without spans;
//! spans that come later open a new session of the same name. At most
//! [`LiveConfig::otlp_max_sessions`] traces are open; a new one ends the least recently
//! active. Connections are capped at [`LiveConfig::max_connections`]; headers must arrive
//! within 10 s and a body within 30 s.

use std::collections::HashMap;
use std::io::Read as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceResponse,
};
use prost::Message as _;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use super::import::otlp::map::{Out, SessionInfo, SessionMap};
use super::import::otlp::{self, session_name, span::Span};
use super::live::{Live, LiveConfig, Peer, RejectReason};

/// Bytes buffered between the receiver and a session's reader: small, so a slow viewer
/// pushes back on the exporter at once.
const PIPE_BYTES: usize = 64 * 1024;

/// One open trace.
struct Trace {
    map: SessionMap,
    /// The session's stream; `None` once it ended (closed by us or by the hub).
    writer: Option<tokio::io::DuplexStream>,
    /// The hub closed the session (memory bound without spool, spool full): its spans are
    /// refused until the trace goes idle.
    refused: bool,
}

/// What the sweeper needs to know about a trace without locking it.
struct Entry {
    trace: Arc<tokio::sync::Mutex<Trace>>,
    last: Instant,
    root_seen: bool,
}

struct State {
    live: Live,
    traces: Mutex<HashMap<u128, Entry>>,
    conns: Arc<Semaphore>,
    bucket: Mutex<(f64, Instant)>,
}

impl State {
    fn cfg(&self) -> &LiveConfig {
        self.live.config()
    }

    /// Takes a token of the request-rate bucket (`rate` per second, bursts of `2 rate`).
    fn admit_request(&self) -> bool {
        let rate = f64::from(self.cfg().otlp_requests_per_sec.max(1));
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        b.0 = (b.0 + now.duration_since(b.1).as_secs_f64() * rate).min(2.0 * rate);
        b.1 = now;
        if b.0 >= 1.0 {
            b.0 -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Accepts connections until the hub shuts down (the [`super::live::Listener`] aborts it when
/// dropped).
pub(crate) async fn serve(live: Live, listener: tokio::net::TcpListener) {
    let cfg = live.config().clone();
    let state = Arc::new(State {
        conns: Arc::new(Semaphore::new(cfg.max_connections.max(1))),
        traces: Mutex::new(HashMap::new()),
        bucket: Mutex::new((
            2.0 * f64::from(cfg.otlp_requests_per_sec.max(1)),
            Instant::now(),
        )),
        live: live.clone(),
    });
    let sweeper = tokio::spawn(sweep(state.clone()));
    let _stop_sweeper = AbortOnDrop(sweeper);
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = live.stopped() => return,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(_) => {
                // EMFILE and the like: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = state.conns.clone().try_acquire_owned() else {
            drop(stream);
            live.reject(Peer::Tcp(peer), RejectReason::TooManyConnections);
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(state, req, peer).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Ends traces whose root arrived and that went quiet, and idle ones.
async fn sweep(state: Arc<State>) {
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let grace = state.cfg().otlp_trace_grace;
        let idle = state.cfg().idle_timeout;
        let ended: Vec<Arc<tokio::sync::Mutex<Trace>>> = {
            let mut traces = state.traces.lock().unwrap_or_else(|e| e.into_inner());
            let keys: Vec<u128> = traces
                .iter()
                .filter(|(_, e)| {
                    let quiet = e.last.elapsed();
                    (e.root_seen && quiet >= grace) || quiet >= idle
                })
                .map(|(k, _)| *k)
                .collect();
            keys.iter()
                .filter_map(|k| traces.remove(k))
                .map(|e| e.trace)
                .collect()
        };
        for t in ended {
            // Dropping the writer ends the session's stream: the session ends as "ended".
            t.lock().await.writer = None;
        }
    }
}

fn reply(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

/// `google.rpc.Status`, the body OTLP/HTTP prescribes for 4xx and 5xx answers.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// The request's body encoding.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Enc {
    Proto,
    Json,
}

fn error(enc: Enc, status: StatusCode, msg: &str) -> Response<Full<Bytes>> {
    // gRPC codes: INVALID_ARGUMENT 3, RESOURCE_EXHAUSTED 8, UNIMPLEMENTED 12.
    let code = match status {
        StatusCode::TOO_MANY_REQUESTS | StatusCode::PAYLOAD_TOO_LARGE => 8,
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => 12,
        _ => 3,
    };
    match enc {
        Enc::Proto => reply(
            status,
            "application/x-protobuf",
            RpcStatus {
                code,
                message: msg.to_string(),
            }
            .encode_to_vec(),
        ),
        Enc::Json => reply(
            status,
            "application/json",
            serde_json::json!({"code": code, "message": msg})
                .to_string()
                .into_bytes(),
        ),
    }
}

async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
    peer: SocketAddr,
) -> Response<Full<Bytes>> {
    let header = |name: hyper::header::HeaderName| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_ascii_lowercase())
    };
    let ctype = header(hyper::header::CONTENT_TYPE).unwrap_or_default();
    let cenc = header(hyper::header::CONTENT_ENCODING);
    let enc = if ctype.starts_with("application/json") {
        Enc::Json
    } else {
        Enc::Proto
    };
    let refuse = |status: StatusCode, why: String| {
        state
            .live
            .reject(Peer::Tcp(peer), RejectReason::OtlpRequest(why.clone()));
        error(enc, status, &why)
    };
    if req.uri().path() != "/v1/traces" {
        return refuse(
            StatusCode::NOT_FOUND,
            format!(
                "no such path {:?}: spans go to /v1/traces",
                req.uri().path()
            ),
        );
    }
    if req.method() != Method::POST {
        let mut r = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{} /v1/traces: only POST is accepted", req.method()),
        );
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("POST"),
        );
        return r;
    }
    // The body is read before anything else is checked: a refusal that leaves it unread
    // would cost the client its connection.
    let max = state.cfg().otlp_max_body;
    let body = tokio::time::timeout(
        Duration::from_secs(30),
        Limited::new(req.into_body(), max).collect(),
    )
    .await;
    let body = match body {
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                "the body took over 30 s".into(),
            );
        }
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("body over {max} bytes"),
            );
        }
        Ok(Err(e)) => return refuse(StatusCode::BAD_REQUEST, format!("reading the body: {e}")),
        Ok(Ok(b)) => b.to_bytes(),
    };
    if !ctype.is_empty()
        && !ctype.starts_with("application/x-protobuf")
        && !ctype.starts_with("application/protobuf")
        && !ctype.starts_with("application/json")
    {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content type {ctype:?}: send application/x-protobuf or application/json"),
        );
    }
    let gzip = match cenc.as_deref() {
        None | Some("identity") | Some("") => false,
        Some("gzip") => true,
        Some(other) => {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("content encoding {other:?}: only gzip is accepted"),
            );
        }
    };
    if !state.admit_request() {
        state.live.reject(
            Peer::Tcp(peer),
            RejectReason::OtlpRequest("too many requests; asked to retry".into()),
        );
        let mut r = error(enc, StatusCode::TOO_MANY_REQUESTS, "too many requests");
        r.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("1"),
        );
        return r;
    }
    let st = state.clone();
    let handle = tokio::runtime::Handle::current();
    let done =
        tokio::task::spawn_blocking(move || ingest(&st, &handle, body, gzip, enc, peer)).await;
    match done {
        Ok(Ok(rejected)) => success(enc, rejected),
        Ok(Err((status, why))) => refuse(status, why),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("receiver task: {e}"),
        ),
    }
}

/// The 200 answer: an `ExportTraceServiceResponse`, with `partial_success` when spans were
/// refused.
fn success(enc: Enc, rejected: Option<(i64, String)>) -> Response<Full<Bytes>> {
    match enc {
        Enc::Proto => {
            let resp = ExportTraceServiceResponse {
                partial_success: rejected.map(|(n, m)| ExportTracePartialSuccess {
                    rejected_spans: n,
                    error_message: m,
                }),
            };
            reply(
                StatusCode::OK,
                "application/x-protobuf",
                resp.encode_to_vec(),
            )
        }
        Enc::Json => {
            let v = match rejected {
                Some((n, m)) => serde_json::json!({
                    "partialSuccess": {"rejectedSpans": n.to_string(), "errorMessage": m}
                }),
                None => serde_json::json!({}),
            };
            reply(
                StatusCode::OK,
                "application/json",
                v.to_string().into_bytes(),
            )
        }
    }
}

type Refusal = (StatusCode, String);

/// Undoes gzip (at most `max` bytes, into `plain`) and decodes the request's spans.
fn decode_body<'a>(
    body: &'a [u8],
    gzip: bool,
    enc: Enc,
    max: usize,
    loc: &Arc<str>,
    plain: &'a mut Vec<u8>,
) -> Result<Vec<Span<'a>>, Refusal> {
    let bytes: &[u8] = if gzip {
        let mut dec = flate2::read::GzDecoder::new(body).take(max as u64 + 1);
        dec.read_to_end(plain)
            .map_err(|e| (StatusCode::BAD_REQUEST, format!("gzip: {e}")))?;
        if plain.len() > max {
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("body over {max} bytes once decompressed"),
            ));
        }
        plain
    } else {
        body
    };
    match enc {
        Enc::Proto => otlp::proto::decode(bytes, loc)
            .map(|(s, _bad_ids)| s)
            .map_err(|e| (StatusCode::BAD_REQUEST, e)),
        Enc::Json => otlp::decode_json_request(bytes, loc)
            .map(|(s, _problems)| s)
            .map_err(|e| (StatusCode::BAD_REQUEST, e)),
    }
}

/// One trace of a request: its session name and its v1 lines.
pub type TraceLines = (String, Vec<u8>);

/// What the receiver makes of one request body, without a hub: the v1 lines of each trace
/// in it (each trace a fresh live session), or the HTTP status and reason it would refuse
/// it with. The same decoding and mapping as a served request; for fuzzing and benchmarks.
pub fn request_to_v1(
    body: &[u8],
    json: bool,
    gzip: bool,
    max_decoded: usize,
) -> Result<Vec<TraceLines>, (u16, String)> {
    let loc: Arc<str> = Arc::from("request");
    let mut plain = Vec::new();
    let enc = if json { Enc::Json } else { Enc::Proto };
    let spans = decode_body(body, gzip, enc, max_decoded, &loc, &mut plain)
        .map_err(|(s, m)| (s.as_u16(), m))?;
    let mut order: Vec<u128> = Vec::new();
    let mut groups: HashMap<u128, Vec<Span<'_>>> = HashMap::new();
    for sp in spans {
        let key = sp.trace.unwrap_or(0);
        groups
            .entry(key)
            .or_insert_with(|| {
                order.push(key);
                Vec::new()
            })
            .push(sp);
    }
    let mut out = Vec::new();
    for key in order {
        let Some(mut group) = groups.remove(&key) else {
            continue;
        };
        sort_for_mapping(&mut group);
        let service = group.iter().find_map(|s| s.resource.service.clone());
        let name = session_name(service.as_deref(), key, false);
        let mut map = SessionMap::new_live(name.clone(), (key != 0).then_some(key));
        out.push((name, map_lines(&mut map, &group)));
    }
    Ok(out)
}

/// Children before parents: by end time, a later start first on ties.
fn sort_for_mapping(group: &mut [Span<'_>]) {
    group.sort_by(|a, b| {
        let ka = (a.end.or(a.start), std::cmp::Reverse(a.start));
        let kb = (b.end.or(b.start), std::cmp::Reverse(b.start));
        ka.cmp(&kb)
    });
}

/// Maps a trace's spans of one request to v1 lines.
fn map_lines(map: &mut SessionMap, group: &[Span<'_>]) -> Vec<u8> {
    let mut out: Vec<Out> = Vec::with_capacity(group.len() * 2);
    let info = SessionInfo::of(group.iter());
    map.start(&info, &mut out);
    for sp in group {
        map.span(sp, &mut out);
    }
    let mut lines = Vec::with_capacity(out.iter().map(|o| o.body.len() + 3).sum());
    for o in &out {
        otlp::line(o, &mut lines);
    }
    lines
}

/// Decodes, maps and writes one request (on a blocking thread: decoding a large batch must
/// not hold up the viewer's event loop). Returns the refused spans, if any.
fn ingest(
    state: &State,
    rt: &tokio::runtime::Handle,
    body: Bytes,
    gzip: bool,
    enc: Enc,
    peer: SocketAddr,
) -> Result<Option<(i64, String)>, Refusal> {
    let loc: Arc<str> = Arc::from(format!("request from {peer}"));
    let mut plain = Vec::new();
    let spans = decode_body(
        &body,
        gzip,
        enc,
        state.cfg().otlp_max_decoded,
        &loc,
        &mut plain,
    )?;
    // Group by trace, in the order traces first appear.
    let mut order: Vec<u128> = Vec::new();
    let mut groups: HashMap<u128, Vec<Span<'_>>> = HashMap::new();
    for sp in spans {
        let key = sp.trace.unwrap_or(0);
        groups
            .entry(key)
            .or_insert_with(|| {
                order.push(key);
                Vec::new()
            })
            .push(sp);
    }
    let mut rejected = 0i64;
    let mut why = String::new();
    for key in order {
        let Some(mut group) = groups.remove(&key) else {
            continue;
        };
        let n = group.len() as i64;
        sort_for_mapping(&mut group);
        let has_root = group.iter().any(|s| s.parent.is_none());
        let trace = open_trace(state, key, &group, has_root, peer);
        let mut t = trace.blocking_lock();
        if t.refused || t.writer.is_none() {
            rejected += n;
            why = format!("the session of trace {key:032x} was closed by the viewer's limits");
            continue;
        }
        let lines = map_lines(&mut t.map, &group);
        let Some(w) = t.writer.as_mut() else { continue };
        // Blocks this request (not the viewer) until the session's reader takes the lines.
        if rt.block_on(w.write_all(&lines)).is_err() {
            t.writer = None;
            t.refused = true;
            rejected += n;
            why = format!("the session of trace {key:032x} was closed by the viewer's limits");
        }
    }
    Ok((rejected > 0).then_some((rejected, why)))
}

/// The trace's state, opening a session for it if it has none.
fn open_trace(
    state: &State,
    key: u128,
    group: &[Span<'_>],
    has_root: bool,
    peer: SocketAddr,
) -> Arc<tokio::sync::Mutex<Trace>> {
    let mut evicted = None;
    let trace = {
        let mut traces = state.traces.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = traces.get_mut(&key) {
            e.last = Instant::now();
            e.root_seen |= has_root;
            e.trace.clone()
        } else {
            if traces.len() >= state.cfg().otlp_max_sessions.max(1) {
                let oldest = traces.iter().min_by_key(|(_, e)| e.last).map(|(k, _)| *k);
                evicted = oldest.and_then(|k| traces.remove(&k)).map(|e| e.trace);
            }
            let service = group.iter().find_map(|s| s.resource.service.clone());
            let name = if key == 0 {
                "otel (no trace id)".to_string()
            } else {
                session_name(service.as_deref(), key, false)
            };
            let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
            state.live.start(name.clone(), Peer::Otlp(peer), theirs);
            let t = Arc::new(tokio::sync::Mutex::new(Trace {
                map: SessionMap::new_live(name, (key != 0).then_some(key)),
                writer: Some(ours),
                refused: false,
            }));
            traces.insert(
                key,
                Entry {
                    trace: t.clone(),
                    last: Instant::now(),
                    root_seen: has_root,
                },
            );
            t
        }
    };
    if let Some(old) = evicted {
        old.blocking_lock().writer = None;
    }
    trace
}
