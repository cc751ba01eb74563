//! `POST /v1/messages`: Anthropic's Messages API through the gateway, streamed or not, with the
//! conversations, monitors, log and shield of the chat completions flow ([`crate::http`]).
//!
//! The request's conversation is its `system` prompt and `messages` ([`log_messages`]); the
//! messages it adds since the conversation's last request are committed and logged as they are
//! (Anthropic content blocks: `tool_use` blocks are tool calls, `tool_result` blocks tool
//! results, read by the trace reader as `trac audit` reads them), the request goes to the
//! upstream unchanged (body and credentials: `x-api-key`, `anthropic-version`, ...), and the
//! response's assistant message (its `content` blocks) is checked (under `shield`), committed
//! and logged before the client gets it, or its replacement: the first compliant of `--samples
//! N` more answers, else a refusal as a Messages response (or stream), or with `--on-block
//! error` an Anthropic-style error (HTTP 400, `{"type": "error", "error": {"type":
//! "trac_blocked", ...}}`). Monitoring only, a stream is passed through byte for byte as it
//! arrives. The gateway's own errors are Anthropic-shaped ([`error_body`]).

use crate::anthropic::{
    blocked_error, error_body, log_messages, message_events, parse_request, replaced_response,
    response_message, session_id, Assembler,
};
use crate::api::ApiError;
use crate::conversation::Outcome;
use crate::gateway::{Gateway, Handle, SESSION_HEADER};
use crate::stream::Chunked;
use crate::upstream::{
    read_some, redact, response_headers, unreadable_error, Answer, MAX_UPSTREAM_BODY,
};
use serde_json::Value;
use tiny_http::{Header, Request, Response};

/// Headers as `(name, value)` pairs.
type Headers = Vec<(String, String)>;

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

fn json_type() -> Headers {
    vec![("Content-Type".into(), "application/json".into())]
}

fn sse_type() -> Headers {
    vec![
        ("Content-Type".into(), "text/event-stream".into()),
        ("Cache-Control".into(), "no-cache".into()),
    ]
}

/// An error of the gateway, in Anthropic's shape.
fn respond_error(rq: Request, e: &ApiError) {
    respond(rq, e.status, &json_type(), error_body(e));
}

fn respond_answer(rq: Request, a: Answer) {
    respond(rq, a.status, &a.headers, a.body);
}

/// The conversation's monitor thread stopped: HTTP 500.
fn gone(e: &crate::monitors::MonitorGone) -> ApiError {
    ApiError::monitor_stopped(e)
}

/// Serves one `POST /v1/messages` whose `headers` and `body` (or why it could not be read) the
/// HTTP server read.
pub fn serve(gw: &Gateway, rq: Request, headers: Headers, body: Result<Vec<u8>, ApiError>) {
    let parsed = body.and_then(|b| {
        let v = parse_request(&b)?;
        Ok((b, v))
    });
    let (body, req) = match parsed {
        Ok(b) => b,
        Err(e) => return respond_error(rq, &e),
    };
    let header = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(SESSION_HEADER))
        .map(|(_, v)| v.as_str());
    let h = gw.conversation(&session_id(header, &req));
    let _turn = h.turn.lock().unwrap_or_else(|e| e.into_inner());
    let messages = log_messages(&req);
    let log = gw.log();
    match gw.with(&h, move |c| c.take_request(&messages, log.as_deref())) {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            // `log_messages` puts the `system` prompt first: name the index in `messages`.
            let offset = usize::from(req.get("system").is_some_and(|s| !s.is_null()));
            let e = match e.index.checked_sub(offset) {
                Some(i) => ApiError::invalid(format!("'messages[{i}]': {}", e.error.message)),
                None => ApiError::invalid(format!("'system': {}", e.error.message)),
            };
            return respond_error(rq, &e);
        }
        Err(e) => return respond_error(rq, &gone(&e)),
    }
    let path = rq.url().to_string();
    let ex = Exchange {
        gw,
        h: &h,
        path: &path,
        headers: &headers,
        body: &body,
    };
    if req.get("stream") == Some(&Value::Bool(true)) {
        ex.streamed(rq)
    } else {
        ex.plain(rq)
    }
}

impl crate::predictive::Turn for Exchange<'_> {
    fn gateway(&self) -> &Gateway {
        self.gw
    }

    fn handle(&self) -> &Handle {
        self.h
    }

    fn sample_body(&self) -> Vec<u8> {
        Exchange::sample_body(self)
    }

    fn draw(&self, body: &[u8]) -> Result<(Value, Value), String> {
        Exchange::draw(self, body)
    }

    fn take(&self, message: Value, check: bool) -> Result<Outcome, ApiError> {
        Exchange::take(self, message, check)
    }
}

