//! What the log and the replay read of an event: its place, session, `seq`, kind and the
//! few fields the replay looks at, with their formulas already parsed.
//!
//! Opening a large file replays every event once. Building an [`Event`] for that costs an
//! allocation or more per line for fields nothing reads during the load (texts, sources,
//! lists of premises), and parsing formulas on the thread that replays makes that thread the
//! bottleneck. A [`Brief`] is the part of an event that the log ([`super::EventStore`] and
//! [`super::Index`]) and the replay ([`crate::model::timeline`]) need, and nothing else:
//!
//! - where the line is, its session and `seq`, its kind;
//! - the body fields the replay reads ([`Gist`]): an announcement's id, role and formula, a
//!   retraction's target, a revision's trigger and list, the formulas a `verify` or `query`
//!   names (for their parse errors), the names BDI events upsert, the plan a step refers to;
//! - every formula among them parsed already: its normalized text (the default id, and
//!   what retractions by formula are resolved against) or its parse error.
//!
//! Whole-file loads make briefs on the decoder threads ([`super::load`]): a scanner that
//! validates a line exactly as the decoder does and keeps only these fields, with lines of
//! an unusual shape decoded in full and briefed with [`Gist::of`]. An event decoded anyway
//! (a followed file, a live session, an in-memory stream) is briefed with [`Brief::of`].
//! Both give the same brief for the same line (a property test compares them on hostile
//! lines), and the replay reads nothing else, so a timeline replayed from briefs is the one
//! replayed from events.

use crate::logic::parse::{ParseError, parse};
use crate::logic::print::normalized;

use super::event::{Body, Event, FileName, Kind, Outcome, RetractBy, Role, Text};
use super::reader::Problem;

/// The hash names (belief ids, targets) are indexed by: hashbrown's default (foldhash),
/// seeded once per process, so that briefs made on the decoder threads carry hashes the
/// replay's tables use. Names are untrusted, so the seed is random.
pub fn name_hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    static SEED: std::sync::LazyLock<hashbrown::DefaultHashBuilder> =
        std::sync::LazyLock::new(hashbrown::DefaultHashBuilder::default);
    SEED.hash_one(s)
}

std::thread_local! {
    /// Set while [`lean`] runs on this thread.
    static LEAN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with lean briefs on this thread when `on`: formulas are not parsed, so every
/// formula of a brief made meanwhile reads as parsing to ⊤, and no parse error is
/// reported; a line the brief scanner takes gets the kind alone as its gist
/// ([`Gist::Plain`], or [`Gist::Unknown`]). Nothing may replay such a brief: a load that
/// only indexes events (the viewer's open of a large file, for the sessions it does not
/// show, which keeps places and kinds) makes them, at a fraction of the cost. Whether a line is an event or a problem, its kind, session, `seq` and time do not
/// depend on its formulas, so they are as in a full brief.
pub(crate) fn lean<R>(on: bool, f: impl FnOnce() -> R) -> R {
    if !on {
        return f();
    }
    let was = LEAN.with(|l| l.replace(true));
    let r = f();
    LEAN.with(|l| l.set(was));
    r
}

/// Whether briefs made now are lean ([`lean`]).
pub(crate) fn is_lean() -> bool {
    LEAN.with(std::cell::Cell::get)
}

/// Parses `text`, or in a lean brief does not ([`lean`]).
fn parse_unless_lean(text: &str) -> Result<crate::logic::formula::Formula, ParseError> {
    if is_lean() {
        return Ok(crate::logic::formula::Formula::True);
    }
    parse(text)
}

/// A 32-bit hash of a normalized formula, which the replay groups active beliefs by (half
/// the width of [`name_hash`] halves its index entries; collisions are confirmed).
pub fn formula_hash(normalized: &str) -> u32 {
    let h = name_hash(normalized);
    (h ^ (h >> 32)) as u32
}

/// A name with its [`name_hash`], computed where the brief is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyed {
    /// The name.
    pub text: Text,
    /// Its [`name_hash`].
    pub hash: u64,
}

impl Keyed {
    /// `text` with its hash.
    pub fn new(text: &str) -> Keyed {
        Keyed {
            text: Text::from(text),
            hash: name_hash(text),
        }
    }
}

