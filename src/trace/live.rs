//! Live sessions: events streamed by running agents over a local socket, or piped into stdin.
//!
//! A [`Live`] hub owns one output channel of [`LiveEvent`]s. Sources attach to it:
//! - [`Live::listen`] on a [`ListenAddr`] (`unix:PATH` or `tcp:127.0.0.1:PORT`, contract §1):
//!   every accepted connection is its own session;
//! - [`Live::stdin`] (the `-` argument): stdin is one session;
//! - [`Live::attach`]: any byte stream (tests, pipes).
//!
//! Every session gets a server-assigned [`SessionId`] and the display name `conn-N` (or
//! `stdin`), replaced by the first `session` field an event carries. The id is the identity:
//! two clients claiming the same session name stay two sessions, and client-chosen names are
//! only ever displayed (sanitized by the UI), never used as paths or keys.
//!
//! The socket is hostile input (reliability-security research, §1.5 and catalogue §E), so:
//! - **exposure**: a Unix socket lives in a private directory (created `0700`; an existing one
//!   must be ours and not world-writable) and every peer's uid is checked with `SO_PEERCRED`;
//!   TCP binds to loopback addresses only, anything else is refused at parse time;
//! - **framing**: JSONL through the streaming [`Reader`] with a line cap
//!   ([`LiveConfig::max_message_bytes`]): an over-long message is reported and skipped, and
//!   memory stays bounded even for a stream that never sends a newline;
//! - **cross-protocol requests**: a stream whose first significant byte is not `{` is refused
//!   before any session is shown (HTTP requests from a browser, TLS hellos, binary noise);
//! - **slowloris**: a connection silent for [`LiveConfig::idle_timeout`] is closed, and so is
//!   one that takes longer than [`LiveConfig::line_timeout`] to finish a line it started
//!   (a client sending one byte every few seconds);
//! - **floods**: at most [`LiveConfig::max_connections`] connections; accept errors such as
//!   `EMFILE` back off instead of spinning. When every slot is taken, a new client **evicts**
//!   the connection that is least likely a working agent ([`CloseReason::Evicted`]): one
//!   stuck in the middle of a line for [`LiveConfig::evict_slow_after`], else one without a
//!   complete line for [`LiveConfig::evict_idle_after`]; only when there is none is the new
//!   client refused (and counted);
//! - **slow consumer**: backpressure. Each session may have at most
//!   [`LiveConfig::session_queue`] batches waiting in the channel; then it stops reading its
//!   stream until the consumer catches up (the client's writes block in the kernel). Nothing
//!   is dropped, and one flooding session never starves the others;
//! - **memory**: what the consumer is given (and keeps) is bounded per session and in total
//!   ([`LiveConfig::max_held_events`], [`LiveConfig::max_held_bytes`] and the `_total`
//!   limits). Every session's raw stream is also written to a spool file
//!   ([`LiveConfig::spool_dir`]); past the bound, events are written there only, the session
//!   says so ([`LiveEvent::Spilling`]), and the count of lines kept only on disk comes with
//!   [`LiveEvent::Closed`]. Without a spool directory a session past the bound is closed
//!   ([`CloseReason::MemoryLimit`]). A spool file is capped too
//!   ([`LiveConfig::max_spool_bytes`], then [`CloseReason::SpoolFull`]). A session with a
//!   spool file gives its share of the `_total` limits back when it ends (the consumer is
//!   expected to drop its events and re-read the file when it needs them);
//! - **disk**: the spool files of ended sessions are kept up to [`LiveConfig::max_spool_files`]
//!   files and [`LiveConfig::max_spool_dir_bytes`] bytes; past either, the oldest are deleted
//!   and the consumer is told which ([`LiveEvent::SpoolRemoved`]). An open session's file is
//!   never deleted.
//!
//! All methods that start tasks must be called inside a tokio runtime.
//!
//! ```no_run
//! use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let (live, mut rx) = Live::new(LiveConfig::default());
//! let addr: ListenAddr = "unix:/run/user/1000/doxascope/live.sock".parse()?;
//! let _listener = live.listen(&addr).await?; // keep it: dropping it stops accepting
//! while let Some(ev) = rx.recv().await {
//!     match ev {
//!         LiveEvent::Opened { session, name, .. } => { /* new timeline keyed by `session` */ }
//!         LiveEvent::Items { session, items, .. } => { /* append to that timeline */ }
//!         LiveEvent::Spilling { session, .. } => { /* "only the first events shown" */ }
//!         LiveEvent::Closed { session, reason, .. } => { /* mark it ended */ }
//!         _ => {}
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

use super::reader::{Item, Reader, ReaderConfig};

/// The server-assigned identity of a live session.
pub type SessionId = u64;

/// Where to listen (contract §1: `--listen unix:PATH` or `--listen tcp:127.0.0.1:PORT`; and
/// `--listen otlp:HOST:PORT` for the OTLP/HTTP receiver).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// A Unix socket at this path.
    Unix(PathBuf),
    /// A TCP socket; always a loopback address.
    Tcp(SocketAddr),
    /// An OTLP/HTTP receiver (`POST /v1/traces`, see [`crate::trace::otlp_http`]). Loopback
    /// unless another address was written out: `otlp:` and `otlp:PORT` are on 127.0.0.1.
    Otlp(SocketAddr),
}

impl ListenAddr {
    /// A warning for an address other processes than the local user's can reach: an OTLP
    /// receiver on a non-loopback address (`otlp:0.0.0.0:4318`) takes spans from anyone on
    /// the network, without authentication. `None` for loopback and Unix sockets.
    pub fn exposure_warning(&self) -> Option<String> {
        match self {
            ListenAddr::Otlp(a) if !a.ip().is_loopback() => Some(format!(
                "warning: the OTLP receiver on {a} is reachable from the network: anyone who \
                 can reach it can send spans (no TLS, no authentication)"
            )),
            _ => None,
        }
    }
}

/// The OTLP/HTTP default port (as the OpenTelemetry SDKs and the Collector use it).
pub const OTLP_HTTP_PORT: u16 = 4318;

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Unix(p) => write!(f, "unix:{}", p.display()),
            ListenAddr::Tcp(a) => write!(f, "tcp:{a}"),
            ListenAddr::Otlp(a) => write!(f, "otlp:{a}"),
        }
    }
}

impl FromStr for ListenAddr {
    type Err = ListenError;

