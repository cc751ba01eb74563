//! Shared code of trac's fuzz targets (see `README.md`): the specs the trace targets audit
//! with, and the one reading-and-auditing loop every trace reader goes through.
//!
//! Every target checks that its reader never panics (libFuzzer reports a panic, an abort, a
//! stack overflow, a timeout or memory growth as a crash) and, where cheap, an invariant.

use std::io::Cursor;
use trac_runtime::audit::{AuditOptions, AuditPlan};
use trac_runtime::label::labeler::check_spec;
use trac_runtime::trace::{ReadOptions, StepPer, TraceFormat, TraceReader};
use trac_spec::spec::Spec;

/// Steps audited per input at most: a fuzz input is small, and a reader that made many more
/// events than it has bytes would be a finding of its own (checked in [`audit_trace`]).
const MAX_EVENTS: usize = 100_000;

/// The example spec of the repository a trace target audits with.
#[derive(Clone, Copy, Debug)]
pub enum Example {
    /// `examples/specs/textworld.ron`: text rules over actions (JSON Lines, text logs).
    Textworld,
    /// `examples/specs/airline.ron`: roles, tools, arguments, fields (chat, OTLP).
    Airline,
}

/// The audit plan of one example spec, built once per thread (an [`AuditPlan`] is not `Sync`;
/// libFuzzer runs the target on one thread).
fn plan(src: &str, file: &str) -> AuditPlan {
    let spec = Spec::from_str(src, file).expect("the example spec parses");
    let checked = check_spec(&spec).expect("the example spec checks");
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    AuditPlan::new(&[checked], &opts).expect("the example spec compiles")
}

thread_local! {
    static TEXTWORLD: AuditPlan = plan(
        include_str!("../../examples/specs/textworld.ron"),
        "examples/specs/textworld.ron",
    );
    static AIRLINE: AuditPlan = plan(
        include_str!("../../examples/specs/airline.ron"),
        "examples/specs/airline.ron",
    );
}

/// Reads `data` as a trace through the public reading API (`format`: `None` detects it from
/// the input, as `trac audit` does) and audits every event with `plan`, labeler included, up to
/// the first error, as `trac audit` does.
///
/// Invariants checked: an error names line ≥ 1 within the input and its message is not empty;
/// events are numbered 1, 2, ... in order; no more events than the input has bytes (plus one
/// for the end of a conversation).
pub fn audit_trace(data: &[u8], format: Option<TraceFormat>, step_per: StepPer, spec: Example) {
    match spec {
        Example::Textworld => TEXTWORLD.with(|p| audit_with(data, format, step_per, p)),
        Example::Airline => AIRLINE.with(|p| audit_with(data, format, step_per, p)),
    }
}

fn audit_with(data: &[u8], format: Option<TraceFormat>, step_per: StepPer, plan: &AuditPlan) {
    let opts = ReadOptions {
        format,
        step_per,
        ..ReadOptions::default()
    };
    let reader = match TraceReader::sniff_with(Cursor::new(data), "fuzz", None, &opts) {
        Ok(r) => r,
        Err(e) => {
            check_error_position(data, e.line, &e.message);
            return;
        }
    };
    let mut auditor = plan.auditor();
    let _ = auditor.initial();
    let mut steps = 0usize;
    for ev in reader {
        match ev {
            Ok(ev) => {
                steps += 1;
                assert!(steps <= data.len() + 1, "more events than input bytes");
                assert!(steps <= MAX_EVENTS, "more than {MAX_EVENTS} events");
                let _ = auditor.step(&ev);
            }
            Err(e) => {
                check_error_position(data, e.line, &e.message);
                return;
            }
        }
    }
    let _ = auditor.end_of_trace();
    let _ = auditor.finish();
}

/// An error's line is 1-based and within the input (one past the last line for an error at
/// the end), and it says something.
fn check_error_position(data: &[u8], line: usize, message: &str) {
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    assert!(
        line <= lines + 1,
        "error at line {line} of a {lines}-line input: {message}"
    );
    assert!(!message.trim().is_empty(), "an error without a message");
}

/// [`audit_trace`] in both chat step modes (one step per message, one per turn).
pub fn audit_chat(data: &[u8], format: TraceFormat) {
    audit_trace(data, Some(format), StepPer::Message, Example::Airline);
    audit_trace(data, Some(format), StepPer::Turn, Example::Airline);
}
