//! The OTLP/HTTP receiver behind `--listen otlp:HOST:PORT`: `POST /v1/traces` with a
//! protobuf (`application/x-protobuf`) or JSON (`application/json`) `ExportTraceServiceRequest`,
//! gzip-compressed or not, as the OpenTelemetry SDKs' and the Collector's `otlphttp`
//! exporters send it (HTTP/1.1, hyper on tokio; protobuf decoded by prost with
//! `opentelemetry-proto`'s messages), and `POST /v1/logs` with an `ExportLogsServiceRequest`
//! the same ways: each log record joins the session of the trace it was emitted in (opening
//! it when no span of the trace came yet), mapped by the file importer's
//! `SessionMap::log_record`; a record without a trace id joins the trace whose spans named
//! its `gen_ai.conversation.id`, else the session `otel (no trace id)`. Both paths take the
//! same checks (`check_request`, the body, rate and budget bounds; log records count as
//! spans against [`LiveConfig::otlp_max_spans`]) and their refusals reach the viewer alike.
//! `POST /v1/span_annotations` takes Phoenix's span annotations (JSON, `phoenix.rs`), and
//! scores that name only a model response are routed to its trace (`responses.rs`).
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
//! for a body that does not decode (the receiver goes on); 403 for a request naming a web
//! origin ([`check_request`]); 404 / 405 for other paths and methods; 413 past
//! [`LiveConfig::otlp_max_body`], [`LiveConfig::otlp_max_decoded`],
//! [`LiveConfig::otlp_max_spans`] or [`LiveConfig::otlp_max_values`] (checked by walking the
//! encoded request, before it is decoded); 415 for content types other than the two OTLP
//! encodings; 429 with `Retry-After` past [`LiveConfig::otlp_requests_per_sec`] and 503 with
//! `Retry-After` when the bodies of other requests fill [`LiveConfig::otlp_buffer_total`]
//! (both SDKs and the Collector retry both).
//!
//! A trace's session ends ("ended") [`LiveConfig::otlp_trace_grace`] after its root span
//! arrived with nothing after it, or after [`LiveConfig::idle_timeout`] without spans;
//! spans that come later open a new session of the same name. At most
//! [`LiveConfig::otlp_max_sessions`] traces are open; a new one ends the least recently
//! active. Connections are capped at [`LiveConfig::max_connections`]; headers must arrive
//! within [`LiveConfig::otlp_header_timeout`] and a body within
//! [`LiveConfig::otlp_body_timeout`]. When every slot is taken, a newcomer evicts the
//! connection that has been receiving a request for longest, else the one idle for longest,
//! past [`LiveConfig::evict_slow_after`] (never one whose request is being processed).

use std::collections::HashMap;
use std::io::Read as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceResponse,
};
use prost::Message as _;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use super::import::otlp::logs::LogRec;
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
    /// Span ids already shown: an exporter that retries a request it got no answer to sends
    /// its spans again, and each span is shown once.
    seen: std::collections::HashSet<u64>,
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
    /// Open connections, for eviction.
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next_conn: std::sync::atomic::AtomicU64,
    /// Room for request bodies over all connections, in KiB.
    buffers: Arc<Semaphore>,
    bucket: Mutex<(f64, Instant)>,
    epoch: Instant,
    /// Span ids of traces whose sessions ended lately, so a retry that arrives after its
    /// trace's session ended does not show the trace again.
    recent: Mutex<Recent>,
    /// The trace each conversation (`gen_ai.conversation.id`, `session.id`) was last seen in
    /// by its spans, for log records that carry a conversation but no trace id.
    conversations: Mutex<HashMap<String, u128>>,
    /// Traces that only created agents (`create_agent`), by the agent they created, held
    /// until a trace whose run invokes that agent takes them into its session.
    creations: Mutex<HashMap<String, Vec<Span<'static>>>>,
    /// Model responses' traces, and untraced scores waiting for theirs (`responses.rs`).
    responses: Mutex<responses::Responses>,
    /// The trace of each span id seen, for Phoenix's span annotations (`phoenix.rs`).
    span_traces: Mutex<phoenix::Spans>,
}

mod phoenix;
mod responses;

/// Agents' creations held for [`State::creations`]; past it the oldest are forgotten.
const MAX_CREATIONS: usize = 1024;

/// Conversations remembered for [`State::conversations`]; past it the map starts over.
const MAX_CONVERSATIONS: usize = 4096;

/// The conversation a span or log record names.
fn conversation<'v>(attr: impl Fn(&str) -> Option<&'v str>) -> Option<&'v str> {
    attr("gen_ai.conversation.id").or_else(|| attr("session.id"))
}

/// Span ids of recently ended traces, at most [`RECENT_IDS`] in all and of at most
/// [`RECENT_TRACES`] traces (the oldest traces are forgotten first).
#[derive(Default)]
struct Recent {
    order: std::collections::VecDeque<u128>,
    ids: HashMap<u128, std::collections::HashSet<u64>>,
    count: usize,
}

/// Span ids kept of ended traces (about 4 MiB).
const RECENT_IDS: usize = 262_144;
/// Ended traces whose span ids are kept: each costs a set of its own, so one-span traces
/// would otherwise keep 262,144 sets (tens of MiB) before [`RECENT_IDS`] is reached.
const RECENT_TRACES: usize = 8192;

impl Recent {
    fn remember(&mut self, key: u128, seen: std::collections::HashSet<u64>) {
        if seen.is_empty() {
            return;
        }
        self.count += seen.len();
        match self.ids.get_mut(&key) {
            Some(old) => old.extend(seen),
            None => {
                self.order.push_back(key);
                self.ids.insert(key, seen);
            }
        }
        while self.count > RECENT_IDS || self.order.len() > RECENT_TRACES {
            let Some(k) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.ids.remove(&k) {
                self.count = self.count.saturating_sub(gone.len());
            }
        }
    }
}

