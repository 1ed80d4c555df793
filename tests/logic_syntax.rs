//! Parser and printer tests: examples, hostile inputs with the expected error and column,
//! depth limits, and property tests (round trip through both printers; agreement with an
//! independent recursive-descent transcription of the grammar).

use doxascope::logic::formula::{Atom, Formula, MAX_DEPTH, Scalar, Term, ValueAtom};
use doxascope::logic::parse::{MAX_INPUT_BYTES, ParseError, is_name, parse};
use doxascope::logic::print::{normalized, to_ascii};
use proptest::prelude::*;

fn p(s: &str) -> Formula {
    match parse(s) {
        Ok(f) => f,
        Err(e) => panic!("{s:?} should parse: {e}"),
    }
}

fn perr(s: &str) -> ParseError {
    match parse(s) {
        Ok(f) => panic!("{s:?} should not parse, got {f:?}"),
        Err(e) => e,
    }
}

fn prop(s: &str) -> Formula {
    Formula::Atom(Atom::Prop(s.into()))
}

fn not(f: Formula) -> Formula {
    Formula::Not(Box::new(f))
}

fn imp(a: Formula, b: Formula) -> Formula {
    Formula::Implies(Box::new(a), Box::new(b))
}

fn iff(a: Formula, b: Formula) -> Formula {
    Formula::Iff(Box::new(a), Box::new(b))
}

fn pred(name: &str, args: Vec<Term>) -> Formula {
    Formula::Atom(Atom::Pred(name.into(), args))
}

fn val(key: &str, value: Scalar, unit: Option<&str>) -> Formula {
    Formula::Atom(Atom::Value(Box::new(ValueAtom {
        key: key.into(),
        value,
        unit: unit.map(str::to_string),
    })))
}

fn s(text: &str) -> Scalar {
    Scalar::Str(text.into())
}

fn num(text: &str) -> Scalar {
    Scalar::Num(text.into())
}

