//! Decoding one JSON line into an envelope and a typed body.
//!
//! The line is parsed in one pass by a hand-written visitor: envelope fields are decoded and
//! checked on the spot (so serde_json attaches the exact line and column to their errors), all
//! other fields are collected in line order, known field names as small ids. String values
//! borrow from the line when they contain no escapes. Once the kind is known (it need not be
//! the first key), the kind's fields are taken by id into the typed body (short strings go
//! straight into inline [`Text`]s) and what remains becomes [`Event::extra`](super::Event::extra).
//! This keeps the cost per event close to a direct typed decode, without serde's buffering of
//! `flatten` / internally tagged enums, while accepting fields in any order.
//!
//! Duplicate keys are an error (serde_json would silently keep the last one, letting a line
//! show one `role` to one tool and another to the next).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::event::*;
use super::time::parse_rfc3339;

mod fast;
pub(crate) mod scan;

/// A problem with one field of an otherwise well-formed line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldError {
    /// The field's name (the top-level key the problem is in).
    pub field: String,
    /// What is wrong, without the field name.
    pub message: String,
}

impl FieldError {
    fn new(field: &str, message: impl Into<String>) -> Self {
        FieldError {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// The envelope as decoded from a line, borrowing from it where possible.
#[derive(Debug)]
pub(crate) struct RawLine<'de> {
    pub kind: Option<Cow<'de, str>>,
    pub v: Option<u64>,
    pub seq: Option<u64>,
    pub ts: Option<Timestamp>,
    pub session: Option<Cow<'de, str>>,
    pub id: Option<Text>,
}

/// The non-envelope fields of a line, in line order, with a small index from known field ids
/// to their entries (so the kind's decoder finds a field without string comparisons, and a
/// duplicate is one lookup). Leftover entries become `extra`, still in line order. String values
/// borrow from the line when they have no escapes, so a short field goes straight into an
/// inline [`Text`] without touching the allocator.
#[derive(Debug)]
pub(crate) struct Fields<'de> {
    /// 0: absent; otherwise 1 + the entry's index.
    index: [u16; N_FIELDS],
    entries: Vec<Entry<'de>>,
}

#[derive(Debug)]
struct Entry<'de> {
    key: Key,
    val: Option<Val<'de>>,
}

#[derive(Debug)]
enum Key {
    Known(F),
    Unknown(String),
}

impl Fields<'_> {
    /// Empty fields for one line. A fresh vector per line is cheaper than recycling one across
    /// lines (the entries borrow from the line, so reuse would need a lifetime-changing
    /// collect, which measured slower than this small allocation).
    pub(crate) fn new() -> Self {
        Fields {
            index: [0; N_FIELDS],
            entries: Vec::with_capacity(16),
        }
    }

    /// The key under which the next entry is stored, checked once for both decoders (the
    /// fast path and serde's): an error when the line already had this field or has too
    /// many fields.
    fn claim(&mut self, key: Cow<'_, str>) -> Result<Key, KeyError> {
        if self.entries.len() >= usize::from(u16::MAX) {
            return Err(KeyError::TooMany);
        }
        match field_id(&key) {
            Some(id) => {
                if self.index[id as usize] != 0 {
                    return Err(KeyError::Duplicate);
                }
                self.index[id as usize] = self.entries.len() as u16 + 1;
                Ok(Key::Known(id))
            }
            None => {
                let seen = self
                    .entries
                    .iter()
                    .any(|e| matches!(&e.key, Key::Unknown(k) if *k == key));
                if seen {
                    return Err(KeyError::Duplicate);
                }
                Ok(Key::Unknown(key.into_owned()))
            }
        }
    }
}

/// Why [`Fields::claim`] refused a key.
enum KeyError {
    TooMany,
    Duplicate,
}

/// A field value: a string (borrowed when possible), a list of strings (the shape of every
/// list field, decoded straight into its final form), any other JSON value, or (for a field
/// name no kind defines) the value's text, validated but never parsed into a tree.
#[derive(Debug)]
pub(crate) enum Val<'de> {
    Str(Cow<'de, str>),
    Strs(Vec<Text>),
    Json(Value),
    Raw(&'de RawValue),
}

impl Val<'_> {
    /// The value as JSON text for [`Event::extra`](super::Event::extra): an unknown field's
    /// own text, or a known field's parsed value written back.
    fn into_raw(self) -> Box<RawValue> {
        match self {
            Val::Raw(r) => r.to_owned(),
            other => serde_json::value::to_raw_value(&other.into_value())
                // Writing a `Value` back cannot fail: its keys are strings.
                .unwrap_or_else(|_| RawValue::NULL.to_owned()),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Val::Raw(r) => serde_json::from_str(r.get()).unwrap_or(Value::Null),
            Val::Str(s) => Value::String(s.into_owned()),
            Val::Strs(v) => Value::Array(
                v.into_iter()
                    .map(|t| Value::String(t.into_string()))
                    .collect(),
            ),
            Val::Json(v) => v,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Val::Str(_) => "a string",
            Val::Strs(_) => "an array",
            Val::Json(v) => type_name(v),
            Val::Raw(_) => "a JSON value",
        }
    }
}

fn text_of(s: Cow<'_, str>) -> Text {
    match s {
        Cow::Borrowed(b) => Text::from(b),
        Cow::Owned(o) => Text::from(o),
    }
}