impl State {
    fn cfg(&self) -> &LiveConfig {
        self.live.config()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
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

    /// A connection slot: a free one, or one taken from the connection least likely to be a
    /// working exporter (see [`pick_victim`]), waiting up to [`LiveConfig::evict_slow_after`]
    /// for one to qualify (so clients that reconnect as soon as they are evicted cannot keep
    /// every connection too young to evict). `None`: every connection is busy.
    async fn slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let after = self.cfg().evict_slow_after;
        let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
        let give_up = Instant::now() + after + Duration::from_millis(100);
        loop {
            if let Ok(p) = self.conns.clone().try_acquire_owned() {
                return Some(p);
            }
            let victim = {
                let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
                // Out of the registry at once, so concurrent newcomers pick different victims.
                pick_victim(&open, self.now_ms(), after_ms).and_then(|k| open.remove(&k))
            };
            if let Some(v) = victim {
                v.kill.notify_one();
                self.live.count_eviction();
                return tokio::time::timeout(
                    Duration::from_secs(2),
                    self.conns.clone().acquire_owned(),
                )
                .await
                .ok()?
                .ok();
            }
            if Instant::now() >= give_up {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// What a connection is doing, for the slot policy.
const IDLE: u8 = 0;
/// Bytes of a request arrived and the request is not yet read whole.
const RECEIVING: u8 = 1;
/// A whole request is being decoded and written (never evicted: its spans are in flight).
const PROCESSING: u8 = 2;

/// One open connection as the slot policy sees it.
struct Conn {
    phase: std::sync::atomic::AtomicU8,
    /// When the phase began (ms since the receiver started).
    since: std::sync::atomic::AtomicU64,
    kill: tokio::sync::Notify,
}

impl Conn {
    fn set(&self, phase: u8, now: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.phase.store(phase, Relaxed);
        self.since.store(now, Relaxed);
    }
}

/// The connection to close for a newcomer when every slot is taken: the one that has been
/// receiving a request for longest (a slow-drip client; a real exporter sends a request at
/// once), else the one idle for longest (an idle kept-alive connection costs an exporter
/// only a reconnect); either only past `after` ms in that state. Never one whose request is
/// being processed.
fn pick_victim(open: &HashMap<u64, Arc<Conn>>, now: u64, after: u64) -> Option<u64> {
    use std::sync::atomic::Ordering::Relaxed;
    let oldest = |phase: u8| {
        open.iter()
            .filter(|(_, c)| c.phase.load(Relaxed) == phase)
            .map(|(k, c)| (*k, c.since.load(Relaxed)))
            .filter(|(_, t)| now.saturating_sub(*t) >= after)
            .min_by_key(|(_, t)| *t)
            .map(|(k, _)| k)
    };
    oldest(RECEIVING).or_else(|| oldest(IDLE))
}

/// A connection's stream, telling the slot policy when a request's first bytes arrive.
struct Watched {
    io: tokio::net::TcpStream,
    conn: Arc<Conn>,
    state: Arc<State>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = std::pin::Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before
            && self.conn.phase.load(std::sync::atomic::Ordering::Relaxed) == IDLE
        {
            let now = self.state.now_ms();
            self.conn.set(RECEIVING, now);
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Room taken in the receiver's body budget ([`LiveConfig::otlp_buffer_total`]), given back
/// when dropped.
struct Room {
    sem: Arc<Semaphore>,
    held: Option<tokio::sync::OwnedSemaphorePermit>,
    kib: usize,
    total: usize,
    wait: Duration,
}

impl Room {
    fn new(state: &State) -> Room {
        Room {
            sem: state.buffers.clone(),
            held: None,
            kib: 0,
            total: state.cfg().otlp_buffer_total,
            wait: state.cfg().otlp_buffer_wait,
        }
    }

    /// Room for `bytes` in all: at once, or once other requests give theirs back.
    async fn grow_to(&mut self, bytes: usize) -> Result<(), Refusal> {
        let kib = bytes.div_ceil(1024);
        if kib <= self.kib {
            return Ok(());
        }
        if bytes > self.total {
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "a body of over {bytes} bytes: the receiver holds at most {} at once",
                    self.total
                ),
            ));
        }
        let more = u32::try_from(kib - self.kib).unwrap_or(u32::MAX);
        let busy = || {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "busy: other requests hold the body budget; retry".to_string(),
            )
        };
        let p = tokio::time::timeout(self.wait, self.sem.clone().acquire_many_owned(more))
            .await
            .map_err(|_| busy())?
            .map_err(|_| busy())?;
        match &mut self.held {
            Some(h) => h.merge(p),
            None => self.held = Some(p),
        }
        self.kib = kib;
        Ok(())
    }
}

/// Accepts connections until the hub shuts down (the [`super::live::Listener`] aborts it when
/// dropped).
pub(crate) async fn serve(live: Live, listener: tokio::net::TcpListener) {
    let cfg = live.config().clone();
    let kib = (cfg.otlp_buffer_total.div_ceil(1024)).clamp(1, Semaphore::MAX_PERMITS);
    let state = Arc::new(State {
        conns: Arc::new(Semaphore::new(cfg.max_connections.max(1))),
        open: Mutex::new(HashMap::new()),
        next_conn: std::sync::atomic::AtomicU64::new(0),
        buffers: Arc::new(Semaphore::new(kib)),
        traces: Mutex::new(HashMap::new()),
        bucket: Mutex::new((
            2.0 * f64::from(cfg.otlp_requests_per_sec.max(1)),
            Instant::now(),
        )),
        live: live.clone(),
        epoch: Instant::now(),
        recent: Mutex::new(Recent::default()),
        conversations: Mutex::new(HashMap::new()),
        creations: Mutex::new(HashMap::new()),
        responses: Mutex::new(responses::Responses::default()),
        span_traces: Mutex::new(phoenix::Spans::default()),
    });
    let newcomers = Arc::new(Semaphore::new(cfg.max_connections.max(1)));
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
        // Newcomers wait for a slot in their own tasks, as many at once as there are slots.
        let Ok(waiting) = newcomers.clone().try_acquire_owned() else {
            drop(stream);
            live.reject(Peer::Tcp(peer), RejectReason::TooManyConnections);
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let Some(permit) = state.slot().await else {
                drop(stream);
                state
                    .live
                    .reject(Peer::Tcp(peer), RejectReason::TooManyConnections);
                return;
            };
            drop(waiting);
            connection(state, stream, peer, permit).await;
        });
    }
}

