//! What the gateway's tests share: a scripted OpenAI-compatible upstream (a real tiny_http
//! server on 127.0.0.1:0), a small tool-calling agent on ureq, the airline spec, and the audit
//! of a log by the library's audit driver (what `trac audit` runs).
#![allow(dead_code)]

pub mod anthropic;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use trac_runtime::audit::sink::Level;
use trac_runtime::audit::{audit_file, AuditOptions, AuditPlan, Checks, Collect};
use trac_runtime::Verdict;
use trac_spec::spec::{CheckedSpec, Spec};

/// The airline spec: `confirm-before-write` is `forall rid: G(modify(rid) -> O confirm)`.
pub fn airline() -> CheckedSpec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs/airline.ron");
    trac_runtime::label::labeler::check_spec(&Spec::from_path(&path).unwrap()).unwrap()
}

/// A verdict as compared across the gateway and the audit.
pub type Found = (String, usize, Verdict, Option<String>);

/// What the scripted upstream was sent.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request's path.
    pub path: String,
    /// Its `Authorization` header.
    pub authorization: Option<String>,
    /// Its `Content-Type` header.
    pub content_type: Option<String>,
    /// Its body (JSON, or `Null`).
    pub body: Value,
}

/// A scripted OpenAI-compatible server. The model's turn is the number of assistant messages
/// in the request: turn 0 looks the user up, turns 1 and 2 update the reservation (the last
/// word of the first user message) without asking for a confirmation, turn 3 answers in text.
/// It streams when asked; a last user message saying `FAIL500` gets a 500, `MALFORMED` a 200
/// whose body is not JSON. A first user message saying `FLAKY` makes turn 1 flaky: asked
/// again the same messages (a sample), the model asks for a confirmation instead of updating;
/// a message saying `ECHOKEY` makes such a repeated request a 401 echoing the `Authorization`
/// header (as OpenAI's "Incorrect API key provided" does).
pub struct Upstream {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
    gate: Gate,
    /// Every request, in order.
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// `http://127.0.0.1:PORT/v1`.
    pub base: String,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The gate of a `SLOWSTREAM` answer: it sends its first event, then waits for the gate to be
/// opened (at most 10 s, then it sends `data: TIMEOUT`) before the rest.
type Gate = Arc<Mutex<Option<std::sync::mpsc::Receiver<()>>>>;

/// The events of a `SLOWSTREAM` answer, before and after the gate.
pub const SLOW_EVENTS: [&str; 2] = [
    "data: {\"id\":\"slow\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"first \"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"slow\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"second\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
];

/// The body the upstream answers a 500 with.
pub const FAIL_BODY: &str = r#"{"error": {"message": "scripted failure", "type": "server_error"}}"#;

/// The body the upstream answers `FAIL429` with (and `Retry-After: 7`).
pub const RATE_BODY: &str = r#"{"error": {"message": "slow down", "type": "rate_limit_error"}}"#;

/// The body the upstream answers `MALFORMED` with.
pub const MALFORMED_BODY: &str = r#"{"id": "chatcmpl-x", "choices": [{"message": "#;

impl Upstream {
    /// Starts it.
    pub fn start() -> Upstream {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let gate: Gate = Arc::new(Mutex::new(None));
        let (s, log, g) = (server.clone(), seen.clone(), gate.clone());
        let thread = std::thread::spawn(move || {
            for rq in s.incoming_requests() {
                let (log, g) = (log.clone(), g.clone());
                std::thread::spawn(move || answer(rq, &log, &g));
            }
        });
        Upstream {
            server,
            thread: Some(thread),
            gate,
            seen,
            base: format!("http://127.0.0.1:{port}/v1"),
        }
    }
}

impl Upstream {
    /// A new gate for the next `SLOWSTREAM` answer: send on it to open it.
    pub fn gate(&self) -> std::sync::mpsc::Sender<()> {
        let (tx, rx) = std::sync::mpsc::channel();
        *self.gate.lock().unwrap() = Some(rx);
        tx
    }
}

/// A `SLOWSTREAM` answer: chunked by hand on the raw connection (tiny_http's own writer would
/// hold the first event back in its buffer), each event flushed.
fn slow_stream(rq: tiny_http::Request, gate: &Gate) {
    let rx = gate.lock().unwrap().take();
    let mut out = rq.into_writer();
    let chunk = |out: &mut Box<dyn Write + Send>, s: &str| {
        write!(out, "{:x}\r\n{s}\r\n", s.len()).unwrap();
        out.flush().unwrap();
    };
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
    )
    .unwrap();
    chunk(&mut out, SLOW_EVENTS[0]);
    let opened = rx.is_some_and(|rx| rx.recv_timeout(Duration::from_secs(10)).is_ok());
    chunk(
        &mut out,
        if opened {
            SLOW_EVENTS[1]
        } else {
            "data: TIMEOUT\n\n"
        },
    );
    out.write_all(b"0\r\n\r\n").unwrap();
    out.flush().unwrap();
}