impl<'de> de::Deserialize<'de> for Val<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Val<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Val::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Val::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Val::Str(Cow::Owned(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::Null))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                // Lists of strings go straight into their final, exactly sized form; anything
                // else becomes a JSON array as before.
                let mut texts: Vec<Text> = Vec::new();
                while let Some(item) = seq.next_element::<Val<'de>>()? {
                    match item {
                        Val::Str(s) => texts.push(text_of(s)),
                        other => {
                            let mut values: Vec<Value> = texts
                                .into_iter()
                                .map(|t| Value::String(t.into_string()))
                                .collect();
                            values.push(other.into_value());
                            while let Some(v) = seq.next_element::<Value>()? {
                                values.push(v);
                            }
                            return Ok(Val::Json(Value::Array(values)));
                        }
                    }
                }
                texts.shrink_to_fit();
                Ok(Val::Strs(texts))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                use serde::Deserialize as _;
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Val::Json)
            }
        }
        d.deserialize_any(V)
    }
}

/// Declares the field names some v1 kind knows, as small integer ids: the decoder files each
/// known field in a fixed slot (no string comparisons after the key is matched once, duplicate
/// detection is a slot check, and no allocation for the common case).
macro_rules! known_fields {
    ($($name:literal => $id:ident),* $(,)?) => {
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum F { $($id),* }

        /// Names of the known fields, indexed by [`F`].
        const FIELD_NAMES: &[&str] = &[$($name),*];

        /// The known fields, in the order of [`FIELD_NAMES`].
        const ALL_FIELDS: &[F] = &[$(F::$id),*];

        impl F {
            /// Whether `k` is this field's name (a comparison with a constant, which the
            /// compiler does inline: [`key_of`] confirms its table's guess with it).
            #[inline]
            fn named(self, k: &str) -> bool {
                match self { $(F::$id => k == $name,)* }
            }
        }

        /// The known field named `k` (one probe of [`KEYS`] on the usual key).
        fn field_id(k: &str) -> Option<F> {
            match key_of(k) {
                KeyOf::Field(f) => Some(f),
                _ => None,
            }
        }
    };
}

/// The envelope's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Env {
    Kind,
    V,
    Seq,
    Ts,
    Session,
    Id,
}

impl Env {
    /// Whether `k` is this field's name (see [`F::named`]).
    #[inline]
    fn named(self, k: &str) -> bool {
        match self {
            Env::Kind => k == "kind",
            Env::V => k == "v",
            Env::Seq => k == "seq",
            Env::Ts => k == "ts",
            Env::Session => k == "session",
            Env::Id => k == "id",
        }
    }
}

/// The envelope's field names.
const ENVELOPE: [(&str, Env); 6] = [
    ("kind", Env::Kind),
    ("v", Env::V),
    ("seq", Env::Seq),
    ("ts", Env::Ts),
    ("session", Env::Session),
    ("id", Env::Id),
];

/// What a top-level key is: an envelope field, a field some kind defines, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOf {
    Envelope(Env),
    Field(F),
    Other,
}

/// Slots of [`KEYS`] (a power of two, about four times the names).
const KEY_SLOTS: usize = 256;

/// An open-addressing table of every envelope and field name, so a key is matched with a
/// hash of three of its bytes and (nearly always) one comparison, instead of a comparison
/// with each name in turn (the brief scanner matches about ten keys a line). Each slot
/// holds 0 (empty) or 1 + the name's index in `ENVELOPE ++ FIELD_NAMES`; a lookup probes
/// from the key's slot to the first empty one, so any hash gives the right answer, a good
/// one a quick one.
static KEYS: [u8; KEY_SLOTS] = {
    let mut table = [0u8; KEY_SLOTS];
    let mut i = 0;
    while i < ENVELOPE.len() + N_FIELDS {
        let name = if i < ENVELOPE.len() {
            ENVELOPE[i].0
        } else {
            FIELD_NAMES[i - ENVELOPE.len()]
        };
        let mut s = key_slot(name.as_bytes());
        while table[s] != 0 {
            s = (s + 1) % KEY_SLOTS;
        }
        table[s] = i as u8 + 1;
        i += 1;
    }
    table
};

const _: () = assert!(ENVELOPE.len() + N_FIELDS < KEY_SLOTS / 2);

/// The first slot of [`KEYS`] a key is looked for at: its length and first, second and
/// last bytes mixed (they tell the names apart well: about 1.1 probes per name).
#[inline]
const fn key_slot(k: &[u8]) -> usize {
    let n = k.len();
    let (first, second, last) = match n {
        0 => (0, 0, 0),
        1 => (k[0] as usize, 0, 0),
        _ => (k[0] as usize, k[1] as usize, k[n - 1] as usize),
    };
    ((first * 31) ^ (second * 7) ^ (last * 131) ^ (n.wrapping_mul(17))) % KEY_SLOTS
}

/// Names at most this long are in [`KEY_WORDS`] (every name but `context_conditions`).
pub(crate) const WORD_KEY_MAX: usize = 15;

/// A slot of [`KEY_WORDS`]: a name's length (0: empty), its bytes as two little-endian
/// words (zero past its end), and what it names.
#[derive(Clone, Copy)]
struct WordSlot {
    len: u8,
    words: (u64, u64),
    key: KeyOf,
}

