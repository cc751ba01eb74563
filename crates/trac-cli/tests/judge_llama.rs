//! `trac judge` and `trac experiment temporal` against a real OpenAI-compatible server:
//! PyPI's `llama-cpp-python[server]` serving SmolLM2-135M-Instruct (`.ci/install-llm-server`),
//! started on 127.0.0.1 by `trac_llm::testserver::llama`. A 135M model's verdicts need not be
//! right: the test checks that both commands run end to end over HTTP, that every answer is
//! either scored or reported as a judge failure, and that TRAC's side is exact.
//!
//! Where the server or the model was missing at build time the test is reported as ignored with
//! that reason (build/needs.rs); under `CI=true` it runs, and fails without them.

use serde_json::Value;
use std::process::Command;
use trac_llm::testserver::llama::{start_llama, MODEL_ALIAS};

#[test]
#[cfg_attr(
    no_llama_server,
    ignore = "needs PyPI's llama-cpp-python[server] (.ci/install-llm-server)"
)]
#[cfg_attr(
    all(not(no_llama_server), no_model),
    ignore = "needs the SmolLM2 GGUF (.ci/install-llm-server or trac model fetch)"
)]
fn judge_and_temporal_study_against_smollm2_behind_llama_cpp_python() {
    let server = start_llama("judge", 4096);
    let base = server.base_url();
    let dir = std::env::temp_dir().join(format!("trac-judge-llama-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("kitchen.txt");
    // TRAC_R with the TextWorld rules: R3 (do not drop things) violated at step 3.
    std::fs::write(&trace, "take apple\nexamine apple\ndrop apple\nlook\n").unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_trac-cli"))
            .args(args)
            .args([
                "--model",
                MODEL_ALIAS,
                "--base-url",
                &base,
                "--timeout",
                "600",
            ])
            .current_dir(root)
            .output()
            .unwrap()
    };
    let o = run(&[
        "judge",
        "--spec",
        "examples/specs/textworld.ron",
        "--method",
        "few-shot",
        "--format",
        "json",
        trace.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &doc["rows"][0];
    assert_eq!(row["method"], "few-shot");
    let run1 = &row["runs"][0];
    let (judged, failures) = (
        run1["judged"].as_u64().unwrap(),
        run1["failures"].as_array().unwrap().len(),
    );
    assert_eq!(judged + failures as u64, 1, "{row}");
    assert_eq!(
        failures > 0,
        err.contains("judge failure: few-shot run 1:"),
        "{err}"
    );
    assert!(doc["usage"]["requests"].as_u64().unwrap() >= 1);

    let out = dir.join("temporal");
    let o = run(&[
        "experiment",
        "temporal",
        "--sweep",
        "gap",
        "--values",
        "2",
        "--samples",
        "2",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("gap.json")).unwrap()).unwrap();
    let p = &doc["points"][0];
    assert_eq!(p["answers"], 2);
    assert_eq!(p["trac_accuracy"], 1.0);
    assert!(std::fs::read_to_string(out.join("gap.svg"))
        .unwrap()
        .contains("<polyline"));
    drop(server);
}
