//! `trac gateway` in front of an Anthropic-compatible upstream (`POST /v1/messages`): real
//! servers on 127.0.0.1 (the gateway, and a scripted upstream speaking the Messages API), a
//! tool-calling agent on ureq whose scripted model books without confirming, and every log
//! re-audited by the library's audit driver (what `trac audit` runs).

mod support;

use serde_json::{json, Value};
use support::anthropic::{self as claude, Upstream};
use support::{airline, audit, confirm_question, gateway_verdicts, http, sessions, temp};
use support::{write_log, Found};
use trac_gateway::{Gateway, GatewayOptions, Intervene, OnBlock, Running, Server};
use trac_runtime::Verdict;

const KEY: &str = "sk-ant-test-SECRET-4242";
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

/// The base URL an Anthropic client is given: `http://ADDR` (it posts to `/v1/messages`).
fn base(gw: &Running) -> String {
    format!("http://{}", gw.addr())
}

/// The upstream's base URL for the agent (it adds `/v1/messages`).
fn direct(upstream: &Upstream) -> String {
    upstream.base.trim_end_matches("/v1").to_string()
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

const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];

#[test]
fn without_trac_the_agent_breaks_the_rule_and_through_the_shield_it_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let spec = airline();

    // Directly against the upstream: the agent updates twice without a confirmation (steps 5
    // and 7: system, user, lookup, its result, update, its result, update).
    let run = claude::run_agent(&direct(&upstream), KEY, None, ASK, false);
    assert!(run.ended);
    assert_eq!(run.calls, 4);
    let direct_log = temp(&dir, "direct.jsonl");
    write_log(&direct_log, "direct", &claude::with_system(&run.messages));
    let a = audit(&spec, &direct_log);
    let k = violations_of(&a.verdicts["direct"], "confirm-before-write");
    assert_eq!(k, [(5, Some("ZFA04Y".into())), (7, Some("ZFA04Y".into()))]);

    // Through the gateway with shield, streamed and not: the first update never reaches the
    // agent; its loop ends on the refusal.
    for stream in [false, true] {
        let log = temp(&dir, &format!("gw-{stream}.jsonl"));
        let gw = start(options(&upstream, Intervene::Shield, Some(&log)));
        let run = claude::run_agent(&base(&gw), KEY, Some("shielded"), ASK, stream);
        assert!(run.ended, "{:?}", run.last);
        assert_eq!(run.calls, 2);
        let last = run.messages.last().unwrap();
        let text = claude::text_of(last);
        assert!(
            text.contains("every update of reservation rid comes after a user confirmation")
                && text.contains("ZFA04Y"),
            "{text}"
        );
        assert_eq!(last["content"].as_array().unwrap().len(), 1);
        let a = audit(&spec, &log);
        assert_eq!(a.violations, 0, "{:?}", a.verdicts);
        assert!(a.complaints.is_empty(), "{:?}", a.complaints);
        // The log is the conversation the agent holds (its system prompt first), but for the
        // refusal, logged with a string content.
        let logged = lines(&log);
        let held = claude::with_system(&run.messages);
        assert_eq!(logged.len(), held.len());
        for (l, m) in logged.iter().zip(&held[..held.len() - 1]) {
            let mut m = m.clone();
            m["session"] = json!("shielded");
            assert_eq!(l, &m);
        }
        assert_eq!(logged.last().unwrap()["content"], text);
        let iv = lines(&log.with_extension("interventions.jsonl"));
        assert_eq!(iv.len(), 1);
        assert_eq!(iv[0]["step"], 5);
        assert_eq!(iv[0]["properties"][0]["property"], "confirm-before-write");
        assert_eq!(
            iv[0]["replaced"]["content"][0]["name"],
            "update_reservation_flights"
        );
        let s = sessions(&gw.addr().to_string());
        assert_eq!(s["sessions"][0]["interventions"], 1);
        assert_eq!(s["sessions"][0]["violations"], json!([]));
    }
}

