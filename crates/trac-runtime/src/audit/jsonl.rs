//! The JSON Lines records of an audit (`trac audit --format jsonl`), shared by the CLI and the
//! Python package so that both write the same objects.
//!
//! Two kinds of object, documented in docs/reference/reports.md (`--format jsonl`):
//! - [`verdict_record`]: one per verdict reached (`trace`, `property`, `step`, `verdict`, `value`,
//!   `residual`, `restarted_with`, `witness`, and `past` for properties with past-time
//!   operators);
//! - [`end_record`]: one per trace and property at the end of the trace (`trace`, `property`,
//!   `end: true`, `error`, `steps`, `verdict`, `violations`, `ltlf`, `instances`).
//!
//! [`not_audited`] gives the reason, put in the end records' `error`, why a trace read without
//! error was not audited; [`session_trace_name`] names the trace of one session of a file.

use crate::audit::coverage::Coverage;
use crate::audit::records::{PropertyEnd, VerdictRecord};
use crate::engine::monitor::{Change, Verdict};
use serde_json::Value;

/// The JSON object of verdict record `r` of trace `trace` (fields as in docs/reference/reports.md).
/// O(size of the witness).
/// The log's own step number (`log_step`), `timestamp`, the call's place in its message
/// (`call_index`, `--step-per call`) and the past-time citations (`past`) are there when the
/// log gives them / the property has past-time operators.
pub fn verdict_record(trace: &str, r: &VerdictRecord) -> Value {
    // Plain structs of strings, numbers and booleans always convert.
    serde_json::to_value(VerdictOut::of(trace, r)).expect("a verdict record converts")
}

/// The end-of-trace JSON object of property end `e` of trace `trace`, which read `steps` steps;
/// `error` is the trace error that ended the trace early, or why it was not audited.
pub fn end_record(trace: &str, steps: usize, e: &PropertyEnd, error: Option<&str>) -> Value {
    serde_json::to_value(EndOut::of(trace, steps, e, error)).expect("an end record converts")
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

/// Why trace `file`, read without error with coverage `cov`, was not audited against `specs`
/// (`model`: an LLM labels propositions), if it was not: as [`not_audited`], or when the
/// propositions of every property can never hold on it ([`not_audited_structure`]). The CLI
/// and the Python package give the same reason.
pub fn not_audited_for(
    file: &str,
    cov: &Coverage,
    specs: &[trac_spec::spec::CheckedSpec],
    model: bool,
) -> Option<String> {
    not_audited(file, cov).or_else(|| {
        let unaudited = cov.unaudited_properties(specs, model);
        let properties: usize = specs.iter().map(|c| c.properties.len()).sum();
        (!unaudited.is_empty() && unaudited.len() == properties)
            .then(|| not_audited_structure(file, &unaudited))
    })
}

/// Why trace `file` was not audited when no property of it could see what it reads: each of
/// `unaudited` (from [`Coverage::unaudited_properties`]) is a property id and its propositions,
/// none of which can hold on the trace (their rules read roles, tools, arguments or fields that
/// no step has).
pub fn not_audited_structure(file: &str, unaudited: &[(String, Vec<String>)]) -> String {
    let list: Vec<String> = unaudited
        .iter()
        .map(|(id, props)| format!("{id} ({})", props.join(", ")))
        .collect();
    format!(
        "{file}: not audited: the propositions of every property can never hold on it: {}",
        list.join("; ")
    )
}

/// The trace name of one session of a file: `FILE#SESSION`, or `FILE` for events without a
/// `session` field.
pub fn session_trace_name(file: &str, session: Option<&str>) -> String {
    match session {
        // Once per session: built at its size, without the formatting machinery.
        Some(s) => {
            let mut name = String::with_capacity(file.len() + 1 + s.len());
            name.push_str(file);
            name.push('#');
            name.push_str(s);
            name
        }
        None => file.to_string(),
    }
}

/// [`verdict_record`] written as one line (its JSON text and `\n`) to `out`, without building
/// the `Value`: the same bytes as `verdict_record(trace, r).to_string()` (the fields are
/// declared in the sorted order of the `Value`'s map), at a fraction of the cost (no map per
/// object, no allocation per field). O(size of the witness).
pub fn write_verdict_line(out: &mut Vec<u8>, trace: &str, r: &VerdictRecord) {
    // Serializing plain structs of strings and numbers into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, &VerdictOut::of(trace, r));
    out.push(b'\n');
}

/// [`end_record`] written as one line to `out`, without building the `Value` (the same bytes
/// as `end_record(..).to_string()`; see [`write_verdict_line`]).
pub fn write_end_line(
    out: &mut Vec<u8>,
    trace: &str,
    steps: usize,
    e: &PropertyEnd,
    error: Option<&str>,
) {
    let _ = serde_json::to_writer(&mut *out, &EndOut::of(trace, steps, e, error));
    out.push(b'\n');
}

// The records, borrowed from the audit's: every object's fields in sorted order (as a `Value`'s
// B-tree map prints them, so a line and its `Value` read the same), `null` for absent values,
// `past`, `log_step`, `timestamp` and `call_index` left out when empty.

#[derive(serde::Serialize)]
struct VerdictOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    call_index: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_step: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    past: Vec<PastOut<'a>>,
    property: &'a str,
    residual: &'a str,
    restarted_with: Option<&'a str>,
    step: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<&'a str>,
    trace: &'a str,
    value: Option<&'a str>,
    verdict: Verdict,
    witness: Vec<ChangeOut<'a>>,
}