    /// Parses `unix:PATH` or `tcp:HOST:PORT` where HOST is a loopback address or `localhost`
    /// (IPv6 in brackets: `tcp:[::1]:PORT`), or `otlp:[HOST:]PORT` / `otlp:` (any address
    /// written out is taken: the receiver is meant to take a Collector's exports, which may
    /// come from another machine; without one it is 127.0.0.1, port 4318 by default).
    fn from_str(s: &str) -> Result<Self, ListenError> {
        if let Some(rest) = s.strip_prefix("otlp:") {
            let local = |p: u16| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p);
            let addr = if rest.is_empty() {
                Some(local(OTLP_HTTP_PORT))
            } else if let Some(port) = rest.strip_prefix("localhost:") {
                port.parse::<u16>().ok().map(local)
            } else if let Ok(p) = rest.parse::<u16>() {
                Some(local(p))
            } else {
                rest.parse::<SocketAddr>().ok()
            };
            return addr
                .map(ListenAddr::Otlp)
                .ok_or_else(|| ListenError::BadAddress(s.to_string()));
        }
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(ListenError::BadAddress(s.to_string()));
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        if let Some(rest) = s.strip_prefix("tcp:") {
            let addr = match rest.strip_prefix("localhost:") {
                Some(port) => port
                    .parse::<u16>()
                    .ok()
                    .map(|p| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p)),
                None => rest.parse::<SocketAddr>().ok(),
            }
            .ok_or_else(|| ListenError::BadAddress(s.to_string()))?;
            if !addr.ip().is_loopback() {
                return Err(ListenError::NotLoopback(addr));
            }
            return Ok(ListenAddr::Tcp(addr));
        }
        Err(ListenError::BadAddress(s.to_string()))
    }
}

/// Why a listener could not be started.
#[derive(Debug)]
pub enum ListenError {
    /// Not `unix:PATH` or `tcp:HOST:PORT`.
    BadAddress(String),
    /// A TCP address that is not loopback: the live socket is never exposed to the network.
    NotLoopback(SocketAddr),
    /// The socket's directory is unsafe (world-writable, not ours, not a directory).
    UnsafeDirectory {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Something that is not a stale socket of ours is at the socket path.
    PathOccupied(PathBuf),
    /// Another server is listening on the socket path.
    InUse(PathBuf),
    /// The socket path exceeds what `sun_path` holds.
    PathTooLong(PathBuf),
    /// Another I/O error.
    Io(io::Error),
}

impl fmt::Display for ListenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenError::BadAddress(s) => write!(
                f,
                "bad listen address {s:?}: expected unix:PATH, tcp:127.0.0.1:PORT or \
                 otlp:127.0.0.1:4318"
            ),
            ListenError::NotLoopback(a) => write!(
                f,
                "refusing to listen on {a}: only loopback addresses (127.0.0.1, ::1) are allowed"
            ),
            ListenError::UnsafeDirectory { dir, why } => write!(
                f,
                "refusing to create a socket in {}: {why}; use a private directory (mode 0700)",
                dir.display()
            ),
            ListenError::PathOccupied(p) => write!(
                f,
                "{} exists and is not a socket; refusing to replace it",
                p.display()
            ),
            ListenError::InUse(p) => write!(f, "another server is listening on {}", p.display()),
            ListenError::PathTooLong(p) => write!(
                f,
                "socket path {} is too long (at most {} bytes)",
                p.display(),
                MAX_SOCKET_PATH
            ),
            ListenError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ListenError {}

impl From<io::Error> for ListenError {
    fn from(e: io::Error) -> Self {
        ListenError::Io(e)
    }
}

/// Longest Unix socket path (`sun_path` is 108 bytes on Linux, NUL included).
const MAX_SOCKET_PATH: usize = 107;

/// Settings of a live hub.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// Connections served at once; more are closed at once and counted.
    pub max_connections: usize,
    /// Longest message (line) accepted; longer ones are reported and skipped.
    pub max_message_bytes: usize,
    /// A socket connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// A socket connection that started a line (sent its first byte) and has not finished it
    /// (sent its newline) this long after is closed: a slow-drip client holds no slot.
    pub line_timeout: Duration,
    /// With every slot taken, a new client evicts a connection that has been in the middle
    /// of a line for this long.
    pub evict_slow_after: Duration,
    /// With every slot taken and no slow connection, a new client evicts the connection
    /// that has not completed a line for the longest time, if that is at least this long.
    pub evict_idle_after: Duration,
    /// Batches of one session that may wait in the channel; then the session stops reading
    /// until the consumer takes one (backpressure).
    pub session_queue: usize,
    /// Events one session hands to the consumer at most; later ones are only spooled.
    pub max_held_events: u64,
    /// Bytes (of lines) one session hands to the consumer at most.
    pub max_held_bytes: u64,
    /// Events all sessions of the hub hand to the consumer at most: those of open sessions
    /// and of ended ones without a spool file (a session with one gives its share back when
    /// it ends; the viewer then holds its events only on disk).
    pub max_held_events_total: u64,
    /// Bytes all sessions of the hub hand to the consumer at most, counted as
    /// [`LiveConfig::max_held_events_total`].
    pub max_held_bytes_total: u64,
    /// Where every session's raw stream is written (`NAME.jsonl` per session, the directory
    /// created `0700`, files `0600`); `None`: nothing is written, and a session past the
    /// memory bound is closed.
    pub spool_dir: Option<PathBuf>,
    /// Largest spool file; a session that would write more is closed.
    pub max_spool_bytes: u64,
    /// Spool files of ended sessions kept in [`LiveConfig::spool_dir`]; past it the oldest
    /// are deleted ([`LiveEvent::SpoolRemoved`]). Files of open sessions are never deleted.
    pub max_spool_files: usize,
    /// Bytes of spool files of ended sessions kept; past it the oldest are deleted (the
    /// newest ended one is always kept, whatever its size).
    pub max_spool_dir_bytes: u64,
    /// Bytes read per socket read (one batch holds what one read produced).
    pub read_chunk: usize,
    /// The uid allowed to connect to a Unix socket; `None` means our own.
    pub allowed_uid: Option<u32>,
    /// Answers `gate` events of socket sessions on the same connection (see
    /// [`super::gate`]); `None`: a gate is shown but not answered.
    pub gatekeeper: Option<super::gate::GateFactory>,
    /// OTLP/HTTP: the largest request body accepted (as sent, compressed or not); larger ones
    /// get 413.
    pub otlp_max_body: usize,
    /// OTLP/HTTP: the largest body after gzip is undone; larger ones get 413.
    pub otlp_max_decoded: usize,
    /// OTLP/HTTP: spans one request may carry; a request with more gets 413 before it is
    /// decoded (send smaller batches).
    pub otlp_max_spans: u64,
    /// OTLP/HTTP: attribute values (key-values, array elements, span events and links, at
    /// any depth) one request may carry; past it, 413 before it is decoded.
    pub otlp_max_values: u64,
    /// OTLP/HTTP: bytes of request bodies held at once over all connections, as received
    /// and once gzip is undone. A request that needs more than this alone gets 413; one
    /// that finds it taken by others waits up to [`LiveConfig::otlp_buffer_wait`], then gets
    /// 503 with `Retry-After` (the SDKs and the Collector retry it).
    pub otlp_buffer_total: usize,
    /// OTLP/HTTP: how long a request waits for room in [`LiveConfig::otlp_buffer_total`].
    pub otlp_buffer_wait: Duration,
    /// OTLP/HTTP: a request's headers must arrive within this long (and a kept-alive
    /// connection must send its next request within it).
    pub otlp_header_timeout: Duration,
    /// OTLP/HTTP: a request's body must arrive within this long after its headers.
    pub otlp_body_timeout: Duration,
    /// OTLP/HTTP: requests accepted per second (over all clients, with bursts of twice as
    /// many); beyond, 429 with `Retry-After`, which the SDKs and the Collector retry.
    pub otlp_requests_per_sec: u32,
    /// OTLP/HTTP: traces shown at once as live sessions; a new trace past this ends the
    /// least recently active one.
    pub otlp_max_sessions: usize,
    /// OTLP/HTTP: a trace whose root span arrived ends after this long without new spans
    /// (a trace without a root ends after `idle_timeout`).
    pub otlp_trace_grace: Duration,
}

