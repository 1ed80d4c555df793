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
