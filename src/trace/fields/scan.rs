//! The brief scanner: a line of the usual shape checked exactly as the decoder checks it,
//! keeping only what a [`Brief`](crate::trace::brief::Brief) holds.
//!
//! A whole-file load replays every event but looks at few of its fields; decoding the rest
//! into an [`Event`](crate::trace::Event) is most of a load's cost. This scanner walks the
//! line once with the fast path's cursor, checks every field the way [`super::build_body`]
//! would (types, enum names, ranges, required fields, duplicate keys), and collects only
//! the fields of the [`Gist`]. Strings it does not keep are checked, not built; nested
//! values are checked as the fast path decodes them (an `extra` field as its raw text, a
//! field some kind defines as a JSON value), typed structures (plan steps, review
//! decisions, a world's truth, a step's tool calls) through the decoder's own serde types,
//! nothing kept. It accepts a subset of what the decoder accepts: the kind must be the
//! first key, deep nesting and a step's `new_beliefs` or `inputs` in a full brief (its
//! gist is made of them) make it give up (`None`), as does anything the decoder would
//! reject. The caller then decodes the line in full and briefs the event, so a line gets
//! the same brief either way, and a problem is always the decoder's, at the decoder's
//! column; a differential property test checks that whatever this scanner accepts, the
//! decoder accepts with the same envelope and gist (and a lean scan, the same envelope
//! and kind).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::value::StrDeserializer;
use serde_json::Value;

use super::fast::Scanner;
use super::{
    Env, F, KeyOf, N_FIELDS, ShortNames, Val, WORD_KEY_MAX, key_of, key_of_words, name_words,
    timestamp, typed_val,
};
use crate::trace::brief::Gist;
use crate::trace::event::{
    FORMAT_VERSION, Kind, Outcome, PlanOrigin, QueryAnswer, Reply, RetractBy, Role, StepStatus,
    Text, Timestamp,
};

/// The envelope and gist of a line the scanner took.
#[derive(Debug)]
pub(crate) struct Scanned {
    pub v_given: bool,
    pub seq: Option<u64>,
    /// The time, in seconds since the Unix epoch (all a brief keeps of it).
    pub ts: Option<f64>,
    pub session: Option<Text>,
    pub gist: Gist,
}

/// How a field of a kind is checked (mirrors the kind's arm in [`super::build_body`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `Bag::string`.
    Str,
    /// `Bag::strings`.
    Strs,
    /// `Bag::boolean`.
    Bool,
    /// `Bag::count`.
    Count,
    /// A postcondition's tier: a count of 1, 2 or 3.
    Tier,
    /// An announcement's confidence: a number in (0, 1].
    Confidence,
    /// `Bag::typed` of an enum named by a string.
    Enum(EnumOf),
    /// `Bag::value`: any JSON value.
    Any,
    /// `Bag::typed` of a structure: decoded through its serde type as the decoder does,
    /// nothing kept; left to the decoder where the gist needs its content.
    Structure,
    /// A score's value: a number, a string or a boolean.
    Score,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EnumOf {
    Role,
    RetractBy,
    Outcome,
    QueryAnswer,
    Reply,
    StepStatus,
    PlanOrigin,
}

/// Kinds of [`EnumOf`].
const N_ENUMS: usize = 7;

std::thread_local! {
    /// Per [`EnumOf`], whether it accepts each short name a decoder thread met, the first
    /// [`ShortNames::CAP`] of them: what [`EnumOf::accepts`] answered for that name.
    static ACCEPTED: std::cell::RefCell<[ShortNames<bool>; N_ENUMS]> = const {
        std::cell::RefCell::new([const { ShortNames::new() }; N_ENUMS])
    };
}

impl EnumOf {
    /// [`Self::accepts`] of the short name ([`short_words`]) of `len` bytes with these
    /// words, asked of serde once per thread and name (a lean brief checks an enum's name
    /// on most lines, and keeps none). `name` gives its text, asked for only then: making
    /// a `&str` of the bytes checks them as UTF-8 a second time.
    fn accepts_short<'n>(
        self,
        words: (u64, u64),
        len: usize,
        name: impl FnOnce() -> Option<&'n str>,
    ) -> Option<bool> {
        let i = self as usize;
        if let Some(ok) = ACCEPTED.with_borrow(|a| a[i].get(words, len).copied()) {
            return Some(ok);
        }
        let ok = self.accepts(name()?);
        ACCEPTED.with_borrow_mut(|a| a[i].insert(words, len, ok));
        Some(ok)
    }

    /// Whether serde accepts `s` as a variant name, as `Bag::typed` asks.
    fn accepts(self, s: &str) -> bool {
        fn ok<'a, T: Deserialize<'a>>(s: &'a str) -> bool {
            T::deserialize(StrDeserializer::<serde_json::Error>::new(s)).is_ok()
        }
        match self {
            EnumOf::Role => ok::<Role>(s),
            EnumOf::RetractBy => ok::<RetractBy>(s),
            EnumOf::Outcome => ok::<Outcome>(s),
            EnumOf::QueryAnswer => ok::<QueryAnswer>(s),
            EnumOf::Reply => ok::<Reply>(s),
            EnumOf::StepStatus => ok::<StepStatus>(s),
            EnumOf::PlanOrigin => ok::<PlanOrigin>(s),
        }
    }
}

/// How field `f` is checked for kind `kind`; `None` when the kind does not define it (it
/// goes to `extra`, where any value is fine).
fn class(kind: Kind, f: F) -> Option<Class> {
    use Class::*;
    use EnumOf as E;
    Some(match (kind, f) {
        (Kind::Session, F::agent | F::model) => Str,
        (Kind::Session, F::meta) => Any,
        (Kind::Announce, F::formula | F::source | F::text) => Str,
        (Kind::Announce, F::role) => Enum(E::Role),
        (Kind::Announce, F::confidence) => Confidence,
        (Kind::Announce, F::because) => Strs,
        (Kind::Retract, F::target | F::reason) => Str,
        (Kind::Retract, F::by) => Enum(E::RetractBy),
        (Kind::Verify, F::formula | F::method) => Str,
        (Kind::Verify, F::formulas | F::because) => Strs,
        (Kind::Verify, F::outcome) => Enum(E::Outcome),
        (Kind::Verify, F::tier | F::detail) => Any,
        (Kind::Revise, F::trigger | F::policy) => Str,
        (Kind::Revise, F::retracted) => Strs,
        (Kind::Query, F::formula) => Str,
        (Kind::Query, F::answer) => Enum(E::QueryAnswer),
        (Kind::Gate, F::formula) => Str,
        (Kind::Gate, F::because) => Strs,
        (Kind::Answer, F::text | F::formula) => Str,
        (Kind::Answer, F::hedged) => Bool,
        (Kind::Thought, F::text) => Str,
        (Kind::Thought, F::asserts) => Strs,
        (Kind::World, F::atoms | F::rules) => Strs,
        (Kind::World, F::truth) => Structure,
        (Kind::Turn, F::question | F::literal) => Str,
        (Kind::Turn, F::reply) => Enum(E::Reply),
        (Kind::Turn, F::truth) => Any,
        (Kind::Belief, F::name | F::unit | F::source) => Str,
        (Kind::Belief, F::value) => Any,
        (Kind::SchemaBelief | Kind::Desire, F::text) => Str,
        (Kind::Intention, F::type_) => Str,
        (Kind::Intention, F::goal | F::satisfaction | F::open_parameters) => Any,
        (Kind::Intention, F::files) => Strs,
        (Kind::Plan, F::intention_type) => Str,
        (Kind::Plan, F::context_conditions) => Strs,
        (Kind::Plan, F::steps) => Structure,
        (Kind::Plan, F::origin) => Enum(E::PlanOrigin),
        (Kind::Step, F::plan | F::step | F::summary) => Str,
        (Kind::Step, F::status) => Enum(E::StepStatus),
        (Kind::Step, F::post_met) => Bool,
        (Kind::Step, F::new_beliefs | F::tool_calls | F::inputs) => Structure,
        (Kind::Postcondition, F::plan | F::step | F::failure_mode | F::program) => Str,
        (Kind::Postcondition, F::tier) => Tier,
        (Kind::Postcondition, F::ok) => Bool,
        (Kind::Postcondition, F::detail) => Any,
        (Kind::Satisfaction, F::intention) => Str,
        (Kind::Satisfaction, F::ok | F::correct) => Bool,
        (Kind::Satisfaction, F::failure_mode) => Str,
        (Kind::Satisfaction, F::answer | F::expected_answer) => Any,
        (Kind::Review, F::decisions) => Structure,
        (Kind::PlanStats, F::plan) => Str,
        (Kind::PlanStats, F::use_count | F::success_count | F::failure_count) => Count,
        (Kind::Log, F::level | F::message) => Str,
        (Kind::Score, F::name | F::label | F::explanation | F::target | F::source) => Str,
        (Kind::Score, F::passed) => Bool,
        (Kind::Score, F::value) => Score,
        _ => return None,
    })
}

