//! `trac gateway --intervene resample|inject|switch`: the predictive interventions end to end,
//! against the scripted OpenAI-compatible upstream (a real server on 127.0.0.1) and a
//! tool-calling agent on ureq; every log re-audited by the library's audit driver.

mod support;

use serde_json::{json, Value};
use support::*;
use trac_gateway::{Gateway, GatewayOptions, Intervene, Predict, Running, Server};

const KEY: &str = "sk-test-SECRET-4242";
const ASK: &str = "Please move my flight to HAT045 and add a bag, reservation ZFA04Y";
/// The residual of `confirm-before-write` before any reservation was updated, in English.
const RESIDUAL: &str = "for every rid: always, if the assistant calls an update_* tool on reservation rid, then at some earlier or the current step the user confirms";
const FLAKY: &str = "FLAKY: please move my flight to HAT045 and add a bag, reservation ZFA04Y";

fn start_with(o: GatewayOptions) -> Running {
    Server::bind(Gateway::new(&[airline()], o).unwrap())
        .unwrap()
        .spawn()
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The chat requests the upstream was sent.
fn chat_requests(upstream: &Upstream) -> Vec<Value> {
    let seen = upstream.seen.lock().unwrap();
    seen.iter()
        .filter(|s| s.path.ends_with("/chat/completions"))
        .map(|s| s.body.clone())
        .collect()
}

fn options(upstream: &Upstream, intervene: Intervene, log: &std::path::Path) -> GatewayOptions {
    let mut o = GatewayOptions::new(&upstream.base);
    o.listen = "127.0.0.1:0".into();
    o.intervene = intervene;
    o.log = Some(log.to_path_buf());
    o
}

#[test]
fn resample_replaces_an_at_risk_response_by_the_first_one_that_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "rs.jsonl");
    let gw = start_with(options(&upstream, Intervene::Resample, &log));
    // k = 1 (the default): a response's risk is whether it violates. Turn 1 updates without a
    // confirmation (risk 1 > τ = 0.3); asked again, the flaky model asks for one (risk 0).
    let run = run_agent(&gw.base_url(), KEY, Some("rs"), FLAKY);
    assert!(run.ended, "{:?}", run.last);
    assert_eq!(run.calls, 2);
    let last = run.messages.last().unwrap();
    assert_eq!(last["content"], confirm_question("ZFA04Y"));
    assert_eq!(run.last.1["choices"][0]["message"], *last);
    // Turn 0, turn 1 and one more answer of turn 1 (not streamed); no prediction sample.
    let sent = chat_requests(&upstream);
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[2]["messages"], sent[1]["messages"]);
    assert_eq!(sent[2]["stream"], false);
    let a = audit(&airline(), &log);
    assert_eq!(a.violations, 0, "{:?}", a.verdicts);
    assert_eq!(lines(&log).len(), run.messages.len());
    let iv = lines(&temp(&dir, "rs.interventions.jsonl"));
    assert_eq!(iv.len(), 1, "{iv:?}");
    let r = &iv[0];
    assert_eq!(r["kind"], "resample");
    assert_eq!(r["session"], "rs");
    assert_eq!(r["step"], 5);
    assert_eq!(r["properties"], json!(["confirm-before-write"]));
    assert_eq!(r["risks"], json!([1.0]));
    assert_eq!(r["model_calls"], 2);
    assert_eq!(r["chosen"], 1);
    assert_eq!(
        r["replaced"]["tool_calls"][0]["function"]["name"],
        "update_reservation_flights"
    );
    assert_eq!(r["by"], *last);
    assert_eq!(r["candidates"][0]["risks"][0]["p"], 0.0);
    assert_eq!(r["residuals"], json!([RESIDUAL]));
    let s = sessions(&gw.addr().to_string());
    assert_eq!(s["sessions"][0]["interventions"], 1);
    assert_eq!(s["sessions"][0]["violations"], json!([]));
}

/// The scripted conversation up to turn `turn` (its tool results `ok`), opening with `first_user`.
fn conversation(first_user: &str, turn: usize) -> Vec<Value> {
    let mut messages = vec![
        json!({"role": "system", "content": "You are an airline agent."}),
        json!({"role": "user", "content": first_user}),
    ];
    for t in 0..turn {
        let m = scripted_message(t, "ZFA04Y");
        let id = m["tool_calls"][0]["id"].clone();
        messages.push(m);
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": "ok"}));
    }
    messages
}

