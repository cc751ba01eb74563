//! Trace readers: JSON Lines event logs and plain-text action logs, read one line at a time.
//!
//! [`open`] opens a trace once (a file, a pipe, or `-` for standard input) and detects its format
//! from the same buffered reader ([`TraceReader::sniff`]), so piped traces lose nothing and
//! events are read as they arrive.
//!
//! # JSON Lines
//! One JSON object per line; blank lines are skipped; unknown fields are ignored (the reader lists
//! them: [`TraceReader::unknown_fields`]), fields of the wrong type or given twice are errors:
//!
//! ```json
//! {"session": "run-3", "step": 1, "input": "You are in a kitchen.", "output": "take knife", "labels": ["take(knife)"]}
//! ```
//!
//! `"session_end": true` ends the event's session after it ([`Event::ends_session`]): its
//! trace is complete, and an auditor can report its end records and free its state. A line
//! with only `session` and `session_end` is a marker, not a step ([`Event::is_end_marker`]).
//!
//! # Plain-text action logs
//! One action per non-empty line. The reader strips, in this order: markdown emphasis (`**`, `*`,
//! `__`, backticks) anywhere in the line, surrounding whitespace, then one leading step prefix
//! (`Step: N Action:`, `Step N:`, `N.`, `N)`, `N:`, `Action:`, a `- ` bullet), recording the
//! step number. So `1. **DRIVE**: Move truck1 from l3 to-l1.` gives the action
//! `DRIVE: Move truck1 from l3 to-l1.` with declared step 1, and `Step: 19 Action: PREPARE MEAL:
//! prepare meal` gives `PREPARE MEAL: prepare meal`. A line left empty by the stripping is an
//! error.

//!
//! # Chat messages (OpenAI, Anthropic)
//! Three shapes, detected from the first non-empty line: a JSON array of messages (one session);
//! JSON Lines of messages, each with a `role` (session from `session`, `session_id`,
//! `conversation_id`, `thread_id` or `trajectory_id`, a string or a number); objects with a
//! `messages` array, one session each (id from `session`, `session_id`, `conversation_id`, `id`,
//! ..., else `#N` for the N-th object), on one line each or pretty-printed. One step per message
//! ([`StepPer::Message`]), per turn ([`StepPer::Turn`]), or per tool call ([`StepPer::Call`]).
//! See `chat` for what a message
//! gives; a tool call whose `arguments` string is not valid JSON is an error for that message
//! (with the position inside the string), never silently kept as text.
//!
//! A top-level array is read element by element as it arrives (`scan`): each message's events
//! come before the rest of the array is read, an array cut short yields the events of its
//! complete messages and then an error, and an error inside names the line and column where
//! its message starts. A conversation object (`{"messages": [...]}`) over several lines is
//! read whole, then converted (its messages' errors are at their line and column).
//!
//! # Limits and errors
//! No line, and no JSON value read over several lines, may be longer than
//! [`ReadOptions::max_line_bytes`] (default [`DEFAULT_MAX_LINE_BYTES`]): a longer one is an
//! error at its line, and reading ends there. [`TraceError::session`] names the session of a
//! bad line when the reader knows it.
//!
//! # OpenTelemetry GenAI spans (OTLP JSON)
//! `{"resourceSpans": [...]}` documents (one, pretty-printed, or one per line): one session per
//! trace id, steps in start-time order, read when the input ends. See `otlp`.

mod chat;
mod event;
mod lines;
mod otlp;
mod scan;

pub use chat::{MessageReader, KNOWN_ROLES};
use event::strip_json_position;
pub use event::{Event, ToolCall, TraceError, SESSION_END};
use lines::LineCounter;

use scan::{read_bounded, Got};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The format of a trace file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// One JSON object per line.
    Jsonl,
    /// One action per line, possibly numbered and decorated with markdown.
    Text,
    /// OpenAI chat messages (also read Anthropic messages: the reader is the same).
    OpenAi,
    /// Anthropic messages (content blocks `text`, `tool_use`, `tool_result`).
    Anthropic,
    /// OpenTelemetry GenAI spans as OTLP JSON.
    Otlp,
}

impl TraceFormat {
    /// True for the formats read as JSON values (chat messages, OTLP) rather than as lines.
    pub fn is_structured(self) -> bool {
        matches!(
            self,
            TraceFormat::OpenAi | TraceFormat::Anthropic | TraceFormat::Otlp
        )
    }

    /// The format's name, as `--input-format` spells it.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Jsonl => "jsonl",
            TraceFormat::Text => "text",
            TraceFormat::OpenAi => "openai",
            TraceFormat::Anthropic => "anthropic",
            TraceFormat::Otlp => "otlp",
        }
    }
}

/// What one step of a chat trace is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum StepPer {
    /// One step per message (the default).
    #[default]
    Message,
    /// One step per turn: a turn starts at a `user` message that is not a tool result (or at a
    /// session's first message) and runs up to the next one. Its input and output are the
    /// inputs and outputs of its messages joined by newlines, its tool calls all of theirs, its
    /// role its first message's; the roles of all its messages are the field `turn_roles` (an
    /// array), and a `Role` rule holds on a turn when one of its messages has that role. Its
    /// timestamp, log step and other fields are those of its first message (fields missing
    /// there are taken from later messages).
    Turn,
    /// One step per tool call: an `assistant` message (chat, or an OTLP model call) with tool
    /// calls is one step per call, in the order of the calls, then one step for its text (its
    /// input and output) if it has any. So `A before B` inside one message and `the 3rd call
    /// of X` mean what they say. A call step carries only its own call (`Tool`, `Arg` rules and
    /// captures see one call) and no text; every step of the message keeps its role, session,
    /// timestamp, log step, line and other fields, and a call step has the field
    /// [`CALL_INDEX`] (its call's 1-based position in the message; reports show it). The
    /// message's `labels` are on its last step. Other messages (an assistant message without
    /// calls, user, tool results, OTLP tool executions) stay one step each.
    Call,
}

impl StepPer {
    /// The option's name, as `--step-per` spells it.
    pub fn name(self) -> &'static str {
        match self {
            StepPer::Message => "message",
            StepPer::Turn => "turn",
            StepPer::Call => "call",
        }
    }
}

/// The field of a call step ([`StepPer::Call`]) holding its call's 1-based position among the
/// tool calls of its message (a number; `Field("call_index", "^2$")` reads it).
pub const CALL_INDEX: &str = "call_index";

