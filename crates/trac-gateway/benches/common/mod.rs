//! What the gateway's bench (`benches/gateway.rs`) and its latency example
//! (`examples/latency.rs`) share: a stub upstream (tiny_http on 127.0.0.1:0, a fixed small chat
//! completion answered at once), the bench spec (`benches/bench.ron`: 10 rule-labeled
//! properties), a gateway in process, and a client conversation on a pooled ureq agent whose
//! history grows and is reset every [`RESET_EVERY`] requests.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use trac_gateway::{Gateway, GatewayOptions, Intervene, Running, Server};
use trac_spec::spec::{CheckedSpec, Spec};

/// A conversation is reset (a new session id, the history back to the system message) every
/// this many requests: its history stays between 2 and `2·RESET_EVERY` messages.
pub const RESET_EVERY: usize = 20;

/// The stub upstream's one answer: a short text that violates none of the bench's rules.
pub const ANSWER: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"stub","choices":[{"index":0,"message":{"role":"assistant","content":"Your flight is changed: you leave at 9:40 from gate B12. Anything else?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":42,"completion_tokens":17,"total_tokens":59}}"#;

/// The bench spec: `benches/bench.ron`.
pub fn spec() -> CheckedSpec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/bench.ron");
    trac_runtime::label::labeler::check_spec(&Spec::from_path(&path).unwrap()).unwrap()
}

/// The stub upstream: `workers` threads answer [`ANSWER`] to every request, after reading its
/// body.
pub struct Stub {
    server: Arc<tiny_http::Server>,
    threads: Vec<JoinHandle<()>>,
    /// `http://127.0.0.1:PORT/v1`.
    pub base: String,
}

impl Stub {
    /// Starts it.
    pub fn start(workers: usize) -> Stub {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let threads = (0..workers)
            .map(|_| {
                let s = server.clone();
                std::thread::spawn(move || {
                    let json =
                        tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
                    while let Ok(mut rq) = s.recv() {
                        let mut sink = Vec::new();
                        let _ = rq.as_reader().read_to_end(&mut sink);
                        let resp =
                            tiny_http::Response::from_string(ANSWER).with_header(json.clone());
                        let _ = rq.respond(resp);
                    }
                })
            })
            .collect();
        Stub {
            server,
            threads,
            base: format!("http://127.0.0.1:{port}/v1"),
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        for _ in &self.threads {
            self.server.unblock();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A gateway in process in front of `upstream`, with the bench spec, no log.
pub fn gateway(upstream: &str, intervene: Intervene) -> Running {
    let mut o = GatewayOptions::new(upstream);
    o.listen = "127.0.0.1:0".into();
    o.intervene = intervene;
    Server::bind(Gateway::new(&[spec()], o).unwrap())
        .unwrap()
        .spawn()
}

/// A pooled ureq agent (keep-alive connections).
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .max_idle_connections_per_host(16)
        .build()
        .into()
}

/// The user's turns, in order (one mentions a refund, one confirms).
const USER: [&str; 4] = [
    "Hi, I need to change the flight on reservation 8JX2QF to the morning one.",
    "Is there a refund if the new fare is lower than the old one?",
    "yes, go ahead and change it please",
    "Thanks. Could you also tell me the gate and the boarding time?",
];

/// One client conversation: the system message, then a user message and the answer per request.
pub struct Conversation {
    name: String,
    resets: usize,
    messages: Vec<Value>,
    sent: usize,
}

impl Conversation {
    /// A new one; its session ids are `NAME-0`, `NAME-1`, … (one per reset).
    pub fn new(name: &str) -> Conversation {
        let mut c = Conversation {
            name: name.to_string(),
            resets: 0,
            messages: Vec::new(),
            sent: 0,
        };
        c.reset();
        c
    }

    fn reset(&mut self) {
        self.messages = vec![
            json!({"role": "system", "content": "You are the airline's customer service agent. Be brief."}),
        ];
        self.resets += 1;
        self.sent = 0;
    }

    /// The session id of the current history.
    pub fn session(&self) -> String {
        format!("{}-{}", self.name, self.resets)
    }

    /// The next request's body, the user message added to the history.
    pub fn next_body(&mut self) -> String {
        if self.sent == RESET_EVERY {
            self.reset();
        }
        let user = USER[self.sent % USER.len()];
        self.messages.push(json!({"role": "user", "content": user}));
        self.sent += 1;
        json!({"model": "stub", "messages": self.messages}).to_string()
    }

    /// Sends the next request to `base` (`http://…/v1`) and adds the answer to the history.
    pub fn step(&mut self, agent: &ureq::Agent, base: &str) {
        let body = self.next_body();
        let mut resp = agent
            .post(format!("{base}/chat/completions"))
            .header("Content-Type", "application/json")
            .header("X-Trac-Session", self.session())
            .send(body)
            .unwrap();
        assert_eq!(resp.status(), 200);
        let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        self.messages.push(v["choices"][0]["message"].clone());
    }
}
