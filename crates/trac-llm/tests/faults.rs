//! The OpenAI-compatible client and the LLM labeler against a loopback HTTP server serving
//! scripted answers and faults: every fault ends in a retry or a clear error naming the step, and
//! retries are bounded in count.

mod support;

use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::spec;
use trac_llm::cache::CachedModel;
use trac_llm::labeler::{
    AnswerFormat, HybridLabeler, LabelSource, LabelerMode, LlmLabeler, LlmLabelerConfig,
};
use trac_llm::model::{ChatModel, ChatRequest, Message, ModelError};
use trac_llm::openai::{ApiKey, OpenAiConfig, OpenAiModel};
use trac_llm::pipeline::{label_in_order, LabelFn, PipelineError};
use trac_llm::retry::RetryPolicy;
use trac_llm::testserver::{self, completion, prompt_step, Reply, TestServer};
use trac_runtime::label::labeler::RuleLabeler;
use trac_runtime::trace::Event;
use trac_spec::spec::{LabelerChoice, Spec};

fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_total: Duration::from_secs(60),
    }
}

fn model(server: &TestServer, timeout_ms: u64, retries: u32) -> OpenAiModel {
    let mut c = OpenAiConfig::new(server.base_url(), "test-model");
    c.timeout = Duration::from_millis(timeout_ms);
    c.retry = fast_retries(retries);
    OpenAiModel::new(c).unwrap()
}

fn ask(m: &dyn ChatModel, n: usize) -> Result<Vec<String>, ModelError> {
    let mut req = ChatRequest::new(vec![Message::user("hello")]);
    req.n = n;
    req.seed = Some(100);
    req.tag = Some("test request".into());
    m.complete(&req)
        .map(|r| r.choices.into_iter().map(|c| c.content).collect())
}

/// The answer the rule labeler gives for the step in `request`, as the LLM labeler's JSON.
fn rule_answer(spec: &Spec, request: &Value) -> String {
    testserver::rule_answer(spec, &RuleLabeler::new(spec).unwrap(), request)
        .expect("a labeling request")
}

fn event(step: usize, text: &str) -> Event {
    Event {
        step,
        line: step,
        output: Some(text.into()),
        raw: text.into(),
        ..Event::default()
    }
}

fn llm_labeler(m: Arc<dyn ChatModel>, retries: u32) -> LlmLabeler {
    let config = LlmLabelerConfig {
        answer_retries: retries,
        ..LlmLabelerConfig::default()
    };
    LlmLabeler::new(m, spec().propositions, false, config)
}

#[test]
fn labels_come_from_the_answer_and_the_prompt_has_the_window() {
    let s = spec();
    let server = TestServer::start(move |req, _| Reply::content(&rule_answer(&s, req)));
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 5000, 0));
    let l = llm_labeler(m.clone(), 0);
    let history: Vec<Event> = (1..=6).map(|i| event(i, &format!("wait {i}"))).collect();
    let labels = l
        .label_step(&event(7, "look, then take the red knife"), &history)
        .unwrap();
    assert_eq!(labels, ["look", "take(red knife)"]);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let user = reqs[0]["messages"][1]["content"].as_str().unwrap();
    // The window is the last 4 steps by default.
    assert!(!user.contains("step 2: wait 2") && user.contains("step 3: wait 3"));
    assert!(user.contains("step 6: wait 6"));
    assert!(user.contains("the agent takes the {item}"), "{user}");
    assert_eq!(reqs[0]["model"], "test-model");
    assert_eq!(reqs[0]["response_format"]["type"], "json_object");
    let u = m.usage();
    assert_eq!(
        (u.requests, u.prompt_tokens, u.completion_tokens),
        (1, 10, 5)
    );
}

