//! The JSON reports: `--format json` (one document at the end: an array of trace reports) and
//! `--format jsonl` (one object per verdict as it is reached, then one `"end": true` object per
//! trace and property). Step texts are kept whole. The schema is in the README.

use super::{Context, Printer, TraceOutcome};
use serde_json::json;
use std::io::{self, Write};
use trac_runtime::audit::{PropertyEnd, PropertyInfo, VerdictRecord};

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
    fn verdicts(&mut self, out: &mut dyn Write, o: &TraceOutcome, recs: &[VerdictRecord]) {
        if self.lines {
            for r in recs {
                let _ = writeln!(out, "{}", jsonl_record(&o.name, r));
            }
        }
    }

    fn trace_end(&mut self, out: &mut dyn Write, o: &TraceOutcome) {
        if self.lines {
            for e in &o.ends {
                let _ = writeln!(
                    out,
                    "{}",
                    jsonl_end(&o.name, o.steps, e, o.error.as_deref())
                );
            }
        }
    }

    fn finish(
        &mut self,
        out: &mut dyn Write,
        outcomes: &[TraceOutcome],
        _: usize,
    ) -> io::Result<()> {
        if self.lines {
            return Ok(());
        }
        let doc: Vec<_> = outcomes
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

fn jsonl_record(trace: &str, r: &VerdictRecord) -> String {
    let mut rec = json!({
        "trace": trace,
        "property": r.property,
        "step": r.step,
        "verdict": r.verdict,
        "value": r.value,
        "residual": r.residual,
        "restarted_with": r.restarted_with,
        "witness": r.witness,
    });
    // The log's own step number and timestamp, when it gives them.
    if let Some(n) = r.log_step {
        rec["log_step"] = json!(n);
    }
    if let Some(t) = &r.timestamp {
        rec["timestamp"] = json!(t);
    }
    rec.to_string()
}

fn jsonl_end(trace: &str, steps: usize, e: &PropertyEnd, error: Option<&str>) -> String {
    json!({
        "trace": trace,
        "property": e.property,
        "end": true,
        "error": error,
        "steps": steps,
        "verdict": e.verdict,
        "violations": e.violations,
        "ltlf": e.ltlf,
        "instances": e.instances,
    })
    .to_string()
}