/// How [`open_with`] reads a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format; `None` detects it (see [`TraceReader::sniff_with`]).
    pub format: Option<TraceFormat>,
    /// Steps of chat traces.
    pub step_per: StepPer,
    /// The longest line read, in bytes without its terminator, and the longest JSON value of a
    /// document read element by element (a message of a chat array, a pretty-printed
    /// document): a longer one is an error at its line, and the reading of the trace ends
    /// there (an input without newline, such as `/dev/zero`, would otherwise grow one buffer
    /// until memory runs out). Default [`DEFAULT_MAX_LINE_BYTES`].
    pub max_line_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            step_per: StepPer::default(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// The default of [`ReadOptions::max_line_bytes`]: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// The format a trace's first non-empty line shows: `[` a chat array; `{` a JSON Lines event,
/// unless the object has `resourceSpans` (OTLP), `messages`, or `role` with `content` /
/// `tool_calls` / `tool_call_id` / `function_call` and no `input` / `output` (chat), or does not end on
/// that line (a pretty-printed document: chat or OTLP, told apart per document); anything else
/// text. Chat is `Anthropic` when content blocks `tool_use` / `tool_result` show on that line.
pub fn sniff_line(first_line: &str) -> TraceFormat {
    let t = first_line.trim_start();
    if !t.starts_with('{') && !t.starts_with('[') || starts_bracketed_word(t) {
        return TraceFormat::Text;
    }
    match serde_json::from_str::<Value>(t) {
        Ok(v @ Value::Array(_)) => chat_dialect(&v),
        Ok(v @ Value::Object(_)) => {
            if v.get("resourceSpans").is_some() {
                TraceFormat::Otlp
            } else if v.get("messages").is_some() || is_chat_message(&v) {
                chat_dialect(&v)
            } else {
                TraceFormat::Jsonl
            }
        }
        Err(e) if e.is_eof() => TraceFormat::OpenAi,
        _ if t.starts_with('[') => TraceFormat::OpenAi,
        _ => TraceFormat::Jsonl,
    }
}

/// `[` then a letter: a bracketed tag of a text log (`[INFO] ...`, `[Agent] look`), never JSON
/// (a JSON array's first value cannot start with a letter other than `true` / `false` / `null`).
fn starts_bracketed_word(t: &str) -> bool {
    let Some(rest) = t.strip_prefix('[') else {
        return false;
    };
    let rest = rest.trim_start();
    rest.starts_with(|c: char| c.is_alphabetic())
        && !["true", "false", "null"]
            .iter()
            .any(|k| rest.starts_with(k))
}

/// Whether `t` is a whole JSON value, or the start of one that continues on later lines (a
/// pretty-printed document).
fn is_json_start(t: &str) -> bool {
    match serde_json::from_str::<serde::de::IgnoredAny>(t.trim()) {
        Ok(_) => true,
        Err(e) => e.is_eof(),
    }
}

/// A chat message: a `role` with `content`, `tool_calls`, `tool_call_id` or `function_call`,
/// and neither `input` nor `output` (those make it a JSON Lines event).
fn is_chat_message(v: &Value) -> bool {
    v.get("role").is_some()
        && ["content", "tool_calls", "tool_call_id", "function_call"]
            .iter()
            .any(|k| v.get(k).is_some())
        && v.get("input").is_none()
        && v.get("output").is_none()
}

fn chat_dialect(v: &Value) -> TraceFormat {
    if chat::looks_anthropic(v) {
        TraceFormat::Anthropic
    } else {
        TraceFormat::OpenAi
    }
}

/// The format of a trace: `.jsonl` / `.json` files are JSON Lines; otherwise JSON Lines if
/// `first_line` (the file's first non-empty line) starts with `{`, else text.
pub fn detect_format(path: &Path, first_line: &str) -> TraceFormat {
    if is_json_ext(path) {
        return TraceFormat::Jsonl;
    }
    if first_line.trim_start().starts_with('{') {
        TraceFormat::Jsonl
    } else {
        TraceFormat::Text
    }
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
}

/// `.jsonl` / `.json`.
fn is_json_ext(path: &Path) -> bool {
    matches!(extension(path).as_deref(), Some("jsonl") | Some("json"))
}

/// `.txt` / `.log`: plain-text logs, read as JSON only when their first line is JSON.
fn is_text_ext(path: &Path) -> bool {
    matches!(extension(path).as_deref(), Some("txt") | Some("log"))
}

/// The trace name that stands for standard input in [`open`].
pub const STDIN: &str = "-";

/// The name standard input gets in reports and errors.
pub const STDIN_NAME: &str = "<stdin>";

/// The fields of a JSON Lines event that the reader understands; any other field is ignored and
/// listed by [`TraceReader::unknown_fields`].
pub const KNOWN_FIELDS: [&str; 6] = [
    "session",
    "step",
    "input",
    "output",
    "labels",
    "session_end",
];

/// The fields `trac run --log` writes beside [`KNOWN_FIELDS`] (the run's details, see
/// `trac_agent::run::StepRecord::log_json`). A JSON Lines trace that has `candidate` and
/// `observation` is read as such a log: these fields are trac's own, not read by the audit and
/// not warned about.
pub const RUN_LOG_FIELDS: [&str; 7] = [
    "candidate",
    "observation",
    "reward",
    "done",
    "risks",
    "interventions",
    "verdicts",
];

/// Other names of a JSON Lines event's text fields, whose meaning is certain: `(alias, field)`.
/// An alias is read as its field when the event lacks that field (and no earlier alias gave
/// it); otherwise it is not read, and [`TraceReader::field_warnings`] says so, naming the field
/// that was read instead. `{"action": "take knife", "input": "You see a knife."}` thus audits the
/// action, not only the observation.
pub const TEXT_ALIASES: [(&str, &str); 5] = [
    ("action", "output"),
    ("response", "output"),
    ("completion", "output"),
    ("observation", "input"),
    ("prompt", "input"),
];

/// Names of JSON Lines fields that likely hold a step's text but have no certain meaning
/// (input or output?): [`TraceReader::field_warnings`] names them and the field trac read.
pub const TEXT_LIKE_FIELDS: [&str; 12] = [
    "text",
    "content",
    "message",
    "thought",
    "reasoning",
    "answer",
    "question",
    "query",
    "command",
    "result",
    "reply",
    "utterance",
];

/// Opens a trace once and detects its format (see [`TraceReader::sniff`]): the input is read up
/// to its first non-empty line, which decides ([`sniff_line`]; a `.jsonl` / `.json` file whose
/// first line is not JSON stays JSON Lines), and that line is then replayed. The input is never opened twice, so
/// pipes (`/dev/stdin`, `<(...)` process substitution, named pipes) lose nothing. The path `-`
/// ([`STDIN`]) reads standard input, named `<stdin>` ([`STDIN_NAME`]) in reports.
///
/// Blocks until the first non-empty line (or the end of the input) arrives when the format must
/// be sniffed from a pipe; events are then read one line at a time, as they arrive.
///
/// Errors: the file cannot be opened (`line` is 0), or reading fails before the first non-empty
/// line (`line` is the line being read).
pub fn open(path: &Path) -> Result<TraceReader<Input>, TraceError> {
    open_with(path, &ReadOptions::default())
}

/// [`open`] with options: a given format skips detection; `step_per` says what a step of a chat
/// trace is.
///
/// # Errors
/// As [`open`].
pub fn open_with(path: &Path, opts: &ReadOptions) -> Result<TraceReader<Input>, TraceError> {
    if path.as_os_str() == STDIN {
        let input = Input {
            inner: InputKind::Stdin(BufReader::new(std::io::stdin())),
            stream: true,
        };
        return TraceReader::sniff_with(input, STDIN_NAME, None, opts);
    }
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| TraceError {
        file: name.clone(),
        line: 0,
        column: 0,
        message: format!("cannot read trace: {e}"),
        session: None,
    })?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(TraceError {
            file: name,
            line: 0,
            column: 0,
            message: "cannot read trace: it is a directory (give the files in it)".into(),
            session: None,
        });
    }
    // Pipes, sockets and terminals stream; a regular file (or a redirect from one) does not.
    // When the type is unknown, assume a stream: that only changes how verdicts are printed.
    let stream = !file.metadata().map(|m| m.is_file()).unwrap_or(false);
    let input = Input {
        inner: InputKind::File(BufReader::new(file)),
        stream,
    };
    TraceReader::sniff_with(input, &name, Some(path), opts)
}

/// The input of a trace opened by [`open`]: a buffered file or standard input.
pub struct Input {
    inner: InputKind,
    stream: bool,
}

enum InputKind {
    File(BufReader<File>),
    Stdin(BufReader<std::io::Stdin>),
}

