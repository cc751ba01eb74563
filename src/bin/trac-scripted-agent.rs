//! `trac-scripted-agent`, installed with `trac` by `cargo install --path .`: the scripted Trucks
//! agent as a command model (`trac run --model "cmd:trac-scripted-agent 0.3"`) and the reference
//! environment server (`--serve-env`); the same program as `cargo run -p trac-cli --bin
//! trac-scripted-agent --`. See `trac_cli::scripted_agent`.

fn main() -> std::process::ExitCode {
    trac_cli::scripted_agent::main()
}
