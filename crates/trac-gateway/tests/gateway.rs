//! `trac gateway` end to end: real servers on 127.0.0.1 (the gateway, and a scripted
//! OpenAI-compatible upstream), a tool-calling agent on ureq whose scripted model books without
//! confirming, and every log re-audited by the library's audit driver (what `trac audit` runs).

mod support;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use support::*;
use trac_gateway::{Gateway, GatewayOptions, Intervene, OnBlock, Running, Server};
use trac_runtime::Verdict;

const KEY: &str = "sk-test-SECRET-4242";
const ASK: &str = "Please move my flight to HAT045 and add a bag, reservation ZFA04Y";

fn options(
    upstream: &Upstream,
    intervene: Intervene,
    log: Option<&std::path::Path>,
) -> GatewayOptions {
    let mut o = GatewayOptions::new(&upstream.base);
    o.listen = "127.0.0.1:0".into();
    o.intervene = intervene;
    o.log = log.map(|p| p.to_path_buf());
    o
}

fn start(opts: GatewayOptions) -> Running {
    Server::bind(Gateway::new(&[airline()], opts).unwrap())
        .unwrap()
        .spawn()
}

fn violations_of(found: &[Found], property: &str) -> Vec<(usize, Option<String>)> {
    found
        .iter()
        .filter(|f| f.0 == property && f.2 == Verdict::Violated)
        .map(|f| (f.1, f.3.clone()))
        .collect()
}

fn post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut call = http().post(url);
    for (k, v) in headers {
        call = call.header(*k, *v);
    }
    let mut r = call.send(body).unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap())
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn without_trac_the_agent_breaks_the_rule_and_through_the_shield_it_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let spec = airline();

    // Directly against the upstream: the agent updates twice without a confirmation.
    let direct = run_agent(&upstream.base, KEY, None, ASK);
    assert!(direct.ended);
    let direct_log = temp(&dir, "direct.jsonl");
    write_log(&direct_log, "direct", &direct.messages);
    let a = audit(&spec, &direct_log);
    let k = violations_of(&a.verdicts["direct"], "confirm-before-write");
    assert_eq!(k, [(5, Some("ZFA04Y".into())), (7, Some("ZFA04Y".into()))]);
    assert_eq!(a.violations, 2);

    // Through the gateway with shield: the first update never reaches the agent; its loop
    // ends on the refusal.
    let log = temp(&dir, "gw.jsonl");
    let gw = start(options(&upstream, Intervene::Shield, Some(&log)));
    let shielded = run_agent(&gw.base_url(), KEY, Some("shielded"), ASK);
    assert!(shielded.ended, "{:?}", shielded.last);
    assert_eq!(shielded.calls, 2);
    let last = shielded.messages.last().unwrap();
    assert_eq!(last["role"], "assistant");
    assert!(last.get("tool_calls").is_none());
    let text = last["content"].as_str().unwrap();
    assert!(
        text.contains("every update of reservation rid comes after a user confirmation")
            && text.contains("ZFA04Y"),
        "{text}"
    );
    let a = audit(&spec, &log);
    assert_eq!(a.violations, 0, "{:?}", a.verdicts);
    assert!(a.complaints.is_empty(), "{:?}", a.complaints);
    // The log is the conversation the agent holds, with its session.
    let logged = lines(&log);
    assert_eq!(logged.len(), shielded.messages.len());
    for (l, m) in logged.iter().zip(&shielded.messages) {
        let mut m = m.clone();
        m["session"] = json!("shielded");
        assert_eq!(l, &m);
    }
    // The intervention is recorded beside the log, with what was replaced.
    let iv = lines(&temp(&dir, "gw.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["step"], 5);
    assert_eq!(iv[0]["on_block"], "refuse");
    assert_eq!(iv[0]["properties"][0]["property"], "confirm-before-write");
    assert_eq!(
        iv[0]["replaced"]["tool_calls"][0]["function"]["name"],
        "update_reservation_flights"
    );
    assert_eq!(iv[0]["by"]["content"], text);
    // The gateway saw what the audit sees: no violation in that conversation.
    let s = sessions(&gw.addr().to_string());
    assert_eq!(s["sessions"][0]["interventions"], 1);
    assert_eq!(s["sessions"][0]["violations"], json!([]));
}

#[test]
fn monitoring_only_the_gateways_verdicts_are_the_audit_of_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "none.jsonl");
    let gw = start(options(&upstream, Intervene::None, Some(&log)));
    let run = run_agent(&gw.base_url(), KEY, None, ASK);
    assert!(run.ended);
    assert_eq!(run.calls, 4);
    let ours = gateway_verdicts(&gw.addr().to_string());
    let a = audit(&airline(), &log);
    assert_eq!(ours, a.verdicts);
    assert!(a.complaints.is_empty(), "{:?}", a.complaints);
    // One session (named by the hash of its first messages), with the direct run's violations.
    assert_eq!(ours.len(), 1);
    let (id, found) = ours.iter().next().unwrap();
    assert!(id.starts_with("conv-"), "{id}");
    assert_eq!(
        violations_of(found, "confirm-before-write"),
        [(5, Some("ZFA04Y".into())), (7, Some("ZFA04Y".into()))]
    );
    assert_eq!(a.steps, run.messages.len());
    // Nothing blocked: the agent got the upstream's answers.
    assert!(lines(&temp(&dir, "none.interventions.jsonl")).is_empty());
}

