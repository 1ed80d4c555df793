//! `doxascope demo`: the built-in belief-revision demo (contract §1, seed 003).
//!
//! The replies come from the bundled simulated agent, or with `--agent CMD` from an external
//! process ([`crate::demo::external`]), asked for every dialogue before the chosen mode runs
//! (so the TUI never waits on it).
//!
//! Three modes: `--headless --out FILE` writes the solver runs as a trace; `--eval` prints
//! the Table 1 comparison of baseline and solver; without either, the dialogue plays live.
//! Live play runs in the TUI when standard output is a terminal (space pauses, `.` steps,
//! `+`/`-` change the speed); otherwise it prints turn by turn to stdout at a readable pace
//! (`--speed`), rendered from the same events, through the same pacing [`Player`].

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::demo::eval::{evaluate, evaluate_dialogues, table_for};
use crate::demo::external::ExternalAgent;
use crate::demo::player::{MAX_SPEED, MIN_SPEED, Player};
use crate::demo::race::Race;
use crate::demo::run::Dialogue;
use crate::demo::{DemoConfig, DemoError, DemoEvents, Schedule, write_trace, write_trace_of};
use crate::logic::revise::Policy;
use crate::sanitize::sanitize;
use crate::trace::Event;

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// Arguments of `demo`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Question schedule: `random` or `stress` [default: stress; `--eval` without it runs
    /// both].
    #[arg(long, value_name = "random|stress", value_parser = parse_schedule)]
    schedule: Option<Schedule>,
    /// Random seed: the same seed gives the same worlds, questions, replies and revisions.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Turns per dialogue.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    turns: u64,
    /// The simulated agent's error rate X in [0, 1]; a question's slip probability is X times
    /// a weight that is higher for negated questions and for facts that follow from rules.
    /// Default 0.1; 0.3 for live play (the TUI or text) and `--race`, so that the first
    /// dialogue revises within its first minute.
    #[arg(long, value_name = "X", value_parser = parse_rate, conflicts_with = "agent")]
    error_rate: Option<f64>,
    /// Ask an external agent instead of the simulated one: CMD runs through `sh -c`, reads one
    /// JSON question per line on its stdin and writes one JSON reply per line on its stdout
    /// (`{"reply":"YES"}`; docs/demo.md).
    #[arg(long, value_name = "CMD")]
    agent: Option<String>,
    /// Seconds the external agent may take to reply to one question.
    #[arg(long, value_name = "SECS", default_value_t = 120.0, requires = "agent",
          value_parser = parse_timeout)]
    agent_timeout: f64,
    /// Revision policy of the solver-augmented run: greedy, greedy-paper (seed 003's
    /// Algorithm 1 exactly as written), recency, confidence, reject, flag.
    #[arg(long, value_name = "P", default_value = "greedy", value_parser = parse_policy)]
    policy: Policy,
    /// Race two policies side by side on the same dialogues (`greedy,recency`): the same
    /// seed, questions and replies through two agents, turn by turn in lockstep, then a
    /// comparison (with `--headless`: that text, written at once to `--out`).
    #[arg(long, value_name = "P1,P2", value_parser = parse_race,
          conflicts_with_all = ["eval", "policy"])]
    race: Option<[Policy; 2]>,
    /// Write the trace instead of playing (requires `--out`).
    #[arg(long, requires = "out", conflicts_with = "eval")]
    headless: bool,
    /// The trace file for `--headless` (`-` for standard output).
    #[arg(long, value_name = "FILE", requires = "headless")]
    out: Option<PathBuf>,
    /// Print baseline vs solver in the shape of seed 003's Table 1.
    #[arg(long)]
    eval: bool,
    /// Number of dialogues [default: 120 with `--eval`, otherwise 1].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    dialogues: Option<u64>,
    /// Live play speed factor (0.125 to 64; 1 is about two seconds per turn).
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = parse_speed)]
    speed: f64,
}

fn parse_schedule(s: &str) -> Result<Schedule, String> {
    Schedule::parse(s).ok_or_else(|| format!("expected `random` or `stress`, got {s:?}"))
}

fn parse_policy(s: &str) -> Result<Policy, String> {
    Policy::parse(s).ok_or_else(|| {
        format!(
            "expected one of greedy, greedy-paper, recency, confidence, reject, flag; got {s:?}"
        )
    })
}

fn parse_race(s: &str) -> Result<[Policy; 2], String> {
    match s.split(',').map(str::trim).collect::<Vec<_>>()[..] {
        [a, b] => Ok([parse_policy(a)?, parse_policy(b)?]),
        _ => Err(format!(
            "expected two policies, like greedy,recency; got {s:?}"
        )),
    }
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!("expected a number of seconds above 0, got {s:?}")),
    }
}

