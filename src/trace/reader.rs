//! The streaming JSONL reader: arbitrary byte chunks in, events and problems out.
//!
//! The reader is sans-IO: [`Reader::feed`] takes whatever chunk a file read, a socket or a
//! test produced, and [`Reader::finish`] flushes a last line without a newline. The output
//! depends only on the bytes, never on how they were split (a property test checks this).
//!
//! Framing rules:
//! - lines end at LF; a CR before the LF is dropped (CRLF files read like LF files);
//! - a UTF-8 byte-order mark is skipped at byte offset 0 only; at the start of a later line it
//!   is skipped with a warning (that is what `cat a.jsonl b.jsonl` produces);
//! - blank and whitespace-only lines are skipped silently;
//! - a line longer than [`ReaderConfig::max_line_bytes`] (counted before the LF) is reported
//!   and skipped; its bytes are counted but never buffered, so memory stays bounded by the cap
//!   whatever the input;
//! - invalid UTF-8 is reported with its absolute byte offset;
//! - JSON errors are reported with line and column (columns count characters, 1-based);
//!   serde_json's nesting limit (128) stays on, so hostile nesting is a line error, not a
//!   stack overflow.
//!
//! Problems are values in the output ([`Item::Problem`]), in line order with the events: a bad
//! line never stops the reader and is never dropped silently. Duplicate explicit `seq` values
//! and timestamps that go backwards within a session are warnings; the event is kept.
//!
//! Internally the reader is two stages. A `Framer` frames lines and decodes each one on its own
//! (its output depends only on the bytes and their position in the stream); `Sessions` then
//! interns session names and runs the per-session checks, in line order. The split is what
//! lets whole-file loads ([`TraceLog::read_from`](super::TraceLog::read_from)) decode on
//! several threads and still produce exactly this reader's output.

use std::fmt;

use super::brief::{Brief, BriefItem, Briefed, Gist};
use super::event::{Body, Event, Extra, FORMAT_VERSION, FileName, Kind, Origin, Text, Timestamp};
use super::fields::scan::scan_bytes;
use super::fields::{FieldError, Fields, ShortNames, build_body, decode_line, short_name_words};

/// The default line-length cap: 4 MiB, far above any sane event and small enough that a
/// runaway writer cannot exhaust memory.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Reader settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderConfig {
    /// Lines longer than this many bytes (before the LF) are reported and skipped.
    pub max_line_bytes: usize,
}

impl Default for ReaderConfig {
    fn default() -> Self {
        ReaderConfig {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The line was kept but something about it is suspicious.
    Warning,
    /// The line could not be read as an event and was skipped.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// What kind of problem it is (stable, for filtering and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemCode {
    /// The line is not valid JSON (or not one JSON object).
    Json,
    /// The line is not valid UTF-8.
    InvalidUtf8,
    /// The line exceeds the length cap.
    LineTooLong,
    /// The line has no `kind`.
    MissingKind,
    /// `v` is newer than this reader.
    UnsupportedVersion,
    /// A field has the wrong type or value.
    Field,
    /// A byte-order mark at the start of a line other than the first.
    MisplacedBom,
    /// The same explicit `seq` twice in one session.
    DuplicateSeq,
    /// `ts` earlier than the previous event's in the same session.
    TimeBackwards,
    /// A log is full (more than `u32::MAX` events).
    TooManyEvents,
}

/// A problem found while reading, with its location.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Error (line skipped) or warning (line kept).
    pub severity: Severity,
    /// What kind of problem.
    pub code: ProblemCode,
    /// The line it is on (file, 1-based line, byte offset of the line start).
    pub origin: Origin,
    /// 1-based column in characters within the line (1 when the whole line is concerned).
    pub column: u64,
    /// Absolute byte offset of the problem in the stream, when more precise than the line.
    pub byte_offset: Option<u64>,
    /// The field concerned, for field problems.
    pub field: Option<String>,
    /// The message. It may quote the input: sanitize it before showing it on a terminal.
    pub message: String,
    /// What the line held, for a line that could not be read as an event (`None` for a
    /// warning about a line that was kept, whose event shows it).
    pub excerpt: Option<Excerpt>,
}

/// How many bytes of a bad line a [`Problem`] keeps: enough to recognise the line, bounded so
/// that a file of bad lines costs about what its problem messages cost.
pub const EXCERPT_BYTES: usize = 96;

/// The start of a bad line, as read (it may not be UTF-8: show it with
/// [`crate::sanitize::sanitize_bytes`] or escaped likewise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The line's first bytes (at most [`EXCERPT_BYTES`], cut at a character boundary when
    /// the line is UTF-8), without its line end; empty when the line was not kept (over the
    /// length cap).
    pub bytes: Box<[u8]>,
    /// The line's length in bytes (without its line end).
    pub len: u64,
}

impl Excerpt {
    /// The excerpt of `line`.
    pub fn of(line: &[u8]) -> Excerpt {
        let mut end = line.len().min(EXCERPT_BYTES);
        // Not in the middle of a character (a UTF-8 character is at most four bytes).
        let floor = end.saturating_sub(3);
        while end > floor && end < line.len() && (line[end] & 0xC0) == 0x80 {
            end -= 1;
        }
        Excerpt {
            bytes: line[..end].into(),
            len: line.len() as u64,
        }
    }
}