#[test]
fn on_block_error_answers_an_openai_style_400() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "err.jsonl");
    let mut o = options(&upstream, Intervene::Shield, Some(&log));
    o.on_block = OnBlock::Error;
    let gw = start(o);
    let run = run_agent(&gw.base_url(), KEY, Some("e"), ASK);
    assert!(!run.ended);
    assert_eq!(run.calls, 2);
    assert_eq!(run.last.0, 400);
    assert_eq!(run.last.1["error"]["type"], "trac_blocked");
    assert_eq!(run.last.1["error"]["code"], "confirm-before-write");
    let a = audit(&airline(), &log);
    assert_eq!(a.violations, 0);
    // The blocked response was not committed: the log ends on the tool result before it.
    assert_eq!(lines(&log).last().unwrap()["role"], "tool");
    let iv = lines(&temp(&dir, "err.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["committed"], false);
    assert_eq!(iv[0]["by"]["error"]["type"], "trac_blocked");
}

/// The chat requests the upstream was sent (not `GET /v1/models`).
fn chat_requests(upstream: &Upstream) -> Vec<Value> {
    let seen = upstream.seen.lock().unwrap();
    seen.iter()
        .filter(|s| s.path.ends_with("/chat/completions"))
        .map(|s| s.body.clone())
        .collect()
}

#[test]
fn a_blocked_response_is_replaced_by_the_first_compliant_sample() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "rs.jsonl");
    let mut o = options(&upstream, Intervene::Shield, Some(&log));
    o.samples = 3;
    let gw = start(o);
    // Turn 1 updates without a confirmation; asked again, the model asks for one.
    let words = "FLAKY: please move my flight to HAT045 and add a bag, reservation ZFA04Y";
    let run = run_agent(&gw.base_url(), KEY, Some("rs"), words);
    assert!(run.ended, "{:?}", run.last);
    assert_eq!(run.calls, 2);
    let last = run.messages.last().unwrap();
    assert_eq!(last["content"], confirm_question("ZFA04Y"));
    // The client got the sample's completion as the upstream sent it.
    assert_eq!(run.last.1["object"], "chat.completion");
    assert_eq!(run.last.1["choices"][0]["message"], *last);
    // Three model calls: turn 0, turn 1, and one sample of turn 1, not streamed.
    let sent = chat_requests(&upstream);
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[2]["messages"], sent[1]["messages"]);
    assert_eq!(sent[2]["stream"], false);
    let a = audit(&airline(), &log);
    assert_eq!(a.violations, 0, "{:?}", a.verdicts);
    assert!(a.complaints.is_empty(), "{:?}", a.complaints);
    // The log is the conversation the agent holds: the violating response is not in it.
    assert_eq!(lines(&log).len(), run.messages.len());
    let iv = lines(&temp(&dir, "rs.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["step"], 5);
    assert_eq!(iv[0]["committed"], true);
    assert_eq!(iv[0]["model_calls"], 2);
    assert_eq!(iv[0]["chosen"], 1);
    assert_eq!(iv[0]["samples"].as_array().unwrap().len(), 1);
    assert_eq!(iv[0]["samples"][0]["properties"], json!([]));
    assert_eq!(iv[0]["properties"][0]["property"], "confirm-before-write");
    assert_eq!(
        iv[0]["replaced"]["tool_calls"][0]["function"]["name"],
        "update_reservation_flights"
    );
    assert_eq!(iv[0]["by"], *last);
    let s = sessions(&gw.addr().to_string());
    assert_eq!(s["samples"], 3);
    assert_eq!(s["sessions"][0]["interventions"], 1);
    assert_eq!(s["sessions"][0]["samples"], 1);
    assert_eq!(s["sessions"][0]["violations"], json!([]));

    // Streamed: the chosen sample reaches the client as a stream.
    let mut messages = vec![
        json!({"role": "system", "content": "You are an airline agent."}),
        json!({"role": "user", "content": "FLAKY: change reservation QQQ111"}),
    ];
    let m = scripted_message(0, "QQQ111");
    messages.push(m.clone());
    messages
        .push(json!({"role": "tool", "tool_call_id": m["tool_calls"][0]["id"], "content": "ok"}));
    let body = json!({"model": "scripted", "messages": messages, "stream": true, "tools": tools()});
    let (status, text) = post(
        &format!("{}/chat/completions", gw.base_url()),
        &[
            ("Content-Type", "application/json"),
            ("X-Trac-Session", "rs-stream"),
        ],
        &body.to_string(),
    );
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    let mut asm = trac_gateway::stream::Assembler::default();
    asm.feed(text.as_bytes());
    let got = asm.message().unwrap();
    assert_eq!(got["content"], confirm_question("QQQ111"));
    let sent = chat_requests(&upstream);
    assert_eq!(sent.len(), 5);
    assert_eq!(sent[3]["stream"], true);
    assert_eq!(sent[4]["stream"], false);
    let a = audit(&airline(), &log);
    assert_eq!(a.violations, 0, "{:?}", a.verdicts);
    let iv = lines(&temp(&dir, "rs.interventions.jsonl"));
    assert_eq!(iv.len(), 2);
    assert_eq!(iv[1]["model_calls"], 2);
    assert_eq!(iv[1]["session"], "rs-stream");
}

#[test]
fn when_every_sample_violates_the_response_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "all.jsonl");
    let mut o = options(&upstream, Intervene::Shield, Some(&log));
    o.samples = 2;
    let gw = start(o);
    let run = run_agent(&gw.base_url(), KEY, Some("all"), ASK);
    assert!(run.ended, "{:?}", run.last);
    assert_eq!(run.calls, 2);
    let text = run.messages.last().unwrap()["content"].as_str().unwrap();
    assert!(text.starts_with("I can't do that"), "{text}");
    // Turn 0, turn 1 and its two samples.
    assert_eq!(chat_requests(&upstream).len(), 4);
    let a = audit(&airline(), &log);
    assert_eq!(a.violations, 0, "{:?}", a.verdicts);
    let iv = lines(&temp(&dir, "all.interventions.jsonl"));
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["model_calls"], 3);
    assert_eq!(iv[0]["chosen"], Value::Null);
    assert_eq!(iv[0]["by"]["content"], text);
    let samples = iv[0]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    for s in samples {
        assert_eq!(s["properties"][0]["property"], "confirm-before-write");
        assert_eq!(
            s["message"]["tool_calls"][0]["function"]["name"],
            "update_reservation_flights"
        );
    }
    assert_eq!(
        sessions(&gw.addr().to_string())["sessions"][0]["samples"],
        2
    );

    // With --on-block error, the same: an error after the samples.
    let mut o = options(&upstream, Intervene::Shield, None);
    o.samples = 2;
    o.on_block = OnBlock::Error;
    let gw = start(o);
    let run = run_agent(&gw.base_url(), KEY, Some("err"), ASK);
    assert_eq!(run.last.0, 400);
    assert_eq!(run.last.1["error"]["type"], "trac_blocked");
    assert_eq!(chat_requests(&upstream).len(), 8);
}