const _: () = assert!(N_FIELDS <= 64, "the seen-fields mask is a u64");

/// Unknown keys remembered to find duplicates; a line with more is left to the decoder.
const MAX_UNKNOWN: usize = 16;

/// The fields of the gist, as found.
struct Found<'de> {
    formula: Option<Cow<'de, str>>,
    formulas: Option<Vec<Cow<'de, str>>>,
    role: Option<Cow<'de, str>>,
    target: Option<Cow<'de, str>>,
    by: Option<Cow<'de, str>>,
    trigger: Option<Cow<'de, str>>,
    retracted: Option<Vec<Cow<'de, str>>>,
    outcome: Option<Cow<'de, str>>,
    name: Option<Cow<'de, str>>,
    plan: Option<Cow<'de, str>>,
    unit: Option<Cow<'de, str>>,
    source: Option<Cow<'de, str>>,
    /// A belief's `value` as written (any JSON but an object, checked by [`any`]).
    value: Option<&'de str>,
    /// Making a lean brief ([`crate::trace::brief::lean`]): lists are checked, not kept,
    /// and the gist is the kind alone.
    lean: bool,
    /// The line's kind (a known one: an unknown kind's fields are all `extra`).
    kind: Kind,
}

/// Scans `line` (valid UTF-8, without its LF); `None` means "decode it in full".
#[cfg(test)]
pub(crate) fn scan(line: &str) -> Option<Scanned> {
    scan_with(Scanner::of_str(line), None)
}

/// Scans the bytes of a line (without its LF, maybe not UTF-8), checking them as UTF-8 as
/// it walks them: what it takes is UTF-8 and scanned as `scan` scans the text (a property
/// test compares them on hostile bytes); `None` means "check the line as UTF-8 and decode
/// it in full" (which then reports a line that is not UTF-8 where it stops being so).
///
/// With a `lead` session, the brief is lean ([`crate::trace::brief::lean`]) once the line's
/// `session` turns out to be another one: what a lean scan takes with the same envelope and
/// kind (the fields before `session` are checked as a full scan checks them, which takes
/// no more than a lean scan).
pub(crate) fn scan_bytes(line: &[u8], lead: Option<&[u8]>) -> Option<Scanned> {
    scan_with(Scanner::of_bytes(line), lead)
}

fn scan_with(mut p: Scanner<'_>, lead: Option<&[u8]>) -> Option<Scanned> {
    p.ws();
    p.eat(b'{')?;
    p.ws();
    // The kind first: it says how every other field is checked.
    if key(&mut p)? != KeyOf::Envelope(Env::Kind) {
        return None;
    }
    colon(&mut p)?;
    // A known kind's name read as words, as keys are; any other through `Kind::from_name`.
    let (kind_name, kind) = match short_words(&p).and_then(|(w, n)| Some((kind_of_words(w, n)?, n)))
    {
        Some((k, n)) => {
            p.i += n + 2;
            (Cow::Borrowed(k.as_str()), Some(k))
        }
        None => {
            let name = p.string()?;
            let kind = Kind::from_name(&name);
            (name, kind)
        }
    };
    let mut out = Scanned {
        v_given: false,
        seq: None,
        ts: None,
        session: None,
        gist: Gist::Plain(Kind::Log),
    };
    let mut id: Option<Cow<'_, str>> = None;
    let mut seen: u64 = 0;
    let mut unknown: Vec<Cow<'_, str>> = Vec::new();
    let mut found = Found {
        formula: None,
        formulas: None,
        role: None,
        target: None,
        by: None,
        trigger: None,
        retracted: None,
        outcome: None,
        name: None,
        plan: None,
        unit: None,
        source: None,
        value: None,
        lean: crate::trace::brief::is_lean(),
        kind: kind.unwrap_or(Kind::Log),
    };
    loop {
        p.ws();
        match p.next()? {
            b',' => p.ws(),
            b'}' => break,
            _ => return None,
        }
        let at = p.i;
        let of = key(&mut p)?;
        colon(&mut p)?;
        match of {
            KeyOf::Envelope(Env::Kind) => return None,
            KeyOf::Envelope(Env::V) => {
                let v = as_u64(p.number()?)?;
                if out.v_given || !(1..=u64::from(FORMAT_VERSION)).contains(&v) {
                    return None;
                }
                out.v_given = true;
            }
            KeyOf::Envelope(Env::Seq) => {
                let v = as_u64(p.number()?)?;
                if out.seq.replace(v).is_some() {
                    return None;
                }
            }
            KeyOf::Envelope(Env::Ts) => {
                // The usual time (UTC, whole seconds or milliseconds) read from the
                // bytes; any other through `timestamp`, which gives the same.
                if let Some((ts, end)) = utc_time(p.b, p.i) {
                    if out.ts.replace(ts.unix_seconds).is_some() {
                        return None;
                    }
                    p.i = end;
                    continue;
                }
                let secs = match p.b.get(p.i)? {
                    b'"' => timestamp(Val::Str(p.string()?)).ok()?.unix_seconds,
                    // Unix seconds: the number's value, as `timestamp` takes it, without
                    // working out how it was written (a brief keeps the value alone).
                    b'-' | b'0'..=b'9' => match p.number()? {
                        Val::Json(Value::Number(n)) => n.as_f64().filter(|s| s.is_finite())?,
                        _ => return None,
                    },
                    _ => return None,
                };
                if out.ts.replace(secs).is_some() {
                    return None;
                }
            }
            KeyOf::Envelope(Env::Session) => {
                let s = session(&mut p)?;
                found.lean |= lead.is_some_and(|l| l != s.as_bytes());
                if out.session.replace(s).is_some() {
                    return None;
                }
            }
            KeyOf::Envelope(Env::Id) => {
                // A lean gist does not keep the id: checked, not taken (taking it checks
                // its bytes as UTF-8 a second time).
                let s = if found.lean {
                    p.skip_string()?;
                    Cow::Borrowed("")
                } else {
                    p.string()?
                };
                if id.replace(s).is_some() {
                    return None;
                }
            }
            KeyOf::Field(f) => {
                let bit = 1u64 << (f as u32);
                if seen & bit != 0 {
                    return None;
                }
                seen |= bit;
                match kind.and_then(|k| class(k, f)) {
                    Some(c) => field(&mut p, f, c, &mut found)?,
                    None => any(&mut p, true)?,
                }
            }
            KeyOf::Other => {
                // Its text, read again (unknown keys are rare).
                let key = p.at(at).string()?;
                if unknown.len() >= MAX_UNKNOWN || unknown.contains(&key) {
                    return None;
                }
                unknown.push(key);
                any(&mut p, false)?;
            }
        }
    }
    p.ws();
    if p.i != p.b.len() {
        return None;
    }
    out.gist = gist(kind, &kind_name, id.as_deref(), seen, &found)?;
    Some(out)
}

