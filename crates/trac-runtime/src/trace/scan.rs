//! Bounded reading: lines of at most a given length ([`read_bounded`]), and a top-level JSON
//! array read element by element, as its bytes arrive ([`Array`]).
//!
//! A chat log that is one JSON array of messages (pretty-printed or on one line) is scanned
//! here rather than parsed whole: a small bracket- and string-aware scanner finds where each
//! element ends, and serde_json parses that element alone. So each message's events are
//! returned as soon as the message is complete (a pipe streams them), a cut or malformed
//! element costs only itself and what follows (the messages before it keep their verdicts),
//! and every element knows the line and column it starts at. Memory: one element (bounded by
//! [`ReadOptions::max_line_bytes`](super::ReadOptions::max_line_bytes)).

use std::collections::VecDeque;
use std::io::BufRead;

/// A 1-based position in the trace (columns in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pos {
    pub line: usize,
    pub column: usize,
}

/// What [`Array::next`] found.
pub(super) enum Step {
    /// An element's bytes and where it starts.
    Element(Pos, Vec<u8>),
    /// The closing `]`.
    End,
}

/// Why [`Array::next`] stopped (each ends the array).
pub(super) enum ScanError {
    /// Reading failed, at this position.
    Io(Pos, std::io::Error),
    /// The input ended inside the element that starts at the position (or, without an element,
    /// between two: `None`, at the end position).
    Eof(Option<Pos>, Pos),
    /// The element that starts at the position is longer than the limit.
    TooLong(Pos),
    /// Not `,` or `]` after an element (found there).
    Unexpected(Pos, u8),
}

/// The state of an open top-level array: the bytes of the current line not read yet, the
/// position of the next byte, and whether an element was read.
pub(super) struct Array {
    head: Vec<u8>,
    at: usize,
    /// Where the next byte is.
    pub pos: Pos,
    first: bool,
    /// Elements read so far.
    pub elements: usize,
    /// The session of the array's own messages (see `chat::conversation`).
    pub session: Option<String>,
    /// An element was a conversation or an OTLP export: an element that cannot be read may
    /// belong to any session.
    pub nested: bool,
}

impl Array {
    /// An array whose `[` was just read; `rest`: the bytes after it on its line, which start at
    /// `pos`.
    pub(super) fn new(rest: Vec<u8>, pos: Pos, session: Option<String>) -> Array {
        Array {
            head: rest,
            at: 0,
            pos,
            first: true,
            elements: 0,
            session,
            nested: false,
        }
    }

    /// The session an error of the current element belongs to (see
    /// [`TraceError::session`](super::TraceError::session)): the array's own, unless its
    /// elements are conversations (then unknown).
    pub(super) fn scope(&self) -> Option<Option<String>> {
        (!self.nested).then(|| self.session.clone())
    }

    /// The bytes of the current line left unread, once the array has ended (they are read on as
    /// lines).
    pub(super) fn into_rest(self) -> Vec<u8> {
        self.head[self.at..].to_vec()
    }

    fn peek<R: BufRead>(
        &mut self,
        pending: &mut VecDeque<Vec<u8>>,
        reader: &mut R,
    ) -> Result<Option<u8>, ScanError> {
        loop {
            if let Some(&b) = self.head.get(self.at) {
                return Ok(Some(b));
            }
            if let Some(l) = pending.pop_front() {
                (self.head, self.at) = (l, 0);
                continue;
            }
            match reader.fill_buf() {
                Ok(b) => return Ok(b.first().copied()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ScanError::Io(self.pos, e)),
            }
        }
    }

    /// Consumes `b`, the byte [`Array::peek`] just returned, moving the position past it.
    fn bump<R: BufRead>(&mut self, reader: &mut R, b: u8) {
        if self.at < self.head.len() {
            self.at += 1;
        } else {
            reader.consume(1);
        }
        if b == b'\n' {
            self.pos = Pos {
                line: self.pos.line + 1,
                column: 1,
            };
        } else if b & 0xC0 != 0x80 {
            // Not a UTF-8 continuation byte: a new character.
            self.pos.column += 1;
        }
    }

    fn skip_ws<R: BufRead>(
        &mut self,
        pending: &mut VecDeque<Vec<u8>>,
        reader: &mut R,
    ) -> Result<Option<u8>, ScanError> {
        loop {
            match self.peek(pending, reader)? {
                Some(b) if b.is_ascii_whitespace() => self.bump(reader, b),
                other => return Ok(other),
            }
        }
    }

    /// The next element (its bytes, at most `max`), or the end of the array. O(element length).
    pub(super) fn next<R: BufRead>(
        &mut self,
        pending: &mut VecDeque<Vec<u8>>,
        reader: &mut R,
        max: usize,
    ) -> Result<Step, ScanError> {
        match self.skip_ws(pending, reader)? {
            None => return Err(ScanError::Eof(None, self.pos)),
            Some(b @ b']') => {
                self.bump(reader, b);
                return Ok(Step::End);
            }
            Some(b @ b',') if !self.first => {
                self.bump(reader, b);
                if self.skip_ws(pending, reader)?.is_none() {
                    return Err(ScanError::Eof(None, self.pos));
                }
            }
            Some(b) if !self.first => return Err(ScanError::Unexpected(self.pos, b)),
            Some(_) => {}
        }
        self.first = false;
        self.elements += 1;
        let start = self.pos;
        let mut out = Vec::new();
        let (mut depth, mut in_str, mut escaped) = (0usize, false, false);
        loop {
            let Some(b) = self.peek(pending, reader)? else {
                return Err(ScanError::Eof(Some(start), self.pos));
            };
            if out.len() >= max {
                return Err(ScanError::TooLong(start));
            }
            if in_str {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_str = false;
                }
            } else {
                match b {
                    b'"' => in_str = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth > 0 => depth -= 1,
                    // A scalar element ends before `,`, `]` or whitespace (left for the next
                    // call); so does an empty one (`[,`), which serde_json then rejects.
                    b']' | b',' if depth == 0 => return Ok(Step::Element(start, out)),
                    b if depth == 0 && b.is_ascii_whitespace() => {
                        return Ok(Step::Element(start, out))
                    }
                    _ => {}
                }
            }
            out.push(b);
            self.bump(reader, b);
            if depth == 0 && !in_str && matches!(b, b'}' | b']' | b'"') {
                return Ok(Step::Element(start, out));
            }
        }
    }
}

/// What [`read_bounded`] read.
pub(super) enum Got {
    /// The input ended before any byte.
    Eof,
    /// A line (with its `\n`, unless the input ended first).
    Line,
    /// The line is longer than the limit: its first bytes were consumed, the rest is unread.
    TooLong,
    /// An I/O error.
    Failed(std::io::Error),
}

/// Reads one line into `buf` (cleared by the caller), with its `\n`, as `read_until` does but
/// holding at most `max` bytes besides the terminator: a longer line stops the read with
/// [`Got::TooLong`] once `max` bytes are exceeded, so memory stays O(`max`) whatever the
/// input. O(line length).
pub(super) fn read_bounded<R: BufRead>(r: &mut R, buf: &mut Vec<u8>, max: usize) -> Got {
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Got::Failed(e),
        };
        if avail.is_empty() {
            return if buf.is_empty() { Got::Eof } else { Got::Line };
        }
        let (used, complete) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let content = used - usize::from(complete);
        if buf.len() + content > max {
            r.consume(used);
            return Got::TooLong;
        }
        buf.extend_from_slice(&avail[..used]);
        r.consume(used);
        if complete {
            return Got::Line;
        }
    }
}
