//! The `trac` command line (`cargo run -p trac-cli -- ...`); the root package installs the same
//! program as `trac` (`cargo install --path .`).

fn main() -> std::process::ExitCode {
    trac_cli::main()
}
