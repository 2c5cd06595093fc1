//! `gametables`: see `gametables --help`.

fn main() -> std::process::ExitCode {
    gametables::cli::main()
}
