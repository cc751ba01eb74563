//! `trac gateway` in front of a real model server: PyPI's `llama-cpp-python[server]` serving the
//! SmolLM2-135M-Instruct GGUF, both installed by `.ci/install-llm-server`. The test starts the
//! server on 127.0.0.1, puts the gateway in front of it, sends chat requests (non-streamed and
//! streamed) through the gateway, and checks that the answers pass through as valid chat
//! completions, that each conversation's steps are logged, and that `trac audit`'s driver reads
//! the log to the verdicts of `GET /trac/sessions` (a 135M model's words need not be good ones).
//!
//! Gated like `crates/trac-llm/tests/llama_server.rs`: where the server or the model was missing
//! at build time (`cfg(no_llama_server)`, `cfg(no_model)`, build/needs.rs) the test is reported
//! as ignored with that reason; under `CI=true` it runs. `TRAC_PYTHON` names the interpreter
//! (default `python3`), `TRAC_SMOLLM2_GGUF` the model file (default
//! `$TRAC_MODEL_DIR/SmolLM2-135M-Instruct.Q4_1.gguf`, `TRAC_MODEL_DIR` defaulting to
//! `~/.cache/trac/models`).
//!
//! The server is started and stopped by `trac_llm::testserver::llama` (feature `test-server`),
//! shared by the three crates that test against it.

mod support;

use serde_json::{json, Value};
use std::time::Duration;
use support::{audit, gateway_verdicts, http, sessions, temp};
use trac_gateway::stream::Assembler;
use trac_gateway::{Gateway, GatewayOptions, Intervene, Server};
use trac_llm::testserver::llama::LlamaServer;
use trac_spec::spec::{CheckedSpec, Spec};

/// Rules on the words of a chat without tools (the model is not asked to call any; on a log
/// without tool calls `trac audit` refuses to audit a property whose propositions need them,
/// as the airline spec's do).
const CHAT_SPEC: &str = r#"(
  name: "chat",
  propositions: [
    (name: "sorry", description: "the assistant apologizes",
     rule: Some(AllOf([Role("assistant"), Output(Regex(r"(?i)\b(sorry|apolog)"))]))),
    (name: "confirm", description: "the user confirms",
     rule: Some(AllOf([Role("user"), Input(Regex(r"(?i)\b(yes|confirm)\b"))]))),
    (name: "answer", description: "the assistant says something",
     rule: Some(AllOf([Role("assistant"), Output(Regex(r"\S"))]))),
  ],
  properties: [
    (id: "no-sorry-before-confirm", formula: "G(sorry -> O confirm)"),
    (id: "answers", formula: "F answer"),
  ],
)"#;

fn chat_spec() -> CheckedSpec {
    let spec = Spec::from_str(CHAT_SPEC, "chat.ron").unwrap();
    trac_runtime::label::labeler::check_spec(&spec).unwrap()
}

/// Starts the model server; it and its base URL.
fn start_llama() -> (LlamaServer, String) {
    let server = trac_llm::testserver::llama::start_llama("gateway", 2048);
    let base = server.base_url();
    (server, base)
}

/// `POST BASE/chat/completions` with session `session`: the status, content type and body.
fn chat(base: &str, session: &str, body: &Value) -> (u16, String, String) {
    let mut r = http()
        .post(&format!("{base}/chat/completions"))
        .header("Content-Type", "application/json")
        .header("Authorization", "Bearer sk-local")
        .header("X-Trac-Session", session)
        .send(body.to_string())
        .unwrap();
    let status = r.status().as_u16();
    let kind = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (status, kind, r.body_mut().read_to_string().unwrap())
}

/// A valid non-streamed chat completion: its assistant message.
fn completion_message(text: &str) -> Value {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["object"], "chat.completion", "{v}");
    assert!(v["id"].is_string(), "{v}");
    let m = v["choices"][0]["message"].clone();
    assert_eq!(m["role"], "assistant", "{v}");
    assert!(m["content"].is_string(), "{v}");
    assert!(v["choices"][0]["finish_reason"].is_string(), "{v}");
    m
}

/// A valid stream of chat completion chunks: its assistant message, assembled.
fn streamed_message(text: &str) -> Value {
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let mut chunks = 0;
    for line in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        if line.trim() == "[DONE]" {
            continue;
        }
        let c: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(c["object"], "chat.completion.chunk", "{c}");
        chunks += 1;
    }
    assert!(chunks >= 2, "{text}");
    let mut asm = Assembler::default();
    asm.feed(text.as_bytes());
    let m = asm.message().unwrap_or_else(|e| panic!("{e:?}: {text}"));
    assert_eq!(m["role"], "assistant", "{m}");
    m
}

