//! A scripted Anthropic-compatible upstream (`POST /v1/messages`, a real tiny_http server on
//! 127.0.0.1:0) and a small tool-calling agent on ureq that speaks the Messages API.

use super::{http, AgentRun};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The system prompt of the agent.
pub const SYSTEM: &str =
    "You are an airline agent. Confirm every booking change with the user before making it.";

/// What the scripted upstream was sent.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request's path.
    pub path: String,
    /// Its `x-api-key` header.
    pub api_key: Option<String>,
    /// Its `anthropic-version` header.
    pub version: Option<String>,
    /// Its body (JSON, or `Null`).
    pub body: Value,
}

/// The body a `FAIL500` request gets.
pub const FAIL_BODY: &str =
    r#"{"type": "error", "error": {"type": "api_error", "message": "scripted failure"}}"#;

/// The body a `FAIL429` request gets (with `retry-after: 7`).
pub const RATE_BODY: &str =
    r#"{"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}"#;

/// A scripted Anthropic-compatible server, the script of the OpenAI one: the model's turn is
/// the number of assistant messages in the request; turn 0 looks the user up, turns 1 and 2
/// update the reservation (the last word of the first user message) without asking for a
/// confirmation, turn 3 answers in text. It streams when asked (each text word, each tool
/// input in two `input_json_delta`s). A last user text saying `FAIL500` gets a 500, `FAIL429` a
/// 429. A first user message saying `FLAKY` makes turn 1 flaky: asked the same messages again,
/// the model asks for a confirmation instead of updating.
pub struct Upstream {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
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

impl Upstream {
    /// Starts it.
    pub fn start() -> Upstream {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, log) = (server.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            for rq in s.incoming_requests() {
                let log = log.clone();
                std::thread::spawn(move || answer(rq, &log));
            }
        });
        Upstream {
            server,
            thread: Some(thread),
            seen,
            base: format!("http://127.0.0.1:{port}/v1"),
        }
    }
}

/// The text of a message: its string content, or its text blocks joined.
pub fn text_of(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(bs) => bs
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn header(rq: &tiny_http::Request, name: &str) -> Option<String> {
    rq.headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str().to_string())
}

fn answer(mut rq: tiny_http::Request, log: &Mutex<Vec<Seen>>) {
    let mut raw = Vec::new();
    let _ = rq.as_reader().read_to_end(&mut raw);
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    log.lock().unwrap().push(Seen {
        path: rq.url().to_string(),
        api_key: header(&rq, "x-api-key"),
        version: header(&rq, "anthropic-version"),
        body: body.clone(),
    });
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let users: Vec<&Value> = messages.iter().filter(|m| m["role"] == "user").collect();
    let first_user = users.first().map(|m| text_of(m)).unwrap_or_default();
    let last_user = users.last().map(|m| text_of(m)).unwrap_or_default();
    let json_type = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
    if last_user.contains("FAIL429") {
        let retry = tiny_http::Header::from_bytes("retry-after", "7").unwrap();
        let resp = tiny_http::Response::from_string(RATE_BODY)
            .with_status_code(429)
            .with_header(json_type)
            .with_header(retry);
        let _ = rq.respond(resp);
        return;
    }
    let repeated = log
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.body["messages"] == body["messages"])
        .count()
        > 1;
    if repeated && first_user.contains("ECHOKEY") {
        // A sample refused, echoing the credentials (as an "invalid x-api-key" error might).
        let key = header(&rq, "x-api-key").unwrap_or_default();
        let b = json!({"type": "error", "error": {"type": "authentication_error", "message": format!("invalid x-api-key: {key}")}});
        let resp = tiny_http::Response::from_string(b.to_string())
            .with_status_code(401)
            .with_header(json_type);
        let _ = rq.respond(resp);
        return;
    }
    let (status, text, kind) = if last_user.contains("FAIL500") {
        (500, FAIL_BODY.to_string(), "application/json")
    } else {
        let turn = messages.iter().filter(|m| m["role"] == "assistant").count();
        let rid = first_user
            .split_whitespace()
            .last()
            .unwrap_or("NONE")
            .to_string();
        let model = body["model"].as_str().unwrap_or("scripted").to_string();
        let content = if first_user.contains("FLAKY") && turn == 1 && repeated {
            json!([{"type": "text", "text": super::confirm_question(&rid)}])
        } else {
            scripted_content(turn, &rid)
        };
        if body["stream"] == true {
            (200, sse(turn, &model, &content), "text/event-stream")
        } else {
            let m = response(turn, &model, &content);
            (200, m.to_string(), "application/json")
        }
    };
    let header = tiny_http::Header::from_bytes("Content-Type", kind).unwrap();
    let resp = tiny_http::Response::from_string(text)
        .with_status_code(status)
        .with_header(header);
    let _ = rq.respond(resp);
}

/// The scripted model's content blocks at `turn`.
pub fn scripted_content(turn: usize, rid: &str) -> Value {
    let call = |name: &str, input: Value| json!([{"type": "tool_use", "id": format!("toolu_{turn}"), "name": name, "input": input}]);
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
            json!([{"type": "text", "text": "All done: your flight is changed and a bag is added."}])
        }
    }
}