/// `k`'s bytes as two little-endian words, zero past its end (its first 16 bytes).
pub(crate) const fn name_words(k: &[u8]) -> (u64, u64) {
    let (mut w0, mut w1) = (0u64, 0u64);
    let mut i = 0;
    while i < k.len() && i < 16 {
        if i < 8 {
            w0 |= (k[i] as u64) << (8 * i);
        } else {
            w1 |= (k[i] as u64) << (8 * (i - 8));
        }
        i += 1;
    }
    (w0, w1)
}

/// `k`'s words as [`name_words`] gives them, for a name of at most 16 bytes, read as two
/// words from a copy rather than byte by byte (the reading thread asks it of every line).
#[inline]
pub(crate) fn short_name_words(k: &[u8]) -> Option<(u64, u64)> {
    let mut buf = [0u8; 16];
    buf.get_mut(..k.len())?.copy_from_slice(k);
    let (lo, hi) = buf.split_at(8);
    Some((
        u64::from_le_bytes(lo.try_into().ok()?),
        u64::from_le_bytes(hi.try_into().ok()?),
    ))
}

/// Up to [`ShortNames::CAP`] names of at most 16 bytes, each with a value, found by their
/// words ([`name_words`]) and length with one probe of a table indexed by a hash of the
/// words. The hash's multiplier is changed until the names held fall in slots of their
/// own (a walk of the names is the fallback when none is found). What a decoder thread and
/// the reading thread look each line's session up in: the lines of a few sessions come in
/// no order, and a walk of the names cost a mispredicted branch per line.
#[derive(Debug)]
pub(crate) struct ShortNames<V> {
    names: Vec<((u64, u64), usize, V)>,
    /// Per slot, 1 + the index of the name in it (0: none).
    slots: [u8; 64],
    /// The hash's multiplier (odd).
    seed: u64,
    /// Whether two names share a slot (then a miss walks the names).
    clash: bool,
}

impl<V> ShortNames<V> {
    /// Names held at most.
    pub(crate) const CAP: usize = 16;

    /// An empty table.
    pub(crate) const fn new() -> Self {
        ShortNames {
            names: Vec::new(),
            slots: [0; 64],
            seed: 0x9E37_79B9_7F4A_7C15,
            clash: false,
        }
    }

    #[inline]
    fn slot(seed: u64, words: (u64, u64), len: usize) -> usize {
        let h = (words.0 ^ words.1.rotate_left(32) ^ len as u64).wrapping_mul(seed);
        (h >> 58) as usize
    }

    /// The value of the name with these words and length, if held.
    #[inline]
    pub(crate) fn get(&self, words: (u64, u64), len: usize) -> Option<&V> {
        let at = usize::from(self.slots[Self::slot(self.seed, words, len)]);
        if let Some(e) = at.checked_sub(1).and_then(|i| self.names.get(i))
            && e.0 == words
            && e.1 == len
        {
            return Some(&e.2);
        }
        if !self.clash {
            return None;
        }
        self.names
            .iter()
            .find(|e| e.0 == words && e.1 == len)
            .map(|e| &e.2)
    }

    /// Holds a name not held yet, unless [`Self::CAP`] are.
    pub(crate) fn insert(&mut self, words: (u64, u64), len: usize, v: V) {
        if self.names.len() >= Self::CAP {
            return;
        }
        self.names.push((words, len, v));
        if self.place(self.seed) {
            return;
        }
        // Another multiplier, until every name has a slot of its own.
        let mut seed = self.seed;
        for _ in 0..256 {
            seed = seed
                .wrapping_mul(0x5851_F42D_4C95_7F2D)
                .wrapping_add(0x14057B7EF767814F)
                | 1;
            if self.place(seed) {
                return;
            }
        }
        self.place(self.seed);
    }

    /// Puts every name in the slot `seed` gives it; whether no two shared one (else the
    /// first of them keeps it and `clash` is set).
    fn place(&mut self, seed: u64) -> bool {
        self.slots = [0; 64];
        self.seed = seed;
        self.clash = false;
        for (i, e) in self.names.iter().enumerate() {
            let slot = &mut self.slots[Self::slot(seed, e.0, e.1)];
            if *slot == 0 {
                *slot = i as u8 + 1;
            } else {
                self.clash = true;
            }
        }
        !self.clash
    }
}

/// The first slot of [`KEY_WORDS`] a key is looked for at.
#[inline]
const fn word_slot(words: (u64, u64), len: usize) -> usize {
    let h = (words.0 ^ words.1.rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 56) as usize
}

/// [`KEYS`] for a key read as words straight from the line ([`key_of_words`]): the brief
/// scanner matches a short key with a multiplication and two word comparisons, no call.
static KEY_WORDS: [WordSlot; KEY_SLOTS] = {
    let empty = WordSlot {
        len: 0,
        words: (0, 0),
        key: KeyOf::Other,
    };
    let mut table = [empty; KEY_SLOTS];
    let mut i = 0;
    while i < ENVELOPE.len() + N_FIELDS {
        let (name, key) = if i < ENVELOPE.len() {
            (ENVELOPE[i].0, KeyOf::Envelope(ENVELOPE[i].1))
        } else {
            let f = i - ENVELOPE.len();
            (FIELD_NAMES[f], KeyOf::Field(ALL_FIELDS[f]))
        };
        let n = name.len();
        if n <= WORD_KEY_MAX {
            let words = name_words(name.as_bytes());
            let mut s = word_slot(words, n);
            while table[s].len != 0 {
                s = (s + 1) % KEY_SLOTS;
            }
            table[s] = WordSlot {
                len: n as u8,
                words,
                key,
            };
        }
        i += 1;
    }
    table
};

