//! The arithmetic of a BDI compute step (seed 004: "arithmetic errors in bash commands (e.g.
//! integer truncation), or application of the wrong formula"), recomputed independently.
//!
//! A plan step may say what it computes (`compute: "numerator / denominator"`); the audit
//! evaluates that expression on the step's inputs and compares the result with the value the
//! step wrote. The language is deliberately small, so every expression means one thing:
//!
//! - numbers (`42`, `20.9`, `1.5e9`), ground-belief names (`raw_result`; letters, digits,
//!   `_`, `.`), parentheses;
//! - `+ - * /`, `^` (power, right associative; `**` is the same), unary `-`, with the usual
//!   precedence;
//! - `round(x)` (half away from zero), `round(x, n)` (to n decimals; n < 0 rounds to tens,
//!   hundreds, thousands...), `floor`, `ceil`, `trunc`, `abs`, `sqrt`, `min(a, b, ...)`,
//!   `max(a, b, ...)`.
//!
//! Evaluation is in f64. Expressions longer than [`MAX_LEN`] bytes or nested deeper than
//! [`MAX_DEPTH`] are refused (the text comes from a trace).

use std::collections::BTreeMap;

use serde_json::Value;

/// The longest expression evaluated, in bytes.
pub const MAX_LEN: usize = 4096;
/// The deepest nesting of parentheses and calls evaluated.
pub const MAX_DEPTH: usize = 64;

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq)]
pub enum ArithError {
    /// Not in the language; the message says where.
    Syntax(String),
    /// A name with no value among the inputs.
    Unknown(String),
    /// A name whose value is not a number (`"2:01:09"`).
    NotNumeric(String, String),
    /// Division by zero, an overflow or another non-finite result.
    NotFinite,
}

impl std::fmt::Display for ArithError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArithError::Syntax(m) => write!(f, "the expression does not parse: {m}"),
            ArithError::Unknown(n) => write!(f, "{n} has no value among the step's inputs"),
            ArithError::NotNumeric(n, v) => write!(f, "{n} = {v} is not a number"),
            ArithError::NotFinite => f.write_str("the result is not a finite number"),
        }
    }
}

/// A belief value as a number: a JSON number, or a string holding one (thousands separators
/// `,` and `_` and surrounding spaces allowed: `"356,400"`). Nothing else: a unit belongs in
/// the belief's `unit`, and `"2:01:09"` is not a number.
pub fn numeric(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
        Value::String(s) => parse_number(s),
        _ => None,
    }
}

fn parse_number(s: &str) -> Option<f64> {
    let t: String = s
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != '_')
        .collect();
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Half a unit in the last place written: how far a written value may be from the exact one
/// and still be that value rounded (`17052.63` → 0.005, `17000` → 0.5, `1.2e3` → 50).
pub fn half_unit(written: &Value) -> f64 {
    let text = match written {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().replace([',', '_'], ""),
        _ => return 0.0,
    };
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().unwrap_or(0)),
        None => (&text[..], 0),
    };
    let decimals = mantissa.find('.').map_or(0, |i| mantissa.len() - i - 1) as i32;
    0.5 * 10f64.powi(exp - decimals)
}

/// Whether `written` is `exact`, allowing for the rounding its written precision implies and
/// for floating-point noise.
pub fn agrees(written: &Value, exact: f64) -> Option<bool> {
    let w = numeric(written)?;
    let tol = half_unit(written) + 1e-9 * exact.abs().max(1.0);
    Some((w - exact).abs() <= tol)
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number.
    Num(f64),
    /// A ground-belief name.
    Name(String),
    /// Unary minus.
    Neg(Box<Expr>),
    /// A binary operation: `+ - * / ^`.
    Bin(char, Box<Expr>, Box<Expr>),
    /// A function call.
    Call(String, Vec<Expr>),
}

impl Expr {
    /// Parses an expression.
    pub fn parse(src: &str) -> Result<Expr, ArithError> {
        if src.len() > MAX_LEN {
            return Err(ArithError::Syntax(format!("longer than {MAX_LEN} bytes")));
        }
        let mut p = Parser {
            s: src.as_bytes(),
            i: 0,
            depth: 0,
        };
        let e = p.expr()?;
        p.ws();
        if p.i < p.s.len() {
            return Err(p.err("an operator or the end"));
        }
        Ok(e)
    }