#[test]
#[cfg_attr(
    no_llama_server,
    ignore = "needs PyPI's llama-cpp-python[server] (.ci/install-llm-server)"
)]
#[cfg_attr(
    all(not(no_llama_server), no_model),
    ignore = "needs the SmolLM2 GGUF (.ci/install-llm-server or trac model fetch)"
)]
fn the_gateway_in_front_of_smollm2_behind_llama_cpp_python_passes_and_logs_every_step() {
    let (_llama, upstream) = start_llama();
    let dir = tempfile::tempdir().unwrap();
    let log = temp(&dir, "real.jsonl");
    let mut o = GatewayOptions::new(&upstream);
    o.listen = "127.0.0.1:0".into();
    o.intervene = Intervene::None;
    o.log = Some(log.clone());
    o.upstream_timeout = Duration::from_secs(300);
    let gw = Server::bind(Gateway::new(&[chat_spec()], o).unwrap())
        .unwrap()
        .spawn();
    let base = gw.base_url();

    // GET /v1/models passes through.
    let mut r = http().get(&format!("{base}/models")).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let models: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(models["data"][0]["id"], "smollm2", "{models}");

    let system =
        json!({"role": "system", "content": "You are a helpful airline agent. Answer briefly."});
    let ask = |s: &str| json!({"role": "user", "content": s});
    let request = |messages: &[Value], stream: bool| {
        json!({"model": "smollm2", "messages": messages, "max_tokens": 16,
               "temperature": 0.0, "seed": 1, "stream": stream})
    };

    // Conversation a: two non-streamed requests, the second carrying the first's answer.
    let mut a = vec![system.clone(), ask("Hello, can you change my flight?")];
    let (status, _, text) = chat(&base, "real-a", &request(&a, false));
    assert_eq!(status, 200, "{text}");
    a.push(completion_message(&text));
    a.push(ask("Yes, I confirm: reservation ZFA04Y."));
    let (status, _, text) = chat(&base, "real-a", &request(&a, false));
    assert_eq!(status, 200, "{text}");
    a.push(completion_message(&text));

    // Conversation b: a streamed request, then a non-streamed one.
    let mut b = vec![system, ask("What is the baggage allowance?")];
    let (status, kind, text) = chat(&base, "real-b", &request(&b, true));
    assert_eq!(status, 200, "{text}");
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    b.push(streamed_message(&text));
    b.push(ask("Thanks. And for a second bag?"));
    let (status, _, text) = chat(&base, "real-b", &request(&b, false));
    assert_eq!(status, 200, "{text}");
    b.push(completion_message(&text));

    // Each conversation's steps are logged: every message the agent holds, with its session.
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (session, messages) in [("real-a", &a), ("real-b", &b)] {
        let mine: Vec<&Value> = logged.iter().filter(|l| l["session"] == session).collect();
        assert_eq!(mine.len(), messages.len(), "{session}: {mine:?}");
        for (l, m) in mine.iter().zip(messages.iter()) {
            assert_eq!(l["role"], m["role"], "{session}");
            assert_eq!(l["content"], m["content"], "{session}");
        }
    }
    // The audit of the log is what the gateway shows.
    let s = sessions(&gw.addr().to_string());
    let shown = s["sessions"].as_array().unwrap();
    assert_eq!(shown.len(), 2, "{s}");
    for c in shown {
        assert_eq!(c["unread"], 0, "{c}");
        assert_eq!(c["log_errors"], 0, "{c}");
    }
    let steps: u64 = shown.iter().map(|c| c["steps"].as_u64().unwrap()).sum();
    let audited = audit(&chat_spec(), &log);
    assert_eq!(audited.steps as u64, steps);
    assert_eq!(steps as usize, a.len() + b.len());
    assert!(audited.complaints.is_empty(), "{:?}", audited.complaints);
    let verdicts = gateway_verdicts(&gw.addr().to_string());
    // The model answered in both conversations: `answers` is satisfied in each.
    for session in ["real-a", "real-b"] {
        assert!(
            verdicts[session].iter().any(|f| f.0 == "answers"),
            "{session}: {verdicts:?}"
        );
    }
    for (session, found) in &audited.verdicts {
        assert_eq!(Some(found), verdicts.get(session), "{session}");
    }
    for (session, found) in &verdicts {
        assert_eq!(
            found,
            audited.verdicts.get(session).unwrap_or(&Vec::new()),
            "{session}"
        );
    }
}