/// One output of the reader, in line order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A well-formed event.
    Event(Event),
    /// A problem with a line.
    Problem(Problem),
}

/// A set of `seq` values stored as sorted disjoint ranges: the usual increasing-by-one
/// sequence costs one range, not one entry per event.
#[derive(Debug, Default)]
struct SeqSet {
    ranges: Vec<(u64, u64)>,
}

impl SeqSet {
    /// Inserts `n`; returns false if it was already present.
    fn insert(&mut self, n: u64) -> bool {
        if let Some(last) = self.ranges.last_mut() {
            if n > last.1 {
                if n == last.1 + 1 {
                    last.1 = n;
                } else {
                    self.ranges.push((n, n));
                }
                return true;
            }
        } else {
            self.ranges.push((n, n));
            return true;
        }
        // Out of order: find the first range ending at or after n.
        let i = self.ranges.partition_point(|r| r.1 < n);
        if i < self.ranges.len() && self.ranges[i].0 <= n {
            return false;
        }
        let joins_prev = i > 0 && self.ranges[i - 1].1 + 1 == n;
        let joins_next = i < self.ranges.len() && self.ranges[i].0 == n + 1;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ranges[i - 1].1 = self.ranges[i].1;
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i - 1].1 = n,
            (false, true) => self.ranges[i].0 = n,
            (false, false) => self.ranges.insert(i, (n, n)),
        }
        true
    }
}

#[derive(Debug)]
struct SessionState {
    /// The interned session name every event of the session shares.
    name: FileName,
    seqs: SeqSet,
    last_ts: Option<(f64, u64)>,
}

/// A line decoded into an event, before the per-session checks: everything that depends on
/// the line alone. Decoding is the expensive part and has no shared state, so whole-file
/// loads run it on several threads (see [`super::load`]); the per-session checks then run in
/// line order.
#[derive(Debug)]
pub(crate) struct PreEvent {
    line: u64,
    line_start: u64,
    /// Absolute offset and length of the JSON text (after a BOM, without CR and LF): the
    /// per-session checks quote columns from it.
    text_at: u64,
    text_len: usize,
    v_given: bool,
    seq: Option<u64>,
    ts: Option<Timestamp>,
    session: Option<Text>,
    id: Option<Text>,
    body: Body,
    extra: Extra,
}

/// A line decoded into a [`Brief`], before the per-session checks (the brief loads' payload,
/// see [`super::brief`]).
#[derive(Debug)]
pub(crate) struct PreBrief {
    line: u64,
    line_start: u64,
    text_at: u64,
    text_len: usize,
    seq: Option<u64>,
    ts: Option<f64>,
    session: Option<Text>,
    gist: Gist,
}

/// What the per-session checks read of a decoded line.
pub(crate) struct Head<'a> {
    line: u64,
    line_start: u64,
    /// Absolute offset and length of the line's JSON text.
    pub(crate) text_at: u64,
    pub(crate) text_len: usize,
    seq: Option<u64>,
    ts: Option<f64>,
    pub(crate) session: Option<&'a str>,
}

/// What a line decodes to before its session checks: a [`PreEvent`] for loads that give
/// events, a [`PreBrief`] for loads that give briefs. The framing, the checks and the
/// parallel load are the same for both.
pub(crate) trait Payload: Sized + Send + 'static {
    /// What the load gives for each line.
    type Item: Send;
    /// Decodes the JSON text of the framer's current line (after a BOM of `bom_len` bytes).
    fn decode(framer: &Framer, text: &str, bom_len: u64) -> Decoded<Self>;
    /// Decodes the bytes of the framer's current line (after a BOM of `bom_len` bytes), not
    /// yet checked as UTF-8, if that can be done without checking them first; `None` means
    /// "check them and [`Self::decode`] the text", which must then give what decoding the
    /// line in full gives.
    fn decode_bytes(_framer: &Framer, _line: &[u8], _bom_len: u64) -> Option<Decoded<Self>> {
        None
    }
    /// What the session checks read.
    fn head(&self) -> Head<'_>;
    /// The item for a problem.
    fn problem(p: Box<Problem>) -> Self::Item;
    /// The item that announces a session met for the first time, if the items name
    /// sessions apart from events.
    fn session(name: &FileName) -> Option<Self::Item>;
    /// The item for the event, read from the stream `file`, of the session `session`
    /// (the `index`th session met).
    fn finish(self, file: &FileName, session: &FileName, index: u32) -> Self::Item;
}

impl Payload for PreEvent {
    type Item = Item;

    fn decode(framer: &Framer, text: &str, bom_len: u64) -> Decoded<Self> {
        let mut fields = Fields::new();
        framer.decode(text, bom_len, &mut fields)
    }

