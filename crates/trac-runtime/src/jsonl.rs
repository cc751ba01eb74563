//! The JSON Lines records of an audit (`trac audit --format jsonl`), shared by the CLI and the
//! Python package so that both write the same objects.
//!
//! Two kinds of object, documented in the README's "`--format jsonl` schema":
//! - [`verdict_record`]: one per verdict reached (`trace`, `property`, `step`, `verdict`, `value`,
//!   `residual`, `restarted_with`, `witness`, and `past` for properties with past-time
//!   operators);
//! - [`end_record`]: one per trace and property at the end of the trace (`trace`, `property`,
//!   `end: true`, `error`, `steps`, `verdict`, `violations`, `ltlf`, `instances`).
//!
//! [`not_audited`] gives the reason, put in the end records' `error`, why a trace read without
//! error was not audited; [`session_trace_name`] names the trace of one session of a file.

use crate::audit::{Coverage, PropertyEnd, VerdictRecord};
use serde_json::{json, Value};

/// The JSON object of verdict record `r` of trace `trace` (field order as in the README's
/// schema). O(size of the witness).
/// The log's own step number (`log_step`) and `timestamp` are added when the log gives them.
pub fn verdict_record(trace: &str, r: &VerdictRecord) -> Value {
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
    // Properties with past-time operators: why their past subformulas had their values.
    if !r.past.is_empty() {
        rec["past"] = json!(r.past);
    }
    if let Some(n) = r.log_step {
        rec["log_step"] = json!(n);
    }
    if let Some(t) = &r.timestamp {
        rec["timestamp"] = json!(t);
    }
    rec
}

/// The end-of-trace JSON object of property end `e` of trace `trace`, which read `steps` steps;
/// `error` is the trace error that ended the trace early, or why it was not audited.
pub fn end_record(trace: &str, steps: usize, e: &PropertyEnd, error: Option<&str>) -> Value {
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
}

/// Why trace `file`, read without error with coverage `cov` (merged over its sessions), was not
/// audited, if it was not: it is empty, or no event was understood (no event gave `labels`, and
/// none had text that a labeling rule read). Such a trace would pass every `G !p` rule
/// vacuously, so the CLI exits with code 2 for it.
pub fn not_audited(file: &str, cov: &Coverage) -> Option<String> {
    if cov.steps == 0 {
        Some(format!("{file}: not audited: the trace is empty"))
    } else if cov.understood == 0 {
        Some(format!(
            "{file}: not audited: no event was understood ({} step(s) read)",
            cov.steps
        ))
    } else {
        None
    }
}

/// The trace name of one session of a file: `FILE#SESSION`, or `FILE` for events without a
/// `session` field.
pub fn session_trace_name(file: &str, session: Option<&str>) -> String {
    match session {
        Some(s) => format!("{file}#{s}"),
        None => file.to_string(),
    }
}