#[test]
fn monitoring_only_the_gateways_verdicts_are_the_audit_of_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    for stream in [false, true] {
        let log = temp(&dir, &format!("none-{stream}.jsonl"));
        let gw = start(options(&upstream, Intervene::None, Some(&log)));
        let run = claude::run_agent(&base(&gw), KEY, None, ASK, stream);
        assert!(run.ended);
        assert_eq!(run.calls, 4);
        let ours = gateway_verdicts(&gw.addr().to_string());
        let a = audit(&airline(), &log);
        assert_eq!(ours, a.verdicts);
        assert!(a.complaints.is_empty(), "{:?}", a.complaints);
        // One session (the hash of its system prompt and first user message), with the direct
        // run's violations; a tool result block is a step of its own, as the reader reads it.
        assert_eq!(ours.len(), 1);
        let (id, found) = ours.iter().next().unwrap();
        assert!(id.starts_with("conv-"), "{id}");
        assert_eq!(
            violations_of(found, "confirm-before-write"),
            [(5, Some("ZFA04Y".into())), (7, Some("ZFA04Y".into()))]
        );
        assert_eq!(a.steps, 1 + run.messages.len());
        let mut logged = lines(&log);
        for l in &mut logged {
            l.as_object_mut().unwrap().remove("session");
        }
        assert_eq!(logged, claude::with_system(&run.messages));
    }
}

#[test]
fn on_block_error_answers_an_anthropic_style_400() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "err.jsonl");
    let mut o = options(&upstream, Intervene::Shield, Some(&log));
    o.on_block = OnBlock::Error;
    let gw = start(o);
    for stream in [false, true] {
        let session = format!("e-{stream}");
        let run = claude::run_agent(&base(&gw), KEY, Some(&session), ASK, stream);
        assert!(!run.ended);
        assert_eq!(run.calls, 2);
        assert_eq!(run.last.0, 400);
        assert_eq!(run.last.1["type"], "error");
        assert_eq!(run.last.1["error"]["type"], "trac_blocked");
        assert_eq!(run.last.1["error"]["code"], "confirm-before-write");
        let m = run.last.1["error"]["message"].as_str().unwrap();
        assert!(m.contains("after a user confirmation"), "{m}");
    }
    let a = audit(&airline(), &log);
    assert_eq!(a.violations, 0);
    // The blocked response was not committed: the log ends on the tool result before it.
    let last = lines(&log).last().unwrap().clone();
    assert_eq!(last["content"][0]["type"], "tool_result");
    let iv = lines(&temp(&dir, "err.interventions.jsonl"));
    assert_eq!(iv.len(), 2);
    assert_eq!(iv[0]["committed"], false);
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
    for (i, (stream, rid)) in [(false, "ZFA04Y"), (true, "QQQ111")]
        .into_iter()
        .enumerate()
    {
        let words = format!("FLAKY: please move my flight to HAT045, reservation {rid}");
        let session = format!("rs-{stream}");
        let run = claude::run_agent(&base(&gw), KEY, Some(&session), &words, stream);
        assert!(run.ended, "{:?}", run.last);
        assert_eq!(run.calls, 2);
        let last = run.messages.last().unwrap();
        assert_eq!(claude::text_of(last), confirm_question(rid));
        if !stream {
            // The client got the sample's response as the upstream sent it.
            assert_eq!(run.last.1["id"], "msg_1");
            assert_eq!(run.last.1["stop_reason"], "end_turn");
        }
        // Three model calls: turn 0, turn 1, and one sample of turn 1, not streamed.
        let seen = upstream.seen.lock().unwrap().clone();
        let sent = &seen[3 * i..];
        assert_eq!(sent.len(), 3);
        assert_eq!(sent[2].body["messages"], sent[1].body["messages"]);
        assert_eq!(sent[1].body["stream"], stream);
        assert_eq!(sent[2].body["stream"], false);
        let iv = lines(&temp(&dir, "rs.interventions.jsonl"));
        assert_eq!(iv.len(), i + 1);
        assert_eq!(iv[i]["session"], session);
        assert_eq!(iv[i]["step"], 5);
        assert_eq!(iv[i]["committed"], true);
        assert_eq!(iv[i]["model_calls"], 2);
        assert_eq!(iv[i]["chosen"], 1);
        assert_eq!(iv[i]["by"], *last);
    }
    let a = audit(&airline(), &log);
    assert_eq!(a.violations, 0, "{:?}", a.verdicts);
    assert!(a.complaints.is_empty(), "{:?}", a.complaints);
}

