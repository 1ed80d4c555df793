//! Writes a large mixed trace for benchmarks and load tests.
//!
//! ```sh
//! cargo run --release --example gentrace -- --events 1000000 --out /tmp/mixed.jsonl --seed 7
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use doxascope::trace::generate::{GenConfig, write_mixed};

/// Generate a deterministic mixed doxascope trace (all kinds, several sessions).
#[derive(Parser)]
struct Args {
    /// Number of events (lines) to write.
    #[arg(long)]
    events: u64,
    /// Output file.
    #[arg(long)]
    out: PathBuf,
    /// Random seed: the same seed gives the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of interleaved sessions.
    #[arg(long, default_value_t = 8)]
    sessions: u32,
    /// Number of propositional atoms in formulas.
    #[arg(long, default_value_t = 300)]
    atoms: u32,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let cfg = GenConfig {
        events: args.events,
        seed: args.seed,
        sessions: args.sessions,
        atoms: args.atoms,
    };
    let result = File::create(&args.out).and_then(|f| write_mixed(BufWriter::new(f), &cfg));
    match result {
        Ok(bytes) => {
            eprintln!(
                "wrote {} events, {bytes} bytes to {}",
                args.events,
                args.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gentrace: {}: {e}", args.out.display());
            ExitCode::from(2)
        }
    }
}