#[derive(serde::Serialize)]
struct ChangeOut<'a> {
    held: &'a [String],
    residual: &'a str,
    step: usize,
    text: &'a str,
}

impl<'a> VerdictOut<'a> {
    fn of(trace: &'a str, r: &'a VerdictRecord) -> Self {
        VerdictOut {
            call_index: r.call_index,
            log_step: r.log_step,
            past: r.past.iter().map(PastOut::of).collect(),
            property: &r.property,
            residual: &r.residual,
            restarted_with: r.restarted_with.as_deref(),
            step: r.step,
            timestamp: r.timestamp.as_deref(),
            trace,
            value: r.value.as_deref(),
            verdict: r.verdict,
            witness: r.witness.iter().map(ChangeOut::of).collect(),
        }
    }
}

impl<'a> ChangeOut<'a> {
    fn of(c: &'a Change) -> Self {
        ChangeOut {
            held: &c.held,
            residual: &c.residual,
            step: c.step,
            text: &c.text,
        }
    }
}

#[derive(serde::Serialize)]
struct PastOut<'a> {
    reason: &'a str,
    since_step: usize,
    step: usize,
    steps: Vec<CitedOut<'a>>,
    subformula: &'a str,
    value: bool,
}

impl<'a> PastOut<'a> {
    fn of(p: &'a crate::engine::monitor::PastCitation) -> Self {
        PastOut {
            reason: &p.reason,
            since_step: p.since_step,
            step: p.step,
            steps: p
                .steps
                .iter()
                .map(|s| CitedOut {
                    step: s.step,
                    text: &s.text,
                    what: &s.what,
                })
                .collect(),
            subformula: &p.subformula,
            value: p.value,
        }
    }
}

#[derive(serde::Serialize)]
struct CitedOut<'a> {
    step: usize,
    text: &'a str,
    what: &'a str,
}

#[derive(serde::Serialize)]
struct EndOut<'a> {
    end: bool,
    error: Option<&'a str>,
    instances: Vec<InstanceOut<'a>>,
    ltlf: Verdict,
    property: &'a str,
    steps: usize,
    trace: &'a str,
    verdict: Verdict,
    violations: usize,
}

