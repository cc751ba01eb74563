//! Helpers shared by the command-line tests (`mod support;` in each test file that uses them):
//! running the `trac-cli` binary and writing temporary files. Not every test file uses every
//! helper.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository root (the working directory of [`trac`]: `examples/...` paths resolve).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Runs `trac-cli` with `args` in [`ROOT`], without `OPENAI_API_KEY` (no test reaches a real
/// API by accident).
pub fn trac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(args)
        .current_dir(ROOT)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run trac")
}

/// Bytes of an output as text (invalid UTF-8 replaced).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The standard output of `o` as text.
pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

/// The standard error of `o` as text.
pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// Writes `content` to the file `name` in this test binary's temporary directory
/// (`trac-cli-TEST-test-PID`, `TEST` the test file's name) and returns its path.
pub fn temp_file(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "trac-cli-{}-test-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(content.as_bytes())
        .unwrap();
    p
}

/// Runs `trac audit -j J ARGS FILES` for J = 1 and each of `jobs`: identical stdout (bytes),
/// stderr and exit code. Returns the `-j 1` run.
pub fn same_with_jobs(args: &[&str], files: &[&str], jobs: &[&str]) -> Output {
    let run = |j: &str| {
        let mut a: Vec<&str> = vec!["audit", "-j", j];
        a.extend_from_slice(args);
        a.extend_from_slice(files);
        trac(&a)
    };
    let seq = run("1");
    for j in jobs {
        let par = run(j);
        assert!(
            seq.stdout == par.stdout,
            "stdout of -j {j} {args:?} differs from -j 1's"
        );
        assert_eq!(
            text(&seq.stderr),
            text(&par.stderr),
            "stderr of -j {j} {args:?}"
        );
        assert_eq!(seq.status.code(), par.status.code(), "exit code of -j {j}");
    }
    seq
}