impl Input {
    /// True for standard input, pipes, sockets and devices (events may arrive over time); false
    /// for a regular file.
    pub fn is_stream(&self) -> bool {
        self.stream
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.inner {
            InputKind::File(_) => "file",
            InputKind::Stdin(_) => "stdin",
        };
        f.debug_struct("Input")
            .field("kind", &kind)
            .field("stream", &self.stream)
            .finish()
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.inner {
            InputKind::File(r) => r.read(buf),
            InputKind::Stdin(r) => r.read(buf),
        }
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match &mut self.inner {
            InputKind::File(r) => r.fill_buf(),
            InputKind::Stdin(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, amt: usize) {
        match &mut self.inner {
            InputKind::File(r) => r.consume(amt),
            InputKind::Stdin(r) => r.consume(amt),
        }
    }
}

impl TraceReader<Input> {
    /// See [`Input::is_stream`].
    pub fn is_stream(&self) -> bool {
        self.reader.is_stream()
    }
}

/// A streaming trace reader: an iterator of events, reading one line at a time.
///
/// A bad line yields an `Err` for that line and reading goes on with the next; an I/O error
/// yields an `Err` and ends the iteration. The reader records the names of the JSON fields it
/// met ([`TraceReader::fields_seen`]), so that a caller can say which fields of a log it ignored.
pub struct TraceReader<R: BufRead> {
    reader: R,
    name: String,
    format: TraceFormat,
    line: usize,
    events: usize,
    buf: Vec<u8>,
    /// Lines read ahead by [`TraceReader::sniff`], replayed before reading on.
    pending: VecDeque<Vec<u8>>,
    /// JSON field names met, in order of first appearance (at most [`MAX_FIELDS`]).
    fields: Vec<String>,
    /// Bit `i`: [`KNOWN_FIELDS`]`[i]` is in `fields`.
    known_seen: u8,
    /// Bit `i`: [`TEXT_ALIASES`]`[i]` was met with a string value (read or not).
    aliases_seen: u8,
    /// Bit `i`: [`TEXT_ALIASES`]`[i]` was read as its field at some event.
    aliases_read: u8,
    /// Aliases met but not read: (alias, the field read instead), each pair once.
    shadowed: Vec<(&'static str, &'static str)>,
    /// The format was given (`--input-format`), not detected.
    forced: bool,
    /// The first record whose shape is the other chat dialect's than the format given: (line,
    /// what shows it); see [`TraceReader::format_mismatch`].
    mismatch: Option<(usize, &'static str, TraceFormat)>,
    done: bool,
    /// Events (or errors) converted from one JSON value, waiting to be returned.
    queue: VecDeque<Result<Event, TraceError>>,
    step_per: StepPer,
    /// JSON values read (structured formats), to name conversations without an id.
    values: usize,
    links: chat::Links,
    spans: otlp::Spans,
    /// Turns being built, by session ([`StepPer::Turn`]), each with its place in the order
    /// they are flushed at the end of the input (a map: one lookup per message, so that a log
    /// of many sessions is read in linear time, not quadratic).
    turns: std::collections::HashMap<Option<String>, (usize, Event)>,
    /// The place the next new turn gets in `turns`.
    turn_seq: usize,
    flushed: bool,
    /// [`ReadOptions::max_line_bytes`].
    max_line: usize,
    /// The line after the replayed ones is over `max_line` (found by [`TraceReader::sniff`]).
    cut: bool,
    /// A JSON array read element by element ([`scan`]), when one is open.
    array: Option<scan::Array>,
}

/// At most this many distinct JSON field names are recorded (a log whose keys are data would
/// otherwise grow the list without bound).
const MAX_FIELDS: usize = 64;

impl<R: BufRead> fmt::Debug for TraceReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceReader")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("line", &self.line)
            .finish()
    }
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `reader` in the given format; `name` is used in errors.
    pub fn from_reader(reader: R, name: &str, format: TraceFormat) -> TraceReader<R> {
        TraceReader {
            reader,
            name: name.to_string(),
            format,
            line: 0,
            events: 0,
            buf: Vec::new(),
            pending: VecDeque::new(),
            fields: Vec::new(),
            known_seen: 0,
            aliases_seen: 0,
            aliases_read: 0,
            shadowed: Vec::new(),
            forced: false,
            mismatch: None,
            done: false,
            queue: VecDeque::new(),
            step_per: StepPer::Message,
            values: 0,
            links: chat::Links::default(),
            spans: otlp::Spans::default(),
            turns: std::collections::HashMap::new(),
            turn_seq: 0,
            flushed: false,
            max_line: DEFAULT_MAX_LINE_BYTES,
            cut: false,
            array: None,
        }
    }

    /// Sets the longest line (and JSON element) read, in bytes ([`ReadOptions::max_line_bytes`]).
    pub fn with_max_line_bytes(mut self, max: usize) -> TraceReader<R> {
        self.max_line = max;
        self
    }

    /// [`TraceReader::sniff`] with options: a format given in `opts` is used without reading
    /// ahead; otherwise `.jsonl` / `.json` files whose first non-empty line starts with neither
    /// `{` nor `[` are JSON Lines (and that line an error), and the first non-empty line decides
    /// ([`sniff_line`]).
    ///
    /// # Errors
    /// As [`TraceReader::sniff`].
    pub fn sniff_with(
        reader: R,
        name: &str,
        path: Option<&Path>,
        opts: &ReadOptions,
    ) -> Result<TraceReader<R>, TraceError> {
        let mut r = match opts.format {
            Some(f) => {
                let mut r = TraceReader::from_reader(reader, name, f);
                r.forced = true;
                r
            }
            None => TraceReader::sniff_bounded(reader, name, path, opts.max_line_bytes)?,
        };
        r.max_line = opts.max_line_bytes;
        r.step_per = opts.step_per;
        Ok(r)
    }

    /// A reader of `reader` whose format is detected from the one input, as ripgrep's searcher
    /// does with its single buffered reader: by the first non-empty line ([`sniff_line`]: JSON
    /// Lines events, chat messages, OTLP spans or text; text in a `.jsonl` / `.json` file is read
    /// as JSON Lines, so that its lines are errors; a first line of a `.txt` / `.log` file that
    /// starts with `[` or `{` but is no JSON, such as `[12:01] go north`, makes it text). The lines read to decide are kept and
    /// replayed, so nothing is lost and the input need not be seekable (pipes, standard input).
    ///
    /// Reads up to the first non-empty line (blocking on a pipe until it arrives); O(length of
    /// the leading blank lines and that line) memory.
    ///
    /// Errors: an I/O error while reading ahead, at the line being read (invalid UTF-8 is not
    /// an error here: it is reported when that line is read as an event).
    pub fn sniff(reader: R, name: &str, path: Option<&Path>) -> Result<TraceReader<R>, TraceError> {
        TraceReader::sniff_bounded(reader, name, path, DEFAULT_MAX_LINE_BYTES)
    }

    /// [`TraceReader::sniff`], reading lines of at most `max` bytes: a longer first line is
    /// sniffed from its first `max` bytes, and reading it is then an error.
    fn sniff_bounded(
        reader: R,
        name: &str,
        path: Option<&Path>,
        max: usize,
    ) -> Result<TraceReader<R>, TraceError> {
        let by_ext = path.map(|p| detect_format(p, ""));
        let text_ext = path.is_some_and(is_text_ext);
        let mut r = TraceReader::from_reader(reader, name, by_ext.unwrap_or(TraceFormat::Text));
        r.max_line = max;
        loop {
            let mut line = Vec::new();
            match read_bounded(&mut r.reader, &mut line, max) {
                Got::Eof => break,
                Got::Line => {}
                Got::TooLong => r.cut = true,
                Got::Failed(e) => {
                    return Err(TraceError {
                        file: r.name.clone(),
                        line: r.pending.len() + 1,
                        column: 0,
                        message: format!("cannot read trace: {e}"),
                        session: None,
                    })
                }
            }
            let first = String::from_utf8_lossy(&line);
            // A UTF-8 byte-order mark (Windows editors write one) is not part of the text.
            let first = first.strip_prefix('\u{feff}').unwrap_or(&first);
            let blank = first.trim().is_empty();
            if !blank {
                r.format = match sniff_line(first) {
                    TraceFormat::Text if by_ext == Some(TraceFormat::Jsonl) => TraceFormat::Jsonl,
                    // A `.txt` / `.log` line such as `[12:01] go north` or `{draft} ...` is
                    // text, not broken JSON.
                    f if text_ext && f != TraceFormat::Text && !is_json_start(first) => {
                        TraceFormat::Text
                    }
                    f => f,
                };
            }
            if r.cut {
                // The line is not replayed: reading it is the error (see `fetch_line`).
                break;
            }
            r.pending.push_back(line);
            if !blank {
                break;
            }
        }
        Ok(r)
    }

    /// The trace's format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The trace's name, as used in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The JSON field names met so far, in order of first appearance (known and unknown; at most
    /// 64 distinct names are recorded). Empty for a plain-text log.
    pub fn fields_seen(&self) -> &[String] {
        &self.fields
    }

    /// The fields met so far that are not [`KNOWN_FIELDS`] (and so were ignored), in order of
    /// first appearance; in a `trac run` log (fields `candidate` and `observation` met), not
    /// [`RUN_LOG_FIELDS`] either. Always empty for chat and OTLP traces, whose fields are all kept.
    pub fn unknown_fields(&self) -> Vec<&str> {
        if self.format.is_structured() {
            return Vec::new();
        }
        let run_log = self.is_run_log();
        self.fields
            .iter()
            .map(String::as_str)
            .filter(|f| !KNOWN_FIELDS.contains(f) && self.alias_index(f).is_none())
            .filter(|f| !(run_log && RUN_LOG_FIELDS.contains(f)))
            .collect()
    }

    /// Whether the trace is a `trac run --log` log: fields `candidate` and `observation` met
    /// ([`RUN_LOG_FIELDS`]).
    fn is_run_log(&self) -> bool {
        let has = |f: &str| self.fields.iter().any(|g| g == f);
        has("candidate") && has("observation")
    }

    /// The index in [`TEXT_ALIASES`] of field `name`, if it is an alias met with a string value.
    fn alias_index(&self, name: &str) -> Option<usize> {
        TEXT_ALIASES
            .iter()
            .position(|(a, _)| *a == name)
            .filter(|i| self.aliases_seen & (1 << i) != 0)
    }

    /// Warnings about the text fields of a JSON Lines trace (without the `warning:` prefix and
    /// the file name): each alias of [`TEXT_ALIASES`] that was not read because its field was
    /// there (`field `action` was not read: trac read `output` instead`), and each unknown
    /// field of [`TEXT_LIKE_FIELDS`] with the text fields that were read (the aliases read are
    /// [`TraceReader::alias_notes`]). Empty for other formats. O(fields met).
    pub fn field_warnings(&self) -> Vec<String> {
        if self.format != TraceFormat::Jsonl {
            return Vec::new();
        }
        let mut out = Vec::new();
        let run_log = self.is_run_log();
        for (alias, read) in &self.shadowed {
            // A run log's `observation` is the environment's answer, not the step's input.
            if run_log && RUN_LOG_FIELDS.contains(alias) {
                continue;
            }
            out.push(format!(
                "field `{alias}` was not read: trac read the step's text from `{read}` instead (an event has one input and one output)"
            ));
        }
        let mut read: Vec<&str> = ["input", "output"]
            .into_iter()
            .filter(|f| self.fields.iter().any(|g| g == f))
            .collect();
        for (i, (alias, _)) in TEXT_ALIASES.iter().enumerate() {
            if self.aliases_read & (1 << i) != 0 {
                read.push(alias);
            }
        }
        let read = if read.is_empty() {
            "no text field".to_string()
        } else {
            read.iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for f in self.unknown_fields() {
            if TEXT_LIKE_FIELDS.contains(&f) {
                out.push(format!(
                    "field `{f}` may hold the step's text, but trac does not read it (it read {read}): rename it `input` (what the agent saw) or `output` (what it did)"
                ));
            }
        }
        out
    }

    /// When the format was given (`--input-format openai|anthropic`) and a record has the other
    /// dialect's shape: a message without the `error:` prefix and position (the first such
    /// line), naming the format given and what shows it (OpenAI `tool_calls` / `tool_call_id` / a `tool`
    /// role; Anthropic `tool_use` / `tool_result` blocks or a top-level `system`). The reader
    /// ends the trace there with this message as its error (an explicitly chosen format the
    /// input does not match is bad input, exit code 2).
    pub fn format_mismatch(&self) -> Option<String> {
        let (_, what, given) = self.mismatch?;
        let (given, other) = match given {
            TraceFormat::Anthropic => ("anthropic", "openai"),
            _ => ("openai", "anthropic"),
        };
        Some(format!(
            "--input-format {given}, but this is {other} chat ({what}): give `--input-format {other}` (or leave the option out to detect it)"
        ))
    }

    /// The aliases of [`TEXT_ALIASES`] that were read, as notes (`field `action` read as
    /// `output``, without the `note:` prefix). Empty for other formats than JSON Lines.
    pub fn alias_notes(&self) -> Vec<String> {
        TEXT_ALIASES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.aliases_read & (1 << i) != 0)
            .map(|(_, (alias, field))| format!("field `{alias}` read as `{field}`"))
            .collect()
    }

    /// Fills the event's input / output from the aliases of JSON Lines event `j` where the
    /// field itself is missing, and records which aliases were read or not.
    fn apply_aliases(&mut self, j: &mut JsonEvent) {
        // What gave each text so far: the field itself, or an earlier alias.
        let mut given = [
            j.input.is_some().then_some("input"),
            j.output.is_some().then_some("output"),
        ];
        for (i, text) in std::mem::take(&mut j.aliased) {
            let (alias, field) = TEXT_ALIASES[i];
            self.aliases_seen |= 1 << i;
            let (slot, by) = if field == "input" {
                (&mut j.input, &mut given[0])
            } else {
                (&mut j.output, &mut given[1])
            };
            match by {
                None => {
                    *slot = Some(text);
                    *by = Some(alias);
                    self.aliases_read |= 1 << i;
                }
                Some(read) => {
                    if !self.shadowed.contains(&(alias, *read)) {
                        self.shadowed.push((alias, *read));
                    }
                }
            }
        }
    }

    fn error(&self, column: usize, message: String) -> TraceError {
        TraceError {
            file: self.name.clone(),
            line: self.line,
            column,
            message,
            session: None,
        }
    }

    fn note_fields(&mut self, known: u8, unknown: Vec<String>) {
        let new = known & !self.known_seen;
        if new != 0 {
            self.known_seen |= new;
            for (i, name) in KNOWN_FIELDS.iter().enumerate() {
                if new & (1 << i) != 0 && self.fields.len() < MAX_FIELDS {
                    self.fields.push(name.to_string());
                }
            }
        }
        for n in unknown {
            if self.fields.len() < MAX_FIELDS && !self.fields.contains(&n) {
                self.fields.push(n);
            }
        }
    }

    fn parse_line(&mut self, raw: String) -> Option<Result<Event, TraceError>> {
        if raw.trim().is_empty() {
            return None;
        }
        let mut ev = match self.format {
            TraceFormat::Jsonl if !raw.trim_start().starts_with('{') => {
                let col = raw.chars().take_while(|c| c.is_whitespace()).count() + 1;
                return Some(Err(self.error(col, "expected a JSON object `{...}`".into())));
            }
            TraceFormat::Jsonl => match serde_json::from_str::<JsonEvent>(&raw) {
                Ok(mut j) => {
                    self.apply_aliases(&mut j);
                    self.note_fields(j.known, std::mem::take(&mut j.unknown));
                    for l in j.labels.iter_mut().flatten() {
                        // Each value in its one written form (`take("knife")` is `take(knife)`).
                        match trac_core::names::canonical_label(l) {
                            Ok(std::borrow::Cow::Owned(c)) => *l = c,
                            Ok(_) => {}
                            Err(e) => {
                                let col = label_column(&raw, l, e.offset);
                                let mut err = self.error(col, e.message);
                                err.session = Some(j.session.map(|s| s.0));
                                return Some(Err(err));
                            }
                        }
                    }
                    let mut fields = serde_json::Map::new();
                    if j.session_end == Some(true) {
                        fields.insert(SESSION_END.to_string(), Value::Bool(true));
                    }
                    Event {
                        session: j.session.map(|s| s.0),
                        declared_step: j.step,
                        input: j.input,
                        output: j.output,
                        labels: j.labels,
                        fields,
                        ..Event::default()
                    }
                }
                Err(e) => {
                    let msg = strip_json_position(&e.to_string());
                    let mut err = self.error(e.column().max(1), msg);
                    err.session = line_session(&raw);
                    return Some(Err(err));
                }
            },
            // Read by `next_structured`, never line by line.
            TraceFormat::OpenAi | TraceFormat::Anthropic | TraceFormat::Otlp => return None,
            TraceFormat::Text => match strip_action(&raw) {
                (Some(action), declared) => Event {
                    declared_step: declared,
                    output: Some(action),
                    ..Event::default()
                },
                (None, _) => {
                    let col = raw.chars().take_while(|c| c.is_whitespace()).count() + 1;
                    return Some(Err(self.error(
                        col,
                        "no action left on the line after removing its step number and markdown decoration".into(),
                    )));
                }
            },
        };
        self.events += 1;
        ev.step = self.events;
        ev.line = self.line;
        ev.raw = raw;
        Some(Ok(ev))
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.format.is_structured() {
            return self.next_structured();
        }
        while !self.done {
            // Lines are read into one reused buffer and copied out once, at their exact size
            // (the event keeps its line as `raw`).
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            let got = self.fetch_line(&mut buf);
            self.buf = buf;
            match got {
                Got::Line => {}
                Got::Eof => {
                    self.done = true;
                    return None;
                }
                Got::TooLong => return Some(Err(self.too_long())),
                Got::Failed(e) => {
                    self.done = true;
                    self.line += 1;
                    return Some(Err(self.error(0, format!("cannot read trace: {e}"))));
                }
            }
            self.line += 1;
            let mut bytes: &[u8] = &self.buf;
            if let Some(b) = bytes.strip_suffix(b"\n") {
                bytes = b.strip_suffix(b"\r").unwrap_or(b);
            }
            let mut raw = match std::str::from_utf8(bytes) {
                Ok(s) => s.to_owned(),
                Err(e) => {
                    let col = e.valid_up_to() + 1;
                    return Some(Err(self.error(col, "invalid UTF-8".into())));
                }
            };
            if self.line == 1 && raw.starts_with('\u{feff}') {
                raw.drain(..'\u{feff}'.len_utf8());
            }
            if let Some(k) = raw.find('\0') {
                let col = raw[..k].chars().count() + 1;
                return Some(Err(
                    self.error(col, "a NUL byte: this is binary data, not a trace".into())
                ));
            }
            if let Some(r) = self.parse_line(raw) {
                return Some(r);
            }
        }
        None
    }
}

impl<R: BufRead> TraceReader<R> {
    /// The next line (from the replayed lines, then the reader), with its terminator; `None` at
    /// the end.
    fn fetch_line(&mut self, buf: &mut Vec<u8>) -> Got {
        if let Some(l) = self.pending.pop_front() {
            *buf = l;
            return Got::Line;
        }
        if std::mem::take(&mut self.cut) {
            return Got::TooLong;
        }
        read_bounded(&mut self.reader, buf, self.max_line)
    }