/// What the key of `len` bytes (at most [`WORD_KEY_MAX`]) whose bytes are `words` (as
/// [`name_words`] gives them) names: [`key_of`] of the same key.
#[inline]
pub(crate) fn key_of_words(words: (u64, u64), len: usize) -> KeyOf {
    debug_assert!(len <= WORD_KEY_MAX);
    let mut s = word_slot(words, len);
    loop {
        let slot = &KEY_WORDS[s];
        if slot.len == 0 {
            return KeyOf::Other;
        }
        if usize::from(slot.len) == len && slot.words == words {
            return slot.key;
        }
        s = (s + 1) % KEY_SLOTS;
    }
}

/// What the key `k` names ([`KeyOf`]).
#[inline]
pub(crate) fn key_of(k: &str) -> KeyOf {
    let mut s = key_slot(k.as_bytes());
    loop {
        let i = match KEYS[s] {
            0 => return KeyOf::Other,
            n => usize::from(n - 1),
        };
        match i.checked_sub(ENVELOPE.len()) {
            None => {
                let e = ENVELOPE[i].1;
                if e.named(k) {
                    return KeyOf::Envelope(e);
                }
            }
            Some(f) => {
                let f = ALL_FIELDS[f];
                if f.named(k) {
                    return KeyOf::Field(f);
                }
            }
        }
        s = (s + 1) % KEY_SLOTS;
    }
}

known_fields! {
    "agent" => agent,
    "model" => model,
    "meta" => meta,
    "formula" => formula,
    "formulas" => formulas,
    "source" => source,
    "role" => role,
    "confidence" => confidence,
    "because" => because,
    "text" => text,
    "target" => target,
    "reason" => reason,
    "by" => by,
    "outcome" => outcome,
    "method" => method,
    "tier" => tier,
    "detail" => detail,
    "trigger" => trigger,
    "retracted" => retracted,
    "policy" => policy,
    "answer" => answer,
    "asserts" => asserts,
    "atoms" => atoms,
    "rules" => rules,
    "truth" => truth,
    "question" => question,
    "reply" => reply,
    "literal" => literal,
    "name" => name,
    "value" => value,
    "unit" => unit,
    "type" => type_,
    "goal" => goal,
    "satisfaction" => satisfaction,
    "open_parameters" => open_parameters,
    "intention_type" => intention_type,
    "context_conditions" => context_conditions,
    "steps" => steps,
    "origin" => origin,
    "plan" => plan,
    "step" => step,
    "status" => status,
    "post_met" => post_met,
    "new_beliefs" => new_beliefs,
    "summary" => summary,
    "ok" => ok,
    "failure_mode" => failure_mode,
    "program" => program,
    "intention" => intention,
    "decisions" => decisions,
    "use_count" => use_count,
    "success_count" => success_count,
    "failure_count" => failure_count,
    "level" => level,
    "message" => message,
    "files" => files,
    "tool_calls" => tool_calls,
    "inputs" => inputs,
    "expected_answer" => expected_answer,
    "correct" => correct,
    "hedged" => hedged,
    "label" => label,
    "explanation" => explanation,
    "passed" => passed,
}

const N_FIELDS: usize = FIELD_NAMES.len();

impl F {
    fn name(self) -> &'static str {
        FIELD_NAMES[self as usize]
    }
}

/// A string key or value that borrows from the input when it has no escapes.
struct Str<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Str<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A string with an expectation message naming the field, borrowing when it can.
struct StrSeed(&'static str);

impl<'de> DeserializeSeed<'de> for StrSeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for StrSeed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Decodes one line (already known to be valid UTF-8) into a [`RawLine`]; the other fields
/// are appended to `fields` (which the caller clears).
pub(crate) fn decode_line<'de>(
    line: &'de str,
    fields: &mut Fields<'de>,
) -> Result<RawLine<'de>, serde_json::Error> {
    if let Some(raw) = fast::decode(line, fields) {
        return Ok(raw);
    }
    fields.entries.clear();
    fields.index = [0; N_FIELDS];
    decode_line_serde(line, fields)
}

/// [`decode_line`] through serde_json alone: the reference the fast path must agree with, and
/// the path that reports errors (with serde_json's messages and columns).
fn decode_line_serde<'de>(
    line: &'de str,
    fields: &mut Fields<'de>,
) -> Result<RawLine<'de>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(line);
    let raw = LineSeed { fields }.deserialize(&mut de)?;
    de.end()?;
    Ok(raw)
}

