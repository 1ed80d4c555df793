//! How much memory an import may take. Importers read a whole file (or an `.eval` member)
//! and build a JSON tree of it, and a tree costs far more than its text: two bytes of
//! `0,` become a 32-byte value, and an object `{"a":0}` of eight bytes a B-tree node of
//! about 640. A hostile or huge file is refused with an error naming it (exit 1), before
//! the allocation that would abort the process.
//!
//! The budget is per thread ([`with_budget`]) so the few callers that want another one
//! (tests, a library user with more memory) set it around the call, and every importer
//! keeps its signature.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{Format, ImportError};

/// What an import may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Bytes read of a file to import, or of one archive member once decompressed.
    pub max_bytes: u64,
    /// Estimated bytes of the JSON tree one document (or member) becomes.
    pub max_tree: u64,
}

impl Budget {
    /// 256 MiB of input and 768 MiB of tree: an import stays near 1 GiB at worst.
    pub const DEFAULT: Budget = Budget {
        max_bytes: 256 << 20,
        max_tree: 768 << 20,
    };
}

impl Default for Budget {
    fn default() -> Self {
        Budget::DEFAULT
    }
}

thread_local! {
    static BUDGET: Cell<Budget> = const { Cell::new(Budget::DEFAULT) };
}

/// The budget imports on this thread work with.
pub fn current() -> Budget {
    BUDGET.with(Cell::get)
}

/// Runs `f` with `budget` as this thread's import budget, then puts the old one back.
pub fn with_budget<T>(budget: Budget, f: impl FnOnce() -> T) -> T {
    let old = BUDGET.with(|b| b.replace(budget));
    let out = f();
    BUDGET.with(|b| b.set(old));
    out
}

/// Megabytes, for messages.
fn mib(n: u64) -> String {
    format!("{} MiB", n.div_ceil(1 << 20))
}

/// The error for input past [`Budget::max_bytes`]; `what` names the file or member.
pub fn too_many_bytes(format: Format, what: &str, max: u64) -> ImportError {
    ImportError {
        format: Some(format),
        location: what.to_string(),
        message: format!(
            "over {} once read: an import holds it whole in memory, and this is more than \
             the import budget of {}; refusing",
            mib(max),
            mib(max)
        ),
    }
}

/// Refuses a JSON text whose tree would take more than the budget's `max_tree` (`what`
/// names the file or member). Text that is not JSON passes: the parser that follows says
/// where it breaks.
pub fn check_json(format: Format, what: &str, text: &[u8]) -> Result<(), ImportError> {
    let max = current().max_tree;
    // No text costs more than MAX_PER_BYTE times its length (`{}` does): a short one passes
    // without the walk (streamed imports check every piece).
    if (text.len() as u64).saturating_mul(MAX_PER_BYTE) <= max {
        return Ok(());
    }
    let mut used = 0u64;
    let mut de = serde_json::Deserializer::from_slice(text);
    // Every document of the text (JSON lines hold one per line), until the end or an error.
    let mut walked = Ok(());
    while walked.is_ok() {
        walked = Cost {
            used: &mut used,
            max,
        }
        .deserialize(&mut de);
    }
    match walked {
        Err(_) if used > max => Err(ImportError {
            format: Some(format),
            location: what.to_string(),
            message: format!(
                "its JSON would take over {} in memory once parsed, more than the import \
                 budget of {}; refusing",
                mib(max),
                mib(max)
            ),
        }),
        _ => Ok(()),
    }
}

/// Adds up what a value costs as a `serde_json::Value`, without building it.
struct Cost<'u> {
    used: &'u mut u64,
    max: u64,
}

/// A value; a string adds its bytes; an object adds one B-tree node and its members.
const VALUE: u64 = 32;
const OBJECT: u64 = 640;
const MEMBER: u64 = 56;
/// The most a byte of text can cost: `{}` is two bytes and `VALUE + OBJECT`; every other
/// value costs less per byte of its text (a member's key and punctuation, 56 + its length for
/// at least 4 bytes; a number 32 for at least one byte).
const MAX_PER_BYTE: u64 = (VALUE + OBJECT).div_ceil(2);

