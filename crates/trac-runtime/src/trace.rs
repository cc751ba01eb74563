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
//! # Plain-text action logs
//! One action per non-empty line. The reader strips, in this order: markdown emphasis (`**`, `*`,
//! `__`, backticks) anywhere in the line, surrounding whitespace, then one leading step prefix
//! (`Step: N Action:`, `Step N:`, `N.`, `N)`, `N:`, `Action:`, a `- ` bullet), recording the
//! step number. So `1. **DRIVE**: Move truck1 from l3 to-l1.` gives the action
//! `DRIVE: Move truck1 from l3 to-l1.` with declared step 1, and `Step: 19 Action: PREPARE MEAL:
//! prepare meal` gives `PREPARE MEAL: prepare meal`. A line left empty by the stripping is an
//! error.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

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
    /// 1-based line number in the file.
    pub line: usize,
}

impl Event {
    /// The text labeling rules look at: the output, else the input, else `""`.
    pub fn text(&self) -> &str {
        self.output
            .as_deref()
            .or(self.input.as_deref())
            .unwrap_or("")
    }
}

/// An error reading a trace, at a position in the file.
///
/// Displays as `file:line:column: message`.
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
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
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

/// The format of a trace file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// One JSON object per line.
    Jsonl,
    /// One action per line, possibly numbered and decorated with markdown.
    Text,
}

/// The format of a trace: `.jsonl` / `.json` files are JSON Lines; otherwise JSON Lines if
/// `first_line` (the file's first non-empty line) starts with `{`, else text.
pub fn detect_format(path: &Path, first_line: &str) -> TraceFormat {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    if matches!(ext.as_deref(), Some("jsonl") | Some("json")) {
        return TraceFormat::Jsonl;
    }
    if first_line.trim_start().starts_with('{') {
        TraceFormat::Jsonl
    } else {
        TraceFormat::Text
    }
}

/// The trace name that stands for standard input in [`open`].
pub const STDIN: &str = "-";

/// The name standard input gets in reports and errors.
pub const STDIN_NAME: &str = "<stdin>";

/// The fields of a JSON Lines event that the reader understands; any other field is ignored and
/// listed by [`TraceReader::unknown_fields`].
pub const KNOWN_FIELDS: [&str; 5] = ["session", "step", "input", "output", "labels"];