fn stop_reason(content: &Value) -> &'static str {
    if content
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["type"] == "tool_use")
    {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// The non-streamed response of `content`.
pub fn response(turn: usize, model: &str, content: &Value) -> Value {
    json!({
        "id": format!("msg_{turn}"), "type": "message", "role": "assistant",
        "content": content, "model": model,
        "stop_reason": stop_reason(content), "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    })
}

/// The stream of `content`: `message_start`, a `ping`, each block (text word by word, a tool's
/// input in two pieces), `message_delta`, `message_stop`.
pub fn sse(turn: usize, model: &str, content: &Value) -> String {
    let ev = |data: Value| {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap()
        )
    };
    let mut start = response(turn, model, &json!([]));
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    let mut out = ev(json!({"type": "message_start", "message": start}));
    out += &ev(json!({"type": "ping"}));
    for (i, b) in content.as_array().unwrap().iter().enumerate() {
        let mut head = b.clone();
        let pieces: Vec<Value> = if b["type"] == "tool_use" {
            head["input"] = json!({});
            let input = b["input"].to_string();
            let (x, y) = input.split_at(input.len() / 2);
            [x, y]
                .iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                .collect()
        } else {
            head["text"] = json!("");
            b["text"]
                .as_str()
                .unwrap()
                .split_inclusive(' ')
                .map(|w| json!({"type": "text_delta", "text": w}))
                .collect()
        };
        out += &ev(json!({"type": "content_block_start", "index": i, "content_block": head}));
        for d in pieces {
            out += &ev(json!({"type": "content_block_delta", "index": i, "delta": d}));
        }
        out += &ev(json!({"type": "content_block_stop", "index": i}));
    }
    out += &ev(json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason(content), "stop_sequence": null},
        "usage": {"output_tokens": 5}}));
    out + &ev(json!({"type": "message_stop"}))
}

/// The tools the agent declares, in Anthropic's shape.
pub fn tools() -> Value {
    let tool = |name: &str| json!({"name": name, "input_schema": {"type": "object"}});
    json!([
        tool("get_user_details"),
        tool("update_reservation_flights"),
        tool("update_reservation_baggages")
    ])
}

/// The request body of the agent's next call.
pub fn request(messages: &[Value], stream: bool) -> Value {
    json!({"model": "scripted", "max_tokens": 256, "system": SYSTEM,
           "messages": messages, "tools": tools(), "stream": stream})
}

/// The agent: a tool-calling loop of at most 8 model calls against `base` (`http://HOST:PORT`,
/// the base URL of Anthropic's clients: it posts to `BASE/v1/messages`), with API key `key`,
/// streamed or not, optionally naming its session; its first user message is `first_user`.
/// It keeps its conversation as Anthropic's clients do: each response's `content` as an
/// assistant message, the results of its tool calls as one user message of `tool_result`
/// blocks. A streamed response is read with the gateway's own assembler.
pub fn run_agent(
    base: &str,
    key: &str,
    session: Option<&str>,
    first_user: &str,
    stream: bool,
) -> AgentRun {
    let agent = http();
    let mut messages = vec![json!({"role": "user", "content": first_user})];
    let mut run = AgentRun {
        messages: Vec::new(),
        calls: 0,
        ended: false,
        last: (0, Value::Null),
    };
    while run.calls < 8 {
        run.calls += 1;
        let mut call = agent
            .post(&format!("{base}/v1/messages"))
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01")
            .header("Content-Type", "application/json");
        if let Some(s) = session {
            call = call.header("X-Trac-Session", s);
        }
        let mut resp = call.send(request(&messages, stream).to_string()).unwrap();
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap();
        let v: Value = if status == 200 && stream {
            let mut asm = trac_gateway::anthropic::Assembler::default();
            asm.feed(text.as_bytes());
            assert!(asm.done(), "{text}");
            let m = asm.message().unwrap();
            json!({"content": m["content"]})
        } else {
            serde_json::from_str(&text).unwrap()
        };
        run.last = (status, v.clone());
        if status != 200 {
            break;
        }
        let content = v["content"].clone();
        messages.push(json!({"role": "assistant", "content": content}));
        let calls: Vec<&Value> = content
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .collect();
        if calls.is_empty() {
            run.ended = true;
            break;
        }
        let results: Vec<Value> = calls
            .iter()
            .map(|c| {
                let result = match c["name"].as_str().unwrap() {
                    "get_user_details" => json!({"name": "Mia Li", "reservations": ["ZFA04Y"]}),
                    _ => json!({"status": "updated"}),
                };
                json!({"type": "tool_result", "tool_use_id": c["id"], "content": result.to_string()})
            })
            .collect();
        messages.push(json!({"role": "user", "content": results}));
    }
    run.messages = messages;
    run
}

/// The conversation as the gateway logs it: the system prompt as a system message, then the
/// messages.
pub fn with_system(messages: &[Value]) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": SYSTEM})];
    out.extend(messages.iter().cloned());
    out
}
