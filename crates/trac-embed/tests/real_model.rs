//! Tests with the real embedded model (SmolLM2-135M-Instruct Q4_1, fetched by
//! `trac model fetch`; `.ci/run` fetches it). Where the model was not fetched at build time
//! (`cfg(no_model)`, build/needs.rs) they are reported as ignored with that reason; under
//! `CI=true` they run, and a missing model fails them.

// The tests need the embedded model's code: a build without the feature `embed` reports one
// ignored test that says so (never a pass).
#[cfg(not(feature = "embed"))]
#[test]
#[ignore = "needs the cargo feature `embed` (cargo test -p trac-embed --features embed)"]
fn real_model_tests_need_the_embed_feature() {}

#[cfg(feature = "embed")]
mod with_model {
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, OnceLock};
    use trac_embed::engine::EngineConfig;
    use trac_embed::EmbeddedModel;
    use trac_llm::scoring::{score_step, ScoringConfig};
    use trac_llm::{ChatModel, ChatRequest, LlmLabeler, LlmLabelerConfig, Message, ScoreRequest};
    use trac_runtime::trace::{self, Event};
    use trac_spec::spec::Spec;

    /// The shared model, loaded once per test binary; a panic naming the cause when it cannot
    /// be loaded (the tests calling it are ignored where it was not fetched at build time).
    fn model() -> Arc<EmbeddedModel> {
        static MODEL: OnceLock<Result<Arc<EmbeddedModel>, String>> = OnceLock::new();
        let m = MODEL.get_or_init(|| {
            let path = trac_embed::fetch::find_model(None).map_err(|e| e.to_string())?;
            EmbeddedModel::load(&path, true, EngineConfig::default())
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        match m {
            Ok(m) => Arc::clone(m),
            Err(e) => panic!("the embedded model is unavailable (trac model fetch): {e}"),
        }
    }

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    #[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
    fn the_model_loads_with_its_metadata() {
        let m = model();
        let info = m.info();
        assert!(info.name.to_lowercase().contains("smollm2"), "{info:?}");
        // 135M parameters (within 10%), a 49152-token vocabulary.
        assert!(
            (120_000_000..150_000_000).contains(&info.n_params),
            "{info:?}"
        );
        assert_eq!(info.n_vocab, 49152);
    }

    #[test]
    #[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
    fn greedy_generation_applies_the_chat_template() {
        let m = model();
        let req = ChatRequest {
            messages: vec![Message::user(
                "What is the capital of France? Answer with the city's name only.",
            )],
            max_tokens: Some(8),
            ..ChatRequest::default()
        };
        let r = m.complete(&req).unwrap();
        assert_eq!(r.choices.len(), 1);
        assert!(r.choices[0].content.contains("Paris"), "{:?}", r.choices[0]);
        assert!(r.usage.prompt_tokens > 10 && r.usage.completion_tokens <= 8);
    }

    #[test]
    #[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
    fn sampling_is_reproducible_for_a_seed_and_sample_index() {
        let m = model();
        let req = ChatRequest {
            messages: vec![Message::user("Name three kitchen tools.")],
            n: 3,
            temperature: 1.0,
            seed: Some(11),
            max_tokens: Some(16),
            logprobs: Some(2),
            ..ChatRequest::default()
        };
        let a = m.complete(&req).unwrap();
        let b = m.complete(&req).unwrap();
        assert_eq!(a.choices, b.choices, "same seed, same samples");
        assert_eq!(a.choices.len(), 3);
        // Sample 2 drawn alone (sample_offset 2) is sample 2 of the batch.
        let alone = m
            .complete(&ChatRequest {
                n: 1,
                sample_offset: 2,
                ..req.clone()
            })
            .unwrap();
        assert_eq!(alone.choices[0], a.choices[2]);
        // Three samples at temperature 1 are not all the same text.
        assert!(
            a.choices.iter().any(|c| c.content != a.choices[0].content),
            "{:?}",
            a.choices
        );
        // Log-probabilities: one per generated token, each <= 0, with 2 alternatives whose best is
        // at least as likely as the chosen token.
        for c in &a.choices {
            let lps = c.logprobs.as_ref().unwrap();
            assert!(!lps.is_empty() && lps.len() <= 16);
            for t in lps {
                assert!(t.logprob <= 0.0 && t.top.len() == 2 && t.top[0].1 >= t.logprob);
            }
        }
        assert!(a.usage.completion_tokens <= 3 * 16 && a.usage.completion_tokens >= 3);
    }

    #[test]
    #[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
    fn json_mode_answers_a_json_object() {
        let m = model();
        let req = ChatRequest {
            messages: vec![Message::user(
                "Give a JSON object with keys \"take\" (true or false) and \"drop\" (true or false) for the action: take knife.",
            )],
            max_tokens: Some(48),
            response_format: trac_llm::model::ResponseFormat::JsonObject,
            ..ChatRequest::default()
        };
        let r = m.complete(&req).unwrap();
        let c = &r.choices[0];
        assert!(c.content.trim_start().starts_with('{'), "{c:?}");
        if c.finish_reason.as_deref() == Some("stop") {
            let v: serde_json::Value = serde_json::from_str(&c.content).unwrap();
            assert!(v.is_object(), "{c:?}");
        }
    }

    /// `local-json`: an answer with a schema follows it, keys and types (the grammar of
    /// `trac_embed::grammar`), never just any JSON object.
    #[test]
    #[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
    fn schema_mode_answers_the_schemas_keys_only() {
        let m = model();
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"take": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                           "drop": {"type": "boolean"}},
            "required": ["take", "drop"],
            "additionalProperties": false,
        });
        let req = ChatRequest {
            messages: vec![Message::user(
                "Label the action `take knife`: a JSON object with \"take\" (the items taken) and \"drop\" (true or false).",
            )],
            max_tokens: Some(400),
            response_format: trac_llm::model::ResponseFormat::JsonSchema(schema),
            ..ChatRequest::default()
        };
        let r = m.complete(&req).unwrap();
        let c = &r.choices[0];
        assert_eq!(c.finish_reason.as_deref(), Some("stop"), "{c:?}");
        let v: serde_json::Value = serde_json::from_str(&c.content).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 2, "{c:?}");
        assert!(
            v["take"]
                .as_array()
                .is_some_and(|a| a.len() <= 2 && a.iter().all(|x| x.is_string())),
            "{c:?}"
        );
        assert!(v["drop"].is_boolean(), "{c:?}");
    }

    fn yes_no() -> Vec<String> {
        ["Yes", "yes", "No", "no"].map(String::from).to_vec()
    }

    #[test]
    #[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
    fn scoring_is_deterministic_and_evaluates_the_shared_prefix_once() {
        let m = model();
        let ctx = "Step to label (step 3):\ntake red hot pepper from the fridge";
        let prompts: Vec<Vec<Message>> = [
            "the agent takes something",
            "the agent drops something",
            "the agent goes somewhere",
        ]
        .iter()
        .map(|q| {
            vec![
                Message::system(trac_llm::scoring::SYSTEM),
                Message::user(format!(
                    "{ctx}\n\nQuestion: at the step to label, {q}? Answer yes or no."
                )),
            ]
        })
        .collect();
        let req = ScoreRequest {
            prompts: prompts.clone(),
            choices: yes_no(),
            tag: None,
        };
        let a = m.score(&req).unwrap();
        let b = m.score(&req).unwrap();
        assert_eq!(a.logprobs, b.logprobs, "scores are deterministic");
        assert_eq!(a.logprobs.len(), 3);
        for row in &a.logprobs {
            assert_eq!(row.len(), 4);
            let mass: f64 = row.iter().map(|l| l.exp()).sum();
            assert!(
                row.iter().all(|l| *l <= 0.0) && mass <= 1.0 + 1e-9,
                "{row:?}"
            );
        }
        // One prompt alone costs its whole length; three together cost less than three alone.
        let singles: u64 = prompts
            .iter()
            .map(|p| {
                m.score(&ScoreRequest {
                    prompts: vec![p.clone()],
                    choices: yes_no(),
                    tag: None,
                })
                .unwrap()
                .usage
                .prompt_tokens
            })
            .sum();
        assert!(
            a.usage.prompt_tokens * 3 < singles * 2,
            "shared prefix evaluated once: {} vs {singles}",
            a.usage.prompt_tokens
        );
    }

    /// The first steps of a shared TextWorld log (the test calling it is ignored where the
    /// shared data was missing at build time, `cfg(no_shared_logs)`).
    fn textworld_steps(n: usize) -> Vec<Event> {
        let p = root().join("../shared/data/paper-traces/textworld/out1.txt");
        assert!(
            p.exists(),
            "the shared traces are missing at {}",
            p.display()
        );
        let events: Vec<Event> = trace::open(&p)
            .unwrap()
            .filter_map(Result::ok)
            .take(n)
            .collect();
        assert_eq!(events.len(), n);
        events
    }

    #[test]
    #[cfg_attr(no_model, ignore = "needs the embedded model (trac model fetch)")]
    #[cfg_attr(
        all(not(no_model), no_shared_logs),
        ignore = "needs ../shared/data/paper-traces"
    )]
    fn scoring_labels_a_shared_textworld_log_validly_and_deterministically() {
        let m = model();
        let events = textworld_steps(6);
        let spec = Spec::from_path(&root().join("examples/specs/textworld.ron")).unwrap();
        let labeler = LlmLabeler::new(
            m.clone() as Arc<dyn ChatModel>,
            spec.propositions.clone(),
            spec.case_sensitive,
            LlmLabelerConfig::default(),
        );
        let cfg = ScoringConfig::default();
        let names: Vec<&str> = spec.propositions.iter().map(|p| p.name.as_str()).collect();
        for (i, e) in events.iter().enumerate() {
            let a = score_step(&labeler, &cfg, e, &events[..i]).unwrap();
            let b = score_step(&labeler, &cfg, e, &events[..i]).unwrap();
            assert_eq!(a, b, "step {}: deterministic", e.step);
            assert_eq!(
                a.iter().map(|s| s.proposition.as_str()).collect::<Vec<_>>(),
                names
            );
            for s in &a {
                assert!(
                    (0.0..=1.0).contains(&s.p_yes) && s.confidence() >= 0.5,
                    "{s:?}"
                );
                let parametric = spec
                    .propositions
                    .iter()
                    .any(|p| p.name == s.proposition && p.param.is_some());
                if parametric {
                    assert!(!s.holds || (s.p_yes > 0.5 && s.value.is_some()), "{s:?}");
                } else {
                    assert_eq!(s.holds, s.p_yes > 0.5, "{s:?}");
                }
            }
            // Through the Labeler interface (the model can score): labels of declared propositions.
            let labels = labeler.label_step(e, &events[..i]).unwrap();
            for l in &labels {
                let base = l.split('(').next().unwrap();
                assert!(names.contains(&base), "{l}");
                if let Some(v) = l.strip_prefix(base).and_then(|r| r.strip_prefix('(')) {
                    assert!(v.ends_with(')') && v.len() > 1, "{l}");
                }
            }
        }
    }
}