impl Cost<'_> {
    fn add<E: de::Error>(&mut self, n: u64) -> Result<(), E> {
        *self.used = self.used.saturating_add(n);
        if *self.used > self.max {
            Err(E::custom("over the import budget"))
        } else {
            Ok(())
        }
    }
}

impl<'de> DeserializeSeed<'de> for Cost<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Cost<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(mut self, _: bool) -> Result<(), E> {
        self.add(VALUE)
    }
    fn visit_i64<E: de::Error>(mut self, _: i64) -> Result<(), E> {
        self.add(VALUE)
    }
    fn visit_u64<E: de::Error>(mut self, _: u64) -> Result<(), E> {
        self.add(VALUE)
    }
    fn visit_f64<E: de::Error>(mut self, _: f64) -> Result<(), E> {
        self.add(VALUE)
    }
    fn visit_unit<E: de::Error>(mut self) -> Result<(), E> {
        self.add(VALUE)
    }
    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<(), E> {
        self.add(VALUE + v.len() as u64)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let (used, max) = (self.used, self.max);
        Cost {
            used: &mut *used,
            max,
        }
        .add(VALUE)?;
        while a
            .next_element_seed(Cost {
                used: &mut *used,
                max,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let (used, max) = (self.used, self.max);
        Cost {
            used: &mut *used,
            max,
        }
        .add(VALUE + OBJECT)?;
        while let Some(key) = a.next_key::<KeyLen>()? {
            Cost {
                used: &mut *used,
                max,
            }
            .add(MEMBER + key.0)?;
            a.next_value_seed(Cost {
                used: &mut *used,
                max,
            })?;
        }
        Ok(())
    }
}

/// A key's length, without keeping the key.
struct KeyLen(u64);

impl<'de> de::Deserialize<'de> for KeyLen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyLen;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyLen, E> {
                Ok(KeyLen(v.len() as u64))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the walk adds up for `text`, without the shortcut.
    fn walked(text: &[u8]) -> u64 {
        let mut used = 0u64;
        let mut de = serde_json::Deserializer::from_slice(text);
        loop {
            let c = Cost {
                used: &mut used,
                max: u64::MAX,
            };
            if c.deserialize(&mut de).is_err() {
                return used;
            }
        }
    }

    #[test]
    fn no_text_costs_more_per_byte_than_the_shortcut_assumes() {
        let worst = [
            "{}",
            "{}\n{}",
            "{\"\":{}}",
            "[{},{},{}]",
            "0",
            "0\n0",
            "[0,0]",
            "{\"a\":0}",
            "\"\"",
            "[[[[]]]]",
            "{\"\":{\"\":{\"\":{}}}}",
        ];
        for t in worst {
            let c = walked(t.as_bytes());
            assert!(c > 0, "{t}");
            assert!(c <= MAX_PER_BYTE * t.len() as u64, "{t}: {c}");
        }
        assert_eq!(walked(b"{}"), MAX_PER_BYTE * 2, "the bound is tight");
    }

    #[test]
    fn a_list_of_zeros_costs_its_values_not_its_text() {
        let text = format!("[{}]", vec!["0"; 1000].join(","));
        let small = Budget {
            max_bytes: 1 << 20,
            max_tree: 16_000,
        };
        with_budget(small, || {
            assert!(check_json(Format::Langfuse, "f", text.as_bytes()).is_err());
            assert!(check_json(Format::Langfuse, "f", b"[0,0,0]").is_ok());
            // Not JSON: left to the parser.
            assert!(check_json(Format::Langfuse, "f", b"[0,0").is_ok());
        });
        assert_eq!(current(), Budget::DEFAULT);
        assert!(check_json(Format::Langfuse, "f", text.as_bytes()).is_ok());
    }
}
