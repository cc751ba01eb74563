//! The whole run loop (Trucks environment, agent, monitors, prediction, interventions) against a
//! real OpenAI-compatible server: PyPI's `llama-cpp-python[server]` serving the
//! SmolLM2-135M-Instruct GGUF, both installed by `.ci/install-llm-server`. The test starts the
//! server on 127.0.0.1, runs two steps under each intervention, checks that the runs are
//! well-formed (a 135M model's actions need not be good ones), and stops the server.
//!
//! Gated like `crates/trac-llm/tests/llama_server.rs`: where the server or the model was missing
//! at build time the test is reported as ignored with that reason; under `CI=true` it runs.
//! `TRAC_PYTHON` names the interpreter (default `python3`), `TRAC_SMOLLM2_GGUF` the model file
//! (default `$TRAC_MODEL_DIR/SmolLM2-135M-Instruct.Q4_1.gguf`, `TRAC_MODEL_DIR` defaulting to
//! `~/.cache/trac/models`).
//!
//! The server is started and stopped by `trac_llm::testserver::llama` (feature `test-server`),
//! shared by the three crates that test against it.

use std::path::PathBuf;
use std::time::Duration;
use trac_agent::predict::SamplingPredictor;
use trac_agent::run::{run_episode, Intervention, Models, RunConfig, StepRecord};
use trac_agent::trucks::Trucks;
use trac_llm::testserver::llama::start_llama;
use trac_llm::ModelOptions;
use trac_spec::spec::Spec;

#[test]
#[cfg_attr(
    no_llama_server,
    ignore = "needs PyPI's llama-cpp-python[server] (.ci/install-llm-server)"
)]
#[cfg_attr(
    all(not(no_llama_server), no_model),
    ignore = "needs the SmolLM2 GGUF (.ci/install-llm-server or trac model fetch)"
)]
fn trucks_loop_over_llama_cpp_server_under_each_intervention() {
    let server = start_llama("run", 4096);

    let spec = Spec::from_path(&PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/specs/trucks-5.ron"
    )))
    .unwrap()
    .check()
    .unwrap();
    let mut o = ModelOptions::new("smollm2");
    o.base_url = Some(server.base_url());
    o.timeout = Duration::from_secs(300);
    o.max_in_flight = 1;
    let models = Models {
        agent: trac_llm::open_model(&o).unwrap(),
        substitute: None,
    };
    let mut calls = Vec::new();
    for i in [
        Intervention::None,
        Intervention::Resample,
        Intervention::Inject,
        Intervention::Switch,
        Intervention::Shield,
    ] {
        let cfg = RunConfig {
            intervention: i,
            sampling: SamplingPredictor {
                k: 1,
                n: 2,
                temperature: 0.8,
                max_tokens: Some(32),
            },
            max_tokens: Some(32),
            max_steps: 2,
            seed: 1,
            ..RunConfig::default()
        };
        let mut env = Trucks::new();
        let mut steps: Vec<StepRecord> = Vec::new();
        let r = run_episode(
            1,
            &cfg,
            std::slice::from_ref(&spec),
            &mut env,
            &models,
            &mut |s: &StepRecord| steps.push(s.clone()),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", i.as_str()));
        let name = i.as_str();
        assert_eq!(r.steps, steps.len(), "{name}");
        assert!(!steps.is_empty() && steps.len() <= 2, "{name}");
        assert!(
            r.model_calls >= steps.len() as u64,
            "{name}: {}",
            r.model_calls
        );
        assert!(r.completion_tokens > 0 && r.prompt_tokens > 0, "{name}");
        for s in &steps {
            // Every action reached the environment, which answered it (an unparsable action
            // is an observation saying so); the labels are the environment's ground truth.
            assert!(!s.observation.is_empty(), "{name} step {}", s.step);
            for iv in &s.interventions {
                assert!(iv.model_calls <= r.model_calls, "{name}");
            }
        }
        calls.push((name, r.model_calls, r.interventions));
    }
    // Resample, inject and switch predict at each step (k = 1, n = 2 samples): more calls than
    // acting alone.
    let none = calls[0].1;
    for (name, c, _) in &calls[1..4] {
        assert!(*c > none, "{name}: {c} model calls, none: {none}");
    }
    eprintln!("model calls and interventions per intervention: {calls:?}");
}
