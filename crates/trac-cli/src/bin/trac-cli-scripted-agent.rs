//! `trac-cli-scripted-agent`: the scripted Trucks agent as a command model, and the reference
//! environment server (see `trac_cli::scripted_agent`), for trac-cli's tests. Users install it
//! as `trac-scripted-agent` from the root package (`cargo install --path .`).

fn main() -> std::process::ExitCode {
    trac_cli::scripted_agent::main()
}
