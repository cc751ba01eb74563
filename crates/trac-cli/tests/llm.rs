//! `trac audit --labeler llm` and `trac label-eval` end to end, through a loopback
//! OpenAI-compatible HTTP server (real HTTP on 127.0.0.1) and through command models.

use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use trac_llm::testserver::{
    prompt_step, python_http_server_501, rule_answer, Gate, Reply, TestServer,
};
use trac_runtime::label::labeler::RuleLabeler;
use trac_spec::spec::Spec;

mod support;
use support::{stderr, stdout, temp_file, trac, ROOT};

fn jsonl(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl output is JSON"))
        .collect()
}

/// The shared paper traces (always `Some`); a failure when missing (the tests calling it are
/// ignored then, outside CI).
fn shared(sub: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(ROOT)
        .join("../shared/data/paper-traces")
        .join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    // Tests calling this are ignored (`cfg(no_shared_logs)`, build/needs.rs) when the logs
    // were missing at build time outside CI: here they are missing under CI=true, or removed since.
    panic!(
        "the shared paper traces are missing at {} (under CI=true they must be beside the repository)",
        dir.display()
    )
}

fn load_spec(path: &str) -> Spec {
    Spec::from_path(&PathBuf::from(ROOT).join(path)).unwrap()
}

/// A server answering every labeling request with the rule labeler's labels of `spec`.
fn rule_server(spec_path: &str) -> TestServer {
    let spec = load_spec(spec_path);
    let rules = RuleLabeler::new(&spec).unwrap();
    TestServer::start(move |req, _| match rule_answer(&spec, &rules, req) {
        Some(a) => Reply::content(&a),
        None => Reply::Status {
            code: 400,
            headers: vec![],
            body: "not a labeling request".into(),
        },
    })
}

fn sorted_files(dir: &PathBuf) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".txt"))
        .collect();
    v.sort();
    v
}

/// The audit of shared logs through the HTTP server whose answers are the rule labels gives
/// the rule labeler's verdicts, line for line.
#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn llm_labels_equal_to_rule_labels_give_the_same_verdicts_on_shared_logs() {
    for (sub, spec_path) in [
        ("textworld", "examples/specs/textworld.ron"),
        ("scienceworld", "examples/specs/scienceworld.ron"),
        ("trucks", "examples/specs/trucks.ron"),
    ] {
        let Some(dir) = shared(sub) else { return };
        let files = sorted_files(&dir);
        // All TextWorld logs; the first two of the others.
        let files: Vec<&str> = files
            .iter()
            .map(String::as_str)
            .take(if sub == "textworld" { 6 } else { 2 })
            .collect();
        let mut rules_args = vec!["audit", "--spec", spec_path, "--format", "jsonl"];
        rules_args.extend(&files);
        let by_rules = trac(&rules_args);
        let server = rule_server(spec_path);
        let url = server.base_url();
        let mut llm_args = rules_args.clone();
        llm_args.extend([
            "--labeler",
            "llm",
            "--model",
            "rule-echo",
            "--base-url",
            &url,
            "--concurrency",
            "3",
        ]);
        let by_llm = trac(&llm_args);
        assert_eq!(
            by_llm.status.code(),
            by_rules.status.code(),
            "{}",
            stderr(&by_llm)
        );
        assert!(!stdout(&by_rules).is_empty());
        assert_eq!(stdout(&by_llm), stdout(&by_rules), "{sub}");
        let steps: usize = files
            .iter()
            .map(|f| {
                std::fs::read_to_string(f)
                    .unwrap()
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .count()
            })
            .sum();
        // One request per step.
        assert_eq!(server.request_count(), steps, "{sub}");
        assert!(stderr(&by_llm).contains(&format!("model rule-echo: {steps} request(s)")));
    }
}