fn post(base_url: &str, session: &str, body: &Value) -> (u16, String) {
    let mut r = http()
        .post(&format!("{base_url}/chat/completions"))
        .header("Content-Type", "application/json")
        .header("X-Trac-Session", session)
        .send(body.to_string())
        .unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap())
}

#[test]
fn resample_streams_the_chosen_answer_to_a_streaming_client() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "st.jsonl");
    let gw = start_with(options(&upstream, Intervene::Resample, &log));
    let body = json!({"model": "scripted", "messages": conversation(FLAKY, 1), "stream": true, "tools": tools()});
    let (status, text) = post(&gw.base_url(), "st", &body);
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    let mut asm = trac_gateway::stream::Assembler::default();
    asm.feed(text.as_bytes());
    assert_eq!(
        asm.message().unwrap()["content"],
        confirm_question("ZFA04Y")
    );
    let sent = chat_requests(&upstream);
    assert_eq!(sent.len(), 2);
    assert_eq!(
        (sent[0]["stream"].clone(), sent[1]["stream"].clone()),
        (json!(true), json!(false))
    );
    let iv = lines(&temp(&dir, "st.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["model_calls"], 2);
    assert_eq!(audit(&airline(), &log).violations, 0);
}

#[test]
fn inject_asks_again_with_the_residual_in_english_in_the_system_message() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "inj.jsonl");
    let gw = start_with(options(&upstream, Intervene::Inject, &log));
    let body = json!({"model": "scripted", "messages": conversation(ASK, 1), "tools": tools()});
    let (status, text) = post(&gw.base_url(), "inj", &body);
    assert_eq!(status, 200, "{text}");
    let sent = chat_requests(&upstream);
    assert_eq!(sent.len(), 2);
    // The same request, its system message ending with the warning; nothing else changed.
    let system = sent[1]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("You are an airline agent.\n\n"),
        "{system}"
    );
    assert!(
        system.ends_with(&format!("Make sure that {RESIDUAL}.")),
        "{system}"
    );
    assert_eq!(
        sent[1]["messages"].as_array().unwrap()[1..],
        sent[0]["messages"].as_array().unwrap()[1..]
    );
    assert_eq!(sent[1]["stream"], false);
    // The scripted model updates again: that answer is taken (inject asks once), and the
    // record says it is still at risk.
    let iv = lines(&temp(&dir, "inj.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["kind"], "inject");
    assert_eq!(iv[0]["step"], 5);
    assert_eq!(iv[0]["residuals"], json!([RESIDUAL]));
    assert_eq!(iv[0]["model_calls"], 2);
    assert_eq!(iv[0]["chosen"], 1);
    assert_eq!(iv[0]["candidates"][0]["risks"][0]["p"], 1.0);
    // The agent's history is the agent's: the log holds its messages and the answer taken.
    let logged = lines(&log);
    assert_eq!(logged[0]["content"], "You are an airline agent.");
    assert_eq!(logged.len(), 5);
}

#[test]
fn switch_asks_the_substitute_model() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "sw.jsonl");
    let mut o = options(&upstream, Intervene::Switch, &log);
    o.substitute_model = Some("careful-model".into());
    let gw = start_with(o);
    let body = json!({"model": "scripted", "messages": conversation(ASK, 1), "tools": tools()});
    let (status, text) = post(&gw.base_url(), "sw", &body);
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    // The substitute's completion reaches the agent (the scripted server echoes the model).
    assert_eq!(answer["model"], "careful-model");
    let sent = chat_requests(&upstream);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0]["model"], "scripted");
    assert_eq!(sent[1]["model"], "careful-model");
    assert_eq!(sent[1]["messages"], sent[0]["messages"]);
    let iv = lines(&temp(&dir, "sw.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["kind"], "switch");
    assert_eq!(iv[0]["model_calls"], 2);
    assert_eq!(iv[0]["properties"], json!(["confirm-before-write"]));
    let s = sessions(&gw.addr().to_string());
    assert_eq!(s["intervene"], "switch");
    assert_eq!(s["substitute_model"], "careful-model");
    assert_eq!(s["predict"], json!({"k": 1, "n": 3}));
    assert_eq!(s["threshold"], 0.3);
    assert_eq!(s["sessions"][0]["interventions"], 1);
    // One model call beyond the response: the substitute's answer.
    assert_eq!(s["sessions"][0]["samples"], 1);
}

#[test]
fn a_response_that_violates_nothing_is_not_intervened_on() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "ok.jsonl");
    let gw = start_with(options(&upstream, Intervene::Resample, &log));
    // Turn 0 looks the user up: with k = 1 its risk is exactly 0, no call is spent.
    let body = json!({"model": "scripted", "messages": conversation(ASK, 0), "tools": tools()});
    let (status, _) = post(&gw.base_url(), "ok", &body);
    assert_eq!(status, 200);
    assert_eq!(chat_requests(&upstream).len(), 1);
    assert!(lines(&temp(&dir, "ok.interventions.jsonl")).is_empty());
}