fn answer(mut rq: tiny_http::Request, log: &Mutex<Vec<Seen>>, gate: &Gate) {
    let mut raw = Vec::new();
    let _ = rq.as_reader().read_to_end(&mut raw);
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let authorization = rq
        .headers()
        .iter()
        .find(|h| h.field.equiv("Authorization"))
        .map(|h| h.value.as_str().to_string());
    let content_type = rq
        .headers()
        .iter()
        .find(|h| h.field.equiv("Content-Type"))
        .map(|h| h.value.as_str().to_string());
    log.lock().unwrap().push(Seen {
        path: rq.url().to_string(),
        authorization,
        content_type,
        body: body.clone(),
    });
    let json_type = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
    if rq.url().ends_with("/models") {
        let b = json!({"object": "list", "data": [{"id": "scripted", "object": "model"}]});
        let _ = rq.respond(tiny_http::Response::from_string(b.to_string()).with_header(json_type));
        return;
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    if last_user.contains("SLOWSTREAM") {
        return slow_stream(rq, gate);
    }
    if last_user.contains("HANG") {
        // Answers only once the gate opens (at most 10 s): slower than the gateway's timeout.
        let rx = gate.lock().unwrap().take();
        let _ = rx.map(|rx| rx.recv_timeout(Duration::from_secs(10)));
    }
    let repeated = log
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.body["messages"] == body["messages"])
        .count()
        > 1;
    if repeated
        && messages
            .iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains("ECHOKEY")))
    {
        // A sample refused, echoing the credentials (as OpenAI's 401 does).
        let auth = rq
            .headers()
            .iter()
            .find(|h| h.field.equiv("Authorization"))
            .map(|h| h.value.as_str().to_string())
            .unwrap_or_default();
        let b = json!({"error": {"message": format!("Incorrect API key provided: {auth}"), "type": "invalid_request_error"}});
        let _ = rq.respond(
            tiny_http::Response::from_string(b.to_string())
                .with_status_code(401)
                .with_header(json_type),
        );
        return;
    }
    if last_user.contains("FAIL429") {
        let retry = tiny_http::Header::from_bytes("Retry-After", "7").unwrap();
        let resp = tiny_http::Response::from_string(RATE_BODY)
            .with_status_code(429)
            .with_header(json_type)
            .with_header(retry);
        let _ = rq.respond(resp);
        return;
    }
    let (status, text, kind) = if last_user.contains("FAIL500") {
        (500, FAIL_BODY.to_string(), "application/json")
    } else if last_user.contains("MALFORMED") {
        (200, MALFORMED_BODY.to_string(), "application/json")
    } else {
        let turn = messages.iter().filter(|m| m["role"] == "assistant").count();
        let first_user = messages
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or("");
        let rid = first_user.split_whitespace().last().unwrap_or("NONE");
        let model = body["model"].as_str().unwrap_or("scripted").to_string();
        let again = log
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.body["messages"] == body["messages"])
            .count()
            > 1;
        let message = if first_user.contains("FLAKY") && turn == 1 && again {
            json!({"role": "assistant", "content": confirm_question(rid)})
        } else {
            scripted_message(turn, rid)
        };
        if body["stream"] == true {
            (200, sse(turn, &model, &message), "text/event-stream")
        } else {
            (200, completion(turn, &model, &message), "application/json")
        }
    };
    let header = tiny_http::Header::from_bytes("Content-Type", kind).unwrap();
    let resp = tiny_http::Response::from_string(text)
        .with_status_code(status)
        .with_header(header);
    let _ = rq.respond(resp);
}

/// What the flaky model asks when sampled again at turn 1.
pub fn confirm_question(rid: &str) -> String {
    format!("Shall I move reservation {rid} to HAT045 and add a bag? Please confirm.")
}

