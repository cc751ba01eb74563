//! Trace readers: JSON Lines event logs and plain-text action logs, read one line at a time.
//!
//! # JSON Lines
//! One JSON object per line; blank lines are skipped; unknown fields are ignored, fields of the
//! wrong type are errors:
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

use serde::Deserialize;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
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

/// Opens a trace file, detecting its format with [`detect_format`] (for other than `.jsonl` /
/// `.json` files, the first non-empty line is read to decide, then the file is read again from
/// the start).
///
/// Errors: the file cannot be opened or read (`line` is 0).
pub fn open(path: &Path) -> Result<TraceReader<BufReader<File>>, TraceError> {
    let name = path.display().to_string();
    let io_err = |e: std::io::Error| TraceError {
        file: name.clone(),
        line: 0,
        column: 0,
        message: format!("cannot read trace: {e}"),
    };
    let format = match detect_format(path, "") {
        TraceFormat::Jsonl => TraceFormat::Jsonl,
        TraceFormat::Text => {
            let mut r = BufReader::new(File::open(path).map_err(io_err)?);
            let mut buf = Vec::new();
            let mut first = String::new();
            loop {
                buf.clear();
                if r.read_until(b'\n', &mut buf).map_err(io_err)? == 0 {
                    break;
                }
                let line = String::from_utf8_lossy(&buf);
                if !line.trim().is_empty() {
                    first = line.into_owned();
                    break;
                }
            }
            detect_format(path, &first)
        }
    };
    let file = File::open(path).map_err(io_err)?;
    Ok(TraceReader::from_reader(
        BufReader::new(file),
        &name,
        format,
    ))
}

/// A streaming trace reader: an iterator of events, reading one line at a time.
///
/// A bad line yields an `Err` for that line and reading goes on with the next; an I/O error
/// yields an `Err` and ends the iteration.
pub struct TraceReader<R: BufRead> {
    reader: R,
    name: String,
    format: TraceFormat,
    line: usize,
    events: usize,
    buf: Vec<u8>,
    done: bool,
}

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
            done: false,
        }
    }

    /// The trace's format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The trace's name, as used in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn error(&self, column: usize, message: String) -> TraceError {
        TraceError {
            file: self.name.clone(),
            line: self.line,
            column,
            message,
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
                Ok(j) => Event {
                    session: j.session,
                    declared_step: j.step,
                    input: j.input,
                    output: j.output,
                    labels: j.labels,
                    ..Event::default()
                },
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
            self.line += 1;
            let mut bytes = std::mem::take(&mut self.buf);
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

#[derive(Deserialize)]
struct JsonEvent {
    #[serde(default)]
    session: Option<String>,
    #[serde(default)]
    step: Option<u64>,
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    output: Option<String>,
    #[serde(default)]
    labels: Option<Vec<String>>,
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