/// What the replay reads of an event (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    /// Its `seq` (the line number when the line had none, as [`Event::seq`]).
    pub seq: u64,
    /// Its kind and the fields the replay reads.
    pub gist: Gist,
}

/// An event of a brief load: where it is, its session and its brief.
#[derive(Debug, Clone, PartialEq)]
pub struct Briefed {
    /// Its line number.
    pub line: u64,
    /// The byte offset of its line in the stream.
    pub offset: u64,
    /// Its session: the index of the session among those the load announced with
    /// [`BriefItem::Session`], in order (0 for the first).
    pub session: u32,
    /// What the replay reads of it.
    pub brief: Brief,
}

/// One output of a load that keeps briefs of its events ([`super::read_all_briefs`]): the
/// items [`super::Item`] gives for the same bytes, each event briefed, with its session
/// named once (when the load meets it first) rather than in every event.
#[derive(Debug, Clone, PartialEq)]
pub enum BriefItem {
    /// A session met for the first time; it is the next session index.
    Session(FileName),
    /// A well-formed event.
    Event(Briefed),
    /// A problem with a line (boxed: problems are rare and large).
    Problem(Box<Problem>),
}

/// A formula as the replay needs it: parsed and normalized, or not parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum FormulaGist {
    /// It parses: its normalized text ([`crate::logic::print::normalized`]) and that
    /// text's [`formula_hash`].
    Parsed(Text, u32),
    /// It does not parse: the text as written and why.
    Unparsed(Box<(Text, ParseError)>),
}

impl FormulaGist {
    /// Parses `text`.
    pub fn of(text: &str) -> FormulaGist {
        match parse_unless_lean(text) {
            Ok(f) => {
                let n = normalized(&f);
                let h = formula_hash(&n);
                FormulaGist::Parsed(Text::from(n), h)
            }
            Err(e) => FormulaGist::Unparsed(Box::new((Text::from(text), e))),
        }
    }

    /// The normalized text, when it parses.
    pub fn normalized(&self) -> Option<&str> {
        match self {
            FormulaGist::Parsed(n, _) => Some(n),
            FormulaGist::Unparsed(_) => None,
        }
    }
}

/// A string that names a belief by id or by formula (a retraction's target, a revision's
/// trigger or list entry), with what resolving it needs: the names it may be an id as, and
/// the formula it may be.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// As written.
    pub text: Keyed,
    /// Trimmed, when that differs.
    pub trimmed: Option<Keyed>,
    /// The normalized formula of the trimmed text when it parses, with its
    /// [`formula_hash`].
    pub normalized: Option<(Keyed, u32)>,
    /// Why the text as written does not parse as a formula, if it does not.
    pub error: Option<Box<ParseError>>,
}

impl Target {
    /// Parses `text` both ways the replay asks (trimmed, and as written).
    pub fn of(text: &str) -> Target {
        let trimmed = text.trim();
        let parsed = parse_unless_lean(trimmed);
        let error = if trimmed.len() == text.len() {
            parsed.as_ref().err().cloned()
        } else {
            parse_unless_lean(text).err()
        };
        Target {
            text: Keyed::new(text),
            trimmed: (trimmed.len() != text.len()).then(|| Keyed::new(trimmed)),
            normalized: parsed.ok().map(|f| {
                let n = normalized(&f);
                let h = formula_hash(&n);
                (Keyed::new(&n), h)
            }),
            error: error.map(Box::new),
        }
    }

    /// The text trimmed.
    pub fn trimmed(&self) -> &Keyed {
        self.trimmed.as_ref().unwrap_or(&self.text)
    }
}

/// What the replay reads of an `announce`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnounceGist {
    /// The id the belief is known by: the envelope `id`, else the normalized formula, else
    /// (when the formula does not parse) the formula as written, trimmed.
    pub id: Keyed,
    /// The formula.
    pub formula: FormulaGist,
    /// The role.
    pub role: Role,
}

/// What the replay reads of a `revise`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviseGist {
    /// The trigger, if given.
    pub trigger: Option<Target>,
    /// The `retracted` list.
    pub retracted: Vec<Target>,
}

/// What the replay reads of a `verify`.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyGist {
    /// Parse errors of the formulas it names, in order (`formula`, then `formulas`).
    pub errors: Vec<ParseError>,
    /// Whether it names any formula at all.
    pub any: bool,
    /// Whether the outcome it claims is `contradiction` (the density strip marks it).
    pub contradiction: bool,
}