/// The scripted model's message at `turn`.
pub fn scripted_message(turn: usize, rid: &str) -> Value {
    let call = |name: &str, args: Value| {
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("call_{turn}"), "type": "function",
            "function": {"name": name, "arguments": args.to_string()},
        }]})
    };
    match turn {
        0 => call("get_user_details", json!({"user_id": "mia_li_3668"})),
        1 => call(
            "update_reservation_flights",
            json!({"reservation_id": rid, "flights": [{"flight_number": "HAT045"}]}),
        ),
        2 => call(
            "update_reservation_baggages",
            json!({"reservation_id": rid, "total_baggages": 1}),
        ),
        _ => {
            json!({"role": "assistant", "content": "All done: your flight is changed and a bag is added."})
        }
    }
}

fn completion(turn: usize, model: &str, message: &Value) -> String {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    json!({
        "id": format!("chatcmpl-{turn}"), "object": "chat.completion", "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
    .to_string()
}

/// The stream of `message`: a role chunk, the text or each tool call's arguments in two
/// pieces, a finish chunk, `[DONE]`.
fn sse(turn: usize, model: &str, message: &Value) -> String {
    let chunk = |delta: Value, finish: Value| {
        let c = json!({
            "id": format!("chatcmpl-{turn}"), "object": "chat.completion.chunk",
            "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {c}\n\n")
    };
    let mut out = String::new();
    if let Some(calls) = message["tool_calls"].as_array() {
        for (i, c) in calls.iter().enumerate() {
            let args = c["function"]["arguments"].as_str().unwrap_or("");
            let (a, b) = args.split_at(args.len() / 2);
            out += &chunk(
                json!({"role": "assistant", "content": null, "tool_calls": [{"index": i, "id": c["id"], "type": "function", "function": {"name": c["function"]["name"], "arguments": ""}}]}),
                Value::Null,
            );
            for piece in [a, b] {
                out += &chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                    Value::Null,
                );
            }
        }
        out += &chunk(json!({}), json!("tool_calls"));
    } else {
        out += &chunk(json!({"role": "assistant", "content": ""}), Value::Null);
        for w in message["content"]
            .as_str()
            .unwrap_or("")
            .split_inclusive(' ')
        {
            out += &chunk(json!({"content": w}), Value::Null);
        }
        out += &chunk(json!({}), json!("stop"));
    }
    out + "data: [DONE]\n\n"
}

/// The tools the agent declares.
pub fn tools() -> Value {
    let tool = |name: &str| json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}});
    json!([
        tool("get_user_details"),
        tool("update_reservation_flights"),
        tool("update_reservation_baggages")
    ])
}

/// A ureq agent that hands back every status.
pub fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// How a run of the agent went.
#[derive(Clone, Debug)]
pub struct AgentRun {
    /// The conversation, as the agent holds it.
    pub messages: Vec<Value>,
    /// Model calls made.
    pub calls: usize,
    /// The loop ended on an answer without tool calls.
    pub ended: bool,
    /// The status and body of the last model call.
    pub last: (u16, Value),
}

/// The agent: a tool-calling loop of at most 8 model calls against `base`, with API key `key`,
/// optionally naming its session; its first user message asks to change reservation `rid`.
pub fn run_agent(base: &str, key: &str, session: Option<&str>, first_user: &str) -> AgentRun {
    let agent = http();
    let mut messages = vec![
        json!({"role": "system", "content": "You are an airline agent. Confirm every booking change with the user before making it."}),
        json!({"role": "user", "content": first_user}),
    ];
    let mut run = AgentRun {
        messages: Vec::new(),
        calls: 0,
        ended: false,
        last: (0, Value::Null),
    };
    while run.calls < 8 {
        run.calls += 1;
        let body = json!({"model": "scripted", "messages": messages, "tools": tools()});
        let mut call = agent
            .post(&format!("{base}/chat/completions"))
            .header("Authorization", &format!("Bearer {key}"))
            .header("Content-Type", "application/json");
        if let Some(s) = session {
            call = call.header("X-Trac-Session", s);
        }
        let mut resp = call.send(body.to_string()).unwrap();
        let status = resp.status().as_u16();
        let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        run.last = (status, v.clone());
        if status != 200 {
            break;
        }
        let m = v["choices"][0]["message"].clone();
        messages.push(m.clone());
        let Some(calls) = m["tool_calls"].as_array().filter(|c| !c.is_empty()) else {
            run.ended = true;
            break;
        };
        for c in calls {
            let result = match c["function"]["name"].as_str().unwrap() {
                "get_user_details" => json!({"name": "Mia Li", "reservations": ["ZFA04Y"]}),
                _ => json!({"status": "updated"}),
            };
            messages.push(
                json!({"role": "tool", "tool_call_id": c["id"], "content": result.to_string()}),
            );
        }
    }
    run.messages = messages;
    run
}

