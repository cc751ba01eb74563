//! What replaces a blocked response under `--intervene shield`: the first compliant of
//! `--samples N` more upstream samples ([`Sample`]), else a refusal (an assistant message stating
//! the rule, without tool calls), as a completion or as a stream, or an OpenAI-style error
//! (`--on-block error`).

use crate::api::{ApiError, BLOCKED};
use serde::Serialize;
use serde_json::{json, Value};

/// A property the blocked response would have violated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The property's id.
    pub property: String,
    /// The value of a parametric property's variable.
    pub value: Option<String>,
    /// The rule in English: the property's description, else its formula in English.
    pub rule: String,
}

/// One more sample the upstream was asked for, for a blocked response (`--samples`).
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    /// Its assistant message, when the upstream gave a completion.
    pub message: Option<Value>,
    /// What it would have violated (none: it was chosen).
    pub properties: Vec<Violation>,
    /// Why it could not be used: the upstream's error, or a message the monitors cannot read.
    pub error: Option<String>,
}

/// The rules of `violations` quoted, and whether there are several.
fn rules(violations: &[Violation]) -> (String, bool) {
    let rules: Vec<String> = violations
        .iter()
        .map(|v| match &v.value {
            Some(x) => format!("\"{}\" (for {x})", v.rule),
            None => format!("\"{}\"", v.rule),
        })
        .collect();
    (rules.join("; "), rules.len() > 1)
}

/// The refusal's text: the rule(s) the response would have broken.
pub fn refusal_text(violations: &[Violation]) -> String {
    let (rules, several) = rules(violations);
    let (s, these) = if several {
        ("s", "these rules")
    } else {
        ("", "this rule")
    };
    format!("I can't do that: it would break the rule{s} {rules}. I need to follow {these} first.")
}

/// The refusal as an assistant message (no tool call).
pub fn refusal_message(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// The non-streamed completion `original` with its first choice's message replaced by
/// `message` (`finish_reason` `stop`); its other fields (`id`, `model`, `usage`) are kept.
pub fn refused_completion(original: &Value, message: &Value) -> Value {
    let mut out = original.clone();
    let choice = json!({"index": 0, "message": message, "finish_reason": "stop", "logprobs": null});
    match out.get_mut("choices").and_then(Value::as_array_mut) {
        Some(cs) if !cs.is_empty() => {
            cs.truncate(1);
            cs[0] = choice;
        }
        _ => out["choices"] = json!([choice]),
    }
    out
}

/// The refusal as a stream of chat completion chunks: the text in one chunk, a `stop` chunk,
/// `data: [DONE]`; `id`, `model` and `created` from the upstream's first chunk.
pub fn refused_stream(first: Option<&Value>, text: &str) -> Vec<u8> {
    message_stream(first, &refusal_message(text))
}

/// Assistant message `message` (the refusal, or a resampled response) as a stream of chat
/// completion chunks: its role, text and tool calls (each whole, with its `index`) in one
/// chunk, a finish chunk (`tool_calls` when it has some, else `stop`), `data: [DONE]`; `id`,
/// `model` and `created` from the upstream's first chunk.
pub fn message_stream(first: Option<&Value>, message: &Value) -> Vec<u8> {
    let field = |k: &str| first.and_then(|f| f.get(k)).cloned().unwrap_or(Value::Null);
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": field("id"),
            "object": "chat.completion.chunk",
            "created": field("created"),
            "model": field("model"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut delta = json!({
        "role": "assistant",
        "content": message.get("content").cloned().unwrap_or(Value::Null),
    });
    let calls: Vec<Value> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .enumerate()
                .map(|(i, c)| {
                    let mut c = c.clone();
                    if let Some(o) = c.as_object_mut() {
                        o.insert("index".into(), json!(i));
                    }
                    c
                })
                .collect()
        })
        .unwrap_or_default();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        delta["tool_calls"] = Value::Array(calls);
        "tool_calls"
    };
    let mut out = String::new();
    for c in [chunk(delta, Value::Null), chunk(json!({}), json!(finish))] {
        out.push_str(&format!("data: {c}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

/// The error of `--on-block error`: HTTP 400, type [`BLOCKED`], code the first property's id.
pub fn blocked_error(violations: &[Violation]) -> ApiError {
    ApiError {
        status: 400,
        kind: BLOCKED,
        code: violations.first().map(|v| v.property.clone()),
        message: {
            let (rules, several) = rules(violations);
            let s = if several { "s" } else { "" };
            format!("trac gateway blocked the response: it would break the rule{s} {rules}")
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::Assembler;

    #[test]
    fn a_message_streamed_assembles_back_to_itself() {
        let first = json!({"id": "c1", "created": 7, "model": "m"});
        let call = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_user_details", "arguments": "{\"user_id\":\"u\"}"}},
            {"id": "call_2", "type": "function",
             "function": {"name": "search", "arguments": "{}"}},
        ]});
        let text = json!({"role": "assistant", "content": "Shall I? Please confirm."});
        for (m, finish) in [(&call, "tool_calls"), (&text, "stop")] {
            let body = message_stream(Some(&first), m);
            let s = String::from_utf8(body.clone()).unwrap();
            assert!(s.ends_with("data: [DONE]\n\n"), "{s}");
            assert!(
                s.contains(&format!("\"finish_reason\":\"{finish}\"")),
                "{s}"
            );
            let mut asm = Assembler::default();
            asm.feed(&body);
            let got = asm.message().unwrap();
            assert_eq!(got["content"], m["content"], "{s}");
            assert_eq!(got.get("tool_calls"), m.get("tool_calls"), "{s}");
            assert_eq!(asm.first_chunk().unwrap()["id"], "c1");
        }
    }
}