struct LineSeed<'f, 'de> {
    fields: &'f mut Fields<'de>,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_, 'de> {
    type Value = RawLine<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

fn dup<E: de::Error>(name: &str) -> E {
    E::custom(format_args!("duplicate field `{name}`"))
}

impl<'de> Visitor<'de> for LineSeed<'_, 'de> {
    type Value = RawLine<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object (one trace event per line)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut raw = RawLine {
            kind: None,
            v: None,
            seq: None,
            ts: None,
            session: None,
            id: None,
        };
        let fields = self.fields;
        while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
            match &*key {
                "kind" => {
                    if raw.kind.is_some() {
                        return Err(dup("kind"));
                    }
                    raw.kind = Some(map.next_value_seed(StrSeed("field `kind` to be a string"))?);
                }
                "v" => {
                    if raw.v.is_some() {
                        return Err(dup("v"));
                    }
                    let v: Value = map.next_value()?;
                    match v.as_u64() {
                        Some(n) if n >= 1 => raw.v = Some(n),
                        _ => {
                            return Err(de::Error::custom(format_args!(
                                "field `v` must be a positive integer (the format version), found {v}"
                            )));
                        }
                    }
                }
                "seq" => {
                    if raw.seq.is_some() {
                        return Err(dup("seq"));
                    }
                    let v: Value = map.next_value()?;
                    match v.as_u64() {
                        Some(n) => raw.seq = Some(n),
                        None => {
                            return Err(de::Error::custom(format_args!(
                                "field `seq` must be a non-negative integer, found {}",
                                short(&v)
                            )));
                        }
                    }
                }
                "ts" => {
                    if raw.ts.is_some() {
                        return Err(dup("ts"));
                    }
                    let v: Val<'de> = map.next_value()?;
                    raw.ts = Some(timestamp(v).map_err(de::Error::custom)?);
                }
                "session" => {
                    if raw.session.is_some() {
                        return Err(dup("session"));
                    }
                    raw.session =
                        Some(map.next_value_seed(StrSeed("field `session` to be a string"))?);
                }
                "id" => {
                    if raw.id.is_some() {
                        return Err(dup("id"));
                    }
                    let id = map.next_value_seed(StrSeed("field `id` to be a string"))?;
                    raw.id = Some(Text::from(&*id));
                }
                _ => {
                    let key = match fields.claim(Cow::Borrowed(&*key)) {
                        Ok(k) => k,
                        Err(KeyError::TooMany) => {
                            return Err(de::Error::custom("too many fields in one event"));
                        }
                        Err(KeyError::Duplicate) => return Err(dup(&key)),
                    };
                    // A field no kind defines is only ever written back or shown: its text
                    // is kept, and no tree is built for it.
                    let val: Val<'de> = match key {
                        Key::Known(_) => map.next_value()?,
                        Key::Unknown(_) => Val::Raw(map.next_value::<&'de RawValue>()?),
                    };
                    fields.entries.push(Entry {
                        key,
                        val: Some(val),
                    });
                }
            }
        }
        Ok(raw)
    }
}

fn timestamp(v: Val<'_>) -> Result<Timestamp, String> {
    let v = match v {
        Val::Str(s) => {
            if let Some(ts) = Timestamp::from_utc_text(&s) {
                return Ok(ts);
            }
            return match parse_rfc3339(&s) {
                Some(secs) => Ok(Timestamp::from_rfc3339(&s, secs)),
                None => Err(format!(
                    "field `ts` is not an RFC 3339 date-time (like 2026-01-31T12:00:00Z): {:?}",
                    truncate(&s, 64)
                )),
            };
        }
        other => other.into_value(),
    };
    match v {
        Value::String(s) => match parse_rfc3339(&s) {
            Some(secs) => Ok(Timestamp::from_rfc3339(&s, secs)),
            None => Err(format!(
                "field `ts` is not an RFC 3339 date-time (like 2026-01-31T12:00:00Z): {:?}",
                truncate(&s, 64)
            )),
        },
        Value::Number(n) => match n.as_f64() {
            Some(secs) if secs.is_finite() => Ok(Timestamp::from_unix(n, secs)),
            _ => Err(format!("field `ts` is not a usable number of seconds: {n}")),
        },
        other => Err(format!(
            "field `ts` must be an RFC 3339 string or Unix seconds, found {}",
            type_name(&other)
        )),
    }
}

/// A value through its serde type, as [`Bag::typed`] decodes a field (the brief scanner
/// checks structures with it).
fn typed_val<T: DeserializeOwned>(v: Val<'_>) -> Result<T, serde_json::Error> {
    match v {
        // Enum names (the usual case) without building a JSON string first; serde's
        // messages are the same through either deserializer.
        Val::Str(s) => T::deserialize(de::value::StrDeserializer::<serde_json::Error>::new(&s)),
        v => serde_json::from_value(v.into_value()),
    }
}

/// The JSON type name of a value, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A short rendering of a value for messages (never the whole of a large value).
fn short(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::String(s) => format!("{:?}", truncate(s, 64)),
        other => type_name(other).into(),
    }
}

/// The non-envelope fields of a line, consumed by the kind's decoder.
struct Bag<'f, 'de> {
    fields: &'f mut Fields<'de>,
}

