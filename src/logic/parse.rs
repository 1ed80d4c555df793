//! The formula parser (contract §3).
//!
//! # Syntax
//!
//! ```text
//! formula  := iff
//! iff      := implies ( ("↔" | "<->" | "iff") iff )?          right associative
//! implies  := or ( ("→" | "->" | "implies") implies )?         right associative
//! or       := and ( ("∨" | "|" | "||" | "or") and )*           one n-ary node
//! and      := unary ( ("∧" | "&" | "&&" | "and") unary )*      one n-ary node
//! unary    := ("¬" | "~" | "!" | "not") unary
//!           | ("∀" | "forall" | "∃" | "exists") NAME ("," NAME)* "." formula
//!           | "(" formula ")" | "⊤" | "true" | "⊥" | "false" | atom
//! atom     := NAME | QUOTED | (NAME | QUOTED) "(" ( arg ("," arg)* )? ")"
//!           | (KEY | QUOTED) "=" value unit?                  a value atom
//! arg      := NAME | QUOTED
//! value    := QUOTED | NUMBER | "true" | "false" | "null" | JSON object | JSON array
//! unit     := QUOTED | NAME
//! NAME     := [A-Za-z0-9_]+ except the keywords
//! KEY      := [A-Za-z0-9_] [A-Za-z0-9_./-]* except the keywords (only before "=")
//! NUMBER   := a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
//! QUOTED   := '"' ( any character except '"' '\' and invisible ones | '\"' | '\\' | '\u{HEX}' )* '"'
//! ```
//!
//! Decisions worth knowing:
//!
//! - **Value atoms** (`seat_pref = "aisle"`, `user-prefs/m2 = "window"`, `count = 3`,
//!   `distance = 42.195 km`) say that a key holds a value; a key holds one value at a time,
//!   which the engine enforces ([`super::formula::ValueAtom`], `docs/trace-format.md`). A key
//!   may contain `/`, `-` and `.` (memory keys do), which is why it is recognised only where
//!   `=` follows it; any other key is quoted (`"my key" = 1`). Values are literals, never
//!   bare words: a string is quoted text, a number or a JSON object or array is JSON, and
//!   `true`, `false`, `null` are JSON's. Numbers and JSON are canonicalised as they are read
//!   (`3.0` is `3`). A unit may follow the value, quoted or as a name (`5 km`, `5 "km/h"`). A
//!   quantifier's dot directly followed by a key (`∀x.k = 1`) reads as the key `x.k`: put a
//!   space after the dot.
//! - **Keywords** (`not and or implies iff true false forall exists`) are lowercase and
//!   reserved: they are never atom, predicate or variable names. `And`, `TRUE` and `Not` are
//!   ordinary names. A proposition that must be called `and` is written `"and"` (a quoted
//!   proposition; the printer does this automatically).
//! - `&&` and `||` are accepted as synonyms of `&` and `|`, because agents trained on C-like
//!   languages write them. `=>` and `<=>` are not accepted: `-` and `<` are only ever the start
//!   of `->` / `<->`, and the error says so.
//! - `↔` is right associative like `→` (`a ↔ b ↔ c` is `a ↔ (b ↔ c)`; ↔ is associative anyway).
//! - A quantifier's body extends as far right as possible, also when the quantifier stands
//!   after a connective: `a ∧ ∀x. P(x) ∨ Q(x)` is `a ∧ (∀x. (P(x) ∨ Q(x)))`. `∀x. ∀y. φ` stays
//!   two nested nodes; `∀x, y. φ` is one node with two variables. A variable may not be listed
//!   twice in one quantifier; an inner quantifier may shadow an outer one.
//! - A name inside predicate arguments is a [`Term::Var`] when an enclosing quantifier binds it,
//!   otherwise a [`Term::Const`]. A quoted argument (`Lives("New York")`) is always a constant,
//!   which is how the printer writes a constant whose name a quantifier shadows. A predicate
//!   name may be quoted too (`"is located in"(x, y)`). `P()` is a predicate with no arguments,
//!   distinct from the proposition `P`. A bare name is always a proposition, even if it equals
//!   a bound variable (variables only occur as predicate arguments).
//! - Names are ASCII (`[A-Za-z0-9_]+`, at most [`MAX_NAME_CHARS`]); any other text is quoted.
//!   This keeps homoglyphs, bidi controls and zero-width characters out of names. Inside
//!   quoted text, a character the display sanitizer would replace by a marker (controls, bidi
//!   controls, invisible format characters, private use) must be written as `\u{…}`, so that
//!   what a reader sees is what the formula says. The escapes are `\"`, `\\` and `\u{HEX}`.
//!   The noncharacters U+FDD0 to U+FDEF cannot be written at all, escaped or not: witness
//!   constants are named with them ([`crate::logic::ground::witnessed`]), so no constant of a
//!   formula can be mistaken for one.
//! - Whitespace is space, tab, CR and LF. A column is counted in characters (not bytes) from
//!   the start of the input, 1-based; line breaks do not reset it.
//! - Limits: the input is at most [`MAX_INPUT_BYTES`], quoted text at most
//!   [`MAX_QUOTED_BYTES`] after unescaping, and the nesting depth at most
//!   [`MAX_DEPTH`] (connectives and quantifiers on one root-to-atom path, and separately
//!   parentheses). Exceeding one is an error with a column, never a crash.
//!
//! # Design
//!
//! The parser is an operator-precedence (shunting-yard) parser with explicit operand and
//! operator stacks: it never recurses, so neither `((((…` nor `¬¬¬…` nor `a → (a → (…` can
//! overflow the stack however long the input is; the depth limit exists for the consumers of
//! the tree. Same-connective chains are merged into one n-ary node as they are read, so a
//! million-long `a1 ∧ a2 ∧ …` costs one allocation per atom and no deep spine. The lexer is
//! pulled one token at a time (with one token of lookahead) so memory stays proportional to
//! the formula, not to a token list.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::formula::{
    Atom, Formula, MAX_DEPTH, Scalar, Term, ValueAtom, canonical_json, canonical_number,
};

