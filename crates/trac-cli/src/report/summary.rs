//! `--summary`: one line per trace and property (its status, violation count and first
//! violation step), under a header, in aligned columns; then the traces' errors (verdict
//! `error`: nothing was read; `... (until error)`: the verdicts of the steps before a malformed
//! line; `not audited`: empty, or nothing understood), and the total.
//!
//! The columns are aligned over all rows, so the rows are written at the end; until then each
//! finished trace leaves only its rows' cells, packed in one byte buffer ([`Rows`]: a few dozen
//! bytes per row, no allocation per row) that moves to an anonymous temporary file past
//! [`SPILL_BYTES`]: the memory of a summary of 10^6 sessions does not grow with the sessions.

use super::{status, Context, Kept, Printer, TraceOutcome};
use std::io::{self, BufReader, Read, Seek, Write};
use trac_runtime::audit::VerdictRecord;
use trac_runtime::Verdict;

/// Bytes of packed rows kept in memory before they move to a temporary file (8 MiB).
pub(crate) const SPILL_BYTES: usize = 8 << 20;

/// The summary printer.
pub(crate) struct Summary {
    ids: Vec<String>,
}

impl Summary {
    /// A summary of the properties of `cx`.
    pub fn new(cx: &Context) -> Summary {
        Summary {
            ids: cx.props.iter().map(|p| p.info.id.clone()).collect(),
        }
    }
}

/// The header row.
const HEADER: [&str; 5] = [
    "trace",
    "property",
    "verdict",
    "violations",
    "first violation",
];

/// The summary's rows so far: in memory, their cells (trace, property, verdict, violations,
/// first violation) one after the other in one string, with each cell's end offset; past
/// [`SPILL_BYTES`], packed (each cell a little-endian `u32` length and its UTF-8 bytes) into an
/// anonymous temporary file. Also the widest cell of each aligned column and the error lines
/// written under the table. Appending is O(row bytes); memory is at most [`SPILL_BYTES`] plus
/// the error lines.
#[derive(Default)]
pub(crate) struct Rows {
    /// The cells of the rows not yet spilled, concatenated.
    text: String,
    /// Per cell of `text`, its end offset (5 per row).
    ends: Vec<usize>,
    /// Rows spilled, before those in memory (an anonymous temporary file).
    spill: Option<std::fs::File>,
    /// Widest cell (in characters) of the first four columns, header excluded.
    width: [usize; 4],
    /// The lines under the table, one per trace with an error.
    errors: Vec<String>,
}

/// The widest cell the summary's columns are aligned to (characters); wider cells stand out.
const MAX_ALIGN: usize = 200;

impl Rows {
    /// Adds one row. O(cells' bytes), amortized.
    fn push(&mut self, cells: [&str; 5]) {
        for (k, c) in cells.iter().enumerate() {
            if k < 4 {
                // A cell wider than MAX_ALIGN is printed whole but not aligned to: one 300,000-
                // character session id padded every row of a summary to 14.7 MB.
                let w = chars(c);
                if w <= MAX_ALIGN {
                    self.width[k] = self.width[k].max(w);
                }
            }
            self.text.push_str(c);
            self.ends.push(self.text.len());
        }
        if self.text.len() + 8 * self.ends.len() >= SPILL_BYTES {
            // Without a temporary file (none writable), the rows stay in memory.
            let _ = self.spill_now();
        }
    }

    /// The rows in memory, packed (the spill file's format).
    fn packed(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(self.text.len() + 4 * self.ends.len());
        let mut start = 0;
        for &end in &self.ends {
            let cell = &self.text.as_bytes()[start..end];
            buf.extend_from_slice(&(cell.len() as u32).to_le_bytes());
            buf.extend_from_slice(cell);
            start = end;
        }
        buf
    }

    /// Moves the rows in memory to the temporary file, creating it if needed.
    fn spill_now(&mut self) -> io::Result<()> {
        if self.spill.is_none() {
            self.spill = Some(tempfile::tempfile()?);
        }
        let buf = self.packed();
        self.spill.as_mut().expect("created").write_all(&buf)?;
        self.text.clear();
        self.ends.clear();
        Ok(())
    }

