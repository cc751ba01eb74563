//! The `trac` command line, installed by `cargo install --path .` (the same program as
//! `cargo run -p trac-cli --`).

fn main() -> std::process::ExitCode {
    trac_cli::main()
}
