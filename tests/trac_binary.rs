//! The root package's `trac` binary (what `cargo install --path .` installs) is the command line:
//! it runs the README's audit with the same exit code and output as `cargo run -p trac-cli`.

use std::process::Command;

#[test]
fn the_root_package_installs_the_trac_command() {
    let o = Command::new(env!("CARGO_BIN_EXE_trac"))
        .args([
            "audit",
            "--summary",
            "--spec",
            "examples/specs/textworld.ron",
            "examples/traces/textworld-demo.txt",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run trac");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("violation(s) in 1 trace(s)"), "{out}");
    let v = Command::new(env!("CARGO_BIN_EXE_trac"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("trac "));
}
