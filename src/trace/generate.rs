//! Deterministic generator of large mixed traces, for benchmarks and load tests.
//!
//! The output is a v1 trace with every kind in roughly the proportions a real agent run shows
//! (mostly `announce`, `verify`, `thought` and dialogue turns; few plans and reviews), several
//! interleaved sessions, increasing `seq` and `ts` per session, occasional unknown kinds and
//! unknown fields, and formulas in the contract §3 syntax (ASCII and Unicode connectives) over
//! a few hundred atoms. The same seed always gives the same bytes.
//!
//! Lines are written with `write!` rather than through [`Event`](super::Event) serialization,
//! so the generator is an independent writer for testing the reader.

use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenConfig {
    /// Number of lines (events) to write.
    pub events: u64,
    /// The random seed.
    pub seed: u64,
    /// Number of interleaved sessions.
    pub sessions: u32,
    /// Number of propositional atoms formulas range over.
    pub atoms: u32,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            events: 1000,
            seed: 1,
            sessions: 8,
            atoms: 300,
        }
    }
}

impl GenConfig {
    /// The trace [`write_mixed`] writes for this configuration, in memory (what tests and
    /// benchmarks load).
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a `Vec` cannot fail.
        let _ = write_mixed(&mut out, self);
        out
    }
}

/// SplitMix64: tiny, fast and good enough for synthetic data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The kinds in generation order with their weights (per mille). `session` is written once at
/// the start of each session and is not drawn.
const WEIGHTS: &[(&str, u64)] = &[
    ("announce", 230),
    ("verify", 140),
    ("thought", 100),
    ("query", 60),
    ("answer", 30),
    ("retract", 30),
    ("revise", 15),
    ("turn", 90),
    ("belief", 60),
    ("step", 60),
    ("postcondition", 40),
    ("log", 70),
    ("schema_belief", 10),
    ("desire", 5),
    ("intention", 5),
    ("plan", 10),
    ("satisfaction", 5),
    ("review", 5),
    ("plan_stats", 20),
    ("world", 3),
    ("score", 8),
    ("gate", 4),
    ("tool_call", 8),
];

struct SessionGen {
    name: String,
    seq: u64,
    millis: u64,
    beliefs: u64,
}