    /// The error for a line over [`ReadOptions::max_line_bytes`] (the next line): it ends the
    /// reading, since the rest of the line may never end (`/dev/zero`).
    fn too_long(&mut self) -> TraceError {
        self.done = true;
        self.line += 1;
        self.error(
            0,
            format!(
                "the line is longer than {} bytes (the limit, --max-line-bytes); the rest of the trace is not read",
                self.max_line
            ),
        )
    }

    fn next_structured(&mut self) -> Option<Result<Event, TraceError>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item.map(|mut ev| {
                    self.events += 1;
                    ev.step = self.events;
                    ev
                }));
            }
            if self.done {
                if self.flushed {
                    return None;
                }
                self.flushed = true;
                match self.spans.finish() {
                    Ok(evs) => {
                        for ev in evs {
                            let line = ev.line;
                            self.push_event(ev, line);
                        }
                    }
                    Err(e) => {
                        let err = self.error(0, e);
                        self.queue.push_back(Err(err));
                    }
                }
                let mut open: Vec<(usize, Event)> = self.turns.drain().map(|(_, t)| t).collect();
                open.sort_unstable_by_key(|&(seq, _)| seq);
                for (_, ev) in open {
                    self.queue.push_back(Ok(ev));
                }
                continue;
            }
            self.read_value();
        }
    }

    /// Reads the next JSON value (on one line, or over several) and queues its events; the
    /// next element of an open top-level array ([`scan`]) when there is one.
    fn read_value(&mut self) {
        if self.array.is_some() {
            return self.array_element();
        }
        let mut bytes = Vec::new();
        match self.fetch_line(&mut bytes) {
            Got::Line => {}
            Got::Eof => {
                self.done = true;
                return;
            }
            Got::TooLong => {
                let err = self.too_long();
                self.queue.push_back(Err(err));
                return;
            }
            Got::Failed(e) => {
                self.done = true;
                self.line += 1;
                let err = self.error(0, format!("cannot read trace: {e}"));
                self.queue.push_back(Err(err));
                return;
            }
        }
        self.line += 1;
        let Some(lead) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
            return;
        };
        if bytes[lead] == b'[' && self.format != TraceFormat::Otlp {
            // A top-level array (of messages, or of conversations): read element by element,
            // so that its messages stream and a cut one loses only itself. (OTLP wants an
            // object: an array is read whole, to be refused as such.)
            self.values += 1;
            let session = (self.values > 1).then(|| format!("#{}", self.values));
            let column = String::from_utf8_lossy(&bytes[..=lead]).chars().count() + 1;
            let pos = scan::Pos {
                line: self.line,
                column,
            };
            self.array = Some(scan::Array::new(bytes[lead + 1..].to_vec(), pos, session));
            return self.array_element();
        }
        let start = self.line;
        let mut doc = None;
        let (value, raw) = match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => {
                let raw = String::from_utf8_lossy(&bytes).trim_end().to_string();
                (v, raw)
            }
            Err(e) if e.is_eof() => {
                // A value over several lines: parse it from this line on, straight from the
                // reader (memory: the value, at most `max_line` bytes), counting the lines it
                // spans.
                let mut src = Counting {
                    head: std::io::Cursor::new(bytes),
                    pending: &mut self.pending,
                    reader: &mut self.reader,
                    newlines: 0,
                    copy: Vec::new(),
                    max: self.max_line,
                };
                let mut de = serde_json::Deserializer::from_reader(&mut src);
                let parsed = Value::deserialize(&mut de);
                let newlines = src.newlines;
                let over = src.copy.len() > src.max;
                let copy = std::mem::take(&mut src.copy);
                match parsed {
                    Ok(v) => {
                        self.line = start + newlines.saturating_sub(1);
                        doc = Some(String::from_utf8_lossy(&copy).into_owned());
                        (v, String::new())
                    }
                    Err(_) if over => {
                        self.line = start;
                        let msg = format!(
                            "the JSON document starting here is longer than {} bytes (the limit, --max-line-bytes); the rest of the trace is not read",
                            self.max_line
                        );
                        let err = self.error(1, msg);
                        self.queue.push_back(Err(err));
                        self.done = true;
                        return;
                    }
                    Err(e) => {
                        // A conversation object cut or broken inside its `messages`: the
                        // messages before the break are audited (nothing read is lost), then
                        // the error.
                        if let Some(conv) = salvage_conversation(&copy, start, self.max_line) {
                            let doc = String::from_utf8_lossy(&copy).into_owned();
                            self.values += 1;
                            self.value_events(conv, String::new(), start, Some(&doc));
                        }
                        self.line = start + e.line().saturating_sub(1);
                        let msg = strip_json_position(&e.to_string());
                        let err = self.error(e.column().max(1), msg);
                        self.queue.push_back(Err(err));
                        self.done = true;
                        return;
                    }
                }
            }
            Err(e) => {
                let msg = strip_json_position(&e.to_string());
                let mut err = self.error(e.column().max(1), msg);
                // A chat message per line, as a JSON Lines event: the line's session, if it
                // names it before it breaks, is the only one the error stops.
                err.session = line_session(&String::from_utf8_lossy(&bytes));
                self.queue.push_back(Err(err));
                return;
            }
        };
        self.values += 1;
        self.value_events(value, raw, start, doc.as_deref());
    }

    /// Reads the next element of the open top-level array and queues its events: a message
    /// of the array's conversation, a conversation (`messages`), or an OTLP export. At the
    /// array's end (or at an error, which ends it) the conversation's session is closed and the
    /// rest of the line is read on as lines.
    fn array_element(&mut self) {
        let Some(mut a) = self.array.take() else {
            return;
        };
        let step = a.next(&mut self.pending, &mut self.reader, self.max_line);
        let close = |r: &mut Self, a: scan::Array| {
            // What is read next is the rest of the line the array ends on (counted when read,
            // as a line).
            r.line = a.pos.line - 1;
            r.links.end_session(&a.session);
            r.flush_session(&a.session);
            let session = a.session.clone();
            let rest = a.into_rest();
            if !rest.is_empty() {
                r.pending.push_front(rest);
            }
            session
        };
        match step {
            Ok(scan::Step::Element(at, bytes)) => {
                let k = a.elements;
                let scope = a.scope();
                self.array = Some(a);
                if self.element_events(&bytes, at, k, scope) {
                    if let Some(a) = self.array.as_mut() {
                        a.nested = true;
                    }
                }
            }
            Ok(scan::Step::End) => {
                close(self, a);
            }
            Err(e) => {
                let (at, message, session) = match e {
                    scan::ScanError::Io(at, e) => (at, format!("cannot read trace: {e}"), None),
                    scan::ScanError::Eof(Some(start), end) => (
                        start,
                        format!(
                            "message {}: the input ends inside it (at line {} column {}): the array is cut",
                            a.elements, end.line, end.column
                        ),
                        a.scope(),
                    ),
                    scan::ScanError::Eof(None, end) => (
                        end,
                        "the input ends inside the array (no closing `]`)".to_string(),
                        a.scope(),
                    ),
                    scan::ScanError::TooLong(start) => (
                        start,
                        format!(
                            "message {}: longer than {} bytes (the limit, --max-line-bytes); the rest of the trace is not read",
                            a.elements, self.max_line
                        ),
                        None,
                    ),
                    scan::ScanError::Unexpected(at, b) => (
                        at,
                        format!(
                            "expected `,` or `]` after message {}, found `{}`",
                            a.elements,
                            char::from(b).escape_default()
                        ),
                        a.scope(),
                    ),
                };
                self.done = true;
                close(self, a);
                let mut err = self.error(at.column, message);
                err.line = at.line;
                err.session = session;
                self.queue.push_back(Err(err));
            }
        }
    }

    /// Queues the events of element `k` (1-based) of a top-level array, `bytes` starting at
    /// `at`; `scope`: the session of an error of the element ([`scan::Array::scope`]). True
    /// when the element is a conversation or an OTLP export (not a message of the array's own
    /// conversation).
    fn element_events(
        &mut self,
        bytes: &[u8],
        at: scan::Pos,
        k: usize,
        scope: Option<Option<String>>,
    ) -> bool {
        let fail = |r: &mut Self, message: String, session: Option<Option<String>>| {
            let mut err = r.error(at.column, message);
            err.line = at.line;
            err.session = session;
            r.queue.push_back(Err(err));
        };
        let value = match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => v,
            Err(e) => {
                // The position names the message's start; where serde_json stopped is told.
                let line = at.line + e.line().saturating_sub(1);
                let column = if e.line() <= 1 {
                    at.column + e.column().saturating_sub(1)
                } else {
                    e.column()
                };
                let msg = strip_json_position(&e.to_string());
                // A text log whose first line starts with `[` (`[12:01] take knife`) was taken
                // for a JSON array: say how to read it as text.
                let hint = if k == 1 && !self.forced {
                    "; if this is a plain-text log, give --input-format text"
                } else {
                    ""
                };
                let msg = format!("message {k}: {msg} (at line {line} column {column}){hint}");
                fail(self, msg, scope);
                return false;
            }
        };
        let doc = String::from_utf8_lossy(bytes);
        self.check_dialect(&value, at.line);
        if let Some(message) = self.format_mismatch() {
            // An explicitly chosen format the input does not match: the file stops here.
            let mut err = self.error(1, message);
            err.line = at.line;
            self.queue.push_back(Err(err));
            self.array = None;
            self.done = true;
            return false;
        }
        if value.get("messages").is_some() {
            if self.format == TraceFormat::OpenAi && chat::looks_anthropic(&value) {
                self.format = TraceFormat::Anthropic;
            }
            let lines = message_lines(&doc, at.line);
            let conv_lines = lines.as_ref().and_then(|l| l.first());
            self.conversation_events(&value, k, conv_lines, at.line);
            true
        } else if value.get("resourceSpans").is_some() {
            self.format = TraceFormat::Otlp;
            for (line, e) in self.spans.add(&value, at.line, Some(&doc)) {
                let mut err = self.error(0, e);
                err.line = line;
                self.queue.push_back(Err(err));
            }
            true
        } else {
            if self.format == TraceFormat::OpenAi && chat::looks_anthropic(&value) {
                self.format = TraceFormat::Anthropic;
            }
            let session = self.array.as_ref().and_then(|a| a.session.clone());
            match chat::messages(&value, session.clone(), &mut self.links) {
                Ok(evs) => {
                    for mut ev in evs {
                        ev.raw = doc.trim_end().to_string();
                        self.push_event(ev, at.line);
                    }
                }
                Err(e) => fail(self, format!("message {k}: {e}"), Some(session)),
            }
            false
        }
    }

    fn push_event(&mut self, mut ev: Event, line: usize) {
        ev.line = line;
        match self.step_per {
            StepPer::Message => {
                self.queue.push_back(Ok(ev));
                return;
            }
            StepPer::Call => {
                self.queue.extend(split_calls(ev).into_iter().map(Ok));
                return;
            }
            StepPer::Turn => {}
        }
        let starts = ev.role.as_deref() == Some("user") && ev.tool_call_id.is_none();
        match self.turns.get_mut(&ev.session) {
            Some((_, turn)) if starts => {
                let done = std::mem::replace(turn, ev);
                self.queue.push_back(Ok(done));
            }
            Some((_, turn)) => merge_turn(turn, ev),
            None => {
                self.turn_seq += 1;
                self.turns.insert(ev.session.clone(), (self.turn_seq, ev));
            }
        }
    }

    fn flush_session(&mut self, session: &Option<String>) {
        if let Some((_, t)) = self.turns.remove(session) {
            self.queue.push_back(Ok(t));
        }
    }

    /// With `--input-format openai|anthropic` given, notes the first value (at `line`) that shows
    /// the other dialect ([`TraceReader::format_mismatch`]). Whole documents and the elements of
    /// a top-level array alike.
    fn check_dialect(&mut self, value: &Value, line: usize) {
        if self.forced && self.mismatch.is_none() {
            let what = match self.format {
                TraceFormat::Anthropic => chat::openai_marker(value),
                TraceFormat::OpenAi if chat::looks_anthropic(value) => {
                    Some("content blocks `tool_use` / `tool_result`, or a top-level `system`")
                }
                _ => None,
            };
            self.mismatch = what.map(|w| (line, w, self.format));
        }
    }

    /// Queues the events of one JSON value that starts at `line`. `doc`: the value's text when it
    /// spans several lines, to find the line of each message of a conversation in it.
    fn value_events(&mut self, value: Value, raw: String, line: usize, doc: Option<&str>) {
        let lines = doc.and_then(|d| message_lines(d, line));
        if let Value::Object(o) = &value {
            let keys: Vec<String> = o.keys().cloned().collect();
            self.note_fields(0, keys);
        }
        self.check_dialect(&value, line);
        if let Some(message) = self.format_mismatch() {
            // An explicitly chosen format the input does not match: an error at its line.
            let mut err = self.error(1, message);
            err.line = self.mismatch.map_or(line, |m| m.0);
            self.queue.push_back(Err(err));
            self.done = true;
            return;
        }
        if self.format == TraceFormat::Otlp && value.get("resourceSpans").is_none() {
            let err = self.error(
                1,
                format!(
                    "expected OTLP spans (an object with `resourceSpans`), found {}",
                    chat::kind(&value)
                ),
            );
            self.queue.push_back(Err(err));
            return;
        }
        // Top-level arrays are read element by element (`array_element`), never here (but in
        // OTLP input, refused above).
        if value.get("messages").is_some() {
            if self.format == TraceFormat::OpenAi && chat::looks_anthropic(&value) {
                self.format = TraceFormat::Anthropic;
            }
            let conv_lines = lines.as_ref().and_then(|l| l.first());
            let ordinal = self.values;
            self.conversation_events(&value, ordinal, conv_lines, line);
        } else if value.get("resourceSpans").is_some() {
            self.format = TraceFormat::Otlp;
            for (at, e) in self.spans.add(&value, line, doc) {
                let mut err = self.error(0, e);
                err.line = at;
                self.queue.push_back(Err(err));
            }
        } else if value.get("role").is_some() {
            let session = value
                .as_object()
                .and_then(|o| chat::first_id(o, &chat::MESSAGE_SESSION_KEYS));
            if self.format == TraceFormat::OpenAi && chat::looks_anthropic(&value) {
                self.format = TraceFormat::Anthropic;
            }
            match chat::messages(&value, session.clone(), &mut self.links) {
                Ok(evs) => {
                    for mut ev in evs {
                        ev.raw = raw.clone();
                        self.push_event(ev, line);
                    }
                }
                Err(e) => {
                    let mut err = self.error(1, e);
                    err.session = Some(session);
                    self.queue.push_back(Err(err));
                }
            }
        } else {
            let fields = match &value {
                Value::Object(o) => o.keys().cloned().collect::<Vec<_>>().join(", "),
                _ => String::new(),
            };
            let err = self.error(
                1,
                format!(
                    "unrecognized {} record: expected a chat message (`role`), a conversation (`messages`), an array of messages, or OTLP spans (`resourceSpans`); fields seen: {}",
                    self.format.name(),
                    if fields.is_empty() { chat::kind(&value).to_string() } else { fields }
                ),
            );
            self.queue.push_back(Err(err));
        }
    }

    /// Queues the events of conversation `conv` (an object with `messages`), the `ordinal`-th
    /// of its input, starting at `line`; `conv_lines`: the position of each of its messages,
    /// where known. An error of a message is at that message's position (for its session).
    fn conversation_events(
        &mut self,
        conv: &Value,
        ordinal: usize,
        conv_lines: Option<&Vec<(usize, usize)>>,
        line: usize,
    ) {
        let mut session = None;
        for (m, item) in chat::conversation(conv, ordinal, &mut self.links) {
            let (line, column) = m
                .and_then(|m| conv_lines.and_then(|l| l.get(m)).copied())
                .unwrap_or((line, 1));
            match item {
                Ok(ev) => {
                    session = ev.session.clone();
                    self.push_event(ev, line);
                }
                Err(e) => {
                    let mut err = self.error(column, e);
                    err.line = line;
                    self.queue.push_back(Err(err));
                }
            }
        }
        self.flush_session(&session);
    }
}

