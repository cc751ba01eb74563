//! `trac gateway` under hostile or unusual clients and upstreams (issue 23's review): huge
//! declared bodies, histories that are not resent whole, API keys echoed by an upstream's error,
//! malformed requests. Real servers on 127.0.0.1, as in `gateway.rs`.

mod support;

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::*;
use trac_gateway::{Gateway, GatewayOptions, Intervene, Running, Server};

fn options(upstream: &Upstream, log: Option<&std::path::Path>) -> GatewayOptions {
    let mut o = GatewayOptions::new(&upstream.base);
    o.listen = "127.0.0.1:0".into();
    o.intervene = Intervene::None;
    o.log = log.map(|p| p.to_path_buf());
    o
}

fn start(opts: GatewayOptions) -> Running {
    Server::bind(Gateway::new(&[airline()], opts).unwrap())
        .unwrap()
        .spawn()
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

/// Sends `head` (a request line and headers, no body) on a new connection and reads what
/// comes back until the gateway closes the connection (at most 10 s): the response, and
/// whether the connection was closed.
fn raw(addr: std::net::SocketAddr, head: &str) -> (String, bool) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&got).into_owned(), closed)
}

fn huge(length: u64) -> String {
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// The process's virtual memory, in kB (Linux).
fn vm_size_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_huge_declared_body_gets_its_413_and_the_gateway_serves_on() {
    let upstream = Upstream::start();
    let gw = start(options(&upstream, None));
    // 99999999999 bytes declared, none sent: tiny_http 0.12.0 allocated a buffer of that size
    // to drain the body, and the process aborted.
    let (text, closed) = raw(gw.addr(), &huge(99_999_999_999));
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("over the limit"), "{text}");
    assert!(
        closed,
        "the connection of a body too long to drain is closed"
    );
    let (status, text) = post(
        &format!("{}/chat/completions", gw.base_url()),
        &[("Content-Type", "application/json")],
        &json!({"messages": [{"role": "user", "content": "hi"}]}).to_string(),
    );
    assert_eq!(status, 200, "{text}");
    assert_eq!(upstream.seen.lock().unwrap().len(), 1);
}

#[test]
fn declared_gigabyte_bodies_never_sent_do_not_grow_memory() {
    let upstream = Upstream::start();
    let gw = start(options(&upstream, None));
    let Some(before) = vm_size_kb() else {
        return; // not Linux: nothing to measure
    };
    // Eight connections at once, each declaring 1 GiB: 0.12.0 held a 1 GiB buffer for each
    // while it waited for the body.
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let addr = gw.addr();
            std::thread::spawn(move || raw(addr, &huge(1 << 30)))
        })
        .collect();
    for t in threads {
        let (text, closed) = t.join().unwrap();
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
        assert!(closed);
    }
    let after = vm_size_kb().unwrap();
    let grown_mb = after.saturating_sub(before) / 1024;
    assert!(grown_mb < 1024, "virtual memory grew by {grown_mb} MB");
}

#[test]
fn a_body_over_the_limit_but_short_enough_to_drain_keeps_the_connection() {
    let upstream = Upstream::start();
    let mut o = options(&upstream, None);
    o.max_body = 4096;
    let gw = start(o);
    // One keep-alive connection: a 20 000-byte body gets its 413 (drained, not read), and the
    // next request on the same connection is served.
    let mut s = TcpStream::connect(gw.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = "x".repeat(20_000);
    write!(s, "{}{body}", huge(body.len() as u64)).unwrap();
    write!(s, "GET /trac/sessions HTTP/1.1\r\nHost: gw\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("\"sessions\"") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("HTTP/1.1 200"), "{text}");
    assert!(text.contains("\"sessions\""), "{text}");
}

const KEY: &str = "sk-test-SECRET-4242";

#[test]
fn an_upstream_error_echoing_the_api_key_is_logged_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "echo.jsonl");
    let mut o = options(&upstream, Some(&log));
    o.intervene = Intervene::Shield;
    o.samples = 1;
    let gw = start(o);
    // Turn 1 would update without confirming: its sample (the same request again) gets a 401
    // whose message echoes `Bearer sk-...`, and the sample's error is logged.
    let run = run_agent(
        &gw.base_url(),
        KEY,
        Some("echo"),
        "ECHOKEY change reservation ZFA04Y",
    );
    assert!(run.ended, "{:?}", run.last);
    let seen = upstream.seen.lock().unwrap().clone();
    assert!(seen
        .iter()
        .any(|s| s.body["messages"].to_string().contains("ECHOKEY")));
    let text = std::fs::read_to_string(temp(&dir, "echo.interventions.jsonl")).unwrap();
    assert!(text.contains("Incorrect API key provided"), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(!std::fs::read_to_string(&log).unwrap().contains("SECRET"));
}