/// The default of [`LiveConfig::max_spool_files`] (`view --spool-files` changes it).
pub const DEFAULT_SPOOL_FILES: usize = 10_000;

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            max_connections: 64,
            max_message_bytes: 1024 * 1024,
            idle_timeout: Duration::from_secs(600),
            line_timeout: Duration::from_secs(30),
            evict_slow_after: Duration::from_secs(1),
            evict_idle_after: Duration::from_secs(60),
            session_queue: 16,
            max_held_events: 250_000,
            max_held_bytes: 64 << 20,
            max_held_events_total: 1_000_000,
            max_held_bytes_total: 256 << 20,
            spool_dir: None,
            max_spool_bytes: 1 << 30,
            max_spool_files: DEFAULT_SPOOL_FILES,
            max_spool_dir_bytes: 4 << 30,
            read_chunk: 64 * 1024,
            allowed_uid: None,
            gatekeeper: None,
            otlp_max_body: 16 << 20,
            otlp_max_decoded: 64 << 20,
            otlp_max_spans: 65_536,
            otlp_max_values: 262_144,
            otlp_buffer_total: 128 << 20,
            otlp_buffer_wait: Duration::from_secs(5),
            otlp_header_timeout: Duration::from_secs(10),
            otlp_body_timeout: Duration::from_secs(30),
            otlp_requests_per_sec: 200,
            otlp_max_sessions: 256,
            otlp_trace_grace: Duration::from_secs(2),
        }
    }
}

/// The spool directory the TUI uses: `$XDG_CACHE_HOME/doxascope/live/run-SECS-PID` (or
/// under `~/.cache`), one per run; `None` without a home.
pub fn default_spool_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Some(
        base.join("doxascope")
            .join("live")
            .join(format!("run-{secs}-{}", std::process::id())),
    )
}

/// Who is on the other end of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// A Unix-socket peer, identified by the kernel.
    Unix {
        /// Its user id.
        uid: u32,
        /// Its process id, where the platform reports it.
        pid: Option<i32>,
    },
    /// A TCP peer (always loopback).
    Tcp(SocketAddr),
    /// A Unix-socket peer whose credentials could not be read.
    UnixUnknown,
    /// Standard input.
    Stdin,
    /// A stream attached with [`Live::attach`].
    Attached,
    /// Spans of one trace received by the OTLP/HTTP receiver (from any number of requests
    /// and clients; the first client is named).
    Otlp(SocketAddr),
}

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// The peer closed the stream.
    Eof,
    /// Nothing arrived for [`LiveConfig::idle_timeout`].
    IdleTimeout,
    /// A read failed (connection reset, ...).
    Error(String),
    /// [`Live::shutdown`] was called.
    Shutdown,
    /// A line was started and not finished within [`LiveConfig::line_timeout`].
    LineTimeout,
    /// Every slot was taken and a new client needed one; this connection was the slowest or
    /// idlest.
    Evicted,
    /// Past the memory bound with no spool directory to keep the rest.
    MemoryLimit,
    /// The spool file reached [`LiveConfig::max_spool_bytes`].
    SpoolFull,
    /// Writing the spool file failed.
    SpoolError(String),
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Eof => f.write_str("ended"),
            CloseReason::IdleTimeout => f.write_str("closed: idle too long"),
            CloseReason::Error(e) => write!(f, "closed: {e}"),
            CloseReason::Shutdown => f.write_str("closed: shutting down"),
            CloseReason::LineTimeout => f.write_str("closed: a line took too long to arrive"),
            CloseReason::Evicted => f.write_str("closed: evicted to make room for a new client"),
            CloseReason::MemoryLimit => {
                f.write_str("closed: memory limit reached and no spool directory")
            }
            CloseReason::SpoolFull => f.write_str("closed: spool file limit reached"),
            CloseReason::SpoolError(e) => write!(f, "closed: cannot write the spool file: {e}"),
        }
    }
}

/// Why a connection was refused (no session was created for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    /// [`LiveConfig::max_connections`] connections are open.
    TooManyConnections,
    /// A Unix-socket peer running as another user.
    WrongUser {
        /// The peer's uid.
        uid: u32,
    },
    /// The peer's credentials could not be read.
    NoCredentials(String),
    /// The first line looks like an HTTP request (a browser or proxy, not an agent).
    Http,
    /// The stream does not start like JSONL (binary data, TLS, ...).
    NotJsonl,
    /// The peer went silent (or dripped whitespace) before sending anything significant.
    IdleTimeout,
    /// An OTLP/HTTP request was refused (answered 4xx): what was wrong with it. The
    /// connection and the receiver go on.
    OtlpRequest(String),
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::TooManyConnections => f.write_str("too many connections"),
            RejectReason::WrongUser { uid } => write!(f, "peer runs as another user (uid {uid})"),
            RejectReason::NoCredentials(e) => write!(f, "cannot read peer credentials: {e}"),
            RejectReason::Http => f.write_str("HTTP request on the JSONL socket"),
            RejectReason::NotJsonl => f.write_str("stream does not start with a JSON object"),
            RejectReason::IdleTimeout => f.write_str("idle before the first message"),
            RejectReason::OtlpRequest(why) => write!(f, "OTLP request refused: {why}"),
        }
    }
}

/// Holds one of a session's queue slots; dropping it (with the batch) frees the slot.
#[derive(Debug)]
pub struct QueueSlot(#[allow(dead_code)] OwnedSemaphorePermit);

/// One output of the hub.
#[derive(Debug)]
pub enum LiveEvent {
    /// A session started.
    Opened {
        /// Its id.
        session: SessionId,
        /// Its initial display name (`conn-N`, `stdin`).
        name: String,
        /// Who is connected.
        peer: Peer,
        /// The file its raw stream is written to, when spooling.
        spool: Option<PathBuf>,
    },
    /// The session's first `session` field: its display name from now on (untrusted text).
    Named {
        /// The session.
        session: SessionId,
        /// The name it gave itself.
        name: String,
    },
    /// Events and problems read from the session, in order (never empty).
    Items {
        /// The session.
        session: SessionId,
        /// What was read.
        items: Vec<Item>,
        /// Frees the session's queue slot when this event is dropped.
        slot: QueueSlot,
    },
    /// The session reached the memory bound: the consumer was given its first `held`
    /// events; the rest goes to the spool file only (see [`LiveEvent::Opened`]).
    Spilling {
        /// The session.
        session: SessionId,
        /// Events handed over before the bound.
        held: u64,
    },
    /// The session ended. Its last unterminated line, if any, was delivered before this.
    Closed {
        /// The session.
        session: SessionId,
        /// Why.
        reason: CloseReason,
        /// Lines kept only in the spool file (past the memory bound).
        spooled_only: u64,
    },
    /// Spool files of ended sessions were deleted to keep the spool directory within
    /// [`LiveConfig::max_spool_files`] and [`LiveConfig::max_spool_dir_bytes`], oldest
    /// first: their events are gone from disk (and from the viewer, which held them only
    /// there).
    SpoolRemoved {
        /// The files deleted now, oldest first.
        files: Vec<PathBuf>,
        /// Their bytes.
        bytes: u64,
        /// Files deleted over the hub's life.
        total: u64,
    },
    /// A connection was refused.
    Rejected {
        /// Who.
        peer: Peer,
        /// Why.
        reason: RejectReason,
    },
    /// The listener hit an error (e.g. out of file descriptors); it backs off and retries.
    ServerError(String),
}

/// Counters over the hub's life (for a status line and tests).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LiveStats {
    /// Sessions opened.
    pub sessions: u64,
    /// Connections refused, whatever the reason.
    pub rejected: u64,
    /// Lines kept only in spool files (past the memory bound).
    pub spooled_only: u64,
    /// Connections evicted to make room for new clients.
    pub evicted: u64,
    /// Errors from `accept`.
    pub accept_errors: u64,
    /// Spool files of ended sessions deleted to keep the spool directory within bounds.
    pub spool_removed: u64,
}