/// Serves one connection until it closes, times out or is evicted.
async fn connection(
    state: Arc<State>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    _permit: tokio::sync::OwnedSemaphorePermit,
) {
    use std::sync::atomic::Ordering::Relaxed;
    let own = own_origins(stream.local_addr().ok());
    let conn = Arc::new(Conn {
        phase: std::sync::atomic::AtomicU8::new(IDLE),
        since: std::sync::atomic::AtomicU64::new(state.now_ms()),
        kill: tokio::sync::Notify::new(),
    });
    let key = state.next_conn.fetch_add(1, Relaxed);
    state
        .open
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, conn.clone());
    let io = Watched {
        io: stream,
        conn: conn.clone(),
        state: state.clone(),
    };
    let (st, c) = (state.clone(), conn.clone());
    let own = Arc::new(own);
    let service = hyper::service::service_fn(move |req| {
        let (state, conn, own) = (st.clone(), c.clone(), own.clone());
        async move {
            let r = handle(&state, &conn, req, peer, &own).await;
            conn.set(IDLE, state.now_ms());
            Ok::<_, std::convert::Infallible>(r)
        }
    });
    let serving = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(state.cfg().otlp_header_timeout)
        .serve_connection(TokioIo::new(io), service);
    tokio::select! {
        _ = serving => {}
        _ = conn.kill.notified() => {}
        _ = state.live.stopped() => {}
    }
    state
        .open
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&key);
}

/// The origins a browser would send for a page of the receiver itself: `http://` and the
/// address the connection came in on (and `localhost` for a loopback address).
fn own_origins(local: Option<SocketAddr>) -> Vec<String> {
    let Some(a) = local else { return Vec::new() };
    let mut out = vec![format!("http://{a}")];
    if a.ip().is_loopback() {
        out.push(format!("http://localhost:{}", a.port()));
    }
    out
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
        let ended: Vec<(u128, Arc<tokio::sync::Mutex<Trace>>)> = {
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
                .filter_map(|k| traces.remove(k).map(|e| (*k, e.trace)))
                .collect()
        };
        let expired = state.expired_unrouted();
        if !expired.is_empty() {
            // Scores whose model call never came: shown in the session of untraced records.
            let st = state.clone();
            let rt = tokio::runtime::Handle::current();
            let _ = tokio::task::spawn_blocking(move || {
                for (peer, rec) in expired {
                    write_logs(&st, &rt, 0, vec![rec], peer);
                }
            })
            .await;
        }
        for (key, t) in ended {
            let mut t = t.lock().await;
            let lines = final_lines(&state, &mut t);
            if let (false, Some(w)) = (lines.is_empty(), t.writer.as_mut()) {
                let _ = w.write_all(&lines).await;
            }
            // Dropping the writer ends the session's stream: the session ends as "ended".
            t.writer = None;
            let seen = std::mem::take(&mut t.seen);
            drop(t);
            state
                .recent
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remember(key, seen);
        }
    }
}