/// Writes `messages` as the gateway logs them: one OpenAI message per line, with `session`.
pub fn write_log(path: &Path, session: &str, messages: &[Value]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for m in messages {
        let mut m = m.clone();
        m["session"] = json!(session);
        writeln!(f, "{m}").unwrap();
    }
}

/// What the audit driver (`trac audit`'s) found in a log.
#[derive(Debug, Default)]
pub struct Audit {
    /// Verdicts per session.
    pub verdicts: BTreeMap<String, Vec<Found>>,
    /// Violations over every session.
    pub violations: usize,
    /// Steps over every session.
    pub steps: usize,
    /// Warnings and errors (notes left out), as the CLI prints them.
    pub complaints: Vec<String>,
}

/// Audits `log` against `spec` as `trac audit --spec SPEC LOG` does (compiled engine, TRAC_R).
pub fn audit(spec: &CheckedSpec, log: &Path) -> Audit {
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let specs = [spec.clone()];
    let plan = AuditPlan::new(&specs, &opts).unwrap();
    let checks = Checks {
        specs: specs.to_vec().into(),
        ..Checks::default()
    };
    let mut sink = Collect::default();
    let end = audit_file(
        plan,
        checks,
        log,
        &trac_runtime::trace::ReadOptions::default(),
        None,
        &mut sink,
    );
    let mut out = Audit {
        violations: end.violations,
        steps: end.steps,
        ..Audit::default()
    };
    assert!(
        !end.bad_input,
        "{} was not read to its end: {:?}",
        log.display(),
        sink.notices
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
    );
    for t in sink.traces {
        let found = t
            .records
            .iter()
            .map(|r| (r.property.clone(), r.step, r.verdict, r.value.clone()))
            .collect();
        out.verdicts.insert(t.session.unwrap_or_default(), found);
    }
    out.complaints = sink
        .notices
        .iter()
        .filter(|n| n.level() != Level::Note)
        .map(|n| n.to_string())
        .collect();
    out
}

/// `GET BASE_HOST/trac/sessions`, each session's verdicts.
pub fn gateway_verdicts(addr: &str) -> BTreeMap<String, Vec<Found>> {
    let v = sessions(addr);
    let mut out = BTreeMap::new();
    for s in v["sessions"].as_array().unwrap() {
        let found = s["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let verdict = match r["verdict"].as_str().unwrap() {
                    "violated" => Verdict::Violated,
                    "satisfied" => Verdict::Satisfied,
                    other => panic!("verdict {other}"),
                };
                (
                    r["property"].as_str().unwrap().to_string(),
                    r["step"].as_u64().unwrap() as usize,
                    verdict,
                    r["value"].as_str().map(str::to_string),
                )
            })
            .collect();
        out.insert(s["session"].as_str().unwrap().to_string(), found);
    }
    out
}

/// `GET http://ADDR/trac/sessions`.
pub fn sessions(addr: &str) -> Value {
    let mut r = http()
        .get(&format!("http://{addr}/trac/sessions"))
        .call()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
}

/// A temporary directory's file `name`.
pub fn temp(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// The warnings and errors of the audit of `log` against `spec` (as `trac audit` prints
/// them), whether or not the log could be audited.
pub fn audit_complaints(spec: &CheckedSpec, log: &Path) -> Vec<String> {
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let specs = [spec.clone()];
    let plan = AuditPlan::new(&specs, &opts).unwrap();
    let checks = Checks {
        specs: specs.to_vec().into(),
        ..Checks::default()
    };
    let mut sink = Collect::default();
    audit_file(
        plan,
        checks,
        log,
        &trac_runtime::trace::ReadOptions::default(),
        None,
        &mut sink,
    );
    sink.notices.iter().map(|n| n.to_string()).collect()
}