impl<'a> EndOut<'a> {
    fn of(trace: &'a str, steps: usize, e: &'a PropertyEnd, error: Option<&'a str>) -> Self {
        EndOut {
            end: true,
            error,
            instances: e
                .instances
                .iter()
                .map(|i| InstanceOut {
                    ltlf: i.ltlf,
                    residual: &i.residual,
                    value: i.value.as_deref(),
                    verdict: i.verdict,
                    violations: i.violations,
                })
                .collect(),
            ltlf: e.ltlf,
            property: &e.property,
            steps,
            trace,
            verdict: e.verdict,
            violations: e.violations,
        }
    }
}

#[derive(serde::Serialize)]
struct InstanceOut<'a> {
    ltlf: Verdict,
    residual: &'a str,
    value: Option<&'a str>,
    verdict: Verdict,
    violations: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::records::InstanceEnd;
    use crate::engine::monitor::{CitedStep, PastCitation};
    use serde_json::json;

    /// The records as they were built before (`json!` objects), the reference for both the
    /// `Value`s and the lines.
    fn reference_verdict(trace: &str, r: &VerdictRecord) -> Value {
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
        if !r.past.is_empty() {
            rec["past"] = json!(r.past);
        }
        if let Some(n) = r.log_step {
            rec["log_step"] = json!(n);
        }
        if let Some(k) = r.call_index {
            rec["call_index"] = json!(k);
        }
        if let Some(t) = &r.timestamp {
            rec["timestamp"] = json!(t);
        }
        rec
    }

    fn reference_end(trace: &str, steps: usize, e: &PropertyEnd, error: Option<&str>) -> Value {
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

    fn line(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    /// The `Value`s equal the former `json!` records, and the direct writers give their text,
    /// with and without every optional field, escapes and non-ASCII text included.
    #[test]
    fn direct_lines_equal_the_values_text() {
        let mut r = VerdictRecord {
            property: "R1 \"q\"".into(),
            step: 7,
            verdict: Verdict::Violated,
            value: Some("knife".into()),
            residual: "false".into(),
            restarted_with: Some("G(p -> F q)".into()),
            witness: vec![
                Change {
                    step: 3,
                    text: "take knife\té\u{1}".into(),
                    held: vec!["take(knife)".into(), "p".into()],
                    residual: "F q".into(),
                },
                Change {
                    step: 7,
                    text: String::new(),
                    held: vec![],
                    residual: "false".into(),
                },
            ],
            past: vec![PastCitation {
                subformula: "O confirm".into(),
                step: 7,
                value: false,
                since_step: 1,
                steps: vec![CitedStep {
                    step: 2,
                    text: "x".into(),
                    what: "confirm held".into(),
                }],
                reason: "confirm held at no step 1..7".into(),
            }],
            log_step: Some(70),
            timestamp: Some("2026-01-01T00:00:00Z".into()),
            call_index: Some(2),
        };
        for _ in 0..2 {
            let want = reference_verdict("a.jsonl#s1", &r);
            assert_eq!(verdict_record("a.jsonl#s1", &r), want);
            assert_eq!(
                line(|o| write_verdict_line(o, "a.jsonl#s1", &r)),
                want.to_string() + "\n"
            );
            r.past.clear();
            r.log_step = None;
            r.timestamp = None;
            r.call_index = None;
            r.value = None;
            r.restarted_with = None;
        }
        let e = PropertyEnd {
            property: "f1".into(),
            verdict: Verdict::Pending,
            violations: 2,
            ltlf: Verdict::Satisfied,
            instances: vec![
                InstanceEnd {
                    value: None,
                    verdict: Verdict::Pending,
                    ltlf: Verdict::Violated,
                    residual: "Fq & G(p -> Fq)".into(),
                    violations: 1,
                },
                InstanceEnd {
                    value: Some("v".into()),
                    verdict: Verdict::Satisfied,
                    ltlf: Verdict::Satisfied,
                    residual: "true".into(),
                    violations: 1,
                },
            ],
        };
        for error in [None, Some("line 3: bad \"json\"")] {
            let want = reference_end("t", 9, &e, error);
            assert_eq!(end_record("t", 9, &e, error), want);
            assert_eq!(
                line(|o| write_end_line(o, "t", 9, &e, error)),
                want.to_string() + "\n"
            );
        }
    }
}