/// What a trace's mapping still holds when its session ends, as lines: model-call details
/// whose span never came (shown as the calls they describe) and scores whose model call never
/// came (shown unmatched, and said).
fn final_lines(state: &State, t: &mut Trace) -> Vec<u8> {
    let mut out = Vec::new();
    t.map.flush_details(&mut out);
    let mut lines = Vec::new();
    for o in &mut out {
        fit_line(o, &t.map.name, state.cfg().max_message_bytes);
        otlp::line(o, &mut lines);
    }
    lines
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
pub(crate) enum Enc {
    Proto,
    Json,
}

fn error(enc: Enc, status: StatusCode, msg: &str) -> Response<Full<Bytes>> {
    // gRPC codes: INVALID_ARGUMENT 3, PERMISSION_DENIED 7, RESOURCE_EXHAUSTED 8,
    // UNIMPLEMENTED 12, UNAVAILABLE 14.
    let code = match status {
        StatusCode::TOO_MANY_REQUESTS | StatusCode::PAYLOAD_TOO_LARGE => 8,
        StatusCode::FORBIDDEN => 7,
        StatusCode::SERVICE_UNAVAILABLE => 14,
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

/// What a request's headers say about its body: its encoding and whether it is gzipped.
/// Any path the receiver serves checks its requests with this before decoding anything.
///
/// A web page can make a browser POST to a loopback port without asking first when the
/// content type is one a form could send (none, `text/plain`, a form, multipart): only the
/// two OTLP encodings are taken, which a browser sends cross-origin only after a preflight
/// (`OPTIONS`, answered 405). A browser also names the page's origin in `Origin`; the
/// OpenTelemetry SDKs and the Collector send none, so a request naming an origin other than
/// the receiver's own (`own`) is refused.
pub(crate) fn check_request(
    headers: &hyper::HeaderMap,
    own: &[String],
) -> Result<(Enc, bool), Refusal> {
    let header = |name: hyper::header::HeaderName| {
        headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).to_ascii_lowercase())
    };
    if let Some(origin) = headers.get(hyper::header::ORIGIN) {
        let o = String::from_utf8_lossy(origin.as_bytes());
        if !own.iter().any(|m| m.eq_ignore_ascii_case(o.trim())) {
            return Err((
                StatusCode::FORBIDDEN,
                format!(
                    "a request from the web origin {:?}: browsers may not send spans here",
                    o.chars().take(200).collect::<String>()
                ),
            ));
        }
    }
    let ctype = header(hyper::header::CONTENT_TYPE).unwrap_or_default();
    let essence = ctype.split(';').next().unwrap_or("").trim();
    let enc = match essence {
        "application/x-protobuf" | "application/protobuf" => Enc::Proto,
        "application/json" => Enc::Json,
        _ => {
            return Err((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "content type {:?}: send application/x-protobuf or application/json",
                    ctype.chars().take(200).collect::<String>()
                ),
            ));
        }
    };
    let gzip = match header(hyper::header::CONTENT_ENCODING)
        .as_deref()
        .map(str::trim)
    {
        None | Some("identity") | Some("") => false,
        Some("gzip") => true,
        Some(other) => {
            return Err((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "content encoding {:?}: only gzip is accepted",
                    other.chars().take(200).collect::<String>()
                ),
            ));
        }
    };
    Ok((enc, gzip))
}

/// Reads a body of at most `max` bytes within the body deadline, taking room for it in the
/// receiver's budget as it arrives (a declared length too large is refused before reading).
async fn read_body(
    state: &State,
    body: Incoming,
    max: usize,
    room: &mut Room,
) -> Result<Vec<u8>, Refusal> {
    use hyper::body::Body as _;
    let too_large = || {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("body over {max} bytes"),
        )
    };
    let declared = body.size_hint().exact();
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let declared = declared.map_or(0, |n| n as usize);
    room.grow_to(declared).await?;
    let mut buf = Vec::with_capacity(declared);
    let deadline = tokio::time::Instant::now() + state.cfg().otlp_body_timeout;
    let mut body = body;
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => {
                return Err((
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the body took over {} s",
                        state.cfg().otlp_body_timeout.as_secs_f64()
                    ),
                ));
            }
            Ok(None) => return Ok(buf),
            Ok(Some(Err(e))) => {
                return Err((StatusCode::BAD_REQUEST, format!("reading the body: {e}")));
            }
            Ok(Some(Ok(f))) => f,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if buf.len() + data.len() > max {
            return Err(too_large());
        }
        room.grow_to(buf.len() + data.len()).await?;
        buf.extend_from_slice(&data);
        room.grow_to(buf.capacity()).await?;
    }
}

async fn handle(
    state: &Arc<State>,
    conn: &Conn,
    req: Request<Incoming>,
    peer: SocketAddr,
    own: &[String],
) -> Response<Full<Bytes>> {
    let checked = check_request(req.headers(), own);
    let enc = checked.as_ref().map_or(Enc::Proto, |(e, _)| *e);
    let refuse = |status: StatusCode, why: String| {
        state
            .live
            .reject(Peer::Tcp(peer), RejectReason::OtlpRequest(why.clone()));
        let mut r = error(enc, status, &why);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            r.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("1"),
            );
        }
        r
    };
    let signal = match req.uri().path() {
        "/v1/traces" => Signal::Traces,
        "/v1/logs" => Signal::Logs,
        "/v1/span_annotations" => Signal::Annotations,
        other => {
            return refuse(
                StatusCode::NOT_FOUND,
                format!(
                    "no such path {other:?}: spans go to /v1/traces, log records to /v1/logs, \
                     Phoenix span annotations to /v1/span_annotations"
                ),
            );
        }
    };
    if req.method() != Method::POST {
        let mut r = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            format!(
                "{} {}: only POST is accepted",
                req.method(),
                req.uri().path()
            ),
        );
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("POST"),
        );
        return r;
    }
    // The body is read (within its bounds) before the headers are judged: a refusal that
    // leaves it unread would cost the client its connection.
    let mut room = Room::new(state);
    let body = match read_body(state, req.into_body(), state.cfg().otlp_max_body, &mut room).await {
        Ok(b) => b,
        Err((status, why)) => return refuse(status, why),
    };
    conn.set(PROCESSING, state.now_ms());
    let (enc, gzip) = match checked {
        Ok(x) => x,
        Err((status, why)) => return refuse(status, why),
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
    if signal == Signal::Annotations {
        if enc != Enc::Json {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "span annotations are sent as application/json".into(),
            );
        }
        let done = tokio::task::spawn_blocking(move || {
            phoenix::ingest(&st, &handle, &body, gzip, peer, &mut room)
        })
        .await;
        return match done {
            Ok(Ok(ids)) => {
                let data: Vec<serde_json::Value> = ids
                    .into_iter()
                    .map(|id| serde_json::json!({"id": id}))
                    .collect();
                let v = serde_json::json!({ "data": data });
                reply(
                    StatusCode::OK,
                    "application/json",
                    v.to_string().into_bytes(),
                )
            }
            Ok(Err((status, why))) => refuse(status, why),
            Err(e) => refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("receiver task: {e}"),
            ),
        };
    }
    let done = tokio::task::spawn_blocking(move || match signal {
        Signal::Traces => ingest(&st, &handle, &body, gzip, enc, peer, &mut room),
        Signal::Logs => ingest_logs(&st, &handle, &body, gzip, enc, peer, &mut room),
        Signal::Annotations => unreachable!("answered above"),
    })
    .await;
    match done {
        Ok(Ok(rejected)) => success(signal, enc, rejected),
        Ok(Err((status, why))) => refuse(status, why),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("receiver task: {e}"),
        ),
    }
}