/// Scripts `n` dialogues of `cfg` with the external agent, telling stderr how far it got.
fn script_with_agent(
    cfg: &DemoConfig,
    n: usize,
    agent: &mut ExternalAgent,
    command: &str,
) -> Result<Vec<Dialogue>, DemoError> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(Dialogue::script_with(cfg, i, Some(command), &mut |ask| {
            agent.ask(ask)
        })?);
        eprintln!(
            "doxascope demo: the agent answered dialogue {} of {n} ({} schedule)",
            i + 1,
            cfg.schedule.as_str()
        );
    }
    Ok(out)
}

fn fail(e: &DemoError) -> i32 {
    // Standard error may be the terminal that went away: never panic on it.
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("doxascope demo: {e}\n"),
    );
    EXIT_PROBLEMS
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("expected a number between 0 and 1, got {s:?}")),
    }
}

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (MIN_SPEED..=MAX_SPEED).contains(&x) => Ok(x),
        _ => Err(format!(
            "expected a number between {MIN_SPEED} and {MAX_SPEED}, got {s:?}"
        )),
    }
}

/// The simulated agent's error rate when a demo plays live and `--error-rate` is not given:
/// at 0.1 the default dialogues never revise, and a live demo of belief revision should show
/// one early (the default shows its first at turn 7 of the first dialogue).
const LIVE_ERROR_RATE: f64 = 0.3;

/// Runs `demo` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    // A race is played even with `--headless` (it writes the same text at once), so both
    // print the same dialogue.
    let plays_live = !args.eval && (!args.headless || args.race.is_some());
    let cfg = DemoConfig {
        schedule: args.schedule.unwrap_or(Schedule::Stress),
        seed: args.seed,
        turns: args.turns as usize,
        error_rate: args.error_rate.unwrap_or(if plays_live {
            LIVE_ERROR_RATE
        } else {
            DemoConfig::default().error_rate
        }),
        policy: args.policy,
    };
    let mut agent = match &args.agent {
        Some(cmd) => match ExternalAgent::spawn(cmd, Duration::from_secs_f64(args.agent_timeout)) {
            Ok(a) => Some((a, cmd.as_str())),
            Err(e) => return fail(&e),
        },
        None => None,
    };
    if args.eval {
        let n = args.dialogues.unwrap_or(120) as usize;
        let schedules = match args.schedule {
            Some(s) => vec![s],
            None => vec![Schedule::Random, Schedule::Stress],
        };
        let mut evals = Vec::new();
        for s in schedules {
            let c = DemoConfig { schedule: s, ..cfg };
            let ev = match agent.as_mut() {
                Some((a, cmd)) => {
                    script_with_agent(&c, n, a, cmd).and_then(|ds| evaluate_dialogues(&c, &ds))
                }
                None => evaluate(&c, n),
            };
            match ev {
                Ok(e) => evals.push(e),
                Err(e) => return fail(&e),
            }
        }
        let unparsed = agent.as_ref().map_or(0, |(a, _)| a.unparsed());
        print!(
            "{}",
            table_for(&cfg, &evals, agent.as_ref().map(|(_, c)| *c), unparsed)
        );
        return EXIT_OK;
    }
    let n = args.dialogues.unwrap_or(1) as usize;
    let scripted = match agent.as_mut() {
        Some((a, cmd)) => match script_with_agent(&cfg, n, a, cmd) {
            Ok(ds) => Some(ds),
            Err(e) => return fail(&e),
        },
        None => None,
    };
    // Every reply is in: the agent can go.
    drop(agent);
    if let Some(policies) = args.race {
        let race = match scripted {
            Some(ds) => Race::from_dialogues(cfg, ds, policies),
            None => Race::new(cfg, n, policies),
        };
        return match race {
            Ok(r) => race_mode(args, r),
            Err(e) => fail(&e),
        };
    }
    if args.headless {
        return headless(&cfg, n, args.out.as_deref(), scripted.as_deref());
    }
    if io::stdout().is_terminal() {
        return tui(cfg, n, args.speed, scripted);
    }
    live(cfg, n, args.speed, scripted)
}