/// The longest input accepted, in bytes (16 MiB): ample for a million-atom chain.
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// The longest unquoted name, in characters. Longer text can still be quoted.
pub const MAX_NAME_CHARS: usize = 1024;

/// The longest quoted text, in bytes after unescaping.
pub const MAX_QUOTED_BYTES: usize = 64 * 1024;

/// The reserved words; none of them can be an unquoted name.
pub const KEYWORDS: [&str; 9] = [
    "not", "and", "or", "implies", "iff", "true", "false", "forall", "exists",
];

/// A syntax error: where it is and what was expected instead of what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based column, counted in characters from the start of the input.
    pub column: usize,
    /// What was expected and what was found, e.g. "expected ')' …, found end of input". It may
    /// quote the input, so it goes through the display sanitizer before reaching a terminal.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// The same error with its column moved right by `chars` characters: for a formula that
    /// starts after `chars` characters of a longer line (a REPL command after its verb).
    pub fn offset(mut self, chars: usize) -> Self {
        self.column = self.column.saturating_add(chars);
        self
    }
}

fn err<T>(column: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        column,
        message: message.into(),
    })
}

/// Whether `s` can be written unquoted as a name (and so re-parses as the same name).
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME_CHARS
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !KEYWORDS.contains(&s)
}

/// Whether `s` can be written unquoted as the key of a value atom (and so re-parses as that
/// key): a name, or name characters with `/`, `-` and `.` after the first.
pub fn is_key(s: &str) -> bool {
    is_name(s)
        || (!s.is_empty()
            && s.len() <= MAX_NAME_CHARS
            && !KEYWORDS.contains(&s)
            && s.bytes().all(is_key_byte)
            && s.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'-' | b'.')
}

/// Whether `s` is a number in JSON's syntax.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - from
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Whether `c` must be written as a `\u{…}` escape inside quoted text: exactly the characters
/// the display sanitizer would replace by a visible marker.
pub fn needs_escape(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    let mut buf = [0u8; 4];
    let s: &str = c.encode_utf8(&mut buf);
    crate::sanitize::sanitize(s) != s
}

