//! The shapes of Anthropic's Messages API (`POST /v1/messages`) the gateway reads and writes:
//! the conversation of a request as log messages ([`log_messages`]), the assistant message of a
//! response ([`response_message`]) or of a stream of its server-sent events ([`Assembler`]), a
//! replacement response ([`replaced_response`]) or stream ([`message_events`]), and the gateway's
//! own errors in Anthropic's shape ([`error_body`], [`blocked_error`]).
//!
//! Shapes as documented by Anthropic (<https://docs.anthropic.com/en/api/messages> and
//! <https://docs.anthropic.com/en/api/messages-streaming>): a request has `system` (a string or
//! text blocks) beside `messages` (`user` / `assistant`, `content` a string or blocks: `text`,
//! `tool_use` with `id`, `name`, `input`, `tool_result` with `tool_use_id`); a response is
//! `{"type": "message", "role": "assistant", "content": [blocks], "stop_reason", ...}`; a stream
//! is `message_start`, then per block `content_block_start`, `content_block_delta`s
//! (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`) and
//! `content_block_stop`, then `message_delta` (the `stop_reason`) and `message_stop`, with `ping`
//! and `error` events anywhere.

use crate::api::ApiError;
use crate::shield::Violation;
use serde_json::{json, Map, Value};

/// The log messages of a Messages request: its `system` (if any) as a `system` message, then its
/// `messages` as they are. Every request of a conversation repeats its system prompt, so the
/// log holds it once, as its first line; the trace reader reads that line as it reads the
/// top-level `system` of an Anthropic conversation.
pub fn log_messages(request: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(system) = request.get("system").filter(|s| !s.is_null()) {
        out.push(json!({"role": "system", "content": system}));
    }
    if let Some(ms) = request.get("messages").and_then(Value::as_array) {
        out.extend(ms.iter().cloned());
    }
    out
}

/// The request in `body`.
///
/// # Errors
/// 400: not JSON, not an object, no `messages` array, a `system` that is neither a string nor
/// an array of blocks.
pub fn parse_request(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("the request body is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::invalid(
            "the request body must be a JSON object (a Messages API request)",
        ));
    }
    if !v.get("messages").is_some_and(Value::is_array) {
        return Err(ApiError::invalid(
            "messages: Field required (an array of user and assistant messages)",
        ));
    }
    match v.get("system") {
        None | Some(Value::Null | Value::String(_) | Value::Array(_)) => Ok(v),
        Some(_) => Err(ApiError::invalid(
            "system: expected a string or an array of text blocks",
        )),
    }
}

/// The session id of a Messages request: as [`crate::gateway::session_id`], with `user`
/// read from `metadata.user_id` and the system prompt from the top-level `system`.
pub fn session_id(header: Option<&str>, request: &Value) -> String {
    let probe = json!({
        "user": request.pointer("/metadata/user_id").cloned().unwrap_or(Value::Null),
        "messages": log_messages(request),
    });
    crate::gateway::session_id(header, &probe)
}

/// The assistant message of a non-streamed response: `{"role": "assistant", "content":
/// [blocks]}`, as the agent appends it to its history; `None` when the body has no `content`
/// array (not a message).
pub fn response_message(response: &Value) -> Option<Value> {
    let content = response.get("content").filter(|c| c.is_array())?;
    Some(json!({"role": "assistant", "content": content}))
}

/// The content blocks of assistant message `message` (a string content is one `text` block; a
/// null one, none).
pub fn blocks(message: &Value) -> Vec<Value> {
    match message.get("content") {
        Some(Value::Array(bs)) => bs.clone(),
        Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
        _ => Vec::new(),
    }
}

/// The stop reason of a message made of `blocks`: `tool_use` when one is a tool call, else
/// `end_turn`.
fn stop_reason(blocks: &[Value]) -> &'static str {
    if blocks.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// Response `original` with its content replaced by the blocks of `message` (a refusal, or a