/// What the key at the cursor names, the cursor moved past it. The usual key (short,
/// ASCII, no escapes) is read as two words straight from the line and matched with
/// [`key_of_words`]; any other through [`Scanner::string`] and [`key_of`], which give the
/// same. Nothing is built: an unknown key's text is read again by the caller.
#[inline(always)]
fn key(p: &mut Scanner<'_>) -> Option<KeyOf> {
    if let Some((words, len)) = short_words(p) {
        p.i += len + 2;
        return Some(key_of_words(words, len));
    }
    Some(key_of(&p.string()?))
}

/// The string at the cursor as two little-endian words (zero past its end) and its length,
/// if it is at most [`WORD_KEY_MAX`] ASCII bytes without escapes or control characters and
/// the line holds 16 bytes after its opening quote; the cursor is not moved.
#[inline(always)]
fn short_words(p: &Scanner<'_>) -> Option<((u64, u64), usize)> {
    let chunk = p.b.get(p.i + 1..p.i + 17)?;
    if p.b[p.i] != b'"' {
        return None;
    }
    let lo = u64::from_le_bytes(<[u8; 8]>::try_from(&chunk[..8]).ok()?);
    let hi = u64::from_le_bytes(<[u8; 8]>::try_from(&chunk[8..]).ok()?);
    // The first quote, backslash, control character or other byte than ASCII of the 16
    // bytes (see `scan_plain`: the lowest flag of each word is a true one).
    let len = match (stops(lo), stops(hi)) {
        (0, 0) => return None,
        (0, h) => 8 + (h.trailing_zeros() / 8) as usize,
        (l, _) => (l.trailing_zeros() / 8) as usize,
    };
    if len > WORD_KEY_MAX || chunk[len] != b'"' {
        return None;
    }
    let keep = |w: u64, n: usize| {
        if n >= 8 {
            w
        } else {
            w & ((1u64 << (8 * n)) - 1)
        }
    };
    Some(((keep(lo, len), keep(hi, len.saturating_sub(8))), len))
}

/// A kind's name as words ([`name_words`]), its length, and the kind.
type KindWords = ((u64, u64), usize, Kind);

std::thread_local! {
    /// Sessions a decoder thread has met by the words of their names ([`short_words`]),
    /// the first [`ShortNames::CAP`]: a line's session is the one a line before it named,
    /// nearly always, and is then taken from here, not checked and built again.
    static SESSIONS: std::cell::RefCell<ShortNames<Text>> = const {
        std::cell::RefCell::new(ShortNames::new())
    };
}

/// The session name at the cursor: a short one ([`short_words`]) met before from the
/// thread's sessions, any other read with [`Scanner::string`].
#[inline]
fn session(p: &mut Scanner<'_>) -> Option<Text> {
    let Some((words, len)) = short_words(p) else {
        return Some(Text::from(&*p.string()?));
    };
    let met = SESSIONS.with_borrow(|kept| kept.get(words, len).cloned());
    if let Some(name) = met {
        p.i += len + 2;
        return Some(name);
    }
    let name = Text::from(&*p.string()?);
    SESSIONS.with_borrow_mut(|kept| kept.insert(words, len, name.clone()));
    Some(name)
}

/// The known kind whose name, of `len` bytes, has these words ([`short_words`]): one probe
/// of an open-addressing table hashed as the keys' table is (`word_slot`), where a scan of
/// every kind's words was 5% of the brief scanner's own time on the 10M trace's open.
fn kind_of_words(words: (u64, u64), len: usize) -> Option<Kind> {
    const SLOTS: usize = 256;
    // Room to spare, so every probe ends at an empty slot.
    const _: () = assert!(Kind::ALL.len() < SLOTS / 2);
    static KINDS: std::sync::LazyLock<Vec<Option<KindWords>>> = std::sync::LazyLock::new(|| {
        let mut table = vec![None; SLOTS];
        for &k in Kind::ALL {
            let name = k.as_str().as_bytes();
            if name.len() > WORD_KEY_MAX {
                continue;
            }
            let words = name_words(name);
            let mut s = super::word_slot(words, name.len()) % SLOTS;
            while table[s].is_some() {
                s = (s + 1) % SLOTS;
            }
            table[s] = Some((words, name.len(), k));
        }
        table
    });
    let mut s = super::word_slot(words, len) % SLOTS;
    loop {
        match KINDS[s] {
            None => return None,
            Some((w, n, k)) if w == words && n == len => return Some(k),
            Some(_) => s = (s + 1) % SLOTS,
        }
    }
}

/// The high bit of each byte of `w` that is a quote, a backslash, a control character or
/// not ASCII (and maybe of bytes above the lowest such byte).
#[inline]
fn stops(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = w ^ (ONES * u64::from(b'"'));
    let slash = w ^ (ONES * u64::from(b'\\'));
    ((quote.wrapping_sub(ONES) & !quote)
        | (slash.wrapping_sub(ONES) & !slash)
        | (w.wrapping_sub(ONES * 0x20) & !w)
        | w)
        & HIGH
}

/// A string at `i` of `b` holding a UTC time of the usual shape
/// ([`Timestamp::from_utc_bytes`]) and the position after it.
#[inline]
fn utc_time(b: &[u8], i: usize) -> Option<(Timestamp, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    // The shape ends in `Z`, so the string ends right after it or is not of the shape.
    let len = if b.get(i + 21) == Some(&b'"') { 20 } else { 24 };
    if b.get(i + 1 + len) != Some(&b'"') {
        return None;
    }
    Some((
        Timestamp::from_utc_bytes(&b[i + 1..i + 1 + len])?,
        i + len + 2,
    ))
}

fn colon(p: &mut Scanner<'_>) -> Option<()> {
    p.ws();
    p.eat(b':')?;
    p.ws();
    Some(())
}

fn as_u64(v: Val<'_>) -> Option<u64> {
    match v {
        Val::Json(Value::Number(n)) => n.as_u64(),
        _ => None,
    }
}

/// A list of strings, checked; the items are kept when `keep`.
fn strings<'de>(p: &mut Scanner<'de>, keep: bool) -> Option<Vec<Cow<'de, str>>> {
    let mut items = Vec::new();
    p.eat(b'[')?;
    p.ws();
    if p.b.get(p.i) == Some(&b']') {
        p.i += 1;
        return Some(items);
    }
    loop {
        if keep {
            items.push(p.string()?);
        } else {
            p.skip_string()?;
        }
        p.ws();
        match p.next()? {
            b',' => p.ws(),
            b']' => return Some(items),
            _ => return None,
        }
    }
}

/// Any value the decoder keeps as it is (an `extra` field, `Bag::value`), checked as the
/// fast path decodes it: a field some kind defines (`known`) as [`Scanner::value`], any
/// other as [`Scanner::raw`], so an object or a list is taken exactly when the decoder
/// takes it (deep nesting and unusual lists of strings are left to the decoder).
fn any(p: &mut Scanner<'_>, known: bool) -> Option<()> {
    match *p.b.get(p.i)? {
        b'"' => p.skip_string()?,
        b'[' | b'{' => {
            let start = p.i;
            if strings(p, false).is_none() {
                p.i = start;
                if known {
                    p.value()?
                } else {
                    p.raw()?
                };
            }
        }
        b'-' | b'0'..=b'9' => {
            p.number()?;
        }
        b't' => word(p, "true")?,
        b'f' => word(p, "false")?,
        b'n' => word(p, "null")?,
        _ => return None,
    }
    Some(())
}