#[test]
fn a_sample_refused_with_the_api_key_in_its_error_is_logged_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "echo.jsonl");
    let mut o = options(&upstream, Intervene::Shield, Some(&log));
    o.samples = 1;
    let gw = start(o);
    // Turn 1 updates without a confirmation; its one sample is refused with a 401 that echoes
    // the x-api-key header, so the response is blocked and the sample's error is logged.
    let words = "ECHOKEY: please move my flight to HAT045, reservation ZFA04Y";
    let run = claude::run_agent(&base(&gw), KEY, Some("echo"), words, false);
    assert!(run.ended, "{:?}", run.last);
    let seen = upstream.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2].body["messages"], seen[1].body["messages"]);
    let text = std::fs::read_to_string(temp(&dir, "echo.interventions.jsonl")).unwrap();
    assert!(text.contains("invalid x-api-key"), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(!std::fs::read_to_string(&log).unwrap().contains("SECRET"));
}

/// A request at turn `turn` of the scripted conversation, streamed.
fn stream_body(turn: usize) -> String {
    let mut messages = vec![json!({"role": "user", "content": ASK})];
    for t in 0..turn {
        let content = claude::scripted_content(t, "ZFA04Y");
        let id = content[0]["id"].clone();
        messages.push(json!({"role": "assistant", "content": content}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "ok"}]}));
    }
    claude::request(&messages, true).to_string()
}

#[test]
fn a_streamed_response_arrives_byte_identical_when_nothing_is_blocked() {
    let upstream = Upstream::start();
    for turn in [0, 1, 3] {
        let d = post(
            &format!("{}/messages", upstream.base),
            &JSON,
            &stream_body(turn),
        );
        assert_eq!(d.0, 200);
        assert!(d
            .1
            .ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
        for intervene in [Intervene::None, Intervene::Shield] {
            let gw = start(options(&upstream, intervene, None));
            let via = post(
                &format!("{}/v1/messages", base(&gw)),
                &JSON,
                &stream_body(turn),
            );
            assert_eq!(via.0, 200);
            if turn == 1 && intervene == Intervene::Shield {
                // Turn 1 updates without a confirmation: the shield replaces it.
                assert_ne!(via.1, d.1);
                assert!(via.1.contains("I can't do that"), "{}", via.1);
                assert!(!via.1.contains("update_reservation_flights"));
                assert!(via.1.contains("\"id\":\"msg_1\""), "{}", via.1);
            } else {
                assert_eq!(via.1, d.1, "turn {turn}, {intervene:?}");
            }
            // The streamed message was assembled and monitored: a step for it (system, user,
            // then two per turn before it).
            let s = sessions(&gw.addr().to_string());
            let steps = s["sessions"][0]["steps"].as_u64().unwrap();
            assert_eq!(steps as usize, 2 + 2 * turn + 1, "{s}");
            let violated = s["sessions"][0]["violations"].as_array().unwrap().len();
            // The updates of the history are the agent's, committed as they came; only a
            // response is shielded.
            let expected = match (turn, intervene) {
                (1, Intervene::None) => 1,
                (3, _) => 2,
                _ => 0,
            };
            assert_eq!(violated, expected, "turn {turn}, {intervene:?}: {s}");
        }
    }
}

#[test]
fn the_api_key_and_version_reach_the_upstream_and_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "keys.jsonl");
    let gw = start(options(&upstream, Intervene::Shield, Some(&log)));
    claude::run_agent(&base(&gw), KEY, None, ASK, false);
    claude::run_agent(&base(&gw), KEY, Some("s"), ASK, true);
    let seen = upstream.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4);
    for s in &seen {
        assert_eq!(s.api_key.as_deref(), Some(KEY));
        assert_eq!(s.version.as_deref(), Some("2023-06-01"));
        assert_eq!(s.path, "/v1/messages");
    }
    for f in ["keys.jsonl", "keys.interventions.jsonl"] {
        let text = std::fs::read_to_string(temp(&dir, f)).unwrap();
        assert!(!text.is_empty(), "{f}");
        assert!(!text.contains("SECRET"), "{f}: {text}");
    }
    assert!(!sessions(&gw.addr().to_string())
        .to_string()
        .contains("SECRET"));
}