/// A streamed request at turn `turn` of the scripted conversation.
fn stream_body(turn: usize) -> String {
    let mut messages = vec![
        json!({"role": "system", "content": "You are an airline agent."}),
        json!({"role": "user", "content": ASK}),
    ];
    for t in 0..turn {
        let m = scripted_message(t, "ZFA04Y");
        let id = m["tool_calls"][0]["id"].clone();
        messages.push(m);
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": "ok"}));
    }
    json!({"model": "scripted", "messages": messages, "stream": true, "tools": tools()}).to_string()
}

#[test]
fn a_streamed_response_arrives_byte_identical_when_nothing_is_blocked() {
    let upstream = Upstream::start();
    let json_type = [("Content-Type", "application/json")];
    for turn in [0, 1] {
        let direct = post(
            &format!("{}/chat/completions", upstream.base),
            &json_type,
            &stream_body(turn),
        );
        assert_eq!(direct.0, 200);
        assert!(direct.1.contains("data: [DONE]"));
        for intervene in [Intervene::None, Intervene::Shield] {
            let gw = start(options(&upstream, intervene, None));
            let via = post(
                &format!("{}/chat/completions", gw.base_url()),
                &json_type,
                &stream_body(turn),
            );
            assert_eq!(via.0, 200);
            // Turn 1 updates without a confirmation: the shield replaces it.
            if turn == 1 && intervene == Intervene::Shield {
                assert_ne!(via.1, direct.1);
                assert!(via.1.contains("I can't do that"), "{}", via.1);
                assert!(!via.1.contains("update_reservation_flights"));
                assert!(via.1.ends_with("data: [DONE]\n\n"));
            } else {
                assert_eq!(via.1, direct.1, "turn {turn}, {intervene:?}");
            }
            // The streamed message was assembled and monitored: a step for it.
            let s = sessions(&gw.addr().to_string());
            let steps = s["sessions"][0]["steps"].as_u64().unwrap();
            assert_eq!(steps as usize, 2 + 2 * turn + 1);
            let violated = s["sessions"][0]["violations"].as_array().unwrap().len();
            let expected = usize::from(turn == 1 && intervene == Intervene::None);
            assert_eq!(violated, expected, "turn {turn}, {intervene:?}: {s}");
        }
    }
}

