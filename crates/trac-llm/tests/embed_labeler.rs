//! The embeddings client and labeler against a loopback HTTP server (127.0.0.1) whose
//! `/v1/embeddings` answers known vectors: a bag of keywords, so every expected label is derived
//! by hand below. Also: retries on HTTP 500 and 429, and the cache (a hit sends no request).

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use trac_llm::embed_labeler::{EmbedLabeler, EmbedLabelerConfig, Method};
use trac_llm::embeddings::{CachedEmbeddings, EmbedRequest, EmbeddingsConfig, EmbeddingsModel};
use trac_llm::labeler::{HybridLabeler, LabelSource, LabelerMode, LlmLabelerConfig};
use trac_llm::model::{ChatModel, ChatRequest, Message, ModelError};
use trac_llm::pipeline::{label_in_order, LabelFn, PipelineError};
use trac_llm::retry::RetryPolicy;
use trac_llm::testserver::{self, Reply, TestServer};
use trac_runtime::trace::Event;
use trac_spec::spec::{LabelExample, PropositionDecl, Spec};

/// The vector of a text: counts of the words `take(s)`, `examine(s)`, `knife`, `apple`, then a
/// constant 1.
fn vector(text: &str) -> Vec<f64> {
    let mut v = vec![0.0, 0.0, 0.0, 0.0, 1.0];
    for w in text.to_lowercase().split_whitespace() {
        match w {
            "take" | "takes" => v[0] += 1.0,
            "examine" | "examines" => v[1] += 1.0,
            "knife" => v[2] += 1.0,
            "apple" => v[3] += 1.0,
            _ => {}
        }
    }
    v
}

/// An OpenAI embeddings answer for a request body.
fn answer(req: &Value) -> Reply {
    let inputs = req["input"].as_array().expect("an input list");
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": vector(t.as_str().unwrap())}))
        .collect();
    Reply::Json(
        json!({"object": "list", "data": data, "usage": {"prompt_tokens": 3, "total_tokens": 3}}),
    )
}

fn example(text: &str, holds: bool, values: &[&str]) -> LabelExample {
    LabelExample {
        text: text.into(),
        holds,
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

fn spec() -> Spec {
    Spec {
        name: "kitchen".into(),
        propositions: vec![
            PropositionDecl {
                name: "take".into(),
                param: Some("item".into()),
                description: "the agent takes the {item}".into(),
                examples: vec![
                    example("take knife", true, &["knife"]),
                    example("take apple", true, &["apple"]),
                    example("examine knife", false, &[]),
                    example("examine apple", false, &[]),
                ],
                ..Default::default()
            },
            PropositionDecl {
                name: "examine".into(),
                description: "the agent examines something".into(),
                examples: vec![
                    example("examine knife", true, &[]),
                    example("examine apple", true, &[]),
                    example("take knife", false, &[]),
                    example("take apple", false, &[]),
                ],
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_total: Duration::from_secs(10),
    }
}

fn model(server: &TestServer, retries: u32) -> EmbeddingsModel {
    let mut c = EmbeddingsConfig::new(server.base_url(), "test-embedder");
    c.retry = fast_retries(retries);
    EmbeddingsModel::new(c).unwrap()
}

fn step(n: usize, text: &str) -> Event {
    Event {
        step: n,
        line: n,
        output: Some(text.into()),
        ..Event::default()
    }
}

fn labeler(model: Arc<dyn ChatModel>, method: Method) -> EmbedLabeler {
    let s = spec();
    EmbedLabeler::new(
        model,
        s.propositions.clone(),
        &s.propositions,
        false,
        EmbedLabelerConfig {
            method,
            ..EmbedLabelerConfig::default()
        },
    )
}

#[test]
fn steps_get_the_labels_of_their_nearest_examples_and_values_from_their_words() {
    let server = TestServer::start(|req, _| answer(req));
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 0));
    for method in [Method::Prototype, Method::Knn(1)] {
        let l = labeler(Arc::clone(&m), method);
        // "take knife from table" = (1,0,1,0,1), the vector of "take knife": nearer the takes
        // (1,0,1,0,1), (1,0,0,1,1) and the description (1,0,0,0,1) than the examines. Values:
        // the spans take, take knife, knife, knife from table, table; filled into "take _" and
        // "the agent takes the _", `knife` and `knife from table` both give (1,0,1,0,1) again
        // (cosine 1): the earlier, `knife`, wins.
        let (labels, scores) = l
            .label_step_scored(&step(1, "take knife from table"), &[])
            .unwrap();
        assert_eq!(labels, vec!["take(knife)".to_string()], "{method:?}");
        assert_eq!(scores[0].value.as_deref(), Some("knife"));
        assert!(scores[0].p_yes > 0.5 && scores[1].p_yes < 0.5, "{scores:?}");
        let (labels, _) = l
            .label_step_scored(&step(2, "Examine the apple"), &[])
            .unwrap();
        assert_eq!(labels, vec!["examine".to_string()], "{method:?}");
        let (labels, _) = l.label_step_scored(&step(3, "take apple"), &[]).unwrap();
        assert_eq!(labels, vec!["take(apple)".to_string()], "{method:?}");
    }
    // The request is the OpenAI form: model name and a list of inputs, at /v1/embeddings.
    let first = &server.requests()[0];
    assert_eq!(first["model"], "test-embedder");
    assert!(first["input"].as_array().unwrap().len() >= 6);
}

#[test]
fn the_hybrid_labeler_labels_by_embeddings_when_the_model_embeds() {
    let server = TestServer::start(|req, _| answer(req));
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 0));
    let s = spec();
    let h = HybridLabeler::new(
        &[&s],
        LabelerMode::Llm,
        Some(m),
        &LlmLabelerConfig::default(),
        false,
    )
    .unwrap();
    let l = h
        .label_step(&step(1, "take the apple"), &[])
        .expect("labels");
    assert_eq!(l.names(), vec!["take(apple)".to_string()]);
    // Named as the embeddings labeler, not the chat LLM (`--show-labels`: `(embed 0.66)`).
    assert_eq!(l.propositions[0].by, LabelSource::Embed);
    assert_eq!(l.propositions[0].by.as_str(), "embed");
    assert!(l.propositions[0].confidence.is_some());
}