/// The same through a server that fails each step's first request in one of six ways.
#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn faults_change_no_verdict() {
    let Some(dir) = shared("textworld") else {
        return;
    };
    let log = dir.join("out1.txt").display().to_string();
    let spec_path = "examples/specs/textworld.ron";
    let spec = load_spec(spec_path);
    let rules = RuleLabeler::new(&spec).unwrap();
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let s2 = seen.clone();
    let server = TestServer::start(move |req, k| {
        let key = req["messages"].to_string();
        if !s2.lock().unwrap().insert(key) {
            return Reply::content(&rule_answer(&spec, &rules, req).unwrap());
        }
        match k % 6 {
            0 => Reply::Status {
                code: 500,
                headers: vec![],
                body: "oops".into(),
            },
            1 => Reply::Status {
                code: 429,
                headers: vec![("Retry-After".into(), "0".into())],
                body: "later".into(),
            },
            2 => Reply::truncated("{}"),
            3 => Reply::malformed_json(),
            4 => Reply::Close,
            _ => Reply::content("{\"teleport\": true}"),
        }
    });
    let url = server.base_url();
    let by_rules = trac(&["audit", "--spec", spec_path, "--format", "jsonl", &log]);
    let by_llm = trac(&[
        "audit",
        "--spec",
        spec_path,
        "--format",
        "jsonl",
        &log,
        "--labeler",
        "llm",
        "--model",
        "m",
        "--base-url",
        &url,
    ]);
    assert_eq!(
        by_llm.status.code(),
        by_rules.status.code(),
        "{}",
        stderr(&by_llm)
    );
    assert_eq!(stdout(&by_llm), stdout(&by_rules));
    let steps = std::fs::read_to_string(&log).unwrap().lines().count();
    assert!(server.request_count() > steps);
}

/// A step whose answers stay malformed stops the audit there: exit 2, the error names the step,
/// the verdicts of the steps before it are reported, none after.
#[test]
fn a_web_server_that_is_not_a_model_server_is_one_short_error_and_few_requests() {
    // `python3 -m http.server` answers every POST with HTTP 501 and an HTML page. With 4 steps
    // labeled at once the first 4 requests are held until all 4 have come: those 4 are the
    // requests sent (none retried, no later step asked), the summary counts 4, and the error
    // is printed once, the page quoted by its title and text.
    let gate = Arc::new(Gate::new(4));
    let g = Arc::clone(&gate);
    let server = TestServer::start(move |_, _| {
        g.wait();
        python_http_server_501()
    });
    let t = temp_file("web-server.txt", &"look\n".repeat(20));
    let url = server.base_url();
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/textworld.ron",
        "--labeler",
        "llm",
        "--model",
        "m",
        "--base-url",
        &url,
        "--concurrency",
        "4",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(server.request_count(), 4);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(err.contains("model m: 4 request(s), 0 retried"), "{err}");
    let message = format!(
        "cannot label step 1: labeling request 1: HTTP 501 after 1 attempt(s): an HTML page: \"Error response\": Error code: 501 Message: Unsupported method ('POST'). Error code explanation: 501 - Server does not support this operation. (POST {url}/chat/completions: is the base URL the server's OpenAI-compatible /v1 root?)"
    );
    assert_eq!(err.matches(&message).count(), 1, "{err}");
    assert!(!out.contains(&message), "{out}");
    assert!(
        out.contains(&format!(
            "== {}: not audited (the error is on stderr)",
            t.display()
        )),
        "{out}"
    );
    assert!(!format!("{out}{err}").contains('<'), "{out}{err}");
}

