//! The scoring labeler's confidences reach the labels an audit shows (`--show-labels`): each
//! proposition the LLM decided by scoring carries the probability of the value shown; rule and
//! JSON-answer labels carry none.

mod support;

use std::sync::Arc;
use support::spec;
use trac_llm::labeler::{HybridLabeler, LabelSource, LabelerMode, LlmLabelerConfig};
use trac_llm::model::{
    ChatModel, ChatRequest, ChatResponse, ConfigError, ModelError, ScoreRequest, ScoreResponse,
    Usage,
};
use trac_runtime::trace::Event;

/// A model that scores by the question asked: "looks around" gets P(Yes)=0.6, P(yes)=0.2,
/// P(No)=0.1, P(no)=0.1 (so P(yes)/(P(yes)+P(no)) = 0.8); any other question P(Yes)=0.1,
/// P(No)=0.2, P(no)=0.1 (0.25). It generates nothing.
struct Scorer;

impl ChatModel for Scorer {
    fn name(&self) -> &str {
        "scorer"
    }
    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Err(ModelError::Config(ConfigError::Other(Arc::new(
            std::io::Error::other(format!("not asked: {}", req.name())),
        ))))
    }
    fn usage(&self) -> Usage {
        Usage::default()
    }
    fn can_score(&self) -> bool {
        true
    }
    fn score(&self, req: &ScoreRequest) -> Result<ScoreResponse, ModelError> {
        assert_eq!(req.choices, ["Yes", "yes", "No", "no"]);
        let rows = req
            .prompts
            .iter()
            .map(|p| {
                let last = &p.last().unwrap().content;
                let q = &last[last.rfind("Question:").unwrap()..];
                let probs: [f64; 4] = if q.contains("looks around") {
                    [0.6, 0.2, 0.1, 0.1]
                } else {
                    [0.1, 0.0, 0.2, 0.1]
                };
                probs.iter().map(|x| x.ln()).collect()
            })
            .collect();
        Ok(ScoreResponse {
            logprobs: rows,
            usage: Usage::default(),
        })
    }
}

#[test]
fn scored_labels_carry_the_confidence_of_the_value_shown() {
    let sp = spec();
    let model: std::sync::Arc<dyn ChatModel> = std::sync::Arc::new(Scorer);
    let cfg = LlmLabelerConfig::default();
    let ev = Event {
        step: 1,
        line: 1,
        output: Some("look around".into()),
        ..Event::default()
    };
    let labels = |mode| {
        HybridLabeler::new(&[&sp], mode, Some(model.clone()), &cfg, false)
            .unwrap()
            .label_step(&ev, &[])
            .unwrap()
    };
    // Every proposition by the LLM: look holds with 0.8; take does not hold, with 1 - 0.25.
    let llm = labels(LabelerMode::Llm);
    let conf: Vec<(String, bool, LabelSource, Option<f64>)> = llm
        .propositions
        .iter()
        .map(|p| (p.proposition.clone(), p.holds, p.by, p.confidence))
        .collect();
    assert_eq!(conf.len(), 2);
    assert_eq!(
        (conf[0].0.as_str(), conf[0].1, conf[0].2),
        ("look", true, LabelSource::Llm)
    );
    assert!((conf[0].3.unwrap() - 0.8).abs() < 1e-9, "{conf:?}");
    assert_eq!(
        (conf[1].0.as_str(), conf[1].1, conf[1].2),
        ("take", false, LabelSource::Llm)
    );
    assert!((conf[1].3.unwrap() - 0.75).abs() < 1e-9, "{conf:?}");
    assert_eq!(llm.describe(), "look=true (llm 0.80), take=- (llm 0.75)");
    // P(yes) itself, whatever was decided (label-eval's AUC ranks steps by it).
    let p_yes: Vec<Option<f64>> = llm.propositions.iter().map(|p| p.p_yes).collect();
    assert!((p_yes[0].unwrap() - 0.8).abs() < 1e-9 && (p_yes[1].unwrap() - 0.25).abs() < 1e-9);
    // In JSON (`--show-labels --format jsonl`): a `confidence` field.
    let j = serde_json::to_value(&llm.propositions).unwrap();
    assert!(
        (j[0]["confidence"].as_f64().unwrap() - 0.8).abs() < 1e-9,
        "{j}"
    );
    // Hybrid: look holds by its rule (no confidence); take is the LLM's, with its confidence.
    let hybrid = labels(LabelerMode::Hybrid);
    assert_eq!(hybrid.describe(), "look=true (rule), take=- (llm 0.75)");
    let j = serde_json::to_value(&hybrid.propositions).unwrap();
    assert!(j[0].get("confidence").is_none(), "{j}");
    // Rules only: no confidence anywhere.
    let rules = labels(LabelerMode::Rules);
    assert!(rules
        .propositions
        .iter()
        .all(|p| p.confidence.is_none() && p.p_yes.is_none()));
}