/// sample's message), its `stop_reason` set to match and `stop_sequence` cleared; its `id`,
/// `model` and `usage` are kept.
pub fn replaced_response(original: &Value, message: &Value) -> Value {
    let mut out = match original {
        Value::Object(_) => original.clone(),
        _ => json!({"type": "message", "role": "assistant"}),
    };
    let bs = blocks(message);
    out["stop_reason"] = json!(stop_reason(&bs));
    out["stop_sequence"] = Value::Null;
    out["content"] = Value::Array(bs);
    out
}

/// One server-sent event: `event: TYPE` and its data.
fn event(out: &mut String, data: &Value) {
    let ty = data["type"].as_str().unwrap_or("message");
    out.push_str(&format!("event: {ty}\ndata: {data}\n\n"));
}

/// Assistant message `message` (a refusal or a sample's message) as a stream of Messages API
/// events: `message_start` (with `start`'s `id`, `model` and `usage`: the upstream's own
/// `message_start` message, when there was one), each block whole (a text block's text in one
/// `text_delta`, a tool call's input in one `input_json_delta`), `message_delta` with the stop
/// reason, `message_stop`.
pub fn message_events(start: Option<&Value>, message: &Value) -> Vec<u8> {
    let field = |k: &str| start.and_then(|s| s.get(k)).cloned().unwrap_or(Value::Null);
    let bs = blocks(message);
    let mut out = String::new();
    event(
        &mut out,
        &json!({"type": "message_start", "message": {
            "id": field("id"), "type": "message", "role": "assistant", "content": [],
            "model": field("model"), "stop_reason": null, "stop_sequence": null,
            "usage": field("usage"),
        }}),
    );
    for (i, b) in bs.iter().enumerate() {
        let (head, delta) = match b["type"].as_str() {
            Some("tool_use") => {
                let mut head = b.clone();
                head["input"] = json!({});
                let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                let d = json!({"type": "input_json_delta", "partial_json": input.to_string()});
                (head, Some(d))
            }
            Some("text") => {
                let text = b["text"].as_str().unwrap_or_default();
                let mut head = b.clone();
                head["text"] = json!("");
                (head, Some(json!({"type": "text_delta", "text": text})))
            }
            _ => (b.clone(), None),
        };
        event(
            &mut out,
            &json!({"type": "content_block_start", "index": i, "content_block": head}),
        );
        if let Some(d) = delta {
            event(
                &mut out,
                &json!({"type": "content_block_delta", "index": i, "delta": d}),
            );
        }
        event(&mut out, &json!({"type": "content_block_stop", "index": i}));
    }
    let output_tokens = start
        .and_then(|s| s.pointer("/usage/output_tokens"))
        .cloned()
        .unwrap_or(json!(0));
    event(
        &mut out,
        &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason(&bs), "stop_sequence": null},
                "usage": {"output_tokens": output_tokens}}),
    );
    event(&mut out, &json!({"type": "message_stop"}));
    out.into_bytes()
}

/// An error of the gateway itself in Anthropic's shape: `{"type": "error", "error": {"type",
/// "message"}}` (and the property, for a blocked response).
pub fn error_body(e: &ApiError) -> Vec<u8> {
    let mut error = json!({"type": e.kind, "message": e.message});
    if let Some(c) = &e.code {
        error["code"] = json!(c);
    }
    json!({"type": "error", "error": error})
        .to_string()
        .into_bytes()
}

/// The error of `--on-block error` on `/v1/messages`: HTTP 400, error type `trac_blocked`, the
/// first property's id as `code` (the body by [`error_body`]).
pub fn blocked_error(violations: &[Violation]) -> ApiError {
    crate::shield::blocked_error(violations)
}

/// Why a streamed message cannot be monitored.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StreamError {
    /// A data line is not JSON, or an event is out of place.
    #[error("the stream is malformed: {0}")]
    Malformed(String),
    /// The upstream sent an `error` event.
    #[error("the stream ended on an error event: {0}")]
    Failed(String),
    /// No `message_start` came.
    #[error("the stream has no message_start event")]
    Empty,
}