    fn head(&self) -> Head<'_> {
        Head {
            line: self.line,
            line_start: self.line_start,
            text_at: self.text_at,
            text_len: self.text_len,
            seq: self.seq,
            ts: self.ts.as_ref().map(|t| t.unix_seconds),
            session: self.session.as_deref(),
        }
    }

    fn problem(p: Box<Problem>) -> Item {
        Item::Problem(*p)
    }

    fn session(_: &FileName) -> Option<Item> {
        None
    }

    fn finish(self, file: &FileName, session: &FileName, _: u32) -> Item {
        Item::Event(Event {
            origin: Origin {
                file: file.clone(),
                line: self.line,
                offset: self.line_start,
            },
            v: FORMAT_VERSION,
            v_given: self.v_given,
            seq: self.seq.unwrap_or(self.line),
            seq_given: self.seq.is_some(),
            ts: self.ts,
            session_given: self.session.is_some(),
            session: session.clone(),
            id: self.id,
            body: self.body,
            extra: self.extra,
        })
    }
}

impl PreBrief {
    /// The brief of a line of the usual shape, from the brief scanner, which checks the
    /// bytes as UTF-8 as it walks them; `None` for any other line.
    fn scan_brief(framer: &Framer, bytes: &[u8], bom_len: u64) -> Option<Decoded<Self>> {
        let s = scan_bytes(bytes, framer.lean_others.as_deref())?;
        Some(Decoded::Event(PreBrief {
            line: framer.line,
            line_start: framer.line_start,
            text_at: framer.line_start + bom_len,
            text_len: bytes.len(),
            seq: s.seq,
            ts: s.ts,
            session: s.session,
            gist: s.gist,
        }))
    }

    /// The brief of a line the scanner declined: decoded in full, then briefed (lean when
    /// the framer makes lean briefs, or those of another session than the one it leads).
    fn decode_brief(framer: &Framer, text: &str, bom_len: u64) -> Decoded<Self> {
        let (line, line_start) = (framer.line, framer.line_start);
        match PreEvent::decode(framer, text, bom_len) {
            Decoded::Problem(p) => Decoded::Problem(p),
            Decoded::Event(pre) => {
                let other = framer.lean_others.as_deref().is_some_and(|lead| {
                    pre.session.as_deref().is_some_and(|s| s.as_bytes() != lead)
                });
                let gist = super::brief::lean(framer.lean || other, || {
                    Gist::of(pre.id.as_deref(), &pre.body)
                });
                Decoded::Event(PreBrief {
                    line,
                    line_start,
                    text_at: pre.text_at,
                    text_len: pre.text_len,
                    seq: pre.seq,
                    ts: pre.ts.as_ref().map(|t| t.unix_seconds),
                    gist,
                    session: pre.session,
                })
            }
        }
    }
}

impl Payload for PreBrief {
    type Item = BriefItem;

    /// A line the scanner declined ([`Self::decode_bytes`] runs first).
    fn decode(framer: &Framer, text: &str, bom_len: u64) -> Decoded<Self> {
        Self::decode_brief(framer, text, bom_len)
    }

    fn decode_bytes(framer: &Framer, line: &[u8], bom_len: u64) -> Option<Decoded<Self>> {
        super::brief::lean(framer.lean, || Self::scan_brief(framer, line, bom_len))
    }

    fn head(&self) -> Head<'_> {
        Head {
            line: self.line,
            line_start: self.line_start,
            text_at: self.text_at,
            text_len: self.text_len,
            seq: self.seq,
            ts: self.ts,
            session: self.session.as_deref(),
        }
    }

    fn problem(p: Box<Problem>) -> BriefItem {
        BriefItem::Problem(p)
    }

    fn session(name: &FileName) -> Option<BriefItem> {
        Some(BriefItem::Session(name.clone()))
    }

    fn finish(self, _: &FileName, _: &FileName, index: u32) -> BriefItem {
        BriefItem::Event(Briefed {
            line: self.line,
            offset: self.line_start,
            session: index,
            brief: Brief {
                seq: self.seq.unwrap_or(self.line),
                gist: self.gist,
            },
        })
    }
}

/// What decoding a line produced, in order: zero or more problems, then maybe an event.
#[derive(Debug)]
pub(crate) enum Decoded<P = PreEvent> {
    /// A problem with the line (an error, or the misplaced-BOM warning before the rest);
    /// boxed, as problems are rare and large: every line's output is moved a few times.
    Problem(Box<Problem>),
    /// A well-formed event waiting for its session checks.
    Event(P),
}

impl<P> Decoded<P> {
    fn with_excerpt(self, e: Excerpt) -> Decoded<P> {
        match self {
            Decoded::Problem(mut p) => {
                p.excerpt = Some(e);
                Decoded::Problem(p)
            }
            d => d,
        }
    }
}

/// Line framing and decoding: the part of the reader that depends on the bytes and their
/// position alone. Two framers started at the same position give the same output, which is
/// what lets a whole-file load cut the stream at LF boundaries and decode the pieces
/// independently.
#[derive(Debug)]
pub(crate) struct Framer {
    file: FileName,
    cfg: ReaderConfig,
    /// The current partial line (never more than the cap).
    buf: Vec<u8>,
    /// Byte offset of the start of the current line.
    line_start: u64,
    /// Byte offset of the next byte fed.
    pos: u64,
    /// Number of the current line.
    line: u64,
    /// In an over-long line: its length so far.
    skipping: Option<u64>,
    /// When set, lines that surely belong to another session than this one (as written in
    /// the JSON text) are passed over undecoded ([`other_session`]).
    only: Option<std::sync::Arc<[u8]>>,
    /// Briefs made without parsing formulas ([`super::brief::lean`]).
    lean: bool,
    /// When set, events of another session than this one (as their lines write it, the
    /// file's own session being this one's only if its lines say so) get lean briefs, and
    /// the others full ones: a load that replays this session and only indexes the rest.
    lean_others: Option<std::sync::Arc<[u8]>>,
}