/// Plays a race: in the TUI (the first policy's run in the panes, both sides in the race
/// pane), as paced text, or with `--headless` as text written at once to `--out`.
fn race_mode(args: &Args, race: Race) -> i32 {
    let write = |w: &mut dyn Write, per_turn: Duration| match super::race::play(&race, w, per_turn)
    {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("doxascope demo: {e}");
            EXIT_PROBLEMS
        }
        _ => EXIT_OK,
    };
    if args.headless {
        let Some(path) = args.out.as_deref() else {
            eprintln!("doxascope demo: --headless needs --out FILE");
            return EXIT_USAGE;
        };
        if path.as_os_str() == "-" {
            return write(&mut io::stdout().lock(), Duration::ZERO);
        }
        return match File::create(path) {
            Ok(f) => write(&mut BufWriter::new(f), Duration::ZERO),
            Err(e) => {
                eprintln!(
                    "doxascope demo: cannot create {}: {e}",
                    sanitize(&path.to_string_lossy())
                );
                EXIT_USAGE
            }
        };
    }
    if io::stdout().is_terminal() {
        let config = DemoConfig {
            policy: race.policies[0],
            ..race.config
        };
        let scripted = Some(race.dialogues.iter().map(|d| d.dialogue.clone()).collect());
        let opts = crate::tui::Options {
            demo: Some(crate::tui::DemoOptions {
                config,
                dialogues: race.dialogues.len(),
                speed: args.speed,
                scripted,
            }),
            race: Some(race),
            ..crate::tui::Options::default()
        };
        super::config_warnings_to_stderr();
        return match crate::tui::run(opts) {
            Ok(()) => EXIT_OK,
            Err(e) => {
                let _ = writeln!(io::stderr(), "doxascope demo: {e}");
                EXIT_PROBLEMS
            }
        };
    }
    // About the pace of a turn of the single demo at speed 1.
    write(
        &mut io::stdout().lock(),
        Duration::from_secs_f64(2.0 / args.speed),
    )
}

/// Plays the demo in the TUI (pause, step and speed keys).
fn tui(config: DemoConfig, dialogues: usize, speed: f64, scripted: Option<Vec<Dialogue>>) -> i32 {
    super::config_warnings_to_stderr();
    let opts = crate::tui::Options {
        demo: Some(crate::tui::DemoOptions {
            config,
            dialogues,
            speed,
            scripted,
        }),
        ..crate::tui::Options::default()
    };
    match crate::tui::run(opts) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            // Standard error may be the terminal that went away: never panic on it.
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("doxascope demo: {e}\n"),
            );
            EXIT_PROBLEMS
        }
    }
}

fn headless(
    cfg: &DemoConfig,
    n: usize,
    out: Option<&std::path::Path>,
    scripted: Option<&[Dialogue]>,
) -> i32 {
    let Some(path) = out else {
        eprintln!("doxascope demo: --headless needs --out FILE");
        return EXIT_USAGE;
    };
    let shown = if path.as_os_str() == "-" {
        "standard output".to_string()
    } else {
        sanitize(&path.to_string_lossy())
    };
    let write = |w: &mut dyn Write| match scripted {
        Some(ds) => write_trace_of(cfg, ds, w),
        None => write_trace(cfg, n, w),
    };
    let result = if path.as_os_str() == "-" {
        write(&mut BufWriter::new(io::stdout().lock()))
    } else {
        match File::create(path) {
            Ok(f) => write(&mut BufWriter::new(f)),
            Err(e) => {
                eprintln!("doxascope demo: cannot create {shown}: {e}");
                return EXIT_USAGE;
            }
        }
    };
    match result {
        Ok(lines) => {
            eprintln!("doxascope demo: wrote {lines} events ({n} dialogue(s)) to {shown}");
            EXIT_OK
        }
        Err(e) => {
            // Standard error may be the terminal that went away: never panic on it.
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("doxascope demo: {e}\n"),
            );
            EXIT_PROBLEMS
        }
    }
}

fn live(cfg: DemoConfig, n: usize, speed: f64, scripted: Option<Vec<Dialogue>>) -> i32 {
    let events = match scripted {
        Some(ds) => DemoEvents::from_dialogues(cfg, ds),
        None => DemoEvents::new(cfg, n),
    };
    let mut player = Player::new(events);
    player.set_speed(speed, Instant::now());
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut text = TextView::default();
    loop {
        let now = Instant::now();
        for ev in player.poll(now) {
            if let Some(line) = text.render(&ev) {
                // A closed pipe (`| head`) ends the demo quietly.
                if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                    return EXIT_OK;
                }
            }
        }
        if player.is_finished(now) {
            // Say so: the last turn's lines alone do not tell a watcher nothing more comes.
            let _ = writeln!(out, "demo finished: every dialogue has been played")
                .and_then(|()| out.flush());
            return if text.errors > 0 {
                EXIT_PROBLEMS
            } else {
                EXIT_OK
            };
        }
        let wait = player.next_due(now).map_or(Duration::from_millis(50), |d| {
            d.saturating_duration_since(now)
        });
        std::thread::sleep(wait.min(Duration::from_millis(250)));
    }
}