/// Writes a mixed trace; returns the number of bytes written.
pub fn write_mixed<W: Write>(mut w: W, cfg: &GenConfig) -> io::Result<u64> {
    let total: u64 = WEIGHTS.iter().map(|(_, wt)| wt).sum();
    let mut rng = Rng(cfg.seed);
    let atoms = cfg.atoms.max(2) as u64;
    let nsess = cfg.sessions.max(1) as u64;
    let mut sessions: Vec<Option<SessionGen>> = (0..nsess).map(|_| None).collect();
    let mut line = String::with_capacity(512);
    let mut written = 0u64;
    // 2026-01-01T00:00:00Z in milliseconds.
    const START_MS: u64 = 1_767_225_600_000;
    for _ in 0..cfg.events {
        line.clear();
        let si = rng.below(nsess) as usize;
        let fresh = sessions[si].is_none();
        let s = sessions[si].get_or_insert_with(|| SessionGen {
            name: format!("gen-{si}"),
            seq: 0,
            millis: START_MS + si as u64 * 997,
            beliefs: 0,
        });
        s.seq += 1;
        s.millis += 1 + rng.below(2000);
        let kind = if fresh {
            "session"
        } else {
            let mut r = rng.below(total);
            let mut chosen = WEIGHTS[0].0;
            for (k, wt) in WEIGHTS {
                if r < *wt {
                    chosen = k;
                    break;
                }
                r -= wt;
            }
            chosen
        };
        line.push_str("{\"kind\":\"");
        line.push_str(kind);
        line.push('"');
        push_fmt(&mut line, format_args!(",\"seq\":{}", s.seq));
        if rng.chance(900) {
            line.push_str(",\"ts\":\"");
            push_rfc3339(&mut line, s.millis);
            line.push('"');
        } else {
            push_fmt(
                &mut line,
                format_args!(",\"ts\":{}.{:03}", s.millis / 1000, s.millis % 1000),
            );
        }
        push_fmt(&mut line, format_args!(",\"session\":\"{}\"", s.name));
        let b = &mut s.beliefs;
        body(&mut line, kind, &mut rng, atoms, b);
        if rng.chance(20) {
            line.push_str(",\"x_trace_id\":\"");
            push_fmt(&mut line, format_args!("{:016x}", rng.next()));
            line.push('"');
        }
        line.push_str("}\n");
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    w.flush()?;
    Ok(written)
}

fn push_fmt(line: &mut String, args: std::fmt::Arguments<'_>) {
    use std::fmt::Write as _;
    // Writing into a String cannot fail.
    let _ = line.write_fmt(args);
}

fn atom(rng: &mut Rng, atoms: u64) -> String {
    format!("p{}", rng.below(atoms))
}

fn literal(rng: &mut Rng, atoms: u64, unicode: bool) -> String {
    let a = atom(rng, atoms);
    if rng.chance(300) {
        format!("{}{a}", if unicode { "¬" } else { "!" })
    } else {
        a
    }
}

/// A random formula in contract §3 syntax.
fn formula(rng: &mut Rng, atoms: u64) -> String {
    let u = rng.chance(250);
    let (and, or, imp, iff) = if u {
        ("∧", "∨", "→", "↔")
    } else {
        ("&", "|", "->", "<->")
    };
    match rng.below(6) {
        0 | 1 => literal(rng, atoms, u),
        2 => format!(
            "{} {and} {} {imp} {}",
            literal(rng, atoms, u),
            literal(rng, atoms, u),
            atom(rng, atoms)
        ),
        3 => format!(
            "{} {or} {} {or} {}",
            literal(rng, atoms, u),
            literal(rng, atoms, u),
            literal(rng, atoms, u)
        ),
        4 => format!(
            "({} {and} {}) {iff} {}",
            atom(rng, atoms),
            literal(rng, atoms, u),
            atom(rng, atoms)
        ),
        _ => format!("{} {imp} {}", atom(rng, atoms), literal(rng, atoms, u)),
    }
}

fn body(line: &mut String, kind: &str, rng: &mut Rng, atoms: u64, beliefs: &mut u64) {
    let f = formula(rng, atoms);
    match kind {
        "session" => line.push_str(
            ",\"agent\":\"gen-agent\",\"model\":\"synthetic-1\",\"meta\":{\"generator\":\"gentrace\"}",
        ),
        "announce" => {
            *beliefs += 1;
            let src = rng.pick(&["user", "inference", "tool:ping_test", "tool:search"]);
            push_fmt(
                line,
                format_args!(",\"id\":\"b{}\",\"formula\":\"{f}\",\"source\":\"{src}\"", beliefs),
            );
            if rng.chance(200) {
                let role = rng.pick(&["rule", "norm", "assumption", "fact"]);
                push_fmt(line, format_args!(",\"role\":\"{role}\""));
            }
            if rng.chance(500) {
                push_fmt(
                    line,
                    format_args!(",\"confidence\":0.{:02}", 50 + rng.below(50)),
                );
            }
            if *beliefs > 2 && rng.chance(400) {
                push_fmt(
                    line,
                    format_args!(
                        ",\"because\":[\"b{}\",\"b{}\"]",
                        1 + rng.below(*beliefs - 1),
                        1 + rng.below(*beliefs - 1)
                    ),
                );
            }
            if rng.chance(300) {
                line.push_str(",\"text\":\"The user said so \\\"explicitly\\\".\"");
            }
        }
        "verify" => {
            let outcome = rng.pick(&["newinfo", "entailed", "contradiction", "ungrounded"]);
            push_fmt(
                line,
                format_args!(",\"formula\":\"{f}\",\"outcome\":\"{outcome}\",\"method\":\"sat\""),
            );
            if *beliefs > 1 {
                push_fmt(
                    line,
                    format_args!(",\"because\":[\"b{}\"]", 1 + rng.below(*beliefs)),
                );
            }
        }
        "thought" => push_fmt(
            line,
            format_args!(
                ",\"text\":\"If {} holds then the next step follows — checking.\",\"asserts\":[\"{f}\"]",
                atom(rng, atoms)
            ),
        ),
        "query" => {
            let a = rng.pick(&["yes", "no", "unknown"]);
            push_fmt(line, format_args!(",\"formula\":\"{f}\",\"answer\":\"{a}\""));
        }
        "answer" => push_fmt(
            line,
            format_args!(",\"text\":\"The answer is yes.\",\"formula\":\"{f}\""),
        ),
        "gate" => push_fmt(
            line,
            format_args!(",\"id\":\"g{}\",\"formula\":\"{f}\"", rng.below(1000)),
        ),
        "retract" => {
            let by = rng.pick(&["agent", "revision", "user"]);
            push_fmt(
                line,
                format_args!(
                    ",\"target\":\"b{}\",\"reason\":\"contradicted by a newer observation\",\"by\":\"{by}\"",
                    1 + rng.below((*beliefs).max(1))
                ),
            );
        }
        "revise" => push_fmt(
            line,
            format_args!(
                ",\"trigger\":\"{f}\",\"retracted\":[\"b{}\"],\"policy\":\"greedy\"",
                1 + rng.below((*beliefs).max(1))
            ),
        ),
        "turn" => {
            let r = rng.pick(&["YES", "NO", "UNKNOWN"]);
            let a = atom(rng, atoms);
            push_fmt(
                line,
                format_args!(
                    ",\"question\":\"Is {a} true?\",\"reply\":\"{r}\",\"literal\":\"{a}\",\"truth\":{}",
                    rng.chance(500)
                ),
            );
        }
        "belief" => push_fmt(
            line,
            format_args!(
                ",\"name\":\"metric_{}\",\"value\":{},\"unit\":\"s\",\"source\":\"tool:search\"",
                rng.below(50),
                rng.below(100_000)
            ),
        ),
        "step" => {
            let st = rng.pick(&["dispatched", "done", "failed"]);
            push_fmt(
                line,
                format_args!(
                    ",\"plan\":\"P{}\",\"step\":\"S{}\",\"status\":\"{st}\",\"post_met\":{},\"summary\":\"step ran\"",
                    rng.below(4),
                    1 + rng.below(5),
                    rng.chance(800)
                ),
            );
            if st == "done" && rng.chance(300) {
                push_fmt(
                    line,
                    format_args!(
                        ",\"new_beliefs\":[{{\"name\":\"metric_{}\",\"value\":\"2:01:09\",\"source\":\"tool:search\"}}]",
                        rng.below(50)
                    ),
                );
            }
        }
        "postcondition" => push_fmt(
            line,
            format_args!(
                ",\"plan\":\"P{}\",\"step\":\"S{}\",\"tier\":{},\"ok\":{},\"program\":\"ground_belief(metric_{}) is known\"",
                rng.below(4),
                1 + rng.below(5),
                1 + rng.below(3),
                rng.chance(850),
                rng.below(50)
            ),
        ),
        "log" => {
            let level = rng.pick(&["debug", "info", "warn", "error"]);
            push_fmt(
                line,
                format_args!(",\"level\":\"{level}\",\"message\":\"tick {}\"", rng.below(1_000_000)),
            );
        }
        "schema_belief" => {
            line.push_str(",\"text\":\"Marathon times are given in h:mm:ss.\"");
        }
        "desire" => line.push_str(",\"text\":\"Answer the user's question accurately.\""),
        "intention" => push_fmt(
            line,
            format_args!(
                ",\"id\":\"I{}\",\"type\":\"answer_question\",\"goal\":\"compare two times\",\"satisfaction\":\"ground_belief(answer) is known\",\"open_parameters\":[\"runner\"]",
                rng.below(10)
            ),
        ),
        "plan" => push_fmt(
            line,
            format_args!(
                ",\"id\":\"P{}\",\"intention_type\":\"answer_question\",\"context_conditions\":[\"online\"],\"origin\":\"generated\",\"steps\":[{{\"id\":\"S1\",\"kind\":\"fetch\",\"description\":\"look it up\",\"deps\":[],\"post\":\"ground_belief(t) is known\"}},{{\"id\":\"S2\",\"kind\":\"compute\",\"deps\":[\"S1\"]}},{{\"id\":\"S3\",\"kind\":\"synthesize\",\"deps\":[\"S2\"]}}]",
                rng.below(4)
            ),
        ),
        "satisfaction" => push_fmt(
            line,
            format_args!(",\"intention\":\"I{}\",\"ok\":{}", rng.below(10), rng.chance(700)),
        ),
        "review" => line.push_str(
            ",\"decisions\":[{\"plan\":\"P0\",\"action\":\"keep\"},{\"plan\":\"P1\",\"action\":\"refine\",\"note\":\"S2 too coarse\"}]",
        ),
        "plan_stats" => {
            let used = 1 + rng.below(20);
            let ok = rng.below(used + 1);
            push_fmt(
                line,
                format_args!(
                    ",\"plan\":\"P{}\",\"use_count\":{used},\"success_count\":{ok},\"failure_count\":{}",
                    rng.below(4),
                    used - ok
                ),
            );
        }
        "world" => {
            line.push_str(",\"atoms\":[");
            for i in 0..8 {
                push_fmt(line, format_args!("{}\"p{i}\"", if i > 0 { "," } else { "" }));
            }
            push_fmt(
                line,
                format_args!("],\"rules\":[\"p0 & p1 -> p2\",\"p3 -> !p4\"],\"truth\":{{\"p0\":true,\"p1\":{},\"p2\":true}}", rng.chance(500)),
            );
        }
        "score" => {
            let value = match rng.below(3) {
                0 => format!("0.{:02}", rng.below(100)),
                1 => format!("\"{}\"", rng.pick(&["C", "I", "P"])),
                _ => rng.chance(600).to_string(),
            };
            push_fmt(
                line,
                format_args!(
                    ",\"name\":\"{}\",\"value\":{value},\"explanation\":\"graded against the reference\",\"source\":\"{}\"",
                    rng.pick(&["accuracy", "helpfulness", "correct"]),
                    rng.pick(&["code", "llm", "human"])
                ),
            );
        }
        // An unknown kind: kept by readers, counted, never fatal.
        _ => push_fmt(
            line,
            format_args!(",\"tool\":\"ping\",\"args\":{{\"host\":\"example.com\",\"count\":{}}}", rng.below(5)),
        ),
    }
}

/// Appends `millis` (since the epoch) as an RFC 3339 UTC date-time with milliseconds.
fn push_rfc3339(line: &mut String, millis: u64) {
    let secs = millis / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    push_fmt(
        line,
        format_args!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60,
            millis % 1000
        ),
    );
}

/// Howard Hinnant's inverse of days-from-civil.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::time::parse_rfc3339;

    #[test]
    fn rfc3339_output_parses_back() {
        for millis in [0u64, 951_782_400_123, 1_767_225_600_000, 4_102_444_799_999] {
            let mut s = String::new();
            push_rfc3339(&mut s, millis);
            assert_eq!(parse_rfc3339(&s), Some(millis as f64 / 1000.0), "{s}");
        }
    }
}