/// The steps of message `ev` under [`StepPer::Call`]: for an `assistant` message with tool
/// calls, one step per call (its only call, no text, field [`CALL_INDEX`]), then one step with
/// its text if its input or output is not blank; the message's labels on the last step. Any
/// other message is its own one step. O(calls × size of the message's fields).
fn split_calls(mut ev: Event) -> Vec<Event> {
    if ev.role.as_deref() != Some("assistant") || ev.tool_calls.is_empty() {
        return vec![ev];
    }
    let calls = std::mem::take(&mut ev.tool_calls);
    let labels = ev.labels.take();
    let has = |t: &Option<String>| t.as_deref().is_some_and(|t| !t.trim().is_empty());
    let text = has(&ev.input) || has(&ev.output);
    let mut out = Vec::with_capacity(calls.len() + usize::from(text));
    for (k, call) in calls.into_iter().enumerate() {
        let mut step = Event {
            input: None,
            output: None,
            tool_calls: vec![call],
            ..ev.clone()
        };
        step.fields.insert(CALL_INDEX.into(), Value::from(k + 1));
        out.push(step);
    }
    if text {
        out.push(ev);
    }
    if let Some(last) = out.last_mut() {
        last.labels = labels;
    }
    out
}

/// Adds message `ev` to the turn `t` (see [`StepPer::Turn`]).
fn merge_turn(t: &mut Event, ev: Event) {
    fn join(a: &mut Option<String>, b: Option<String>) {
        match (a.as_mut(), b) {
            (Some(x), Some(y)) => {
                x.push('\n');
                x.push_str(&y);
            }
            (None, y) => *a = y,
            _ => {}
        }
    }
    join(&mut t.input, ev.input);
    join(&mut t.output, ev.output);
    let roles = t
        .fields
        .entry("turn_roles")
        .or_insert_with(|| Value::Array(t.role.iter().map(|r| Value::from(r.as_str())).collect()));
    if let (Value::Array(rs), Some(r)) = (roles, ev.role) {
        if !rs.iter().any(|x| x.as_str() == Some(r.as_str())) {
            rs.push(Value::from(r));
        }
    }
    t.tool_calls.extend(ev.tool_calls);
    if t.tool_call_id.is_none() {
        t.tool_call_id = ev.tool_call_id;
        t.tool_name = ev.tool_name;
    }
    if let Some(ls) = ev.labels {
        let tl = t.labels.get_or_insert_with(Vec::new);
        for l in ls {
            if !tl.contains(&l) {
                tl.push(l);
            }
        }
    }
    for (k, v) in ev.fields {
        t.fields.entry(k).or_insert(v);
    }
}

