//! Streamed chat completions (server-sent events): the assistant message assembled from the
//! chunks ([`Assembler`]), and the chunked HTTP body that carries them to the client
//! ([`Chunked`]).

use serde_json::{json, Map, Value};
use std::io::Write;

/// Why a streamed message cannot be monitored.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StreamError {
    /// A data line is not JSON (or a chunk is out of bounds).
    #[error("the stream is malformed: {0}")]
    Malformed(String),
    /// No chunk came.
    #[error("the stream has no chunk")]
    Empty,
}

/// One tool call being assembled from its deltas.
#[derive(Clone, Debug, Default)]
struct PartialCall {
    id: Option<String>,
    kind: Option<String>,
    name: String,
    arguments: String,
}

/// The assistant message of a streamed completion, built from its SSE chunks as they arrive
/// (`data: {...}` lines; `choices[0].delta`: `role`, `content`, `refusal`, `tool_calls` by
/// `index`, their `id`, `function.name` and `function.arguments` concatenated), up to
/// `data: [DONE]`.
#[derive(Clone, Debug, Default)]
pub struct Assembler {
    line: Vec<u8>,
    role: Option<String>,
    content: Option<String>,
    refusal: Option<String>,
    calls: Vec<PartialCall>,
    first: Option<Value>,
    chunks: usize,
    done: bool,
    bad: Option<String>,
}

/// Appends string `v` (if it is one) to `to`.
fn append(to: &mut Option<String>, v: Option<&Value>) {
    if let Some(s) = v.and_then(Value::as_str) {
        to.get_or_insert_with(String::new).push_str(s);
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

    /// One whole line of the stream.
    fn line_done(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches('\r');
        let Some(data) = line.strip_prefix("data:") else {
            return; // comments, `event:`, `id:`, blank separators
        };
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(chunk) => self.chunk(chunk),
            Err(e) => {
                self.bad
                    .get_or_insert(format!("a data line is not JSON ({e})"));
            }
        }
    }

    /// One parsed chunk.
    fn chunk(&mut self, chunk: Value) {
        self.chunks += 1;
        let delta = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            })
            .and_then(|c| c.get("delta"))
            .cloned();
        if self.first.is_none() {
            self.first = Some(chunk);
        }
        let Some(delta) = delta else { return };
        if let Some(r) = delta.get("role").and_then(Value::as_str) {
            self.role = Some(r.to_string());
        }
        append(&mut self.content, delta.get("content"));
        append(&mut self.refusal, delta.get("refusal"));
        for tc in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = tc.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            if i >= self.calls.len() {
                // Indexes beyond what a message can hold are a malformed stream, not memory.
                if i > 1024 {
                    self.bad.get_or_insert(format!("tool call index {i}"));
                    continue;
                }
                self.calls.resize(i + 1, PartialCall::default());
            }
            let c = &mut self.calls[i];
            if let Some(id) = tc.get("id").and_then(Value::as_str) {
                c.id = Some(id.to_string());
            }
            if let Some(k) = tc.get("type").and_then(Value::as_str) {
                c.kind = Some(k.to_string());
            }
            if let Some(f) = tc.get("function") {
                let (mut name, mut args) = (None, None);
                append(&mut name, f.get("name"));
                append(&mut args, f.get("arguments"));
                c.name.push_str(name.as_deref().unwrap_or(""));
                c.arguments.push_str(args.as_deref().unwrap_or(""));
            }
        }
    }

    /// Whether `data: [DONE]` was read.
    pub fn done(&self) -> bool {
        self.done
    }

    /// The first chunk (its `id`, `model`, `created` serve a replacement stream).
    pub fn first_chunk(&self) -> Option<&Value> {
        self.first.as_ref()
    }

    /// The assembled assistant message, in the shape of a non-streamed completion's
    /// `choices[0].message`.
    ///
    /// # Errors
    /// The stream had no chunk, or a data line that is not JSON: it cannot be monitored.
    pub fn message(&self) -> Result<Value, StreamError> {
        if let Some(bad) = &self.bad {
            return Err(StreamError::Malformed(bad.clone()));
        }
        if self.chunks == 0 {
            return Err(StreamError::Empty);
        }
        let mut m = Map::new();
        m.insert(
            "role".into(),
            json!(self.role.as_deref().unwrap_or("assistant")),
        );
        m.insert("content".into(), json!(self.content));
        if let Some(r) = &self.refusal {
            m.insert("refusal".into(), json!(r));
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": c.kind.as_deref().unwrap_or("function"),
                        "function": {"name": c.name, "arguments": c.arguments},
                    })
                })
                .collect();
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        Ok(Value::Object(m))
    }
}

