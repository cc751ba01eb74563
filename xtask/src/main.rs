//! Project automation, run as `cargo xtask TASK` (an alias in `.cargo/config.toml`).
//!
//! - `cargo xtask codegen`: generates the monitors of `examples/specs/*.ron` into
//!   `crates/trac-generated/src/generated/` (see [`codegen`]).
//! - `cargo xtask codegen --check`: fails (exit code 1) naming every stale generated file.
//! - `cargo xtask bench-report [--write]`: runs the short benchmark report and prints its table;
//!   `--write` also puts it into `BENCHMARKS.md` (see [`bench_report`]).

mod bench_report;
mod codegen;
mod error;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["codegen"] => match codegen::run(codegen::Mode::Write) {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        ["codegen", "--check"] => match codegen::run(codegen::Mode::Check) {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        ["bench-report", rest @ ..] if rest.iter().all(|a| *a == "--write") => {
            match bench_report::run(&codegen::root(), !rest.is_empty()) {
                Ok(table) => {
                    println!("{table}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!(
                "usage: cargo xtask codegen [--check] | bench-report [--write]\n\n  codegen          generate the monitors of examples/specs/*.ron\n  codegen --check  fail when a generated file is stale\n  bench-report     run the short benchmark report (--write: into BENCHMARKS.md)"
            );
            ExitCode::from(2)
        }
    }
}
