//! The labeling harness faults of issue 26, each on the input that showed it: scoring takes
//! parameter values from the step's own words (never from generated text), propositions of two
//! parameters are asked and valued one parameter at a time, JSON answers have a form for tuples,
//! a value copied from a spec example is never the step's, and thresholds are calibrated on the
//! examples. The models are scripted behind the same [`ChatModel`] interface.

use serde_json::json;
use std::sync::{Arc, Mutex};
use trac_llm::labeler::{AnswerError, LlmLabeler, LlmLabelerConfig};
use trac_llm::model::{
    ChatModel, ChatRequest, ChatResponse, Choice, ModelError, ScoreRequest, ScoreResponse, Usage,
};
use trac_runtime::trace::Event;
use trac_spec::spec::{LabelExample, PropositionDecl};

/// A model that scores: `P(yes)/(P(yes)+P(no))` is `yes(question)` for the question (the text
/// after the last `Question:`); every question it was asked is kept. Its generated text is
/// always `item is a knife` (the free text the old harness took as a value).
struct Scorer {
    yes: fn(&str) -> f64,
    asked: Mutex<Vec<String>>,
}

impl Scorer {
    fn new(yes: fn(&str) -> f64) -> Arc<Scorer> {
        Arc::new(Scorer {
            yes,
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl ChatModel for Scorer {
    fn name(&self) -> &str {
        "scorer"
    }
    fn complete(&self, _req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Ok(answer("item is a knife"))
    }
    fn usage(&self) -> Usage {
        Usage::default()
    }
    fn can_score(&self) -> bool {
        true
    }
    fn score(&self, req: &ScoreRequest) -> Result<ScoreResponse, ModelError> {
        let rows = req
            .prompts
            .iter()
            .map(|p| {
                let last = &p.last().unwrap().content;
                let q = &last[last.rfind("Question:").unwrap()..];
                self.asked.lock().unwrap().push(q.to_string());
                let y = (self.yes)(q);
                // P(Yes) = y, P(No) = 1 - y; `yes` and `no` impossible.
                vec![y.ln(), f64::NEG_INFINITY, (1.0 - y).ln(), f64::NEG_INFINITY]
            })
            .collect();
        Ok(ScoreResponse {
            logprobs: rows,
            usage: Usage::default(),
        })
    }
}

/// A model that answers every chat request with the next of its scripted answers (the last one
/// again when they run out) and keeps the requests.
struct Scripted {
    answers: Vec<String>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut r = self.requests.lock().unwrap();
        r.push(req.clone());
        let a = &self.answers[(r.len() - 1).min(self.answers.len() - 1)];
        Ok(answer(a))
    }
    fn usage(&self) -> Usage {
        Usage::default()
    }
}

fn scripted(answers: &[&str]) -> Arc<Scripted> {
    Arc::new(Scripted {
        answers: answers.iter().map(|s| s.to_string()).collect(),
        requests: Mutex::new(Vec::new()),
    })
}

fn answer(content: &str) -> ChatResponse {
    ChatResponse {
        choices: vec![Choice {
            content: content.into(),
            finish_reason: None,
            logprobs: None,
        }],
        usage: Usage::default(),
    }
}

fn event(text: &str) -> Event {
    Event {
        step: 1,
        line: 1,
        output: Some(text.into()),
        ..Event::default()
    }
}

fn prop(name: &str, param: Option<&str>, description: &str) -> PropositionDecl {
    PropositionDecl {
        name: name.into(),
        param: param.map(Into::into),
        description: description.into(),
        ..Default::default()
    }
}

fn labeler(model: Arc<dyn ChatModel>, props: Vec<PropositionDecl>) -> LlmLabeler {
    LlmLabeler::new(model, props, false, LlmLabelerConfig::default())
}

/// TextWorld: "take knife from table" is `take(knife)`, whatever the model would generate.
#[test]
fn scoring_values_are_spans_of_the_step_not_generated_text() {
    let m = Scorer::new(|q| {
        if q.contains("some item") || q.contains("takes the knife?") {
            0.9
        } else {
            0.2
        }
    });
    let take = prop("take", Some("item"), "the agent takes the {item}");
    let l = labeler(m.clone(), vec![take]);
    assert_eq!(
        l.label_step(&event("take knife from table"), &[]).unwrap(),
        ["take(knife)"]
    );
    // The holds question, then one question per candidate span.
    let asked = m.asked.lock().unwrap().clone();
    assert_eq!(
        asked[0],
        "Question: at the step to label, the agent takes the some item? Answer yes or no."
    );
    assert!(asked.contains(
        &"Question: at the step to label, the agent takes the knife from table? Answer yes or no."
            .to_string()
    ));
    assert_eq!(asked.len(), 1 + 6);
}

/// Trucks: "LOAD package8 into a1" gives `load_pkg(package8)` and, for the two-parameter
/// `loads`, `loads(package8, a1)`: the package chosen first (the area left `some area`), then
/// the area with the package filled in.
#[test]
fn two_parameters_are_filled_and_valued_one_at_a_time() {
    let m = Scorer::new(|q| {
        let yes = q.contains("some pkg into area some area")
            || q.contains("loads package8 into area some area")
            || q.contains("loads package8 into area a1 of")
            || q.contains("loads some pkg into the truck")
            || q.contains("loads package8 into the truck");
        if yes {
            0.9
        } else {
            0.1
        }
    });
    let props = vec![
        prop(
            "load_pkg",
            Some("pkg"),
            "the agent loads {pkg} into the truck",
        ),
        prop(
            "loads",
            Some("pkg, area"),
            "the agent loads {pkg} into area {area} of the truck",
        ),
    ];
    let l = labeler(m.clone(), props);
    let scores = l
        .label_step_scored(&event("LOAD package8 into a1"), &[])
        .unwrap();
    assert_eq!(scores.0, ["load_pkg(package8)", "loads(package8, a1)"]);
    let asked = m.asked.lock().unwrap().clone();
    assert!(!asked.iter().any(|q| q.contains('{')), "{asked:?}");
    assert!(asked.contains(
        &"Question: at the step to label, the agent loads some pkg into area some area of the truck? Answer yes or no."
            .to_string()
    ));
    // The area's candidates never offer the package again.
    assert!(!asked
        .iter()
        .any(|q| q.contains("loads package8 into area package8 of")));
}

/// JSON mode: `[["package3", "a1"]]` is a tuple; `["package3", "a1"]` for a two-parameter
/// proposition is an answer error (asked again), never silently no label.
#[test]
fn json_tuples_have_a_form_and_a_flat_list_is_an_answer_error() {
    let loads = prop(
        "loads",
        Some("pkg, area"),
        "the agent loads {pkg} into area {area} of the truck",
    );
    let m = scripted(&[
        r#"{"loads": ["package3", "a1"]}"#,
        r#"{"loads": [["package3", "a1"]]}"#,
    ]);
    let l = labeler(m.clone(), vec![loads]);
    let ev = event("LOAD package3 into a1");
    assert_eq!(l.label_step(&ev, &[]).unwrap(), ["loads(package3, a1)"]);
    let reqs = m.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 2);
    let user = &reqs[0].messages[1].content;
    assert!(
        user.contains("Answer the list of the [pkg, area] tuples for which it holds, one list of 2 values each ([] if none)."),
        "{user}"
    );
    assert!(user.ends_with(r#"{"loads": [[pkg, area], ...]}"#), "{user}");
    let retry = &reqs[1].messages.last().unwrap().content;
    assert!(
        retry.starts_with(r#"That answer is invalid: `loads`: expected a list of [pkg, area] tuples, one per instance (e.g. [["pkg", "area"]]), got ["package3","a1"]."#),
        "{retry}"
    );
    match l.parse_answer(r#"{"loads": ["package3", "a1"]}"#) {
        Err(AnswerError::NotTuples { proposition, .. }) => assert_eq!(proposition, "loads"),
        other => panic!("{other:?}"),
    }
    // A tuple written as one string, and none.
    assert_eq!(
        l.parse_answer(r#"{"loads": ["package3, a1"]}"#).unwrap(),
        ["loads(package3, a1)"]
    );
    assert!(l.parse_answer(r#"{"loads": []}"#).unwrap().is_empty());
    // The schema says the form.
    assert_eq!(
        l.answer_schema()["properties"]["loads"],
        json!({"type": "array", "maxItems": 8,
               "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}})
    );
}

/// A value from a spec example (`red bell pepper`), absent from the step, is never its value.
#[test]
fn a_value_copied_from_an_example_is_never_the_steps() {
    let mut take = prop("take", Some("item"), "the agent takes the {item}");
    take.examples.push(LabelExample {
        text: "take red bell pepper".into(),
        holds: true,
        values: vec!["red bell pepper".into()],
    });
    let m = scripted(&[r#"{"take": ["red bell pepper", "knife"]}"#]);
    let l = labeler(m, vec![take]);
    assert_eq!(
        l.label_step(&event("take knife"), &[]).unwrap(),
        ["take(knife)"]
    );
    assert_eq!(
        l.label_step(&event("take the red bell pepper"), &[])
            .unwrap(),
        ["take(red bell pepper)", "take(knife)"]
    );
}

/// Scoring: even a model that says yes to the example's value above all gives a value of the
/// step (the candidates are the step's spans only).
#[test]
fn scoring_never_offers_an_examples_value() {
    let m = Scorer::new(|q| {
        if q.contains("red bell pepper") {
            0.99
        } else if q.contains("some item") || q.contains("takes the knife?") {
            0.9
        } else {
            0.2
        }
    });
    let mut take = prop("take", Some("item"), "the agent takes the {item}");
    take.examples.push(LabelExample {
        text: "take red bell pepper".into(),
        holds: true,
        values: vec!["red bell pepper".into()],
    });
    // One example, of one kind: the calibration keeps the threshold 0.5.
    let l = labeler(m.clone(), vec![take]);
    assert_eq!(
        l.label_step(&event("take knife"), &[]).unwrap(),
        ["take(knife)"]
    );
    let asked = m.asked.lock().unwrap().clone();
    let valued: Vec<&String> = asked.iter().filter(|q| !q.contains("some item")).collect();
    assert!(valued.iter().all(|q| !q.contains("pepper")), "{valued:?}");
}

/// P(yes) bunched above 0.5: the threshold calibrated on the examples (0.70 between the
/// negatives' 0.66, 0.68 and the positives' 0.72, 0.74) labels, where 0.5 says yes everywhere.
#[test]
fn the_threshold_is_calibrated_on_the_examples() {
    let m = Arc::new(ByStep);
    let mut look = prop("look", None, "the agent looks around");
    for (text, holds) in [
        ("look", true),
        ("look around", true),
        ("wait", false),
        ("sleep", false),
    ] {
        look.examples.push(LabelExample {
            text: text.into(),
            holds,
            values: vec![],
        });
    }
    let l = labeler(m, vec![look]);
    let (labels, scores) = l.label_step_scored(&event("wait"), &[]).unwrap();
    assert!(labels.is_empty());
    let s = &scores.unwrap()[0];
    assert!((s.threshold - 0.70).abs() < 1e-12, "{s:?}");
    assert!((s.p_yes - 0.66).abs() < 1e-12);
    let c = l.calibration().unwrap();
    assert_eq!((c[0].examples, c[0].accuracy), (4, Some(1.0)));
    assert_eq!(l.label_step(&event("look around"), &[]).unwrap(), ["look"]);
}

/// Scores by the step to label: `look` 0.72, `look around` 0.74, `wait` 0.66, `sleep` 0.68.
struct ByStep;

impl ChatModel for ByStep {
    fn name(&self) -> &str {
        "by-step"
    }
    fn complete(&self, _req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        unreachable!("a scoring model is never asked to generate")
    }
    fn usage(&self) -> Usage {
        Usage::default()
    }
    fn can_score(&self) -> bool {
        true
    }
    fn score(&self, req: &ScoreRequest) -> Result<ScoreResponse, ModelError> {
        let rows = req
            .prompts
            .iter()
            .map(|p| {
                let user = &p.last().unwrap().content;
                let step = user
                    .split("):\n")
                    .nth(1)
                    .and_then(|r| r.split("\n\n").next())
                    .unwrap();
                let y: f64 = match step {
                    "look" => 0.72,
                    "look around" => 0.74,
                    "wait" => 0.66,
                    "sleep" => 0.68,
                    other => panic!("unexpected step {other:?}"),
                };
                vec![y.ln(), f64::NEG_INFINITY, (1.0 - y).ln(), f64::NEG_INFINITY]
            })
            .collect();
        Ok(ScoreResponse {
            logprobs: rows,
            usage: Usage::default(),
        })
    }
}
