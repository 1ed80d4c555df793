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
//! - **slowloris**: a connection silent for [`LiveConfig::idle_timeout`] is closed;
//! - **floods**: at most [`LiveConfig::max_connections`] connections (more are closed at once
//!   and counted); accept errors such as `EMFILE` back off instead of spinning;
//! - **slow consumer**: each session may have at most [`LiveConfig::session_queue`] batches
//!   waiting in the channel. A socket session that outruns the consumer drops batches, counts
//!   them and reports [`LiveEvent::Dropped`] as soon as a slot is free again (before its next
//!   delivered batch, or while it is quiet), so one flooding
//!   session never starves the others or grows memory. Stdin (and [`Live::attach`] with
//!   `lossless`) waits instead: a local pipe can simply be read later.
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
//!         LiveEvent::Dropped { session, count } => { /* show "count events dropped" */ }
//!         LiveEvent::Closed { session, reason, .. } => { /* mark it ended */ }
//!         _ => {}
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

use super::reader::{Item, Reader, ReaderConfig};

/// The server-assigned identity of a live session.
pub type SessionId = u64;

/// Where to listen (contract §1: `--listen unix:PATH` or `--listen tcp:127.0.0.1:PORT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// A Unix socket at this path.
    Unix(PathBuf),
    /// A TCP socket; always a loopback address.
    Tcp(SocketAddr),
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Unix(p) => write!(f, "unix:{}", p.display()),
            ListenAddr::Tcp(a) => write!(f, "tcp:{a}"),
        }
    }
}

impl FromStr for ListenAddr {
    type Err = ListenError;

    /// Parses `unix:PATH` or `tcp:HOST:PORT` where HOST is a loopback address or `localhost`
    /// (IPv6 in brackets: `tcp:[::1]:PORT`).
    fn from_str(s: &str) -> Result<Self, ListenError> {
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
                "bad listen address {s:?}: expected unix:PATH or tcp:127.0.0.1:PORT"
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
    /// Batches of one session that may wait in the channel.
    pub session_queue: usize,
    /// Bytes read per socket read (one batch holds what one read produced).
    pub read_chunk: usize,
    /// The uid allowed to connect to a Unix socket; `None` means our own.
    pub allowed_uid: Option<u32>,
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            max_connections: 64,
            max_message_bytes: 1024 * 1024,
            idle_timeout: Duration::from_secs(600),
            session_queue: 256,
            read_chunk: 64 * 1024,
            allowed_uid: None,
        }
    }
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
    /// The peer went silent before sending anything significant.
    IdleTimeout,
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
    /// Items were dropped because the consumer fell behind (since the last report). Sent when
    /// the session's queue has room again, before any later batch, so it sits where the gap
    /// is in the stream.
    Dropped {
        /// The session.
        session: SessionId,
        /// How many items (events and problems) were dropped.
        count: u64,
    },
    /// The session ended. Its last unterminated line, if any, was delivered before this.
    Closed {
        /// The session.
        session: SessionId,
        /// Why.
        reason: CloseReason,
        /// Items dropped over the session's life.
        dropped_total: u64,
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
    /// Items dropped because a consumer fell behind.
    pub dropped_items: u64,
    /// Errors from `accept`.
    pub accept_errors: u64,
}

#[derive(Debug, Default)]
struct Counters {
    sessions: AtomicU64,
    rejected: AtomicU64,
    dropped_items: AtomicU64,
    accept_errors: AtomicU64,
}