/// Opens a trace once and detects its format (see [`TraceReader::sniff`]): `.jsonl` / `.json`
/// files are JSON Lines; any other input is read up to its first non-empty line, which decides
/// ([`detect_format`]), and that line is then replayed. The input is never opened twice, so
/// pipes (`/dev/stdin`, `<(...)` process substitution, named pipes) lose nothing. The path `-`
/// ([`STDIN`]) reads standard input, named `<stdin>` ([`STDIN_NAME`]) in reports.
///
/// Blocks until the first non-empty line (or the end of the input) arrives when the format must
/// be sniffed from a pipe; events are then read one line at a time, as they arrive.
///
/// Errors: the file cannot be opened (`line` is 0), or reading fails before the first non-empty
/// line (`line` is the line being read).
pub fn open(path: &Path) -> Result<TraceReader<Input>, TraceError> {
    if path.as_os_str() == STDIN {
        let input = Input {
            inner: InputKind::Stdin(BufReader::new(std::io::stdin())),
            stream: true,
        };
        return TraceReader::sniff(input, STDIN_NAME, None);
    }
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| TraceError {
        file: name.clone(),
        line: 0,
        column: 0,
        message: format!("cannot read trace: {e}"),
    })?;
    // Pipes, sockets and terminals stream; a regular file (or a redirect from one) does not.
    // When the type is unknown, assume a stream: that only changes how verdicts are printed.
    let stream = !file.metadata().map(|m| m.is_file()).unwrap_or(false);
    let input = Input {
        inner: InputKind::File(BufReader::new(file)),
        stream,
    };
    TraceReader::sniff(input, &name, Some(path))
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
    done: bool,
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
            done: false,
        }
    }

    /// A reader of `reader` whose format is detected from the one input, as ripgrep's searcher
    /// does with its single buffered reader: by `path`'s extension when it is `.jsonl` / `.json`,
    /// else by the first non-empty line ([`detect_format`]). The lines read to decide are kept and
    /// replayed, so nothing is lost and the input need not be seekable (pipes, standard input).
    ///
    /// Reads up to the first non-empty line (blocking on a pipe until it arrives); O(length of
    /// the leading blank lines and that line) memory.
    ///
    /// Errors: an I/O error while reading ahead, at the line being read (invalid UTF-8 is not
    /// an error here: it is reported when that line is read as an event).
    pub fn sniff(reader: R, name: &str, path: Option<&Path>) -> Result<TraceReader<R>, TraceError> {
        let by_ext = path.map(|p| detect_format(p, ""));
        let mut r = TraceReader::from_reader(reader, name, by_ext.unwrap_or(TraceFormat::Text));
        if by_ext == Some(TraceFormat::Jsonl) {
            return Ok(r);
        }
        loop {
            let mut line = Vec::new();
            match r.reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    return Err(TraceError {
                        file: r.name.clone(),
                        line: r.pending.len() + 1,
                        column: 0,
                        message: format!("cannot read trace: {e}"),
                    })
                }
            }
            let first = String::from_utf8_lossy(&line);
            let blank = first.trim().is_empty();
            if !blank {
                r.format = detect_format(path.unwrap_or(Path::new("")), &first);
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
    /// first appearance.
    pub fn unknown_fields(&self) -> Vec<&str> {
        self.fields
            .iter()
            .map(String::as_str)
            .filter(|f| !KNOWN_FIELDS.contains(f))
            .collect()
    }

    fn error(&self, column: usize, message: String) -> TraceError {
        TraceError {
            file: self.name.clone(),
            line: self.line,
            column,
            message,
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
                Ok(j) => {
                    self.note_fields(j.known, j.unknown);
                    Event {
                        session: j.session,
                        declared_step: j.step,
                        input: j.input,
                        output: j.output,
                        labels: j.labels,
                        ..Event::default()
                    }
                }
                Err(e) => {
                    let msg = strip_json_position(&e.to_string());
                    return Some(Err(self.error(e.column().max(1), msg)));
                }
            },
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
        while !self.done {
            let mut bytes = match self.pending.pop_front() {
                Some(line) => line,
                None => {
                    self.buf.clear();
                    match self.reader.read_until(b'\n', &mut self.buf) {
                        Ok(0) => {
                            self.done = true;
                            return None;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            self.done = true;
                            self.line += 1;
                            return Some(Err(self.error(0, format!("cannot read trace: {e}"))));
                        }
                    }
                    std::mem::take(&mut self.buf)
                }
            };
            self.line += 1;
            if bytes.last() == Some(&b'\n') {
                bytes.pop();
                if bytes.last() == Some(&b'\r') {
                    bytes.pop();
                }
            }
            let raw = match String::from_utf8(bytes) {
                Ok(s) => s,
                Err(e) => {
                    let col = e.utf8_error().valid_up_to() + 1;
                    return Some(Err(self.error(col, "invalid UTF-8".into())));
                }
            };
            if let Some(r) = self.parse_line(raw) {
                return Some(r);
            }
        }
        None
    }
}

/// One JSON Lines event as read, with the names of all its fields (to report ignored ones).
/// Deserialized by hand rather than with `#[serde(flatten)]`, which would buffer the object and
/// lose serde_json's error positions.
#[derive(Default)]
struct JsonEvent {
    session: Option<String>,
    step: Option<u64>,
    input: Option<String>,
    output: Option<String>,
    labels: Option<Vec<String>>,
    /// Bit `i`: field [`KNOWN_FIELDS`]`[i]` was present.
    known: u8,
    /// The other fields' names, in order of appearance.
    unknown: Vec<String>,
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
                Key::Known(_) => once(&mut map, &mut ev.labels, known, 4)?,
                Key::Other(name) => {
                    map.next_value::<IgnoredAny>()?;
                    if !ev.unknown.contains(&name) {
                        ev.unknown.push(name);
                    }
                }
            }
        }
        Ok(ev)
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

/// serde_json appends ` at line L column C`; the position is reported separately.
fn strip_json_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(k) if msg[k..].contains(" column ") => msg[..k].to_string(),
        _ => msg.to_string(),
    }
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

fn remove_emphasis(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
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