/// Parses one formula; the whole input must be consumed.
pub fn parse(input: &str) -> Result<Formula, ParseError> {
    if input.len() > MAX_INPUT_BYTES {
        return err(
            1,
            format!(
                "formula is {} bytes long, over the limit of {MAX_INPUT_BYTES} bytes",
                input.len()
            ),
        );
    }
    Parser::new(input).run()
}

#[derive(Debug, Clone, PartialEq)]
enum Kind<'a> {
    Name(&'a str),
    Quoted(String),
    /// `=` (only after the key of a value atom).
    Eq,
    Not,
    And,
    Or,
    Implies,
    Iff,
    True,
    False,
    Forall,
    Exists,
    LParen,
    RParen,
    Comma,
    Dot,
    Eof,
}

#[derive(Debug, Clone)]
struct Token<'a> {
    kind: Kind<'a>,
    column: usize,
    /// The source text of the token, for messages.
    text: &'a str,
}

impl Token<'_> {
    /// How the token is named in "found …".
    fn describe(&self) -> String {
        match &self.kind {
            Kind::Eof => "end of input".to_string(),
            Kind::Quoted(_) => "quoted text".to_string(),
            Kind::Name(n) if n.len() > 40 => format!("'{}…'", &n[..40]),
            _ => format!("'{}'", self.text),
        }
    }
}

fn describe_char(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("'{c}'")
    } else if needs_escape(c) || c.is_whitespace() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("'{c}' (U+{:04X})", c as u32)
    }
}

struct Lexer<'a> {
    src: &'a str,
    /// Byte offset of the next character.
    pos: usize,
    /// Column of the next character.
    column: usize,
}

impl<'a> Lexer<'a> {
    fn peek_char(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.pos += c.len_utf8();
        self.column += 1;
        Some(c)
    }

