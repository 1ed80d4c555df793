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

use super::event::{Body, Event, FileName, Kind, Origin, Outcome, RetractBy, Role, Text};
use super::reader::Problem;

/// An event as the log and the replay see it (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    /// Where the event was read.
    pub origin: Origin,
    /// Its session (the reader's shared name).
    pub session: FileName,
    /// Its `seq` (the line number when the line had none, as [`Event::seq`]).
    pub seq: u64,
    /// Its kind and the fields the replay reads.
    pub gist: Gist,
}

/// One output of a load that keeps briefs of its events ([`super::read_all_briefs`]): the
/// same items as [`super::Item`], with each event briefed.
#[derive(Debug, Clone, PartialEq)]
pub enum BriefItem {
    /// A well-formed event.
    Event(Brief),
    /// A problem with a line (boxed: problems are rare and large).
    Problem(Box<Problem>),
}

/// A formula as the replay needs it: parsed and normalized, or not parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum FormulaGist {
    /// It parses; its normalized text ([`crate::logic::print::normalized`]).
    Parsed(Text),
    /// It does not parse: the text as written and why.
    Unparsed(Box<(Text, ParseError)>),
}

impl FormulaGist {
    /// Parses `text`.
    pub fn of(text: &str) -> FormulaGist {
        match parse(text) {
            Ok(f) => FormulaGist::Parsed(Text::from(normalized(&f))),
            Err(e) => FormulaGist::Unparsed(Box::new((Text::from(text), e))),
        }
    }

    /// The normalized text, when it parses.
    pub fn normalized(&self) -> Option<&str> {
        match self {
            FormulaGist::Parsed(n) => Some(n),
            FormulaGist::Unparsed(_) => None,
        }
    }
}

/// A string that names a belief by id or by formula (a retraction's target, a revision's
/// trigger or list entry), with what resolving it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// As written.
    pub text: Text,
    /// The normalized formula of the trimmed text, when it parses.
    pub normalized: Option<Text>,
    /// Why the text as written does not parse as a formula, if it does not.
    pub error: Option<Box<ParseError>>,
}

impl Target {
    /// Parses `text` both ways the replay asks (trimmed, and as written).
    pub fn of(text: &str) -> Target {
        let trimmed = text.trim();
        let parsed = parse(trimmed);
        let error = if trimmed.len() == text.len() {
            parsed.as_ref().err().cloned()
        } else {
            parse(text).err()
        };
        Target {
            text: Text::from(text),
            normalized: parsed.ok().map(|f| Text::from(normalized(&f))),
            error: error.map(Box::new),
        }
    }
}

/// What the replay reads of an `announce`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnounceGist {
    /// The envelope `id`, if given.
    pub id: Option<Text>,
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
    /// The names of the ground beliefs it wrote (its `new_beliefs` when its status is
    /// `done`, else none).
    pub wrote: Vec<Text>,
}

/// An event's kind with the fields the replay reads of it.
#[derive(Debug, Clone, PartialEq)]
pub enum Gist {
    /// A known kind of which the replay reads nothing but the kind.
    Plain(Kind),
    /// A kind this reader does not know, by its name.
    Unknown(Text),
    /// `announce`.
    Announce(AnnounceGist),
    /// `retract`: its target and who retracted.
    Retract(Target, Option<RetractBy>),
    /// `revise`.
    Revise(Box<ReviseGist>),
    /// `verify`.
    Verify(VerifyGist),
    /// `query`: its formula's parse error, if any.
    Query(Option<Box<ParseError>>),
    /// `belief`: the ground belief's name.
    Belief(Text),
    /// `plan`: its envelope id.
    Plan(Option<Text>),
    /// `step`.
    Step(StepGist),
    /// `postcondition`: the plan id it refers to.
    Postcondition(Option<Text>),
}

impl Gist {
    /// The gist of a decoded body whose envelope `id` is `id`.
    pub fn of(id: Option<&str>, body: &Body) -> Gist {
        match body {
            Body::Announce(a) => Gist::announce(id, &a.formula, a.role),
            Body::Retract(r) => Gist::Retract(Target::of(&r.target), r.by),
            Body::Revise(r) => {
                Gist::revise(r.trigger.as_deref(), r.retracted.iter().map(Text::as_str))
            }
            Body::Verify(v) => Gist::verify(v.all_formulas(), v.outcome),
            Body::Query(q) => Gist::query(&q.formula),
            Body::Belief(b) => Gist::Belief(b.name.clone()),
            Body::Plan(_) => Gist::Plan(id.map(Text::from)),
            Body::Step(s) => Gist::Step(StepGist {
                plan: s.plan.clone(),
                wrote: if s.status == Some(super::event::StepStatus::Done) {
                    s.new_beliefs.iter().map(|b| b.name.clone()).collect()
                } else {
                    Vec::new()
                },
            }),
            Body::Postcondition(p) => Gist::Postcondition(p.plan.clone()),
            Body::Unknown(u) => Gist::Unknown(Text::from(u.kind.as_str())),
            other => match other.kind() {
                Some(k) => Gist::Plain(k),
                None => Gist::Unknown(Text::default()),
            },
        }
    }

    /// An `announce` of `formula` with role `role` and envelope id `id`.
    pub fn announce(id: Option<&str>, formula: &str, role: Role) -> Gist {
        Gist::Announce(AnnounceGist {
            id: id.map(Text::from),
            formula: FormulaGist::of(formula),
            role,
        })
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
            if let Err(e) = parse(f) {
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
        Gist::Query(parse(formula).err().map(Box::new))
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
            Gist::Belief(_) => Kind::Belief,
            Gist::Plan(_) => Kind::Plan,
            Gist::Step(_) => Kind::Step,
            Gist::Postcondition(_) => Kind::Postcondition,
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
            origin: ev.origin.clone(),
            session: ev.session.clone(),
            seq: ev.seq,
            gist: Gist::of(ev.id.as_deref(), &ev.body),
        }
    }

    /// The event's kind (`None` for a kind this reader does not know).
    pub fn kind(&self) -> Option<Kind> {
        self.gist.kind()
    }
}