#[test]
fn errors_are_anthropic_shaped_and_upstream_errors_pass_as_sent() {
    let upstream = Upstream::start();
    let mut o = options(&upstream, Intervene::Shield, None);
    o.max_body = 4096;
    let gw = start(o);
    let url = format!("{}/v1/messages", base(&gw));
    let error = |body: &str| -> Value { serde_json::from_str(body).unwrap() };
    for (body, status, words) in [
        ("{not json", 400, "not valid JSON"),
        (r#"{"model": "m"}"#, 400, "messages: Field required"),
        (r#"{"messages": [], "system": 7}"#, 400, "system: expected"),
        (
            r#"{"messages": [{"role": "asistant", "content": "hi"}]}"#,
            400,
            "unknown role `asistant`",
        ),
        (
            r#"{"messages": [{"role": "assistant", "content": [{"type": "tool_usee"}]}]}"#,
            400,
            "tool_usee",
        ),
    ] {
        let (got, text) = post(&url, &JSON, body);
        assert_eq!(got, status, "{body}: {text}");
        let e = error(&text);
        assert_eq!(e["type"], "error", "{text}");
        assert_eq!(e["error"]["type"], "invalid_request_error");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(words),
            "{text}"
        );
    }
    let big = json!({"messages": [{"role": "user", "content": "x".repeat(5000)}]}).to_string();
    let (status, text) = post(&url, &JSON, &big);
    assert_eq!(status, 413, "{text}");
    assert_eq!(error(&text)["type"], "error");
    assert!(upstream.seen.lock().unwrap().is_empty());
    // The upstream's own errors reach the client as sent (a 429 with its retry-after).
    let ask = |words: &str| {
        json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": words}]})
            .to_string()
    };
    assert_eq!(
        post(&url, &JSON, &ask("FAIL500")),
        (500, claude::FAIL_BODY.to_string())
    );
    let mut r = http()
        .post(&url)
        .header("Content-Type", "application/json")
        .send(ask("FAIL429"))
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    assert_eq!(r.headers().get("retry-after").unwrap(), "7");
    assert_eq!(r.body_mut().read_to_string().unwrap(), claude::RATE_BODY);
    let (status, body) = post(&url, &JSON, &ask("hello again"));
    assert_eq!(status, 200, "{body}");
    // An upstream that refuses connections: a 502 in Anthropic's shape.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = start(GatewayOptions {
        upstream: format!("http://127.0.0.1:{port}"),
        ..options(&upstream, Intervene::None, None)
    });
    let (status, body) = post(
        &format!("{}/v1/messages", base(&gone)),
        &JSON,
        &ask("anyone?"),
    );
    assert_eq!(status, 502, "{body}");
    let e = error(&body);
    assert_eq!(e["type"], "error");
    assert_eq!(e["error"]["type"], "trac_gateway_error");
    assert_eq!(e["error"]["code"], "upstream_unreachable");
}
