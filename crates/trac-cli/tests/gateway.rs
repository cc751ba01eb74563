//! `trac gateway` as a program: its usage errors (exit code 2), and a real run in front of the
//! scripted upstream of trac-gateway's tests, with an agent through it, the gateway killed, and
//! its log re-audited by `trac audit`.

#[path = "../../trac-gateway/tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use support::{run_agent, write_log, Upstream};

const AIRLINE: &str = "../../examples/specs/airline.ron";

fn trac(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn bad_flags_and_unreadable_specs_exit_2_with_a_message() {
    for (args, words) in [
        (
            vec![
                "--spec",
                AIRLINE,
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--intervene",
                "resamples",
            ],
            "unknown intervention `resamples`: expected none, shield, resample, inject or switch",
        ),
        (
            vec![
                "--spec",
                AIRLINE,
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--intervene",
                "resample",
                "--predict",
                "k=0,n=3",
            ],
            "--predict `k=0,n=3`: k must be an integer ≥ 1",
        ),
        (
            vec![
                "--spec",
                AIRLINE,
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--predict",
                "k=2,m=3",
            ],
            "--predict `k=2,m=3`: unknown key `m` (expected k and n)",
        ),
        (
            vec![
                "--spec",
                AIRLINE,
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--threshold",
                "1.5",
            ],
            "--threshold 1.5: expected a number in [0, 1]",
        ),
        (
            vec![
                "--spec",
                AIRLINE,
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--intervene",
                "inject",
                "--substitute-model",
                "big",
            ],
            "--substitute-model is for --intervene switch (not inject)",
        ),
        (
            vec![
                "--spec",
                AIRLINE,
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--on-block",
                "maybe",
            ],
            "unknown --on-block `maybe`",
        ),
        (
            vec![
                "--spec",
                "no/such/spec.ron",
                "--upstream",
                "http://127.0.0.1:9/v1",
            ],
            "no/such/spec.ron",
        ),
        (
            vec!["--spec", AIRLINE, "--upstream", "ftp://x"],
            "expected an http:// or https:// URL",
        ),
        (vec!["--spec", AIRLINE], "--upstream"),
        (
            vec![
                "--spec",
                AIRLINE,
                "--upstream",
                "http://127.0.0.1:9",
                "--listen",
                "not an address",
            ],
            "cannot listen",
        ),
    ] {
        let mut all = vec!["gateway"];
        all.extend(args);
        let out = trac(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(words), "{all:?}: {err}");
    }
}

/// Kills the gateway (our own child) when the test ends, passed or not.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_programs_log_re_audits_clean_under_shield_and_the_direct_log_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = dir.path().join("gw.jsonl");
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_trac-cli"))
            .args(["gateway", "--spec", AIRLINE, "--upstream", &upstream.base])
            .args(["--listen", "127.0.0.1:0", "--intervene", "shield", "--log"])
            .arg(&log)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut first = String::new();
    BufReader::new(child.0.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let base = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"),
        "{first}"
    );
    let ask = "Please move my flight, reservation ZFA04Y";
    let shielded = run_agent(&base, "sk-cli-SECRET", None, ask);
    assert!(shielded.ended);
    // Killed, not stopped: every logged line is already on disk.
    drop(child);
    let audited = trac(&[
        "audit",
        "--spec",
        AIRLINE,
        log.to_str().unwrap(),
        "--summary",
    ]);
    let text = String::from_utf8_lossy(&audited.stdout);
    assert_eq!(
        audited.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&audited.stderr)
    );
    assert!(String::from_utf8_lossy(&audited.stderr).trim().is_empty());
    assert!(!std::fs::read_to_string(&log).unwrap().contains("SECRET"));
    let lines = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(lines, shielded.messages.len());
    // The same agent without the gateway: trac audit finds the violations (exit code 1).
    let direct = run_agent(&upstream.base, "sk-cli-SECRET", None, ask);
    let direct_log = dir.path().join("direct.jsonl");
    write_log(&direct_log, "direct", &direct.messages);
    let audited = trac(&[
        "audit",
        "--spec",
        AIRLINE,
        direct_log.to_str().unwrap(),
        "--summary",
    ]);
    let text = String::from_utf8_lossy(&audited.stdout);
    assert_eq!(audited.status.code(), Some(1), "{text}");
    assert!(text.contains("confirm-before-write"), "{text}");
}