#[derive(Debug)]
struct Shared {
    cfg: LiveConfig,
    tx: mpsc::Sender<LiveEvent>,
    next_id: AtomicU64,
    connections: Arc<Semaphore>,
    counters: Counters,
    shutdown: watch::Receiver<bool>,
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
            dropped_items: c.dropped_items.load(Ordering::Relaxed),
            accept_errors: c.accept_errors.load(Ordering::Relaxed),
        }
    }

    /// Closes every session (they end with [`CloseReason::Shutdown`]) and stops listeners
    /// from accepting.
    pub fn shutdown(&self) {
        let _ = self.shutdown.send(true);
    }

    /// Reads stdin as the session `stdin` (lossless, no idle timeout).
    pub fn stdin(&self) -> SessionId {
        self.start(
            "stdin".to_string(),
            Peer::Stdin,
            tokio::io::stdin(),
            true,
            None,
        )
    }

    /// Reads any byte stream as a session named `name`. `lossless` makes it wait for the
    /// consumer instead of dropping (for trusted local streams); no idle timeout applies.
    pub fn attach<R>(&self, name: &str, stream: R, lossless: bool) -> SessionId
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        self.start(name.to_string(), Peer::Attached, stream, lossless, None)
    }

    fn start<R>(
        &self,
        name: String,
        peer: Peer,
        stream: R,
        lossless: bool,
        idle: Option<Duration>,
    ) -> SessionId
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let mut s = Session::new(shared, id, name, lossless, idle);
            s.run(stream, peer).await;
        });
        id
    }

    /// Starts listening. Unix sockets get a private directory (created `0700` if missing) and
    /// a peer-uid check; TCP addresses must be loopback.
    pub async fn listen(&self, addr: &ListenAddr) -> Result<Listener, ListenError> {
        match addr {
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

    fn reject(&self, peer: Peer, reason: RejectReason) {
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
                    let Ok(permit) = self.shared.connections.clone().try_acquire_owned() else {
                        drop(stream);
                        self.reject(peer, RejectReason::TooManyConnections);
                        continue;
                    };
                    self.serve(stream, peer, permit);
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
                    let Ok(permit) = self.shared.connections.clone().try_acquire_owned() else {
                        drop(stream);
                        self.reject(peer, RejectReason::TooManyConnections);
                        continue;
                    };
                    self.serve(stream, peer, permit);
                }
                Err(e) => self.accept_error(e).await,
            }
        }
    }

    /// Serves one accepted connection: checks how it starts, then runs it as a session.
    fn serve<R>(&self, stream: R, peer: Peer, permit: OwnedSemaphorePermit)
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let live = self.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut stream = stream;
            let idle = live.shared.cfg.idle_timeout;
            let head = match sniff(&mut stream, idle).await {
                Ok(head) => head,
                Err(Some(reason)) => {
                    live.reject(peer, reason);
                    return;
                }
                // Closed before saying anything: nothing to show.
                Err(None) => return,
            };
            let id = live.shared.next_id.fetch_add(1, Ordering::Relaxed);
            let mut s = Session::new(
                live.shared.clone(),
                id,
                format!("conn-{id}"),
                false,
                Some(idle),
            );
            s.run(io::Cursor::new(head).chain(stream), peer).await;
        });
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
async fn sniff<R>(stream: &mut R, idle: Duration) -> Result<Vec<u8>, Option<RejectReason>>
where
    R: AsyncRead + Unpin,
{
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
        match tokio::time::timeout(idle, stream.read(&mut buf)).await {
            Err(_) => return Err(Some(RejectReason::IdleTimeout)),
            Ok(Ok(0)) | Ok(Err(_)) => return Err(None),
            Ok(Ok(n)) => head.extend_from_slice(&buf[..n]),
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

/// One running session.
struct Session {
    shared: Arc<Shared>,
    id: SessionId,
    name: String,
    lossless: bool,
    idle: Option<Duration>,
    slots: Arc<Semaphore>,
    named: bool,
    dropped_since: u64,
    dropped_total: u64,
}

impl Session {
    fn new(
        shared: Arc<Shared>,
        id: SessionId,
        name: String,
        lossless: bool,
        idle: Option<Duration>,
    ) -> Self {
        let slots = Arc::new(Semaphore::new(shared.cfg.session_queue.max(1)));
        Session {
            shared,
            id,
            name,
            lossless,
            idle,
            slots,
            named: false,
            dropped_since: 0,
            dropped_total: 0,
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
        let opened = LiveEvent::Opened {
            session: self.id,
            name: self.name.clone(),
            peer,
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
        let reason = loop {
            let idle = self.idle;
            let read = async {
                match idle {
                    Some(t) => tokio::time::timeout(t, stream.read(&mut buf))
                        .await
                        .map_err(|_| ()),
                    None => Ok(stream.read(&mut buf).await),
                }
            };
            // Drops are reported as soon as the consumer has caught up with this session,
            // even if the session then stays quiet.
            let report_drops = self.dropped_since > 0;
            let slots = self.slots.clone();
            let step = tokio::select! {
                r = read => Some(r),
                _ = stopped(&mut stop) => break CloseReason::Shutdown,
                _ = slots.acquire(), if report_drops => None,
            };
            let Some(got) = step else {
                let count = std::mem::take(&mut self.dropped_since);
                if !self
                    .send(LiveEvent::Dropped {
                        session: self.id,
                        count,
                    })
                    .await
                {
                    return;
                }
                continue;
            };
            let n = match got {
                Err(()) => break CloseReason::IdleTimeout,
                Ok(Ok(0)) => break CloseReason::Eof,
                Ok(Ok(n)) => n,
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => break CloseReason::Error(e.to_string()),
            };
            let mut items = Vec::new();
            reader.feed(&buf[..n], &mut items);
            if !self.deliver(items).await {
                return;
            }
        };
        // A last line without its newline: decoded if complete, else reported.
        let mut items = Vec::new();
        reader.finish(&mut items);
        if !self.deliver(items).await {
            return;
        }
        if self.dropped_since > 0 {
            let count = std::mem::take(&mut self.dropped_since);
            let _ = self
                .send(LiveEvent::Dropped {
                    session: self.id,
                    count,
                })
                .await;
        }
        let _ = self
            .send(LiveEvent::Closed {
                session: self.id,
                reason,
                dropped_total: self.dropped_total,
            })
            .await;
    }

    /// Sends a batch if the session has a free queue slot; otherwise counts it as dropped
    /// (or waits, for lossless sessions). Returns false once the consumer is gone.
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
        let permit = if self.lossless {
            match self.slots.clone().acquire_owned().await {
                Ok(p) => p,
                Err(_) => return false,
            }
        } else {
            match self.slots.clone().try_acquire_owned() {
                Ok(p) => p,
                Err(_) => {
                    let n = items.len() as u64;
                    self.dropped_since += n;
                    self.dropped_total += n;
                    self.shared
                        .counters
                        .dropped_items
                        .fetch_add(n, Ordering::Relaxed);
                    return true;
                }
            }
        };
        if self.dropped_since > 0 {
            let count = std::mem::take(&mut self.dropped_since);
            if !self
                .send(LiveEvent::Dropped {
                    session: self.id,
                    count,
                })
                .await
            {
                return false;
            }
        }
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