/// Renders demo events as readable lines (from their JSON form, which is the contract).
#[derive(Default)]
struct TextView {
    turn: u64,
    errors: u64,
}

fn field<'a>(v: &'a Value, name: &str) -> &'a str {
    v.get(name).and_then(Value::as_str).unwrap_or("")
}

impl TextView {
    fn render(&mut self, ev: &Event) -> Option<String> {
        let v = serde_json::to_value(ev).ok()?;
        let line = match ev.kind_name() {
            "session" => {
                self.turn = 0;
                let m = v.get("meta").cloned().unwrap_or(Value::Null);
                format!(
                    "\n== dialogue {} · {} schedule · seed {} · error rate {} · policy {} ==",
                    m.get("dialogue").unwrap_or(&Value::Null),
                    m.get("schedule").and_then(Value::as_str).unwrap_or("?"),
                    m.get("seed").unwrap_or(&Value::Null),
                    m.get("error_rate").unwrap_or(&Value::Null),
                    m.get("policy").and_then(Value::as_str).unwrap_or("?"),
                )
            }
            "world" => {
                let list = |k: &str| -> Vec<String> {
                    v.get(k)
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let atoms = list("atoms");
                let truth = v.get("truth").and_then(Value::as_object);
                let shown: Vec<String> = atoms
                    .iter()
                    .map(
                        |a| match truth.and_then(|t| t.get(a)).and_then(Value::as_bool) {
                            Some(true) => format!("{a}=T"),
                            Some(false) => format!("{a}=F"),
                            None => format!("{a}=?"),
                        },
                    )
                    .collect();
                format!(
                    "world: {}   (truth by model checking; ? = the rules leave it open)\nrules and facts:",
                    shown.join(" ")
                )
            }
            "announce" if field(&v, "source") == "world" => format!(
                "  {:<4} {:<14} {}",
                field(&v, "id"),
                field(&v, "formula"),
                field(&v, "text")
            ),
            "turn" => {
                self.turn += 1;
                let reply = field(&v, "reply");
                let truth = match v.get("truth") {
                    Some(Value::Bool(true)) => "YES",
                    Some(Value::Bool(false)) => "NO",
                    Some(Value::String(s)) => s.as_str(),
                    _ => "?",
                };
                let mark = if reply == truth { "" } else { "   <- slip" };
                format!(
                    "\nturn {:>2}  {}\n          reply {reply:<7}  (correct: {truth}){mark}",
                    self.turn,
                    field(&v, "question")
                )
            }
            "verify" => format!(
                "          gate: {} is {}",
                field(&v, "formula"),
                field(&v, "outcome")
            ),
            "announce" => format!(
                "          commit {}: {}",
                field(&v, "id"),
                field(&v, "formula")
            ),
            "revise" => {
                let gone: Vec<&str> = v
                    .get("retracted")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if gone.is_empty() {
                    format!(
                        "          revise ({}): nothing retracted, Σ is now inconsistent",
                        field(&v, "policy")
                    )
                } else {
                    format!(
                        "          revise ({}): retract {}",
                        field(&v, "policy"),
                        gone.join(", ")
                    )
                }
            }
            "retract" => format!(
                "            - {}: {}",
                field(&v, "target"),
                field(&v, "reason")
            ),
            // A refused commitment belongs to its turn, under the gate's verdict.
            "log" if field(&v, "message").starts_with("refused ") => {
                format!("          {}", field(&v, "message"))
            }
            "log" => {
                if field(&v, "level") == "error" {
                    self.errors += 1;
                }
                format!("\n{}", field(&v, "message"))
            }
            _ => return None,
        };
        Some(sanitize_lines(&line))
    }
}

/// Sanitizes each line separately, keeping the line breaks this view puts in itself.
fn sanitize_lines(s: &str) -> String {
    s.split('\n').map(sanitize).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::DemoEvents;
    use crate::demo::player::base_delay;

    /// The default live demo, played at speed 1, shows a revision within its first minute.
    #[test]
    fn the_default_live_demo_revises_within_a_minute() {
        let cfg = DemoConfig {
            error_rate: LIVE_ERROR_RATE,
            ..DemoConfig::default()
        };
        let mut elapsed = Duration::ZERO;
        let mut revised = None;
        for ev in DemoEvents::new(cfg, 1) {
            elapsed += base_delay(&ev);
            if ev.kind_name() == "revise" {
                revised = Some(elapsed);
                break;
            }
        }
        let at = revised.expect("the default live dialogue revises");
        assert!(at < Duration::from_secs(60), "first revision after {at:?}");
    }
}