#[test]
fn value_atoms_parse_with_memory_keys() {
    assert_eq!(
        p(r#"seat_pref = "aisle""#),
        val("seat_pref", s("aisle"), None)
    );
    assert_eq!(
        p(r#"user-prefs/m2 = "window""#),
        val("user-prefs/m2", s("window"), None)
    );
    assert_eq!(p("a.b-c/d=3"), val("a.b-c/d", num("3"), None));
    assert_eq!(p(r#""my key" = 1"#), val("my key", num("1"), None));
    assert_eq!(p(r#""not" = 1"#), val("not", num("1"), None));
    // Keys are recognised only before '=': elsewhere '-' and '.' keep their meaning.
    assert_eq!(p("a->b"), imp(prop("a"), prop("b")));
    assert_eq!(
        p(r#"balance_ok -> status = "paid""#),
        imp(prop("balance_ok"), val("status", s("paid"), None))
    );
    assert_eq!(
        p("~k = 1 & k = 2"),
        Formula::And(vec![
            not(val("k", num("1"), None)),
            val("k", num("2"), None)
        ])
    );
}

#[test]
fn values_are_canonical() {
    // Numbers by value, strings apart from numbers.
    assert_eq!(p("n = 3"), p("n = 3.0"));
    assert_eq!(p("n = 3"), p("n = 0.3e1"));
    assert_eq!(p("n = 0"), p("n = -0"));
    assert_ne!(p("n = 3"), p(r#"n = "3""#));
    assert_eq!(p("n = 20.90"), val("n", num("20.9"), None));
    assert_eq!(p("n = 1e300"), val("n", num("1e300"), None));
    assert_eq!(p("n = 1e16"), val("n", num("10000000000000000"), None));
    assert_eq!(p("n = -2.50e0"), val("n", num("-2.5"), None));
    assert_eq!(p("n = 0.00000015"), val("n", num("1.5e-7"), None));
    assert_eq!(p("n = 123456789012"), val("n", num("123456789012"), None));
    // JSON: no spaces, keys sorted, numbers canonical inside.
    assert_eq!(
        p(r#"m = { "b": [1.0, true], "a": null }"#),
        val("m", Scalar::Json(r#"{"a":null,"b":[1,true]}"#.into()), None)
    );
    assert_eq!(p("f = true"), val("f", Scalar::Json("true".into()), None));
    assert_eq!(p("f = null"), val("f", Scalar::Json("null".into()), None));
    // The unit is part of the value.
    assert_eq!(p("d = 5 km"), val("d", num("5"), Some("km")));
    assert_eq!(p(r#"d = 5 "km/h""#), val("d", num("5"), Some("km/h")));
    assert_ne!(p("d = 5 km"), p("d = 5"));
    // A keyword after the value is a connective, not a unit.
    assert_eq!(
        p("d = 5 and q"),
        Formula::And(vec![val("d", num("5"), None), prop("q")])
    );
}

#[test]
fn value_atoms_print_and_round_trip() {
    for text in [
        r#"seat_pref = "aisle""#,
        r#"user-prefs/m2 = "window""#,
        r#""my key" = {"a":[1,"x"]}"#,
        r#"d = 20.9 "km/h""#,
        r#"d = 5 km"#,
        r#"balance_ok -> status = "paid""#,
        r#"k = "line\u{a}break""#,
    ] {
        let f = p(text);
        assert_eq!(to_ascii(&f), text);
        assert_eq!(p(&f.to_string()), f);
    }
}

#[test]
fn bad_values_are_located_errors() {
    let e = perr("k = aisle");
    assert_eq!(e.column, 5);
    assert!(e.message.contains("quoted"), "{}", e.message);
    assert_eq!(perr("k = ").column, 5);
    assert_eq!(perr("k => v").column, 3);
    assert_eq!(perr("k = 01").column, 5);
    assert_eq!(perr(r#"k = {"a":}"#).column, 5);
    assert_eq!(perr("P(x) = 1").column, 6);
    assert_eq!(perr("k = 1 = 2").column, 7);
}

fn var(s: &str) -> Term {
    Term::Var(s.into())
}

fn cst(s: &str) -> Term {
    Term::Const(s.into())
}

#[test]
fn atoms_of_every_kind() {
    assert_eq!(p("treasure_in_b"), prop("treasure_in_b"));
    assert_eq!(
        p("Older(alice, bob)"),
        pred("Older", vec![cst("alice"), cst("bob")])
    );
    assert_eq!(
        p(r#""dns failure example.com""#),
        Formula::Atom(Atom::Quoted("dns failure example.com".into()))
    );
    assert_eq!(
        p(r#""say \"hi\" \\ \u{1b}""#),
        Formula::Atom(Atom::Quoted("say \"hi\" \\ \u{1b}".into()))
    );
    assert_eq!(p("P()"), pred("P", vec![]));
    assert_eq!(
        p(r#""lives in"(bob, "New York")"#),
        pred("lives in", vec![cst("bob"), cst("New York")])
    );
    assert_eq!(p("⊤"), Formula::True);
    assert_eq!(p("true"), Formula::True);
    assert_eq!(p("⊥"), Formula::False);
    assert_eq!(p("false"), Formula::False);
    // Keywords are case-sensitive: these are names.
    assert_eq!(p("True"), prop("True"));
    assert_eq!(p("AND"), prop("AND"));
    assert_eq!(p("42"), prop("42"));
}

#[test]
fn connectives_unicode_and_ascii_agree() {
    let expected = iff(
        imp(
            Formula::Or(vec![
                Formula::And(vec![not(prop("a")), prop("b")]),
                prop("c"),
            ]),
            prop("d"),
        ),
        prop("e"),
    );
    for s in [
        "¬a ∧ b ∨ c → d ↔ e",
        "~a & b | c -> d <-> e",
        "!a && b || c -> d <-> e",
        "not a and b or c implies d iff e",
        "((((¬a) ∧ b) ∨ c) → d) ↔ e",
    ] {
        assert_eq!(p(s), expected, "{s}");
    }
}

#[test]
fn chains_flatten_only_without_parentheses() {
    let (a, b, c) = (prop("a"), prop("b"), prop("c"));
    assert_eq!(
        p("a ∧ b ∧ c"),
        Formula::And(vec![a.clone(), b.clone(), c.clone()])
    );
    assert_eq!(
        p("(a ∧ b) ∧ c"),
        Formula::And(vec![Formula::And(vec![a.clone(), b.clone()]), c.clone()])
    );
    assert_eq!(
        p("a ∧ (b ∧ c)"),
        Formula::And(vec![a.clone(), Formula::And(vec![b.clone(), c.clone()])])
    );
    assert_eq!(
        p("a ∨ b ∧ c ∨ a"),
        Formula::Or(vec![
            a.clone(),
            Formula::And(vec![b.clone(), c.clone()]),
            a.clone()
        ])
    );
    // Right associativity of → and ↔.
    assert_eq!(p("a → b → c"), imp(a.clone(), imp(b.clone(), c.clone())));
    assert_eq!(p("a ↔ b ↔ c"), iff(a.clone(), iff(b.clone(), c.clone())));
    assert_eq!(p("¬¬a"), not(not(a)));
}

#[test]
fn quantifiers_scope_and_bind() {
    let body = Formula::Or(vec![
        pred("P", vec![var("x")]),
        pred("Q", vec![var("x"), cst("bob")]),
    ]);
    assert_eq!(
        p("a ∧ ∀x. P(x) ∨ Q(x, bob)"),
        Formula::And(vec![
            prop("a"),
            Formula::Forall(vec!["x".into()], Box::new(body.clone()))
        ])
    );
    assert_eq!(
        p("forall x, y. R(x, y, z)"),
        Formula::Forall(
            vec!["x".into(), "y".into()],
            Box::new(pred("R", vec![var("x"), var("y"), cst("z")]))
        )
    );
    // The body ends at a closing parenthesis; x is a constant again after it.
    assert_eq!(
        p("(∃x. P(x)) ∧ P(x)"),
        Formula::And(vec![
            Formula::Exists(vec!["x".into()], Box::new(pred("P", vec![var("x")]))),
            pred("P", vec![cst("x")])
        ])
    );
    // A quoted argument is always a constant.
    assert_eq!(
        p(r#"exists x. P(x, "x")"#),
        Formula::Exists(
            vec!["x".into()],
            Box::new(pred("P", vec![var("x"), cst("x")]))
        )
    );
    assert_eq!(
        p("¬∀x. P(x) → q"),
        not(Formula::Forall(
            vec!["x".into()],
            Box::new(imp(pred("P", vec![var("x")]), prop("q")))
        ))
    );
}

#[test]
fn printers_use_minimal_parentheses() {
    let cases = [
        ("a & b | c", "a ∧ b ∨ c"),
        ("(a | b) & c", "(a ∨ b) ∧ c"),
        ("(a & b) & c", "(a ∧ b) ∧ c"),
        ("(a -> b) -> c", "(a → b) → c"),
        ("a -> (b -> c)", "a → b → c"),
        ("~(a & b)", "¬(a ∧ b)"),
        ("(forall x. P(x)) & q", "(∀x. P(x)) ∧ q"),
        ("q & (forall x. P(x))", "q ∧ ∀x. P(x)"),
        ("(q & forall x. P(x)) -> r", "q ∧ (∀x. P(x)) → r"),
        ("~(exists x. P(x)) | r", "¬(∃x. P(x)) ∨ r"),
        ("not (a <-> b) <-> c", "¬(a ↔ b) ↔ c"),
        (
            r#"P("and", "x y", b) | "and""#,
            r#"P("and", "x y", b) ∨ "and""#,
        ),
        (r#"forall x. P(x, "x")"#, r#"∀x. P(x, "x")"#),
    ];
    for (input, unicode) in cases {
        let f = p(input);
        assert_eq!(f.to_string(), unicode, "{input}");
        assert_eq!(p(unicode), f, "{input}");
        let ascii = to_ascii(&f);
        assert_eq!(p(&ascii), f, "{input} -> {ascii}");
        assert_eq!(normalized(&f), ascii);
    }
    assert_eq!(to_ascii(&p("∀x,y. P(x) → ⊥")), "forall x, y. P(x) -> false");
}

#[test]
fn normalized_ignores_spelling() {
    let a = normalized(&p("  ((p) ∧ ¬q)→r "));
    let b = normalized(&p("p && !q implies r"));
    assert_eq!(a, b);
    assert_eq!(a, "p & ~q -> r");
}

/// (input, expected column, expected message substring).
const HOSTILE: &[(&str, usize, &str)] = &[
    ("", 1, "expected a formula"),
    ("   ", 4, "found end of input"),
    (
        "∧",
        1,
        "expected a formula (an atom, '¬', a quantifier or '('), found '∧'",
    ),
    ("p ∧", 4, "expected a formula"),
    ("p ∧ ∧ q", 5, "found '∧'"),
    ("¬", 2, "found end of input"),
    (
        "p q",
        3,
        "expected a connective or the end of the formula, found 'q'",
    ),
    (
        "(p",
        3,
        "expected ')' to close the '(' at column 1, found end of input",
    ),
    ("((p) ∧ q", 9, "to close the '(' at column 1"),
    ("p)", 2, "found ')' with no matching '('"),
    ("(p q)", 4, "expected a connective or ')', found 'q'"),
    ("()", 2, "expected a formula"),
    ("p\0q", 2, "control or invisible character U+0000"),
    ("p ∧ \u{1b}[2J", 5, "U+001B"),
    ("p\u{202e}q", 2, "U+202E"),
    ("p\u{200b}", 2, "U+200B"),
    ("p ∧ q\u{a0}", 6, "U+00A0"),
    ("é", 1, "names are ASCII"),
    ("\"abc", 1, "unterminated quoted text"),
    ("p ∧ \"a\\\"", 5, "unterminated quoted text"),
    ("\"a\\qb\"", 3, "unknown escape '\\q'"),
    ("\"a\\u{d800}\"", 3, "invalid escape"),
    ("\"a\u{7}b\"", 3, "must be written as \\u{7}"),
    ("\"\u{202e}\"", 2, "U+202E"),
    ("p # q", 3, "unexpected character '#'"),
    ("p - q", 3, "did you mean '->'"),
    ("p <= q", 3, "did you mean '<->'"),
    ("p => q", 3, "unexpected character '='"),
    ("∀x.", 4, "found end of input"),
    (
        "∀x",
        3,
        "expected ',' or '.' after the quantified variable 'x', found end of input",
    ),
    (
        "forall . p",
        8,
        "expected a variable name after 'forall', found '.'",
    ),
    ("∀x, . p", 5, "expected a variable name after ','"),
    ("∀x, x. P(x)", 5, "listed twice"),
    (
        "∀and. p",
        2,
        "expected a variable name after '∀', found 'and'",
    ),
    (
        "P(a b)",
        5,
        "expected ',' or ')' after an argument, found 'b'",
    ),
    ("P(a,)", 5, "expected an argument"),
    ("P(a", 4, "found end of input"),
    ("P(¬a)", 3, "expected an argument"),
    ("p ∧ and", 5, "found 'and'"),
    ("a.b", 2, "found '.'"),
];

#[test]
fn hostile_inputs_give_located_errors() {
    for &(input, column, message) in HOSTILE {
        let e = perr(input);
        assert_eq!(e.column, column, "{input:?}: {e}");
        assert!(e.message.contains(message), "{input:?}: {e}");
        // The column always points into the input or just past its end.
        assert!(e.column >= 1 && e.column <= input.chars().count() + 1);
    }
}

#[test]
fn atoms_print_on_their_own() {
    assert_eq!(Atom::Prop("p".into()).to_string(), "p");
    assert_eq!(Atom::Prop("and".into()).to_string(), "\"and\"");
    assert_eq!(
        Atom::Pred("Older".into(), vec![cst("alice"), cst("New York")]).to_string(),
        "Older(alice, \"New York\")"
    );
    assert_eq!(
        Atom::Quoted("a\"b\u{1b}".into()).to_string(),
        "\"a\\\"b\\u{1b}\""
    );
}

#[test]
fn huge_arity_parses_and_round_trips() {
    // 20,000 keeps the debug-build test quick; nothing here is per-level recursion.
    let args: Vec<String> = (0..20_000).map(|i| format!("c{i}")).collect();
    let f = p(&format!("P({})", args.join(", ")));
    match &f {
        Formula::Atom(Atom::Pred(_, a)) => assert_eq!(a.len(), 20_000),
        other => panic!("{other:?}"),
    }
    assert_eq!(p(&to_ascii(&f)), f);
    let wide_quantifier = format!("∀{}. P({})", args.join(", "), args.join(", "));
    let g = p(&wide_quantifier);
    assert_eq!(p(&g.to_string()), g);
}

#[test]
fn column_counts_characters_not_bytes() {
    let e = perr("¬¬ ∧ q");
    assert_eq!(e.column, 4);
    assert_eq!(e.to_string(), format!("column 4: {}", e.message));
    // Embedded in a REPL line after "check ".
    assert_eq!(e.offset(6).column, 10);
}

#[test]
fn long_name_is_refused_but_can_be_quoted() {
    let long = "a".repeat(1_000_000);
    let e = perr(&format!("p ∧ {long}"));
    assert_eq!(e.column, 5);
    assert!(e.message.contains("over the limit of 1024"), "{e}");
    let quoted_ok = "b".repeat(2000);
    let f = p(&format!("P(\"{quoted_ok}\")"));
    assert_eq!(p(&to_ascii(&f)), f);
    assert!(!is_name(&quoted_ok));
}

#[test]
fn oversized_input_is_refused() {
    let huge = "p".repeat(MAX_INPUT_BYTES + 1);
    let e = perr(&huge);
    assert_eq!(e.column, 1);
    assert!(e.message.contains("over the limit"), "{e}");
}

fn nest(prefix: &str, atom: &str, suffix: &str, n: usize) -> String {
    let mut s = String::with_capacity(n * (prefix.len() + suffix.len()) + atom.len());
    for _ in 0..n {
        s.push_str(prefix);
    }
    s.push_str(atom);
    for _ in 0..n {
        s.push_str(suffix);
    }
    s
}

#[test]
fn depth_limit_is_exact() {
    // MAX_DEPTH negations parse; one more is an error.
    let ok = p(&nest("¬", "p", "", MAX_DEPTH));
    assert_eq!(ok.depth(), MAX_DEPTH);
    assert!(
        perr(&nest("¬", "p", "", MAX_DEPTH + 1))
            .message
            .contains("nests deeper than 1000")
    );
    // Same for right-nested implications and for parentheses.
    assert_eq!(p(&nest("a → ", "p", "", MAX_DEPTH)).depth(), MAX_DEPTH);
    assert!(
        perr(&nest("a → ", "p", "", MAX_DEPTH + 1))
            .message
            .contains("nests deeper")
    );
    assert_eq!(p(&nest("(", "p", ")", MAX_DEPTH)), prop("p"));
    let e = perr(&nest("(", "p", ")", MAX_DEPTH + 1));
    assert_eq!(e.column, MAX_DEPTH + 1);
    // Depth reached only when a left operand is folded in (not visible on the operator stack).
    let left = {
        let mut s = "p".to_string();
        for _ in 0..MAX_DEPTH {
            s = format!("({s}) ∧ q");
        }
        s
    };
    assert_eq!(p(&left).depth(), MAX_DEPTH);
    let too_left = format!("({left}) ∧ q");
    assert!(perr(&too_left).message.contains("nests deeper"));
}

#[test]
fn hundred_thousand_deep_inputs_are_errors_not_crashes() {
    // Run on a small stack: the parser must not recurse.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let n = 100_000;
            for s in [
                nest("(", "p", ")", n),
                nest("¬", "p", "", n),
                nest("a -> (", "p", ")", n),
                nest("∀x. ", "P(x)", "", n),
                nest("(", "p", "", n),
            ] {
                let e = perr(&s);
                assert!(e.message.contains("nests deeper than 1000"), "{e}");
            }
        })
        .expect("spawn");
    handle.join().expect("no panic, no overflow");
}

#[test]
fn deep_trees_drop_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let mut f = prop("p");
            // Far beyond what recursion could survive on 256 KiB (a few hundred bytes a level).
            for i in 0..200_000 {
                f = match i % 5 {
                    0 => not(f),
                    1 => Formula::And(vec![f, prop("q")]),
                    2 => imp(prop("r"), f),
                    3 => Formula::Forall(vec!["x".into()], Box::new(f)),
                    _ => Formula::Or(vec![prop("s"), f, Formula::True]),
                };
            }
            assert_eq!(f.depth(), 200_000);
            // Printing is iterative too.
            let printed = to_ascii(&f);
            assert!(printed.len() > 200_000);
            drop(f);
        })
        .expect("spawn");
    handle.join().expect("no overflow");
}

#[test]
fn max_depth_trees_survive_derived_traits_on_a_test_thread() {
    // Derived Clone / PartialEq / Debug recurse; the depth limit keeps them safe on the
    // default 2 MiB test thread even in a debug build.
    let f = p(&nest("¬(a ∧ ", "p", ")", MAX_DEPTH / 2));
    let g = f.clone();
    assert_eq!(f, g);
    assert!(format!("{g:?}").len() > MAX_DEPTH);
}

#[test]
fn long_flat_chain_parses_and_prints() {
    let n = 200_000;
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str(" ∧ ");
        }
        s.push_str(&format!("a{i}"));
    }
    let start = std::time::Instant::now();
    let f = p(&s);
    match &f {
        Formula::And(v) => assert_eq!(v.len(), n),
        other => panic!("expected one n-ary node, got depth {}", other.depth()),
    }
    assert_eq!(f.to_string(), s);
    // Loose sanity bound only (speed is measured in benches/parse.rs): quadratic behaviour
    // would take minutes here.
    assert!(start.elapsed().as_secs() < 30);
}

// ---------------------------------------------------------------------------------------
// Property tests.

const VARS: [&str; 3] = ["x", "y", "z"];

fn name_strategy() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,5}".prop_filter("keyword", |s| is_name(s))
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<char>(), 0..6).prop_map(String::from_iter),
        Just("and".to_string()),
        Just("x".to_string()),
        Just("a \"b\" \\".to_string()),
    ]
}

fn term_strategy() -> impl Strategy<Value = Term> {
    prop_oneof![
        prop::sample::select(&VARS[..]).prop_map(|v| Term::Var(v.to_string())),
        name_strategy().prop_map(Term::Const),
        text_strategy().prop_map(Term::Const),
    ]
}

fn key_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_./-]{0,6}",
        text_strategy(),
        Just("and".to_string()),
    ]
}

fn scalar_strategy() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        text_strategy().prop_map(Scalar::Str),
        (-1000i64..1000).prop_map(|n| Scalar::Num(n.to_string())),
        Just(Scalar::Num("20.9".into())),
        Just(Scalar::Num("1e300".into())),
        prop::sample::select(vec!["true", "false", "null", "[]", r#"{"a":[1,"\u202e"]}"#])
            .prop_map(|j| Scalar::Json(j.to_string())),
    ]
}

fn value_strategy() -> impl Strategy<Value = Formula> {
    (
        key_strategy(),
        scalar_strategy(),
        prop::option::of(prop_oneof![name_strategy(), text_strategy()]),
    )
        .prop_map(|(key, value, unit)| {
            Formula::Atom(Atom::Value(Box::new(ValueAtom { key, value, unit })))
        })
}

fn leaf_strategy() -> impl Strategy<Value = Formula> {
    prop_oneof![
        value_strategy(),
        Just(Formula::True),
        Just(Formula::False),
        name_strategy().prop_map(|n| Formula::Atom(Atom::Prop(n))),
        text_strategy().prop_map(|t| Formula::Atom(Atom::Quoted(t))),
        (
            prop_oneof![name_strategy(), text_strategy()],
            prop::collection::vec(term_strategy(), 0..3)
        )
            .prop_map(|(n, args)| Formula::Atom(Atom::Pred(n, args))),
    ]
}

fn binders() -> impl Strategy<Value = Vec<String>> {
    prop::sample::subsequence(&VARS[..], 1..=3)
        .prop_map(|v| v.into_iter().map(String::from).collect())
}

fn raw_formula() -> impl Strategy<Value = Formula> {
    leaf_strategy().prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(not),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::Or),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| imp(a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| iff(a, b)),
            (binders(), inner.clone()).prop_map(|(v, b)| Formula::Forall(v, Box::new(b))),
            (binders(), inner).prop_map(|(v, b)| Formula::Exists(v, Box::new(b))),
        ]
    })
}

/// Makes a generated tree well scoped: a `Var` not bound by an enclosing quantifier becomes a
/// constant of the same name (constants that a binder shadows are kept: the printer quotes them).
fn scope_fix(f: &Formula, bound: &mut Vec<String>) -> Formula {
    match f {
        Formula::True => Formula::True,
        Formula::False => Formula::False,
        Formula::Atom(Atom::Pred(n, args)) => Formula::Atom(Atom::Pred(
            n.clone(),
            args.iter()
                .map(|t| match t {
                    Term::Var(v) if !bound.contains(v) => Term::Const(v.clone()),
                    t => t.clone(),
                })
                .collect(),
        )),
        Formula::Atom(a) => Formula::Atom(a.clone()),
        Formula::Not(g) => not(scope_fix(g, bound)),
        Formula::And(gs) => Formula::And(gs.iter().map(|g| scope_fix(g, bound)).collect()),
        Formula::Or(gs) => Formula::Or(gs.iter().map(|g| scope_fix(g, bound)).collect()),
        Formula::Implies(a, b) => imp(scope_fix(a, bound), scope_fix(b, bound)),
        Formula::Iff(a, b) => iff(scope_fix(a, bound), scope_fix(b, bound)),
        Formula::Forall(vs, g) | Formula::Exists(vs, g) => {
            let len = bound.len();
            bound.extend(vs.iter().cloned());
            let body = Box::new(scope_fix(g, bound));
            bound.truncate(len);
            if matches!(f, Formula::Forall(..)) {
                Formula::Forall(vs.clone(), body)
            } else {
                Formula::Exists(vs.clone(), body)
            }
        }
    }
}

fn formula_strategy() -> impl Strategy<Value = Formula> {
    raw_formula().prop_map(|f| scope_fix(&f, &mut Vec::new()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trip_unicode(f in formula_strategy()) {
        let s = f.to_string();
        let back = parse(&s);
        prop_assert_eq!(back.as_ref(), Ok(&f), "printed: {}", s);
    }

    #[test]
    fn round_trip_ascii(f in formula_strategy()) {
        let s = to_ascii(&f);
        let back = parse(&s);
        prop_assert_eq!(back.as_ref(), Ok(&f), "printed: {}", s);
        // The printed form is a normal form: printing the re-parsed tree gives it back.
        if let Ok(g) = back {
            prop_assert_eq!(to_ascii(&g), s);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Any input: no panic, an error column inside the input (or just past it), and whatever
    /// is accepted prints to a normal form that parses back to the same tree.
    #[test]
    fn any_input_is_handled(s in prop_oneof![
        any::<String>(),
        prop::collection::vec(
            prop::sample::select(vec![
                "p", "Q", "(", ")", ",", ".", " ", "¬", "!", "∧", "&", "|", "∨", "->", "→", "<-",
                "↔", "∀", "∃", "x", "forall", "exists", "not", "\"", "\\", "\\u{41}", "\0",
                "\u{202e}", "é", "-", "<", "⊤", "⊥", "=", "a-b/c.d", "3", "-0.5e2", "{", "}",
                "[", "]", "\"k\":", "null", "km",
            ]),
            0..24,
        ).prop_map(|v| v.concat()),
    ]) {
        match parse(&s) {
            Ok(f) => {
                let ascii = to_ascii(&f);
                let back = parse(&ascii);
                prop_assert_eq!(back.as_ref(), Ok(&f), "{:?} printed {:?}", s, ascii);
                let back = parse(&f.to_string());
                prop_assert_eq!(back.as_ref(), Ok(&f));
            }
            Err(e) => {
                prop_assert!(e.column >= 1 && e.column <= s.chars().count() + 1, "{:?}: {}", s, e);
                prop_assert!(!e.message.is_empty());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Differential test: the parser against a direct recursive-descent transcription of the
// grammar in `logic::parse`'s documentation, on random token sequences (most of them
// malformed). Both must accept the same inputs and build the same trees.

const TOKENS: &[&str] = &[
    "p",
    "q",
    "P(x)",
    "P(a, y)",
    "¬",
    "~",
    "not",
    "∧",
    "&",
    "and",
    "∨",
    "||",
    "→",
    "->",
    "↔",
    "<->",
    "(",
    ")",
    "(",
    ")",
    "∀x.",
    "∃y.",
    "forall x, y.",
    "⊤",
    "false",
    "=",
    "k/x",
    "1",
    "2.0",
    "\"v\"",
];

struct Rd<'a> {
    toks: Vec<&'a str>,
    pos: usize,
    bound: Vec<String>,
}

impl<'a> Rd<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.toks.get(self.pos).copied()
    }
    fn eat(&mut self, alts: &[&str]) -> bool {
        if self.peek().is_some_and(|t| alts.contains(&t)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn formula(&mut self) -> Option<Formula> {
        let a = self.implies()?;
        if self.eat(&["↔", "<->", "iff"]) {
            Some(iff(a, self.formula()?))
        } else {
            Some(a)
        }
    }
    fn implies(&mut self) -> Option<Formula> {
        let a = self.or()?;
        if self.eat(&["→", "->", "implies"]) {
            Some(imp(a, self.implies()?))
        } else {
            Some(a)
        }
    }
    fn or(&mut self) -> Option<Formula> {
        let mut v = vec![self.and()?];
        while self.eat(&["∨", "|", "||", "or"]) {
            v.push(self.and()?);
        }
        Some(if v.len() == 1 {
            v.remove(0)
        } else {
            Formula::Or(v)
        })
    }
    fn and(&mut self) -> Option<Formula> {
        let mut v = vec![self.unary()?];
        while self.eat(&["∧", "&", "and"]) {
            v.push(self.unary()?);
        }
        Some(if v.len() == 1 {
            v.remove(0)
        } else {
            Formula::And(v)
        })
    }
    fn term(&self, n: &str) -> Term {
        if self.bound.iter().any(|b| b == n) {
            var(n)
        } else {
            cst(n)
        }
    }
    fn unary(&mut self) -> Option<Formula> {
        let t = self.peek()?;
        self.pos += 1;
        match t {
            "¬" | "~" | "not" => Some(not(self.unary()?)),
            "(" => {
                let f = self.formula()?;
                self.eat(&[")"]).then_some(f)
            }
            "⊤" => Some(Formula::True),
            "false" => Some(Formula::False),
            // A key followed by '=' is a value atom; a key with '/' is one only there.
            "p" | "q" | "1" | "2.0" | "k/x" | "\"v\"" if self.eat(&["="]) => {
                self.value_atom(t.trim_matches('"'))
            }
            // A name directly followed by '(' is a predicate atom, spaces or not.
            "p" | "q" | "1" | "\"v\"" if self.eat(&["("]) => {
                let t = t.trim_matches('"');
                if self.eat(&[")"]) {
                    return Some(pred(t, vec![]));
                }
                let arg = self
                    .peek()
                    .filter(|a| ["p", "q", "1", "\"v\""].contains(a))?;
                self.pos += 1;
                let arg = match arg {
                    "\"v\"" => cst("v"),
                    a => self.term(a),
                };
                self.eat(&[")"]).then(|| pred(t, vec![arg]))
            }
            "p" | "q" | "1" => Some(prop(t)),
            "\"v\"" => Some(Formula::Atom(Atom::Quoted("v".into()))),
            "P(x)" => Some(pred("P", vec![self.term("x")])),
            "P(a, y)" => Some(pred("P", vec![self.term("a"), self.term("y")])),
            "∀x." | "∃y." | "forall x, y." => {
                let vars: Vec<String> = match t {
                    "∀x." => vec!["x".into()],
                    "∃y." => vec!["y".into()],
                    _ => vec!["x".into(), "y".into()],
                };
                let len = self.bound.len();
                self.bound.extend(vars.iter().cloned());
                let body = self.formula();
                self.bound.truncate(len);
                let body = Box::new(body?);
                Some(if t == "∃y." {
                    Formula::Exists(vars, body)
                } else {
                    Formula::Forall(vars, body)
                })
            }
            _ => None,
        }
    }
}

impl Rd<'_> {
    /// The value after '=' and the unit after it: a name or quoted text that is no keyword.
    fn value_atom(&mut self, key: &str) -> Option<Formula> {
        let value = match self.peek()? {
            "1" => num("1"),
            "2.0" => num("2"),
            "\"v\"" => s("v"),
            "false" => Scalar::Json("false".into()),
            _ => return None,
        };
        self.pos += 1;
        let unit = match self.peek() {
            Some(u @ ("p" | "q" | "1")) => Some(u),
            Some("\"v\"") => Some("v"),
            // A name with more after it: the unit is its first part and the rest is an error.
            Some("P(x)" | "P(a, y)" | "k/x" | "2.0") => return None,
            _ => None,
        };
        if unit.is_some() {
            self.pos += 1;
        }
        Some(val(key, value, unit))
    }
}

fn reference_parse(toks: &[&str]) -> Option<Formula> {
    let mut rd = Rd {
        toks: toks.to_vec(),
        pos: 0,
        bound: Vec::new(),
    };
    let f = rd.formula()?;
    (rd.pos == toks.len()).then_some(f)
}

/// Writes a random well-formed token sequence by walking the grammar, driven by a tape of
/// random numbers (an exhausted tape always takes the shortest way out).
struct Gen<'t> {
    tape: &'t [u32],
    pos: usize,
    out: Vec<&'static str>,
}

impl Gen<'_> {
    fn pick(&mut self, n: u32) -> u32 {
        let v = self.tape.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v % n
    }
    fn choose(&mut self, alts: &[&'static str]) {
        let i = self.pick(alts.len() as u32) as usize;
        self.out.push(alts[i]);
    }
    fn formula(&mut self, d: usize) {
        self.implies(d);
        if d > 0 && self.pick(5) == 1 {
            self.choose(&["↔", "<->", "iff"]);
            self.formula(d - 1);
        }
    }
    fn implies(&mut self, d: usize) {
        self.or(d);
        if d > 0 && self.pick(4) == 1 {
            self.choose(&["→", "->", "implies"]);
            self.implies(d - 1);
        }
    }
    fn or(&mut self, d: usize) {
        self.and(d);
        while d > 0 && self.pick(3) == 1 {
            self.choose(&["∨", "|", "||", "or"]);
            self.and(d - 1);
        }
    }
    fn and(&mut self, d: usize) {
        self.unary(d);
        while d > 0 && self.pick(3) == 1 {
            self.choose(&["∧", "&", "and"]);
            self.unary(d - 1);
        }
    }
    fn unary(&mut self, d: usize) {
        match if d == 0 { 0 } else { self.pick(8) } {
            1 => {
                self.choose(&["¬", "~", "not"]);
                self.unary(d - 1);
            }
            2 | 3 => {
                self.out.push("(");
                self.formula(d - 1);
                self.out.push(")");
            }
            4 => {
                self.choose(&["∀x.", "∃y.", "forall x, y."]);
                self.formula(d - 1);
            }
            5 => {
                self.choose(&["p", "k/x", "\"v\"", "2.0"]);
                self.out.push("=");
                self.choose(&["1", "2.0", "\"v\"", "false"]);
                if self.pick(2) == 1 {
                    self.choose(&["q", "\"v\""]);
                }
            }
            _ => self.choose(&["p", "q", "P(x)", "P(a, y)", "⊤", "false", "1", "\"v\""]),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn agrees_with_recursive_descent(
        tape in prop::collection::vec(any::<u32>(), 0..80),
        mutation in 0u8..4,
        at in any::<usize>(),
        tok in 0..TOKENS.len(),
    ) {
        let mut generator = Gen { tape: &tape, pos: 0, out: Vec::new() };
        generator.formula(5);
        let mut toks = generator.out;
        // A quarter of the inputs stay well formed; the rest get one token deleted, inserted
        // or replaced, which is where error handling differs if it differs at all.
        let i = at % toks.len();
        match mutation {
            1 => { toks.remove(i); }
            2 => toks.insert(i, TOKENS[tok]),
            3 => toks[i] = TOKENS[tok],
            _ => {}
        }
        let text = toks.join(" ");
        let ours = parse(&text);
        let reference = reference_parse(&toks);
        if mutation == 0 {
            prop_assert!(reference.is_some(), "generator wrote an invalid formula: {}", text);
        }
        match (&ours, &reference) {
            (Ok(a), Some(b)) => prop_assert_eq!(a, b, "{}", text),
            (Err(e), None) => {
                prop_assert!(e.column >= 1 && e.column <= text.chars().count() + 1, "{}", text)
            }
            _ => prop_assert!(false, "{}: ours {:?}, reference {:?}", text, ours, reference),
        }
    }
}

#[test]
fn differential_finds_real_structures() {
    // Guard against a vacuous differential test: the vocabulary must produce accepted inputs
    // exercising quantifier scope and flattening.
    let toks = ["∀x.", "P(x)", "∧", "q", "∧", "p", "→", "(", "P(a, y)", ")"];
    let f = reference_parse(&toks);
    assert!(f.is_some());
    assert_eq!(parse(&toks.join(" ")).ok(), f);
}

// ---------------------------------------------------------------------------------------
// Grounding.

mod grounding {
    use super::*;
    use doxascope::logic::ground::{
        DEFAULT_INSTANCE_CAP, GroundError, atoms, constants, estimate_ground_size,
        estimate_instances, eval, ground, has_quantifier,
    };
    use std::collections::{BTreeSet, HashMap};
    use std::hash::{Hash, Hasher};

    fn dom(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn g(s: &str, domain: &[&str]) -> Formula {
        match ground(&p(s), &dom(domain), DEFAULT_INSTANCE_CAP) {
            Ok(f) => f,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn quantifiers_expand_in_order() {
        assert_eq!(
            g("∀x. P(x) → Q(x, c)", &["a", "b"]),
            p("(P(a) → Q(a, c)) ∧ (P(b) → Q(b, c))")
        );
        assert_eq!(
            g("exists x, y. R(x, y)", &["a", "b"]),
            p("R(a, a) ∨ R(a, b) ∨ R(b, a) ∨ R(b, b)")
        );
        // Nested and shadowing: the inner x wins.
        assert_eq!(
            g("∀x. ∃x. P(x)", &["a", "b"]),
            p("(P(a) ∨ P(b)) ∧ (P(a) ∨ P(b))")
        );
        // One constant: the instance itself; no constant: the anonymous individual `_`
        // (a first-order domain is never empty).
        assert_eq!(g("∀x. P(x) ∧ q", &["a"]), p("P(a) ∧ q"));
        assert_eq!(g("∀x. P(x)", &[]), p("P(_)"));
        assert_eq!(g("∃x. P(x)", &[]), p("P(_)"));
        assert_eq!(g("p ∧ ¬(∃x. P(x))", &[]), p("p ∧ ¬P(_)"));
        // Without quantifiers grounding is the identity.
        assert_eq!(
            g("Older(alice, bob) ∨ q", &["z"]),
            p("Older(alice, bob) ∨ q")
        );
    }

    #[test]
    fn helpers_collect_domain_and_atoms() {
        let f = p(r#"∀x. Older(x, bob) ∧ Lives(alice, "New York") ∨ q"#);
        let mut cs = BTreeSet::new();
        constants(&f, &mut cs);
        assert_eq!(cs, ["New York", "alice", "bob"].map(String::from).into());
        assert!(has_quantifier(&f));
        assert!(!has_quantifier(&p("a ∧ ¬(b → P(c))")));
        let grounded = ground(&f, &Vec::from_iter(cs), 100).expect("small");
        assert!(!has_quantifier(&grounded));
        let mut ats = BTreeSet::new();
        atoms(&grounded, &mut ats);
        // Older(·, bob) for 3 constants, Lives(alice, New York), q.
        assert_eq!(ats.len(), 5);
        assert!(ats.contains(&Atom::Prop("q".into())));
    }

    #[test]
    fn estimate_counts_nested_blocks() {
        let f = p("∀x. ∃y. P(x, y) ∧ ∀z. Q(z)");
        // x: 10, y: 10·10, z: 10·10·10 (z's block sits inside y's body).
        assert_eq!(estimate_instances(&f, 10), 10 + 100 + 1000);
        assert_eq!(estimate_instances(&f, 0), 0);
        assert_eq!(estimate_instances(&p("p ∧ q"), 1000), 0);
        // Saturates instead of overflowing.
        let wide = p("∀a, b, c, d, e, f, g, h, i, j. P(a, b, c, d, e, f, g, h, i, j)");
        assert_eq!(estimate_instances(&wide, usize::MAX), u128::MAX);
        assert_eq!(estimate_ground_size(&wide, usize::MAX), u128::MAX);
    }

    #[test]
    fn oversized_groundings_are_refused_before_expanding() {
        // Ten variables over 100 constants: 10^20 instances.
        let f = p("∀a, b, c, d, e, f, g, h, i, j. P(a, b, c, d, e, f, g, h, i, j)");
        let domain: Vec<String> = (0..100).map(|i| format!("c{i}")).collect();
        let e = ground(&f, &domain, DEFAULT_INSTANCE_CAP).expect_err("refused");
        assert_eq!(
            e,
            GroundError::TooManyInstances {
                estimate: 10u128.pow(20),
                cap: DEFAULT_INSTANCE_CAP,
                domain_size: 100
            }
        );
        assert!(
            e.to_string()
                .contains("grounding too large: ≈10^20 instances"),
            "{e}"
        );
        // The research notes' example: 4 variables over 1,000 constants.
        let f4 = p("∀x, y, z, w. P(x, y, z, w)");
        let d1000: Vec<String> = (0..1000).map(|i| format!("c{i}")).collect();
        let e = ground(&f4, &d1000, DEFAULT_INSTANCE_CAP).expect_err("refused");
        assert!(e.to_string().contains("≈10^12"), "{e}");
        // Exactly at the cap is allowed, one over is not.
        let f1 = p("∀x. P(x)");
        assert!(ground(&f1, &d1000, 1000).is_ok());
        assert!(matches!(
            ground(&f1, &d1000, 999),
            Err(GroundError::TooManyInstances { estimate: 1000, .. })
        ));
        // Few instances of a big body: refused by the size guard.
        let chain = (0..200)
            .map(|i| format!("P(x, a{i})"))
            .collect::<Vec<_>>()
            .join(" ∧ ");
        let big = p(&format!("∀x. {chain}"));
        let d: Vec<String> = (0..60_000).map(|i| format!("c{i}")).collect();
        let e = ground(&big, &d, DEFAULT_INSTANCE_CAP).expect_err("too large");
        assert!(matches!(e, GroundError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn hand_built_deep_trees_are_refused_not_overflowed() {
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut f = pred("P", vec![var("x")]);
                for _ in 0..200_000 {
                    f = not(f);
                }
                f = Formula::Forall(vec!["x".into()], Box::new(f));
                let e = ground(&f, &dom(&["a"]), 10).expect_err("too deep");
                assert!(matches!(e, GroundError::TooDeep { depth: 200_001 }));
                // The other helpers are iterative.
                assert!(has_quantifier(&f));
                let mut cs = BTreeSet::new();
                constants(&f, &mut cs);
                assert!(cs.is_empty());
                // An even number of negations.
                assert!(eval(&f, &|_| true));
                assert!(!eval(&not(f), &|_| true));
            })
            .expect("spawn");
        handle.join().expect("no overflow");
    }

    // Oracle 1: textbook substitution, from the outside in.
    fn subst(f: &Formula, v: &str, c: &str) -> Formula {
        match f {
            Formula::Atom(Atom::Pred(n, args)) => pred(
                n,
                args.iter()
                    .map(|t| match t {
                        Term::Var(x) if x == v => cst(c),
                        t => t.clone(),
                    })
                    .collect(),
            ),
            Formula::Not(g) => not(subst(g, v, c)),
            Formula::And(gs) => Formula::And(gs.iter().map(|g| subst(g, v, c)).collect()),
            Formula::Or(gs) => Formula::Or(gs.iter().map(|g| subst(g, v, c)).collect()),
            Formula::Implies(a, b) => imp(subst(a, v, c), subst(b, v, c)),
            Formula::Iff(a, b) => iff(subst(a, v, c), subst(b, v, c)),
            Formula::Forall(vs, _) | Formula::Exists(vs, _) if vs.iter().any(|x| x == v) => {
                f.clone()
            }
            Formula::Forall(vs, b) => Formula::Forall(vs.clone(), Box::new(subst(b, v, c))),
            Formula::Exists(vs, b) => Formula::Exists(vs.clone(), Box::new(subst(b, v, c))),
            other => other.clone(),
        }
    }

    fn tuples(domain: &[String], k: usize) -> Vec<Vec<String>> {
        let mut out = vec![vec![]];
        for _ in 0..k {
            out = out
                .into_iter()
                .flat_map(|t| {
                    domain.iter().map(move |c| {
                        let mut t = t.clone();
                        t.push(c.clone());
                        t
                    })
                })
                .collect();
        }
        out
    }

    fn oracle_ground(f: &Formula, domain: &[String], count: &mut u128) -> Formula {
        match f {
            Formula::Not(g) => not(oracle_ground(g, domain, count)),
            Formula::And(gs) => {
                Formula::And(gs.iter().map(|g| oracle_ground(g, domain, count)).collect())
            }
            Formula::Or(gs) => {
                Formula::Or(gs.iter().map(|g| oracle_ground(g, domain, count)).collect())
            }
            Formula::Implies(a, b) => imp(
                oracle_ground(a, domain, count),
                oracle_ground(b, domain, count),
            ),
            Formula::Iff(a, b) => iff(
                oracle_ground(a, domain, count),
                oracle_ground(b, domain, count),
            ),
            Formula::Forall(vs, body) | Formula::Exists(vs, body) => {
                let forall = matches!(f, Formula::Forall(..));
                let mut inst: Vec<Formula> = tuples(domain, vs.len())
                    .into_iter()
                    .map(|t| {
                        *count += 1;
                        let mut b = (**body).clone();
                        for (v, c) in vs.iter().zip(&t) {
                            b = subst(&b, v, c);
                        }
                        oracle_ground(&b, domain, count)
                    })
                    .collect();
                match (inst.len(), forall) {
                    (0, true) => Formula::True,
                    (0, false) => Formula::False,
                    (1, _) => inst.remove(0),
                    (_, true) => Formula::And(inst),
                    (_, false) => Formula::Or(inst),
                }
            }
            other => other.clone(),
        }
    }

    // Oracle 2: direct first-order evaluation over the domain.
    fn eval_fo(
        f: &Formula,
        domain: &[String],
        env: &mut HashMap<String, String>,
        truth: &dyn Fn(&Atom) -> bool,
    ) -> bool {
        match f {
            Formula::True => true,
            Formula::False => false,
            Formula::Atom(Atom::Pred(n, args)) => truth(&Atom::Pred(
                n.clone(),
                args.iter()
                    .map(|t| match t {
                        Term::Var(v) => match env.get(v) {
                            Some(c) => cst(c),
                            None => t.clone(),
                        },
                        t => t.clone(),
                    })
                    .collect(),
            )),
            Formula::Atom(a) => truth(a),
            Formula::Not(g) => !eval_fo(g, domain, env, truth),
            Formula::And(gs) => gs.iter().all(|g| eval_fo(g, domain, env, truth)),
            Formula::Or(gs) => gs.iter().any(|g| eval_fo(g, domain, env, truth)),
            Formula::Implies(a, b) => {
                !eval_fo(a, domain, env, truth) || eval_fo(b, domain, env, truth)
            }
            Formula::Iff(a, b) => eval_fo(a, domain, env, truth) == eval_fo(b, domain, env, truth),
            Formula::Forall(vs, b) | Formula::Exists(vs, b) => {
                let forall = matches!(f, Formula::Forall(..));
                let mut results = tuples(domain, vs.len()).into_iter().map(|t| {
                    let saved = env.clone();
                    for (v, c) in vs.iter().zip(t) {
                        env.insert(v.clone(), c);
                    }
                    let r = eval_fo(b, domain, env, truth);
                    *env = saved;
                    r
                });
                if forall {
                    results.all(|r| r)
                } else {
                    results.any(|r| r)
                }
            }
        }
    }

    fn domain_strategy() -> impl Strategy<Value = Vec<String>> {
        prop::sample::subsequence(vec!["a", "b", "c", "x"], 0..=3)
            .prop_map(|v| v.into_iter().map(String::from).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn ground_matches_substitution_oracle(
            f in formula_strategy(),
            domain in domain_strategy(),
            seed in any::<u64>(),
        ) {
            // `ground` reads an empty domain as the anonymous individual.
            let given = domain;
            let domain = if given.is_empty() {
                vec![doxascope::logic::ground::ANONYMOUS.to_string()]
            } else {
                given.clone()
            };
            let mut count = 0u128;
            let expected = oracle_ground(&f, &domain, &mut count);
            let estimate = estimate_instances(&f, domain.len());
            prop_assert_eq!(estimate, count);
            let grounded = ground(&f, &given, u64::MAX).expect("small");
            prop_assert_eq!(&grounded, &expected);
            prop_assert_eq!(estimate_ground_size(&f, domain.len()), grounded.size() as u128);
            prop_assert!(!has_quantifier(&grounded));
            // A cap one below the estimate refuses.
            if estimate > 0 {
                let refused = ground(&f, &given, (estimate - 1) as u64);
                prop_assert!(
                    matches!(refused, Err(GroundError::TooManyInstances { .. })),
                    "cap not enforced"
                );
            }
            // Semantics: the ground formula evaluates like the quantified one.
            let truth = move |a: &Atom| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                seed.hash(&mut h);
                a.hash(&mut h);
                h.finish() % 2 == 0
            };
            let direct = eval_fo(&f, &domain, &mut HashMap::new(), &truth);
            prop_assert_eq!(eval(&grounded, &truth), direct);
        }
    }

    #[test]
    fn eval_truth_tables() {
        let t = |s: &str, truths: &[&str]| {
            let f = p(s);
            eval(&f, &|a: &Atom| match a {
                Atom::Prop(n) => truths.contains(&n.as_str()),
                _ => false,
            })
        };
        assert!(t("a → b", &[]));
        assert!(!t("a → b", &["a"]));
        assert!(t("a ↔ b", &["a", "b"]));
        assert!(!t("a ↔ b", &["b"]));
        assert!(t("¬a ∧ (b ∨ c)", &["c"]));
        assert!(!t("a ∧ b ∧ c", &["a", "b"]));
        assert!(t("⊤ ∧ ¬⊥", &[]));
        assert!(eval(&Formula::And(vec![]), &|_| false));
        assert!(!eval(&Formula::Or(vec![]), &|_| true));
    }
}

// ---------------------------------------------------------------------------------------
// The sample traces (sample-traces/, specified in docs/samples.md).

fn sample_formulas() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("sample-traces/ exists")
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    // broken.jsonl is malformed on purpose (invalid UTF-8 among other things): the reader's
    // tests cover it.
    for path in files.into_iter().filter(|p| !p.ends_with("broken.jsonl")) {
        let text = std::fs::read_to_string(&path).expect("readable sample");
        for (n, line) in text.lines().enumerate() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            for key in ["formula", "formulas", "asserts", "rules"] {
                let items = match v.get(key) {
                    Some(serde_json::Value::Array(a)) => a.clone(),
                    Some(s) => vec![s.clone()],
                    None => vec![],
                };
                for item in items {
                    if let serde_json::Value::String(s) = item {
                        out.push((format!("{}:{}", path.display(), n + 1), s));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_sample_formula_parses_and_round_trips() {
    let formulas = sample_formulas();
    assert!(formulas.len() > 50, "samples found: {}", formulas.len());
    for (at, s) in formulas {
        let f = match parse(&s) {
            Ok(f) => f,
            Err(e) => panic!("{at}: {s:?}: {e}"),
        };
        assert_eq!(p(&f.to_string()), f, "{at}");
        assert_eq!(p(&normalized(&f)), f, "{at}");
    }
}

#[test]
fn sample_export_uses_the_unicode_printer() {
    // docs/samples.md, `export dns-troubleshooting.jsonl --at 25 --format prompt`.
    let cases = [
        (
            "!Reachable(user, example_com)",
            "¬Reachable(user, example_com)",
        ),
        (
            "!Reachable(user, example_com) -> DNSFail(example_com) | LinkDown(user)",
            "¬Reachable(user, example_com) → DNSFail(example_com) ∨ LinkDown(user)",
        ),
        (
            "ReachableByIp(user) -> !LinkDown(user)",
            "ReachableByIp(user) → ¬LinkDown(user)",
        ),
        (
            "DNSFail(example_com) & !LinkDown(user)",
            "DNSFail(example_com) ∧ ¬LinkDown(user)",
        ),
        (
            "ReachableByIp(user) and not ResolvesNames(user)",
            "ReachableByIp(user) ∧ ¬ResolvesNames(user)",
        ),
    ];
    for (input, shown) in cases {
        assert_eq!(p(input).to_string(), shown);
    }
    // docs/samples.md: the transitivity rule has 27 instances over alice, bob, carol.
    let rule = p("forall x, y, z. Older(x, y) & Older(y, z) -> Older(x, z)");
    assert_eq!(doxascope::logic::ground::estimate_instances(&rule, 3), 27);
}

/// Witness names start with U+FDD0 (issue 27): no formula can write one, escaped or not, so
/// no user constant is ever taken for a witness.
#[test]
fn witness_characters_cannot_be_written() {
    for text in [
        r#"P("\u{fdd0}x")"#,
        r#"P("a\u{FDEF}")"#,
        "P(\"\u{fdd0}x\")",
        r#""\u{fdd0}""#,
    ] {
        let e = parse(text).expect_err(text);
        assert!(e.column >= 1, "{text}: {e:?}");
    }
    // The neighbours are ordinary characters.
    assert!(parse(r#"P("\u{fdcf}")"#).is_ok());
    assert!(parse(r#"P("\u{fdf0}")"#).is_ok());
}