#[test]
fn malformed_requests_name_the_field_and_the_type_expected() {
    let upstream = Upstream::start();
    let gw = start(options(&upstream, None));
    let url = format!("{}/chat/completions", gw.base_url());
    let json_type = [("Content-Type", "application/json")];
    for (body, words) in [
        (
            r#"{"messages": "notalist"}"#,
            "'messages' must be an array of chat messages, not a string",
        ),
        (
            r#"{"messages": {"role": "user"}}"#,
            "'messages' must be an array of chat messages, not an object",
        ),
        (
            r#"{"messages": [{"role": "user", "content": "hi"}, 7]}"#,
            "'messages[1]' must be an object (a chat message with a 'role'), not a number",
        ),
        (
            r#"{"messages": [], "stream": "yes"}"#,
            "'stream' must be a boolean, not a string",
        ),
        (
            r#"[1, 2]"#,
            "must be a JSON object (a chat completion request), not an array",
        ),
        (
            r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "asistant", "content": "x"}]}"#,
            "'messages[1]': ",
        ),
        (
            "{\"messages\": [\n{",
            "not valid JSON: EOF while parsing an object at line 2 column 1",
        ),
    ] {
        let (status, text) = post(&url, &json_type, body);
        assert_eq!(status, 400, "{body}: {text}");
        let e: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(e["error"]["type"], "invalid_request_error");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{body}: {message}");
        assert!(!message.contains("required property"), "{message}");
    }
    assert!(upstream.seen.lock().unwrap().is_empty());
}

/// Posts `messages` in session `session`; returns the assistant message answered.
fn say(gw: &Running, session: &str, messages: &[serde_json::Value]) -> serde_json::Value {
    let (status, text) = post(
        &format!("{}/chat/completions", gw.base_url()),
        &[
            ("Content-Type", "application/json"),
            ("X-Trac-Session", session),
        ],
        &json!({"model": "m", "messages": messages}).to_string(),
    );
    assert_eq!(status, 200, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut m = v["choices"][0]["message"].clone();
    // What an OpenAI client keeps in its history has fields the gateway does not compare.
    m["refusal"] = serde_json::Value::Null;
    m
}

/// The session's stats from `GET /trac/sessions`.
fn stats_of(gw: &Running, session: &str) -> serde_json::Value {
    sessions(&gw.addr().to_string())["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session"] == session)
        .cloned()
        .unwrap()
}

/// The contents of the log's steps of `session`, in order.
fn logged(log: &std::path::Path, session: &str) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|m| m["session"] == session)
        .map(|m| {
            let mut m = m.clone();
            m.as_object_mut().unwrap().remove("session");
            m.to_string()
        })
        .collect()
}

fn user(text: &str) -> serde_json::Value {
    json!({"role": "user", "content": text})
}

fn tool(id: &str, text: &str) -> serde_json::Value {
    json!({"role": "tool", "tool_call_id": id, "content": text})
}