/// What the replay reads of a `step`.
#[derive(Debug, Clone, PartialEq)]
pub struct StepGist {
    /// The plan id it refers to.
    pub plan: Option<Text>,
    /// The ground beliefs it wrote (its `new_beliefs` when its status is `done`, else
    /// none).
    pub wrote: Vec<GroundWrite>,
    /// The keys of its `inputs`: the ground beliefs it read, in order.
    pub reads: Vec<Text>,
}

/// A ground belief written (by a `belief`, or in a done step's `new_beliefs`): its name and
/// the value atom it makes a member of Σ (`docs/trace-format.md`, "Value atoms").
#[derive(Debug, Clone, PartialEq)]
pub struct GroundWrite {
    /// The name (the upsert key, and the id of its record of Σ).
    pub name: Text,
    /// The value atom `name = value unit`, printed (ASCII).
    pub formula: Text,
    /// Its source.
    pub source: Option<Text>,
}

impl GroundWrite {
    /// The write of `b`.
    pub fn of(b: &super::event::Belief) -> GroundWrite {
        GroundWrite::new(
            &b.name,
            b.value.as_deref(),
            b.unit.as_deref(),
            b.source.as_deref(),
        )
    }

    /// The write of `name` with this value, unit and source; a belief without a value holds
    /// `null`.
    pub fn new(
        name: &str,
        value: Option<&serde_json::Value>,
        unit: Option<&str>,
        source: Option<&str>,
    ) -> GroundWrite {
        use crate::logic::formula::{Atom, Formula, ValueAtom};
        let null = serde_json::Value::Null;
        let atom = ValueAtom::from_json(name, value.unwrap_or(&null), unit);
        let formula = crate::logic::print::to_ascii(&Formula::Atom(Atom::Value(Box::new(atom))));
        GroundWrite {
            name: Text::from(name),
            formula: Text::from(formula),
            source: source.map(Text::from),
        }
    }
}

/// An event's kind with the fields the replay reads of it.
#[derive(Debug, Clone, PartialEq)]
pub enum Gist {
    /// A known kind of which the replay reads nothing but the kind.
    Plain(Kind),
    /// A kind this reader does not know, by its name.
    Unknown(Text),
    /// `announce` (boxed, as the larger gists are: every item of a load carries a gist,
    /// and most are of the small kinds).
    Announce(Box<AnnounceGist>),
    /// `retract`: its target and who retracted.
    Retract(Box<Target>, Option<RetractBy>),
    /// `revise`.
    Revise(Box<ReviseGist>),
    /// `verify`.
    Verify(VerifyGist),
    /// `query`: its formula's parse error, if any.
    Query(Option<Box<ParseError>>),
    /// `answer`: its formula's parse error, if it has a formula that does not parse.
    Answer(Option<Box<ParseError>>),
    /// `belief`: the ground belief it writes.
    Belief(Box<GroundWrite>),
    /// `plan`: its envelope id.
    Plan(Option<Text>),
    /// `step`.
    Step(Box<StepGist>),
    /// `postcondition`: the plan id it refers to.
    Postcondition(Option<Text>),
    /// `score`: the event id it names as its `target`.
    Score(Option<Text>),
}

impl Gist {
    /// The gist of a decoded body whose envelope `id` is `id`.
    pub fn of(id: Option<&str>, body: &Body) -> Gist {
        match body {
            Body::Announce(a) => Gist::announce(id, &a.formula, a.role),
            Body::Retract(r) => Gist::Retract(Box::new(Target::of(&r.target)), r.by),
            Body::Revise(r) => {
                Gist::revise(r.trigger.as_deref(), r.retracted.iter().map(Text::as_str))
            }
            Body::Verify(v) => Gist::verify(v.all_formulas(), v.outcome),
            Body::Query(q) => Gist::query(&q.formula),
            Body::Answer(a) => Gist::answer(a.formula.as_deref()),
            Body::Belief(b) => Gist::Belief(Box::new(GroundWrite::of(b))),
            Body::Plan(_) => Gist::Plan(id.map(Text::from)),
            Body::Step(s) => Gist::Step(Box::new(StepGist {
                plan: s.plan.clone(),
                wrote: if s.status == Some(super::event::StepStatus::Done) {
                    s.new_beliefs.iter().map(GroundWrite::of).collect()
                } else {
                    Vec::new()
                },
                reads: s
                    .inputs
                    .iter()
                    .flat_map(|m| m.keys().map(|k| Text::from(k.as_str())))
                    .collect(),
            })),
            Body::Postcondition(p) => Gist::Postcondition(p.plan.clone()),
            Body::Score(sc) => Gist::Score(sc.target.clone()),
            Body::Unknown(u) => Gist::Unknown(Text::from(u.kind.as_str())),
            other => match other.kind() {
                Some(k) => Gist::Plain(k),
                None => Gist::Unknown(Text::default()),
            },
        }
    }

