//! Positions inside a JSON document read at once: the line and column of its values.

/// Lines of values borrowed from `doc` (serde_json `RawValue`s), a text that starts at line
/// `first`. Asked in document order, it counts each newline once: O(|doc|) for all the values
/// together (a value before the last one asked restarts the count).
pub(super) struct LineCounter<'d> {
    doc: &'d str,
    first: usize,
    /// Byte offset counted up to, the line there, and the offset that line starts at.
    pos: usize,
    line: usize,
    line_start: usize,
}

impl<'d> LineCounter<'d> {
    pub(super) fn new(doc: &'d str, first: usize) -> Self {
        LineCounter {
            doc,
            first,
            pos: 0,
            line: first,
            line_start: 0,
        }
    }

    /// The line `raw` (a slice of the document) starts on.
    pub(super) fn line_of(&mut self, raw: &serde_json::value::RawValue) -> usize {
        let offset = raw.get().as_ptr() as usize - self.doc.as_ptr() as usize;
        if offset < self.pos {
            (self.pos, self.line, self.line_start) = (0, self.first, 0);
        }
        let seg = &self.doc.as_bytes()[self.pos..offset];
        let newlines = seg.iter().filter(|&&b| b == b'\n').count();
        if let Some(k) = seg.iter().rposition(|&b| b == b'\n') {
            self.line_start = self.pos + k + 1;
        }
        (self.pos, self.line) = (offset, self.line + newlines);
        self.line
    }

    /// The line and column (in characters; the document starts a line) `raw` starts at.
    pub(super) fn position_of(&mut self, raw: &serde_json::value::RawValue) -> (usize, usize) {
        let line = self.line_of(raw);
        // O(length of the line up to `raw`): documents given positions are pretty-printed.
        let column = self.doc[self.line_start..self.pos].chars().count() + 1;
        (line, column)
    }
}