    fn next_token(&mut self) -> Result<Token<'a>, ParseError> {
        while matches!(self.peek_char(), Some(' ' | '\t' | '\n' | '\r')) {
            self.bump();
        }
        let start = self.pos;
        let column = self.column;
        let Some(c) = self.bump() else {
            return Ok(Token {
                kind: Kind::Eof,
                column,
                text: "",
            });
        };
        let kind = match c {
            '(' => Kind::LParen,
            ')' => Kind::RParen,
            ',' => Kind::Comma,
            '.' => Kind::Dot,
            '¬' | '~' | '!' => Kind::Not,
            '∧' => Kind::And,
            '∨' => Kind::Or,
            '→' => Kind::Implies,
            '↔' => Kind::Iff,
            '⊤' => Kind::True,
            '⊥' => Kind::False,
            '∀' => Kind::Forall,
            '∃' => Kind::Exists,
            '&' | '|' => {
                if self.peek_char() == Some(c) {
                    self.bump();
                }
                if c == '&' { Kind::And } else { Kind::Or }
            }
            '-' if self.peek_char() == Some('>') => {
                self.bump();
                Kind::Implies
            }
            '-' => return err(column, "unexpected character '-' (did you mean '->'?)"),
            '<' if self.src[self.pos..].starts_with("->") => {
                self.bump();
                self.bump();
                Kind::Iff
            }
            '<' => return err(column, "unexpected character '<' (did you mean '<->'?)"),
            '"' => Kind::Quoted(self.quoted(column)?),
            '=' if self.peek_char() == Some('>') => {
                return err(column, "unexpected character '=' (did you mean '->'?)");
            }
            '=' => Kind::Eq,
            c if c.is_ascii_alphanumeric() || c == '_' => {
                if let Some(key) = self.key_before_eq(start, column) {
                    return Ok(key);
                }
                let mut len = 1;
                while matches!(self.peek_char(), Some(c) if c.is_ascii_alphanumeric() || c == '_') {
                    self.bump();
                    len += 1;
                }
                if len > MAX_NAME_CHARS {
                    return err(
                        column,
                        format!(
                            "name is {len} characters long, over the limit of {MAX_NAME_CHARS} \
                             (longer text can be quoted)"
                        ),
                    );
                }
                match &self.src[start..self.pos] {
                    "not" => Kind::Not,
                    "and" => Kind::And,
                    "or" => Kind::Or,
                    "implies" => Kind::Implies,
                    "iff" => Kind::Iff,
                    "true" => Kind::True,
                    "false" => Kind::False,
                    "forall" => Kind::Forall,
                    "exists" => Kind::Exists,
                    name => Kind::Name(name),
                }
            }
            c if needs_escape(c) => {
                return err(
                    column,
                    format!(
                        "control or invisible character {} is not allowed here",
                        describe_char(c)
                    ),
                );
            }
            c if !c.is_ascii() => {
                return err(
                    column,
                    format!(
                        "unexpected character {}; names are ASCII letters, digits and '_', \
                         other text must be quoted (\"…\")",
                        describe_char(c)
                    ),
                );
            }
            c => return err(column, format!("unexpected character {}", describe_char(c))),
        };
        Ok(Token {
            kind,
            column,
            text: &self.src[start..self.pos],
        })
    }

    /// A key with `/`, `-` or `.` in it, starting at byte `start` (its first character
    /// read already), when `=` follows it: the key token, the lexer moved past it. Without a
    /// `=` after it the lexer is left as it was (the text is a name and connectives).
    fn key_before_eq(&mut self, start: usize, column: usize) -> Option<Token<'a>> {
        let rest = &self.src[start..];
        let len = rest
            .bytes()
            .position(|b| !is_key_byte(b))
            .unwrap_or(rest.len());
        let key = &rest[..len];
        if !key.bytes().any(|b| matches!(b, b'/' | b'-' | b'.')) || len > MAX_NAME_CHARS {
            return None;
        }
        let after = rest[len..].trim_start_matches([' ', '\t', '\n', '\r']);
        if !after.starts_with('=') {
            return None;
        }
        // Key bytes are ASCII: one column each.
        self.pos = start + len;
        self.column = column + len;
        Some(Token {
            kind: Kind::Name(key),
            column,
            text: key,
        })
    }

    /// Reads the value of a value atom after its `=` (at `eq`), and the unit after it if
    /// there is one.
    fn value(&mut self, eq: usize) -> Result<(Scalar, Option<String>), ParseError> {
        while matches!(self.peek_char(), Some(' ' | '\t' | '\n' | '\r')) {
            self.bump();
        }
        let column = self.column;
        let value = match self.peek_char() {
            Some('"') => {
                self.bump();
                Scalar::Str(self.quoted(column)?)
            }
            Some(c) if c == '-' || c.is_ascii_digit() => {
                let text = self.take_while(|b| {
                    b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')
                });
                if !is_json_number(text) {
                    return err(column, format!("'{text}' is not a number (JSON syntax)"));
                }
                match canonical_number(text) {
                    Some(n) => Scalar::Num(n),
                    None => return err(column, format!("number {text} is out of range")),
                }
            }
            Some('{' | '[') => Scalar::Json(self.json(column)?),
            Some(c) if c.is_ascii_alphabetic() => {
                let word = self.take_while(|b| b.is_ascii_alphanumeric() || b == b'_');
                match word {
                    "true" | "false" | "null" => Scalar::Json(word.to_string()),
                    _ => {
                        return err(
                            column,
                            format!(
                                "expected a value after the '=' at column {eq} (quoted text, a \
                                 number, true, false, null, a JSON object or array), found \
                                 '{word}' (a text value is quoted: \"{word}\")"
                            ),
                        );
                    }
                }
            }
            other => {
                let found = match other {
                    None => "end of input".to_string(),
                    Some(c) => describe_char(c),
                };
                return err(
                    column,
                    format!(
                        "expected a value after the '=' at column {eq} (quoted text, a number, \
                         true, false, null, a JSON object or array), found {found}"
                    ),
                );
            }
        };
        Ok((value, self.unit()?))
    }

    /// The unit after a value: quoted text, or a name that is not a keyword.
    fn unit(&mut self) -> Result<Option<String>, ParseError> {
        let save = (self.pos, self.column);
        while matches!(self.peek_char(), Some(' ' | '\t' | '\n' | '\r')) {
            self.bump();
        }
        let column = self.column;
        match self.peek_char() {
            Some('"') => {
                self.bump();
                Ok(Some(self.quoted(column)?))
            }
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                let word = self.take_while(|b| b.is_ascii_alphanumeric() || b == b'_');
                if KEYWORDS.contains(&word) {
                    (self.pos, self.column) = save;
                    Ok(None)
                } else {
                    Ok(Some(word.to_string()))
                }
            }
            _ => {
                (self.pos, self.column) = save;
                Ok(None)
            }
        }
    }

    /// Consumes the longest run of ASCII bytes satisfying `ok`.
    fn take_while(&mut self, ok: impl Fn(u8) -> bool) -> &'a str {
        let src: &'a str = self.src;
        let rest = &src[self.pos..];
        let len = rest.bytes().position(|b| !ok(b)).unwrap_or(rest.len());
        self.pos += len;
        self.column += len;
        &rest[..len]
    }

    /// One JSON object or array starting here, as canonical JSON text.
    fn json(&mut self, column: usize) -> Result<String, ParseError> {
        let src: &'a str = self.src;
        let rest = &src[self.pos..];
        let mut it = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
        let value = match it.next() {
            Some(Ok(v)) => v,
            Some(Err(e)) => return err(column, format!("JSON value does not parse: {e}")),
            None => return err(column, "expected a JSON value"),
        };
        let used = &rest[..it.byte_offset()];
        if let Some(c) = used
            .chars()
            .find(|&c| needs_escape(c) && !c.is_ascii_whitespace())
        {
            return err(
                column,
                format!(
                    "control or invisible character {} in a JSON value must be written as a \
                     \\u escape",
                    describe_char(c)
                ),
            );
        }
        self.pos += used.len();
        self.column += used.chars().count();
        Ok(canonical_json(&value))
    }

    /// Reads quoted text after its opening quote (at `open`).
    fn quoted(&mut self, open: usize) -> Result<String, ParseError> {
        let unterminated = || {
            err(
                open,
                format!("unterminated quoted text: no closing '\"' for the '\"' at column {open}"),
            )
        };
        let mut out = String::new();
        loop {
            let column = self.column;
            match self.bump() {
                None => return unterminated(),
                Some('"') => return Ok(out),
                Some('\\') => match self.bump() {
                    None => return unterminated(),
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    Some('u') => {
                        let c = self.unicode_escape(column)?;
                        if crate::logic::ground::is_reserved_char(c) {
                            return err(
                                column,
                                format!(
                                    "U+{:04X} is reserved for the names of witnesses \
                                     (see the quantifier semantics) and cannot be written",
                                    c as u32
                                ),
                            );
                        }
                        out.push(c);
                    }
                    Some(other) => {
                        return err(
                            column,
                            format!(
                                "unknown escape '\\{}' in quoted text (the escapes are \\\", \\\\ \
                                 and \\u{{HEX}})",
                                if needs_escape(other) {
                                    describe_char(other)
                                } else {
                                    other.to_string()
                                }
                            ),
                        );
                    }
                },
                Some(c) if needs_escape(c) => {
                    return err(
                        column,
                        format!(
                            "control or invisible character U+{:04X} in quoted text must be \
                             written as \\u{{{:x}}}",
                            c as u32, c as u32
                        ),
                    );
                }
                Some(c) => out.push(c),
            }
            if out.len() > MAX_QUOTED_BYTES {
                return err(
                    open,
                    format!("quoted text is longer than the limit of {MAX_QUOTED_BYTES} bytes"),
                );
            }
        }
    }

    /// Reads `{HEX}` after `\u` (the backslash at `column`).
    fn unicode_escape(&mut self, column: usize) -> Result<char, ParseError> {
        let bad = || {
            err(
                column,
                "invalid escape: expected \\u{HEX} with 1 to 6 hex digits naming a Unicode \
                 scalar value",
            )
        };
        if self.bump() != Some('{') {
            return bad();
        }
        let mut value: u32 = 0;
        let mut digits = 0;
        loop {
            match self.bump() {
                Some('}') if digits > 0 => break,
                Some(c) if digits < 6 => match c.to_digit(16) {
                    Some(d) => {
                        value = value * 16 + d;
                        digits += 1;
                    }
                    None => return bad(),
                },
                _ => return bad(),
            }
        }
        match char::from_u32(value) {
            Some(c) => Ok(c),
            None => bad(),
        }
    }
}