#[test]
fn a_step_that_cannot_be_labeled_is_reported_with_its_step() {
    let spec_path = "examples/specs/textworld.ron";
    let spec = load_spec(spec_path);
    let rules = RuleLabeler::new(&spec).unwrap();
    let server = TestServer::start(move |req, _| {
        if prompt_step(req).as_deref() == Some("drop knife") {
            Reply::content("{\"take\": [], \"unicorn\": true}")
        } else {
            Reply::content(&rule_answer(&spec, &rules, req).unwrap())
        }
    });
    let t = temp_file(
        "stops.txt",
        "go west\ntake knife\ndrop knife\ngo east\ndrop fork\n",
    );
    let url = server.base_url();
    let o = trac(&[
        "audit",
        "--spec",
        spec_path,
        "--format",
        "jsonl",
        t.to_str().unwrap(),
        "--labeler",
        "llm",
        "--model",
        "m",
        "--base-url",
        &url,
        "--concurrency",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("stops.txt:3: cannot label step 3:"), "{err}");
    assert!(err.contains("unknown proposition `unicorn`"), "{err}");
    assert!(
        err.contains("the 2 step(s) read before the error were audited"),
        "{err}"
    );
    let lines = jsonl(&o);
    let verdict_steps: Vec<u64> = lines
        .iter()
        .filter(|v| v.get("end").is_none())
        .map(|v| v["step"].as_u64().unwrap())
        .collect();
    // R4 (G !go) is violated at step 1; nothing at or after step 3 is reported.
    assert!(verdict_steps.contains(&1), "{lines:?}");
    assert!(verdict_steps.iter().all(|&s| s < 3), "{verdict_steps:?}");
    let ends: Vec<&Value> = lines.iter().filter(|v| v["end"] == true).collect();
    assert_eq!(ends.len(), 4);
    assert!(ends
        .iter()
        .all(|e| e["steps"] == 2 && e["error"].as_str().unwrap().contains("step 3")));
}

fn command_model(name: &str, script: &str) -> String {
    let p = temp_file(name, script);
    format!("cmd:sh {}", p.display())
}

const LOOK_SPEC: &str = r#"(
  name: "looks",
  propositions: [(name: "look", description: "the agent looks around", labeler: Llm)],
  properties: [(id: "P1", formula: "G !look")],
)"#;

#[test]
fn a_command_model_labels_the_propositions_the_spec_gives_to_the_llm() {
    let spec = temp_file("looks.ron", LOOK_SPEC);
    let t = temp_file("three.txt", "one\ntwo\nthree\n");
    let model = command_model(
        "always-look.sh",
        "while IFS= read -r line; do\n  printf '%s\\n' '{\"choices\":[{\"message\":{\"content\":\"{\\\"look\\\": true}\"}}],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2}}'\ndone\n",
    );
    // No --labeler flag: the spec's `labeler: Llm` asks the model.
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--format",
        "jsonl",
        "--model",
        &model,
        "--show-labels",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = jsonl(&o);
    let shown: Vec<&Value> = lines.iter().filter(|v| v.get("labels").is_some()).collect();
    assert_eq!(shown.len(), 3);
    assert_eq!(
        shown[0]["labels"],
        json!([{"proposition": "look", "holds": true, "by": "llm"}])
    );
    let violations: Vec<u64> = lines
        .iter()
        .filter(|v| v["verdict"] == "violated" && v.get("end").is_none())
        .map(|v| v["step"].as_u64().unwrap())
        .collect();
    assert_eq!(violations, [1, 2, 3]);
    assert!(
        stderr(&o).contains(
            "3 request(s), 0 retried, 0 answer(s) from the cache, 21 prompt + 6 completion tokens"
        ),
        "{}",
        stderr(&o)
    );
    // --labeler rules overrides the spec: no model is asked, and no labeling rule reads the
    // text, so nothing was understood: the trace is not audited (exit 2), never a clean pass.
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "rules",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not audited"), "{}", stderr(&o));
}