#[derive(Debug, Default)]
struct Counters {
    sessions: AtomicU64,
    rejected: AtomicU64,
    spooled_only: AtomicU64,
    evicted: AtomicU64,
    accept_errors: AtomicU64,
    held_events: AtomicU64,
    held_bytes: AtomicU64,
    spool_removed: AtomicU64,
}

/// The spool files of ended sessions, oldest first, for the spool directory's bounds.
#[derive(Debug, Default)]
struct SpoolLedger {
    files: std::collections::VecDeque<(PathBuf, u64)>,
    bytes: u64,
}

impl SpoolLedger {
    /// Records an ended session's file and returns the oldest files past the bounds (the
    /// caller deletes them), never the newest one.
    fn ended(
        &mut self,
        path: PathBuf,
        size: u64,
        max_files: usize,
        max_bytes: u64,
    ) -> Vec<(PathBuf, u64)> {
        self.files.push_back((path, size));
        self.bytes = self.bytes.saturating_add(size);
        let mut gone = Vec::new();
        while self.files.len() > 1
            && (self.files.len() > max_files.max(1) || self.bytes > max_bytes)
        {
            let Some((p, n)) = self.files.pop_front() else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(n);
            gone.push((p, n));
        }
        gone
    }
}

/// What the slot policy knows about one open connection (times in ms since the hub began).
#[derive(Debug)]
struct ConnState {
    /// When the unfinished line began, plus one (0: no line in progress).
    line_started: AtomicU64,
    /// When the last complete line arrived (or the connection was accepted).
    last_line: AtomicU64,
    /// Asks the session to close (eviction).
    kill: tokio::sync::Notify,
}

#[derive(Debug)]
struct Shared {
    cfg: LiveConfig,
    tx: mpsc::Sender<LiveEvent>,
    next_id: AtomicU64,
    connections: Arc<Semaphore>,
    counters: Counters,
    shutdown: watch::Receiver<bool>,
    /// Open socket connections, for eviction, by their own numbering.
    conns: Mutex<HashMap<u64, Arc<ConnState>>>,
    next_conn: AtomicU64,
    epoch: Instant,
    /// Spool files of ended sessions.
    spools: Mutex<SpoolLedger>,
}

