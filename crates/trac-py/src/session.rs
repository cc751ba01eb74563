//! Audits of whole traces with the records of `trac audit --format jsonl`.
//!
//! [`FileAudit`] is the library's audit driver ([`trac_runtime::audit::driver`], the CLI's too)
//! with a sink of JSON Lines records ([`trac_runtime::audit::jsonl`], as the CLI's): one trace per
//! `session` (named `FILE#SESSION`), `"session_end": true` markers, per-session failures,
//! end-of-trace verdicts and end records with the trace error or the reason the trace was not
//! audited. The two outputs are equal object for object because they are one loop.
//!
//! Events can also be given one by one in memory ([`event_from_json`], [`event_from_text`],
//! [`event_from_labels`]): each is parsed by the trace reader of its kind, so a dict event is
//! read exactly as the same object on a JSON Lines line.

use serde_json::Value;
use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;
use trac_runtime::audit::driver::{
    audit_file, Checks, CrossCheckFailure, Driver, FileEnd, ReaderFacts,
};
use trac_runtime::audit::jsonl;
use trac_runtime::audit::sink::{ReadFailure, Sink, TraceEnd, TraceStart};
use trac_runtime::audit::{AuditError, AuditOptions, AuditPlan, VerdictRecord};
use trac_runtime::trace::{Event, TraceError, TraceFormat, TraceReader};
use trac_spec::spec::CheckedSpec;

