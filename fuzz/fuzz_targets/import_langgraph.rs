//! Coverage-guided fuzzing of `import_langgraph` (see `tests/support/fuzz_targets.rs` for what it checks).
#![no_main]

#[path = "../../tests/support/fuzz_targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::import_langgraph(data));