impl Shared {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// The live hub; cheap to clone (all clones share the channel and limits).
#[derive(Debug, Clone)]
pub struct Live {
    shared: Arc<Shared>,
    shutdown: Arc<watch::Sender<bool>>,
}

/// A running listener. Dropping it stops accepting (open sessions continue) and removes the
/// Unix socket file it created.
#[derive(Debug)]
pub struct Listener {
    addr: ListenAddr,
    task: JoinHandle<()>,
    socket_file: Option<PathBuf>,
}

impl Listener {
    /// The bound address (with the actual port when port 0 was asked for).
    pub fn local_addr(&self) -> &ListenAddr {
        &self.addr
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(p) = &self.socket_file {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Live {
    /// A hub and the receiver of everything its sessions produce.
    pub fn new(cfg: LiveConfig) -> (Live, mpsc::Receiver<LiveEvent>) {
        let per_session = cfg.session_queue.max(1);
        // Data batches are bounded per session by slots; the channel has room for all of them
        // plus each session's few control messages, so sends rarely wait.
        let capacity = cfg
            .max_connections
            .max(1)
            .saturating_mul(per_session.saturating_mul(2).saturating_add(4))
            .saturating_add(64)
            .min(1 << 20);
        let (tx, rx) = mpsc::channel(capacity);
        let (stop_tx, stop_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            connections: Arc::new(Semaphore::new(cfg.max_connections.max(1))),
            cfg,
            tx,
            next_id: AtomicU64::new(1),
            counters: Counters::default(),
            shutdown: stop_rx,
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
            epoch: Instant::now(),
            spools: Mutex::new(SpoolLedger::default()),
        });
        (
            Live {
                shared,
                shutdown: Arc::new(stop_tx),
            },
            rx,
        )
    }

    /// Counters so far.
    pub fn stats(&self) -> LiveStats {
        let c = &self.shared.counters;
        LiveStats {
            sessions: c.sessions.load(Ordering::Relaxed),
            rejected: c.rejected.load(Ordering::Relaxed),
            spooled_only: c.spooled_only.load(Ordering::Relaxed),
            evicted: c.evicted.load(Ordering::Relaxed),
            accept_errors: c.accept_errors.load(Ordering::Relaxed),
            spool_removed: c.spool_removed.load(Ordering::Relaxed),
        }
    }

    /// Closes every session (they end with [`CloseReason::Shutdown`]) and stops listeners
    /// from accepting.
    pub fn shutdown(&self) {
        let _ = self.shutdown.send(true);
    }

    /// Reads stdin as the session `stdin` (no idle or line timeout: a local pipe).
    pub fn stdin(&self) -> SessionId {
        self.start("stdin".to_string(), Peer::Stdin, tokio::io::stdin())
    }

    /// Reads any byte stream as a session named `name` (no idle or line timeout).
    pub fn attach<R>(&self, name: &str, stream: R) -> SessionId
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        self.start(name.to_string(), Peer::Attached, stream)
    }

    /// Starts a session over `stream` for `peer` (no idle or line timeout: the caller ends
    /// it by closing the stream).
    pub(crate) fn start<R>(&self, name: String, peer: Peer, stream: R) -> SessionId
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let mut s = Session::new(shared, id, name, None);
            s.run(stream, peer).await;
        });
        id
    }

    /// A free connection slot: at once, or by evicting the slowest or idlest connection
    /// (see the module docs). None: every connection is busy; the client is refused.
    async fn slot(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(p) = self.shared.connections.clone().try_acquire_owned() {
            return Some(p);
        }
        let now = self.shared.now_ms();
        let slow = u64::try_from(self.shared.cfg.evict_slow_after.as_millis()).unwrap_or(u64::MAX);
        let idle = u64::try_from(self.shared.cfg.evict_idle_after.as_millis()).unwrap_or(u64::MAX);
        let victim = {
            let mut conns = self.shared.conns.lock().unwrap_or_else(|e| e.into_inner());
            let mid_line = conns
                .iter()
                .filter_map(|(k, c)| {
                    let started = c.line_started.load(Ordering::Relaxed);
                    (started > 0 && now.saturating_sub(started - 1) >= slow)
                        .then_some((*k, started))
                })
                .min_by_key(|(_, t)| *t);
            let idlest = || {
                conns
                    .iter()
                    .map(|(k, c)| (*k, c.last_line.load(Ordering::Relaxed)))
                    .filter(|(_, t)| now.saturating_sub(*t) >= idle)
                    .min_by_key(|(_, t)| *t)
            };
            let key = mid_line.or_else(idlest).map(|(k, _)| k)?;
            // Out of the registry at once, so concurrent newcomers pick different victims.
            conns.remove(&key)?
        };
        victim.kill.notify_one();
        self.shared.counters.evicted.fetch_add(1, Ordering::Relaxed);
        // The evicted session ends at its next turn and frees its slot.
        tokio::time::timeout(
            Duration::from_secs(2),
            self.shared.connections.clone().acquire_owned(),
        )
        .await
        .ok()?
        .ok()
    }

    /// Starts listening. Unix sockets get a private directory (created `0700` if missing) and
    /// a peer-uid check; TCP addresses must be loopback.
    pub async fn listen(&self, addr: &ListenAddr) -> Result<Listener, ListenError> {
        match addr {
            ListenAddr::Otlp(a) => {
                let listener = tokio::net::TcpListener::bind(a).await?;
                let bound = ListenAddr::Otlp(listener.local_addr()?);
                let task = tokio::spawn(super::otlp_http::serve(self.clone(), listener));
                Ok(Listener {
                    addr: bound,
                    task,
                    socket_file: None,
                })
            }
            ListenAddr::Tcp(a) => {
                if !a.ip().is_loopback() {
                    return Err(ListenError::NotLoopback(*a));
                }
                let listener = tokio::net::TcpListener::bind(a).await?;
                let bound = ListenAddr::Tcp(listener.local_addr()?);
                let live = self.clone();
                let task = tokio::spawn(async move { live.accept_tcp(listener).await });
                Ok(Listener {
                    addr: bound,
                    task,
                    socket_file: None,
                })
            }
            #[cfg(unix)]
            ListenAddr::Unix(path) => {
                let me = own_uid()?;
                prepare_socket_path(path, me)?;
                let listener = tokio::net::UnixListener::bind(path)?;
                {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
                }
                let allowed = self.shared.cfg.allowed_uid.unwrap_or(me);
                let live = self.clone();
                let task = tokio::spawn(async move { live.accept_unix(listener, allowed).await });
                Ok(Listener {
                    addr: addr.clone(),
                    task,
                    socket_file: Some(path.clone()),
                })
            }
            #[cfg(not(unix))]
            ListenAddr::Unix(_) => Err(ListenError::Io(io::Error::new(
                io::ErrorKind::Unsupported,
                "Unix sockets are not supported on this platform",
            ))),
        }
    }

    /// The hub's settings.
    pub(crate) fn config(&self) -> &LiveConfig {
        &self.shared.cfg
    }

    /// Resolves once [`Live::shutdown`] was called.
    pub(crate) async fn stopped(&self) {
        let mut stop = self.shared.shutdown.clone();
        stopped(&mut stop).await
    }

    /// Reports a refused connection or request (counted; never blocks).
    pub(crate) fn reject(&self, peer: Peer, reason: RejectReason) {
        self.shared
            .counters
            .rejected
            .fetch_add(1, Ordering::Relaxed);
        // Never block the accept loop on a slow consumer: the counter keeps the total.
        let _ = self
            .shared
            .tx
            .try_send(LiveEvent::Rejected { peer, reason });
    }

    /// Counts a connection evicted to make room for a new client (the OTLP receiver's own
    /// slot policy).
    pub(crate) fn count_eviction(&self) {
        self.shared.counters.evicted.fetch_add(1, Ordering::Relaxed);
    }

    /// Backs off after an accept error so `EMFILE` does not spin the loop.
    async fn accept_error(&self, e: io::Error) {
        self.shared
            .counters
            .accept_errors
            .fetch_add(1, Ordering::Relaxed);
        let _ = self
            .shared
            .tx
            .try_send(LiveEvent::ServerError(format!("accept failed: {e}")));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    async fn accept_tcp(self, listener: tokio::net::TcpListener) {
        let mut stop = self.shared.shutdown.clone();
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = stopped(&mut stop) => return,
            };
            match accepted {
                Ok((stream, addr)) => {
                    let peer = Peer::Tcp(addr);
                    let (r, w) = stream.into_split();
                    self.admit(r, Some(Box::new(w)), peer);
                }
                Err(e) => self.accept_error(e).await,
            }
        }
    }

    #[cfg(unix)]
    async fn accept_unix(self, listener: tokio::net::UnixListener, allowed: u32) {
        let mut stop = self.shared.shutdown.clone();
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = stopped(&mut stop) => return,
            };
            match accepted {
                Ok((stream, _)) => {
                    let peer = match stream.peer_cred() {
                        Ok(c) => Peer::Unix {
                            uid: c.uid(),
                            pid: c.pid(),
                        },
                        Err(e) => {
                            self.reject(
                                Peer::UnixUnknown,
                                RejectReason::NoCredentials(e.to_string()),
                            );
                            continue;
                        }
                    };
                    if let Peer::Unix { uid, .. } = peer {
                        if uid != allowed {
                            drop(stream);
                            self.reject(peer, RejectReason::WrongUser { uid });
                            continue;
                        }
                    }
                    let (r, w) = stream.into_split();
                    self.admit(r, Some(Box::new(w)), peer);
                }
                Err(e) => self.accept_error(e).await,
            }
        }
    }

    /// Gives an accepted connection a slot (evicting if need be, without holding up the
    /// accept loop) and serves it, or refuses it.
    fn admit<R>(&self, stream: R, writer: Option<ReplyWriter>, peer: Peer)
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        if let Ok(permit) = self.shared.connections.clone().try_acquire_owned() {
            self.serve(stream, writer, peer, permit);
            return;
        }
        let live = self.clone();
        tokio::spawn(async move {
            match live.slot().await {
                Some(permit) => live.serve(stream, writer, peer, permit),
                None => {
                    drop(stream);
                    live.reject(peer, RejectReason::TooManyConnections);
                }
            }
        });
    }

    /// Serves one accepted connection: checks how it starts, then runs it as a session.
    fn serve<R>(
        &self,
        stream: R,
        writer: Option<ReplyWriter>,
        peer: Peer,
        permit: OwnedSemaphorePermit,
    ) where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let live = self.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let key = live.shared.next_conn.fetch_add(1, Ordering::Relaxed);
            let conn = Arc::new(ConnState {
                line_started: AtomicU64::new(0),
                last_line: AtomicU64::new(live.shared.now_ms()),
                kill: tokio::sync::Notify::new(),
            });
            live.shared
                .conns
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, conn.clone());
            let _registered = Deregister(live.shared.clone(), key);
            let mut stream = stream;
            let idle = live.shared.cfg.idle_timeout;
            let sniffed = tokio::select! {
                r = sniff(&mut stream, idle, live.shared.cfg.line_timeout) => r,
                _ = conn.kill.notified() => return,
            };
            let head = match sniffed {
                Ok(head) => head,
                Err(Some(reason)) => {
                    live.reject(peer, reason);
                    return;
                }
                // Closed before saying anything: nothing to show.
                Err(None) => return,
            };
            let id = live.shared.next_id.fetch_add(1, Ordering::Relaxed);
            let mut s = Session::new(live.shared.clone(), id, format!("conn-{id}"), Some(conn));
            if let (Some(w), Some(f)) = (writer, &live.shared.cfg.gatekeeper) {
                s.gate = Some(Gate {
                    keeper: Some((f.0)()),
                    writer: Some(w),
                });
            }
            s.run(io::Cursor::new(head).chain(stream), peer).await;
        });
    }
}