#[test]
fn the_answer_schema_is_sent_in_the_chosen_style() {
    let s = spec();
    let server = TestServer::start(move |req, _| Reply::content(&rule_answer(&s, req)));
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 5000, 0));
    for format in [
        AnswerFormat::JsonSchema,
        AnswerFormat::JsonObjectSchema,
        AnswerFormat::Text,
    ] {
        let config = LlmLabelerConfig {
            answer_format: format,
            ..LlmLabelerConfig::default()
        };
        let l = LlmLabeler::new(m.clone(), spec().propositions, false, config);
        assert_eq!(l.label_step(&event(1, "look"), &[]).unwrap(), ["look"]);
    }
    let want = json!({
        "type": "object",
        "properties": {"look": {"type": "boolean"}, "take": {"type": "array", "items": {"type": "string"}, "maxItems": 8}},
        "required": ["look", "take"],
        "additionalProperties": false,
    });
    let reqs = server.requests();
    assert_eq!(reqs[0]["response_format"]["type"], "json_schema");
    assert_eq!(reqs[0]["response_format"]["json_schema"]["schema"], want);
    assert_eq!(
        reqs[1]["response_format"],
        json!({"type": "json_object", "schema": want})
    );
    assert!(reqs[2].get("response_format").is_none());
}

#[test]
fn slow_answer_past_the_timeout_is_retried() {
    let server = TestServer::start(|_, k| {
        if k == 0 {
            Reply::Delay(
                Duration::from_millis(1500),
                Box::new(Reply::content("late")),
            )
        } else {
            Reply::content("on time")
        }
    });
    let m = model(&server, 300, 3);
    assert_eq!(ask(&m, 1).unwrap(), ["on time"]);
    assert_eq!(server.request_count(), 2);
    assert_eq!(m.usage().retries, 1);
}

#[test]
fn a_server_that_never_answers_in_time_is_a_timeout_error_after_bounded_retries() {
    let server = TestServer::start(|_, _| {
        Reply::Delay(
            Duration::from_millis(1200),
            Box::new(Reply::content("late")),
        )
    });
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 200, 2));
    let l = llm_labeler(m, 2);
    let err = l.label_step(&event(5, "look"), &[]).unwrap_err();
    assert_eq!((err.step, err.line), (5, 5));
    assert!(err.to_string().starts_with("step 5 (line 5): "), "{err}");
    assert!(
        err.message.contains("no answer within 0.2 s, 3 attempt(s)"),
        "{err}"
    );
    // One request and two retries, no answer retries (the model failed, not the answer).
    assert_eq!(server.request_count(), 3);
}

#[test]
fn status_429_waits_for_retry_after() {
    let server = TestServer::start(|_, k| {
        if k == 0 {
            Reply::Status {
                code: 429,
                headers: vec![("Retry-After".into(), "1".into())],
                body: "{\"error\": \"rate limited\"}".into(),
            }
        } else {
            Reply::content("ok")
        }
    });
    let m = model(&server, 5000, 3);
    let t = Instant::now();
    assert_eq!(ask(&m, 1).unwrap(), ["ok"]);
    // The backoff alone would wait at most 20 ms: the server's Retry-After was honoured.
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(server.request_count(), 2);
}

#[test]
fn retry_after_beyond_the_time_budget_ends_the_retries() {
    let server = TestServer::start(|_, _| Reply::Status {
        code: 429,
        headers: vec![("Retry-After".into(), "3600".into())],
        body: "slow down".into(),
    });
    let m = model(&server, 5000, 5);
    let err = ask(&m, 1).unwrap_err();
    assert_eq!(
        err,
        ModelError::Status {
            request: "test request".into(),
            status: 429,
            attempts: 1,
            body: "slow down".into()
        }
    );
    assert_eq!(server.request_count(), 1);
}