impl Framer {
    /// A framer at the start of the stream `file`.
    pub(crate) fn new(file: FileName, cfg: ReaderConfig) -> Self {
        Self::at(file, cfg, 0, 1)
    }

    /// A framer whose first byte is at stream offset `pos`, the start of line number `line`.
    pub(crate) fn at(file: FileName, cfg: ReaderConfig, pos: u64, line: u64) -> Self {
        Framer {
            file,
            cfg,
            buf: Vec::new(),
            line_start: pos,
            pos,
            line,
            skipping: None,
            only: None,
            lean: false,
            lean_others: None,
        }
    }

    /// Makes briefs without parsing their formulas when `lean` ([`super::brief::lean`]):
    /// which lines are events and which problems does not change.
    pub(crate) fn lean(mut self, lean: bool) -> Self {
        self.lean = lean;
        self
    }

    /// Makes lean briefs of the events of another session than `session`, as their lines
    /// write it (an event without `session` gets a full one), full ones of the rest.
    pub(crate) fn lean_others(mut self, session: Option<std::sync::Arc<[u8]>>) -> Self {
        self.lean_others = session;
        self
    }

    /// Passes over the lines that surely belong to another session than `session` (see
    /// [`other_session`]); every other line is decoded as before.
    pub(crate) fn only_session(mut self, session: Option<std::sync::Arc<[u8]>>) -> Self {
        self.only = session;
        self
    }

    /// Whether the framer is at the start of a line (nothing buffered or being skipped).
    pub(crate) fn at_line_start(&self) -> bool {
        self.buf.is_empty() && self.skipping.is_none()
    }

    /// The stream offset of the next byte and the number of the current line.
    pub(crate) fn position(&self) -> (u64, u64) {
        (self.pos, self.line)
    }

    /// Moves past `bytes` bytes holding exactly `lines` complete lines that someone else
    /// decodes. Only valid at a line start.
    pub(crate) fn skip(&mut self, bytes: u64, lines: u64) {
        debug_assert!(self.at_line_start());
        self.pos += bytes;
        self.line_start = self.pos;
        self.line += lines;
    }