fn word(p: &mut Scanner<'_>, w: &str) -> Option<()> {
    let end = p.i + w.len();
    (p.b.get(p.i..end)? == w.as_bytes()).then(|| p.i = end)
}

/// A field the kind defines, checked as its class says; the gist's fields are kept.
fn field<'de>(p: &mut Scanner<'de>, f: F, c: Class, found: &mut Found<'de>) -> Option<()> {
    match c {
        Class::Str | Class::Enum(_) => {
            // A lean brief needs the required fields' presence alone, and no other string.
            let kept = if found.lean {
                matches!(f, F::formula | F::target | F::name)
            } else {
                matches!(
                    f,
                    F::formula
                        | F::role
                        | F::target
                        | F::by
                        | F::trigger
                        | F::outcome
                        | F::name
                        | F::plan
                        | F::unit
                        | F::source
                )
            };
            if !kept && c == Class::Str {
                return p.skip_string();
            }
            if found.lean && kept {
                p.skip_string()?;
                let present = Some(Cow::Borrowed(""));
                match f {
                    F::formula => found.formula = present,
                    F::target => found.target = present,
                    _ => found.name = present,
                }
                return Some(());
            }
            if !kept
                && let Class::Enum(e) = c
                && let Some((words, len)) = short_words(p)
            {
                // A name not kept, as its words: checked once per thread.
                let at = p.i + 1;
                p.i += len + 2;
                return e
                    .accepts_short(words, len, || p.text(at..at + len))?
                    .then_some(());
            }
            let s = p.string()?;
            if let Class::Enum(e) = c
                && !e.accepts(&s)
            {
                return None;
            }
            if !kept {
                return Some(());
            }
            let slot = match f {
                F::formula => &mut found.formula,
                F::role => &mut found.role,
                F::target => &mut found.target,
                F::by => &mut found.by,
                F::trigger => &mut found.trigger,
                F::outcome => &mut found.outcome,
                F::name => &mut found.name,
                F::plan => &mut found.plan,
                F::unit => &mut found.unit,
                F::source => &mut found.source,
                _ => return Some(()),
            };
            *slot = Some(s);
        }
        Class::Strs => {
            let keep = matches!(f, F::formulas | F::retracted) && !found.lean;
            let items = strings(p, keep)?;
            match f {
                F::formulas => found.formulas = Some(items),
                F::retracted => found.retracted = Some(items),
                _ => {}
            }
        }
        Class::Bool => match *p.b.get(p.i)? {
            b't' => word(p, "true")?,
            b'f' => word(p, "false")?,
            _ => return None,
        },
        Class::Count => {
            as_u64(p.number()?)?;
        }
        Class::Tier => {
            if !(1..=3).contains(&as_u64(p.number()?)?) {
                return None;
            }
        }
        Class::Confidence => match p.number()? {
            Val::Json(Value::Number(n)) => {
                let c = n.as_f64()?;
                if !(c > 0.0 && c <= 1.0) {
                    return None;
                }
            }
            _ => return None,
        },
        Class::Any => {
            let start = p.i;
            if f == F::value {
                // A belief's value is kept as written: an object, or a list of anything but
                // strings, is left to the decoder.
                match *p.b.get(p.i)? {
                    b'{' => return None,
                    b'[' => {
                        strings(p, false)?;
                    }
                    _ => any(p, true)?,
                }
            } else {
                any(p, true)?;
            }
            if matches!(f, F::value) {
                found.value = Some(p.text(start..p.i)?);
            }
        }
        Class::Structure => structure(p, found.kind, f, found.lean)?,
        Class::Score => match *p.b.get(p.i)? {
            b'"' => p.skip_string()?,
            b't' => word(p, "true")?,
            b'f' => word(p, "false")?,
            _ => {
                p.number()?;
            }
        },
    }
    Some(())
}

/// A structure checked by decoding it through the type the decoder gives it, nothing
/// kept: a step's `new_beliefs` and `inputs` only in a lean brief (the full gist is made of
/// them, so the decoder makes it).
fn structure(p: &mut Scanner<'_>, kind: Kind, f: F, lean: bool) -> Option<()> {
    use crate::trace::event::{Belief, Decision, PlanStep, ToolCall};
    if !lean && matches!(f, F::new_beliefs | F::inputs) {
        return None;
    }
    if matches!(p.b.get(p.i), Some(b'{' | b'[')) {
        // Objects and lists (every usual one) decoded from their text into the type.
        let ok = match (kind, f) {
            (Kind::World, F::truth) => p
                .nested_as::<std::collections::BTreeMap<String, bool>>()
                .is_some(),
            (Kind::Plan, F::steps) => p.nested_as::<Vec<PlanStep>>().is_some(),
            (Kind::Step, F::new_beliefs) => p.nested_as::<Vec<Belief>>().is_some(),
            (Kind::Step, F::tool_calls) => p.nested_as::<Vec<ToolCall>>().is_some(),
            (Kind::Step, F::inputs) => p.nested_as::<serde_json::Map<String, Value>>().is_some(),
            (Kind::Review, F::decisions) => p.nested_as::<Vec<Decision>>().is_some(),
            _ => false,
        };
        return ok.then_some(());
    }
    let v = p.value()?;
    let ok = match (kind, f) {
        (Kind::World, F::truth) => typed_val::<std::collections::BTreeMap<String, bool>>(v).is_ok(),
        (Kind::Plan, F::steps) => typed_val::<Vec<PlanStep>>(v).is_ok(),
        (Kind::Step, F::new_beliefs) => typed_val::<Vec<Belief>>(v).is_ok(),
        (Kind::Step, F::tool_calls) => typed_val::<Vec<ToolCall>>(v).is_ok(),
        (Kind::Step, F::inputs) => typed_val::<serde_json::Map<String, Value>>(v).is_ok(),
        (Kind::Review, F::decisions) => typed_val::<Vec<Decision>>(v).is_ok(),
        _ => false,
    };
    ok.then_some(())
}

fn parse_enum<'a, T: Deserialize<'a>>(s: Option<&'a str>) -> Option<T> {
    T::deserialize(StrDeserializer::<serde_json::Error>::new(s?)).ok()
}

/// The gist of a line whose fields all checked out; `None` where the decoder would find a
/// required field missing.
fn gist(
    kind: Option<Kind>,
    kind_name: &str,
    id: Option<&str>,
    seen: u64,
    found: &Found<'_>,
) -> Option<Gist> {
    let Some(kind) = kind else {
        return Some(Gist::Unknown(kind_name.into()));
    };
    if found.lean {
        return lean_gist(kind, seen, found);
    }
    Some(match kind {
        Kind::Announce => Gist::announce(
            id,
            found.formula.as_deref()?,
            parse_enum(found.role.as_deref()).unwrap_or_default(),
        ),
        Kind::Retract => Gist::Retract(
            Box::new(crate::trace::brief::Target::of(found.target.as_deref()?)),
            parse_enum(found.by.as_deref()),
        ),
        Kind::Revise => Gist::revise(
            found.trigger.as_deref(),
            found.retracted.iter().flatten().map(|s| &**s),
        ),
        Kind::Verify => {
            if found.formula.is_none() && seen & (1u64 << (F::formulas as u32)) == 0 {
                return None;
            }
            Gist::verify(
                found
                    .formula
                    .as_deref()
                    .into_iter()
                    .chain(found.formulas.iter().flatten().map(|s| &**s)),
                parse_enum(found.outcome.as_deref()),
            )
        }
        Kind::Query => Gist::query(found.formula.as_deref()?),
        // The decoder requires a gate's formula; the gist is the kind alone.
        Kind::Gate => {
            found.formula.as_deref()?;
            Gist::Plain(Kind::Gate)
        }
        Kind::Answer => Gist::answer(found.formula.as_deref()),
        Kind::Belief => {
            let value: Option<serde_json::Value> = match found.value {
                Some(raw) => Some(serde_json::from_str(raw).ok()?),
                None => None,
            };
            Gist::Belief(Box::new(crate::trace::brief::GroundWrite::new(
                found.name.as_deref()?,
                value.as_ref(),
                found.unit.as_deref(),
                found.source.as_deref(),
            )))
        }
        Kind::Plan => Gist::Plan(id.map(Into::into)),
        Kind::Step => Gist::Step(Box::new(crate::trace::brief::StepGist {
            plan: found.plan.as_deref().map(Into::into),
            // A step's `new_beliefs` and `inputs` are structures, left to the decoder: a
            // step the scanner takes has neither.
            wrote: Vec::new(),
            reads: Vec::new(),
        })),
        Kind::Postcondition => Gist::Postcondition(found.plan.as_deref().map(Into::into)),
        Kind::Score => {
            found.name.as_deref()?;
            Gist::Score(found.target.as_deref().map(Into::into))
        }
        k => Gist::Plain(k),
    })
}