#[test]
fn with_k_2_continuations_are_sampled_after_empty_tool_results() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "k2.jsonl");
    let mut o = options(&upstream, Intervene::Resample, &log);
    o.predict = Predict { k: 2, n: 2 };
    let gw = start_with(o);
    // Turn 0 looks the user up (no violation), but an update could follow: the look-ahead
    // leaves `confirm-before-write` open, so 2 continuations are drawn, each the response, an
    // empty result of its tool call, and the upstream's next answer. The first continuation
    // updates without a confirmation; the second (the same request again: the flaky model)
    // asks for one. Risk 1/2 > τ = 0.3: resample asks turn 0 again, and the two continuations
    // of that answer are requests seen before: both ask, risk 0. It is taken.
    let body = json!({"model": "scripted", "messages": conversation(FLAKY, 0), "tools": tools()});
    let (status, text) = post(&gw.base_url(), "k2", &body);
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    let lookup = scripted_message(0, "ZFA04Y");
    assert_eq!(answer["choices"][0]["message"], lookup);
    let sent = chat_requests(&upstream);
    assert_eq!(sent.len(), 6);
    let mut continued = conversation(FLAKY, 0);
    continued.push(lookup.clone());
    continued.push(json!({"role": "tool", "tool_call_id": "call_0", "content": ""}));
    for i in [1, 2, 4, 5] {
        assert_eq!(sent[i]["messages"], json!(continued), "request {i}");
        assert_eq!(sent[i]["stream"], false);
    }
    assert_eq!(sent[3]["messages"], sent[0]["messages"]);
    let iv = lines(&temp(&dir, "k2.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    let r = &iv[0];
    assert_eq!(r["step"], 3);
    assert_eq!(r["properties"], json!(["confirm-before-write"]));
    assert_eq!(r["risks"], json!([0.5]));
    assert_eq!(r["prediction"][0]["samples"], 2);
    assert_eq!(r["prediction"][0]["violations"], 1);
    assert_eq!(r["candidates"][0]["risks"][0]["p"], 0.0);
    assert_eq!(r["chosen"], 1);
    // The response, its 2 samples, the answer asked again and its 2 samples.
    assert_eq!(r["model_calls"], 6);
    // Committed: the conversation's messages and the lookup, nothing sampled.
    assert_eq!(lines(&log).len(), 3);
    assert_eq!(lines(&log)[2]["tool_calls"], lookup["tool_calls"]);
}

#[test]
fn an_answer_the_upstream_refuses_keeps_the_response_and_the_record_hides_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "ek.jsonl");
    let mut o = options(&upstream, Intervene::Resample, &log);
    o.samples = 2;
    let gw = start_with(o);
    // Asked again, the upstream answers 401 echoing the API key: no answer to take, twice.
    let words = "ECHOKEY: please move my flight to HAT045, reservation ZFA04Y";
    let body = json!({"model": "scripted", "messages": conversation(words, 1), "tools": tools()});
    let mut r = http()
        .post(&format!("{}/chat/completions", gw.base_url()))
        .header("Authorization", &format!("Bearer {KEY}"))
        .header("X-Trac-Session", "ek")
        .send(body.to_string())
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let answer: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    // The response itself reaches the agent (resample found nothing better).
    assert_eq!(
        answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "update_reservation_flights"
    );
    assert_eq!(chat_requests(&upstream).len(), 3);
    let text = std::fs::read_to_string(temp(&dir, "ek.interventions.jsonl")).unwrap();
    assert!(!text.contains(KEY), "{text}");
    let iv = lines(&temp(&dir, "ek.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["chosen"], Value::Null);
    assert_eq!(iv[0]["by"], iv[0]["replaced"]);
    assert_eq!(iv[0]["model_calls"], 3);
    let candidates = iv[0]["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2);
    for c in candidates {
        let e = c["error"].as_str().unwrap();
        assert!(
            e.starts_with("the upstream answered 401") && e.contains("[redacted]"),
            "{e}"
        );
    }
    // What the agent got is what was committed: the audit sees the violation.
    assert_eq!(audit(&airline(), &log).violations, 1);
}