    /// Feeds the next chunk; every decoded line goes to `sink` with its JSON text.
    pub(crate) fn feed<P: Payload>(
        &mut self,
        chunk: &[u8],
        sink: &mut impl FnMut(Decoded<P>, &[u8]),
    ) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let nl = memchr::memchr(b'\n', rest);
            if let Some(seen) = self.skipping {
                match nl {
                    Some(i) => {
                        self.too_long(seen + i as u64, sink);
                        self.end_line(i as u64 + 1);
                        rest = &rest[i + 1..];
                    }
                    None => {
                        self.skipping = Some(seen + rest.len() as u64);
                        self.pos += rest.len() as u64;
                        return;
                    }
                }
                continue;
            }
            match nl {
                Some(i) => {
                    let len = self.buf.len() + i;
                    if len > self.cfg.max_line_bytes {
                        self.buf.clear();
                        self.too_long(len as u64, sink);
                    } else if self.buf.is_empty() {
                        self.process(&rest[..i], sink);
                    } else {
                        let mut line = std::mem::take(&mut self.buf);
                        line.extend_from_slice(&rest[..i]);
                        self.process(&line, sink);
                        line.clear();
                        self.buf = line;
                    }
                    self.end_line(i as u64 + 1);
                    rest = &rest[i + 1..];
                }
                None => {
                    let len = self.buf.len() + rest.len();
                    if len > self.cfg.max_line_bytes {
                        self.buf.clear();
                        self.skipping = Some(len as u64);
                    } else {
                        self.buf.extend_from_slice(rest);
                    }
                    self.pos += rest.len() as u64;
                    return;
                }
            }
        }
    }

    /// Ends the stream: decodes a last line without a newline.
    pub(crate) fn finish<P: Payload>(&mut self, sink: &mut impl FnMut(Decoded<P>, &[u8])) {
        if let Some(seen) = self.skipping {
            self.too_long(seen, sink);
        } else if !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.process(&line, sink);
        }
        self.end_line(0);
    }

    /// Moves past the current line, whose remaining `consumed` bytes (LF included) were just
    /// handled.
    fn end_line(&mut self, consumed: u64) {
        self.pos += consumed;
        self.line_start = self.pos;
        self.line += 1;
        self.skipping = None;
        self.buf.clear();
    }

    fn problem(
        &self,
        severity: Severity,
        code: ProblemCode,
        column: u64,
        message: String,
    ) -> Box<Problem> {
        Box::new(Problem {
            severity,
            code,
            origin: Origin {
                file: self.file.clone(),
                line: self.line,
                offset: self.line_start,
            },
            column,
            byte_offset: None,
            field: None,
            message,
            excerpt: None,
        })
    }

    fn too_long<P>(&self, len: u64, sink: &mut impl FnMut(Decoded<P>, &[u8])) {
        sink(
            Decoded::Problem(self.problem(
                Severity::Error,
                ProblemCode::LineTooLong,
                1,
                format!(
                    "line is {len} bytes long, over the limit of {} bytes; skipped",
                    self.cfg.max_line_bytes
                ),
            ))
            .with_excerpt(Excerpt {
                bytes: Box::default(),
                len,
            }),
            &[],
        );
    }

    /// Decodes one complete line (without its LF).
    fn process<P: Payload>(&mut self, line: &[u8], sink: &mut impl FnMut(Decoded<P>, &[u8])) {
        if let Some(only) = &self.only
            && other_session(line, only)
        {
            return;
        }
        let mut line = line.strip_suffix(b"\r").unwrap_or(line);
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        let mut bom_len = 0u64;
        if let Some(rest) = line.strip_prefix(BOM) {
            if self.line_start != 0 {
                sink(
                    Decoded::Problem(
                        self.problem(
                            Severity::Warning,
                            ProblemCode::MisplacedBom,
                            1,
                            "byte-order mark (U+FEFF) at the start of a line other than the first \
                         (concatenated files?); ignored"
                                .into(),
                        ),
                    ),
                    &[],
                );
            }
            line = rest;
            bom_len = BOM.len() as u64;
        }
        if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            return;
        }
        // The usual line, without a pass of its own to check it as UTF-8.
        if let Some(decoded) = P::decode_bytes(self, line, bom_len) {
            sink(decoded, line);
            return;
        }
        let text = match std::str::from_utf8(line) {
            Ok(t) => t,
            Err(e) => {
                let at = e.valid_up_to();
                let abs = self.line_start + bom_len + at as u64;
                let column = char_count(&line[..at]) + 1;
                let mut p = self.problem(
                    Severity::Error,
                    ProblemCode::InvalidUtf8,
                    column,
                    format!("invalid UTF-8 at byte offset {abs}"),
                );
                p.byte_offset = Some(abs);
                p.excerpt = Some(Excerpt::of(line));
                sink(Decoded::Problem(p), &[]);
                return;
            }
        };
        let decoded = match P::decode(self, text, bom_len) {
            Decoded::Problem(mut p) => {
                p.excerpt = Some(Excerpt::of(line));
                Decoded::Problem(p)
            }
            d => d,
        };
        sink(decoded, line);
    }

    /// Decodes the JSON text of a line into an event or a problem.
    fn decode<'t>(
        &self,
        text: &'t str,
        bom_len: u64,
        fields: &mut Fields<'t>,
    ) -> Decoded<PreEvent> {
        let raw = match decode_line(text, fields) {
            Ok(raw) => raw,
            Err(e) => {
                let column = char_column(text, e.column());
                let msg = e.to_string();
                let msg = match msg.rfind(" at line ") {
                    Some(i) => msg[..i].to_string(),
                    None => msg,
                };
                // Envelope checks run inside the parser (to get exact columns); their
                // messages name the field, which makes them field problems.
                let field = msg
                    .strip_prefix("field `")
                    .or_else(|| msg.strip_prefix("duplicate field `"))
                    .and_then(|rest| rest.split('`').next())
                    .map(str::to_string);
                let code = if field.is_some() {
                    ProblemCode::Field
                } else {
                    ProblemCode::Json
                };
                let mut p = self.problem(Severity::Error, code, column, msg);
                p.field = field;
                return Decoded::Problem(p);
            }
        };
        let Some(kind_name) = raw.kind else {
            return Decoded::Problem(self.problem(
                Severity::Error,
                ProblemCode::MissingKind,
                1,
                "missing field `kind` (every event needs one)".into(),
            ));
        };
        if let Some(v) = raw.v.filter(|v| *v > u64::from(FORMAT_VERSION)) {
            return Decoded::Problem(self.problem(
                Severity::Error,
                ProblemCode::UnsupportedVersion,
                key_column(text.as_bytes(), "v"),
                format!(
                    "format version {v} is newer than this reader (it reads v{FORMAT_VERSION}); \
                     line skipped"
                ),
            ));
        }
        let kind = Kind::from_name(&kind_name);
        let (body, extra) = match build_body(kind, &kind_name, fields) {
            Ok(b) => b,
            Err(FieldError { field, message }) => {
                let mut p = self.problem(
                    Severity::Error,
                    ProblemCode::Field,
                    key_column(text.as_bytes(), &field),
                    format!("field `{field}` {message}"),
                );
                p.field = Some(field);
                return Decoded::Problem(p);
            }
        };
        Decoded::Event(PreEvent {
            line: self.line,
            line_start: self.line_start,
            text_at: self.line_start + bom_len,
            text_len: text.len(),
            v_given: raw.v.is_some(),
            seq: raw.seq,
            ts: raw.ts,
            session: raw.session.map(|s| Text::from(&*s)),
            id: raw.id,
            body,
            extra,
        })
    }
}