/// The gist of a lean brief: the kind alone, after the same checks of required fields
/// as [`gist`] (so the line is an event exactly when the full gist says so), building
/// nothing.
fn lean_gist(kind: Kind, seen: u64, found: &Found<'_>) -> Option<Gist> {
    let required = match kind {
        Kind::Announce | Kind::Query | Kind::Gate => found.formula.is_some(),
        Kind::Retract => found.target.is_some(),
        Kind::Verify => found.formula.is_some() || seen & (1u64 << (F::formulas as u32)) != 0,
        Kind::Belief => {
            found.name.is_some()
                && found
                    .value
                    .is_none_or(|raw| serde_json::from_str::<Value>(raw).is_ok())
        }
        Kind::Score => found.name.is_some(),
        _ => true,
    };
    required.then_some(Gist::Plain(kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::brief::Gist;
    use crate::trace::event::FileName;
    use crate::trace::reader::{ReaderConfig, decode_one};
    use proptest::prelude::*;

    /// What a scan took from a line, in a form two scans can be compared by.
    fn seen(s: Scanned) -> (bool, Option<u64>, Option<f64>, Option<String>, Gist) {
        (
            s.v_given,
            s.seq,
            s.ts,
            s.session.map(|t| t.to_string()),
            s.gist,
        )
    }

    fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::sample::select(items).prop_map(str::to_string)
    }

    /// Kinds, the ones the replay reads fields of more often.
    fn kind() -> impl Strategy<Value = String> {
        let mut names: Vec<&'static str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
        names.extend(["tool_call", "mystery", "Announce", "k\\u0069nd"]);
        let read = [
            "announce",
            "announce",
            "retract",
            "revise",
            "verify",
            "query",
            "belief",
            "plan",
            "step",
            "postcondition",
            "answer",
            "score",
        ];
        prop_oneof![
            2 => prop::sample::select(names),
            3 => prop::sample::select(read.to_vec()),
        ]
        .prop_map(|k| format!("\"{k}\""))
    }

    fn key() -> impl Strategy<Value = String> {
        let mut keys: Vec<String> = super::super::FIELD_NAMES
            .iter()
            .map(|k| format!("\"{k}\""))
            .collect();
        for k in [
            "\"kind\"",
            "\"v\"",
            "\"seq\"",
            "\"ts\"",
            "\"session\"",
            "\"id\"",
            "\"x_trace\"",
            "\"args\"",
            "\"form\\u0075la\"",
            "\"s\\u0065q\"",
            "\"\"",
        ] {
            keys.push(k.to_string());
        }
        prop::sample::select(keys)
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![5 => usual_value(), 1 => hostile_value()]
    }

    /// Strings with bad escapes and nested values of every shape: the scanner checks them
    /// without building anything, or leaves the line to the decoder.
    fn hostile_value() -> impl Strategy<Value = String> {
        pick(&[
            "\"\\ud83d\\u0041\"",
            "\"\\ud83d\\ude00 \\t\\/\"",
            "\"\\udc00\"",
            "\"\\u12\"",
            "\"\\q\"",
            "\"tab\tin\"",
            "{\"a\":[1,{\"b\":null}],\"c\":\"caf\\u00e9\"}",
            "[1,\"a\",[true]]",
            "{\"a\":1e400}",
            "[1e400]",
            "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\\ud83d\\ude00\"}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":1,\"a\":2}",
            "{\"a\" 1}",
            "[1 2]",
            "[1,]",
            "{\"a\":01}",
            "{\"a\":-0.5e-3}",
            "{\"a\":[\"x\",]}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            "{\"a\":{\"b\":{\"c\":[]}}}",
            "{\"a\":tru}",
            "[\"a\\u0000\"]",
            "[\"\\udc00\"]",
            "[\"\\ud83d\\ude00\",\"\\ud83d\\u0041\"]",
            "{\"a\":[1,{\"b\":\"\\ud83d\\u0041\"}]}",
            "{\"a\":{\"a\":[]},\"a\":2}",
        ])
    }

    fn usual_value() -> impl Strategy<Value = String> {
        pick(&[
            "\"p1 & !p2 -> p3\"",
            "\"p1\"",
            "\" p1 \"",
            "\"b1\"",
            "\"(\"",
            "\"p &\"",
            "\"forall x. P(x)\"",
            "\"\"",
            "\"caf\\u00e9 \\\"q\\\"\"",
            "\"\\ud83d\"",
            "\"fact\"",
            "\"rule\"",
            "\"norm\"",
            "\"Fact\"",
            "\"agent\"",
            "\"revision\"",
            "\"user\"",
            "\"contradiction\"",
            "\"entailed\"",
            "\"newinfo\"",
            "\"done\"",
            "\"failed\"",
            "\"dispatched\"",
            "\"yes\"",
            "\"no\"",
            "\"unknown\"",
            "\"generated\"",
            "\"library\"",
            "\"gen-1\"",
            "\"2026-01-01T00:00:00Z\"",
            "\"2026-01-01T00:00:00.123+01:00\"",
            "\"not a date\"",
            "0",
            "1",
            "2",
            "3",
            "4",
            "01",
            "-1",
            "0.5",
            "1.0",
            "1e0",
            "1767225600.25",
            "18446744073709551615",
            "99999999999999999999",
            "1e400",
            "true",
            "false",
            "null",
            "[]",
            "[\"b1\"]",
            "[\"p & q\",\" b2 \",\"(\"]",
            "[\"a\",1]",
            "[1]",
            "[\"a\",]",
            "{}",
            "{\"a\":1}",
            "[{\"name\":\"m\",\"value\":1}]",
            "[{\"id\":\"S1\"}]",
            "{\"p0\":true}",
        ])
    }

    /// Field names a line of `kind` usually has (the first is its required one, if any).
    fn usual(kind: &str) -> &'static [&'static str] {
        match kind {
            "\"announce\"" => &[
                "formula",
                "role",
                "confidence",
                "source",
                "because",
                "text",
                "id",
            ],
            "\"retract\"" => &["target", "reason", "by"],
            "\"verify\"" => &[
                "formula", "formulas", "outcome", "because", "method", "tier", "detail",
            ],
            "\"revise\"" => &["trigger", "retracted", "policy"],
            "\"query\"" => &["formula", "answer"],
            "\"belief\"" => &["name", "value", "unit", "source"],
            "\"plan\"" => &[
                "id",
                "intention_type",
                "context_conditions",
                "steps",
                "origin",
            ],
            "\"step\"" => &[
                "plan",
                "step",
                "status",
                "post_met",
                "new_beliefs",
                "summary",
                "tool_calls",
                "inputs",
            ],
            "\"postcondition\"" => &[
                "plan",
                "step",
                "tier",
                "ok",
                "failure_mode",
                "program",
                "detail",
            ],
            "\"plan_stats\"" => &["plan", "use_count", "success_count", "failure_count"],
            "\"turn\"" => &["question", "reply", "literal", "truth"],
            "\"world\"" => &["atoms", "rules", "truth"],
            "\"intention\"" => &[
                "type",
                "goal",
                "satisfaction",
                "open_parameters",
                "id",
                "files",
            ],
            "\"satisfaction\"" => &[
                "intention",
                "ok",
                "answer",
                "expected_answer",
                "correct",
                "failure_mode",
            ],
            "\"answer\"" => &["text", "formula", "hedged"],
            "\"score\"" => &[
                "name",
                "value",
                "label",
                "explanation",
                "target",
                "source",
                "passed",
            ],
            "\"session\"" => &["agent", "model", "meta"],
            "\"review\"" => &["decisions"],
            _ => &["text", "message", "level", "asserts", "formula"],
        }
    }

    /// Values of the type a field usually has (so that many lines are events), with some of
    /// the wrong type.
    fn typed_value(field: &str) -> BoxedStrategy<String> {
        let good: &'static [&'static str] = match field {
            "role" => &[
                "\"fact\"",
                "\"rule\"",
                "\"norm\"",
                "\"assumption\"",
                "\"Fact\"",
            ],
            "by" => &["\"agent\"", "\"revision\"", "\"user\"", "\"nobody\""],
            "outcome" => &[
                "\"contradiction\"",
                "\"entailed\"",
                "\"newinfo\"",
                "\"ungrounded\"",
                "\"x\"",
            ],
            "answer" => &["\"yes\"", "\"no\"", "\"unknown\"", "\"maybe\""],
            "reply" => &["\"YES\"", "\"NO\"", "\"yes\""],
            "status" => &["\"done\"", "\"failed\"", "\"dispatched\"", "\"Done\""],
            "origin" => &["\"generated\"", "\"library\"", "\"elsewhere\""],
            "confidence" => &["0.5", "1", "1.0", "0", "1.5", "-0.5", "1e-3", "\"0.5\""],
            "tier" => &["1", "2", "3", "0", "4", "2.0"],
            "use_count" | "success_count" | "failure_count" => {
                &["0", "3", "-1", "1.5", "18446744073709551615"]
            }
            "ok" | "post_met" | "hedged" | "correct" => &["true", "false", "null", "1"],
            "because" | "retracted" | "formulas" | "context_conditions" | "asserts" | "atoms"
            | "rules" | "files" => &[
                "[]",
                "[\"b1\"]",
                "[\"p & q\",\" b2 \",\"(\"]",
                "[\"p1\",\"p1\"]",
                "[\"a\",1]",
                "[null]",
            ],
            "steps" | "new_beliefs" | "decisions" | "tool_calls" => &[
                "[]",
                "[{\"name\":\"m\",\"value\":1}]",
                "[{\"name\":\"m\",\"value\":{\"a\":[1]},\"unit\":\"s\",\"x\":1}]",
                "[{\"name\":1}]",
                "[{\"id\":\"S1\"}]",
                "[{\"id\":\"S1\",\"kind\":\"fetch\",\"deps\":[\"S0\"],\"post\":[\"p\"]}]",
                "[{\"id\":\"S1\",\"deps\":\"S0\"}]",
                "[{\"id\":\"S1\",\"id\":\"S2\"}]",
                "[{\"action\":\"keep\",\"plan\":\"P1\"}]",
                "[{\"action\":\"nope\"}]",
                "[{\"tool\":\"bash\",\"args\":{\"q\":1}}]",
                "[{\"tool\":null}]",
                "{\"id\":\"S1\"}",
                "\"S1\"",
            ],
            "inputs" => &["{}", "{\"a\":1,\"b\":[null]}", "[]", "{\"a\":1e400}", "3"],
            "truth" | "meta" | "detail" | "goal" | "value" => &[
                "{\"p0\":true}",
                "{\"p0\":1}",
                "{\"p0\":true,\"p0\":false}",
                "3",
                "\"x\"",
                "null",
                "[\"a\"]",
            ],
            _ => &[
                "\"p1 & !p2 -> p3\"",
                "\"p1\"",
                "\" p1 \"",
                "\"b1\"",
                "\"(\"",
                "\"\"",
                "\"forall x. P(x)\"",
                "\"caf\\u00e9 \\\"q\\\"\"",
                "\"P0\"",
                "\"metric_1\"",
            ],
        };
        prop_oneof![4 => pick(good), 1 => value()].boxed()
    }

    /// A line that is mostly of the usual shape: the kind first, then its usual fields with
    /// values mostly of their type, and random pairs.
    fn line() -> impl Strategy<Value = String> {
        kind()
            .prop_flat_map(|k| {
                let fields = usual(&k);
                let usual_pair = prop::sample::select(fields)
                    .prop_flat_map(|f| typed_value(f).prop_map(move |v| format!("\"{f}\":{v}")));
                let env = prop_oneof![
                    (0u64..4).prop_map(|n| format!("\"seq\":{n}")),
                    pick(&[
                        "\"ts\":1767225600.5",
                        "\"ts\":\"2026-01-01T00:00:01Z\"",
                        "\"ts\":\"x\""
                    ]),
                    pick(&[
                        "\"session\":\"s1\"",
                        "\"session\":\"s\\u0031\"",
                        "\"session\":1"
                    ]),
                    pick(&["\"id\":\"b1\"", "\"v\":1", "\"v\":2", "\"id\":null"]),
                ];
                let other = (key(), value(), pick(&["", " ", "\t"]))
                    .prop_map(|(k, v, w)| format!("{k}{w}:{w}{v}"));
                let pair = prop_oneof![6 => usual_pair, 2 => env, 1 => other];
                let first =
                    typed_value(fields[0]).prop_map(move |v| format!("\"{}\":{v}", fields[0]));
                (
                    Just(k),
                    prop::option::weighted(0.8, first),
                    prop::collection::vec(pair, 0..6),
                    prop::bool::weighted(0.05),
                    pick(&["}", "}", "}", "}", "} ", "", "}}", ",}"]),
                )
            })
            .prop_map(|(k, first, pairs, kind_later, close)| {
                let mut all = vec![format!("\"kind\":{k}")];
                all.extend(first);
                all.extend(pairs);
                if kind_later {
                    all.rotate_left(1);
                }
                format!("{{{}{close}", all.join(","))
            })
    }

    /// What the decoder makes of the line, briefed.
    /// A line's `seq`, `ts` (seconds), `session` as given, and gist.
    type Seen = (Option<u64>, Option<f64>, Option<String>, Gist);

    fn reference(line: &str) -> Option<Seen> {
        let ev = decode_one(
            &FileName::new("t.jsonl"),
            ReaderConfig::default(),
            0,
            1,
            line.as_bytes(),
        )?;
        Some((
            ev.seq_given.then_some(ev.seq),
            ev.ts.as_ref().map(|t| t.unix_seconds),
            ev.session_given.then(|| ev.session.to_string()),
            Gist::of(ev.id.as_deref(), &ev.body),
        ))
    }

    proptest! {
        /// A key read as words from the line is the key [`Scanner::string`] reads, naming
        /// what [`key_of`] says, with the cursor after it: whatever follows it (a key near
        /// the end of the line is read the slow way) and whatever its bytes.
        #[test]
        fn a_key_read_as_words_is_the_key_read_as_a_string(
            k in prop_oneof![key(), "\"[a-z_\\\\\"\\x01é]{0,20}\"?"],
            after in "[:\"a-z0-9 ]{0,24}",
        ) {
            let line = format!("{k}{after}");
            let mut fast = Scanner::of_str(&line);
            let mut slow = Scanner::of_str(&line);
            let want = slow.string().map(|s| key_of(&s));
            let got = super::key(&mut fast);
            prop_assert_eq!(&got, &want);
            if want.is_some() {
                prop_assert_eq!(fast.i, slow.i);
            }
        }
    }

    /// Every kind's name read as words is that kind, and a name that is no kind's, or
    /// differs in one byte, is none.
    #[test]
    fn every_kind_is_found_by_its_words() {
        for &k in Kind::ALL {
            let line = format!("\"{}\"                ", k.as_str());
            let p = Scanner::of_str(&line);
            let (w, n) = short_words(&p).unwrap_or_else(|| panic!("{k:?} not read as words"));
            assert_eq!(kind_of_words(w, n), Some(k));
            assert_eq!(kind_of_words((w.0 ^ 1, w.1), n), None, "{k:?}");
            assert_eq!(kind_of_words(w, n + 1), None, "{k:?}");
        }
        for name in ["mystery", "Announce", "announce_", "", "tool_call"] {
            let line = format!("\"{name}\"                ");
            let p = Scanner::of_str(&line);
            let (w, n) = short_words(&p).expect("a short name");
            assert_eq!(kind_of_words(w, n), None, "{name}");
        }
    }

    /// Bytes put into a line: not UTF-8 (stray continuation bytes, overlong forms,
    /// surrogates, past U+10FFFF, sequences cut short), and UTF-8 at the edges of its
    /// ranges.
    fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::sample::select(vec![
            vec![0xFF],
            vec![0x80],
            vec![0xBF],
            vec![0xC0, 0xAF],
            vec![0xC1, 0xBF],
            vec![0xE0, 0x80, 0xAF],
            vec![0xF0, 0x80, 0x80, 0xAF],
            vec![0xED, 0xA0, 0x80],
            vec![0xED, 0xBF, 0xBF],
            vec![0xF4, 0x90, 0x80, 0x80],
            vec![0xF5, 0x80, 0x80, 0x80],
            vec![0xE2, 0x88],
            vec![0xF0, 0x9F, 0x98],
            vec![0xC3],
            vec![0xC2, 0x80],
            vec![0xC3, 0xA9],
            vec![0xDF, 0xBF],
            vec![0xE0, 0xA0, 0x80],
            vec![0xE2, 0x88, 0x80],
            vec![0xED, 0x9F, 0xBF],
            vec![0xEE, 0x80, 0x80],
            vec![0xEF, 0xBF, 0xBF],
            vec![0xF0, 0x90, 0x80, 0x80],
            vec![0xF0, 0x9F, 0x98, 0x80],
            vec![0xF4, 0x8F, 0xBF, 0xBF],
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// A line's bytes scanned as they are ([`scan_bytes`], which checks them as UTF-8
        /// as it walks them) give what checking the whole line as UTF-8 and scanning the
        /// text gives, full or lean, wherever bytes that are not UTF-8 are put (in strings,
        /// keys, nested values, between tokens, cut short at the end of the line): so a
        /// line whose bytes are not UTF-8 is never taken, and goes to the decoder, which
        /// reports where they stop being UTF-8.
        #[test]
        fn scanning_bytes_is_checking_them_then_scanning_the_text(
            line in line(),
            put in prop::collection::vec((prop::arbitrary::any::<prop::sample::Index>(), hostile_bytes()), 0..3),
            at_end in prop::option::weighted(0.1, hostile_bytes()),
            lean in prop::bool::ANY,
        ) {
            let mut bytes = line.into_bytes();
            for (at, b) in put {
                let i = at.index(bytes.len() + 1);
                bytes.splice(i..i, b);
            }
            bytes.extend(at_end.into_iter().flatten());
            let (got, want) = crate::trace::brief::lean(lean, || {
                (
                    scan_bytes(&bytes, None).map(seen),
                    std::str::from_utf8(&bytes).ok().and_then(scan).map(seen),
                )
            });
            prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&bytes));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// A scan led by a session gives a line of that session (or of none) the full
        /// scan's brief, and a line of another session the lean scan's, exactly; it takes
        /// every line the full scan takes (and lines of other sessions that only the lean
        /// scan takes, when nothing before `session` needs the decoder).
        #[test]
        fn a_led_scan_is_lean_exactly_for_other_sessions(
            line in line(),
            lead in pick(&["s1", "s2", ""]),
        ) {
            let led = scan_bytes(line.as_bytes(), Some(lead.as_bytes())).map(seen);
            let full = scan(&line).map(seen);
            let lean = crate::trace::brief::lean(true, || scan(&line).map(seen));
            if full.is_some() {
                prop_assert!(led.is_some(), "{}", line);
            }
            if let Some(led) = led {
                let other = led.3.as_deref().is_some_and(|s| s != lead);
                prop_assert_eq!(Some(led), if other { lean } else { full }, "{}", line);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// Whatever the scanner takes, the decoder takes too, with the same envelope and the
        /// same gist: a load of briefs is a load of events, briefed.
        #[test]
        fn what_the_scanner_takes_the_decoder_takes_alike(line in line()) {
            if let Some(s) = scan(&line) {
                let got = (
                    s.seq,
                    s.ts,
                    s.session.as_deref().map(str::to_string),
                    s.gist,
                );
                match reference(&line) {
                    Some(r) => prop_assert_eq!(got, r, "{}", line),
                    None => prop_assert!(false, "{} is not an event for the decoder", line),
                }
            }
        }
    }

    /// The property above means something only if the scanner takes many of its lines.
    #[test]
    fn the_random_lines_are_often_taken() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = line();
        let taken = (0..2000)
            .filter(|_| {
                let l = strategy.new_tree(&mut runner).expect("a line").current();
                scan(&l).is_some()
            })
            .count();
        assert!(taken >= 300, "only {taken} of 2000 random lines taken");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// A lean scan ([`crate::trace::brief::lean`]) takes every line the full scan
        /// takes, with the same envelope and kind, and whatever it takes the decoder takes
        /// with the same envelope and kind: which lines are events and how the index files
        /// them does not depend on what the lean gist leaves out. (It takes more: a step's
        /// structures are checked, not kept, where the full gist needs the decoder's.)
        #[test]
        fn a_lean_scan_takes_what_the_full_scan_takes(line in line()) {
            let envelope = |s: Scanned| {
                (
                    s.seq,
                    s.ts,
                    s.session.as_deref().map(str::to_string),
                    s.gist.kind(),
                    s.gist.kind_name().to_string(),
                )
            };
            let lean = crate::trace::brief::lean(true, || scan(&line).map(envelope));
            if let Some(full) = scan(&line).map(envelope) {
                prop_assert_eq!(lean.clone(), Some(full), "{}", line);
            }
            if let Some(lean) = lean {
                let decoded = reference(&line).map(|(seq, ts, session, gist)| {
                    (seq, ts, session, gist.kind(), gist.kind_name().to_string())
                });
                prop_assert_eq!(Some(lean), decoded, "{}", line);
            }
        }
    }

    /// The scanner is worth having only if it takes the usual lines, and it takes lines of
    /// every kind the replay reads (with and without the optional fields).
    #[test]
    fn the_scanner_takes_almost_every_generated_line() {
        let bytes = crate::trace::generate::GenConfig {
            events: 5000,
            seed: 11,
            ..Default::default()
        }
        .bytes();
        let text = String::from_utf8(bytes).expect("generated traces are UTF-8");
        let mut taken = 0;
        for l in text.lines() {
            if let Some(s) = scan(l) {
                taken += 1;
                assert_eq!(
                    Some((s.seq, s.ts, s.session.map(|c| c.to_string()), s.gist)),
                    reference(l),
                    "{l}"
                );
            }
        }
        assert!(taken * 100 >= 5000 * 95, "only {taken} of 5000 lines");
        for line in [
            r#"{"kind":"announce","id":"b1","formula":"p & q","role":"rule","confidence":0.5}"#,
            r#"{"kind":"announce","formula":"(","text":"caf\u00e9 \"x\""}"#,
            r#"{"kind":"retract","target":" p & q ","by":"user","seq":4}"#,
            r#"{"kind":"revise","trigger":"p","retracted":["b1","q | r"],"policy":"x"}"#,
            r#"{"kind":"verify","formulas":["p","("],"outcome":"contradiction"}"#,
            r#"{"kind":"verify","formulas":[]}"#,
            r#"{"kind":"query","formula":"p -> q","answer":"yes"}"#,
            r#"{"kind":"belief","name":"metric_1","value":3,"unit":"s"}"#,
            r#"{"kind":"plan","id":"P1","origin":"library","context_conditions":["x"]}"#,
            r#"{"kind":"step","plan":"P1","status":"done","post_met":false}"#,
            r#"{"kind":"postcondition","plan":"P1","tier":3,"ok":true}"#,
            r#"{"kind":"plan_stats","plan":"P1","use_count":3}"#,
            r#"{"kind":"mystery","x":"y","seq":1,"ts":1767225600.5,"session":"s"}"#,
            // Objects and lists the decoder keeps as they are: checked, not built.
            r#"{"kind":"tool_call","args":{"q":1,"r":[true,{"s":"\u00e9"}]}}"#,
            r#"{"kind":"session","meta":{"generator":"g"},"x":[1,"a",null]}"#,
            // A field no kind defines is kept as its text, whose numbers are not converted.
            r#"{"kind":"tool_call","args":{"q":1e999}}"#,
        ] {
            let s = scan(line).unwrap_or_else(|| panic!("declined {line}"));
            assert_eq!(Some(s.gist), reference(line).map(|r| r.3), "{line}");
        }
        // Left to the decoder: structures, nesting, the kind after another key, errors.
        for line in [
            r#"{"kind":"step","plan":"P1","status":"done","new_beliefs":[{"name":"m"}]}"#,
            r#"{"kind":"belief","name":"m","value":{"a":1}}"#,
            r#"{"kind":"log","meta":{"q":1e999}}"#,
            r#"{"seq":1,"kind":"log"}"#,
            r#"{"kind":"announce","formula":"p","confidence":0}"#,
            r#"{"kind":"announce"}"#,
            r#"{"kind":"log","message":"a","message":"b"}"#,
            r#"{"kind":"log","v":2}"#,
        ] {
            assert!(scan(line).is_none(), "took {line}");
        }
    }

    /// A structure's text as the brief scanner meets it: lists of objects (and objects)
    /// whose keys are the structures' known and unknown fields, some given twice, whose
    /// values are usual and hostile ones, nested objects among them.
    fn structure_text() -> impl Strategy<Value = String> {
        let keys = || {
            pick(&[
                "name",
                "value",
                "unit",
                "source",
                "tool",
                "args",
                "result",
                "error",
                "id",
                "kind",
                "deps",
                "post",
                "compute",
                "output",
                "plan",
                "action",
                "note",
                "description",
                "x",
                "p0",
            ])
        };
        let leaf = prop_oneof![
            4 => usual_value(),
            2 => hostile_value(),
            2 => pick(&["\"keep\"", "\"refine\"", "\"S1\"", "[\"S1\",\"S2\"]", "\"fetch\""]),
        ];
        let object = |v: BoxedStrategy<String>, keys: BoxedStrategy<String>| {
            prop::collection::vec((keys, v), 0..5).prop_map(|fields| {
                let body: Vec<String> =
                    fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", body.join(","))
            })
        };
        let inner = object(leaf.clone().boxed(), keys().boxed());
        let value = prop_oneof![3 => leaf, 1 => inner].boxed();
        let item = object(value, keys().boxed());
        prop_oneof![
            4 => prop::collection::vec(item.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            2 => item,
            1 => hostile_value(),
        ]
    }

    /// What `value` and `typed_val` (the way the scanner checked structures before, and
    /// the decoder's `Bag::typed` does) take of `text` into `T`.
    fn through_value<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
        let mut p = Scanner::of_str(text);
        let t = typed_val::<T>(p.value()?).ok()?;
        (p.i == text.len()).then_some(t)
    }

    /// `nested_as` into `T`: `Some(t)` only where `through_value` gives the same `t`.
    fn direct_agrees<T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
        text: &str,
    ) -> Result<bool, TestCaseError> {
        let mut p = Scanner::of_str(text);
        let Some(t) = p.nested_as::<T>() else {
            prop_assert_eq!(p.i, 0, "declined, the cursor moved: {}", text);
            return Ok(false);
        };
        prop_assert_eq!(p.i, text.len(), "{}", text);
        prop_assert_eq!(Some(t), through_value::<T>(text), "{}", text);
        Ok(true)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The structures decoded from their text take what they take through a `Value`,
        /// into the same structure: no unknown field is ignored unchecked, so a number out
        /// of range, a lone surrogate or a raw control character anywhere is refused both
        /// ways.
        #[test]
        fn a_structure_from_its_text_is_the_structure_through_a_value(text in structure_text()) {
            use crate::trace::event::{Belief, Decision, PlanStep, ToolCall};
            direct_agrees::<Vec<Belief>>(&text)?;
            direct_agrees::<Vec<PlanStep>>(&text)?;
            direct_agrees::<Vec<ToolCall>>(&text)?;
            direct_agrees::<Vec<Decision>>(&text)?;
            direct_agrees::<std::collections::BTreeMap<String, bool>>(&text)?;
            direct_agrees::<serde_json::Map<String, Value>>(&text)?;
        }
    }

    /// Why `nested_as` is only for types that ignore nothing: a type that skips unknown
    /// fields unchecked takes texts a `Value` refuses (the property test above, run with
    /// such a type, fails on these). The usual structures are taken.
    #[test]
    fn a_type_that_ignores_fields_would_take_what_a_value_refuses() {
        use crate::trace::event::{Belief, Decision, PlanStep, ToolCall};
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Lax {
            #[allow(dead_code)]
            name: String,
        }
        for text in [
            r#"[{"name":"a","x":1e400}]"#,
            r#"[{"name":"a","x":"\ud800"}]"#,
        ] {
            assert!(
                Scanner::of_str(text).nested_as::<Vec<Lax>>().is_some(),
                "{text}"
            );
            assert!(through_value::<Vec<Lax>>(text).is_none(), "{text}");
            assert!(
                Scanner::of_str(text).nested_as::<Vec<Belief>>().is_none(),
                "{text}"
            );
        }
        let usual = [
            r#"[{"name":"metric_35","value":"2:01:09","source":"tool:search"}]"#,
            r#"[{"id":"S1","kind":"fetch","deps":[],"post":"x"},{"id":"S2","deps":["S1"]}]"#,
            r#"[{"tool":"search","args":{"q":"x"},"result":[1,2]}]"#,
            r#"[{"plan":"P0","action":"keep"},{"plan":"P1","action":"refine","note":"n"}]"#,
        ];
        assert!(direct_agrees::<Vec<Belief>>(usual[0]).unwrap());
        assert!(direct_agrees::<Vec<PlanStep>>(usual[1]).unwrap());
        assert!(direct_agrees::<Vec<ToolCall>>(usual[2]).unwrap());
        assert!(direct_agrees::<Vec<Decision>>(usual[3]).unwrap());
    }
}
