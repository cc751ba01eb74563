//! Chat messages (OpenAI and Anthropic shapes) to [`Event`]s.
//!
//! One message is one event. The role is kept; the message's text (a `content` string, or its
//! `text` blocks / parts joined by newlines) is the event's output for an `assistant` message and
//! its input for any other role (what the agent saw). Tool calls come from OpenAI `tool_calls`
//! (`function.name`, `function.arguments` as a JSON string, parsed), the older `function_call`,
//! and Anthropic `tool_use` blocks (`name`, `input`); a tool result is a `tool` message with
//! `tool_call_id` (OpenAI) or a `tool_result` block with `tool_use_id` (Anthropic), linked to the
//! name of the call it answers. An Anthropic `user` message with `tool_result` blocks is one
//! `tool` event per result, then a `user` event for its other blocks (see [`messages`]), so tool
//! output never reads as the user's words. Each event keeps the line its message starts on,
//! also in a pretty-printed document.

use super::event::{strip_json_position, Event, ToolCall, TraceError};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Fields naming the session of a JSON Lines chat message (snake_case and camelCase).
pub(super) const MESSAGE_SESSION_KEYS: [&str; 9] = [
    "session",
    "session_id",
    "conversation_id",
    "thread_id",
    "trajectory_id",
    "sessionId",
    "conversationId",
    "threadId",
    "trajectoryId",
];

/// Fields naming the session of a conversation object (`{"messages": [...]}`).
const CONVERSATION_SESSION_KEYS: [&str; 12] = [
    "session",
    "session_id",
    "conversation_id",
    "thread_id",
    "trajectory_id",
    "sessionId",
    "conversationId",
    "threadId",
    "trajectoryId",
    "task_id",
    "id",
    "name",
];

/// The roles a chat message may have (`function`, the legacy OpenAI tool result, is read as
/// `tool`); any other role is an error.
pub const KNOWN_ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// The text of a scalar id: a string as is, a number as written.
pub(super) fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The first of `keys` that `obj` has as a string or number.
pub(super) fn first_id(obj: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| obj.get(*k).and_then(id_text))
}

/// Tool call names by (session, call id), to link tool results to their calls.
#[derive(Clone, Default, Debug)]
pub(super) struct Links {
    names: HashMap<(Option<String>, String), String>,
}

impl Links {
    /// Forgets a session's calls (its conversation object has been read).
    pub(super) fn end_session(&mut self, session: &Option<String>) {
        self.names.retain(|(s, _), _| s != session);
    }
}

/// Whether a conversation or message uses Anthropic content blocks (`tool_use`, `tool_result`)
/// or a top-level `system` string next to `messages`.
pub(super) fn looks_anthropic(v: &Value) -> bool {
    let block = |m: &Value| {
        m.get("content")
            .and_then(Value::as_array)
            .is_some_and(|bs| {
                bs.iter().any(|b| {
                    matches!(
                        b.get("type").and_then(Value::as_str),
                        Some("tool_use" | "tool_result")
                    )
                })
            })
    };
    match v {
        Value::Array(ms) => ms.iter().any(|m| looks_anthropic(m) || block(m)),
        Value::Object(o) => match o.get("messages") {
            Some(ms) => o.get("system").is_some_and(Value::is_string) || looks_anthropic(ms),
            None => block(v),
        },
        _ => false,
    }
}

/// What shows OpenAI's shape in a message, a conversation or an array of them: `tool_calls`,
/// `tool_call_id`, `function_call`, or a `tool` / `function` role; `None` if nothing does.
pub(super) fn openai_marker(v: &Value) -> Option<&'static str> {
    match v {
        Value::Array(ms) => ms.iter().find_map(openai_marker),
        Value::Object(o) => {
            if let Some(ms) = o.get("messages") {
                return openai_marker(ms);
            }
            if o.contains_key("tool_calls") {
                Some("`tool_calls`")
            } else if o.contains_key("tool_call_id") {
                Some("`tool_call_id`")
            } else if o.contains_key("function_call") {
                Some("`function_call`")
            } else if matches!(
                o.get("role").and_then(Value::as_str),
                Some("tool" | "function")
            ) {
                Some("a `tool` role")
            } else {
                None
            }
        }
        _ => None,
    }
}

fn push_text(texts: &mut Vec<String>, t: &str) {
    if !t.trim().is_empty() {
        texts.push(t.to_string());
    }
}