    /// An `announce` of `formula` with role `role` and envelope id `id`.
    pub fn announce(id: Option<&str>, formula: &str, role: Role) -> Gist {
        let formula = FormulaGist::of(formula);
        let id = match (id, &formula) {
            (Some(id), _) => Keyed::new(id),
            (None, FormulaGist::Parsed(n, _)) => Keyed::new(n),
            // Without a parse there is no normalized form; the text itself is the best id.
            (None, FormulaGist::Unparsed(u)) => Keyed::new(u.0.trim()),
        };
        Gist::Announce(Box::new(AnnounceGist { id, formula, role }))
    }

    /// A `revise` with this trigger and `retracted` list.
    pub fn revise<'a>(trigger: Option<&str>, retracted: impl Iterator<Item = &'a str>) -> Gist {
        Gist::Revise(Box::new(ReviseGist {
            trigger: trigger.map(Target::of),
            retracted: retracted.map(Target::of).collect(),
        }))
    }

    /// A `verify` of these formulas claiming `outcome`.
    pub fn verify<'a>(formulas: impl Iterator<Item = &'a str>, outcome: Option<Outcome>) -> Gist {
        let mut any = false;
        let mut errors = Vec::new();
        for f in formulas {
            any = true;
            if let Err(e) = parse_unless_lean(f) {
                errors.push(e);
            }
        }
        Gist::Verify(VerifyGist {
            errors,
            any,
            contradiction: outcome == Some(Outcome::Contradiction),
        })
    }

    /// A `query` of `formula`.
    pub fn query(formula: &str) -> Gist {
        Gist::Query(parse_unless_lean(formula).err().map(Box::new))
    }

    /// An `answer`, with or without a formula.
    pub fn answer(formula: Option<&str>) -> Gist {
        Gist::Answer(
            formula
                .and_then(|f| parse_unless_lean(f).err())
                .map(Box::new),
        )
    }

    /// The event's kind (`None` for a kind this reader does not know).
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Gist::Plain(k) => *k,
            Gist::Unknown(_) => return None,
            Gist::Announce(_) => Kind::Announce,
            Gist::Retract(..) => Kind::Retract,
            Gist::Revise(_) => Kind::Revise,
            Gist::Verify(_) => Kind::Verify,
            Gist::Query(_) => Kind::Query,
            Gist::Answer(_) => Kind::Answer,
            Gist::Belief(_) => Kind::Belief,
            Gist::Plan(_) => Kind::Plan,
            Gist::Step(_) => Kind::Step,
            Gist::Postcondition(_) => Kind::Postcondition,
            Gist::Score(_) => Kind::Score,
        })
    }

    /// The kind's name as written (also for unknown kinds).
    pub fn kind_name(&self) -> &str {
        match self {
            Gist::Unknown(name) => name,
            g => g.kind().map(Kind::as_str).unwrap_or(""),
        }
    }
}

impl Brief {
    /// The brief of a decoded event.
    pub fn of(ev: &Event) -> Brief {
        Brief {
            seq: ev.seq,
            gist: Gist::of(ev.id.as_deref(), &ev.body),
        }
    }

    /// The event's kind (`None` for a kind this reader does not know).
    pub fn kind(&self) -> Option<Kind> {
        self.gist.kind()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of a load becomes an item moved between threads a few times: the large
    /// gists are boxed so that the usual small one does not pay for them.
    #[test]
    fn items_stay_small() {
        let (gist, item) = (
            std::mem::size_of::<Gist>(),
            std::mem::size_of::<BriefItem>(),
        );
        assert!(
            gist <= 32 && item <= 64,
            "gist {gist} bytes, item {item} bytes"
        );
    }
}
