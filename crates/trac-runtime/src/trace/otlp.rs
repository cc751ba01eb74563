//! OpenTelemetry GenAI spans in OTLP JSON (`resourceSpans[].scopeSpans[].spans[]`) to
//! [`Event`]s: one session per trace id (in order of first appearance), one step per GenAI span,
//! steps in start-time order (`startTimeUnixNano`).
//!
//! A span is a GenAI span when one of its attributes (or of its span events' attributes) starts
//! with `gen_ai.`; other spans (HTTP, database) are skipped.
//! - A tool execution (`gen_ai.operation.name` = `execute_tool`, or a `gen_ai.tool.name` without
//!   messages) is a step of role `tool` calling `gen_ai.tool.name` with the parsed
//!   `gen_ai.tool.call.arguments`; its input is the arguments' text, its output
//!   `gen_ai.tool.call.result`.
//! - Any other GenAI span (a model call) is a step of role `assistant`: its output is the text
//!   of the output messages, its tool calls those of the output messages. When the last input
//!   message has role `user`, it is a step of its own (role `user`, same start time) just before
//!   the call's, once per trace and position in the conversation (retries and agent loops repeat
//!   it); otherwise the last input message's text (a tool result, an untyped prompt) is the
//!   call's input.
//! - A span without `startTimeUnixNano` sorts right after the span before it in its trace (file
//!   order) and has no timestamp; a start time that is not a number is an error. Messages are read from the current attributes `gen_ai.input.messages` /
//!   `gen_ai.output.messages` (JSON with `parts` of type `text`, `tool_call`; text that is not
//!   JSON is an error for the span), or the older
//!   `gen_ai.prompt` / `gen_ai.completion` (JSON chat messages or plain text; also as span-event
//!   attributes) and indexed `gen_ai.prompt.N.content`, `gen_ai.completion.N.content`,
//!   `gen_ai.completion.N.tool_calls.K.name` / `.arguments`.
//!
//! Every attribute with a scalar value is a field of the event (`Field("gen_ai.request.model",
//! ...)`), as is `span.name`.

use super::chat::{id_text, parse_arguments, Links};
use super::event::{strip_json_position, Event, ToolCall};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The spans read so far, waiting for the end of the input (a trace's spans may come in any
/// order, so they are all kept: memory grows with the GenAI spans of the input).
#[derive(Default, Debug)]
pub(super) struct Spans {
    /// (trace id order, start time, event).
    spans: Vec<(usize, u64, Event)>,
    /// Trace id -> its order of first appearance (a map: a lookup per span, so that an input of
    /// many traces is read in linear time, not quadratic).
    traces: HashMap<String, usize>,
    /// Per trace (same order as `traces`): the start time of its last span read.
    last_start: Vec<u64>,
    /// User messages made steps: (trace order, index in the input messages, text).
    users: Vec<(usize, usize, String)>,
    /// Spans skipped as not GenAI, and their attribute names (at most 24).
    skipped: usize,
    skipped_keys: Vec<String>,
}

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: &Value) -> Value {
    let Some(o) = v.as_object() else {
        return v.clone();
    };
    if let Some(s) = o.get("stringValue") {
        return s.clone();
    }
    if let Some(i) = o.get("intValue") {
        return match i {
            Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(i.clone()),
            _ => i.clone(),
        };
    }
    if let Some(d) = o.get("doubleValue").or(o.get("boolValue")) {
        return d.clone();
    }
    if let Some(a) = o.get("arrayValue") {
        let vals = a.get("values").and_then(Value::as_array);
        return Value::Array(vals.into_iter().flatten().map(any_value).collect());
    }
    if let Some(kv) = o.get("kvlistValue") {
        return Value::Object(attributes(kv.get("values")));
    }
    Value::Null
}

/// OTLP attributes (`[{"key": k, "value": AnyValue}]`) as a JSON object.
fn attributes(v: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for kv in v.and_then(Value::as_array).into_iter().flatten() {
        if let Some(k) = kv.get("key").and_then(Value::as_str) {
            out.insert(
                k.to_string(),
                kv.get("value").map(any_value).unwrap_or(Value::Null),
            );
        }
    }
    out
}

/// A JSON value that may be written as a JSON string.
fn json_of(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        _ => v.clone(),
    }
}

/// One message of a model call: its role (if given), text and tool calls.
type Message = (Option<String>, String, Vec<ToolCall>);