#[test]
fn server_errors_are_retried_a_bounded_number_of_times() {
    let server = TestServer::start(|_, k| {
        if k < 2 {
            Reply::Status {
                code: 500,
                headers: vec![],
                body: "oops".into(),
            }
        } else {
            Reply::content("fine")
        }
    });
    let m = model(&server, 5000, 4);
    assert_eq!(ask(&m, 1).unwrap(), ["fine"]);
    assert_eq!(server.request_count(), 3);

    let server = TestServer::start(|_, _| Reply::Status {
        code: 503,
        headers: vec![],
        body: "down".into(),
    });
    let m = model(&server, 5000, 3);
    let err = ask(&m, 1).unwrap_err();
    assert!(
        matches!(
            &err,
            ModelError::Status {
                status: 503,
                attempts: 4,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(server.request_count(), 4);
}

#[test]
fn client_errors_are_not_retried() {
    let server = TestServer::start(|_, _| Reply::Status {
        code: 404,
        headers: vec![],
        body: "{\"error\": \"model not found\"}".into(),
    });
    let m = model(&server, 5000, 4);
    let err = ask(&m, 1).unwrap_err();
    assert!(err.to_string().contains("HTTP 404"), "{err}");
    assert!(err.to_string().contains("model not found"), "{err}");
    assert_eq!(server.request_count(), 1);
}

/// An HTML error page as Python's `http.server` answers a POST (HTTP 501), its message 500
/// `x`s.
fn html_page() -> String {
    format!(
        "<!DOCTYPE HTML>\n<html>\n    <head>\n        <title>Error response</title>\n<p>{}</p>",
        "x".repeat(500)
    )
}

/// The error body quoted for [`html_page`]: its title and text, 200 characters in all
/// (`an HTML page: "Error response": ` is 32), then `…`.
fn html_snippet() -> String {
    format!("an HTML page: \"Error response\": {}…", "x".repeat(168))
}

#[test]
fn refused_requests_are_not_retried_and_quote_one_short_line() {
    // A request the server refuses gets the same answer again: 400, 401, 403, 404, 501.
    for code in [400, 401, 403, 404, 501] {
        let server = TestServer::start(move |_, _| Reply::Status {
            code,
            headers: vec![],
            body: html_page(),
        });
        let m = model(&server, 5000, 4);
        let err = ask(&m, 1).unwrap_err();
        // No such endpoint (404, 501): perhaps not the server's /v1 root.
        let hint = match code {
            404 | 501 => format!(
                " (POST {}: is the base URL the server's OpenAI-compatible /v1 root?)",
                m.url()
            ),
            _ => String::new(),
        };
        assert_eq!(
            err.to_string(),
            format!(
                "test request: HTTP {code} after 1 attempt(s): {}{hint}",
                html_snippet()
            )
        );
        assert_eq!(server.request_count(), 1, "HTTP {code}");
    }
    // An empty body says so.
    let server = TestServer::start(|_, _| Reply::Status {
        code: 404,
        headers: vec![],
        body: String::new(),
    });
    let m = model(&server, 5000, 0);
    let err = ask(&m, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "test request: HTTP 404 after 1 attempt(s): (empty body) (POST {}/chat/completions: is the base URL the server's OpenAI-compatible /v1 root?)",
            server.base_url()
        )
    );
    assert_eq!(m.url(), format!("{}/chat/completions", server.base_url()));
    // A 502 is still retried (4 retries: 5 calls), its page quoted alike.
    let server = TestServer::start(|_, _| Reply::Status {
        code: 502,
        headers: vec![],
        body: html_page(),
    });
    let err = ask(&model(&server, 5000, 4), 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "test request: HTTP 502 after 5 attempt(s): {}",
            html_snippet()
        )
    );
    assert_eq!(server.request_count(), 5);
}

#[test]
fn malformed_and_truncated_bodies_are_retried() {
    let server = TestServer::start(|_, k| match k {
        0 => Reply::malformed_json(),
        1 => Reply::truncated("half"),
        2 => Reply::Close,
        _ => Reply::content("whole"),
    });
    let m = model(&server, 5000, 4);
    assert_eq!(ask(&m, 1).unwrap(), ["whole"]);
    assert_eq!(server.request_count(), 4);

    let server = TestServer::start(|_, _| Reply::truncated("half"));
    let m = model(&server, 5000, 2);
    let err = ask(&m, 1).unwrap_err();
    assert!(
        matches!(err, ModelError::Connection { attempts: 3, .. }),
        "{err}"
    );
}

#[test]
fn an_answer_naming_an_unknown_proposition_is_asked_again() {
    let s = spec();
    let server = TestServer::start(move |req, k| {
        if k == 0 {
            Reply::content("{\"look\": true, \"fly\": true, \"take\": []}")
        } else {
            Reply::content(&rule_answer(&s, req))
        }
    });
    let l = llm_labeler(Arc::new(model(&server, 5000, 0)), 2);
    assert_eq!(
        l.label_step(&event(3, "take apple"), &[]).unwrap(),
        ["take(apple)"]
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    // The second request shows the bad answer and why it was rejected.
    let msgs = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[2]["role"], "assistant");
    assert!(msgs[3]["content"]
        .as_str()
        .unwrap()
        .contains("unknown proposition `fly`"));
    assert!(reqs[1]["temperature"].as_f64().unwrap() > 0.0);
}

#[test]
fn answers_that_stay_malformed_fail_the_step_and_never_become_false() {
    for (answer, why) in [
        (
            "{\"look\": true, \"fly\": true, \"take\": []}",
            "unknown proposition `fly`",
        ),
        ("{\"look\": true}", "no value for proposition `take`"),
        (
            "{\"look\": 3, \"take\": []}",
            "`look`: expected true or false",
        ),
        (
            "{\"look\": false, \"take\": true}",
            "expected a list of values of item",
        ),
        ("I think the agent looks.", "holds no JSON object"),
        ("{\"look\": tru", "holds no JSON object"),
    ] {
        let server = TestServer::start(move |_, _| Reply::content(answer));
        let l = llm_labeler(Arc::new(model(&server, 5000, 0)), 2);
        let err = l.label_step(&event(9, "look"), &[]).unwrap_err();
        assert_eq!(err.step, 9);
        assert!(err.message.contains(why), "{answer}: {err}");
        assert!(err.message.contains("after 3 attempt(s)"), "{err}");
        assert_eq!(server.request_count(), 3, "{answer}");
    }
}

#[test]
fn lenient_answers_are_read() {
    let server = TestServer::start(|_, _| {
        Reply::content("```json\n{\"look\": \"yes\", \"take(item)\": \"The  Knife\"}\n```")
    });
    let l = llm_labeler(Arc::new(model(&server, 5000, 0)), 0);
    assert_eq!(
        l.label_step(&event(1, "x"), &[]).unwrap(),
        ["look", "take(knife)"]
    );
}

#[test]
fn n_rejected_by_the_server_is_drawn_by_single_calls() {
    let server = TestServer::start(|req, _| {
        if req.get("n").is_some() {
            Reply::Status {
                code: 400,
                headers: vec![],
                body: "{\"error\": \"n > 1 is not supported\"}".into(),
            }
        } else {
            Reply::content(&format!("seed {}", req["seed"]))
        }
    });
    let m = model(&server, 5000, 0);
    assert_eq!(ask(&m, 3).unwrap(), ["seed 100", "seed 101", "seed 102"]);
    assert_eq!(server.request_count(), 4);
    // Remembered: the next request goes straight to single calls.
    assert_eq!(ask(&m, 2).unwrap(), ["seed 100", "seed 101"]);
    assert_eq!(server.request_count(), 6);
}

#[test]
fn fewer_choices_than_asked_are_completed_by_single_calls() {
    let server = TestServer::start(|req, _| Reply::content(&format!("seed {}", req["seed"])));
    let m = model(&server, 5000, 0);
    assert_eq!(ask(&m, 3).unwrap(), ["seed 100", "seed 101", "seed 102"]);
    let reqs = server.requests();
    assert_eq!(reqs[0]["n"], 3);
    assert!(reqs[1].get("n").is_none());
    assert_eq!(reqs.len(), 3);

    let server = TestServer::start(|_, _| Reply::Json(completion(&["a", "b", "c"])));
    let m = model(&server, 5000, 0);
    assert_eq!(ask(&m, 3).unwrap(), ["a", "b", "c"]);
    assert_eq!(server.request_count(), 1);
}

#[test]
fn requests_in_flight_are_bounded() {
    let now = Arc::new(AtomicUsize::new(0));
    let max = Arc::new(AtomicUsize::new(0));
    let (n2, m2) = (now.clone(), max.clone());
    let server = TestServer::start(move |_, _| {
        let k = n2.fetch_add(1, Ordering::SeqCst) + 1;
        m2.fetch_max(k, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(40));
        n2.fetch_sub(1, Ordering::SeqCst);
        Reply::content("x")
    });
    let mut c = OpenAiConfig::new(server.base_url(), "m");
    c.max_in_flight = 2;
    let m = Arc::new(OpenAiModel::new(c).unwrap());
    std::thread::scope(|s| {
        for _ in 0..8 {
            let m = m.clone();
            s.spawn(move || ask(&*m, 1).unwrap());
        }
    });
    assert_eq!(server.request_count(), 8);
    assert!(
        max.load(Ordering::SeqCst) <= 2,
        "{}",
        max.load(Ordering::SeqCst)
    );
    assert!(max.load(Ordering::SeqCst) >= 1);
}

#[test]
fn the_api_key_is_sent_and_never_shown() {
    let var = "TRAC_LLM_TEST_KEY_1";
    std::env::set_var(var, "sk-very-secret");
    let server = TestServer::start(|_, k| {
        if k == 0 {
            Reply::content("ok")
        } else {
            Reply::Status {
                code: 401,
                headers: vec![],
                body: "{\"error\": \"bad key\"}".into(),
            }
        }
    });
    let mut c = OpenAiConfig::new(server.base_url(), "m");
    c.api_key = ApiKey::from_env(var);
    c.api_key_env = Some(var.into());
    let m = OpenAiModel::new(c).unwrap();
    assert_eq!(ask(&m, 1).unwrap(), ["ok"]);
    let auth: Vec<String> = server.headers()[0]
        .iter()
        .filter(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone())
        .collect();
    assert_eq!(auth, ["Bearer sk-very-secret"]);
    let err = ask(&m, 1).unwrap_err().to_string();
    assert!(err.contains("HTTP 401") && err.contains(var), "{err}");
    assert!(!err.contains("sk-very"), "{err}");
    assert!(!format!("{m:?}").contains("sk-very"));
}

#[test]
fn the_cache_answers_a_rerun_without_requests() {
    let dir = std::env::temp_dir().join(format!("trac-llm-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let server = TestServer::start(move |req, _| {
        c2.fetch_add(1, Ordering::SeqCst);
        Reply::content(&format!("seed {}", req["seed"]))
    });
    let first = CachedModel::new(model(&server, 5000, 0), &dir).unwrap();
    assert_eq!(ask(&first, 2).unwrap(), ["seed 100", "seed 101"]);
    let sent = server.request_count();
    assert_eq!(sent, 2);
    // A new process (a new cache object over the same directory): nothing is asked.
    let second = CachedModel::new(model(&server, 5000, 0), &dir).unwrap();
    assert_eq!(ask(&second, 2).unwrap(), ["seed 100", "seed 101"]);
    assert_eq!(server.request_count(), sent);
    assert_eq!(second.usage().cache_hits, 2);
    // One more sample: only the missing one is asked, with its own seed.
    assert_eq!(
        ask(&second, 3).unwrap(),
        ["seed 100", "seed 101", "seed 102"]
    );
    assert_eq!(server.request_count(), sent + 1);
    // Other parameters are another key.
    let mut req = ChatRequest::new(vec![Message::user("hello")]);
    req.temperature = 0.5;
    req.seed = Some(100);
    second.complete(&req).unwrap();
    assert_eq!(server.request_count(), sent + 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A trace labeled concurrently through a server that fails often (500, 429, truncated and
/// malformed bodies, dropped connections, unknown propositions): every step gets the rule
/// labeler's labels, in order; nothing is lost or invented.
#[test]
fn a_faulty_server_changes_no_label() {
    let s = spec();
    let texts = [
        "look around",
        "take the apple",
        "eat apple",
        "take knife and take fork",
        "look",
        "wait",
        "take the lamp",
        "look at the lamp",
        "drop lamp",
        "take map",
        "sleep",
        "look",
    ];
    let faults = Arc::new(Mutex::new(HashSet::new()));
    let f2 = faults.clone();
    let server = TestServer::start(move |req, k| {
        // Each step's first request fails, in a way that depends on the step.
        let text = prompt_step(req).unwrap();
        let first = f2.lock().unwrap().insert(text.clone());
        if !first {
            return Reply::content(&rule_answer(&s, req));
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
            _ => Reply::content("{\"look\": true, \"jump\": false, \"take\": []}"),
        }
    });
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 5000, 3));
    let labeler = Arc::new(
        HybridLabeler::new(
            &[&spec()],
            LabelerMode::Llm,
            Some(m),
            &LlmLabelerConfig::default(),
            false,
        )
        .unwrap(),
    );
    let events: Vec<Result<Event, String>> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Ok(event(i + 1, t)))
        .collect();
    let l2 = labeler.clone();
    let f: Arc<LabelFn<Vec<String>>> =
        Arc::new(move |e: &Event, h: &[Event]| l2.label_step(e, h).map(|l| l.names()));
    let out: Vec<(Event, Vec<String>)> = label_in_order(events.into_iter(), f, 3, 2)
        .map(Result::unwrap)
        .collect();
    let rules = RuleLabeler::new(&spec()).unwrap();
    assert_eq!(out.len(), texts.len());
    for (k, (e, labels)) in out.iter().enumerate() {
        assert_eq!(e.step, k + 1);
        assert_eq!(labels, &rules.label_text(texts[k]), "step {}", k + 1);
    }
    let distinct: HashSet<&str> = texts.iter().copied().collect();
    assert_eq!(faults.lock().unwrap().len(), distinct.len());
}

#[test]
fn a_labeling_failure_ends_the_stream_at_its_step() {
    let s = spec();
    let server = TestServer::start(move |req, _| {
        if prompt_step(req).unwrap() == "BAD" {
            Reply::content("{\"fly\": true}")
        } else {
            Reply::content(&rule_answer(&s, req))
        }
    });
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 5000, 0));
    let labeler = Arc::new(
        HybridLabeler::new(
            &[&spec()],
            LabelerMode::Llm,
            Some(m),
            &LlmLabelerConfig::default(),
            false,
        )
        .unwrap(),
    );
    let events: Vec<Result<Event, String>> = ["look", "take a", "BAD", "look", "look"]
        .iter()
        .enumerate()
        .map(|(i, t)| Ok(event(i + 1, t)))
        .collect();
    let f: Arc<LabelFn<Vec<String>>> =
        Arc::new(move |e: &Event, h: &[Event]| labeler.label_step(e, h).map(|l| l.names()));
    let out: Vec<_> = label_in_order(events.into_iter(), f, 2, 1).collect();
    assert_eq!(out.len(), 3);
    match &out[2] {
        Err(PipelineError::Label(f)) => {
            assert_eq!(f.step, 3);
            assert!(f.message.contains("unknown proposition `fly`"), "{f}");
        }
        other => panic!("expected a labeling failure at step 3, got {other:?}"),
    }
}