#[test]
fn streamed_events_reach_the_client_as_they_arrive() {
    // The upstream holds its second event back until the client has the first one through
    // the gateway: a gateway that buffered the stream would stall it (and the upstream would
    // send `TIMEOUT` after 10 s instead).
    let upstream = Upstream::start();
    let gw = start(options(&upstream, Intervene::None, None));
    let open = upstream.gate();
    let body = json!({"model": "m", "stream": true,
        "messages": [{"role": "user", "content": "SLOWSTREAM please"}]});
    let agent = http();
    let mut resp = agent
        .post(&format!("{}/chat/completions", gw.base_url()))
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut reader = resp.body_mut().as_reader();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.ends_with(b"\n\n") {
        let n = std::io::Read::read(&mut reader, &mut buf).unwrap();
        assert!(
            n > 0,
            "the stream ended early: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(String::from_utf8_lossy(&got), SLOW_EVENTS[0]);
    open.send(()).unwrap();
    std::io::Read::read_to_end(&mut reader, &mut got).unwrap();
    assert_eq!(String::from_utf8(got).unwrap(), SLOW_EVENTS.concat());
    // The connection serves on after a chunked stream (keep-alive): the next request on the
    // same client is answered.
    let (status, _) = {
        let mut r = agent
            .get(&format!("{}/models", gw.base_url()))
            .call()
            .unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    };
    assert_eq!(status, 200);
    // The assembled message was committed: user message, then the assistant's text.
    let s = sessions(&gw.addr().to_string());
    assert_eq!(s["sessions"][0]["steps"], 2);
}

#[test]
fn the_api_key_reaches_the_upstream_and_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "keys.jsonl");
    let gw = start(options(&upstream, Intervene::Shield, Some(&log)));
    run_agent(&gw.base_url(), KEY, None, ASK);
    let (status, body) = post(
        &format!("{}/chat/completions", gw.base_url()),
        &[
            ("Authorization", &format!("Bearer {KEY}")),
            ("Content-Type", "application/json"),
        ],
        &stream_body(0),
    );
    assert_eq!(status, 200, "{body}");
    let seen = upstream.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    for s in &seen {
        assert_eq!(
            s.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    for f in ["keys.jsonl", "keys.interventions.jsonl"] {
        let text = std::fs::read_to_string(temp(&dir, f)).unwrap();
        assert!(!text.is_empty(), "{f}");
        assert!(!text.contains("SECRET"), "{f}: {text}");
    }
    assert!(!sessions(&gw.addr().to_string())
        .to_string()
        .contains("SECRET"));
    // The path goes on as asked, query string included (Azure's `api-version`), and a body
    // sent without a type reaches the upstream as JSON.
    assert!(seen.iter().all(|s| s.path == "/v1/chat/completions"));
    let mut r = http()
        .post(&format!(
            "{}/chat/completions?api-version=2024-06-01",
            gw.base_url()
        ))
        .send(stream_body(0))
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.body_mut().read_to_string().unwrap();
    let last = upstream.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last.path, "/v1/chat/completions?api-version=2024-06-01");
    assert_eq!(last.body["stream"], true);
    assert_eq!(last.content_type.as_deref(), Some("application/json"));
}

#[test]
fn malformed_client_requests_get_a_400_with_a_message() {
    let upstream = Upstream::start();
    let mut o = options(&upstream, Intervene::None, None);
    o.max_body = 4096;
    let gw = start(o);
    let url = format!("{}/chat/completions", gw.base_url());
    let json_type = [("Content-Type", "application/json")];
    let error = |body: &str| -> Value { serde_json::from_str(body).unwrap() };
    for (body, words) in [
        ("{not json", "not valid JSON"),
        (r#"{"model": "m"}"#, "'messages' is a required property"),
        (r#"[1, 2]"#, "must be a JSON object"),
        (
            r#"{"messages": [{"role": "asistant", "content": "hi"}]}"#,
            "unknown role `asistant`",
        ),
        (
            r#"{"n": 2, "messages": [{"role": "user", "content": "hi"}]}"#,
            "'n' is 2: only one choice per request",
        ),
        (
            r#"{"n": "3", "messages": [{"role": "user", "content": "hi"}]}"#,
            "'n' is \"3\"",
        ),
    ] {
        let (status, text) = post(&url, &json_type, body);
        assert_eq!(status, 400, "{body}: {text}");
        let e = error(&text);
        assert_eq!(e["error"]["type"], "invalid_request_error");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(words),
            "{text}"
        );
    }
    let big = json!({"messages": [{"role": "user", "content": "x".repeat(5000)}]}).to_string();
    let (status, text) = post(&url, &json_type, &big);
    assert_eq!(status, 413, "{text}");
    assert_eq!(error(&text)["error"]["type"], "invalid_request_error");
    let (status, _) = post(&format!("{}/completions", gw.base_url()), &json_type, "{}");
    assert_eq!(status, 404);
    // Nothing of it reached the upstream.
    assert!(upstream.seen.lock().unwrap().is_empty());
}

#[test]
fn upstream_failures_reach_the_client_faithfully_and_the_gateway_serves_on() {
    let upstream = Upstream::start();
    let gw = start(options(&upstream, Intervene::Shield, None));
    let url = format!("{}/chat/completions", gw.base_url());
    let json_type = [("Content-Type", "application/json")];
    let ask = |words: &str| {
        json!({"model": "m", "messages": [{"role": "user", "content": words}]}).to_string()
    };
    assert_eq!(
        post(&url, &json_type, &ask("FAIL500")),
        (500, FAIL_BODY.to_string())
    );
    let (status, body) = post(&url, &json_type, &ask("hello again"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        post(&url, &json_type, &ask("MALFORMED")),
        (200, MALFORMED_BODY.to_string())
    );
    // A 429 keeps its body and its Retry-After.
    let mut r = http()
        .post(&url)
        .header("Content-Type", "application/json")
        .send(ask("FAIL429"))
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    assert_eq!(r.headers().get("retry-after").unwrap(), "7");
    assert_eq!(r.body_mut().read_to_string().unwrap(), RATE_BODY);
    // GET /v1/models passes through.
    let models = |base: &str| {
        let mut r = http().get(&format!("{base}/models")).call().unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    };
    assert_eq!(models(&gw.base_url()), models(&upstream.base));
    // An upstream that refuses connections: a documented 502, and the gateway serves on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = start(GatewayOptions {
        upstream: format!("http://127.0.0.1:{port}/v1"),
        ..options(&upstream, Intervene::None, None)
    });
    let (status, body) = post(
        &format!("{}/chat/completions", gone.base_url()),
        &json_type,
        &ask("anyone?"),
    );
    assert_eq!(status, 502, "{body}");
    let e: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(e["error"]["type"], "trac_gateway_error");
    assert_eq!(e["error"]["code"], "upstream_unreachable");
    let s = sessions(&gone.addr().to_string());
    assert_eq!(s["sessions"][0]["steps"], 1);
}

#[test]
fn an_upstream_slower_than_the_timeout_is_a_502_and_other_conversations_go_on() {
    let upstream = Upstream::start();
    let mut o = options(&upstream, Intervene::None, None);
    o.upstream_timeout = std::time::Duration::from_secs(1);
    let gw = start(o);
    let url = format!("{}/chat/completions", gw.base_url());
    let open = upstream.gate();
    let slow = {
        let url = url.clone();
        std::thread::spawn(move || {
            let body = json!({"messages": [{"role": "user", "content": "HANG"}]}).to_string();
            post(&url, &[("Content-Type", "application/json")], &body)
        })
    };
    // Meanwhile another conversation is served.
    let run = run_agent(&gw.base_url(), KEY, Some("other"), ASK);
    assert!(run.ended);
    let (status, body) = slow.join().unwrap();
    open.send(()).unwrap_or_default();
    assert_eq!(status, 502, "{body}");
    let e: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(e["error"]["code"], "upstream_unreachable");
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("gave no answer"));
}

