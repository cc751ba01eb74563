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

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use trac_agent::predict::SamplingPredictor;
use trac_agent::run::{run_episode, Intervention, Models, RunConfig, StepRecord};
use trac_agent::trucks::Trucks;
use trac_llm::ModelOptions;
use trac_spec::spec::Spec;

/// Stops the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The server or the model failed although the build found them (the test is ignored where
/// they were missing at build time: `cfg(no_llama_server)`, `cfg(no_model)`, build/needs.rs).
fn unavailable(why: String) -> ! {
    panic!("the real LLM server cannot be used: {why} (.ci/install-llm-server installs it)");
}

fn gguf_path() -> PathBuf {
    if let Ok(p) = std::env::var("TRAC_SMOLLM2_GGUF") {
        return PathBuf::from(p);
    }
    let dir = std::env::var("TRAC_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                .join(".cache/trac/models")
        });
    dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")
}

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
    let python = std::env::var("TRAC_PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python)
        .args(["-c", "import llama_cpp.server"])
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(_) => unavailable(format!("`{python} -c 'import llama_cpp.server'` failed")),
        Err(e) => unavailable(format!("cannot run {python}: {e}")),
    }
    let gguf = gguf_path();
    if !gguf.is_file() {
        unavailable(format!("the model file {} is missing", gguf.display()));
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port");
    let log = std::env::temp_dir().join(format!("trac-run-llama-server-{port}.log"));
    let mut server = Server(
        Command::new(&python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&gguf)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--n_ctx", "4096", "--n_threads", "2"])
            .args(["--model_alias", "smollm2"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("a log file"))
            .spawn()
            .expect("start python"),
    );
    // The server binds its port once the model is loaded; a generous bound for a busy machine.
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = server.0.try_wait() {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            unavailable(format!("the server exited ({status}): {tail}"));
        }
        if start.elapsed() > Duration::from_secs(300) {
            unavailable("the server did not listen within 300 s".into());
        }
        std::thread::sleep(Duration::from_millis(250));
    }

    let spec = Spec::from_path(&PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/specs/trucks-5.ron"
    )))
    .unwrap()
    .check()
    .unwrap();
    let mut o = ModelOptions::new("smollm2");
    o.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
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