/// The sequential half of the reader: per-session state (interned names, `seq` sets, last
/// timestamps) and the checks that need it. Events must be accepted in line order.
#[derive(Debug)]
pub(crate) struct Sessions {
    file: FileName,
    default_session: FileName,
    /// Seeded foldhash (hashbrown's default): session names are untrusted but few, and
    /// SipHash was a tenth of the sequential half's time on interleaved sessions.
    by_name: hashbrown::HashMap<FileName, usize>,
    states: Vec<SessionState>,
    /// The session of the previous event: consecutive events usually share it, and comparing
    /// two short strings is cheaper than hashing one.
    last: usize,
    /// The first [`ShortNames::CAP`] sessions whose names have at most 16 bytes, by the
    /// name's words and length, with their index: interleaved sessions are told apart by
    /// a probe and two word comparisons, without hashing the name or a call.
    short: ShortNames<usize>,
}

impl Sessions {
    /// Session state for the stream `file` (events without `session` get its last path
    /// component).
    pub(crate) fn new(file: FileName) -> Self {
        let base = file.rsplit(['/', '\\']).next().unwrap_or(&file);
        let base = if base.is_empty() { &*file } else { base };
        Sessions {
            default_session: FileName::new(base),
            file,
            by_name: hashbrown::HashMap::new(),
            states: Vec::new(),
            last: usize::MAX,
            short: ShortNames::new(),
        }
    }

    /// Runs the per-session checks on a decoded line (`text` is its JSON text, for columns)
    /// and emits its items in order.
    pub(crate) fn accept<P: Payload>(
        &mut self,
        d: Decoded<P>,
        text: &[u8],
        emit: &mut impl FnMut(P::Item),
    ) {
        let pre = match d {
            Decoded::Problem(p) => return emit(P::problem(p)),
            Decoded::Event(pre) => pre,
        };
        let head = pre.head();
        let name: &str = head.session.unwrap_or(&self.default_session);
        let words = short_name_words(name.as_bytes());
        let short = words.and_then(|w| self.short.get(w, name.len()).copied());
        let hit = short.is_some()
            || self
                .states
                .get(self.last)
                .is_some_and(|st| &*st.name == name);
        if let Some(i) = short {
            self.last = i;
        } else if !hit {
            self.last = match self.by_name.get(name) {
                Some(&i) => i,
                None => {
                    let arc = FileName::new(name);
                    if let Some(item) = P::session(&arc) {
                        emit(item);
                    }
                    self.by_name.insert(arc.clone(), self.states.len());
                    self.states.push(SessionState {
                        name: arc,
                        seqs: SeqSet::default(),
                        last_ts: None,
                    });
                    let i = self.states.len() - 1;
                    if let Some(w) = words {
                        self.short.insert(w, name.len(), i);
                    }
                    i
                }
            };
        }
        let st = &mut self.states[self.last];
        for (code, column, message) in order_checks(st, head.seq, head.ts, head.line, text) {
            emit(P::problem(Box::new(Problem {
                severity: Severity::Warning,
                code,
                origin: Origin {
                    file: self.file.clone(),
                    line: head.line,
                    offset: head.line_start,
                },
                column,
                byte_offset: None,
                field: None,
                message,
                excerpt: None,
            })));
        }
        emit(pre.finish(&self.file, &st.name, self.last as u32));
    }
}

/// Whether the line `line` is surely not an event of the session named `session`, from a
/// glance at its bytes: the only `{` before a `"session":"` is the one that opens the line's
/// object (so the key is a top-level key), the quote before the key is not escaped, and the
/// value, free of escapes, differs from `session` byte for byte. `false` means "decode it to
/// know".
///
/// This is exact for every line that is an event: a raw `"` can only be a string delimiter
/// (inside a string it must be escaped, and the check refuses a preceding backslash), so the
/// match is a key; an event has one `session` key (a second, however written, makes the line
/// a problem); and a string without escapes decodes to its own bytes. A line that is not an
/// event may be passed over whatever it holds: a load that keeps one session's events drops
/// problems anyway.
pub(crate) fn other_session(line: &[u8], session: &[u8]) -> bool {
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"session\":\""));
    let Some(at) = KEY.find(line) else {
        return false;
    };
    let head = &line[..at];
    // One `{` in `head` (the one opening the line): found once, and not again after it.
    let one_brace =
        memchr::memchr(b'{', head).is_some_and(|i| memchr::memchr(b'{', &head[i + 1..]).is_none());
    if at == 0 || head[at - 1] == b'\\' || !one_brace {
        return false;
    }
    let start = at + KEY.needle().len();
    let value = &line[start..];
    match memchr::memchr2(b'"', b'\\', value) {
        Some(end) if value[end] == b'"' => &value[..end] != session,
        _ => false,
    }
}

