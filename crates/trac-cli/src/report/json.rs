//! The JSON reports: `--format json` (one document at the end: an array of trace reports) and
//! `--format jsonl` (one object per verdict as it is reached, then one `"end": true` object per
//! trace and property). Step texts are kept whole. The schema is in the README.

use super::{Context, Kept, Printer, StepLines, TraceOutcome};
use serde_json::json;
use std::io::{self, Write};
use trac_runtime::audit::{PropertyInfo, VerdictRecord};

/// The JSON and JSON Lines printer.
pub(crate) struct Json {
    lines: bool,
    props: Vec<PropertyInfo>,
}

impl Json {
    /// `lines`: JSON Lines (streamed) rather than one document.
    pub fn new(cx: &Context, lines: bool) -> Json {
        Json {
            lines,
            props: cx.infos(),
        }
    }
}

impl Printer for Json {
    fn verdicts(&self, out: &mut dyn Write, o: &TraceOutcome, recs: &[VerdictRecord]) {
        if self.lines {
            let mut line = Vec::with_capacity(256);
            for r in recs {
                line.clear();
                trac_runtime::audit::jsonl::write_verdict_line(&mut line, &o.name, r);
                let _ = out.write_all(&line);
            }
        }
    }

    /// JSON Lines wrote the records already ([`Printer::verdicts`]): none is kept.
    fn retain(&self, o: &mut TraceOutcome, recs: Vec<VerdictRecord>) {
        if !self.lines {
            o.records.extend(recs);
        }
    }

    /// JSON records have no line numbers.
    fn step_lines(&self) -> bool {
        false
    }

    fn trace_end(&self, out: &mut dyn Write, o: &TraceOutcome) {
        if self.lines {
            let mut line = Vec::with_capacity(256);
            for e in &o.ends {
                line.clear();
                trac_runtime::audit::jsonl::write_end_line(
                    &mut line,
                    &o.name,
                    o.steps,
                    e,
                    o.error.as_deref(),
                );
                let _ = out.write_all(&line);
            }
        }
    }

    /// JSON Lines keeps nothing (every record is written as it is reached); the JSON document
    /// keeps each outcome without its step→line map, which it does not print.
    fn keep(&self, mut o: TraceOutcome, kept: &mut Kept) {
        kept.traces += 1;
        if !self.lines {
            o.lines = StepLines::default();
            kept.outcomes.push(o);
        }
    }

    fn finish(&mut self, out: &mut dyn Write, kept: Kept, _: usize) -> io::Result<()> {
        if self.lines {
            return Ok(());
        }
        let doc: Vec<_> = kept
            .outcomes
            .iter()
            .map(|o| {
                json!({
                    "trace": o.name,
                    "steps": o.steps,
                    "properties": self.props,
                    "verdicts": o.records,
                    "end": o.ends,
                    "error": o.error,
                })
            })
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).expect("reports serialize")
        )
    }
}
