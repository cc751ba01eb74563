//! The HTTP server (tiny_http, one thread per request): routes, request bodies, and the chat
//! completion flow, streamed or not.
//!
//! - `POST /v1/chat/completions`: the request's new messages are committed to its
//!   conversation, the request goes to the upstream unchanged (body and credentials), and the
//!   answer's assistant message is checked (under `shield`), committed and logged before the
//!   client gets it (or its replacement: the first compliant of `--samples N` more answers of
//!   the upstream, else a refusal or an error).
//! - `POST /v1/messages`: the same for Anthropic's Messages API ([`crate::messages`]).
//! - `GET /v1/models` (and anything under it): passed through.
//! - `GET /trac/sessions`: each conversation's steps, violations and verdicts.
//!
//! Errors of the gateway itself are OpenAI-shaped ([`ApiError`]): 400 for a body that is not
//! a JSON object with a `messages` array of objects (the message names the field and the type
//! expected), a message the trace reader refuses, or `n` over 1 ([`ApiError::one_choice`]), 413
//! for a body over
//! the limit, 404 / 405 for other paths and methods, 502 when the upstream gives no answer. An
//! upstream's own error (any non-2xx status) reaches the client as it was sent.

use crate::api::ApiError;
use crate::conversation::Outcome;
use crate::gateway::{session_id, Gateway, Handle, SESSION_HEADER};
use crate::monitors::MonitorGone;
use crate::options::GatewayError;
use crate::shield::{blocked_error, message_stream, refused_completion, refused_stream};
use crate::stream::{Assembler, Chunked};
use crate::upstream::{
    read_some, redact, response_headers, unreadable_error, Answer, MAX_UPSTREAM_BODY,
};
use serde_json::Value;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use tiny_http::{Header, Method, Request, Response};

/// Headers as `(name, value)` pairs.
type Headers = Vec<(String, String)>;

/// A gateway bound to its address, not serving yet.
pub struct Server {
    http: Arc<tiny_http::Server>,
    gateway: Arc<Gateway>,
    addr: SocketAddr,
}