#[test]
fn http_500_and_429_are_retried() {
    let server = TestServer::start(|req, k| match k {
        0 => Reply::Status {
            code: 500,
            headers: vec![],
            body: "busy".into(),
        },
        1 => Reply::Status {
            code: 429,
            headers: vec![("Retry-After".into(), "0".into())],
            body: "slow down".into(),
        },
        _ => answer(req),
    });
    let m = model(&server, 3);
    let v = m
        .embed(&EmbedRequest::new(vec!["take knife".into()]))
        .unwrap();
    assert_eq!(v, vec![vec![1.0, 0.0, 1.0, 0.0, 1.0]]);
    assert_eq!(server.request_count(), 3);
    assert_eq!(m.usage().retries, 2);
    assert_eq!(m.usage().requests, 3);

    // Without retries, the 500 is the error, naming the request.
    let server = TestServer::start(|_, _| Reply::Status {
        code: 500,
        headers: vec![],
        body: "busy".into(),
    });
    let err = model(&server, 0)
        .embed(&EmbedRequest::new(vec!["x".into()]))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Status {
                status: 500,
                attempts: 1,
                ..
            }
        ),
        "{err}"
    );
    // A 400 is not retried.
    let server = TestServer::start(|_, _| Reply::Status {
        code: 400,
        headers: vec![],
        body: "bad".into(),
    });
    assert!(model(&server, 3)
        .embed(&EmbedRequest::new(vec!["x".into()]))
        .is_err());
    assert_eq!(server.request_count(), 1);
}

#[test]
fn http_501_and_404_are_not_retried_and_quote_one_short_line() {
    // Python's `http.server` answers a POST with HTTP 501 and an HTML page; it is quoted by its
    // title and text: `an HTML page: "Error response": ` (32 characters), then 168 `x`s of the
    // 200, then `…`.
    let page = format!(
        "<!DOCTYPE HTML>\n<html>\n    <head>\n        <title>Error response</title>\n<p>{}</p>",
        "x".repeat(500)
    );
    for code in [404, 501] {
        let body = page.clone();
        let server = TestServer::start(move |_, _| Reply::Status {
            code,
            headers: vec![],
            body: body.clone(),
        });
        let m = model(&server, 3);
        let err = m.embed(&EmbedRequest::new(vec!["x".into()])).unwrap_err();
        let ModelError::Status {
            status,
            attempts,
            body,
            ..
        } = &err
        else {
            panic!("not a status error: {err}");
        };
        assert_eq!((*status, *attempts), (code, 1));
        assert_eq!(
            body,
            &format!(
                "an HTML page: \"Error response\": {}… (POST {}: is the base URL the server's OpenAI-compatible /v1 root?)",
                "x".repeat(168),
                m.url()
            )
        );
        assert_eq!(server.request_count(), 1, "HTTP {code}");
    }
}