#[test]
fn a_refused_request_stops_the_labeling_after_the_requests_in_flight() {
    // A web server that is not a model server (HTTP 501, an HTML page) and 4 steps labeled at
    // once: the first 4 requests are held until all 4 have come, then refused. Nothing is
    // retried and no later step is asked: 4 requests for the 20 steps, and the stream is the
    // first step's failure, quoting the page by its title and text.
    let gate = Arc::new(testserver::Gate::new(4));
    let g = Arc::clone(&gate);
    let server = TestServer::start(move |_, _| {
        g.wait();
        testserver::python_http_server_501()
    });
    let mut c = OpenAiConfig::new(server.base_url(), "test-model");
    c.retry = fast_retries(3);
    c.max_in_flight = 4;
    let m: Arc<dyn ChatModel> = Arc::new(OpenAiModel::new(c).unwrap());
    let labeler = Arc::new(
        HybridLabeler::new(
            &[&spec()],
            LabelerMode::Llm,
            Some(Arc::clone(&m)),
            &LlmLabelerConfig::default(),
            false,
        )
        .unwrap(),
    );
    let events: Vec<Result<Event, String>> = (1..=20).map(|i| Ok(event(i, "look"))).collect();
    let f: Arc<LabelFn<Vec<String>>> =
        Arc::new(move |e: &Event, h: &[Event]| labeler.label_step(e, h).map(|l| l.names()));
    let out: Vec<_> = label_in_order(events.into_iter(), f, 4, 1).collect();
    assert_eq!(server.request_count(), 4);
    assert_eq!(m.usage().requests, 4);
    assert_eq!(out.len(), 1);
    let Err(PipelineError::Label(f)) = &out[0] else {
        panic!("expected a labeling failure, got {:?}", out[0]);
    };
    assert_eq!(f.step, 1);
    assert!(
        f.message.ends_with(&format!(
            "HTTP 501 after 1 attempt(s): an HTML page: \"Error response\": Error code: 501 Message: Unsupported method ('POST'). Error code explanation: 501 - Server does not support this operation. (POST {}/chat/completions: is the base URL the server's OpenAI-compatible /v1 root?)",
            server.base_url()
        )),
        "{f}"
    );
}