/// A gateway serving on its own thread; stopped when dropped (or by [`Running::stop`]).
pub struct Running {
    http: Arc<tiny_http::Server>,
    gateway: Arc<Gateway>,
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `gateway` to its `listen` address.
    ///
    /// # Errors
    /// [`GatewayError::Listen`]: the address is malformed or taken.
    pub fn bind(gateway: Gateway) -> Result<Server, GatewayError> {
        let listen = gateway.options().listen.clone();
        let err = |message: String| GatewayError::Listen {
            addr: listen.clone(),
            message,
        };
        let http = tiny_http::Server::http(&listen).map_err(|e| err(e.to_string()))?;
        let addr = http
            .server_addr()
            .to_ip()
            .ok_or_else(|| err("not an IP address".into()))?;
        Ok(Server {
            http: Arc::new(http),
            gateway: Arc::new(gateway),
            addr,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The gateway.
    pub fn gateway(&self) -> &Arc<Gateway> {
        &self.gateway
    }

    /// Serves until the server is unblocked ([`Running::stop`]), each request on a thread of
    /// its own.
    pub fn run(&self) {
        serve(&self.http, &self.gateway);
    }

    /// Serves on a new thread.
    pub fn spawn(self) -> Running {
        let (http, gateway) = (self.http.clone(), self.gateway.clone());
        let thread = std::thread::spawn(move || serve(&http, &gateway));
        Running {
            http: self.http,
            gateway: self.gateway,
            addr: self.addr,
            thread: Some(thread),
        }
    }
}

impl Running {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL an OpenAI client is given: `http://ADDR/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The gateway.
    pub fn gateway(&self) -> &Arc<Gateway> {
        &self.gateway
    }

    /// Stops accepting requests and waits for the accepting thread (requests in flight finish
    /// on their own threads).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.http.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.halt();
    }
}

fn serve(http: &tiny_http::Server, gateway: &Arc<Gateway>) {
    for rq in http.incoming_requests() {
        let gw = gateway.clone();
        std::thread::spawn(move || route(&gw, rq));
    }
}

/// The request's path, without its query.
fn path_of(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

fn route(gw: &Gateway, rq: Request) {
    let path = path_of(rq.url()).trim_end_matches('/').to_string();
    let get = *rq.method() == Method::Get;
    match path.as_str() {
        "/v1/chat/completions" | "/chat/completions" if *rq.method() == Method::Post => {
            chat(gw, rq)
        }
        "/v1/messages" | "/messages" if *rq.method() == Method::Post => anthropic(gw, rq),
        "/v1/models" | "/models" if get => pass_get(gw, rq),
        p if get && (p.starts_with("/v1/models/") || p.starts_with("/models/")) => pass_get(gw, rq),
        "/trac/sessions" if get => {
            let body = gw.sessions_json().to_string().into_bytes();
            respond(rq, 200, &json_type(), body)
        }
        "/v1/chat/completions"
        | "/chat/completions"
        | "/v1/messages"
        | "/v1/models"
        | "/trac/sessions" => {
            let e = ApiError {
                status: 405,
                ..ApiError::invalid(format!("method {} not allowed on {path}", rq.method()))
            };
            respond_error(rq, &e)
        }
        _ => {
            let e = ApiError {
                status: 404,
                ..ApiError::invalid(format!(
                    "trac gateway serves POST /v1/chat/completions, POST /v1/messages, GET /v1/models and GET /trac/sessions; not {path}"
                ))
            };
            respond_error(rq, &e)
        }
    }
}

fn json_type() -> Headers {
    vec![("Content-Type".into(), "application/json".into())]
}

/// Sends a whole response (a client that went away is not an error of the gateway).
fn respond(rq: Request, status: u16, headers: &[(String, String)], body: Vec<u8>) {
    let mut resp = Response::from_data(body).with_status_code(status);
    for (k, v) in headers {
        if let Ok(h) = Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            resp.add_header(h);
        }
    }
    let _ = rq.respond(resp);
}

fn respond_error(rq: Request, e: &ApiError) {
    respond(rq, e.status, &json_type(), e.body());
}

fn respond_answer(rq: Request, a: Answer) {
    respond(rq, a.status, &a.headers, a.body);
}

/// The request's headers.
fn headers_of(rq: &Request) -> Headers {
    rq.headers()
        .iter()
        .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_string()))
        .collect()
}

/// The request's body, at most `max` bytes.
///
/// # Errors
/// 413 over the limit, 400 when it cannot be read.
fn read_body(rq: &mut Request, max: usize) -> Result<Vec<u8>, ApiError> {
    let too_large = || ApiError {
        status: 413,
        ..ApiError::invalid(format!("the request body is over the limit of {max} bytes"))
    };
    if rq.body_length().is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    rq.as_reader()
        .take(max as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| ApiError::invalid(format!("the request body cannot be read: {e}")))?;
    if body.len() > max {
        return Err(too_large());
    }
    Ok(body)
}

/// The JSON type of `v`, in words.
fn json_type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The chat request in `body`.
///
/// # Errors
/// 400, naming the field, what it must be and what it is: not JSON (with its line and
/// column), not an object, `messages` missing, not an array, or one of its items not an
/// object (with its index), `stream` not a boolean.
fn parse_chat(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("the request body is not valid JSON: {e}")))?;
    let Some(o) = v.as_object() else {
        return Err(ApiError::invalid(format!(
            "the request body must be a JSON object (a chat completion request), not {}",
            json_type_of(&v)
        )));
    };
    let messages = match o.get("messages") {
        None => {
            return Err(ApiError::invalid(
                "'messages' is a required property: an array of chat messages",
            ))
        }
        Some(Value::Array(ms)) => ms,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "'messages' must be an array of chat messages, not {}",
                json_type_of(other)
            )))
        }
    };
    if let Some((i, m)) = messages.iter().enumerate().find(|(_, m)| !m.is_object()) {
        return Err(ApiError::invalid(format!(
            "'messages[{i}]' must be an object (a chat message with a 'role'), not {}",
            json_type_of(m)
        )));
    }
    match o.get("stream") {
        None | Some(Value::Bool(_)) | Some(Value::Null) => Ok(v),
        Some(other) => Err(ApiError::invalid(format!(
            "'stream' must be a boolean, not {}",
            json_type_of(other)
        ))),
    }
}

fn pass_get(gw: &Gateway, rq: Request) {
    let headers = headers_of(&rq);
    let url = rq.url().to_string();
    match gw.upstream().fetch(&url, &headers, None) {
        Ok(a) => respond_answer(rq, a),
        Err(e) => respond_error(rq, &e),
    }
}

/// The conversation's monitor thread stopped: HTTP 500.
fn gone(e: &MonitorGone) -> ApiError {
    ApiError::monitor_stopped(e)
}

/// `POST /v1/messages` (Anthropic's Messages API): its body read here, served by
/// [`crate::messages`].
fn anthropic(gw: &Gateway, mut rq: Request) {
    let headers = headers_of(&rq);
    let body = read_body(&mut rq, gw.options().max_body);
    crate::messages::serve(gw, rq, headers, body)
}

/// `POST /v1/chat/completions`.
fn chat(gw: &Gateway, mut rq: Request) {
    let headers = headers_of(&rq);
    let parsed = read_body(&mut rq, gw.options().max_body).and_then(|b| {
        let v = parse_chat(&b)?;
        ApiError::one_choice(&v)?;
        Ok((b, v))
    });
    let (body, mut req) = match parsed {
        Ok(b) => b,
        Err(e) => return respond_error(rq, &e),
    };
    let header = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(SESSION_HEADER))
        .map(|(_, v)| v.as_str());
    let h = gw.conversation(&session_id(header, &req));
    let _turn = h.turn.lock().unwrap_or_else(|e| e.into_inner());
    let messages = match req["messages"].take() {
        Value::Array(ms) => ms,
        _ => Vec::new(),
    };
    let log = gw.log();
    match gw.with(&h, move |c| c.take_request(&messages, log.as_deref())) {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return respond_error(rq, &ApiError::invalid(e.to_string())),
        Err(e) => return respond_error(rq, &gone(&e)),
    }
    // The upstream gets the path as asked, query string included.
    let path = rq.url().to_string();
    let turn = Turn {
        gw,
        h: &h,
        path: &path,
        headers: &headers,
        body: &body,
    };
    if req.get("stream") == Some(&Value::Bool(true)) {
        turn.streamed(rq)
    } else {
        turn.plain(rq)
    }
}

impl crate::predictive::Turn for Turn<'_> {
    fn gateway(&self) -> &Gateway {
        self.gw
    }

    fn handle(&self) -> &Handle {
        self.h
    }

    fn sample_body(&self) -> Vec<u8> {
        Turn::sample_body(self)
    }

    fn draw(&self, body: &[u8]) -> Result<(Value, Value), String> {
        Turn::draw(self, body)
    }

    fn take(&self, message: Value, check: bool) -> Result<Outcome, ApiError> {
        Turn::take(self, message, check)
    }
}

/// One request of a conversation, past its messages: the upstream's answer to take.
struct Turn<'a> {
    gw: &'a Gateway,
    h: &'a Handle,
    path: &'a str,
    headers: &'a Headers,
    body: &'a [u8],
}

impl Turn<'_> {
    /// The response's message committed (checked first under `shield`, when `check`).
    fn take(&self, message: Value, check: bool) -> Result<Outcome, ApiError> {
        let shield = if check { self.gw.shield() } else { None };
        let log = self.gw.log();
        self.gw
            .with(self.h, move |c| {
                c.take_response(&message, shield, log.as_deref())
            })
            .map_err(|e| gone(&e))
    }

    /// The response's message under `shield` with `--samples N`: when it would violate, the
    /// upstream is asked up to N more times (the same request, not streamed) and the first
    /// sample that violates nothing replaces it; else it is replaced as `--on-block` says. The
    /// completion of the chosen sample comes back with the outcome.
    fn take_first(&self, message: Value) -> Result<(Outcome, Option<Value>), ApiError> {
        if self.gw.options().intervene.predictive() {
            return crate::predictive::take(self, message);
        }
        crate::predictive::take_first_compliant(self, message)
    }

    /// The request as it is sent for a sample: not streamed.
    fn sample_body(&self) -> Vec<u8> {
        let mut v: Value = serde_json::from_slice(self.body).unwrap_or(Value::Null);
        if let Some(o) = v.as_object_mut() {
            o.remove("stream_options");
            o.insert("stream".into(), Value::Bool(false));
        }
        v.to_string().into_bytes()
    }

    /// One sample: the upstream's completion and its assistant message.
    ///
    /// # Errors
    /// No answer, an error status or a body without a message, in words.
    fn draw(&self, body: &[u8]) -> Result<(Value, Value), String> {
        let a = self
            .gw
            .upstream()
            .fetch(self.path, self.headers, Some(body))
            .map_err(|e| e.message)?;
        if !a.ok() {
            // The upstream's words, without the request's API key (an error body may echo it).
            let body = redact(&String::from_utf8_lossy(&a.body), self.headers);
            return Err(format!("the upstream answered {}: {body}", a.status));
        }
        let v: Value = serde_json::from_slice(&a.body)
            .map_err(|e| format!("the upstream's answer is not JSON: {e}"))?;
        let m = v
            .pointer("/choices/0/message")
            .cloned()
            .ok_or_else(|| "the upstream's answer has no choices[0].message".to_string())?;
        Ok((v, m))
    }

    /// An answer that could not be monitored.
    fn unread(&self) {
        let _ = self.gw.with(self.h, |c| c.note_unread());
    }

    /// A non-streamed completion.
    fn plain(&self, rq: Request) {
        let answer = match self
            .gw
            .upstream()
            .fetch(self.path, self.headers, Some(self.body))
        {
            Ok(a) => a,
            Err(e) => return respond_error(rq, &e),
        };
        if !answer.ok() {
            return respond_answer(rq, answer);
        }
        let parsed: Option<Value> = serde_json::from_slice(&answer.body).ok();
        let Some(message) = parsed
            .as_ref()
            .and_then(|v| v.pointer("/choices/0/message"))
            .cloned()
        else {
            self.unread();
            return respond_answer(rq, answer);
        };
        match self.take_first(message) {
            Err(e) => respond_error(rq, &e),
            Ok((Outcome::Pass | Outcome::Unread { .. }, _)) => respond_answer(rq, answer),
            Ok((Outcome::Resampled { message, .. }, chosen)) => {
                let original = parsed.unwrap_or(Value::Null);
                let out = chosen.unwrap_or_else(|| refused_completion(&original, &message));
                respond(rq, 200, &json_type(), out.to_string().into_bytes())
            }
            Ok((Outcome::Refused { message, .. }, _)) => {
                let original = parsed.unwrap_or(Value::Null);
                let out = refused_completion(&original, &message).to_string();
                respond(rq, 200, &json_type(), out.into_bytes())
            }
            Ok((Outcome::Blocked { violations }, _)) => {
                respond_error(rq, &blocked_error(&violations))
            }
        }
    }

    /// A streamed completion: forwarded chunk by chunk as it arrives (monitor only), or read whole,
    /// checked, then sent or replaced (shield).
    fn streamed(&self, rq: Request) {
        let gw = self.gw;
        let url = gw.upstream().url(self.path);
        let mut resp = match gw.upstream().send(self.path, self.headers, Some(self.body)) {
            Ok(r) => r,
            Err(e) => return respond_error(rq, &e),
        };
        let status = resp.status().as_u16();
        let mut headers = response_headers(&resp);
        let whole = |resp: &mut ureq::http::Response<ureq::Body>| {
            resp.body_mut()
                .with_config()
                .limit(MAX_UPSTREAM_BODY)
                .read_to_vec()
                .map_err(|e| unreadable_error(&url, &e))
                .map_err(|mut e| {
                    e.message = redact(&e.message, self.headers);
                    e
                })
        };
        if !(200..300).contains(&status) || gw.buffers() {
            let body = match whole(&mut resp) {
                Ok(b) => b,
                Err(e) => return respond_error(rq, &e),
            };
            let answer = Answer {
                status,
                headers,
                body,
            };
            return if answer.ok() {
                self.shielded_stream(rq, answer)
            } else {
                respond_answer(rq, answer)
            };
        }
        headers.push(("Cache-Control".into(), "no-cache".into()));
        let mut out = match Chunked::start(rq.into_writer(), status, &headers) {
            Ok(o) => o,
            Err(_) => return,
        };
        let mut asm = Assembler::default();
        let mut reader = resp.body_mut().as_reader();
        let mut buf = vec![0u8; 16 << 10];
        loop {
            match read_some(&mut reader, &mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    asm.feed(&buf[..n]);
                    if out.send(&buf[..n]).is_err() {
                        return; // the client went away: the agent did not get the message
                    }
                }
                // A stream broken midway: the client gets what came, the monitor nothing.
                Err(_) => {
                    let _ = out.finish();
                    self.unread();
                    return;
                }
            }
        }
        // Committed before the body ends: a client that has read the whole stream finds its
        // step in the gateway's verdicts.
        match asm.message() {
            Ok(m) => {
                let _ = self.take(m, false);
            }
            Err(_) => self.unread(),
        }
        let _ = out.finish();
    }

    /// A whole 2xx stream under `shield`: its message checked, then the stream sent as it
    /// came, or its replacement.
    fn shielded_stream(&self, rq: Request, answer: Answer) {
        let mut asm = Assembler::default();
        asm.feed(&answer.body);
        let message = match asm.message() {
            Ok(m) => m,
            Err(_) => {
                self.unread();
                return respond_answer(rq, answer);
            }
        };
        let headers = vec![
            ("Content-Type".to_string(), "text/event-stream".to_string()),
            ("Cache-Control".to_string(), "no-cache".to_string()),
        ];
        match self.take_first(message) {
            Err(e) => respond_error(rq, &e),
            Ok((Outcome::Pass | Outcome::Unread { .. }, _)) => respond_answer(rq, answer),
            Ok((Outcome::Resampled { message, .. }, _)) => {
                let body = message_stream(asm.first_chunk(), &message);
                respond(rq, 200, &headers, body)
            }
            Ok((Outcome::Refused { message, .. }, _)) => {
                let text = message["content"].as_str().unwrap_or_default();
                let body = refused_stream(asm.first_chunk(), text);
                respond(rq, 200, &headers, body)
            }
            Ok((Outcome::Blocked { violations }, _)) => {
                respond_error(rq, &blocked_error(&violations))
            }
        }
    }
}