/// The bytes of a value spanning several lines: its first line, then the replayed lines, then
/// the reader; counts the newlines handed out (serde_json reads one byte at a time and never
/// past the end of an object or array, so the count is that of the lines the value spans).
/// What can be read of a pretty-printed conversation object (`{"id": .., "messages": [..]}`)
/// that does not parse, `doc` starting at line `line`: the fields before `messages` and its
/// complete messages, as a conversation; `None` if the document is no such object or no message
/// is complete. The fields after `messages` are lost (a `system` there is not seen).
/// O(|doc|).
fn salvage_conversation(doc: &[u8], line: usize, max: usize) -> Option<Value> {
    let (key, bracket) = messages_key(doc)?;
    // The fields before `messages`, closed into an object of their own.
    let head = doc[..key].trim_ascii_end();
    let head = head.strip_suffix(b",").unwrap_or(head);
    let mut fields = match serde_json::from_slice::<Value>(&[head, b"}"].concat()) {
        Ok(Value::Object(o)) => o,
        _ => return None,
    };
    let newlines = doc[..=bracket].iter().filter(|&&b| b == b'\n').count();
    let column = bracket
        - doc[..bracket]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
        + 2;
    let pos = scan::Pos {
        line: line + newlines,
        column,
    };
    let mut array = scan::Array::new(doc[bracket + 1..].to_vec(), pos, None);
    let (mut pending, mut empty) = (VecDeque::new(), std::io::Cursor::new(Vec::new()));
    let mut messages = Vec::new();
    while let Ok(scan::Step::Element(_, bytes)) = array.next(&mut pending, &mut empty, max) {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(m) => messages.push(m),
            Err(_) => break,
        }
    }
    if messages.is_empty() {
        return None;
    }
    fields.insert("messages".into(), Value::Array(messages));
    Some(Value::Object(fields))
}