/// The JSON of attribute `key` (`gen_ai.input.messages`, `gen_ai.output.messages`), which the
/// GenAI conventions define as JSON: a string is parsed, and one that is not JSON is an error
/// naming the attribute and the position inside the string (dropping it would make every rule
/// on the call's messages silently false).
fn strict_json(key: &str, v: &Value) -> Result<Value, String> {
    match v {
        Value::String(s) => serde_json::from_str(s).map_err(|e| {
            format!(
                "attribute `{key}` is not valid JSON: {} (at line {} column {} of the string)",
                strip_json_position(&e.to_string()),
                e.line(),
                e.column()
            )
        }),
        _ => Ok(v.clone()),
    }
}

/// The messages of attribute `key`: the current `gen_ai.input.messages` /
/// `gen_ai.output.messages` must be JSON ([`strict_json`]); the older `gen_ai.prompt` /
/// `gen_ai.completion` may be plain text.
fn messages_of(key: &str, v: &Value) -> Result<Vec<Message>, String> {
    if key.ends_with(".messages") {
        messages(&strict_json(key, v)?)
    } else {
        messages(v)
    }
}

/// Roles, texts and tool calls of a list of messages (current `parts` messages or chat
/// messages), or of plain text.
fn messages(v: &Value) -> Result<Vec<Message>, String> {
    let v = json_of(v);
    let list = match &v {
        Value::String(s) => return Ok(vec![(None, s.clone(), Vec::new())]),
        Value::Array(l) => l.clone(),
        Value::Object(_) => vec![v.clone()],
        _ => return Ok(Vec::new()),
    };
    let mut out = Vec::new();
    for m in &list {
        let role = m.get("role").and_then(Value::as_str).map(str::to_string);
        if let Some(parts) = m.get("parts").and_then(Value::as_array) {
            let mut texts = Vec::new();
            let mut calls = Vec::new();
            for p in parts {
                match p.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = p.get("content").and_then(Value::as_str) {
                            texts.push(t.to_string())
                        }
                    }
                    Some("tool_call") => {
                        let name = p
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        let arguments = parse_arguments(&name, p.get("arguments"))?;
                        calls.push(ToolCall {
                            id: p.get("id").and_then(id_text),
                            name,
                            arguments,
                        });
                    }
                    Some("tool_call_response") => {
                        if let Some(r) = p.get("response") {
                            texts.push(match r {
                                Value::String(s) => s.clone(),
                                _ => r.to_string(),
                            })
                        }
                    }
                    _ => {}
                }
            }
            out.push((role, texts.join("\n"), calls));
        } else if m.get("role").is_some() {
            let ev = super::chat::message(m, None, &mut Links::default())?;
            let text = ev.text().to_string();
            out.push((role, text, ev.tool_calls));
        } else if let Some(t) = m.get("content").and_then(Value::as_str) {
            out.push((role, t.to_string(), Vec::new()));
        }
    }
    Ok(out)
}

/// A tool call of the indexed older attributes: (index K, name, arguments).
type IndexedCall = (usize, String, Value);