/// The 200 answer: the response message of the request's signal
/// (`ExportTraceServiceResponse` or `ExportLogsServiceResponse`), with `partial_success`
/// when spans or log records were refused. The two messages differ only in the name of the
/// refused count.
fn success(signal: Signal, enc: Enc, rejected: Option<(i64, String)>) -> Response<Full<Bytes>> {
    match enc {
        Enc::Proto => {
            let body = match signal {
                Signal::Traces => ExportTraceServiceResponse {
                    partial_success: rejected.map(|(n, m)| ExportTracePartialSuccess {
                        rejected_spans: n,
                        error_message: m,
                    }),
                }
                .encode_to_vec(),
                // Annotations are answered by `handle` itself.
                Signal::Logs | Signal::Annotations => ExportLogsServiceResponse {
                    partial_success: rejected.map(|(n, m)| ExportLogsPartialSuccess {
                        rejected_log_records: n,
                        error_message: m,
                    }),
                }
                .encode_to_vec(),
            };
            reply(StatusCode::OK, "application/x-protobuf", body)
        }
        Enc::Json => {
            let count = match signal {
                Signal::Traces => "rejectedSpans",
                Signal::Logs | Signal::Annotations => "rejectedLogRecords",
            };
            let v = match rejected {
                Some((n, m)) => serde_json::json!({
                    "partialSuccess": {count: n.to_string(), "errorMessage": m}
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

/// `items` grouped by trace (`key`), the groups in the order their traces first appear, each
/// keeping its items' order: a request may interleave traces, and sessions open in the
/// order the exporter sent them.
fn by_trace<T>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> u128,
) -> Vec<(u128, Vec<T>)> {
    let mut groups: Vec<(u128, Vec<T>)> = Vec::new();
    let mut at: HashMap<u128, usize> = HashMap::new();
    for item in items {
        let k = key(&item);
        let i = *at.entry(k).or_insert_with(|| {
            groups.push((k, Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(item);
    }
    groups
}

/// What a request carries, by its path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Signal {
    /// `/v1/traces`: spans.
    Traces,
    /// `/v1/logs`: log records.
    Logs,
    /// `/v1/span_annotations`: Phoenix's span annotations (`phoenix.rs`).
    Annotations,
}

/// An HTTP status and the reason given with it.
pub(crate) type Refusal = (StatusCode, String);

/// What a request may hold: its size once gzip is undone, its spans and attribute values.
#[derive(Clone, Copy)]
struct Limits {
    decoded: usize,
    counts: otlp::proto::Counts,
}

impl Limits {
    fn of(cfg: &LiveConfig) -> Limits {
        Limits {
            decoded: cfg.otlp_max_decoded,
            counts: otlp::proto::Counts {
                spans: cfg.otlp_max_spans,
                values: cfg.otlp_max_values,
            },
        }
    }
}

/// Undoes gzip into `plain`, at most `max` bytes, calling `grow` with the buffer's size
/// before it grows (the receiver's budget; it refuses by returning the refusal). A gzip
/// trailer that already declares more than `max` is refused before anything is inflated.
fn gunzip(
    body: &[u8],
    max: usize,
    plain: &mut Vec<u8>,
    grow: &mut dyn FnMut(usize) -> Result<(), Refusal>,
) -> Result<(), Refusal> {
    let too_large = || {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("body over {max} bytes once decompressed"),
        )
    };
    // ISIZE, the last 4 bytes: the size modulo 4 GiB (a liar is still stopped below).
    if let Some(tail) = body.len().checked_sub(4).and_then(|i| body.get(i..)) {
        let isize = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        if usize::try_from(isize).is_ok_and(|n| n > max) {
            return Err(too_large());
        }
    }
    let mut dec = flate2::read::GzDecoder::new(body);
    loop {
        if plain.len() == plain.capacity() {
            let want = plain.capacity().saturating_mul(2).clamp(64 * 1024, max + 1);
            grow(want)?;
            plain.reserve_exact(want - plain.len());
        }
        let at = plain.len();
        plain.resize(plain.capacity(), 0);
        let n = loop {
            match dec.read(&mut plain[at..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    plain.truncate(at);
                    return Err((StatusCode::BAD_REQUEST, format!("gzip: {e}")));
                }
            }
        };
        plain.truncate(at + n);
        if plain.len() > max {
            return Err(too_large());
        }
        if n == 0 {
            return Ok(());
        }
    }
}

/// Undoes gzip (see [`gunzip`]), checks the request's spans and values against `limits`
/// before anything is decoded (8 million empty spans cost their 16 MiB, not gigabytes), and
/// decodes its spans.
fn decode_body<'a>(
    body: &'a [u8],
    gzip: bool,
    enc: Enc,
    limits: Limits,
    loc: &Arc<str>,
    plain: &'a mut Vec<u8>,
    grow: &mut dyn FnMut(usize) -> Result<(), Refusal>,
) -> Result<Vec<Span<'a>>, Refusal> {
    let bytes: &[u8] = if gzip {
        gunzip(body, limits.decoded, plain, grow)?;
        plain
    } else {
        body
    };
    let max = limits.counts;
    let counts = match enc {
        Enc::Proto => otlp::proto::count(bytes, max).map_err(|e| (StatusCode::BAD_REQUEST, e))?,
        Enc::Json => match otlp::json::count(bytes, max) {
            Ok(c) => c,
            Err(Some(e)) => return Err((StatusCode::BAD_REQUEST, e)),
            Err(None) => otlp::proto::Counts {
                spans: max.spans + 1,
                values: max.values + 1,
            },
        },
    };
    if counts.spans > max.spans {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "over {} spans in one request: send smaller batches",
                max.spans
            ),
        ));
    }
    if counts.values > max.values {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "over {} attribute values in one request: send smaller batches",
                max.values
            ),
        ));
    }
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
    let limits = Limits {
        decoded: max_decoded,
        ..Limits::of(&LiveConfig::default())
    };
    let spans = decode_body(body, gzip, enc, limits, &loc, &mut plain, &mut |_| Ok(()))
        .map_err(|(s, m)| (s.as_u16(), m))?;
    let mut out = Vec::new();
    for (key, mut group) in by_trace(spans, |sp| sp.trace.unwrap_or(0)) {
        sort_for_mapping(&mut group);
        let mut seen = std::collections::HashSet::new();
        group.retain(|s| s.id.is_none_or(|id| seen.insert(id)));
        let service = group.iter().find_map(|s| s.resource.service.clone());
        let name = session_name(service.as_deref(), key, false);
        let mut map = SessionMap::new_live(name.clone(), (key != 0).then_some(key));
        out.push((
            name,
            map_lines(&mut map, &group, LiveConfig::default().max_message_bytes),
        ));
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

/// Maps a trace's spans of one request to v1 lines, each at most `max_line` bytes with its
/// newline (see [`fit_line`]).
fn map_lines(map: &mut SessionMap, group: &[Span<'_>], max_line: usize) -> Vec<u8> {
    let mut out: Vec<Out> = Vec::with_capacity(group.len() * 2);
    let info = SessionInfo::of(group.iter());
    map.start(&info, &mut out);
    for sp in group {
        map.span(sp, &mut out);
    }
    let mut lines = Vec::with_capacity(out.iter().map(|o| o.body.len() + 3).sum());
    for o in &mut out {
        fit_line(o, &map.name, max_line);
        otlp::line(o, &mut lines);
    }
    lines
}

/// Replaces an event whose line would be over `max_line` (the session reader's line cap,
/// past which a line is skipped) by a `log` event saying what it was and how long. Every
/// field of an event is already cut at 64 KiB; escaping (a control character is six bytes
/// in JSON) can still make the line longer. What was acknowledged then stays visible as
/// that warning, and every spooled line reads back.
fn fit_line(o: &mut Out, session: &str, max_line: usize) {
    if o.body.len() + 3 <= max_line {
        return;
    }
    // The body starts `"kind":"NAME"`, written by the mapping (an ASCII name).
    let kind = o
        .body
        .strip_prefix(b"\"kind\":\"")
        .and_then(|rest| rest.split(|b| *b == b'"').next())
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .unwrap_or_default();
    let message = format!(
        "a {kind} event of {} bytes was over the line limit of {max_line} bytes and is not shown",
        o.body.len() + 3
    );
    let mut short = serde_json::json!({
        "kind": "log",
        "session": session,
        "level": "warn",
        "message": message,
        "x_dropped_bytes": o.body.len() + 3,
    })
    .to_string()
    .into_bytes();
    // Without its braces, as the mapping writes bodies.
    short.pop();
    short.remove(0);
    if short.len() + 3 > max_line {
        short = b"\"kind\":\"log\",\"level\":\"warn\",\"message\":\"an event over the line limit\""
            .to_vec();
    }
    o.body = short;
}

/// Decodes, maps and writes one request (on a blocking thread: decoding a large batch must
/// not hold up the viewer's event loop). Returns the refused spans, if any.
fn ingest(
    state: &State,
    rt: &tokio::runtime::Handle,
    body: &[u8],
    gzip: bool,
    enc: Enc,
    peer: SocketAddr,
    room: &mut Room,
) -> Result<Option<(i64, String)>, Refusal> {
    let loc: Arc<str> = Arc::from(format!("request from {peer}"));
    let mut plain = Vec::new();
    // The inflated body is held beside the body as received.
    let base = body.len();
    let mut grow = |n: usize| rt.block_on(room.grow_to(base.saturating_add(n)));
    let limits = Limits::of(state.cfg());
    let spans = decode_body(body, gzip, enc, limits, &loc, &mut plain, &mut grow)?;
    let mut rejected = 0i64;
    let mut why = String::new();
    for (key, mut group) in by_trace(spans, |sp| sp.trace.unwrap_or(0)) {
        if hold_creations(state, &group) {
            continue;
        }
        take_creations(state, &mut group);
        let n = group.len() as i64;
        sort_for_mapping(&mut group);
        let has_root = group.iter().any(|s| s.parent.is_none());
        // Spans of this trace shown in a session that has ended already: a late retry.
        if let Some(shown) = state
            .recent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ids
            .get(&key)
        {
            group.retain(|s| s.id.is_none_or(|id| !shown.contains(&id)));
        }
        if group.is_empty() {
            continue;
        }
        if key != 0
            && let Some(c) = group.iter().find_map(|s| conversation(|k| s.str_attr(k)))
        {
            let mut convs = state
                .conversations
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if convs.len() >= MAX_CONVERSATIONS && !convs.contains_key(c) {
                convs.clear();
            }
            convs.insert(c.to_string(), key);
        }
        state.remember_responses(key, &group);
        state.remember_spans(key, &group);
        let service = group.iter().find_map(|s| s.resource.service.clone());
        let trace = open_trace(state, key, service, has_root, peer);
        let mut t = trace.blocking_lock();
        if t.refused || t.writer.is_none() {
            rejected += n;
            why = format!("the session of trace {key:032x} was closed by the viewer's limits");
            continue;
        }
        group.retain(|s| s.id.is_none_or(|id| t.seen.insert(id)));
        if group.is_empty() {
            continue;
        }
        let lines = map_lines(&mut t.map, &group, state.cfg().max_message_bytes);
        let Some(w) = t.writer.as_mut() else { continue };
        // Blocks this request (not the viewer) until the session's reader takes the lines.
        if rt.block_on(w.write_all(&lines)).is_err() {
            t.writer = None;
            t.refused = true;
            rejected += n;
            why = format!("the session of trace {key:032x} was closed by the viewer's limits");
        }
    }
    // Scores that named a response of these spans before they came.
    for (key, held_peer, recs) in state.release_routed() {
        write_logs(state, rt, key, recs, held_peer);
    }
    Ok((rejected > 0).then_some((rejected, why)))
}

/// Holds a trace that only creates agents (`create_agent` spans) for the session of the run
/// that will invoke the agent (`map/create_agent.rs`); `false` for any other trace.
fn hold_creations(state: &State, group: &[Span<'_>]) -> bool {
    let Some(agents) = otlp::map::create_agent::creations_only(group.iter()) else {
        return false;
    };
    let mut held = state.creations.lock().unwrap_or_else(|e| e.into_inner());
    for agent in agents {
        if held.len() >= MAX_CREATIONS && !held.contains_key(&agent) {
            held.clear();
        }
        let spans: Vec<Span<'static>> = group
            .iter()
            .filter(|sp| otlp::map::create_agent::agent_key(sp).as_ref() == Some(&agent))
            .map(Span::to_static)
            .collect();
        held.entry(agent).or_default().extend(spans);
    }
    true
}

/// Adds to a trace's spans the held creations of the agents its runs invoke.
fn take_creations<'a>(state: &State, group: &mut Vec<Span<'a>>) {
    let agents = otlp::map::create_agent::invoked(group.iter());
    if agents.is_empty() {
        return;
    }
    let mut held = state.creations.lock().unwrap_or_else(|e| e.into_inner());
    if held.is_empty() {
        return;
    }
    for agent in agents {
        if let Some(spans) = held.remove(&agent) {
            group.extend(spans);
        }
    }
}

/// Undoes gzip, checks the request's log records and values against `limits` before
/// anything is decoded (as [`decode_body`] does for spans), and decodes its log records.
fn decode_logs(
    body: &[u8],
    gzip: bool,
    enc: Enc,
    limits: Limits,
    plain: &mut Vec<u8>,
    grow: &mut dyn FnMut(usize) -> Result<(), Refusal>,
) -> Result<Vec<LogRec>, Refusal> {
    let bytes: &[u8] = if gzip {
        gunzip(body, limits.decoded, plain, grow)?;
        plain
    } else {
        body
    };
    let max = limits.counts;
    let over = |what: &str, n: u64| {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("over {n} {what} in one request: send smaller batches"),
        )
    };
    match enc {
        Enc::Proto => {
            let c =
                otlp::proto::count_logs(bytes, max).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
            if c.spans > max.spans {
                return Err(over("log records", max.spans));
            }
            if c.values > max.values {
                return Err(over("attribute values", max.values));
            }
            otlp::logs::decode_proto(bytes).map_err(|e| (StatusCode::BAD_REQUEST, e))
        }
        Enc::Json => {
            // Every record and value of OTLP JSON is an object: their number is at most the
            // braces', counted before anything is built.
            let objects = memchr::memchr_iter(b'{', bytes).count() as u64;
            if objects > max.spans.saturating_add(max.values) {
                return Err(over("objects", max.spans.saturating_add(max.values)));
            }
            let v: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|e| (StatusCode::BAD_REQUEST, format!("JSON: {e}")))?;
            let recs = otlp::logs::from_json(&v).ok_or_else(|| {
                (
                    StatusCode::BAD_REQUEST,
                    "JSON: not an ExportLogsServiceRequest (no resourceLogs)".to_string(),
                )
            })?;
            // The braces bounded the memory; the record bound is the same as protobuf's.
            if recs.len() as u64 > max.spans {
                return Err(over("log records", max.spans));
            }
            Ok(recs)
        }
    }
}