/// The text of a tool result's `content`: a string, or its text blocks.
fn result_text(v: &Value, texts: &mut Vec<String>) {
    match v {
        Value::String(s) => push_text(texts, s),
        Value::Array(bs) => {
            for b in bs {
                match b {
                    Value::String(s) => push_text(texts, s),
                    _ => {
                        if let Some(t) = b.get("text").and_then(Value::as_str) {
                            push_text(texts, t)
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// Parses a tool call's `arguments`: a JSON string is parsed (a malformed one is an error
/// naming the tool and the column inside the string), an object or other value is kept.
pub(super) fn parse_arguments(name: &str, v: Option<&Value>) -> Result<Value, String> {
    match v {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
            format!(
                "tool call `{name}`: its `arguments` string is not valid JSON: {} (at line {} column {} of the string)",
                strip_json_position(&e.to_string()),
                e.line(),
                e.column()
            )
        }),
        Some(other) => Ok(other.clone()),
    }
}

fn call(
    id: Option<&Value>,
    name: Option<&Value>,
    args: Option<&Value>,
) -> Result<ToolCall, String> {
    let name = name
        .and_then(Value::as_str)
        .ok_or("a tool call without a `name`")?
        .to_string();
    let arguments = parse_arguments(&name, args)?;
    Ok(ToolCall {
        id: id.and_then(id_text),
        name,
        arguments,
    })
}

/// The fields of a chat message that name tool calls or results.
const TOOL_FIELDS: [&str; 3] = ["tool_calls", "tool_call_id", "function_call"];

/// A field that looks like a tool call's or result's but is none trac reads (`tool_call`,
/// `toolCalls`, `function_calls`): the calls it holds would silently vanish from the step.
fn check_tool_fields(obj: &serde_json::Map<String, Value>) -> Result<(), String> {
    for k in obj.keys() {
        let lower = k.to_ascii_lowercase();
        let near =
            (lower.starts_with("tool") || lower.starts_with("function")) && lower.contains("call");
        if near && !TOOL_FIELDS.contains(&k.as_str()) {
            return Err(format!(
                "field `{k}` is not one trac reads: tool calls are `tool_calls` (or the legacy `function_call`), a tool result's call is `tool_call_id`"
            ));
        }
    }
    Ok(())
}

/// The tool calls of an OpenAI message, appended to `calls`: its `tool_calls` and the legacy
/// `function_call`.
///
/// Errors: either of the wrong JSON type, a call that is no object, a call without a name or
/// with malformed `arguments`.
fn openai_calls(
    obj: &serde_json::Map<String, Value>,
    calls: &mut Vec<ToolCall>,
) -> Result<(), String> {
    match obj.get("tool_calls") {
        Some(Value::Array(tcs)) => {
            for tc in tcs {
                if !tc.is_object() {
                    return Err(format!(
                        "each of `tool_calls` must be an object, found {}",
                        kind(tc)
                    ));
                }
                let f = tc.get("function").unwrap_or(tc);
                calls.push(call(tc.get("id"), f.get("name"), f.get("arguments"))?);
            }
        }
        None | Some(Value::Null) => {}
        Some(other) => {
            return Err(format!(
                "`tool_calls` must be an array of calls, found {}",
                kind(other)
            ))
        }
    }
    match obj.get("function_call") {
        Some(f @ Value::Object(_)) => calls.push(call(None, f.get("name"), f.get("arguments"))?),
        None | Some(Value::Null) => {}
        Some(other) => {
            return Err(format!(
                "`function_call` must be an object (`name`, `arguments`), found {}",
                kind(other)
            ))
        }
    }
    Ok(())
}

/// One chat message to an event (step, line and raw are set by the reader).
///
/// Errors: the message is not an object or has no string `role`, or a role not in
/// [`KNOWN_ROLES`]; a tool call without a name or with malformed `arguments`; `content`,
/// `tool_calls` or `function_call` of the wrong JSON type; a field or content block that looks
/// like a tool call or result but is none trac reads (`tool_call`, a `tool_usee` block).
pub(super) fn message(
    m: &Value,
    session: Option<String>,
    links: &mut Links,
) -> Result<Event, String> {
    let Some(obj) = m.as_object() else {
        return Err(format!("expected a chat message object, found {}", kind(m)));
    };
    let role = match obj.get("role") {
        // The legacy OpenAI function-calling result (`"role": "function"`, `name`) is a tool
        // result: rules on `Role("tool")` read it as they read a `tool` message.
        Some(Value::String(r)) if r == "function" => "tool".to_string(),
        Some(Value::String(r)) if KNOWN_ROLES.contains(&r.as_str()) => r.clone(),
        Some(Value::String(r)) => {
            // A misspelled role (`asistant`) would make every `Role(..)` rule silently false
            // on the message, and its text be read as input rather than output.
            return Err(format!(
                "unknown role `{r}`: trac knows {}",
                KNOWN_ROLES.join(", ")
            ));
        }
        _ => {
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            return Err(format!(
                "a chat message needs a string `role`; fields seen: {}",
                keys.join(", ")
            ));
        }
    };
    check_tool_fields(obj)?;
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    let mut result_of = None;
    match obj.get("content") {
        Some(Value::String(s)) => push_text(&mut texts, s),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
                if ty.contains("tool") && !matches!(ty, "tool_use" | "tool_result") {
                    // A tool call or result trac cannot read would silently vanish from the
                    // step (and with it what rules on tools decide).
                    return Err(format!(
                        "content block type `{ty}`: trac reads tool calls from `tool_use` and tool results from `tool_result` blocks"
                    ));
                }
                match (b, ty) {
                    (Value::String(s), _) => push_text(&mut texts, s),
                    (_, "tool_use") => {
                        calls.push(call(b.get("id"), b.get("name"), b.get("input"))?)
                    }
                    (_, "tool_result") => {
                        if result_of.is_none() {
                            result_of = b.get("tool_use_id").and_then(id_text);
                        }
                        if let Some(c) = b.get("content") {
                            result_text(c, &mut texts)
                        }
                    }
                    _ => {
                        if let Some(t) = b.get("text").and_then(Value::as_str) {
                            push_text(&mut texts, t)
                        }
                    }
                }
            }
        }
        None | Some(Value::Null) => {}
        Some(other) => {
            return Err(format!(
                "`content` must be a string, an array of content parts, or null; found {}",
                kind(other)
            ))
        }
    }
    openai_calls(obj, &mut calls)?;
    for c in &calls {
        if let Some(id) = &c.id {
            links
                .names
                .insert((session.clone(), id.clone()), c.name.clone());
        }
    }
    let tool_call_id = obj.get("tool_call_id").and_then(id_text).or(result_of);
    let tool_name = tool_call_id
        .as_ref()
        .and_then(|id| links.names.get(&(session.clone(), id.clone())).cloned())
        .or_else(|| {
            (role == "tool")
                .then(|| obj.get("name").and_then(Value::as_str).map(str::to_string))
                .flatten()
        });
    let text = (!texts.is_empty()).then(|| texts.join("\n"));
    let (input, output) = if role == "assistant" {
        (None, text)
    } else {
        (text, None)
    };
    // Labels are checked as in JSON Lines events: never silently dropped or kept malformed.
    let labels = match obj.get("labels") {
        Some(Value::Array(ls)) => {
            let mut out = Vec::with_capacity(ls.len());
            for l in ls {
                let Some(l) = l.as_str() else {
                    return Err(format!("`labels` must hold strings, found {}", kind(l)));
                };
                let l = trac_core::names::canonical_label(l).map_err(|e| e.message)?;
                out.push(l.into_owned());
            }
            Some(out)
        }
        None | Some(Value::Null) => None,
        Some(other) => {
            return Err(format!(
                "`labels` must be an array of strings, found {}",
                kind(other)
            ))
        }
    };
    let fields = obj
        .iter()
        .filter(|(k, v)| {
            !matches!(v, Value::Array(_) | Value::Object(_) | Value::Null)
                && k.as_str() != "content"
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Event {
        session,
        declared_step: obj.get("step").and_then(Value::as_u64),
        input,
        output,
        labels,
        role: Some(role),
        tool_calls: calls,
        tool_call_id,
        tool_name,
        timestamp: ["timestamp", "created_at", "time"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(id_text)),
        fields,
        ..Event::default()
    })
}

/// The events of one chat message: [`message`]'s one event, except for an Anthropic `user`
/// message holding `tool_result` blocks, which is one `tool` event per result (linked to its call
/// by `tool_use_id`) and then, if other blocks remain, one `user` event with them. So a tool's
/// output never reads as something the user said, and an Anthropic conversation has the steps of
/// the same conversation in OpenAI's shape (one `tool` message per result).
///
/// Errors: as [`message`].
pub(super) fn messages(
    m: &Value,
    session: Option<String>,
    links: &mut Links,
) -> Result<Vec<Event>, String> {
    let split = m.get("role").and_then(Value::as_str) == Some("user")
        && m.get("content")
            .and_then(Value::as_array)
            .is_some_and(|bs| {
                bs.iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            });
    if !split {
        return Ok(vec![message(m, session, links)?]);
    }
    let (Some(obj), Some(blocks)) = (m.as_object(), m.get("content").and_then(Value::as_array))
    else {
        unreachable!("checked above: an object with a content array");
    };
    let with = |role: &str, content: Vec<Value>| {
        let mut o = obj.clone();
        o.insert("role".into(), Value::from(role));
        o.insert("content".into(), Value::Array(content));
        Value::Object(o)
    };
    let (results, rest): (Vec<&Value>, Vec<&Value>) = blocks
        .iter()
        .partition(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
    let mut out = Vec::with_capacity(results.len() + 1);
    for r in results {
        out.push(message(
            &with("tool", vec![r.clone()]),
            session.clone(),
            links,
        )?);
    }
    if !rest.is_empty() {
        let rest = rest.into_iter().cloned().collect();
        out.push(message(&with("user", rest), session, links)?);
    }
    Ok(out)
}

/// A conversation: an object with a `messages` array (and maybe a session id and an Anthropic
/// top-level `system`), or a bare array of messages. `ordinal` (1-based position of the value in
/// the input) names a conversation without an id: `None` for the first bare array, else
/// `#ordinal`.
///
/// Each event comes with the index of the message it comes from (`None` for a top-level
/// `system`), so that its line in a pretty-printed document can be found.
pub(super) fn conversation(
    v: &Value,
    ordinal: usize,
    links: &mut Links,
) -> Vec<(Option<usize>, Result<Event, String>)> {
    let (session, msgs, system) = match v {
        Value::Array(ms) => ((ordinal > 1).then(|| format!("#{ordinal}")), ms, None),
        Value::Object(o) => {
            let Some(Value::Array(ms)) = o.get("messages") else {
                return vec![(
                    None,
                    Err("a conversation's `messages` must be an array".into()),
                )];
            };
            let session = first_id(o, &CONVERSATION_SESSION_KEYS).or(Some(format!("#{ordinal}")));
            (session, ms, o.get("system"))
        }
        _ => {
            return vec![(
                None,
                Err(format!("expected a conversation, found {}", kind(v))),
            )]
        }
    };
    let mut out = Vec::with_capacity(msgs.len() + 1);
    if let Some(sys) = system {
        let mut texts = Vec::new();
        result_text(sys, &mut texts);
        out.push((
            None,
            Ok(Event {
                session: session.clone(),
                role: Some("system".into()),
                input: (!texts.is_empty()).then(|| texts.join("\n")),
                ..Event::default()
            }),
        ));
    }
    for (k, m) in msgs.iter().enumerate() {
        match messages(m, session.clone(), links) {
            Ok(evs) => out.extend(evs.into_iter().map(|e| (Some(k), Ok(e)))),
            Err(e) => out.push((Some(k), Err(format!("message {}: {e}", k + 1)))),
        }
    }
    links.end_session(&session);
    out
}

/// `an object`, `an array`, ... for messages.
pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Chat messages given one at a time, read into events exactly as the chat readers read the
/// lines of a JSON Lines chat log (one message per line, its session in a `session` field or
/// one of its aliases, `session_id`, `conversation_id`, ...): for an online caller that writes each message it sees as a
/// log line (`trac gateway`), the events of a line are the ones `trac audit` reads from it, so
/// its verdicts are the audit's. Tool results are linked to the calls of earlier lines by call
/// id, per session, as in a file. Cheap to clone (a clone reads on independently: read a batch
/// on a clone, keep it if every line was good).
#[derive(Clone, Debug, Default)]
pub struct MessageReader {
    name: String,
    links: Links,
    lines: usize,
    events: usize,
}

impl MessageReader {
    /// A reader of the lines of a log named `name` (in errors).
    pub fn new(name: &str) -> MessageReader {
        MessageReader {
            name: name.to_string(),
            ..MessageReader::default()
        }
    }

    /// The events of one line holding one chat message (OpenAI or Anthropic shape): one event,
    /// or, for an Anthropic `user` message with `tool_result` blocks, one per result and one
    /// for the rest. Each event's `raw` is the line.
    ///
    /// # Errors
    /// The line is not JSON, is not an object with a `role`, or is a message the chat reader
    /// refuses (an unknown role, a tool call without a name, malformed `arguments`, ...): the
    /// error a reader of the log would give for that line (the line number counts the lines
    /// given so far).
    pub fn read_line(&mut self, line: &str) -> Result<Vec<Event>, TraceError> {
        self.lines += 1;
        let error = |column: usize, message: String, session: Option<Option<String>>| TraceError {
            file: self.name.clone(),
            line: self.lines,
            column,
            message,
            session,
        };
        let value: Value = serde_json::from_str(line).map_err(|e| {
            error(
                e.column(),
                format!("invalid JSON: {}", strip_json_position(&e.to_string())),
                None,
            )
        })?;
        let Some(obj) = value.as_object().filter(|o| o.contains_key("role")) else {
            return Err(error(
                1,
                format!(
                    "expected a chat message (an object with `role`), found {}",
                    kind(&value)
                ),
                None,
            ));
        };
        let session = first_id(obj, &MESSAGE_SESSION_KEYS);
        let mut evs = messages(&value, session.clone(), &mut self.links)
            .map_err(|m| error(1, m, Some(session)))?;
        for ev in &mut evs {
            self.events += 1;
            ev.step = self.events;
            ev.line = self.lines;
            ev.raw = line.to_string();
        }
        Ok(evs)
    }
}