/// Indexed older attributes `PREFIX.N.content` (and `PREFIX.N.tool_calls.K.name|arguments`),
/// ordered by N.
fn indexed(attrs: &Map<String, Value>, prefix: &str) -> Result<Vec<Message>, String> {
    let mut by_n: std::collections::BTreeMap<usize, (String, Vec<IndexedCall>)> =
        Default::default();
    let mut roles: std::collections::BTreeMap<usize, String> = Default::default();
    for (k, v) in attrs {
        let Some(rest) = k.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) else {
            continue;
        };
        let mut it = rest.splitn(2, '.');
        let Some(n) = it.next().and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let field = it.next().unwrap_or("");
        let entry = by_n.entry(n).or_default();
        if field == "role" {
            if let Some(r) = v.as_str() {
                roles.insert(n, r.to_string());
            }
        } else if field == "content" {
            entry.0 = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
        } else if let Some(tc) = field.strip_prefix("tool_calls.") {
            let mut it = tc.splitn(2, '.');
            if let (Some(Ok(kk)), Some(what)) = (it.next().map(str::parse::<usize>), it.next()) {
                let slot = match entry.1.iter().position(|(i, _, _)| *i == kk) {
                    Some(p) => p,
                    None => {
                        entry.1.push((kk, String::new(), Value::Null));
                        entry.1.len() - 1
                    }
                };
                match what {
                    "name" => entry.1[slot].1 = v.as_str().unwrap_or("").to_string(),
                    "arguments" => entry.1[slot].2 = v.clone(),
                    _ => {}
                }
            }
        }
    }
    let mut out = Vec::new();
    for (n, (text, mut calls)) in by_n {
        calls.sort_by_key(|c| c.0);
        let calls = calls
            .into_iter()
            .map(|(_, name, args)| {
                let arguments = parse_arguments(&name, Some(&args))?;
                Ok(ToolCall {
                    id: None,
                    name,
                    arguments,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        out.push((roles.get(&n).cloned(), text, calls));
    }
    Ok(out)
}

impl Spans {
    /// Adds the GenAI spans of one OTLP export (`{"resourceSpans": [...]}`) that starts at line
    /// `line`; `doc`, the export's text when it spans several lines, gives each span its own
    /// line.
    ///
    /// Errors: a GenAI span with malformed tool-call arguments (or another bad value), as (its
    /// line, a message naming the span id and its JSON path,
    /// `resourceSpans[I].scopeSpans[J].spans[K]`); the other spans are kept.
    pub(super) fn add(
        &mut self,
        export: &Value,
        line: usize,
        doc: Option<&str>,
    ) -> Vec<(usize, String)> {
        let lines = doc.and_then(|d| span_lines(d, line));
        let mut k = 0;
        let mut errors = Vec::new();
        let rs = export.get("resourceSpans").and_then(Value::as_array);
        for (i, r) in rs.into_iter().flatten().enumerate() {
            let (key, ss) = match r.get("scopeSpans") {
                Some(ss) => ("scopeSpans", Some(ss)),
                None => (
                    "instrumentationLibrarySpans",
                    r.get("instrumentationLibrarySpans"),
                ),
            };
            for (j, s) in ss
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                for (n, span) in s
                    .get("spans")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let at = lines
                        .as_ref()
                        .and_then(|l| l.get(k))
                        .copied()
                        .unwrap_or(line);
                    k += 1;
                    match self.span(span, at) {
                        Ok(()) => {}
                        Err(e) => {
                            let id = span.get("spanId").and_then(id_text).unwrap_or_default();
                            // The JSON path names the span where a line holds several.
                            errors.push((
                                at,
                                format!(
                                    "span {id}: {e} (at resourceSpans[{i}].{key}[{j}].spans[{n}])"
                                ),
                            ))
                        }
                    }
                }
            }
        }
        errors
    }

    fn span(&mut self, span: &Value, line: usize) -> Result<(), String> {
        let mut attrs = attributes(span.get("attributes"));
        for ev in span
            .get("events")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for (k, v) in attributes(ev.get("attributes")) {
                attrs.entry(k).or_insert(v);
            }
        }
        if !attrs.keys().any(|k| k.starts_with("gen_ai.")) {
            self.skipped += 1;
            for k in attrs.keys() {
                if self.skipped_keys.len() < 24 && !self.skipped_keys.contains(k) {
                    self.skipped_keys.push(k.clone());
                }
            }
            return Ok(());
        }
        let trace = span.get("traceId").and_then(id_text).unwrap_or_default();
        // A start time that is not a number of nanoseconds is an error: ordering the span as if
        // it had none would silently move it (and its verdicts) elsewhere in the trace.
        let start: Option<u64> = match span.get("startTimeUnixNano") {
            None | Some(Value::Null) => None,
            Some(t) => Some(
                match t {
                    Value::String(s) => s.trim().parse().ok(),
                    _ => t.as_u64(),
                }
                .ok_or_else(|| {
                    format!("`startTimeUnixNano` {t} is not a whole number of nanoseconds")
                })?,
            ),
        };
        let next = self.traces.len();
        let order = *self.traces.entry(trace.clone()).or_insert_with(|| {
            self.last_start.push(0);
            next
        });
        // A span without a start time keeps its place in the file: it sorts right after the
        // span before it in the same trace.
        let key = start.unwrap_or(self.last_start[order]);
        self.last_start[order] = key;
        let name = span.get("name").and_then(Value::as_str).unwrap_or("");
        let op = attrs.get("gen_ai.operation.name").and_then(Value::as_str);
        let tool = attrs.get("gen_ai.tool.name").and_then(Value::as_str);
        let has_msgs = attrs.keys().any(|k| {
            k.starts_with("gen_ai.input.messages")
                || k.starts_with("gen_ai.output.messages")
                || k.starts_with("gen_ai.prompt")
                || k.starts_with("gen_ai.completion")
        });
        let mut ev = Event {
            session: Some(trace.clone()),
            timestamp: start.map(|t| t.to_string()),
            line,
            ..Event::default()
        };
        let mut user = None;
        if op == Some("execute_tool") || (tool.is_some() && !has_msgs) {
            let tool = tool.unwrap_or(name).to_string();
            let args = attrs.get("gen_ai.tool.call.arguments");
            let id = attrs.get("gen_ai.tool.call.id").and_then(id_text);
            ev.role = Some("tool".into());
            ev.input = args.map(|a| a.as_str().map(str::to_string).unwrap_or(a.to_string()));
            ev.output = attrs
                .get("gen_ai.tool.call.result")
                .map(|r| r.as_str().map(str::to_string).unwrap_or(r.to_string()));
            ev.tool_calls = vec![ToolCall {
                id: id.clone(),
                name: tool.clone(),
                arguments: parse_arguments(&tool, args)?,
            }];
            ev.tool_call_id = id;
            ev.tool_name = Some(tool);
        } else {
            let read = |current: &str, older: &str| match (attrs.get(current), attrs.get(older)) {
                (Some(m), _) => messages_of(current, m),
                (None, Some(m)) => messages_of(older, m),
                (None, None) => indexed(&attrs, older),
            };
            let input = read("gen_ai.input.messages", "gen_ai.prompt")?;
            let output = read("gen_ai.output.messages", "gen_ai.completion")?;
            ev.role = Some("assistant".into());
            match input.last() {
                // The user's message that this model call answers is a step of its own, with
                // role `user` (once, if several calls answer it: retries, agent loops).
                Some((Some(r), t, _)) if r == "user" && !t.is_empty() => {
                    let at = (order, input.len() - 1, t.clone());
                    if !self.users.contains(&at) {
                        self.users.push(at);
                        user = Some(Event {
                            session: ev.session.clone(),
                            timestamp: ev.timestamp.clone(),
                            line,
                            role: Some("user".into()),
                            input: Some(t.clone()),
                            fields: Map::from_iter([("span.name".to_string(), Value::from(name))]),
                            ..Event::default()
                        });
                    }
                }
                // Otherwise (a tool result, untyped text) the last input message is the
                // model call's input, as before.
                Some((_, t, _)) if !t.is_empty() => ev.input = Some(t.clone()),
                _ => {}
            }
            let texts: Vec<&str> = output
                .iter()
                .map(|(_, t, _)| t.as_str())
                .filter(|t| !t.is_empty())
                .collect();
            ev.output = (!texts.is_empty()).then(|| texts.join("\n"));
            ev.tool_calls = output.into_iter().flat_map(|(_, _, c)| c).collect();
        }
        let mut fields: Map<String, Value> = attrs
            .into_iter()
            .filter(|(_, v)| !matches!(v, Value::Array(_) | Value::Object(_) | Value::Null))
            .collect();
        fields.insert("span.name".into(), Value::from(name));
        ev.fields = fields;
        if let Some(u) = user {
            self.spans.push((order, key, u));
        }
        self.spans.push((order, key, ev));
        Ok(())
    }

    /// The events, trace by trace (in order of first appearance), by start time within a trace
    /// (a stable sort: spans with equal start times keep their order in the file).
    ///
    /// Errors: spans were read but none was a GenAI span (the message lists the attribute names
    /// seen, so that another convention, e.g. OpenInference's `llm.*`, is recognized).
    pub(super) fn finish(&mut self) -> Result<Vec<Event>, String> {
        let mut spans = std::mem::take(&mut self.spans);
        if spans.is_empty() && self.skipped > 0 {
            return Err(format!(
                "{} span(s) read, none with `gen_ai.*` attributes (OpenTelemetry GenAI semantic conventions), so there is nothing to audit; attributes seen: {}",
                self.skipped,
                self.skipped_keys.join(", ")
            ));
        }
        spans.sort_by_key(|(t, start, _)| (*t, *start));
        Ok(spans.into_iter().map(|(_, _, e)| e).collect())
    }
}