/// Agent `i` of the concurrency test: even ones confirm in their first message.
fn agent_words(i: usize) -> (String, String) {
    let rid = format!("RES{i:03}");
    if i % 2 == 0 {
        (
            format!("s{i}"),
            format!("Yes, go ahead and change reservation {rid}"),
        )
    } else {
        (format!("s{i}"), format!("Change reservation {rid}"))
    }
}

/// Conversations run at once in the concurrency test (issue 23: 64).
const CONCURRENT: usize = 64;

#[test]
fn sixty_four_concurrent_conversations_give_the_verdicts_of_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let one_by_one = start(options(&upstream, Intervene::None, None));
    for i in 0..CONCURRENT {
        let (id, words) = agent_words(i);
        let header = (i % 4 != 3).then_some(id.as_str());
        assert!(run_agent(&one_by_one.base_url(), KEY, header, &words).ended);
    }
    let log = temp(&dir, "many.jsonl");
    let together = start(options(&upstream, Intervene::None, Some(&log)));
    let base = together.base_url();
    // Every agent starts its loop at the same moment, so that their requests overlap.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(CONCURRENT));
    let threads: Vec<_> = (0..CONCURRENT)
        .map(|i| {
            let (base, barrier) = (base.clone(), barrier.clone());
            std::thread::spawn(move || {
                let (id, words) = agent_words(i);
                let header = (i % 4 != 3).then_some(id.as_str());
                barrier.wait();
                run_agent(&base, KEY, header, &words)
            })
        })
        .collect();
    for t in threads {
        let r = t.join().unwrap();
        assert!(r.ended, "{:?}", r.last);
    }
    let a: BTreeMap<String, Vec<Found>> = gateway_verdicts(&one_by_one.addr().to_string());
    let b = gateway_verdicts(&together.addr().to_string());
    assert_eq!(a.len(), CONCURRENT);
    assert_eq!(a, b);
    assert_eq!(audit(&airline(), &log).verdicts, b);
    // The agents that confirmed broke no rule; the others did, twice each (one in four,
    // without a header, are named by the hash of their first messages).
    for i in (0..CONCURRENT).filter(|i| i % 4 != 3) {
        let (id, _) = agent_words(i);
        let k = violations_of(&b[&id], "confirm-before-write").len();
        assert_eq!(k, if i % 2 == 0 { 0 } else { 2 }, "{id}");
    }
    let hashed: Vec<&Vec<Found>> = b
        .iter()
        .filter(|(k, _)| k.starts_with("conv-"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(hashed.len(), CONCURRENT / 4);
    for found in hashed {
        assert_eq!(violations_of(found, "confirm-before-write").len(), 2);
    }
}

#[test]
fn one_pooled_client_sending_eight_requests_at_once_is_served_every_time() {
    // Keep-alive connections of one client, shared by threads (as an HTTP client's pool is),
    // through tiny_http: 20 rounds of 8 concurrent requests, each answered.
    let upstream = Upstream::start();
    let gw = start(options(&upstream, Intervene::None, None));
    let agent = http();
    let url = format!("{}/chat/completions", gw.base_url());
    for round in 0..20 {
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (agent, url) = (agent.clone(), url.clone());
                std::thread::spawn(move || {
                    let body =
                        json!({"messages": [{"role": "user", "content": format!("hi {round} {i}")}]});
                    let mut r = agent
                        .post(&url)
                        .header("Content-Type", "application/json")
                        .send(body.to_string())
                        .unwrap();
                    let text = r.body_mut().read_to_string().unwrap();
                    (r.status().as_u16(), text)
                })
            })
            .collect();
        for t in threads {
            let (status, text) = t.join().unwrap();
            assert_eq!(status, 200, "{text}");
        }
    }
    assert_eq!(upstream.seen.lock().unwrap().len(), 160);
    assert_eq!(
        sessions(&gw.addr().to_string())["sessions"]
            .as_array()
            .unwrap()
            .len(),
        160
    );
}