#[test]
fn hybrid_and_spec_modes_pick_the_labeling_function_per_proposition() {
    // The LLM says `look` always holds and `take` holds for "llm-value".
    // (only the propositions asked about: an answer about others is malformed).
    let server = TestServer::start(|req, _| {
        let user = req["messages"][1]["content"].as_str().unwrap();
        let mut answer = serde_json::Map::new();
        if user.contains("- \"look\"") {
            answer.insert("look".into(), json!(true));
        }
        if user.contains("- \"take\"") {
            answer.insert("take".into(), json!(["llm-value"]));
        }
        Reply::content(&Value::Object(answer).to_string())
    });
    let m: Arc<dyn ChatModel> = Arc::new(model(&server, 5000, 0));
    let cfg = LlmLabelerConfig::default();
    let ev = event(1, "take the box");
    let names = |mode: LabelerMode, sp: &Spec| {
        HybridLabeler::new(&[sp], mode, Some(m.clone()), &cfg, false)
            .unwrap()
            .label_step(&ev, &[])
            .unwrap()
            .names()
    };
    let sp = spec();
    assert_eq!(names(LabelerMode::Rules, &sp), ["take(box)"]);
    assert_eq!(names(LabelerMode::Llm, &sp), ["look", "take(llm-value)"]);
    // Hybrid: the rule first (take holds by rule), the LLM where the rule does not hold (look).
    assert_eq!(names(LabelerMode::Hybrid, &sp), ["look", "take(box)"]);
    let mut hybrid = HybridLabeler::new(&[&sp], LabelerMode::Hybrid, Some(m.clone()), &cfg, false)
        .unwrap()
        .label_step(&ev, &[])
        .unwrap();
    hybrid.labels.sort();
    assert_eq!(
        hybrid.labels,
        [
            ("look".to_string(), LabelSource::Llm),
            ("take(box)".to_string(), LabelSource::Rule)
        ]
    );
    assert_eq!(hybrid.describe(), "look=true (llm), take=box (rule)");
    let mut sp2 = spec();
    sp2.propositions[0].labeler = LabelerChoice::Llm;
    assert_eq!(names(LabelerMode::Spec, &sp2), ["look", "take(box)"]);
    assert_eq!(names(LabelerMode::Spec, &spec()), ["take(box)"]);
    // No model while the LLM is needed: a clear error.
    let err = HybridLabeler::new(&[&sp2], LabelerMode::Spec, None, &cfg, false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("look") && err.contains("--model"), "{err}");
}