/// The line of each span of the OTLP export `doc` (its text, starting at line `first`), in
/// document order (`resourceSpans[].scopeSpans[].spans[]`, or the older
/// `instrumentationLibrarySpans`), from the borrowed raw text of each span: O(|doc|). `None` if
/// `doc` is not such an export.
fn span_lines(doc: &str, first: usize) -> Option<Vec<usize>> {
    use serde::Deserialize;
    use serde_json::value::RawValue;
    #[derive(Deserialize)]
    struct Export<'a> {
        #[serde(borrow, rename = "resourceSpans", default)]
        resource: Vec<Resource<'a>>,
    }
    #[derive(Deserialize)]
    struct Resource<'a> {
        #[serde(
            borrow,
            rename = "scopeSpans",
            alias = "instrumentationLibrarySpans",
            default
        )]
        scopes: Vec<Scope<'a>>,
    }
    #[derive(Deserialize)]
    struct Scope<'a> {
        #[serde(borrow, default)]
        spans: Vec<&'a RawValue>,
    }
    let e: Export<'_> = serde_json::from_str(doc).ok()?;
    let mut at = super::lines::LineCounter::new(doc, first);
    let mut out = Vec::new();
    for r in &e.resource {
        for s in &r.scopes {
            for span in &s.spans {
                out.push(at.line_of(span));
            }
        }
    }
    Some(out)
}