#[test]
fn histories_that_are_not_resent_whole_lose_no_step_and_count_none_twice() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "history.jsonl");
    let gw = start(options(&upstream, Some(&log)));
    let sys = json!({"role": "system", "content": "You are an airline agent."});
    let u1 = user("Please change reservation ZFA04Y");
    let t1 = tool("call_0", "{\"user_id\": \"mia_li_3668\"}");

    // The whole history each time: no notice.
    let a1 = say(&gw, "full", &[sys.clone(), u1.clone()]);
    say(
        &gw,
        "full",
        &[sys.clone(), u1.clone(), a1.clone(), t1.clone()],
    );
    let s = stats_of(&gw, "full");
    assert_eq!(
        (s["windows"].as_u64(), s["divergences"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(s["steps"], 5, "{s}");
    // A regenerated answer (the same request again, without the answer it got): a rewind of
    // one message, reported; the new answer is one more step, nothing is committed twice.
    say(
        &gw,
        "full",
        &[sys.clone(), u1.clone(), a1.clone(), t1.clone()],
    );
    let s = stats_of(&gw, "full");
    assert_eq!(
        (s["windows"].as_u64(), s["divergences"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(s["steps"], 6, "{s}");
    assert_eq!(logged(&log, "full").len(), 6);

    // Only the newest message: it is a new step, with a notice.
    say(&gw, "newest", &[sys.clone(), u1.clone()]);
    say(&gw, "newest", std::slice::from_ref(&t1));
    let s = stats_of(&gw, "newest");
    assert_eq!(
        (s["windows"].as_u64(), s["divergences"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(s["steps"], 5, "{s}");
    let steps = logged(&log, "newest");
    assert_eq!(steps.len(), 5);
    assert!(steps[3].contains("mia_li_3668"), "{steps:?}");

    // A trimmed window (the system message kept, the first user message dropped): the tool
    // result is new, the assistant message it follows is not committed again.
    let b1 = say(&gw, "window", &[sys.clone(), u1.clone()]);
    say(&gw, "window", &[sys.clone(), b1.clone(), t1.clone()]);
    let s = stats_of(&gw, "window");
    assert_eq!(
        (s["windows"].as_u64(), s["divergences"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(s["steps"], 5, "{s}");
    let steps = logged(&log, "window");
    assert_eq!(steps.len(), 5);
    assert_eq!(
        steps
            .iter()
            .filter(|l| l.contains("get_user_details"))
            .count(),
        1,
        "{steps:?}"
    );
    assert!(steps[3].contains("\"tool\""), "{steps:?}");

    // A rewind: the first user message edited. The edit is a new step; the old steps stay.
    say(&gw, "rewind", &[sys.clone(), u1.clone()]);
    let edited = user("Please change reservation ABC123 instead");
    let c1 = say(&gw, "rewind", &[sys.clone(), edited.clone()]);
    let s = stats_of(&gw, "rewind");
    assert_eq!(
        (s["windows"].as_u64(), s["divergences"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(s["steps"], 5, "{s}");
    assert!(logged(&log, "rewind")[3].contains("ABC123"));
    // After the rewind, the client's new history extends: no further notice.
    say(&gw, "rewind", &[sys.clone(), edited, c1, t1.clone()]);
    let s = stats_of(&gw, "rewind");
    assert_eq!(s["divergences"], 1, "{s}");
    assert_eq!(s["steps"], 7, "{s}");

    // Each notice is in the interventions file.
    let notes: Vec<serde_json::Value> =
        std::fs::read_to_string(temp(&dir, "history.interventions.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let kinds: Vec<(String, String)> = notes
        .iter()
        .map(|n| {
            (
                n["session"].as_str().unwrap().into(),
                n["match"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("full".into(), "diverged".into()),
            ("newest".into(), "diverged".into()),
            ("window".into(), "window".into()),
            ("rewind".into(), "diverged".into())
        ]
    );
    assert_eq!(notes[0]["not_resent"], 1);
    assert_eq!(notes[3]["not_resent"], 2);
}

#[test]
fn sessions_report_the_properties_not_audited_as_the_audit_does() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start();
    let log = temp(&dir, "text.jsonl");
    let gw = start(options(&upstream, Some(&log)));
    // Text only: three assistant answers make the scripted model answer in text.
    let mut messages = vec![json!({"role": "system", "content": "You are an airline agent."})];
    for i in 0..3 {
        messages.push(user(&format!("question {i}")));
        messages.push(json!({"role": "assistant", "content": format!("answer {i}")}));
    }
    messages.push(user("thanks"));
    let last = say(&gw, "text", &messages);
    assert!(
        last["content"].is_string() && last.get("tool_calls").is_none(),
        "{last}"
    );
    let s = stats_of(&gw, "text");
    let mut gateway: Vec<String> = s["not_audited"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["property"].as_str().unwrap().to_string())
        .collect();
    gateway.sort();
    let mut audited: Vec<String> = audit_complaints(&airline(), &log)
        .iter()
        .filter_map(|c| {
            let rest = c.split(": property ").nth(1)?;
            Some(rest.split(" not audited").next()?.to_string())
        })
        .collect();
    audited.sort();
    assert!(
        !audited.is_empty(),
        "the airline spec's tool rules cannot hold on text"
    );
    assert!(
        audited.iter().any(|p| p == "lookup-before-write"),
        "{audited:?}"
    );
    assert_eq!(gateway, audited, "{s}");
    // A conversation with tool calls has them audited.
    say(&gw, "tools", &[user("Please change reservation ZFA04Y")]);
    let s = stats_of(&gw, "tools");
    let tools: Vec<&Value> = s["not_audited"].as_array().unwrap().iter().collect();
    assert!(
        !tools.iter().any(|n| n["property"] == "lookup-before-write"),
        "{s}"
    );
}

#[test]
fn a_burst_of_keep_alive_connections_is_served_while_they_stay_open() {
    // tiny_http 0.12.0's thread pool could queue a new connection for a thread already
    // notified of another: that connection was not read until some other connection closed.
    // Every round opens 48 connections at once, each sends one request and keeps its
    // connection open (as a pooled HTTP client does) until every one has its answer.
    let upstream = Upstream::start();
    let gw = start(options(&upstream, None));
    for round in 0..10 {
        let n = 48;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(n));
        let done = std::sync::Arc::new(std::sync::Barrier::new(n));
        let threads: Vec<_> = (0..n)
            .map(|_| {
                let (addr, barrier, done) = (gw.addr(), barrier.clone(), done.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut s = TcpStream::connect(addr).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    s.write_all(b"GET /trac/sessions HTTP/1.1\r\nHost: gw\r\n\r\n")
                        .unwrap();
                    let mut got = Vec::new();
                    let mut buf = [0u8; 4096];
                    let answered = loop {
                        if String::from_utf8_lossy(&got).contains("\"sessions\"") {
                            break true;
                        }
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => break false,
                            Ok(k) => got.extend_from_slice(&buf[..k]),
                        }
                    };
                    done.wait();
                    answered
                })
            })
            .collect();
        let answered = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|a| *a)
            .count();
        assert_eq!(answered, n, "round {round}");
    }
}