/// Why an audit could not run or had to stop without its end records.
#[derive(Debug, thiserror::Error)]
pub enum AuditFailure {
    /// The specs cannot be monitored (a duplicate property id across specs, a past-time operator
    /// over a future one, a table that does not compile).
    #[error(transparent)]
    Spec(#[from] AuditError),
    /// The cross-check engine found a step where its engines differ
    /// (`NAME: property ID (VALUE): ...`); the CLI stops there too.
    #[error(transparent)]
    Mismatch(#[from] CrossCheckFailure),
}

/// Everything an audit of one trace produced.
#[derive(Clone, Debug, Default)]
pub struct AuditOutput {
    /// The JSON Lines records, in the CLI's order: verdict records as reached (sessions
    /// interleaved as their events are), then per session its end-of-trace verdicts and end
    /// records.
    pub records: Vec<Value>,
    /// The trace error that ended the audit early (the records hold what was computed before it).
    pub error: Option<TraceError>,
    /// Why the trace, read without error, was not audited (empty, or no event understood).
    pub not_audited: Option<String>,
    /// Violations counted over every session and property.
    pub violations: usize,
    /// Fields of JSON events that were ignored, in order of first appearance.
    pub unknown_fields: Vec<String>,
}

/// The Python package's sink of the audit driver: the JSON Lines records of
/// `trac audit --format jsonl`, built by [`trac_runtime::audit::jsonl`] as the CLI's.
#[derive(Default)]
struct Records(Vec<Value>);

impl Sink for Records {
    type Trace = String;

    fn start(&mut self, trace: &TraceStart<'_>) -> String {
        trace.name.to_string()
    }

    fn verdicts(&mut self, name: &mut String, records: Vec<VerdictRecord>) {
        self.0
            .extend(records.iter().map(|r| jsonl::verdict_record(name, r)));
    }

    fn end(&mut self, name: String, end: TraceEnd) {
        let error = end.error.as_ref().map(|e| e.to_string());
        for e in &end.ends {
            self.0
                .push(jsonl::end_record(&name, end.steps, e, error.as_deref()));
        }
    }
}

/// The streaming audit of one trace by the library's driver, split by session as the CLI does.
pub struct FileAudit {
    driver: Driver<String>,
    records: Records,
}

impl FileAudit {
    /// An audit of trace `file` (its name in records) against `specs`.
    ///
    /// # Errors
    /// [`AuditFailure::Spec`] when the specs cannot be monitored.
    pub fn new(
        specs: Arc<[CheckedSpec]>,
        opts: AuditOptions,
        file: &str,
    ) -> Result<FileAudit, AuditFailure> {
        let plan = AuditPlan::new(&specs, &opts)?;
        Ok(FileAudit::from_plan(plan, specs, file))
    }

    /// An audit of trace `file` with `plan`'s monitors (e.g. one kept from an earlier audit
    /// with the same specs and options), checking at its end whether `specs` (those of the
    /// plan) could see anything of the trace: a trace on which the propositions of every
    /// property can never hold is not audited, as in the CLI.
    pub fn from_plan(plan: AuditPlan, specs: Arc<[CheckedSpec]>, file: &str) -> FileAudit {
        let checks = Checks {
            specs,
            ..Checks::default()
        };
        FileAudit {
            driver: Driver::new(plan, checks, file),
            records: Records::default(),
        }
    }

    /// Audits one event: a new session gets its own auditor, whose step-0 verdicts come first.
    ///
    /// # Errors
    /// [`AuditFailure::Mismatch`] at the first step where the cross-check engines differ.
    pub fn step(&mut self, ev: &Event) -> Result<(), AuditFailure> {
        Ok(self.driver.feed(&mut self.records, ev, None)?)
    }

    /// A bad event: one of a known session ends that session only; returns `false` when it
    /// stops the trace (then call [`FileAudit::finish`]).
    pub fn fail(&mut self, e: TraceError) -> bool {
        self.driver.fail(&mut self.records, ReadFailure::Trace(e))
    }

    /// The records produced since the last call (all of them, the first time).
    pub fn take_records(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.records.0)
    }

    /// Steps read, over every session.
    pub fn steps(&self) -> usize {
        self.driver.steps()
    }

    /// The residual formula of every property instance of every open session, now:
    /// `(trace name, property id, parameter value, residual)`, in session then property order.
    pub fn residuals(&self) -> Vec<(String, String, Option<String>, String)> {
        let mut out = Vec::new();
        for (name, auditor) in self.driver.open_sessions() {
            for e in auditor.finish() {
                for i in e.instances {
                    out.push((name.to_string(), e.property.clone(), i.value, i.residual));
                }
            }
        }
        out
    }

    /// Ends the trace: `error` is the trace error that stopped reading, if any. Adds each
    /// session's end-of-trace verdicts and end records.
    pub fn finish(mut self, error: Option<TraceError>) -> AuditOutput {
        if let Some(e) = error {
            self.driver.fail(&mut self.records, ReadFailure::Trace(e));
        }
        let end = self
            .driver
            .finish(&mut self.records, &ReaderFacts::default());
        AuditOutput {
            records: self.records.0,
            error: first_error(&end),
            not_audited: end.not_audited,
            violations: end.violations,
            unknown_fields: Vec::new(),
        }
    }
}

/// The error of an audit's output: the failure that stopped the file, else the first that
/// ended a session (the CLI's exit code 2 either way).
fn first_error(end: &FileEnd) -> Option<TraceError> {
    end.error
        .iter()
        .chain(&end.session_failures)
        .find_map(|e| e.trace_error().cloned())
}

/// Audits a stream of events named `file`, split by session (a bad event of a known session
/// ends that session; any other stops the trace, keeping what was computed, as the CLI does).
///
/// # Errors
/// [`AuditFailure`]: the specs cannot be monitored, or the cross-check engines differ.
pub fn audit_events(
    specs: Arc<[CheckedSpec]>,
    opts: AuditOptions,
    file: &str,
    events: impl IntoIterator<Item = Result<Event, TraceError>>,
) -> Result<AuditOutput, AuditFailure> {
    run_events(FileAudit::new(specs, opts, file)?, events)
}

/// Runs `audit` over `events` (see [`audit_events`]).
///
/// # Errors
/// [`AuditFailure::Mismatch`] when the cross-check engines differ.
pub fn run_events(
    mut audit: FileAudit,
    events: impl IntoIterator<Item = Result<Event, TraceError>>,
) -> Result<AuditOutput, AuditFailure> {
    for ev in events {
        match ev {
            Ok(ev) => audit.step(&ev)?,
            Err(e) => {
                if !audit.fail(e) {
                    break;
                }
            }
        }
    }
    Ok(audit.finish(None))
}

/// Audits the trace at `path` (a file, a pipe, or `-` for standard input; JSON Lines or a
/// plain-text log, detected as the CLI does), named as the CLI names it.
///
/// # Errors
/// [`AuditFailure`]: the specs cannot be monitored, or the cross-check engines differ. A file
/// that cannot be opened or a malformed line is not an error here: it is in
/// [`AuditOutput::error`] and in the end records.
pub fn audit_path(
    specs: Arc<[CheckedSpec]>,
    opts: AuditOptions,
    path: &Path,
) -> Result<AuditOutput, AuditFailure> {
    let plan = AuditPlan::new(&specs, &opts)?;
    run_path(plan, specs, path)
}

/// Audits the trace at `path` with `plan`'s monitors (see [`audit_path`]) by the library's
/// pull driver, as the CLI does.
///
/// # Errors
/// [`AuditFailure::Mismatch`] when the cross-check engines differ.
pub fn run_path(
    plan: AuditPlan,
    specs: Arc<[CheckedSpec]>,
    path: &Path,
) -> Result<AuditOutput, AuditFailure> {
    let checks = Checks {
        specs,
        ..Checks::default()
    };
    let mut records = Records::default();
    let end = audit_file(plan, checks, path, &Default::default(), None, &mut records);
    if let Some(m) = end.mismatch {
        return Err(m.into());
    }
    Ok(AuditOutput {
        records: records.0,
        error: first_error(&end),
        not_audited: end.not_audited,
        violations: end.violations,
        unknown_fields: end.unknown_fields,
    })
}

/// Renumbers a one-line reader's event or error as event `index` (1-based) of trace `name`.
fn one_line(
    line: &str,
    name: &str,
    index: usize,
    format: TraceFormat,
) -> Result<(Event, Vec<String>), TraceError> {
    if line.contains('\n') {
        return Err(TraceError {
            file: name.to_string(),
            line: index,
            column: line.find('\n').map_or(0, |i| line[..i].chars().count() + 1),
            message: "an event is one line: this one holds a line break".into(),
            session: None,
        });
    }
    let mut reader = TraceReader::from_reader(Cursor::new(line.as_bytes()), name, format);
    let ev = reader.next();
    let unknown = reader
        .unknown_fields()
        .into_iter()
        .map(str::to_string)
        .collect();
    match ev {
        Some(Ok(mut ev)) => {
            ev.step = index;
            ev.line = index;
            Ok((ev, unknown))
        }
        Some(Err(mut e)) => {
            e.line = index;
            Err(e)
        }
        None => Err(TraceError {
            file: name.to_string(),
            line: index,
            column: 1,
            message: "empty event".into(),
            session: None,
        }),
    }
}

/// Event `index` (1-based) of trace `name` from one JSON object in JSON Lines form
/// (`{"session"?, "step"?, "input"?, "output"?, "labels"?}`), read by the JSON Lines reader; also
/// returns the fields it ignored.
///
/// # Errors
/// The reader's error (not an object, a field of the wrong type or given twice), at line `index`.
pub fn event_from_json(
    json: &str,
    name: &str,
    index: usize,
) -> Result<(Event, Vec<String>), TraceError> {
    one_line(json, name, index, TraceFormat::Jsonl)
}

/// Event `index` of trace `name` from one line of a plain-text action log (`3. take knife`):
/// step number and markdown are stripped as by the text reader, the line is kept for witnesses.
///
/// # Errors
/// Nothing left after stripping, or a line break inside the text.
pub fn event_from_text(text: &str, name: &str, index: usize) -> Result<Event, TraceError> {
    one_line(text, name, index, TraceFormat::Text).map(|(e, _)| e)
}

/// Event `index` made only of labels (the atomic propositions that hold), like the JSON event
/// `{"labels": [...]}`.
pub fn event_from_labels(labels: Vec<String>, index: usize) -> Event {
    let raw = serde_json::json!({ "labels": labels }).to_string();
    Event {
        step: index,
        line: index,
        labels: Some(labels),
        raw,
        ..Event::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trac_runtime::audit::AuditOptions;
    use trac_spec::spec::Spec;

    fn spec(formulas: &[&str]) -> CheckedSpec {
        let ids: Vec<String> = (1..=formulas.len()).map(|i| format!("f{i}")).collect();
        Spec::from_formulas("t", ids.iter().zip(formulas.iter().copied()))
            .check()
            .unwrap()
    }

    fn labels(ls: &[&str], i: usize) -> Result<Event, TraceError> {
        Ok(event_from_labels(
            ls.iter().map(|s| s.to_string()).collect(),
            i,
        ))
    }

    #[test]
    fn sessions_are_separate_traces_with_their_own_end_records() {
        let specs: Arc<[CheckedSpec]> = Arc::new([spec(&["G !bad"])]);
        let opts = AuditOptions {
            compiler: Some(trac_compile::Compiler::shared()),
            ..AuditOptions::default()
        };
        let ev = |s: &str, ls: &[&str], i| {
            let mut e = event_from_labels(ls.iter().map(|x| x.to_string()).collect(), i);
            e.session = Some(s.to_string());
            Ok(e)
        };
        let out = audit_events(
            specs,
            opts,
            "f",
            vec![ev("a", &["bad"], 1), ev("b", &[], 2), ev("a", &["bad"], 3)],
        )
        .unwrap();
        let traces: Vec<(&str, Option<u64>, bool)> = out
            .records
            .iter()
            .map(|r| {
                (
                    r["trace"].as_str().unwrap(),
                    r["step"].as_u64(),
                    r.get("end").is_some(),
                )
            })
            .collect();
        // Session a violates at its steps 1 and 2 (file events 1 and 3); b never.
        assert_eq!(
            traces,
            vec![
                ("f#a", Some(1), false),
                ("f#a", Some(2), false),
                ("f#a", None, true),
                ("f#b", None, true),
            ]
        );
        assert_eq!(out.violations, 2);
        assert_eq!(out.records[2]["steps"], 2);
        assert_eq!(out.records[3]["verdict"], "pending");
    }

    #[test]
    fn a_trace_error_keeps_the_verdicts_before_it_and_marks_the_end_records() {
        let specs: Arc<[CheckedSpec]> = Arc::new([spec(&["G !bad"])]);
        let opts = AuditOptions {
            compiler: Some(trac_compile::Compiler::shared()),
            ..AuditOptions::default()
        };
        let bad = event_from_json("{\"labels\": 3}", "mem", 2).map(|(e, _)| e);
        let err = bad.clone().unwrap_err();
        assert_eq!(err.line, 2);
        let out = audit_events(specs, opts, "mem", vec![labels(&["bad"], 1), bad]).unwrap();
        assert_eq!(out.records.len(), 2);
        assert_eq!(out.records[0]["verdict"], "violated");
        let end = &out.records[1];
        assert_eq!(end["end"], true);
        assert_eq!(end["steps"], 1);
        assert!(
            end["error"].as_str().unwrap().starts_with("mem:2:"),
            "{end}"
        );
    }

    #[test]
    fn an_empty_trace_and_one_never_understood_are_not_audited() {
        let specs: Arc<[CheckedSpec]> = Arc::new([spec(&["G !bad"])]);
        let opts = AuditOptions {
            compiler: Some(trac_compile::Compiler::shared()),
            ..AuditOptions::default()
        };
        let out = audit_events(specs.clone(), opts.clone(), "e", Vec::new()).unwrap();
        assert_eq!(
            out.not_audited.as_deref(),
            Some("e: not audited: the trace is empty")
        );
        // Text without rules that read it: nothing understood.
        let text = event_from_text("1. look", "e", 1);
        let out = audit_events(specs, opts, "e", vec![text]).unwrap();
        assert_eq!(
            out.records[0]["error"],
            "e: not audited: no event was understood (1 step(s) read)"
        );
    }

    #[test]
    fn events_in_memory_read_as_their_trace_lines() {
        let (e, unknown) =
            event_from_json("{\"output\": \"take knife\", \"role\": \"x\"}", "m", 4).unwrap();
        assert_eq!(e.output.as_deref(), Some("take knife"));
        assert_eq!((e.step, e.line), (4, 4));
        assert_eq!(unknown, vec!["role".to_string()]);
        let t = event_from_text("3. **take** knife", "m", 1).unwrap();
        assert_eq!(t.output.as_deref(), Some("take knife"));
        assert_eq!(t.declared_step, Some(3));
        assert!(event_from_text("a\nb", "m", 1).is_err());
        let e = event_from_text("  ** ", "m", 5).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(event_from_json("[1]", "m", 1).is_err());
    }

    #[test]
    fn a_spec_that_cannot_be_monitored_is_a_failure() {
        let specs: Arc<[CheckedSpec]> = Arc::new([spec(&["G a"]), spec(&["G b"])]);
        let err = FileAudit::new(
            specs,
            AuditOptions {
                compiler: Some(trac_compile::Compiler::shared()),
                ..AuditOptions::default()
            },
            "x",
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("duplicate property id"), "{err}");
    }
}