/// An HTTP/1.1 response with a chunked body written straight to the client's connection, each
/// piece flushed as it is given (tiny_http's own writer buffers 8 KiB, which would hold back
/// the events of a stream).
pub struct Chunked<W: Write> {
    out: W,
}

impl<W: Write> Chunked<W> {
    /// Writes the status line and `headers` (plus `Transfer-Encoding: chunked`).
    ///
    /// # Errors
    /// The client's connection failed.
    pub fn start(mut out: W, status: u16, headers: &[(String, String)]) -> std::io::Result<Self> {
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
        out.write_all(head.as_bytes())?;
        out.flush()?;
        Ok(Chunked { out })
    }

    /// Sends `bytes` as one chunk, at once.
    ///
    /// # Errors
    /// The client's connection failed.
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        write!(self.out, "{:x}\r\n", bytes.len())?;
        self.out.write_all(bytes)?;
        self.out.write_all(b"\r\n")?;
        self.out.flush()
    }

    /// Ends the body.
    ///
    /// # Errors
    /// The client's connection failed.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.write_all(b"0\r\n\r\n")?;
        self.out.flush()
    }
}

/// The reason phrase of the statuses a stream is started with.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_assembled_from_deltas_split_anywhere() {
        let stream = concat!(
            "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"get_\",\"arguments\":\"\"}}]}}]}\n\n",
            ": a comment\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"user\",\"arguments\":\"{\\\"x\\\":\"}},{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"book\",\"arguments\":\"{}\"}}]}}]}\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\" 1}\"}}]}}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\n",
            "data: [DONE]\n\n",
        );
        // Fed in pieces of 7 bytes: lines and UTF-8 are joined across calls.
        let mut asm = Assembler::default();
        for piece in stream.as_bytes().chunks(7) {
            asm.feed(piece);
        }
        assert!(asm.done());
        assert_eq!(asm.first_chunk().unwrap()["id"], "c");
        let m = asm.message().unwrap();
        assert_eq!(
            m,
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_user", "arguments": "{\"x\": 1}"}},
                {"id": "b", "type": "function", "function": {"name": "book", "arguments": "{}"}},
            ]})
        );
    }

    #[test]
    fn text_and_refusals_are_concatenated_and_a_bad_stream_is_an_error() {
        let mut asm = Assembler::default();
        asm.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n");
        asm.feed(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo \xc3\xa9\"}}]}\n\n",
        );
        asm.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"no\"}}]}\n\n");
        let m = asm.message().unwrap();
        assert_eq!(m["content"], "Hello é");
        assert_eq!(m["refusal"], "no");
        assert!(!asm.done());
        assert!(matches!(
            Assembler::default().message(),
            Err(StreamError::Empty)
        ));
        let mut bad = Assembler::default();
        bad.feed(b"data: {\"choices\": [\n\n");
        assert!(matches!(bad.message(), Err(StreamError::Malformed(_))));
    }

    #[test]
    fn chunked_bodies_are_framed_and_flushed() {
        let mut out = Vec::new();
        let mut c = Chunked::start(
            &mut out,
            200,
            &[("Content-Type".into(), "text/event-stream".into())],
        )
        .unwrap();
        c.send(b"hello").unwrap();
        c.send(b"").unwrap();
        c.send(&[b'x'; 20]).unwrap();
        c.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n14\r\n{}\r\n0\r\n\r\n",
                "x".repeat(20)
            )
        );
    }
}