impl Bag<'_, '_> {
    fn take_val(&mut self, id: F) -> Option<Val<'_>> {
        let i = usize::from(self.fields.index[id as usize]).checked_sub(1)?;
        self.fields.entries.get_mut(i)?.val.take()
    }

    fn take(&mut self, id: F) -> Option<Value> {
        self.take_val(id).map(Val::into_value)
    }

    fn string(&mut self, id: F) -> Result<Option<Text>, FieldError> {
        match self.take_val(id) {
            None => Ok(None),
            Some(Val::Str(s)) => Ok(Some(text_of(s))),
            Some(other) => Err(FieldError::new(
                id.name(),
                format!("must be a string, found {}", other.type_name()),
            )),
        }
    }

    fn required_string(&mut self, id: F, kind: Kind) -> Result<Text, FieldError> {
        self.string(id)?.ok_or_else(|| {
            FieldError::new(
                id.name(),
                format!("is required for kind `{}`", kind.as_str()),
            )
        })
    }

    fn strings(&mut self, id: F) -> Result<Vec<Text>, FieldError> {
        match self.take_val(id) {
            None => Ok(Vec::new()),
            Some(Val::Strs(v)) => Ok(v),
            Some(Val::Json(Value::Array(items))) => {
                // Not all strings (those are `Strs`): report the first item that is not.
                let (i, other) = items
                    .iter()
                    .enumerate()
                    .find(|(_, v)| !v.is_string())
                    .map_or((0, "a string"), |(i, v)| (i, type_name(v)));
                Err(FieldError::new(
                    id.name(),
                    format!("must be a list of strings; item {i} is {other}"),
                ))
            }
            Some(other) => Err(FieldError::new(
                id.name(),
                format!("must be a list of strings, found {}", other.type_name()),
            )),
        }
    }

    fn boolean(&mut self, id: F) -> Result<Option<bool>, FieldError> {
        match self.take(id) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(FieldError::new(
                id.name(),
                format!("must be true or false, found {}", short(&other)),
            )),
        }
    }

    fn count(&mut self, id: F) -> Result<Option<u64>, FieldError> {
        match self.take(id) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                FieldError::new(
                    id.name(),
                    format!("must be a non-negative integer, found {}", short(&v)),
                )
            }),
        }
    }

    /// A score's `value`: a number, a string or a boolean.
    fn score_value(&mut self) -> Result<Option<ScoreValue>, FieldError> {
        match self.take_val(F::value) {
            None => Ok(None),
            Some(Val::Str(s)) => Ok(Some(ScoreValue::Text(text_of(s)))),
            Some(Val::Json(Value::Number(n))) => Ok(Some(ScoreValue::Number(n))),
            Some(Val::Json(Value::Bool(b))) => Ok(Some(ScoreValue::Bool(b))),
            Some(other) => Err(FieldError::new(
                "value",
                format!(
                    "must be a number, a string or true/false, found {}",
                    other.type_name()
                ),
            )),
        }
    }

    /// Any JSON value, boxed: such fields are rare and a `Value` is 32 bytes inline.
    fn value(&mut self, id: F) -> Option<Box<Value>> {
        self.take(id).map(Box::new)
    }

    /// Decodes a field through its serde type (enums, nested structures); serde's message
    /// ("unknown variant `x`, expected one of ...") is kept.
    fn typed<T: DeserializeOwned>(&mut self, id: F) -> Result<Option<T>, FieldError> {
        let err = |e: serde_json::Error| {
            FieldError::new(id.name(), format!("has an unexpected value: {e}"))
        };
        match self.take_val(id) {
            None => Ok(None),
            Some(v) => typed_val(v).map(Some).map_err(err),
        }
    }

    fn into_extra(self) -> Extra {
        let left: Vec<(String, Box<RawValue>)> = self
            .fields
            .entries
            .drain(..)
            .filter_map(|e| {
                let v = e.val?;
                let k = match e.key {
                    Key::Known(id) => id.name().to_string(),
                    Key::Unknown(k) => k,
                };
                Some((k, v.into_raw()))
            })
            .collect();
        Extra::from(left)
    }
}