/// Where the key `"messages"` of the top-level object `doc` starts, and the `[` of its value:
/// a scan that knows strings and nesting. `None` if it has no such key with an array value.
fn messages_key(doc: &[u8]) -> Option<(usize, usize)> {
    let (mut depth, mut i) = (0usize, 0);
    while i < doc.len() {
        match doc[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < doc.len() && doc[i] != b'"' {
                    i += if doc[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && doc.get(start + 1..i) == Some(b"messages".as_slice()) {
                    let mut j = i + 1;
                    while doc.get(j).is_some_and(u8::is_ascii_whitespace) {
                        j += 1;
                    }
                    if doc.get(j) == Some(&b':') {
                        j += 1;
                        while doc.get(j).is_some_and(u8::is_ascii_whitespace) {
                            j += 1;
                        }
                        return (doc.get(j) == Some(&b'[')).then_some((start, j));
                    }
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

struct Counting<'a, R> {
    head: std::io::Cursor<Vec<u8>>,
    pending: &'a mut VecDeque<Vec<u8>>,
    reader: &'a mut R,
    newlines: usize,
    /// The bytes read (serde_json reads a value byte by byte, so exactly the value's text).
    copy: Vec<u8>,
    /// The most bytes handed out: past them reading fails (the value is too long).
    max: usize,
}

/// The line of each message of each conversation in `doc`, the text of a JSON value that starts
/// at line `first`: a bare array of messages, an object with a `messages` array, or an array of
/// such objects (one inner vector per conversation). `None` for any other shape. Found from the
/// borrowed raw text of each message (serde_json `RawValue`): O(length of `doc`).
fn message_lines(doc: &str, first: usize) -> Option<Vec<Vec<(usize, usize)>>> {
    use serde_json::value::RawValue;
    #[derive(serde::Deserialize)]
    struct Conv<'a> {
        #[serde(borrow)]
        messages: Vec<&'a RawValue>,
    }
    let mut at = LineCounter::new(doc, first);
    let mut lines = |ms: &[&RawValue]| ms.iter().map(|m| at.position_of(m)).collect::<Vec<_>>();
    if let Ok(convs) = serde_json::from_str::<Vec<Conv<'_>>>(doc) {
        return Some(convs.iter().map(|c| lines(&c.messages)).collect());
    }
    if let Ok(c) = serde_json::from_str::<Conv<'_>>(doc) {
        return Some(vec![lines(&c.messages)]);
    }
    let ms = serde_json::from_str::<Vec<&RawValue>>(doc).ok()?;
    Some(vec![lines(&ms)])
}

impl<R: BufRead> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.copy.len() > self.max {
            return Err(std::io::Error::other("the value is over the length limit"));
        }
        let n = loop {
            let n = self.head.read(buf)?;
            if n > 0 {
                break n;
            }
            match self.pending.pop_front() {
                Some(l) => self.head = std::io::Cursor::new(l),
                None => break self.reader.read(buf)?,
            }
        };
        self.newlines += buf[..n].iter().filter(|&&b| b == b'\n').count();
        self.copy.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// One JSON Lines event as read, with the names of all its fields (to report ignored ones).
/// Deserialized by hand rather than with `#[serde(flatten)]`, which would buffer the object and
/// lose serde_json's error positions.
#[derive(Default)]
struct JsonEvent {
    session: Option<IdText>,
    step: Option<u64>,
    input: Option<String>,
    output: Option<String>,
    labels: Option<Vec<String>>,
    session_end: Option<bool>,
    /// Bit `i`: field [`KNOWN_FIELDS`]`[i]` was present.
    known: u8,
    /// The other fields' names, in order of appearance.
    unknown: Vec<String>,
    /// The string values of [`TEXT_ALIASES`] fields: (alias index, text), in order.
    aliased: Vec<(usize, String)>,
}

impl<'de> Deserialize<'de> for JsonEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JsonEvent, D::Error> {
        d.deserialize_map(JsonEventVisitor)
    }
}

struct JsonEventVisitor;

impl<'de> Visitor<'de> for JsonEventVisitor {
    type Value = JsonEvent;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonEvent, A::Error> {
        fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
            map: &mut A,
            slot: &mut Option<T>,
            known: &mut u8,
            k: usize,
        ) -> Result<(), A::Error> {
            if *known & (1 << k) != 0 {
                return Err(de::Error::duplicate_field(KNOWN_FIELDS[k]));
            }
            *known |= 1 << k;
            *slot = map.next_value::<Option<T>>()?;
            Ok(())
        }
        let mut ev = JsonEvent::default();
        while let Some(key) = map.next_key::<Key>()? {
            let known = &mut ev.known;
            match key {
                Key::Known(0) => once(&mut map, &mut ev.session, known, 0)?,
                Key::Known(1) => once(&mut map, &mut ev.step, known, 1)?,
                Key::Known(2) => once(&mut map, &mut ev.input, known, 2)?,
                Key::Known(3) => once(&mut map, &mut ev.output, known, 3)?,
                Key::Known(4) => once(&mut map, &mut ev.labels, known, 4)?,
                Key::Known(_) => once(&mut map, &mut ev.session_end, known, 5)?,
                Key::Other(name) => {
                    match TEXT_ALIASES.iter().position(|(a, _)| *a == name) {
                        // Only a string is text; an alias holding anything else is ignored,
                        // as any unknown field.
                        Some(i) => {
                            if let Value::String(t) = map.next_value::<Value>()? {
                                ev.aliased.push((i, t));
                            }
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    if !ev.unknown.contains(&name) {
                        ev.unknown.push(name);
                    }
                }
            }
        }
        Ok(ev)
    }
}

/// The session of a JSON Lines line that is not a valid event, as far as it can be read: the
/// `session` field met before the point where the line breaks (`Some(Some(id))`), the default
/// session for a whole object without one (`Some(None)`), else `None` (unknown: the line
/// breaks before naming its session). Only bad lines are read twice. O(line length).
fn line_session(raw: &str) -> Option<Option<String>> {
    struct Seed<'a>(&'a mut Option<Option<String>>);
    impl<'de> de::DeserializeSeed<'de> for Seed<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Seed<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            // Written as soon as it is read: the rest of the line may fail.
            while let Some(key) = map.next_key::<Key>()? {
                match key {
                    Key::Known(0) if self.0.is_none() => {
                        *self.0 = Some(map.next_value::<Option<IdText>>()?.map(|s| s.0));
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            if self.0.is_none() {
                *self.0 = Some(None);
            }
            Ok(())
        }
    }
    let mut session = None;
    let mut de = serde_json::Deserializer::from_str(raw);
    // The error is the line's, reported already; only what was read before it matters here.
    let _ = de::DeserializeSeed::deserialize(Seed(&mut session), &mut de);
    session
}

/// A session id: a JSON string, or a number kept as written.
struct IdText(String);

impl<'de> Deserialize<'de> for IdText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IdText, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IdText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IdText, E> {
                Ok(IdText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IdText, E> {
                Ok(IdText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IdText, E> {
                Ok(IdText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<IdText, E> {
                Ok(IdText(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON event's key: one of [`KNOWN_FIELDS`] (by index, without allocating) or another name.
enum Key {
    Known(usize),
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match KNOWN_FIELDS.iter().position(|k| *k == v) {
                    Some(i) => Key::Known(i),
                    None => Key::Other(v.to_string()),
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// The 1-based column (in characters) of byte `offset` of `label` in the JSON line `raw`: the
/// label's string is looked for, as serde_json writes it, after the `"labels"` key; when it is
/// written otherwise (other escapes), the column of that key, else 1.
fn label_column(raw: &str, label: &str, offset: usize) -> usize {
    let col = |byte: usize| raw[..byte].chars().count() + 1;
    let Some(key) = raw.find("\"labels\"") else {
        return 1;
    };
    let encoded = serde_json::to_string(label).unwrap_or_default();
    let Some(k) = raw[key..].find(&encoded) else {
        return col(key);
    };
    let start = key + k + 1;
    let prefix = label.get(..offset).unwrap_or(label);
    let inner = serde_json::to_string(prefix).map_or(0, |p| p.len().saturating_sub(2));
    col(start + inner)
}

/// The action text of a plain-text log line and its declared step number; the action is
/// `None` when nothing is left after stripping.
///
/// Removes markdown emphasis (`**`, `*`, `__`, backticks) anywhere, surrounding whitespace, and
/// one leading step prefix: `Step: N Action:`, `Step N:`, `N.`, `N)`, `N:` (not followed by a
/// digit), `Action:`, or a `- ` / `+ ` bullet.
pub fn strip_action(line: &str) -> (Option<String>, Option<u64>) {
    let cleaned = remove_emphasis(line);
    let mut s = cleaned.trim();
    let mut declared = None;
    if let Some((rest, n)) = strip_step_prefix(s) {
        s = rest.trim_start();
        declared = n;
    }
    let s = s.trim();
    if s.is_empty() {
        (None, declared)
    } else {
        (Some(s.to_string()), declared)
    }
}

/// `line` without markdown emphasis: every `*` and backtick, and every run of two or more `_`
/// that is not inside a word (`snake_case` and `a__b` stay). Borrows `line` when it has none of
/// these characters (most lines); O(line length).
fn remove_emphasis(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains(['*', '`', '_']) {
        return std::borrow::Cow::Borrowed(line);
    }
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    // Start of the text not copied yet; `*`, `` ` `` and `_` are ASCII, so byte offsets at them
    // are character boundaries.
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'*' | b'`' => {
                out.push_str(&line[copied..i]);
                i += 1;
                copied = i;
            }
            b'_' => {
                let run = bytes[i..].iter().take_while(|&&d| d == b'_').count();
                let before = line[..i].chars().next_back();
                let after = line[i + run..].chars().next();
                let inside_word = before.is_some_and(char::is_alphanumeric)
                    && after.is_some_and(char::is_alphanumeric);
                if run >= 2 && !inside_word {
                    out.push_str(&line[copied..i]);
                    copied = i + run;
                }
                i += run;
            }
            _ => i += 1,
        }
    }
    out.push_str(&line[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Strips `prefix` case-insensitively.
fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

fn leading_number(s: &str) -> Option<(&str, Option<u64>)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    Some((&s[digits..], s[..digits].parse().ok()))
}

/// `(rest, declared step)` after a step prefix, if the line has one.
fn strip_step_prefix(s: &str) -> Option<(&str, Option<u64>)> {
    // `Step: N Action:`, `Step N:`, `Step N.`, `Step N -`, `Step N`
    if let Some(rest) = strip_ci(s, "step") {
        let rest = rest.trim_start();
        let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
        if let Some((rest, n)) = leading_number(rest) {
            let rest = rest.trim_start();
            let rest = rest
                .strip_prefix([':', '.', ')', '-'])
                .unwrap_or(rest)
                .trim_start();
            let rest = strip_action_label(rest).unwrap_or(rest);
            return Some((rest, n));
        }
        return None;
    }
    if let Some(rest) = strip_action_label(s) {
        return Some((rest, None));
    }
    // `N.`, `N)`, `N:` not followed by a digit (`1.5 kg` is not a step number).
    if let Some((rest, n)) = leading_number(s) {
        let mut cs = rest.chars();
        if let Some('.' | ')' | ':') = cs.next() {
            let after = cs.as_str();
            if !after.starts_with(|c: char| c.is_ascii_digit()) {
                return Some((after, n));
            }
        }
        return None;
    }
    // Markdown bullets.
    for b in ["- ", "+ "] {
        if let Some(rest) = s.strip_prefix(b) {
            return Some((rest, None));
        }
    }
    None
}

fn strip_action_label(s: &str) -> Option<&str> {
    let rest = strip_ci(s, "action")?.trim_start();
    rest.strip_prefix(':').map(str::trim_start)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference `remove_emphasis` (a vector of chars, as before issue 14's pass).
    fn remove_emphasis_chars(line: &str) -> String {
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '*' || c == '`' {
                i += 1;
                continue;
            }
            if c == '_' {
                let run = chars[i..].iter().take_while(|&&d| d == '_').count();
                let before = i.checked_sub(1).map(|k| chars[k]);
                let after = chars.get(i + run).copied();
                let inside_word = before.is_some_and(|b| b.is_alphanumeric())
                    && after.is_some_and(|a| a.is_alphanumeric());
                if run >= 2 && !inside_word {
                    i += run;
                    continue;
                }
                out.push_str(&"_".repeat(run));
                i += run;
                continue;
            }
            out.push(c);
            i += 1;
        }
        out
    }

    #[test]
    fn remove_emphasis_matches_reference() {
        fn prop(parts: Vec<u8>) -> bool {
            const ALPHABET: [&str; 9] = ["*", "`", "_", "__", "a", "é", " ", "1", "-"];
            let line: String = parts
                .iter()
                .map(|&k| ALPHABET[usize::from(k) % ALPHABET.len()])
                .collect();
            remove_emphasis(&line) == remove_emphasis_chars(&line)
        }
        quickcheck::QuickCheck::new()
            .tests(5000)
            .quickcheck(prop as fn(Vec<u8>) -> bool);
        assert_eq!(remove_emphasis("**DRIVE** a__b __x__"), "DRIVE a__b x");
    }

    #[test]
    fn strips_real_formats() {
        let cases = [
            (
                "1. **DRIVE truck1 from l3 to-l1**  ",
                "DRIVE truck1 from l3 to-l1",
                Some(1),
            ),
            (
                "2.*LOAD package1 into a1 of truck1 at l1",
                "LOAD package1 into a1 of truck1 at l1",
                Some(2),
            ),
            (
                "1. *DRIVE(truck1, l3, to-l1) [Time: 1]",
                "DRIVE(truck1, l3, to-l1) [Time: 1]",
                Some(1),
            ),
            (
                "1. **DRIVE**: Move truck1 from l3 to-l1.",
                "DRIVE: Move truck1 from l3 to-l1.",
                Some(1),
            ),
            ("Step: 1 Action: take cookbook", "take cookbook", Some(1)),
            (
                " Step 2: go door to the hallway",
                "go door to the hallway",
                Some(2),
            ),
            (
                "Step: 19 Action: PREPARE MEAL: prepare meal",
                "PREPARE MEAL: prepare meal",
                Some(19),
            ),
            ("take knife", "take knife", None),
            ("1.5 kg of flour", "1.5 kg of flour", None),
            ("3) `open` __door__", "open door", Some(3)),
            ("- look", "look", None),
            ("call my__var", "call my__var", None),
        ];
        for (line, action, step) in cases {
            assert_eq!(
                strip_action(line),
                (Some(action.to_string()), step),
                "{line:?}"
            );
        }
        assert_eq!(strip_action("4. ** **"), (None, Some(4)));
    }
}