#[test]
fn a_failed_calibration_is_sent_once_and_stops_the_labeling() {
    // The calibration request is refused (HTTP 501, an HTML page) with 4 steps labeled at
    // once: it is sent once, not once per step or per worker, and every step fails with it;
    // the stream is the first step's failure.
    let server = TestServer::start(|_, _| testserver::python_http_server_501());
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 3));
    let l = Arc::new(labeler(Arc::clone(&m), Method::Prototype));
    let events: Vec<Result<Event, String>> =
        (1..=12).map(|i| Ok(step(i, "take the knife"))).collect();
    let f: Arc<LabelFn<Vec<String>>> =
        Arc::new(move |e: &Event, h: &[Event]| l.label_step_scored(e, h).map(|(labels, _)| labels));
    let out: Vec<_> = label_in_order(events.into_iter(), f, 4, 0).collect();
    assert_eq!(server.request_count(), 1);
    assert_eq!(m.usage().requests, 1);
    assert_eq!(out.len(), 1);
    let Err(PipelineError::Label(f)) = &out[0] else {
        panic!("expected a labeling failure, got {:?}", out[0]);
    };
    assert_eq!(f.step, 1);
    assert!(
        f.message.contains("calibration request (the spec's examples): HTTP 501 after 1 attempt(s): an HTML page: \"Error response\": Error code: 501"),
        "{f}"
    );
}

#[test]
fn a_cached_text_sends_no_request() {
    let server = TestServer::start(|req, _| answer(req));
    let dir = std::env::temp_dir().join(format!("trac-embed-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cached = CachedEmbeddings::new(model(&server, 0), &dir).unwrap();
    let req = EmbedRequest::new(vec!["take knife".into(), "examine apple".into()]);
    let a = cached.embed(&req).unwrap();
    assert_eq!(server.request_count(), 1);
    // Same texts: from the disk; one new text: one request with it alone.
    let b = cached.embed(&req).unwrap();
    assert_eq!(a, b);
    assert_eq!(server.request_count(), 1);
    assert_eq!(cached.usage().cache_hits, 2);
    let c = cached
        .embed(&EmbedRequest::new(vec![
            "take knife".into(),
            "apple".into(),
        ]))
        .unwrap();
    assert_eq!(c[1], vec![0.0, 0.0, 0.0, 1.0, 1.0]);
    assert_eq!(server.request_count(), 2);
    assert_eq!(server.requests()[1]["input"], json!(["apple"]));
    // A labeler over a warm cache asks nothing at all.
    let warm: Arc<dyn ChatModel> =
        Arc::new(CachedEmbeddings::new(model(&server, 0), &dir).unwrap());
    labeler(Arc::clone(&warm), Method::Prototype)
        .label_step_scored(&step(1, "take knife"), &[])
        .unwrap();
    let asked = server.request_count();
    labeler(warm, Method::Prototype)
        .label_step_scored(&step(1, "take knife"), &[])
        .unwrap();
    assert_eq!(server.request_count(), asked);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_embeddings_model_refuses_to_chat_and_a_chat_model_to_embed() {
    let server = TestServer::start(|req, _| answer(req));
    let m = model(&server, 0);
    let err = m
        .complete(&ChatRequest::new(vec![Message::user("hi")]))
        .unwrap_err();
    assert!(err.to_string().contains("embeddings model"), "{err}");
    assert_eq!(server.request_count(), 0);
}

#[test]
fn vectors_that_cannot_be_compared_are_a_failure_not_a_silent_false() {
    // Calibration gets 5-dimensional vectors; a step's vector has 3: the margins would be
    // meaningless (every proposition false), so labeling the step fails, naming the cause.
    let server = TestServer::start(|req, k| {
        if k == 0 {
            return answer(req);
        }
        let n = req["input"].as_array().unwrap().len();
        let data: Vec<Value> = (0..n)
            .map(|i| json!({"index": i, "embedding": [1.0, 0.0, 1.0]}))
            .collect();
        Reply::Json(json!({"data": data}))
    });
    let l = labeler(Arc::new(model(&server, 0)), Method::Prototype);
    let e = l
        .label_step_scored(&step(1, "take knife"), &[])
        .unwrap_err();
    assert!(
        e.message
            .contains("vector 0 has 3 dimensions where the model's earlier vectors had 5"),
        "{}",
        e.message
    );

    // All-zero vectors: refused at the first request.
    let server = TestServer::start(|req, _| {
        let n = req["input"].as_array().unwrap().len();
        let data: Vec<Value> = (0..n)
            .map(|i| json!({"index": i, "embedding": [0.0, 0.0]}))
            .collect();
        Reply::Json(json!({"data": data}))
    });
    let l = labeler(Arc::new(model(&server, 0)), Method::Prototype);
    let e = l
        .label_step_scored(&step(1, "take knife"), &[])
        .unwrap_err();
    assert!(
        e.message.contains("all zeros or not finite"),
        "{}",
        e.message
    );
}
