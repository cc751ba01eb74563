//! The text report, for people: per trace and property its status, violation count and steps,
//! what the end of the trace means for it in words, and a witness per verdict (long step texts
//! shortened to [`TEXT_WIDTH`] characters), with `because:` lines citing the steps that gave
//! past-time subformulas their values.

use super::{explain_end, shorten, status, Context, Kept, Printer, TraceOutcome, TEXT_WIDTH};
use std::io::{self, Write};
use trac_runtime::audit::{PropertyInfo, VerdictRecord};
use trac_runtime::Verdict;

/// The standard printer.
pub(crate) struct Text {
    props: Vec<PropertyInfo>,
    reset: bool,
}

impl Text {
    /// A text printer for the properties of `cx`.
    pub fn new(cx: &Context) -> Text {
        Text {
            props: cx.infos(),
            reset: cx.reset,
        }
    }
}

impl Printer for Text {
    /// Text reports name steps, not lines.
    fn step_lines(&self) -> bool {
        false
    }

    fn verdicts(&self, out: &mut dyn Write, o: &TraceOutcome, recs: &[VerdictRecord]) {
        if !o.streamed {
            return;
        }
        for r in recs {
            let _ = writeln!(out, "{}: {} {}", o.name, r.property, verdict_line(r));
            print_witness(out, "", r);
        }
    }

    fn trace_end(&self, out: &mut dyn Write, o: &TraceOutcome) {
        print_trace(out, &self.props, self.reset, o);
    }

    fn finish(&mut self, out: &mut dyn Write, kept: Kept, violations: usize) -> io::Result<()> {
        write!(out, "{violations} violation(s) in {} trace(s)", kept.traces)?;
        // As the summary's footer: a trace that errored is not a clean one.
        if kept.errors > 0 {
            write!(out, ", {} with an error (above)", kept.errors)?;
        }
        writeln!(out)
    }
}

/// `violated at step 3 for knife; witness:`
pub(crate) fn verdict_line(r: &VerdictRecord) -> String {
    let value = r
        .value
        .as_ref()
        .map(|v| format!(" for {v}"))
        .unwrap_or_default();
    // The log's own step number (when it differs from trac's) and timestamp.
    let mut log = String::new();
    if let Some(n) = r.log_step.filter(|&n| n != r.step as u64) {
        log.push_str(&format!(" (log step {n})"));
    }
    if let Some(k) = r.call_index {
        log.push_str(&format!(" (call {k} of its message)"));
    }
    if let Some(t) = &r.timestamp {
        log.push_str(&format!(" (at {t})"));
    }
    format!("{} at step {}{}{log}; witness:", r.verdict, r.step, value)
}

fn print_witness(out: &mut dyn Write, indent: &str, r: &VerdictRecord) {
    for c in &r.witness {
        let held = if c.held.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", c.held.join(", "))
        };
        let _ = writeln!(
            out,
            "{indent}   step {:>3}: {}{}  =>  {}",
            c.step,
            shorten(&c.text, TEXT_WIDTH),
            held,
            c.residual
        );
    }
    print_past(out, indent, r);
}

/// The past-time citations of a verdict (properties with past-time operators): one `because:`
/// line per past subformula, then the steps it cites.
fn print_past(out: &mut dyn Write, indent: &str, r: &VerdictRecord) {
    for p in &r.past {
        let _ = writeln!(
            out,
            "{indent}   because: {} was {} at step {}: {}",
            p.subformula, p.value, p.step, p.reason
        );
        for c in &p.steps {
            let _ = writeln!(
                out,
                "{indent}            step {:>3}: {}  ({})",
                c.step,
                shorten(&c.text, TEXT_WIDTH),
                c.what
            );
        }
    }
}

/// One trace's block of the text report. Witnesses already printed as verdicts streamed are
/// not repeated.
fn print_trace(out: &mut dyn Write, props: &[PropertyInfo], reset: bool, o: &TraceOutcome) {
    let width = props.iter().map(|p| p.id.len()).max().unwrap_or(0).max(10);
    if o.steps == 0 && o.error.is_some() {
        // Nothing was read: the error is the whole story, and it is on stderr already
        // (`error: ...`, the audit's notice): the report names it without repeating it.
        let _ = writeln!(out, "== {}: not audited (the error is on stderr)", o.name);
        return;
    }
    let _ = writeln!(out, "== {} ({} steps)", o.name, o.steps);
    for p in props {
        let Some(end) = o.ends.iter().find(|e| e.property == p.id) else {
            continue;
        };
        let recs: Vec<&VerdictRecord> = o.records.iter().filter(|r| r.property == p.id).collect();
        let steps: Vec<String> = recs
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .map(|r| match &r.value {
                Some(v) => format!("{} ({v})", r.step),
                None => r.step.to_string(),
            })
            .collect();
        let _ = writeln!(
            out,
            "{:<width$} {:<9} {} violation(s){}{}",
            p.id,
            status(end).as_str(),
            end.violations,
            if steps.is_empty() { "" } else { " at steps " },
            steps.join(", "),
        );
        if !p.description.is_empty() {
            let _ = writeln!(out, "{:width$} rule:    {}", "", p.description);
        }
        let _ = writeln!(out, "{:width$} formula: {}", "", p.formula);
        let _ = writeln!(out, "{:width$} meaning: {}", "", p.english);
        let _ = writeln!(
            out,
            "{:width$} at end:  {}",
            "",
            explain_end(end, p.semantics, reset)
        );
        if o.streamed {
            continue;
        }
        for r in &recs {
            let _ = writeln!(out, "{:width$} {}", "", verdict_line(r));
            print_witness(out, &" ".repeat(width), r);
        }
    }
    if let Some(e) = &o.error {
        if o.not_audited {
            let _ = writeln!(out, "{e}");
        } else {
            let _ = writeln!(out, "stopped early: {e}");
        }
    }
}