#[derive(Debug)]
enum Op {
    Not,
    /// An n-ary conjunction waiting for its last operand; the count includes it.
    And(usize),
    Or(usize),
    Implies,
    Iff,
    Quantifier {
        forall: bool,
        vars: Vec<String>,
    },
    Paren,
}

impl Op {
    /// Binding strength of the binary connectives (higher binds tighter).
    fn binary_precedence(&self) -> Option<u8> {
        match self {
            Op::And(_) => Some(4),
            Op::Or(_) => Some(3),
            Op::Implies => Some(2),
            Op::Iff => Some(1),
            _ => None,
        }
    }
}

struct OpEntry {
    op: Op,
    column: usize,
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    peeked: Option<Token<'a>>,
    operands: Vec<Formula>,
    /// The depth of each operand, in step with `operands`.
    depths: Vec<usize>,
    ops: Vec<OpEntry>,
    /// Operators on `ops` other than parentheses: each one will be an ancestor of the operand
    /// being read, so more than [`MAX_DEPTH`] of them is an error before the tree is built.
    pending: usize,
    parens: usize,
    /// How many enclosing quantifiers bind each variable name.
    scope: HashMap<String, usize>,
}

fn too_deep<T>(column: usize) -> Result<T, ParseError> {
    err(
        column,
        format!("formula nests deeper than {MAX_DEPTH} levels"),
    )
}

