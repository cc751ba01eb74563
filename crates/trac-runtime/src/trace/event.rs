//! The events of a trace ([`Event`], [`ToolCall`]) and the error of a bad trace line
//! ([`TraceError`]), shared by every reader.

use serde_json::Value;
use std::fmt;

/// The key of [`Event::fields`] that marks the end of a JSON Lines event's session
/// (`"session_end": true`; see [`Event::ends_session`]).
pub const SESSION_END: &str = "session_end";

/// One step of an agent's trace.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Event {
    /// The session (episode, run) the event belongs to, if the trace says.
    pub session: Option<String>,
    /// 1-based position of the event in the trace (lines that are skipped or are errors are not
    /// counted).
    pub step: usize,
    /// The step number written in the input, if any (JSON `step` field, or the `N.` / `Step N:`
    /// prefix of a text line).
    pub declared_step: Option<u64>,
    /// What the agent saw (observation, prompt), if recorded.
    pub input: Option<String>,
    /// What the agent did (its action); for text logs, the line without step number and
    /// decoration.
    pub output: Option<String>,
    /// Atomic propositions given by the trace itself, if any.
    pub labels: Option<Vec<String>>,
    /// The line as read, without its line terminator.
    pub raw: String,
    /// 1-based line number in the file (for a record spanning several lines, or a message
    /// inside a conversation document, the line where its JSON value starts).
    pub line: usize,
    /// Who wrote the message (`system`, `user`, `assistant`, `tool`), in chat and telemetry
    /// traces.
    pub role: Option<String>,
    /// The tools the event calls (OpenAI `tool_calls`, Anthropic `tool_use` blocks, OTLP tool
    /// calls), in order.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers (`tool_call_id`, `tool_use_id`).
    pub tool_call_id: Option<String>,
    /// For a tool result: the name of the tool whose call it answers (linked through
    /// `tool_call_id` to an earlier call of the same session, or given by the record).
    pub tool_name: Option<String>,
    /// The time the log gives the record (`timestamp`, `created_at`, OTLP `startTimeUnixNano`),
    /// as written.
    pub timestamp: Option<String>,
    /// The record's other scalar fields (strings, numbers, booleans; OTLP span attributes), by
    /// name, for `Field` rules. Empty for text logs; for JSON Lines events, only
    /// [`SESSION_END`] when the event ends its session. A call step of
    /// [`StepPer::Call`](super::StepPer::Call) also has [`CALL_INDEX`](super::CALL_INDEX).
    pub fields: serde_json::Map<String, serde_json::Value>,
}

/// A tool call made at a step.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The call's id, if the log gives one.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments: the parsed JSON of OpenAI's `arguments` string, Anthropic's `input`.
    pub arguments: serde_json::Value,
}

impl Event {
    /// True when the event ends its session (JSON Lines `"session_end": true`): no event of
    /// the session follows it, so its trace can be finished and its state freed.
    pub fn ends_session(&self) -> bool {
        self.fields.get(SESSION_END) == Some(&Value::Bool(true))
    }

    /// True for a session-end marker that is not a step: it ends its session and carries no
    /// step number, text, labels, role or tool call.
    pub fn is_end_marker(&self) -> bool {
        self.ends_session()
            && self.declared_step.is_none()
            && self.input.is_none()
            && self.output.is_none()
            && self.labels.is_none()
            && self.role.is_none()
            && self.tool_calls.is_empty()
            && self.fields.len() == 1
    }

    /// The text labeling rules look at: the output, else the input, else `""`.
    pub fn text(&self) -> &str {
        self.output
            .as_deref()
            .or(self.input.as_deref())
            .unwrap_or("")
    }

    /// True when the event carries something rules can read: non-blank text, a role, or tool
    /// calls.
    pub fn has_content(&self) -> bool {
        !self.text().trim().is_empty() || self.role.is_some() || !self.tool_calls.is_empty()
    }

    /// The text a report quotes for the event: its [`Event::text`], or, when that is blank, its
    /// tool calls as `name(arguments)`.
    pub fn display_text(&self) -> std::borrow::Cow<'_, str> {
        let t = self.text();
        if !t.trim().is_empty() || self.tool_calls.is_empty() {
            return t.into();
        }
        self.tool_calls
            .iter()
            .map(|c| format!("{}({})", c.name, c.arguments))
            .collect::<Vec<_>>()
            .join("; ")
            .into()
    }

    /// The text of a field for `Field` rules: `role`, `tool_name`, `tool_call_id`, `session`,
    /// `timestamp`, `input`, `output`, `step` (the log's own), `tool_call_count` (how many tool
    /// calls the event makes), else the record's field of that
    /// name (numbers and booleans as written in JSON).
    pub fn field(&self, name: &str) -> Option<std::borrow::Cow<'_, str>> {
        fn s(o: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
            o.as_deref().map(std::borrow::Cow::Borrowed)
        }
        match name {
            "role" => s(&self.role),
            "tool_name" => s(&self.tool_name),
            "tool_call_id" => s(&self.tool_call_id),
            "session" => s(&self.session),
            "timestamp" => s(&self.timestamp),
            "input" => s(&self.input),
            "output" => s(&self.output),
            "step" => self.declared_step.map(|n| n.to_string().into()),
            "tool_call_count" => Some(self.tool_calls.len().to_string().into()),
            _ => match self.fields.get(name)? {
                serde_json::Value::String(v) => Some(v.as_str().into()),
                v => Some(v.to_string().into()),
            },
        }
    }
}

/// An error reading a trace, at a position in the file.
///
/// Displays as `file:line:column: message` (`file:line: message` without a column, `file:
/// message` without a line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The trace's name (its path, or the name given to [`TraceReader::from_reader`]).
    pub file: String,
    /// 1-based line (0 when the error is not about a line, e.g. the file cannot be opened).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// What went wrong.
    pub message: String,
    /// The session the error belongs to, when the reader knows it: `Some(None)` for an event of
    /// the default session (a JSON Lines line without `session`), `Some(Some(id))` for session
    /// `id`. `None` when the error may concern any session (a line too broken to name its
    /// session, an I/O error): then it ends the audit of every session of the trace, where a
    /// known session's error ends only that session's.
    pub session: Option<Option<String>>,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else if self.column == 0 {
            // A whole line (or a record spanning lines): no column to point at.
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for TraceError {}

/// serde_json appends ` at line L column C`; the position is reported separately.
pub(super) fn strip_json_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(k) if msg[k..].contains(" column ") => msg[..k].to_string(),
        _ => msg.to_string(),
    }
}
