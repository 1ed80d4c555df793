fn main() {
    std::process::exit(doxascope::cli::main());
}