/// Removes a connection from the eviction registry when its task ends, however it ends.
struct Deregister(Arc<Shared>, u64);

impl Drop for Deregister {
    fn drop(&mut self) {
        self.0
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.1);
    }
}

/// Resolves once [`Live::shutdown`] was called. Dropping every [`Live`] handle is not a
/// shutdown: running sessions go on until their streams end.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Reads the start of a connection until its first significant byte. Ok: the bytes read (to
/// be fed to the reader). Err(Some): refused. Err(None): closed or failed silently.
async fn sniff<R>(
    stream: &mut R,
    idle: Duration,
    line: Duration,
) -> Result<Vec<u8>, Option<RejectReason>>
where
    R: AsyncRead + Unpin,
{
    // Silence is allowed for `idle`; once bytes come, the first significant one must follow
    // within `line` (whitespace dripped slowly is a slot held for nothing).
    let mut deadline: Option<Instant> = None;
    // Blank lines before the first object are legal JSONL; a stream of nothing but
    // whitespace is not an agent.
    const MAX_LEADING: usize = 4096;
    let mut head = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let body = head
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(&head);
        if let Some(&b) = body.iter().find(|b| !b.is_ascii_whitespace()) {
            if b == b'{' {
                return Ok(head);
            }
            return Err(Some(if looks_like_http(body) {
                RejectReason::Http
            } else {
                RejectReason::NotJsonl
            }));
        }
        if head.len() > MAX_LEADING {
            return Err(Some(RejectReason::NotJsonl));
        }
        let wait = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()).min(idle),
            None => idle,
        };
        match tokio::time::timeout(wait, stream.read(&mut buf)).await {
            Err(_) => return Err(Some(RejectReason::IdleTimeout)),
            Ok(Ok(0)) | Ok(Err(_)) => return Err(None),
            Ok(Ok(n)) => {
                head.extend_from_slice(&buf[..n]);
                deadline.get_or_insert_with(|| Instant::now() + line);
            }
        }
    }
}

/// Whether the bytes start like an HTTP request or response line.
fn looks_like_http(bytes: &[u8]) -> bool {
    const STARTS: &[&[u8]] = &[
        b"GET ",
        b"POST ",
        b"PUT ",
        b"HEAD ",
        b"DELETE ",
        b"OPTIONS ",
        b"PATCH ",
        b"CONNECT ",
        b"TRACE ",
        b"PRI ",
        b"HTTP/",
    ];
    let trimmed = bytes.trim_ascii_start();
    STARTS.iter().any(|s| {
        let n = s.len().min(trimmed.len());
        // A prefix of a method counts when the read stopped early ("GE").
        n > 0 && trimmed[..n].eq_ignore_ascii_case(&s[..n])
    })
}

/// Our effective uid, as the kernel reports it to a socket peer (no `unsafe` needed).
#[cfg(unix)]
fn own_uid() -> io::Result<u32> {
    let (a, _b) = tokio::net::UnixStream::pair()?;
    Ok(a.peer_cred()?.uid())
}