fn internal<T>(column: usize) -> Result<T, ParseError> {
    err(column, "internal parser error (operand stack out of step)")
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser {
            lexer: Lexer {
                src,
                pos: 0,
                column: 1,
            },
            peeked: None,
            operands: Vec::new(),
            depths: Vec::new(),
            ops: Vec::new(),
            pending: 0,
            parens: 0,
            scope: HashMap::new(),
        }
    }

    fn next(&mut self) -> Result<Token<'a>, ParseError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lexer.next_token(),
        }
    }

    fn peek(&mut self) -> Result<&Token<'a>, ParseError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next_token()?);
        }
        match &self.peeked {
            Some(t) => Ok(t),
            None => internal(self.lexer.column),
        }
    }

    fn run(mut self) -> Result<Formula, ParseError> {
        let mut expect_operand = true;
        loop {
            let tok = self.next()?;
            let column = tok.column;
            if expect_operand {
                match tok.kind {
                    Kind::Not => self.push_op(Op::Not, column)?,
                    Kind::Forall | Kind::Exists => {
                        let vars = self.binders(&tok)?;
                        for v in &vars {
                            *self.scope.entry(v.clone()).or_insert(0) += 1;
                        }
                        let forall = tok.kind == Kind::Forall;
                        self.push_op(Op::Quantifier { forall, vars }, column)?;
                    }
                    Kind::LParen => {
                        self.parens += 1;
                        if self.parens > MAX_DEPTH {
                            return too_deep(column);
                        }
                        self.ops.push(OpEntry {
                            op: Op::Paren,
                            column,
                        });
                    }
                    Kind::True => self.push_operand(Formula::True, 0, &mut expect_operand),
                    Kind::False => self.push_operand(Formula::False, 0, &mut expect_operand),
                    Kind::Name(name) => {
                        let atom = if self.peek()?.kind == Kind::Eq {
                            self.value_atom(name.to_string())?
                        } else if is_name(name) {
                            self.atom(name.to_string())?
                        } else {
                            // A key token whose '=' was not taken (cannot happen: the lexer
                            // makes one only before '='), refused rather than misread.
                            return err(column, format!("expected '=' after the key '{name}'"));
                        };
                        self.push_operand(Formula::Atom(atom), 0, &mut expect_operand);
                    }
                    Kind::Quoted(text) => {
                        let atom = match self.peek()?.kind {
                            Kind::LParen => self.predicate(text)?,
                            Kind::Eq => self.value_atom(text)?,
                            _ => Atom::Quoted(text),
                        };
                        self.push_operand(Formula::Atom(atom), 0, &mut expect_operand);
                    }
                    _ => {
                        return err(
                            column,
                            format!(
                                "expected a formula (an atom, '¬', a quantifier or '('), found {}",
                                tok.describe()
                            ),
                        );
                    }
                }
            } else {
                match tok.kind {
                    Kind::And => self.binary(Op::And(2), column)?,
                    Kind::Or => self.binary(Op::Or(2), column)?,
                    Kind::Implies => self.binary(Op::Implies, column)?,
                    Kind::Iff => self.binary(Op::Iff, column)?,
                    Kind::RParen => {
                        loop {
                            match self.ops.last() {
                                None => {
                                    return err(column, "found ')' with no matching '('");
                                }
                                Some(OpEntry { op: Op::Paren, .. }) => {
                                    self.ops.pop();
                                    self.parens -= 1;
                                    break;
                                }
                                Some(_) => self.reduce_top()?,
                            }
                        }
                        continue;
                    }
                    Kind::Eof => {
                        while let Some(top) = self.ops.last() {
                            if let Op::Paren = top.op {
                                return err(
                                    column,
                                    format!(
                                        "expected ')' to close the '(' at column {}, found end of \
                                         input",
                                        top.column
                                    ),
                                );
                            }
                            self.reduce_top()?;
                        }
                        return match (self.operands.pop(), self.operands.is_empty()) {
                            (Some(f), true) => Ok(f),
                            _ => internal(column),
                        };
                    }
                    _ => {
                        let wanted = if self.parens > 0 {
                            "a connective or ')'"
                        } else {
                            "a connective or the end of the formula"
                        };
                        return err(
                            column,
                            format!("expected {wanted}, found {}", tok.describe()),
                        );
                    }
                }
                expect_operand = true;
            }
        }
    }

    fn push_operand(&mut self, f: Formula, depth: usize, expect_operand: &mut bool) {
        self.operands.push(f);
        self.depths.push(depth);
        *expect_operand = false;
    }

    fn push_op(&mut self, op: Op, column: usize) -> Result<(), ParseError> {
        self.pending += 1;
        if self.pending > MAX_DEPTH {
            return too_deep(column);
        }
        self.ops.push(OpEntry { op, column });
        Ok(())
    }

    /// Handles a binary connective after a complete left operand: reduces what binds tighter,
    /// extends an open chain of the same n-ary connective, or opens a new node.
    fn binary(&mut self, op: Op, column: usize) -> Result<(), ParseError> {
        let prec = op.binary_precedence().unwrap_or(0);
        while let Some(top) = self.ops.last_mut() {
            let q = top.op.binary_precedence();
            match (&mut top.op, q) {
                (Op::Not, _) => self.reduce_top()?,
                (Op::And(n) | Op::Or(n), Some(q)) if q == prec => {
                    *n += 1;
                    return Ok(());
                }
                (_, Some(q)) if q > prec => self.reduce_top()?,
                // Lower precedence, a right-associative equal, a quantifier (whose body
                // extends to the right) or a parenthesis: the new operator nests inside.
                _ => break,
            }
        }
        self.push_op(op, column)
    }

    /// Pops the top operator and builds its node from the operands.
    fn reduce_top(&mut self) -> Result<(), ParseError> {
        let Some(OpEntry { op, column }) = self.ops.pop() else {
            return internal(self.lexer.column);
        };
        self.pending = self.pending.saturating_sub(1);
        let arity = match &op {
            Op::Not | Op::Quantifier { .. } => 1,
            Op::Implies | Op::Iff => 2,
            Op::And(n) | Op::Or(n) => *n,
            Op::Paren => return internal(column),
        };
        if self.operands.len() < arity || self.depths.len() != self.operands.len() {
            return internal(column);
        }
        let at = self.operands.len() - arity;
        let depth = 1 + self.depths.drain(at..).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return too_deep(column);
        }
        let mut args = self.operands.split_off(at);
        let node = match op {
            Op::And(_) => Formula::And(args),
            Op::Or(_) => Formula::Or(args),
            Op::Not => Formula::Not(Box::new(args.pop().unwrap_or_default())),
            Op::Quantifier { forall, vars } => {
                for v in &vars {
                    if let Some(n) = self.scope.get_mut(v) {
                        *n -= 1;
                        if *n == 0 {
                            self.scope.remove(v);
                        }
                    }
                }
                let body = Box::new(args.pop().unwrap_or_default());
                if forall {
                    Formula::Forall(vars, body)
                } else {
                    Formula::Exists(vars, body)
                }
            }
            Op::Implies | Op::Iff => {
                let right = Box::new(args.pop().unwrap_or_default());
                let left = Box::new(args.pop().unwrap_or_default());
                if matches!(op, Op::Implies) {
                    Formula::Implies(left, right)
                } else {
                    Formula::Iff(left, right)
                }
            }
            Op::Paren => return internal(column),
        };
        self.operands.push(node);
        self.depths.push(depth);
        Ok(())
    }

    /// Reads `x, y, z .` after a quantifier token.
    fn binders(&mut self, quantifier: &Token<'a>) -> Result<Vec<String>, ParseError> {
        let mut vars: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        loop {
            let tok = self.next()?;
            let Kind::Name(name) = tok.kind else {
                let after = if vars.is_empty() {
                    format!("'{}'", quantifier.text)
                } else {
                    "','".to_string()
                };
                return err(
                    tok.column,
                    format!(
                        "expected a variable name after {after}, found {}",
                        tok.describe()
                    ),
                );
            };
            if !seen.insert(name) {
                return err(
                    tok.column,
                    format!("variable '{name}' is listed twice in one quantifier"),
                );
            }
            vars.push(name.to_string());
            let tok = self.next()?;
            match tok.kind {
                Kind::Comma => {}
                Kind::Dot => return Ok(vars),
                _ => {
                    return err(
                        tok.column,
                        format!(
                            "expected ',' or '.' after the quantified variable '{name}', found {}",
                            tok.describe()
                        ),
                    );
                }
            }
        }
    }

    /// A value atom: its `=` is the peeked token.
    fn value_atom(&mut self, key: String) -> Result<Atom, ParseError> {
        let eq = self.next()?.column;
        let (value, unit) = self.lexer.value(eq)?;
        Ok(Atom::Value(Box::new(ValueAtom { key, value, unit })))
    }

    /// A proposition, or a predicate atom when `(` follows the name.
    fn atom(&mut self, name: String) -> Result<Atom, ParseError> {
        if self.peek()?.kind == Kind::LParen {
            self.predicate(name)
        } else {
            Ok(Atom::Prop(name))
        }
    }

    /// Reads `(arg, …)` after a predicate name.
    fn predicate(&mut self, name: String) -> Result<Atom, ParseError> {
        self.next()?; // the '(' seen by the caller
        let mut args = Vec::new();
        if self.peek()?.kind == Kind::RParen {
            self.next()?;
            return Ok(Atom::Pred(name, args));
        }
        loop {
            let tok = self.next()?;
            match tok.kind {
                Kind::Name(n) if self.scope.contains_key(n) => args.push(Term::Var(n.to_string())),
                Kind::Name(n) => args.push(Term::Const(n.to_string())),
                Kind::Quoted(text) => args.push(Term::Const(text)),
                _ => {
                    return err(
                        tok.column,
                        format!(
                            "expected an argument (a name or quoted text), found {}",
                            tok.describe()
                        ),
                    );
                }
            }
            let tok = self.next()?;
            match tok.kind {
                Kind::Comma => {}
                Kind::RParen => return Ok(Atom::Pred(name, args)),
                _ => {
                    return err(
                        tok.column,
                        format!(
                            "expected ',' or ')' after an argument, found {}",
                            tok.describe()
                        ),
                    );
                }
            }
        }
    }
}