/// Decodes one line again, as the reader decoded it when it read `file`: `line` is the
/// line's number, `offset` the stream offset of its first byte and `bytes` its bytes
/// without the LF. The event is the one [`Reader::feed`] gave for that line (its session is
/// a fresh shared name rather than the reader's interned one, equal by value); `None` if the
/// line is not an event. This is what lets [`super::store::EventStore`] keep only where each
/// event is and decode it when something looks at it.
pub(crate) fn decode_one(
    file: &FileName,
    cfg: ReaderConfig,
    offset: u64,
    line: u64,
    bytes: &[u8],
) -> Option<Event> {
    let mut framer = Framer::at(file.clone(), cfg, offset, line);
    let mut out = None;
    framer.process(bytes, &mut |d: Decoded<PreEvent>, _| {
        if let Decoded::Event(pre) = d {
            out = Some(pre);
        }
    });
    let pre = out?;
    let session_given = pre.session.is_some();
    let session = match pre.session.as_deref() {
        Some(s) => FileName::new(s),
        None => {
            let f: &str = file;
            let base = f.rsplit(['/', '\\']).next().unwrap_or(f);
            FileName::new(if base.is_empty() { f } else { base })
        }
    };
    Some(Event {
        origin: Origin {
            file: file.clone(),
            line: pre.line,
            offset: pre.line_start,
        },
        v: FORMAT_VERSION,
        v_given: pre.v_given,
        seq: pre.seq.unwrap_or(pre.line),
        seq_given: pre.seq.is_some(),
        ts: pre.ts,
        session_given,
        session,
        id: pre.id,
        body: pre.body,
        extra: pre.extra,
    })
}

/// Briefs one line again, as a load of briefs briefed it when it read `file` (see
/// [`decode_one`] for the arguments): its session as written (`None`: the file's default
/// session) and the event, numbered session 0; `None` if the line is not an event.
pub(crate) fn brief_one(
    file: &FileName,
    cfg: ReaderConfig,
    offset: u64,
    line: u64,
    bytes: &[u8],
) -> Option<(Option<Text>, BriefItem)> {
    let mut framer = Framer::at(file.clone(), cfg, offset, line);
    let mut out = None;
    framer.process(bytes, &mut |d: Decoded<PreBrief>, _| {
        if let Decoded::Event(pre) = d {
            out = Some(pre);
        }
    });
    let mut pre = out?;
    let session = pre.session.take();
    Some((session, pre.finish(file, file, 0)))
}

/// The streaming reader of one stream (file, socket connection, stdin).
#[derive(Debug)]
pub struct Reader {
    framer: Framer,
    sessions: Sessions,
}

impl Reader {
    /// A reader for the stream `file` (a path or a name like `<stdin>`); events without
    /// `session` get the file name (last path component) as their session.
    pub fn new(file: &str, cfg: ReaderConfig) -> Self {
        let file = FileName::new(file);
        Reader {
            framer: Framer::new(file.clone(), cfg),
            sessions: Sessions::new(file),
        }
    }

    /// The stream name given to [`Reader::new`].
    pub fn file(&self) -> &FileName {
        &self.sessions.file
    }

    /// Feeds the next chunk of bytes; complete lines are decoded and appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Item>) {
        let sessions = &mut self.sessions;
        self.framer.feed(chunk, &mut |d: Decoded<PreEvent>, text| {
            sessions.accept(d, text, &mut |item| out.push(item))
        });
    }

    /// Bytes of the current, not yet terminated line (buffered, or counted while skipping an
    /// over-long line). A follower can show that a partial line is pending.
    pub fn pending_bytes(&self) -> u64 {
        self.framer.skipping.unwrap_or(self.framer.buf.len() as u64)
    }

    /// The number the next line will get (1-based).
    pub fn next_line(&self) -> u64 {
        self.framer.line
    }

    /// Ends the stream: a final line without a newline is decoded now. Call it only at the
    /// true end of a stream (file closed, connection ended): a follower waiting for more bytes
    /// must not, or a line still being written would be read half-way.
    pub fn finish(&mut self, out: &mut Vec<Item>) {
        let sessions = &mut self.sessions;
        self.framer.finish(&mut |d: Decoded<PreEvent>, text| {
            sessions.accept(d, text, &mut |item| out.push(item))
        });
    }
}

/// Per-session ordering checks: duplicate explicit `seq`, time going backwards. Returns the
/// warnings (no allocation when there are none).
fn order_checks(
    state: &mut SessionState,
    seq: Option<u64>,
    ts: Option<f64>,
    line: u64,
    text: &[u8],
) -> Vec<(ProblemCode, u64, String)> {
    let mut warnings = Vec::new();
    if let Some(seq) = seq {
        if !state.seqs.insert(seq) {
            warnings.push((
                ProblemCode::DuplicateSeq,
                key_column(text, "seq"),
                format!("duplicate seq {seq} in session {:?}", &*state.name),
            ));
        }
    }
    if let Some(ts) = ts {
        if let Some((prev, prev_line)) = state.last_ts {
            if ts < prev {
                warnings.push((
                    ProblemCode::TimeBackwards,
                    key_column(text, "ts"),
                    format!(
                        "ts goes backwards in session {:?}: earlier than line {prev_line} \
                         by {:.3} s",
                        &*state.name,
                        prev - ts
                    ),
                ));
            }
        }
        if state.last_ts.is_none_or(|(prev, _)| ts >= prev) {
            state.last_ts = Some((ts, line));
        }
    }
    warnings
}

/// Converts serde_json's 1-based byte column into a 1-based character column.
fn char_column(text: &str, byte_col: usize) -> u64 {
    let mut end = byte_col.saturating_sub(1).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].chars().count() as u64 + 1
}