    /// The names the expression reads, sorted, each once.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Num(_) => {}
            Expr::Name(n) => out.push(n),
            Expr::Neg(e) => e.collect(out),
            Expr::Bin(_, a, b) => {
                a.collect(out);
                b.collect(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.collect(out)),
        }
    }

    /// Evaluates with the given values of names.
    pub fn eval(&self, vals: &BTreeMap<String, f64>) -> Result<f64, ArithError> {
        let r = match self {
            Expr::Num(x) => *x,
            Expr::Name(n) => *vals.get(n).ok_or_else(|| ArithError::Unknown(n.clone()))?,
            Expr::Neg(e) => -e.eval(vals)?,
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.eval(vals)?, b.eval(vals)?);
                match op {
                    '+' => x + y,
                    '-' => x - y,
                    '*' => x * y,
                    '/' => x / y,
                    _ => x.powf(y),
                }
            }
            Expr::Call(f, args) => {
                let xs = args
                    .iter()
                    .map(|a| a.eval(vals))
                    .collect::<Result<Vec<f64>, _>>()?;
                call(f, &xs)?
            }
        };
        if r.is_finite() {
            Ok(r)
        } else {
            Err(ArithError::NotFinite)
        }
    }
}

fn round_to(x: f64, n: f64) -> f64 {
    let n = n.round().clamp(-300.0, 300.0) as i32;
    let k = 10f64.powi(n.abs());
    if n >= 0 {
        (x * k).round() / k
    } else {
        (x / k).round() * k
    }
}

