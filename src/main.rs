// jemalloc, tuned in `.cargo/config.toml`: the audit of a long trace frees much of what
// its threads allocate while its sessions grow, and glibc's malloc kept those pages (the 10M
// audit held 1.80x the file with it, 1.28x with jemalloc, and ran 25% faster). Measured in
// docs/performance.md; the TUI's open of the same trace is as fast as with glibc.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use doxascope::cli::Workload;

fn main() {
    // The terminal guardian the TUI starts (see `tui::guardian`): not a command of its own.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == doxascope::tui::guardian::GUARD_ARG)
    {
        std::process::exit(doxascope::tui::guardian::main());
    }
    std::process::exit(doxascope::cli::main_with(tune_allocator));
}

/// A batch command (the audit above all) returns freed pages at once instead of after the
/// compiled-in second: its peak resident memory is what its user sees, and the 10M audit's
/// peak fell from 1.01-1.02x the file to under it. The TUI keeps the delay: returning pages
/// at once slowed its open of the same trace by a third (docs/performance.md).
fn tune_allocator(workload: Workload) {
    if workload != Workload::Batch {
        return;
    }
    use tikv_jemalloc_ctl::raw;
    let now: isize = 0;
    // SAFETY: `arenas.dirty_decay_ms` and `arena.<i>.dirty_decay_ms` are documented
    // read-write controls of type ssize_t, which `isize` is; the names end in NUL.
    // Arenas made later (by threads started later) take the first one's value; the loop
    // covers those already made, and an index not made yet only returns an error.
    unsafe {
        let _ = raw::write(b"arenas.dirty_decay_ms\0", now);
    }
    // SAFETY: `arenas.narenas` is a read-only control of type unsigned (u32).
    let arenas: u32 = unsafe { raw::read(b"arenas.narenas\0") }.unwrap_or(0);
    for i in 0..arenas {
        let name = format!("arena.{i}.dirty_decay_ms\0");
        // SAFETY: as above.
        unsafe {
            let _ = raw::write(name.as_bytes(), now);
        }
    }
}