/// Decodes, maps and writes one `/v1/logs` request: each record joins the session of its
/// trace (opening one when the trace has none yet, as spans do); a record without a trace
/// id joins the trace whose spans named its `gen_ai.conversation.id` (or `session.id`),
/// else the session `otel (no trace id)`. Returns the refused records, if any.
fn ingest_logs(
    state: &State,
    rt: &tokio::runtime::Handle,
    body: &[u8],
    gzip: bool,
    enc: Enc,
    peer: SocketAddr,
    room: &mut Room,
) -> Result<Option<(i64, String)>, Refusal> {
    let mut plain = Vec::new();
    let base = body.len();
    let mut grow = |n: usize| rt.block_on(room.grow_to(base.saturating_add(n)));
    let mut recs = decode_logs(
        body,
        gzip,
        enc,
        Limits::of(state.cfg()),
        &mut plain,
        &mut grow,
    )?;
    state.hold_unrouted(&mut recs, peer);
    let groups = by_trace(recs, |r| {
        // Without a trace id: the trace of the model response a score names, else the
        // trace whose spans named the record's conversation.
        r.trace
            .or_else(|| state.trace_of_response(r))
            .unwrap_or_else(|| {
                conversation(|k| r.str_attr(k))
                    .and_then(|c| {
                        state
                            .conversations
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get(c)
                            .copied()
                    })
                    .unwrap_or(0)
            })
    });
    let mut rejected = 0i64;
    let mut why = String::new();
    for (key, group) in groups {
        if let Some((n, w)) = write_logs(state, rt, key, group, peer) {
            rejected += n;
            why = w;
        }
    }
    Ok((rejected > 0).then_some((rejected, why)))
}