    /// Appends `other`'s rows and errors after these.
    ///
    /// # Errors
    /// A read or write error of a temporary file.
    pub fn append(&mut self, mut other: Rows) -> io::Result<()> {
        for (w, o) in self.width.iter_mut().zip(other.width) {
            *w = (*w).max(o);
        }
        self.errors.append(&mut other.errors);
        if let Some(mut f) = other.spill.take() {
            // Ours first, then theirs, in the file; their rows in memory follow in memory.
            self.spill_now()?;
            f.rewind()?;
            let mut spilled = Vec::new();
            f.read_to_end(&mut spilled)?;
            self.spill.as_mut().expect("spilled").write_all(&spilled)?;
        }
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|e| e + base));
        if self.text.len() + 8 * self.ends.len() >= SPILL_BYTES {
            let _ = self.spill_now();
        }
        Ok(())
    }

    /// Every row, in order, to `each`. No allocation per row: the rows kept in memory are read
    /// in place, a spilled row from one reused buffer.
    fn for_each(&mut self, mut each: impl FnMut([&str; 5]) -> io::Result<()>) -> io::Result<()> {
        if self.spill.is_none() {
            let mut start = 0;
            for row in self.ends.chunks_exact(5) {
                let mut cells: [&str; 5] = [""; 5];
                for (cell, &end) in cells.iter_mut().zip(row) {
                    *cell = &self.text[start..end];
                    start = end;
                }
                each(cells)?;
            }
            return Ok(());
        }
        self.spill_now()?;
        let f = self.spill.as_mut().expect("spilled");
        f.rewind()?;
        let mut rest = BufReader::with_capacity(1 << 16, f);
        let mut row: Vec<u8> = Vec::new();
        loop {
            row.clear();
            for k in 0..5 {
                let mut len = [0u8; 4];
                match rest.read_exact(&mut len) {
                    Err(e) if k == 0 && e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
                    r => r?,
                }
                row.extend_from_slice(&len);
                let start = row.len();
                row.resize(start + u32::from_le_bytes(len) as usize, 0);
                rest.read_exact(&mut row[start..])?;
            }
            each_row(&row, &mut each)?;
        }
    }
}

/// The packed rows of `buf` (whole rows, as [`Rows`] packs them), in order, to `each`.
fn each_row(buf: &[u8], each: &mut impl FnMut([&str; 5]) -> io::Result<()>) -> io::Result<()> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "a summary row was cut short");
    let mut rest = buf;
    while !rest.is_empty() {
        let mut cells: [&str; 5] = [""; 5];
        for cell in &mut cells {
            let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
            let n = u32::from_le_bytes(*len) as usize;
            if tail.len() < n {
                return Err(bad());
            }
            let (bytes, tail) = tail.split_at(n);
            *cell = std::str::from_utf8(bytes)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            rest = tail;
        }
        each(cells)?;
    }
    Ok(())
}

