//! Whole-trace reports ([`TraceReport`]) of a trace read at once.

use crate::audit::auditor::Auditor;
use crate::audit::coverage::Coverage;
use crate::audit::plan::{AuditError, AuditOptions};
use crate::audit::records::{PropertyEnd, PropertyInfo, VerdictRecord};
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

/// Audits a stream of events (stops at the first trace error, keeping what was computed).
pub fn audit_events(
    specs: &[CheckedSpec],
    name: &str,
    events: impl IntoIterator<Item = Result<Event, TraceError>>,
    opts: &AuditOptions,
) -> Result<TraceReport, AuditError> {
    let mut auditor = Auditor::new(specs, opts)?;
    let mut records = auditor.initial();
    let mut error = None;
    for ev in events {
        match ev {
            Ok(ev) => records.extend(auditor.step(&ev)),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    if error.is_none() {
        records.extend(auditor.end_of_trace());
    }
    Ok(TraceReport {
        trace: name.to_string(),
        steps: auditor.steps(),
        properties: auditor.properties(),
        records,
        ends: auditor.finish(),
        error,
        coverage: auditor.coverage().clone(),
    })
}

/// Audits the trace file at `path` (JSON Lines or plain-text log, detected by [`trace::open`]).
///
/// # Errors
/// The file cannot be opened or read, or the specs cannot be monitored. A malformed line is not an
/// error here: it ends the audit and is returned in [`TraceReport::error`].
pub fn audit_path(
    spec: &CheckedSpec,
    path: &Path,
    opts: &AuditOptions,
) -> Result<TraceReport, AuditError> {
    let reader = trace::open(path)?;
    audit_events(
        std::slice::from_ref(spec),
        &path.display().to_string(),
        reader,
        opts,
    )
}