/// Builds the typed body of a line of kind `kind` (`None`: unknown kind, everything goes to
/// `extra`) from its non-envelope fields.
pub(crate) fn build_body(
    kind: Option<Kind>,
    kind_name: &str,
    fields: &mut Fields<'_>,
) -> Result<(Body, Extra), FieldError> {
    let mut b = Bag { fields };
    let Some(kind) = kind else {
        return Ok((
            Body::Unknown(Box::new(UnknownKind {
                kind: kind_name.to_string(),
            })),
            b.into_extra(),
        ));
    };
    let body = match kind {
        Kind::Session => Body::Session(Box::new(Session {
            agent: b.string(F::agent)?,
            model: b.string(F::model)?,
            meta: b.value(F::meta),
        })),
        Kind::Announce => {
            let formula = b.required_string(F::formula, kind)?;
            let source = b.string(F::source)?;
            let role = b.typed::<Role>(F::role)?.unwrap_or_default();
            let confidence = match b.take(F::confidence) {
                None => 1.0,
                Some(v) => match v.as_f64() {
                    // 0 would mean "not believed", which an announcement cannot say: every
                    // path (validate, replay, audit, REPL) refuses it the same way.
                    Some(c) if c > 0.0 && c <= 1.0 => c,
                    _ => {
                        return Err(FieldError::new(
                            "confidence",
                            format!(
                                "must be a number greater than 0 and at most 1, found {}",
                                short(&v)
                            ),
                        ));
                    }
                },
            };
            Body::Announce(Box::new(Announce {
                formula,
                source,
                role,
                confidence,
                because: b.strings(F::because)?,
                text: b.string(F::text)?,
            }))
        }
        Kind::Retract => Body::Retract(Box::new(Retract {
            target: b.required_string(F::target, kind)?,
            reason: b.string(F::reason)?,
            by: b.typed(F::by)?,
        })),
        Kind::Verify => {
            let formula = b.string(F::formula)?;
            let formulas = if b.fields.index[F::formulas as usize] != 0 {
                Some(b.strings(F::formulas)?)
            } else {
                None
            };
            if formula.is_none() && formulas.is_none() {
                return Err(FieldError::new(
                    "formula",
                    "is required for kind `verify` (or `formulas`)",
                ));
            }
            Body::Verify(Box::new(Verify {
                formula,
                formulas,
                outcome: b.typed(F::outcome)?,
                because: b.strings(F::because)?,
                method: b.string(F::method)?,
                tier: b.value(F::tier),
                detail: b.value(F::detail),
            }))
        }
        Kind::Revise => Body::Revise(Box::new(Revise {
            trigger: b.string(F::trigger)?,
            retracted: b.strings(F::retracted)?,
            policy: b.string(F::policy)?,
        })),
        Kind::Query => Body::Query(Box::new(Query {
            formula: b.required_string(F::formula, kind)?,
            answer: b.typed(F::answer)?,
        })),
        Kind::Gate => Body::Gate(Box::new(Gate {
            formula: b.required_string(F::formula, kind)?,
            because: b.strings(F::because)?,
        })),
        Kind::Answer => Body::Answer(Box::new(Answer {
            text: b.string(F::text)?,
            formula: b.string(F::formula)?,
            hedged: b.boolean(F::hedged)?,
        })),
        Kind::Thought => Body::Thought(Box::new(Thought {
            text: b.string(F::text)?,
            asserts: b.strings(F::asserts)?,
        })),
        Kind::World => Body::World(Box::new(World {
            atoms: b.strings(F::atoms)?,
            rules: b.strings(F::rules)?,
            truth: b.typed(F::truth)?.unwrap_or_default(),
        })),
        Kind::Turn => Body::Turn(Box::new(Turn {
            question: b.string(F::question)?,
            reply: b.typed(F::reply)?,
            literal: b.string(F::literal)?,
            truth: b.value(F::truth),
        })),
        Kind::Belief => Body::Belief(Box::new(Belief {
            name: b.required_string(F::name, kind)?,
            value: b.value(F::value),
            unit: b.string(F::unit)?,
            source: b.string(F::source)?,
            extra: Map::new(),
        })),
        Kind::SchemaBelief => Body::SchemaBelief(Box::new(TextEvent {
            text: b.string(F::text)?,
        })),
        Kind::Desire => Body::Desire(Box::new(TextEvent {
            text: b.string(F::text)?,
        })),
        Kind::Intention => Body::Intention(Box::new(Intention {
            intention_type: b.string(F::type_)?,
            goal: b.value(F::goal),
            satisfaction: b.value(F::satisfaction),
            open_parameters: b.value(F::open_parameters),
            files: b.strings(F::files)?,
        })),
        Kind::Plan => Body::Plan(Box::new(Plan {
            intention_type: b.string(F::intention_type)?,
            context_conditions: b.strings(F::context_conditions)?,
            steps: b.typed(F::steps)?.unwrap_or_default(),
            origin: b.typed(F::origin)?,
        })),
        Kind::Step => Body::Step(Box::new(Step {
            plan: b.string(F::plan)?,
            step: b.string(F::step)?,
            status: b.typed(F::status)?,
            post_met: b.boolean(F::post_met)?,
            new_beliefs: b.typed(F::new_beliefs)?.unwrap_or_default(),
            summary: b.string(F::summary)?,
            tool_calls: b.typed(F::tool_calls)?.unwrap_or_default(),
            inputs: b.typed(F::inputs)?.map(Box::new),
        })),
        Kind::Postcondition => {
            let plan = b.string(F::plan)?;
            let step = b.string(F::step)?;
            let tier = match b.count(F::tier)? {
                None => None,
                Some(t @ 1..=3) => Some(t as u8),
                Some(t) => {
                    return Err(FieldError::new(
                        "tier",
                        format!("must be 1, 2 or 3, found {t}"),
                    ));
                }
            };
            Body::Postcondition(Box::new(Postcondition {
                plan,
                step,
                tier,
                ok: b.boolean(F::ok)?,
                failure_mode: b.string(F::failure_mode)?,
                program: b.string(F::program)?,
                detail: b.value(F::detail),
            }))
        }
        Kind::Satisfaction => Body::Satisfaction(Box::new(Satisfaction {
            intention: b.string(F::intention)?,
            ok: b.boolean(F::ok)?,
            answer: b.value(F::answer),
            expected_answer: b.value(F::expected_answer),
            correct: b.boolean(F::correct)?,
            failure_mode: b.string(F::failure_mode)?,
        })),
        Kind::Review => Body::Review(Box::new(Review {
            decisions: b.typed(F::decisions)?.unwrap_or_default(),
        })),
        Kind::PlanStats => Body::PlanStats(Box::new(PlanStats {
            plan: b.string(F::plan)?,
            use_count: b.count(F::use_count)?,
            success_count: b.count(F::success_count)?,
            failure_count: b.count(F::failure_count)?,
        })),
        Kind::Log => Body::Log(Box::new(Log {
            level: b.string(F::level)?,
            message: b.string(F::message)?,
        })),
        Kind::Score => Body::Score(Box::new(Score {
            name: b.required_string(F::name, kind)?,
            value: b.score_value()?,
            label: b.string(F::label)?,
            explanation: b.string(F::explanation)?,
            target: b.string(F::target)?,
            source: b.string(F::source)?,
            passed: b.boolean(F::passed)?,
        })),
    };
    Ok((body, b.into_extra()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a key names, by comparing it with every name in turn (what [`key_of`] replaces).
    fn oracle(k: &str) -> KeyOf {
        if let Some((_, e)) = ENVELOPE.iter().find(|(n, _)| *n == k) {
            return KeyOf::Envelope(*e);
        }
        match FIELD_NAMES.iter().position(|n| *n == k) {
            Some(i) => KeyOf::Field(ALL_FIELDS[i]),
            None => KeyOf::Other,
        }
    }

    #[test]
    fn every_name_is_found_as_itself() {
        for (name, e) in ENVELOPE {
            assert_eq!(key_of(name), KeyOf::Envelope(e), "{name}");
        }
        for (i, name) in FIELD_NAMES.iter().enumerate() {
            assert_eq!(key_of(name), KeyOf::Field(ALL_FIELDS[i]), "{name}");
            assert_eq!(ALL_FIELDS[i].name(), *name);
        }
    }

    fn near_key() -> impl Strategy<Value = String> {
        let names: Vec<&'static str> = ENVELOPE
            .iter()
            .map(|(n, _)| *n)
            .chain(FIELD_NAMES.iter().copied())
            .collect();
        prop_oneof![
            prop::sample::select(names.clone()).prop_map(str::to_string),
            // A name with a byte changed, added or cut: the same slot often, never the name.
            (
                prop::sample::select(names),
                any::<prop::sample::Index>(),
                "[a-z_ÿ]"
            )
                .prop_map(|(n, i, c)| {
                    let mut s = n.to_string();
                    let at = i.index(s.len() + 1);
                    match at % 3 {
                        0 => s.insert_str(at.min(s.len()), &c),
                        1 => s.truncate(at.min(s.len())),
                        _ => s.push_str(&c),
                    }
                    s
                }),
            "[a-z_]{0,20}",
            ".{0,12}",
        ]
    }

    proptest! {
        #[test]
        fn a_key_names_what_a_walk_of_the_names_finds(k in near_key()) {
            prop_assert_eq!(key_of(&k), oracle(&k));
            if k.len() <= WORD_KEY_MAX {
                prop_assert_eq!(key_of_words(name_words(k.as_bytes()), k.len()), oracle(&k));
            }
        }
    }

    #[test]
    fn every_short_name_is_found_by_its_words() {
        let names = ENVELOPE
            .iter()
            .map(|(n, _)| *n)
            .chain(FIELD_NAMES.iter().copied());
        for name in names.filter(|n| n.len() <= WORD_KEY_MAX) {
            let got = key_of_words(name_words(name.as_bytes()), name.len());
            assert_eq!(got, oracle(name), "{name}");
        }
        // A prefix of a name, or a name with a zero byte after it, is not the name.
        assert_eq!(key_of_words(name_words(b"sessio"), 6), KeyOf::Other);
        assert_eq!(key_of_words(name_words(b"seq\0"), 4), KeyOf::Other);
    }

    proptest! {
        /// The table finds exactly what a walk of the first [`ShortNames::CAP`] names
        /// inserted finds, with the value first inserted for each: names that collide in
        /// the table, names of the same words but other lengths (`x` and `x\0`), names past
        /// the cap, and names never inserted.
        #[test]
        fn short_names_find_what_a_walk_of_the_names_finds(
            inserted in prop::collection::vec(prop::collection::vec(prop::sample::select(b"ab\0-x7".to_vec()), 0..=16), 0..40),
            asked in prop::collection::vec(prop::collection::vec(prop::sample::select(b"ab\0-x7".to_vec()), 0..=16), 0..40),
        ) {
            let mut table = ShortNames::new();
            let mut walk: Vec<(Vec<u8>, usize)> = Vec::new();
            for (i, name) in inserted.iter().enumerate() {
                let words = short_name_words(name).unwrap();
                prop_assert_eq!(words, name_words(name));
                if table.get(words, name.len()).is_none() {
                    table.insert(words, name.len(), i);
                    if walk.len() < ShortNames::<usize>::CAP {
                        walk.push((name.clone(), i));
                    }
                }
            }
            for name in inserted.iter().chain(&asked) {
                let want = walk.iter().find(|(n, _)| n == name).map(|e| e.1);
                prop_assert_eq!(table.get(name_words(name), name.len()).copied(), want);
            }
        }
    }

    /// Sessions named alike (`gen-0` to `gen-15`, `s1` to `s16`) each get a slot of their
    /// own: a line's session is one probe, not a walk.
    #[test]
    fn names_alike_get_slots_of_their_own() {
        for names in [
            (0..16).map(|i| format!("gen-{i}")).collect::<Vec<_>>(),
            (1..=16).map(|i| format!("s{i}")).collect(),
        ] {
            let mut table = ShortNames::new();
            for (i, n) in names.iter().enumerate() {
                table.insert(name_words(n.as_bytes()), n.len(), i);
                assert!(!table.clash, "{names:?}");
            }
            for (i, n) in names.iter().enumerate() {
                assert_eq!(table.get(name_words(n.as_bytes()), n.len()), Some(&i));
            }
        }
    }

    #[test]
    fn a_name_longer_than_two_words_has_no_short_words() {
        assert_eq!(short_name_words(&[b'a'; 17]), None);
        assert_eq!(short_name_words(b"gen-7"), Some(name_words(b"gen-7")));
    }
}