/// Maps and writes trace `key`'s log records (opening its session when it has none).
/// Returns the refused records, if any.
fn write_logs(
    state: &State,
    rt: &tokio::runtime::Handle,
    key: u128,
    mut group: Vec<LogRec>,
    peer: SocketAddr,
) -> Option<(i64, String)> {
    let n = group.len() as i64;
    let refused = Some((
        n,
        format!("the session of trace {key:032x} was closed by the viewer's limits"),
    ));
    group.sort_by_key(|r| r.time);
    let service = group.iter().find_map(|r| r.resource.service.clone());
    let trace = open_trace(state, key, service.clone(), false, peer);
    let mut t = trace.blocking_lock();
    if t.refused || t.writer.is_none() {
        return refused;
    }
    let mut out = Vec::with_capacity(group.len() + 1);
    let info = SessionInfo {
        service,
        conversation: otlp::logs::conversation(&group),
        ..SessionInfo::default()
    };
    t.map.start(&info, &mut out);
    for r in &group {
        t.map.log_record(r, &mut out);
    }
    let max_line = state.cfg().max_message_bytes;
    let mut lines = Vec::new();
    for o in &mut out {
        fit_line(o, &t.map.name, max_line);
        otlp::line(o, &mut lines);
    }
    let w = t.writer.as_mut()?;
    if rt.block_on(w.write_all(&lines)).is_err() {
        t.writer = None;
        t.refused = true;
        return refused;
    }
    None
}