#[test]
fn a_command_model_that_dies_is_an_error_naming_the_step() {
    let spec = temp_file("looks2.ron", LOOK_SPEC);
    let t = temp_file("three2.txt", "one\ntwo\nthree\n");
    let model = command_model(
        "dies.sh",
        "IFS= read -r line\nprintf '%s\\n' '{\"choices\":[{\"message\":{\"content\":\"{\\\"look\\\": false}\"}}]}'\nIFS= read -r line\necho 'out of memory' >&2\nexit 3\n",
    );
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--model",
        &model,
        "--concurrency",
        "1",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("three2.txt:2: cannot label step 2:"), "{err}");
    assert!(err.contains("exit status: 3"), "{err}");
    assert!(err.contains("out of memory"), "{err}");

    let garbage = command_model(
        "garbage.sh",
        "while IFS= read -r line; do echo 'hello there'; done\n",
    );
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--model",
        &garbage,
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot label step 1:"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("the answer is not JSON"),
        "{}",
        stderr(&o)
    );

    let silent = command_model("silent.sh", "while IFS= read -r line; do :; done\n");
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--model",
        &silent,
        "--timeout",
        "0.3",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no answer within 0.3 s"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_cache_makes_a_rerun_free() {
    let spec_path = "examples/specs/textworld.ron";
    let server = rule_server(spec_path);
    let cache = std::env::temp_dir().join(format!("trac-cli-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let url = server.base_url();
    let args = [
        "audit",
        "--spec",
        spec_path,
        "--format",
        "jsonl",
        "examples/traces/textworld-demo.txt",
        "--labeler",
        "llm",
        "--model",
        "m",
        "--base-url",
        &url,
        "--cache",
        cache.to_str().unwrap(),
    ];
    let first = trac(&args);
    let asked = server.request_count();
    assert!(asked > 0);
    let second = trac(&args);
    assert_eq!(server.request_count(), asked, "{}", stderr(&second));
    assert_eq!(stdout(&first), stdout(&second));
    assert!(stderr(&second).contains(&format!(
        "0 request(s), 0 retried, {asked} answer(s) from the cache"
    )));
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn the_api_key_comes_from_the_named_variable_and_is_not_printed() {
    let server = TestServer::start(|_, _| Reply::Status {
        code: 401,
        headers: vec![],
        body: "{\"error\": \"invalid key\"}".into(),
    });
    let spec = temp_file("looks3.ron", LOOK_SPEC);
    let t = temp_file("one.txt", "one\n");
    let url = server.base_url();
    let o = Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args([
            "audit",
            "--spec",
            spec.to_str().unwrap(),
            "--model",
            "m",
            "--base-url",
            &url,
            "--api-key-env",
            "MY_TRAC_KEY",
            t.to_str().unwrap(),
        ])
        .env("MY_TRAC_KEY", "sk-top-secret-42")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        all.contains("HTTP 401") && all.contains("MY_TRAC_KEY"),
        "{all}"
    );
    assert!(!all.contains("sk-top-secret"), "{all}");
    let auth: Vec<String> = server.headers()[0]
        .iter()
        .filter(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone())
        .collect();
    assert_eq!(auth, ["Bearer sk-top-secret-42"]);
}

const EVAL_SPEC: &str = r#"(
  name: "eval",
  propositions: [
    (name: "look", description: "the agent looks", rule: Some(Words("look"))),
    (name: "take", param: Some("item"), description: "the agent takes {item}", rule: Some(Words("take {item}"))),
  ],
  properties: [
    (id: "P1", formula: "G !look"),
    (id: "P2", formula: "forall item: G(take(item) -> X !take(item))"),
  ],
)"#;