/// One content block being assembled: the block as started, and the JSON of its input so far.
#[derive(Clone, Debug)]
struct Partial {
    block: Value,
    json: String,
}

/// The assistant message of a streamed Messages response, built from its server-sent events as
/// they arrive (`data:` lines; `event:` lines are not needed: each data object has its `type`),
/// in the shape of [`response_message`].
#[derive(Clone, Debug, Default)]
pub struct Assembler {
    line: Vec<u8>,
    start: Option<Value>,
    blocks: Vec<Partial>,
    done: bool,
    bad: Option<StreamError>,
}

/// Appends string `v` (if it is one) to field `key` of `block`.
fn append(block: &mut Value, key: &str, v: Option<&Value>) {
    if let Some(s) = v.and_then(Value::as_str) {
        let mut t = block[key].as_str().unwrap_or_default().to_string();
        t.push_str(s);
        block[key] = json!(t);
    }
}

impl Assembler {
    /// Reads the next bytes of the stream (any split: lines are joined across calls).
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                let line = std::mem::take(&mut self.line);
                self.line_done(&line);
            } else {
                self.line.push(b);
            }
        }
    }

    fn fail(&mut self, e: StreamError) {
        self.bad.get_or_insert(e);
    }

    fn line_done(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        let Some(data) = line.trim_end_matches('\r').strip_prefix("data:") else {
            return; // `event:` lines, comments, blank separators
        };
        match serde_json::from_str::<Value>(data.trim()) {
            Ok(ev) => self.event(ev),
            Err(e) => self.fail(StreamError::Malformed(format!(
                "a data line is not JSON ({e})"
            ))),
        }
    }

    /// The block of event `ev`'s `index`.
    fn block(&mut self, ev: &Value) -> Option<&mut Partial> {
        let i = ev.get("index").and_then(Value::as_u64)? as usize;
        self.blocks.get_mut(i)
    }

    fn event(&mut self, ev: Value) {
        match ev["type"].as_str().unwrap_or_default() {
            "message_start" => self.start = Some(ev["message"].clone()),
            "content_block_start" => {
                let i = ev["index"].as_u64().unwrap_or(u64::MAX);
                if i != self.blocks.len() as u64 {
                    return self.fail(StreamError::Malformed(format!(
                        "content_block_start of block {i} after {} blocks",
                        self.blocks.len()
                    )));
                }
                self.blocks.push(Partial {
                    block: ev["content_block"].clone(),
                    json: String::new(),
                });
            }
            "content_block_delta" => {
                let d = ev["delta"].clone();
                let Some(p) = self.block(&ev) else {
                    return self.fail(StreamError::Malformed(
                        "a content_block_delta of no started block".into(),
                    ));
                };
                match d["type"].as_str().unwrap_or_default() {
                    "text_delta" => append(&mut p.block, "text", d.get("text")),
                    "thinking_delta" => append(&mut p.block, "thinking", d.get("thinking")),
                    "signature_delta" => append(&mut p.block, "signature", d.get("signature")),
                    "input_json_delta" => {
                        p.json
                            .push_str(d["partial_json"].as_str().unwrap_or_default());
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let Some(p) = self.block(&ev) else { return };
                if p.json.trim().is_empty() {
                    return;
                }
                match serde_json::from_str::<Value>(&p.json) {
                    Ok(input) => {
                        p.block["input"] = input;
                        p.json.clear();
                    }
                    Err(e) => self.fail(StreamError::Malformed(format!(
                        "the input of a tool_use block is not JSON ({e})"
                    ))),
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let why = ev["error"]["message"].as_str().unwrap_or_default();
                self.fail(StreamError::Failed(why.to_string()));
            }
            _ => {} // ping, message_delta, and types to come
        }
    }

    /// Whether `message_stop` was read.
    pub fn done(&self) -> bool {
        self.done
    }

    /// The message of `message_start` (its `id`, `model` and `usage` serve a replacement
    /// stream).
    pub fn start(&self) -> Option<&Value> {
        self.start.as_ref()
    }

    /// The assembled assistant message: `{"role": "assistant", "content": [blocks]}`.
    ///
    /// # Errors
    /// No `message_start`, a data line that is not JSON, a tool call whose input is not JSON, an
    /// `error` event: it cannot be monitored.
    pub fn message(&self) -> Result<Value, StreamError> {
        if let Some(bad) = &self.bad {
            return Err(bad.clone());
        }
        if self.start.is_none() {
            return Err(StreamError::Empty);
        }
        let content: Vec<Value> = self.blocks.iter().map(|p| p.block.clone()).collect();
        let mut m = Map::new();
        m.insert("role".into(), json!("assistant"));
        m.insert("content".into(), Value::Array(content));
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_streamed_assembles_back_to_itself_split_anywhere() {
        let start =
            json!({"id": "msg_1", "model": "m", "usage": {"input_tokens": 3, "output_tokens": 2}});
        let call = json!({"role": "assistant", "content": [
            {"type": "text", "text": "Looking you up."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_user_details", "input": {"user_id": "u", "n": [1, 2]}},
        ]});
        let text = json!({"role": "assistant", "content": "Shall I? Please confirm."});
        for (m, stop) in [(&call, "tool_use"), (&text, "end_turn")] {
            let body = message_events(Some(&start), m);
            let s = String::from_utf8(body.clone()).unwrap();
            assert!(s.starts_with("event: message_start\n"), "{s}");
            assert!(s.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
            assert!(s.contains(&format!("\"stop_reason\":\"{stop}\"")), "{s}");
            for cut in [1, 7, 50, body.len() - 3] {
                let mut asm = Assembler::default();
                asm.feed(&body[..cut]);
                asm.feed(&body[cut..]);
                assert!(asm.done());
                assert_eq!(asm.message().unwrap()["content"], json!(blocks(m)), "{s}");
                assert_eq!(asm.start().unwrap()["id"], "msg_1");
            }
        }
    }

    #[test]
    fn a_broken_stream_cannot_be_monitored() {
        let cases = [
            ("", "no message_start"),
            ("data: {\"type\":\"message_start\",\"message\":{}}\n\ndata: {nope\n\n", "not JSON"),
            (
                "data: {\"type\":\"message_start\",\"message\":{}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
                "no started block",
            ),
            (
                "data: {\"type\":\"message_start\",\"message\":{}}\n\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
                "input of a tool_use block",
            ),
            (
                "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
                "Overloaded",
            ),
        ];
        for (stream, why) in cases {
            let mut asm = Assembler::default();
            asm.feed(stream.as_bytes());
            let e = asm.message().unwrap_err().to_string();
            assert!(e.contains(why), "{stream}: {e}");
        }
    }

    #[test]
    fn a_request_logs_its_system_prompt_first_and_names_its_session() {
        let req = json!({"model": "m", "max_tokens": 9, "system": "be nice",
            "messages": [{"role": "user", "content": "hi"}]});
        let ms = log_messages(&req);
        assert_eq!(ms[0], json!({"role": "system", "content": "be nice"}));
        assert_eq!(ms.len(), 2);
        let other = json!({"system": "be kind", "messages": [{"role": "user", "content": "hi"}]});
        assert_ne!(session_id(None, &req), session_id(None, &other));
        let named = json!({"metadata": {"user_id": "u-9"}, "messages": []});
        assert_eq!(session_id(None, &named), "u-9");
        assert!(parse_request(br#"{"messages": [], "system": 3}"#).is_err());
        assert!(parse_request(br#"{"model": "m"}"#).is_err());
        let replaced = replaced_response(
            &json!({"id": "msg_1", "content": [], "stop_reason": "tool_use", "usage": {}}),
            &json!({"role": "assistant", "content": "no"}),
        );
        assert_eq!(replaced["content"], json!([{"type": "text", "text": "no"}]));
        assert_eq!(replaced["stop_reason"], "end_turn");
        assert_eq!(replaced["id"], "msg_1");
    }
}