/// One request of a conversation, past its messages: the upstream's answer to take.
struct Exchange<'a> {
    gw: &'a Gateway,
    h: &'a Handle,
    path: &'a str,
    headers: &'a Headers,
    body: &'a [u8],
}

impl Exchange<'_> {
    /// Runs `f` on the conversation.
    fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut crate::conversation::Conversation) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        self.gw.with(self.h, f).map_err(|e| gone(&e))
    }

    /// The response's message committed (checked first under `shield`, when `check`).
    fn take(&self, message: Value, check: bool) -> Result<Outcome, ApiError> {
        let shield = if check { self.gw.shield() } else { None };
        let log = self.gw.log();
        self.with(move |c| c.take_response(&message, shield, log.as_deref()))
    }

    /// The response's message under `shield`: with `--samples N`, when it would violate, the
    /// upstream is asked up to N more times (the same request, not streamed) and the first
    /// sample that violates nothing replaces it (its whole response comes back with the
    /// outcome); else it is replaced as `--on-block` says.
    fn take_first(&self, message: Value) -> Result<(Outcome, Option<Value>), ApiError> {
        crate::predictive::take_first_compliant(self, message)
    }

    /// The request as it is sent for a sample: not streamed.
    fn sample_body(&self) -> Vec<u8> {
        let mut v: Value = serde_json::from_slice(self.body).unwrap_or(Value::Null);
        if let Some(o) = v.as_object_mut() {
            o.insert("stream".into(), Value::Bool(false));
        }
        v.to_string().into_bytes()
    }

    /// One sample: the upstream's response and its assistant message.
    ///
    /// # Errors
    /// No answer, an error status or a body that is not a message, in words.
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
        let m = response_message(&v)
            .ok_or_else(|| "the upstream's answer has no content array".to_string())?;
        Ok((v, m))
    }

    /// An answer that could not be monitored.
    fn unread(&self) {
        let _ = self.with(|c| c.note_unread());
    }

    /// A non-streamed response.
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
        let parsed: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        let Some(message) = response_message(&parsed) else {
            self.unread();
            return respond_answer(rq, answer);
        };
        let out = match self.take_first(message) {
            Err(e) => return respond_error(rq, &e),
            Ok((Outcome::Pass | Outcome::Unread { .. }, _)) => return respond_answer(rq, answer),
            Ok((Outcome::Resampled { message, .. }, chosen)) => {
                chosen.unwrap_or_else(|| replaced_response(&parsed, &message))
            }
            Ok((Outcome::Refused { message, .. }, _)) => replaced_response(&parsed, &message),
            Ok((Outcome::Blocked { violations }, _)) => {
                return respond_error(rq, &blocked_error(&violations))
            }
        };
        respond(rq, 200, &json_type(), out.to_string().into_bytes())
    }

    /// A streamed response: forwarded event by event as it arrives (monitor only), or read
    /// whole, checked, then sent or replaced (shield).
    fn streamed(&self, rq: Request) {
        let gw = self.gw;
        let url = gw.upstream().url(self.path);
        let mut resp = match gw.upstream().send(self.path, self.headers, Some(self.body)) {
            Ok(r) => r,
            Err(e) => return respond_error(rq, &e),
        };
        let status = resp.status().as_u16();
        let mut headers = response_headers(&resp);
        if !(200..300).contains(&status) || gw.shield().is_some() {
            let body = match resp
                .body_mut()
                .with_config()
                .limit(MAX_UPSTREAM_BODY)
                .read_to_vec()
            {
                Ok(b) => b,
                Err(e) => return respond_error(rq, &unreadable_error(&url, &e)),
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
        let Ok(mut out) = Chunked::start(rq.into_writer(), status, &headers) else {
            return;
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
                    return self.unread();
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
        let Ok(message) = asm.message() else {
            self.unread();
            return respond_answer(rq, answer);
        };
        let body = match self.take_first(message) {
            Err(e) => return respond_error(rq, &e),
            Ok((Outcome::Pass | Outcome::Unread { .. }, _)) => return respond_answer(rq, answer),
            Ok((Outcome::Resampled { message, .. } | Outcome::Refused { message, .. }, _)) => {
                message_events(asm.start(), &message)
            }
            Ok((Outcome::Blocked { violations }, _)) => {
                return respond_error(rq, &blocked_error(&violations))
            }
        };
        respond(rq, 200, &sse_type(), body)
    }
}