/// Reference labels in the trace, a scripted labeler: counts worked out by hand.
#[test]
fn label_eval_counts_on_a_hand_made_trace() {
    let spec = temp_file("eval.ron", EVAL_SPEC);
    let t = temp_file(
        "eval.jsonl",
        "{\"output\": \"a\", \"labels\": [\"look\"]}\n\
         {\"output\": \"b\", \"labels\": [\"take(x)\"]}\n\
         {\"output\": \"c\", \"labels\": [\"take(x)\", \"look\"]}\n\
         {\"output\": \"d\", \"labels\": []}\n",
    );
    // Step a: look (TP). b: look (FP), take x (TP) and y (FP). c: nothing (look FN, take x FN).
    // d: nothing (TN).
    let server = TestServer::start(|req, _| {
        Reply::content(match prompt_step(req).as_deref() {
            Some("a") => "{\"look\": true, \"take\": []}",
            Some("b") => "{\"look\": true, \"take\": [\"x\", \"y\"]}",
            _ => "{\"look\": false, \"take\": []}",
        })
    });
    let url = server.base_url();
    let o = trac(&[
        "label-eval",
        "--spec",
        spec.to_str().unwrap(),
        "--model",
        "m",
        "--base-url",
        &url,
        "--format",
        "json",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["reference"], "trace");
    assert_eq!(v["steps"], 4);
    // Baselines: look is in the reference at a and c, take at b and c: never labeling either
    // is right at 2 of 4 steps, and so is the most frequent answer (a tie). The JSON answers
    // carry no P(yes): no AUC, no threshold. Holds: look as its values; take is said to hold at
    // b only (TP), missed at c (FN): precision 1, recall 0.5; its values x (TP), y (FP), x at c
    // (FN): 0.5, 0.5.
    assert_eq!(
        v["propositions"][0],
        json!({"proposition": "look", "steps": 4, "accuracy": 0.5, "always_false": 0.5,
               "majority": 0.5, "auc": null, "precision": 0.5, "recall": 0.5,
               "no_better_than_always_false": true, "threshold": null,
               "holds": {"tp": 1, "fp": 1, "fn": 1, "tn": 1},
               "value_precision": 0.5, "value_recall": 0.5,
               "tp": 1, "fp": 1, "fn": 1, "tn": 1})
    );
    assert_eq!(
        v["propositions"][1],
        json!({"proposition": "take", "steps": 4, "accuracy": 0.5, "always_false": 0.5,
               "majority": 0.5, "auc": null, "precision": 1.0, "recall": 0.5,
               "no_better_than_always_false": true, "threshold": null,
               "holds": {"tp": 1, "fp": 0, "fn": 1, "tn": 2},
               "value_precision": 0.5, "value_recall": 0.5,
               "tp": 1, "fp": 1, "fn": 1, "tn": 2})
    );
    assert!(v.get("keyword_accuracy").is_none());
    // P1 = G !look: reference violations at 1, 3; labeler's at 1, 2.
    assert_eq!(
        v["properties"][0],
        json!({"property": "P1", "f1_violations": 0.5, "f1_satisfactions": null,
               "violations": {"tp": 1, "fp": 1, "fn": 1, "f1": 0.5},
               "satisfactions": {"tp": 0, "fp": 0, "fn": 0, "f1": null}})
    );
    // P2: the reference takes x at 2 and 3 (a violation at 3 for x); the labeler does not.
    assert_eq!(
        v["properties"][1],
        json!({"property": "P2", "f1_violations": 0.0, "f1_satisfactions": null,
               "violations": {"tp": 0, "fp": 0, "fn": 1, "f1": 0.0},
               "satisfactions": {"tp": 0, "fp": 0, "fn": 0, "f1": null}})
    );

    // The table names the same numbers.
    let o = trac(&[
        "label-eval",
        "--spec",
        spec.to_str().unwrap(),
        "--model",
        "m",
        "--base-url",
        &url,
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("labeler: llm (model m); reference: trace"),
        "{text}"
    );
    let look = text.lines().find(|l| l.starts_with("look ")).unwrap();
    assert_eq!(
        look.split_whitespace().collect::<Vec<_>>(),
        [
            "look", "4", "0.500", "0.500", "0.500", "-", "0.500", "0.500", "0.500", "0.500", "-",
            "*"
        ]
    );
    assert!(text.contains("* = no better than always-false"), "{text}");

    // The paper's per-keyword accuracy: look errs at b and c (1 - 2/4); take's atoms x and y
    // err at b (y) and c (x) (1 - 2/8); all: 1 - 4/12.
    let o = trac(&[
        "label-eval",
        "--spec",
        spec.to_str().unwrap(),
        "--model",
        "m",
        "--base-url",
        &url,
        "--per-keyword",
        "--format",
        "json",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["propositions"][0]["keyword_accuracy"], 0.5);
    assert_eq!(v["propositions"][1]["keyword_accuracy"], 0.75);
    assert_eq!(v["keyword_accuracy"], json!(8.0 / 12.0));
    let p1 = text.lines().find(|l| l.starts_with("P1 ")).unwrap();
    assert_eq!(
        p1.split_whitespace().collect::<Vec<_>>(),
        ["P1", "1", "1", "1", "0.500", "0", "0", "0", "-"]
    );
}

#[test]
fn label_eval_with_the_rules_as_reference() {
    let spec = temp_file("eval2.ron", EVAL_SPEC);
    let t = temp_file("eval2.txt", "look\ntake box\ntake box\nlook twice\n");
    // The rules themselves against the rules: perfect scores.
    let o = trac(&[
        "label-eval",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "rules",
        "--format",
        "json",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["reference"], "rules");
    for p in v["propositions"].as_array().unwrap() {
        assert_eq!(p["accuracy"], 1.0, "{p}");
        assert_eq!(p["fp"].as_u64().unwrap() + p["fn"].as_u64().unwrap(), 0);
    }
    // P1 violated at 1 and 4; P2 violated at 3 (box).
    assert_eq!(
        v["properties"][0]["violations"],
        json!({"tp": 2, "fp": 0, "fn": 0, "f1": 1.0})
    );
    assert_eq!(
        v["properties"][1]["violations"],
        json!({"tp": 1, "fp": 0, "fn": 0, "f1": 1.0})
    );
    // A text trace has no labels to use as the reference.
    let o = trac(&[
        "label-eval",
        "--spec",
        spec.to_str().unwrap(),
        "--labeler",
        "rules",
        "--reference",
        "trace",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("eval2.txt:1: step 1 has no `labels`"),
        "{}",
        stderr(&o)
    );
}

/// `--llm-config FILE` gives defaults for the flags; flags win.
#[test]
fn llm_config_file_and_response_format_flag() {
    let spec_path = "examples/specs/textworld.ron";
    let server = rule_server(spec_path);
    let config = temp_file(
        "llm.json",
        &json!({"model": "from-file", "base_url": server.base_url(), "response_format": "json-object-schema", "window": 1})
            .to_string(),
    );
    let t = temp_file("three3.txt", "take knife\nexamine knife\ngo west\n");
    let o = trac(&[
        "audit",
        "--spec",
        spec_path,
        "--labeler",
        "llm",
        "--llm-config",
        config.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs.iter().all(|r| r["model"] == "from-file"));
    assert!(reqs
        .iter()
        .all(|r| r["response_format"]["type"] == "json_object"));
    assert_eq!(
        reqs[0]["response_format"]["schema"]["required"],
        json!(["take", "examine", "cut", "drop", "go"])
    );
    let o = trac(&[
        "audit",
        "--spec",
        spec_path,
        "--labeler",
        "llm",
        "--llm-config",
        config.to_str().unwrap(),
        "--model",
        "from-flag",
        "--response-format",
        "json-schema",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let reqs = server.requests();
    assert!(reqs[3..].iter().all(|r| r["model"] == "from-flag"));
    assert!(reqs[3..]
        .iter()
        .all(|r| r["response_format"]["type"] == "json_schema"));
    // window 1: the third step's prompt shows only the second as context (steps are labeled
    // concurrently: find the third step's request).
    let user = reqs[3..]
        .iter()
        .map(|r| r["messages"][1]["content"].as_str().unwrap())
        .find(|u| u.contains("Step to label (step 3)"))
        .unwrap();
    assert!(
        user.contains("Earlier steps (oldest first, for context only):\nstep 2: examine knife\n\n"),
        "{user}"
    );
}

#[test]
fn concurrency_and_config_fields_out_of_range_or_of_the_wrong_type_exit_2() {
    let spec = "examples/specs/textworld.ron";
    let trace = "examples/traces/textworld-demo.txt";
    let url = "http://127.0.0.1:9/v1";
    for n in ["0", "100000"] {
        let o = trac(&[
            "audit",
            "--spec",
            spec,
            "--labeler",
            "llm",
            "--model",
            "m",
            "--base-url",
            url,
            "--concurrency",
            n,
            trace,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("concurrency {n}: expected 1 to 256")),
            "{}",
            stderr(&o)
        );
    }
    let cfg = temp_file("bad-config.json", r#"{"model": 5}"#);
    let o = trac(&[
        "audit",
        "--spec",
        spec,
        "--labeler",
        "llm",
        "--llm-config",
        cfg.to_str().unwrap(),
        trace,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("field `model`: expected a string"),
        "{}",
        stderr(&o)
    );
    let cfg = temp_file("unknown-config.json", r#"{"modle": "m"}"#);
    let o = trac(&[
        "audit",
        "--spec",
        spec,
        "--labeler",
        "llm",
        "--llm-config",
        cfg.to_str().unwrap(),
        trace,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("field `modle`: not a field"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn label_eval_of_an_empty_trace_exits_2() {
    let empty = temp_file("empty-trace.txt", "");
    let o = trac(&[
        "label-eval",
        "--spec",
        "examples/specs/textworld.ron",
        "--labeler",
        "rules",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("no step was read"), "{}", stderr(&o));
}
