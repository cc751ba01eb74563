//! Whole-trace reports ([`TraceReport`]): the audit driver with a sink that keeps every verdict
//! of each trace, for tests and library users that want a trace's results at once.

use crate::audit::coverage::Coverage;
use crate::audit::driver::{audit_file, Checks, Driver, ReaderFacts};
use crate::audit::plan::{AuditError, AuditOptions, AuditPlan};
use crate::audit::records::{PropertyEnd, PropertyInfo, VerdictRecord};
use crate::audit::sink::{EndError, Sink, TraceEnd, TraceStart};
use crate::engine::monitor::Verdict;
use crate::trace::{self, Event, TraceError};
use serde::Serialize;
use std::path::Path;
use trac_spec::spec::CheckedSpec;

/// Everything an audit of one trace found.
#[derive(Clone, Debug, Serialize)]
pub struct TraceReport {
    /// The trace's name (its path as given).
    pub trace: String,
    /// Steps read.
    pub steps: usize,
    /// The audited properties.
    pub properties: Vec<PropertyInfo>,
    /// Every verdict reached, in step order (step 0 first).
    pub records: Vec<VerdictRecord>,
    /// Every property's state at the end of the trace.
    pub ends: Vec<PropertyEnd>,
    /// The trace error that stopped the audit early, if any.
    #[serde(skip)]
    pub error: Option<TraceError>,
    /// What the audit could read of the trace.
    pub coverage: Coverage,
}

/// One property's part of a [`TraceReport`].
#[derive(Clone, Debug)]
pub struct PropertyReport<'a> {
    /// Static facts.
    pub info: &'a PropertyInfo,
    /// The property's verdicts, in step order.
    pub records: Vec<&'a VerdictRecord>,
    /// Its end-of-trace state.
    pub end: &'a PropertyEnd,
}

impl PropertyReport<'_> {
    /// Sorted, deduplicated 1-based steps with a violation (0 if decided before the first step).
    pub fn violation_steps(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .records
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .map(|r| r.step)
            .collect();
        v.dedup();
        v
    }

    /// `(step, value)` of every violation, sorted.
    pub fn violations_by_value(&self) -> Vec<(usize, Option<String>)> {
        let mut v: Vec<(usize, Option<String>)> = self
            .records
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .map(|r| (r.step, r.value.clone()))
            .collect();
        v.sort();
        v
    }
}

impl TraceReport {
    /// The part of the report about property `id`.
    ///
    /// # Panics
    /// If no audited property has that id (a programming error in the caller).
    pub fn property(&self, id: &str) -> PropertyReport<'_> {
        self.try_property(id)
            .unwrap_or_else(|| panic!("no property `{id}` in this audit"))
    }

    /// The part of the report about property `id`, if it exists.
    pub fn try_property(&self, id: &str) -> Option<PropertyReport<'_>> {
        let info = self.properties.iter().find(|p| p.id == id)?;
        let end = self.ends.iter().find(|e| e.property == id)?;
        Some(PropertyReport {
            info,
            records: self.records.iter().filter(|r| r.property == id).collect(),
            end,
        })
    }

    /// Total number of violations over all properties.
    pub fn violation_count(&self) -> usize {
        self.ends.iter().map(|e| e.violations).sum()
    }
}

/// The sink that builds one [`TraceReport`] per trace.
struct Reports {
    properties: Vec<PropertyInfo>,
    done: Vec<TraceReport>,
}

impl Sink for Reports {
    type Trace = TraceReport;

    fn start(&mut self, t: &TraceStart<'_>) -> TraceReport {
        TraceReport {
            trace: t.name.to_string(),
            steps: 0,
            properties: self.properties.clone(),
            records: Vec::new(),
            ends: Vec::new(),
            error: None,
            coverage: Coverage::default(),
        }
    }

    fn verdicts(&mut self, r: &mut TraceReport, records: Vec<VerdictRecord>) {
        r.records.extend(records);
    }

    fn end(&mut self, mut r: TraceReport, end: TraceEnd) {
        r.steps = end.steps;
        r.ends = end.ends;
        r.coverage = end.coverage;
        r.error = match &end.error {
            Some(EndError::Read(e)) => e.trace_error().cloned(),
            _ => None,
        };
        self.done.push(r);
    }
}

/// The plan of `specs`, the coverage checks against them, and an empty report sink.
fn setup(
    specs: &[CheckedSpec],
    opts: &AuditOptions,
) -> Result<(AuditPlan, Checks, Reports), AuditError> {
    let plan = AuditPlan::new(specs, opts)?;
    let sink = Reports {
        properties: plan.properties(),
        done: Vec::new(),
    };
    let checks = Checks {
        specs: specs.to_vec().into(),
        ..Checks::default()
    };
    Ok((plan, checks, sink))
}

/// Audits a stream of events named `name` by the audit driver ([`Driver`]): one report per
/// trace (session), in the order the traces ended. A bad event of a known session ends that
/// session; any other stops the stream, keeping what was computed.
///
/// # Errors
/// The specs cannot be monitored ([`AuditPlan::new`]).
pub fn audit_events(
    specs: &[CheckedSpec],
    name: &str,
    events: impl IntoIterator<Item = Result<Event, TraceError>>,
    opts: &AuditOptions,
) -> Result<Vec<TraceReport>, AuditError> {
    let (plan, checks, mut sink) = setup(specs, opts)?;
    let mut driver = Driver::new(plan, checks, name);
    // A cross-check mismatch ends the audit there, as in the CLI: the reports of the traces
    // that ended are returned.
    if driver
        .read(&mut sink, events.into_iter().map(|e| Ok((e?, None))))
        .is_ok()
    {
        driver.finish(&mut sink, &ReaderFacts::default());
    }
    Ok(sink.done)
}

/// Audits the trace file at `path` (any format [`trace::open`] detects) by the audit driver: one
/// report per trace (session).
///
/// # Errors
/// The specs cannot be monitored. A file that cannot be opened or a malformed line is not an
/// error here: it ends the audit and is returned in [`TraceReport::error`].
pub fn audit_path(
    spec: &CheckedSpec,
    path: &Path,
    opts: &AuditOptions,
) -> Result<Vec<TraceReport>, AuditError> {
    let (plan, checks, mut sink) = setup(std::slice::from_ref(spec), opts)?;
    audit_file(
        plan,
        checks,
        path,
        &trace::ReadOptions::default(),
        None,
        &mut sink,
    );
    Ok(sink.done)
}