/// The characters of `s` (its bytes for ASCII, the common case).
fn chars(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Appends `n` in decimal.
fn push_count(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut n = n;
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[k..] {
        out.push(char::from(d));
    }
}

/// `s` left-aligned in `width` characters.
fn left(out: &mut Vec<u8>, s: &str, width: usize) {
    out.extend_from_slice(s.as_bytes());
    pad(out, width.saturating_sub(chars(s)));
}

/// `n` spaces.
fn pad(out: &mut Vec<u8>, n: usize) {
    out.resize(out.len() + n, b' ');
}

impl Printer for Summary {
    /// The summary reads each property's first violation only: kept as its step and value in
    /// `o.first_violations` (no record is kept; an open session of many costs 40 bytes per
    /// property violated, not a record).
    fn retain(&self, o: &mut TraceOutcome, recs: Vec<VerdictRecord>) {
        for r in recs {
            if r.verdict != Verdict::Violated {
                continue;
            }
            let Some(k) = self.ids.iter().position(|id| *id == r.property) else {
                continue;
            };
            if !o.first_violations.iter().any(|f| f.0 == k) {
                // Most sessions violate few properties: no room for four at the first.
                o.first_violations.reserve_exact(1);
                o.first_violations.push((k, r.step, r.value));
            }
        }
    }

    /// Rows show counts and first steps: no witness is recorded.
    fn witnesses(&self) -> bool {
        false
    }

    /// Rows have no line numbers.
    fn step_lines(&self) -> bool {
        false
    }

    /// The trace's rows (one per property) and its error line, if any.
    fn keep(&self, o: TraceOutcome, kept: &mut Kept) {
        kept.traces += 1;
        let rows = &mut kept.rows;
        let mut count = String::new();
        let mut first = String::new();
        for (k, id) in self.ids.iter().enumerate() {
            let end = o.ends.iter().find(|e| &e.property == id);
            let until;
            count.clear();
            let verdict: &str = match (end, o.not_audited, &o.error) {
                (_, true, _) | (None, _, _) => {
                    count.push('-');
                    "not audited"
                }
                // Nothing read (missing file, a directory, binary data): no verdict at all.
                (Some(_), false, Some(_)) if o.steps == 0 => {
                    count.push('-');
                    "error"
                }
                // The verdicts of the steps read before the error.
                (Some(e), false, Some(_)) => {
                    push_count(&mut count, e.violations);
                    until = format!("{} (until error)", status(e).as_str());
                    &until
                }
                (Some(e), false, None) => {
                    push_count(&mut count, e.violations);
                    status(e).as_str()
                }
            };
            first.clear();
            match o.first_violations.iter().find(|f| f.0 == k) {
                Some((_, step, value)) => {
                    use std::fmt::Write as _;
                    let _ = write!(first, "step {step}");
                    if let Some(v) = value {
                        let _ = write!(first, " ({v})");
                    }
                }
                None => first.push('-'),
            }
            rows.push([&o.name, id, verdict, &count, &first]);
        }
        if let Some(e) = &o.error {
            rows.errors.push(if o.not_audited || o.steps == 0 {
                format!("error: {e}")
            } else {
                format!(
                    "error: {e} ({}: the {} step(s) before it were audited)",
                    o.name, o.steps
                )
            });
        }
    }

    fn finish(&mut self, out: &mut dyn Write, kept: Kept, violations: usize) -> io::Result<()> {
        let Kept {
            traces, mut rows, ..
        } = kept;
        let mut width = rows.width;
        for (w, h) in width.iter_mut().zip(HEADER) {
            *w = (*w).max(h.chars().count());
        }
        // Lines are laid out in one reused buffer, written 64 KiB at a time.
        let mut text: Vec<u8> = Vec::with_capacity(1 << 16);
        let mut line = |r: [&str; 5]| -> io::Result<()> {
            if text.len() >= 1 << 16 {
                out.write_all(&text)?;
                text.clear();
            }
            left(&mut text, r[0], width[0]);
            text.extend_from_slice(b"  ");
            left(&mut text, r[1], width[1]);
            text.extend_from_slice(b"  ");
            left(&mut text, r[2], width[2]);
            text.extend_from_slice(b"  ");
            pad(&mut text, width[3].saturating_sub(chars(r[3])));
            text.extend_from_slice(r[3].as_bytes());
            text.extend_from_slice(b"  ");
            text.extend_from_slice(r[4].as_bytes());
            text.push(b'\n');
            Ok(())
        };
        line(HEADER)?;
        rows.for_each(&mut line)?;
        out.write_all(&text)?;
        // The errors, under the table (they are also on stderr, which may not be kept).
        for e in &rows.errors {
            writeln!(out, "{e}")?;
        }
        write!(out, "{} violation(s) in {} trace(s)", violations, traces)?;
        if !rows.errors.is_empty() {
            write!(out, ", {} with an error (above)", rows.errors.len())?;
        }
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(rows: &mut Rows) -> Vec<[String; 5]> {
        let mut all = Vec::new();
        rows.for_each(|r| {
            all.push(r.map(str::to_string));
            Ok(())
        })
        .unwrap();
        all
    }

    #[test]
    fn rows_come_back_in_order_across_a_spill_and_an_append() {
        let mut a = Rows::default();
        a.push(["t#1", "f1", "violated", "2", "step 3 (é)"]);
        a.spill_now().unwrap();
        a.push(["t#2", "f1", "pending", "0", "-"]);
        let mut b = Rows::default();
        b.push(["u", "f2", "satisfied", "10", ""]);
        b.errors.push("error: x".into());
        a.append(b).unwrap();
        let got = cells(&mut a);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0][4], "step 3 (é)");
        assert_eq!(got[1][0], "t#2");
        assert_eq!(got[2][2], "satisfied");
        assert_eq!(a.width, [3, 2, 9, 2]);
        assert_eq!(a.errors, ["error: x"]);
    }

    /// A cell wider than `MAX_ALIGN` is kept whole but sets no column width.
    #[test]
    fn a_huge_cell_is_kept_but_not_aligned_to() {
        let long = "s".repeat(MAX_ALIGN + 1);
        let mut a = Rows::default();
        a.push(["t#1", "f1", "violated", "2", "step 3"]);
        a.push([&long, "f1", "pending", "0", "-"]);
        assert_eq!(a.width, [3, 2, 8, 1]);
        assert_eq!(cells(&mut a)[1][0], long);
    }

    /// Rows kept in memory, and an append of spilled rows after rows in memory, come back in
    /// order and whole.
    #[test]
    fn rows_in_memory_and_spilled_appends_keep_their_order() {
        let row = |i: usize| {
            let t = format!("t#{i}é");
            [
                t,
                "f".into(),
                "pending".into(),
                i.to_string(),
                String::new(),
            ]
        };
        let push = |r: &mut Rows, i: usize| {
            let c = row(i);
            r.push([&c[0], &c[1], &c[2], &c[3], &c[4]]);
        };
        let mut a = Rows::default();
        push(&mut a, 0);
        push(&mut a, 1);
        let want: Vec<[String; 5]> = (0..2).map(row).collect();
        assert_eq!(cells(&mut a), want);
        let mut b = Rows::default();
        push(&mut b, 2);
        b.spill_now().unwrap();
        push(&mut b, 3);
        a.append(b).unwrap();
        push(&mut a, 4);
        let want: Vec<[String; 5]> = (0..5).map(row).collect();
        assert_eq!(cells(&mut a), want);
    }
}