fn call(f: &str, xs: &[f64]) -> Result<f64, ArithError> {
    let one = |g: fn(f64) -> f64| match xs {
        [x] => Ok(g(*x)),
        _ => Err(ArithError::Syntax(format!("{f} takes one argument"))),
    };
    match f {
        "round" => match xs {
            [x] => Ok(x.round()),
            [x, n] => Ok(round_to(*x, *n)),
            _ => Err(ArithError::Syntax(
                "round takes one or two arguments".into(),
            )),
        },
        "floor" => one(f64::floor),
        "ceil" => one(f64::ceil),
        "trunc" => one(f64::trunc),
        "abs" => one(f64::abs),
        "sqrt" => one(f64::sqrt),
        "min" | "max" if !xs.is_empty() => Ok(xs.iter().copied().fold(
            if f == "min" {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            },
            |a, b| if f == "min" { a.min(b) } else { a.max(b) },
        )),
        "min" | "max" => Err(ArithError::Syntax(format!("{f} needs an argument"))),
        _ => Err(ArithError::Syntax(format!("unknown function {f}"))),
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, expected: &str) -> ArithError {
        ArithError::Syntax(format!("expected {expected} at column {}", self.i + 1))
    }

    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn enter(&mut self) -> Result<(), ArithError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ArithError::Syntax(format!(
                "nested deeper than {MAX_DEPTH}"
            )));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, ArithError> {
        self.enter()?;
        let mut a = self.term()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let b = self.term()?;
            a = Expr::Bin(c as char, Box::new(a), Box::new(b));
        }
        self.depth -= 1;
        Ok(a)
    }

    fn term(&mut self) -> Result<Expr, ArithError> {
        let mut a = self.unary()?;
        loop {
            match self.peek() {
                Some(b'*') if self.s.get(self.i + 1) != Some(&b'*') => {}
                Some(b'/') => {}
                _ => break,
            }
            let c = self.s[self.i] as char;
            self.i += 1;
            let b = self.unary()?;
            a = Expr::Bin(c, Box::new(a), Box::new(b));
        }
        Ok(a)
    }

    fn unary(&mut self) -> Result<Expr, ArithError> {
        if self.peek() == Some(b'-') {
            self.i += 1;
            self.enter()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Neg(Box::new(e)));
        }
        if self.peek() == Some(b'+') {
            self.i += 1;
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, ArithError> {
        let base = self.atom()?;
        let op = match self.peek() {
            Some(b'^') => 1,
            Some(b'*') if self.s.get(self.i + 1) == Some(&b'*') => 2,
            _ => return Ok(base),
        };
        self.i += op;
        self.enter()?;
        let exp = self.unary()?;
        self.depth -= 1;
        Ok(Expr::Bin('^', Box::new(base), Box::new(exp)))
    }

    fn atom(&mut self) -> Result<Expr, ArithError> {
        match self.peek() {
            Some(b'(') => {
                self.i += 1;
                let e = self.expr()?;
                if self.peek() != Some(b')') {
                    return Err(self.err("`)`"));
                }
                self.i += 1;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                let start = self.i;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
                {
                    self.i += 1;
                }
                if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
                    let save = self.i;
                    self.i += 1;
                    if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                        self.i += 1;
                    }
                    if self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                            self.i += 1;
                        }
                    } else {
                        self.i = save;
                    }
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                text.parse::<f64>()
                    .map(Expr::Num)
                    .map_err(|_| ArithError::Syntax(format!("bad number {text:?}")))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
                {
                    self.i += 1;
                }
                let name = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                if self.peek() != Some(b'(') {
                    return Ok(Expr::Name(name));
                }
                self.i += 1;
                self.enter()?;
                let mut args = Vec::new();
                if self.peek() == Some(b')') {
                    self.i += 1;
                } else {
                    loop {
                        args.push(self.expr()?);
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b')') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.err("`,` or `)`")),
                        }
                    }
                }
                self.depth -= 1;
                Ok(Expr::Call(name, args))
            }
            _ => Err(self.err("a number, a name or `(`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(src: &str, vals: &[(&str, f64)]) -> Result<f64, ArithError> {
        let m = vals.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Expr::parse(src)?.eval(&m)
    }

    #[test]
    fn precedence_and_functions() {
        assert_eq!(ev("1 + 2 * 3", &[]), Ok(7.0));
        assert_eq!(ev("(1 + 2) * 3", &[]), Ok(9.0));
        assert_eq!(ev("2 ^ 3 ^ 2", &[]), Ok(512.0));
        assert_eq!(ev("2 ** 3", &[]), Ok(8.0));
        assert_eq!(ev("-2 ^ 2", &[]), Ok(-4.0));
        assert_eq!(ev("10 - 4 - 3", &[]), Ok(3.0));
        assert_eq!(ev("8 / 4 / 2", &[]), Ok(1.0));
        assert_eq!(ev("round(17052.63, -3)", &[]), Ok(17000.0));
        assert_eq!(ev("round(16.95)", &[]), Ok(17.0));
        assert_eq!(ev("round(2.71828, 2)", &[]), Ok(2.72));
        assert_eq!(ev("max(1, 5, 3) + min(2, -1)", &[]), Ok(4.0));
        assert_eq!(ev("trunc(-2.5) + floor(2.5) + ceil(2.1)", &[]), Ok(3.0));
        assert_eq!(ev("1.5e3 + 1E-1", &[]), Ok(1500.1));
        let r = ev(
            "numerator / denominator",
            &[("numerator", 356400.0), ("denominator", 20.9)],
        );
        assert!((r.expect("eval") - 17052.631578947367).abs() < 1e-9);
    }

    #[test]
    fn errors_are_values() {
        assert!(matches!(ev("1 +", &[]), Err(ArithError::Syntax(_))));
        assert!(matches!(ev("(1", &[]), Err(ArithError::Syntax(_))));
        assert!(matches!(ev("1 2", &[]), Err(ArithError::Syntax(_))));
        assert!(matches!(ev("nope(1)", &[]), Err(ArithError::Syntax(_))));
        assert_eq!(ev("x + 1", &[]), Err(ArithError::Unknown("x".into())));
        assert_eq!(ev("1 / 0", &[]), Err(ArithError::NotFinite));
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        assert!(matches!(ev(&deep, &[]), Err(ArithError::Syntax(_))));
        let minus = "-".repeat(100_000) + "1";
        assert!(matches!(ev(&minus, &[]), Err(ArithError::Syntax(_))));
    }

    #[test]
    fn numbers_in_belief_values() {
        assert_eq!(numeric(&json!("356,400")), Some(356400.0));
        assert_eq!(numeric(&json!(" 20.9 ")), Some(20.9));
        assert_eq!(numeric(&json!(17)), Some(17.0));
        assert_eq!(numeric(&json!("2:01:09")), None);
        assert_eq!(numeric(&json!("20.9 km/h")), None);
        assert_eq!(numeric(&json!(null)), None);
    }

    #[test]
    fn written_precision_decides_agreement() {
        // Rounded to what was written: accepted.
        assert_eq!(agrees(&json!("17052.63"), 17052.631578947367), Some(true));
        assert_eq!(agrees(&json!("16971"), 16971.43), Some(true));
        // Integer truncation past the written precision: refused.
        assert_eq!(agrees(&json!("17052"), 17052.63), Some(false));
        assert_eq!(agrees(&json!(17820), 17052.63), Some(false));
        assert_eq!(agrees(&json!("1.7e4"), 17052.63), Some(true));
        assert_eq!(agrees(&json!("abc"), 1.0), None);
    }
}