/// Makes the socket's directory private (or checks it is) and clears a stale socket.
#[cfg(unix)]
fn prepare_socket_path(path: &Path, me: u32) -> Result<(), ListenError> {
    use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt};
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(ListenError::PathTooLong(path.to_path_buf()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
    }
    let unsafe_dir = |why: String| ListenError::UnsafeDirectory {
        dir: dir.clone(),
        why,
    };
    let meta = std::fs::metadata(&dir)?;
    if !meta.is_dir() {
        return Err(unsafe_dir("not a directory".into()));
    }
    if meta.uid() != me {
        return Err(unsafe_dir(format!(
            "owned by uid {}, not by us (uid {me})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o002 != 0 {
        return Err(unsafe_dir("world-writable".into()));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => {
            match std::os::unix::net::UnixStream::connect(path) {
                Ok(_) => return Err(ListenError::InUse(path.to_path_buf())),
                // Nobody answers: a stale socket left by a crash.
                Err(_) => std::fs::remove_file(path)?,
            }
        }
        Ok(_) => return Err(ListenError::PathOccupied(path.to_path_buf())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// A session's spool file: its raw stream, as received.
struct Spool {
    path: PathBuf,
    out: io::BufWriter<std::fs::File>,
    written: u64,
}

impl Spool {
    /// Creates `DIR/NAME.jsonl` (the directory `0700` when missing, the file `0600`, never
    /// over an existing file).
    fn create(dir: &Path, name: &str) -> io::Result<Spool> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
            let path = dir.join(format!("{name}.jsonl"));
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?;
            Ok(Spool {
                path,
                out: io::BufWriter::with_capacity(64 * 1024, file),
                written: 0,
            })
        }
        #[cfg(not(unix))]
        {
            std::fs::create_dir_all(dir)?;
            let path = dir.join(format!("{name}.jsonl"));
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            Ok(Spool {
                path,
                out: io::BufWriter::with_capacity(64 * 1024, file),
                written: 0,
            })
        }
    }
}

/// One running session.
struct Session {
    shared: Arc<Shared>,
    id: SessionId,
    name: String,
    /// Socket sessions: timeouts apply and the slot policy sees them.
    conn: Option<Arc<ConnState>>,
    slots: Arc<Semaphore>,
    named: bool,
    spool: Option<Spool>,
    /// Events and bytes handed to the consumer.
    held_events: u64,
    held_bytes: u64,
    /// Past the memory bound: bytes go to the spool only.
    spilling: bool,
    /// Lines kept only in the spool.
    spooled_only: u64,
    /// When the unfinished line began.
    line_started: Option<Instant>,
    /// Socket sessions with a gatekeeper: who answers `gate` events, and where.
    gate: Option<Gate>,
}

/// Where a connection's replies go.
type ReplyWriter = Box<dyn tokio::io::AsyncWrite + Unpin + Send + Sync>;

/// A session's gate: its keeper (away while it answers) and the connection's write half
/// (dropped once a reply cannot be written).
struct Gate {
    keeper: Option<Box<dyn super::gate::Gatekeeper>>,
    writer: Option<ReplyWriter>,
}

/// How long a reply may wait for a client that does not read before it is given up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// How a read turn ended the session, if it did.
type Turn = Result<(), Option<CloseReason>>;

impl Session {
    fn new(shared: Arc<Shared>, id: SessionId, name: String, conn: Option<Arc<ConnState>>) -> Self {
        let slots = Arc::new(Semaphore::new(shared.cfg.session_queue.max(1)));
        Session {
            shared,
            id,
            name,
            conn,
            slots,
            named: false,
            spool: None,
            held_events: 0,
            held_bytes: 0,
            spilling: false,
            spooled_only: 0,
            line_started: None,
            gate: None,
        }
    }

    async fn send(&self, ev: LiveEvent) -> bool {
        self.shared.tx.send(ev).await.is_ok()
    }

    async fn run<R: AsyncRead + Unpin>(&mut self, mut stream: R, peer: Peer) {
        self.shared
            .counters
            .sessions
            .fetch_add(1, Ordering::Relaxed);
        let mut spool_error = None;
        if let Some(dir) = &self.shared.cfg.spool_dir {
            // Named by the server-assigned id only: a client's name never reaches a path.
            let file = match peer {
                Peer::Stdin => format!("stdin-{}", self.id),
                _ => format!("conn-{}", self.id),
            };
            match Spool::create(dir, &file) {
                Ok(sp) => self.spool = Some(sp),
                Err(e) => spool_error = Some(CloseReason::SpoolError(e.to_string())),
            }
        }
        let opened = LiveEvent::Opened {
            session: self.id,
            name: self.name.clone(),
            peer,
            spool: self.spool.as_ref().map(|s| s.path.clone()),
        };
        if !self.send(opened).await {
            return;
        }
        let reader_cfg = ReaderConfig {
            max_line_bytes: self.shared.cfg.max_message_bytes,
        };
        let mut reader = Reader::new(&self.name, reader_cfg);
        let mut buf = vec![0u8; self.shared.cfg.read_chunk.max(1)];
        let mut stop = self.shared.shutdown.clone();
        let conn = self.conn.clone();
        let idle = conn.as_ref().map(|_| self.shared.cfg.idle_timeout);
        let line_timeout = self.shared.cfg.line_timeout;
        let reason = loop {
            if let Some(r) = spool_error.take() {
                break r;
            }
            // The nearer of the idle deadline and the unfinished line's deadline.
            let line_left = match (&conn, self.line_started) {
                (Some(_), Some(t)) => Some(line_timeout.saturating_sub(t.elapsed())),
                _ => None,
            };
            let wait = match (idle, line_left) {
                (Some(i), Some(l)) => Some((i.min(l), l <= i)),
                (Some(i), None) => Some((i, false)),
                (None, _) => None,
            };
            let read = async {
                match wait {
                    Some((t, _)) => tokio::time::timeout(t, stream.read(&mut buf))
                        .await
                        .map_err(|_| ()),
                    None => Ok(stream.read(&mut buf).await),
                }
            };
            let kill = async {
                match &conn {
                    Some(c) => c.kill.notified().await,
                    None => std::future::pending().await,
                }
            };
            let got = tokio::select! {
                r = read => r,
                _ = stopped(&mut stop) => break CloseReason::Shutdown,
                _ = kill => break CloseReason::Evicted,
            };
            let n = match got {
                Err(()) if wait.is_some_and(|(_, line)| line) => break CloseReason::LineTimeout,
                Err(()) => break CloseReason::IdleTimeout,
                Ok(Ok(0)) => break CloseReason::Eof,
                Ok(Ok(n)) => n,
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => break CloseReason::Error(e.to_string()),
            };
            match self.take(&buf[..n], &mut reader).await {
                Ok(()) => {}
                Err(None) => return,
                Err(Some(r)) => break r,
            }
        };
        // A last line without its newline: decoded if complete, else reported.
        if !self.spilling {
            let mut items = Vec::new();
            reader.finish(&mut items);
            if !self.deliver(items).await {
                return;
            }
        } else if reader.pending_bytes() > 0 {
            self.spooled_only += 1;
        }
        if let Some(sp) = &mut self.spool {
            let _ = sp.out.flush();
        }
        self.shared
            .counters
            .spooled_only
            .fetch_add(self.spooled_only, Ordering::Relaxed);
        self.give_back_held();
        // Older files deleted are told first: once the consumer sees the session end, the
        // spool directory is within its bounds again.
        if let Some(removed) = self.bound_spool_dir() {
            let _ = self.send(removed).await;
        }
        let _ = self
            .send(LiveEvent::Closed {
                session: self.id,
                reason,
                spooled_only: self.spooled_only,
            })
            .await;
    }

    /// A session with a spool file gives its share of the hub's held totals back when it
    /// ends: its events are on disk, and the viewer drops them from memory (re-reading the
    /// file when the session is shown). Without a spool file the viewer keeps them, so they
    /// stay counted for the hub's life.
    fn give_back_held(&mut self) {
        if self.spool.is_none() {
            return;
        }
        let c = &self.shared.counters;
        let _ = c
            .held_events
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(self.held_events))
            });
        let _ = c
            .held_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(self.held_bytes))
            });
    }

    /// Records the ended session's spool file and deletes the oldest ended ones past the
    /// spool directory's bounds; what was deleted, to tell the consumer.
    fn bound_spool_dir(&mut self) -> Option<LiveEvent> {
        let sp = self.spool.take()?;
        let cfg = &self.shared.cfg;
        let gone = self
            .shared
            .spools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ended(
                sp.path.clone(),
                sp.written,
                cfg.max_spool_files,
                cfg.max_spool_dir_bytes,
            );
        drop(sp);
        if gone.is_empty() {
            return None;
        }
        let mut files = Vec::with_capacity(gone.len());
        let mut bytes = 0;
        for (p, n) in gone {
            // Already gone (deleted by the user) counts as deleted.
            let _ = std::fs::remove_file(&p);
            bytes += n;
            files.push(p);
        }
        let total = self
            .shared
            .counters
            .spool_removed
            .fetch_add(files.len() as u64, Ordering::Relaxed)
            + files.len() as u64;
        Some(LiveEvent::SpoolRemoved {
            files,
            bytes,
            total,
        })
    }

    /// Handles the bytes of one read: spool, then the consumer while under the bound.
    async fn take(&mut self, chunk: &[u8], reader: &mut Reader) -> Turn {
        if let Some(sp) = &mut self.spool {
            if sp.written.saturating_add(chunk.len() as u64) > self.shared.cfg.max_spool_bytes {
                return Err(Some(CloseReason::SpoolFull));
            }
            if let Err(e) = sp.out.write_all(chunk) {
                return Err(Some(CloseReason::SpoolError(e.to_string())));
            }
            sp.written += chunk.len() as u64;
        }
        let mut rest = chunk;
        if !self.spilling {
            let cut = self.within_bounds(chunk, reader.pending_bytes() > 0);
            self.feed(&chunk[..cut], reader).await?;
            rest = &chunk[cut..];
            // Out of bounds, at a line boundary: everything after goes to the spool only.
            if cut < chunk.len() && reader.pending_bytes() == 0 {
                if self.spool.is_none() {
                    return Err(Some(CloseReason::MemoryLimit));
                }
                self.spilling = true;
                self.line_started = None;
                let held = self.held_events;
                if !self
                    .send(LiveEvent::Spilling {
                        session: self.id,
                        held,
                    })
                    .await
                {
                    return Err(None);
                }
            } else {
                rest = &[];
            }
        }
        if self.spilling {
            self.spooled_only += memchr::memchr_iter(b'\n', rest).count() as u64;
            // The slot policy still sees lines arrive.
            if let Some(c) = &self.conn {
                if rest.contains(&b'\n') {
                    c.last_line.store(self.shared.now_ms(), Ordering::Relaxed);
                }
            }
            return Ok(());
        }
        self.feed(rest, reader).await
    }

    /// How much of `chunk` may still go to the consumer: whole lines (one event per line)
    /// within the session's and the hub's bounds on events and bytes. A line in progress
    /// (`pending`) is always completed, so what the consumer holds ends at a line boundary.
    fn within_bounds(&self, chunk: &[u8], pending: bool) -> usize {
        let cfg = &self.shared.cfg;
        let c = &self.shared.counters;
        let events = cfg.max_held_events.saturating_sub(self.held_events).min(
            cfg.max_held_events_total
                .saturating_sub(c.held_events.load(Ordering::Relaxed)),
        );
        let bytes = cfg.max_held_bytes.saturating_sub(self.held_bytes).min(
            cfg.max_held_bytes_total
                .saturating_sub(c.held_bytes.load(Ordering::Relaxed)),
        );
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        let mut cut = 0;
        let mut lines = 0u64;
        for i in memchr::memchr_iter(b'\n', chunk) {
            if lines >= events || i + 1 > bytes {
                break;
            }
            lines += 1;
            cut = i + 1;
        }
        if lines < events && chunk.len() <= bytes {
            return chunk.len();
        }
        if cut == 0 && pending {
            return memchr::memchr(b'\n', chunk).map_or(chunk.len(), |i| i + 1);
        }
        cut
    }

    /// Feeds bytes to the reader and hands what it decodes to the consumer.
    async fn feed(&mut self, bytes: &[u8], reader: &mut Reader) -> Turn {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut items = Vec::new();
        reader.feed(bytes, &mut items);
        let items = self.gated(items).await;
        let n = bytes.len() as u64;
        self.held_bytes += n;
        self.shared
            .counters
            .held_bytes
            .fetch_add(n, Ordering::Relaxed);
        let events = items.len() as u64;
        self.held_events += events;
        self.shared
            .counters
            .held_events
            .fetch_add(events, Ordering::Relaxed);
        let pending = reader.pending_bytes() > 0;
        let finished_line = bytes.contains(&b'\n');
        if !pending {
            self.line_started = None;
        } else if finished_line || self.line_started.is_none() {
            self.line_started = Some(Instant::now());
        }
        if let Some(c) = &self.conn {
            let now = self.shared.now_ms();
            if finished_line {
                c.last_line.store(now, Ordering::Relaxed);
            }
            let started = match self.line_started {
                Some(t) => {
                    now.saturating_sub(u64::try_from(t.elapsed().as_millis()).unwrap_or(0)) + 1
                }
                None => 0,
            };
            c.line_started.store(started, Ordering::Relaxed);
        }
        if self.deliver(items).await {
            Ok(())
        } else {
            Err(None)
        }
    }

    /// Shows the items to the gatekeeper and answers their gates on the connection; returns
    /// the items with each gate's record after it.
    async fn gated(&mut self, items: Vec<Item>) -> Vec<Item> {
        let Some(gate) = &mut self.gate else {
            return items;
        };
        let mut out = Vec::with_capacity(items.len() + 1);
        for item in items {
            let Some(mut keeper) = gate.keeper.take() else {
                out.push(item);
                continue;
            };
            let Item::Event(ev) = &item else {
                keeper.observe(&item);
                gate.keeper = Some(keeper);
                out.push(item);
                continue;
            };
            if !matches!(ev.body, super::event::Body::Gate(_)) {
                keeper.observe(&item);
                gate.keeper = Some(keeper);
                out.push(item);
                continue;
            }
            // The solver blocks: answer on a blocking thread. A keeper that panics is gone,
            // and the session's later gates go unanswered (the session itself goes on).
            let ev = ev.clone();
            let Ok((mut keeper, answer)) = tokio::task::spawn_blocking(move || {
                let a = keeper.answer(&ev);
                (keeper, a)
            })
            .await
            else {
                out.push(item);
                continue;
            };
            if let Some(w) = &mut gate.writer {
                let line = format!("{}\n", answer.reply);
                let sent = tokio::time::timeout(REPLY_TIMEOUT, async {
                    w.write_all(line.as_bytes()).await?;
                    w.flush().await
                })
                .await;
                if !matches!(sent, Ok(Ok(()))) {
                    gate.writer = None;
                }
            }
            keeper.observe(&item);
            out.push(item);
            if let Some(record) = answer.record {
                let mut r = Reader::new(&self.name, ReaderConfig::default());
                let mut recorded = Vec::new();
                r.feed(format!("{record}\n").as_bytes(), &mut recorded);
                for it in recorded {
                    keeper.observe(&it);
                    out.push(it);
                }
            }
            gate.keeper = Some(keeper);
        }
        out
    }

    /// Sends a batch once the session has a free queue slot (backpressure: the stream is
    /// not read meanwhile). Returns false once the consumer is gone.
    async fn deliver(&mut self, items: Vec<Item>) -> bool {
        if items.is_empty() {
            return true;
        }
        if !self.named {
            let name = items.iter().find_map(|it| match it {
                Item::Event(ev) if ev.session_given => Some(ev.session.to_string()),
                _ => None,
            });
            if let Some(name) = name {
                self.named = true;
                if !self
                    .send(LiveEvent::Named {
                        session: self.id,
                        name,
                    })
                    .await
                {
                    return false;
                }
            }
        }
        let Ok(permit) = self.slots.clone().acquire_owned().await else {
            return false;
        };
        self.send(LiveEvent::Items {
            session: self.id,
            items,
            slot: QueueSlot(permit),
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_request_and_response_lines_are_recognised() {
        for yes in [
            &b"GET / HTTP/1.1"[..],
            b"post /x HTTP/1.1",
            b"  OPTIONS * HTTP/1.1",
            b"HTTP/1.1 200 OK",
            b"PRI * HTTP/2.0",
            b"GE",
        ] {
            assert!(looks_like_http(yes), "{:?}", String::from_utf8_lossy(yes));
        }
        for no in [&b"\x16\x03\x01"[..], b"GETX", b"hello", b"[1,2]", b""] {
            assert!(!looks_like_http(no), "{:?}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn listen_addresses_print_as_they_parse() {
        for s in [
            "unix:/run/user/1000/d.sock",
            "tcp:127.0.0.1:7357",
            "tcp:[::1]:9",
        ] {
            let a: ListenAddr = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(a.to_string(), s);
        }
    }
}
