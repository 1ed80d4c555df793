// jemalloc, tuned in `.cargo/config.toml`: the audit of a long trace frees much of what
// its threads allocate while its sessions grow, and glibc's malloc kept those pages (the 10M
// audit held 1.80x the file with it, 1.28x with jemalloc, and ran 25% faster). Measured in
// docs/performance.md; the TUI's open of the same trace is as fast as with glibc.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    // The terminal guardian the TUI starts (see `tui::guardian`): not a command of its own.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == doxascope::tui::guardian::GUARD_ARG)
    {
        std::process::exit(doxascope::tui::guardian::main());
    }
    std::process::exit(doxascope::cli::main());
}