/// The trace's state, opening a session for it if it has none.
fn open_trace(
    state: &State,
    key: u128,
    service: Option<String>,
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
                evicted = oldest.and_then(|k| traces.remove(&k).map(|e| (k, e.trace)));
            }
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
                seen: std::collections::HashSet::new(),
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
    if let Some((key, old)) = evicted {
        let mut old = old.blocking_lock();
        // What it still held is shown before it ends, as when it ends by itself (the
        // callers run on the runtime's blocking threads).
        let lines = final_lines(state, &mut old);
        if let (false, Ok(rt), Some(w)) = (
            lines.is_empty(),
            tokio::runtime::Handle::try_current(),
            old.writer.as_mut(),
        ) {
            let _ = rt.block_on(w.write_all(&lines));
        }
        old.writer = None;
        let seen = std::mem::take(&mut old.seen);
        drop(old);
        state
            .recent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remember(key, seen);
    }
    trace
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(phase: u8, since: u64) -> Arc<Conn> {
        Arc::new(Conn {
            phase: std::sync::atomic::AtomicU8::new(phase),
            since: std::sync::atomic::AtomicU64::new(since),
            kill: tokio::sync::Notify::new(),
        })
    }

    #[test]
    fn the_victim_is_the_longest_receiving_then_the_longest_idle_never_a_busy_one() {
        let mut open = HashMap::new();
        open.insert(1, conn(PROCESSING, 0));
        open.insert(2, conn(IDLE, 100));
        open.insert(3, conn(RECEIVING, 500));
        open.insert(4, conn(RECEIVING, 300));
        open.insert(5, conn(IDLE, 50));
        // At 2000 ms with 1000 ms to qualify: the drip that began first.
        assert_eq!(pick_victim(&open, 2000, 1000), Some(4));
        open.remove(&4);
        open.remove(&3);
        // No drip left: the idlest.
        assert_eq!(pick_victim(&open, 2000, 1000), Some(5));
        // Nobody has been in their state long enough.
        assert_eq!(pick_victim(&open, 1000, 1000), None);
        // A request being processed is never taken.
        open.retain(|k, _| *k == 1);
        assert_eq!(pick_victim(&open, u64::MAX, 0), None);
    }

    #[test]
    fn a_gzip_bomb_is_stopped_at_the_bound_and_at_the_budget() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&vec![b' '; 4 << 20]).expect("gzip");
        let mut bomb = gz.finish().expect("gzip");
        let mut plain = Vec::new();
        let r = gunzip(&bomb, 1 << 20, &mut plain, &mut |_| Ok(()));
        assert_eq!(r.map_err(|e| e.0), Err(StatusCode::PAYLOAD_TOO_LARGE));
        // A trailer that lies: stopped while inflating, having held no more than the bound.
        let n = bomb.len();
        bomb[n - 4..].copy_from_slice(&1u32.to_le_bytes());
        let mut plain = Vec::new();
        let mut asked = 0;
        let r = gunzip(&bomb, 1 << 20, &mut plain, &mut |want| {
            asked = asked.max(want);
            Ok(())
        });
        assert_eq!(r.map_err(|e| e.0), Err(StatusCode::PAYLOAD_TOO_LARGE));
        assert!(asked <= (1 << 20) + 1, "{asked}");
        // The budget says no: its refusal is the answer.
        let mut plain = Vec::new();
        let r = gunzip(&bomb, 8 << 20, &mut plain, &mut |_| {
            Err((StatusCode::SERVICE_UNAVAILABLE, "busy".into()))
        });
        assert_eq!(r.map_err(|e| e.0), Err(StatusCode::SERVICE_UNAVAILABLE));
    }
}
