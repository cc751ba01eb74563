//! `--summary`: one line per trace and property (its status, violation count and first
//! violation step), under a header, in aligned columns; then the traces' errors (verdict
//! `error`: nothing was read; `... (until error)`: the verdicts of the steps before a malformed
//! line; `not audited`: empty, or nothing understood), and the total.

use super::{status, Context, Printer, TraceOutcome};
use std::io::{self, Write};
use trac_runtime::Verdict;

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

    /// The rows: trace, property, status, violations, first violation.
    fn rows(&self, outcomes: &[TraceOutcome]) -> Vec<[String; 5]> {
        let mut rows = Vec::new();
        for o in outcomes {
            for id in &self.ids {
                let end = o.ends.iter().find(|e| &e.property == id);
                let (verdict, count) = match (end, o.not_audited, &o.error) {
                    (_, true, _) | (None, _, _) => ("not audited".to_string(), "-".to_string()),
                    // Nothing read (missing file, a directory, binary data): no verdict at all.
                    (Some(_), false, Some(_)) if o.steps == 0 => {
                        ("error".to_string(), "-".to_string())
                    }
                    // The verdicts of the steps read before the error.
                    (Some(e), false, Some(_)) => (
                        format!("{} (until error)", status(e).as_str()),
                        e.violations.to_string(),
                    ),
                    (Some(e), false, None) => {
                        (status(e).as_str().to_string(), e.violations.to_string())
                    }
                };
                let first = o
                    .records
                    .iter()
                    .find(|r| &r.property == id && r.verdict == Verdict::Violated)
                    .map(|r| match &r.value {
                        Some(v) => format!("step {} ({v})", r.step),
                        None => format!("step {}", r.step),
                    })
                    .unwrap_or_else(|| "-".into());
                rows.push([o.name.clone(), id.clone(), verdict, count, first]);
            }
        }
        rows
    }
}

impl Printer for Summary {
    fn finish(
        &mut self,
        out: &mut dyn Write,
        outcomes: &[TraceOutcome],
        violations: usize,
    ) -> io::Result<()> {
        let header = [
            "trace",
            "property",
            "verdict",
            "violations",
            "first violation",
        ]
        .map(String::from);
        let rows = self.rows(outcomes);
        let mut width = [0usize; 4];
        for r in std::iter::once(&header).chain(&rows) {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        for r in std::iter::once(&header).chain(&rows) {
            writeln!(
                out,
                "{:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}  {}",
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                w0 = width[0],
                w1 = width[1],
                w2 = width[2],
                w3 = width[3],
            )?;
        }
        // The errors, under the table (they are also on stderr, which may not be kept).
        let mut failed = 0;
        for o in outcomes {
            let Some(e) = &o.error else { continue };
            failed += 1;
            if o.not_audited || o.steps == 0 {
                writeln!(out, "error: {e}")?;
            } else {
                writeln!(
                    out,
                    "error: {e} ({}: the {} step(s) before it were audited)",
                    o.name, o.steps
                )?;
            }
        }
        write!(
            out,
            "{} violation(s) in {} trace(s)",
            violations,
            outcomes.len()
        )?;
        if failed > 0 {
            write!(out, ", {failed} with an error (above)")?;
        }
        writeln!(out)
    }
}