/// The number of characters in valid UTF-8 bytes: every byte that does not continue a
/// character starts one.
fn char_count(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count() as u64
}

/// The character column of the first occurrence of the key `"name"` in the line (1 if absent):
/// good enough to point at a field whose value was rejected after parsing. `text` is valid
/// UTF-8.
fn key_column(text: &[u8], name: &str) -> u64 {
    let mut pat = Vec::with_capacity(name.len() + 2);
    pat.push(b'"');
    pat.extend_from_slice(name.as_bytes());
    pat.push(b'"');
    match memchr::memmem::find(text, &pat) {
        Some(i) => char_count(&text[..i]) + 1,
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// The range set answers exactly like a plain set, for runs, gaps, repeats and
        /// out-of-order values, and stays sorted and disjoint.
        #[test]
        fn seq_set_agrees_with_a_hash_set(
            ops in prop::collection::vec(
                prop_oneof![0u64..40, Just(u64::MAX), Just(u64::MAX - 1), Just(0)],
                0..200,
            )
        ) {
            let mut ours = SeqSet::default();
            let mut oracle = HashSet::new();
            for n in ops {
                prop_assert_eq!(ours.insert(n), oracle.insert(n), "inserting {}", n);
                for w in ours.ranges.windows(2) {
                    prop_assert!(w[0].1 < w[1].0 && w[0].1 + 1 < w[1].0, "{:?}", ours.ranges);
                }
            }
            let count: u64 = ours.ranges.iter().map(|(a, b)| b - a + 1).sum();
            prop_assert_eq!(count, oracle.len() as u64);
        }
    }

    proptest! {
        /// Each event gets the session its line names, with the number of the session's
        /// first appearance, whatever the names (short ones are told apart by their words,
        /// long ones by a hash; more sessions than the short list holds) and their order.
        #[test]
        fn each_event_is_in_the_session_its_line_names(
            picks in prop::collection::vec(0usize..24, 1..120)
        ) {
            // As written in the line (JSON), and as decoded: "x" and "x\0" differ by their
            // length alone once padded with zeros.
            let written: Vec<String> = (0..24)
                .map(|i| match i % 3 {
                    _ if i == 1 => "x".to_string(),
                    _ if i == 2 => "x\\u0000".to_string(),
                    0 => format!("s{i}"),
                    1 => format!("session-{i:0>8}"),
                    _ => format!("a-session-name-of-{i}-over-sixteen-bytes"),
                })
                .collect();
            let names: Vec<String> = written.iter().map(|w| w.replace("\\u0000", "\0")).collect();
            let mut text = String::new();
            for &i in &picks {
                text.push_str(&format!("{{\"kind\":\"log\",\"session\":\"{}\"}}\n", written[i]));
            }
            let mut r = Reader::new("t.jsonl", ReaderConfig::default());
            let mut out = Vec::new();
            r.feed(text.as_bytes(), &mut out);
            r.finish(&mut out);
            prop_assert_eq!(out.len(), picks.len());
            for (item, &i) in out.iter().zip(&picks) {
                let Item::Event(ev) = item else {
                    return Err(TestCaseError::fail(format!("{item:?}")));
                };
                prop_assert_eq!(&*ev.session, names[i].as_str());
            }
            let mut order: Vec<usize> = Vec::new();
            for &i in &picks {
                if !order.contains(&i) {
                    order.push(i);
                }
            }
            let mut briefs = Vec::new();
            let mut framer = Framer::new(FileName::new("t.jsonl"), ReaderConfig::default());
            let mut sessions = Sessions::new(FileName::new("t.jsonl"));
            framer.feed(text.as_bytes(), &mut |d: Decoded<PreBrief>, t| {
                sessions.accept(d, t, &mut |it| briefs.push(it))
            });
            let events: Vec<u32> = briefs
                .iter()
                .filter_map(|b| match b {
                    BriefItem::Event(e) => Some(e.session),
                    _ => None,
                })
                .collect();
            let want: Vec<u32> = picks
                .iter()
                .map(|i| order.iter().position(|o| o == i).unwrap_or(usize::MAX) as u32)
                .collect();
            prop_assert_eq!(events, want);
        }
    }

    #[test]
    fn pending_bytes_track_the_partial_line() {
        let mut r = Reader::new("p", ReaderConfig { max_line_bytes: 8 });
        let mut out = Vec::new();
        r.feed(b"{\"kind\"", &mut out);
        assert_eq!((r.pending_bytes(), r.next_line()), (7, 1));
        r.feed(b":\"log\"}\n{", &mut out);
        assert_eq!((r.pending_bytes(), r.next_line()), (1, 2));
        assert!(
            out.iter()
                .any(|i| matches!(i, Item::Problem(p) if p.code == ProblemCode::LineTooLong))
        );
        r.feed(b"0123456789", &mut out);
        assert_eq!(r.pending_bytes(), 11, "counted while skipping");
    }

    #[test]
    fn increasing_sequences_cost_one_range() {
        let mut s = SeqSet::default();
        for n in 1..=100_000 {
            assert!(s.insert(n));
        }
        assert_eq!(s.ranges, [(1, 100_000)]);
        assert!(!s.insert(5_000));
    }
}
