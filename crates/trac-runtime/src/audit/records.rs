//! The records of an audit: verdicts with witnesses, and every property's state at the end.

use crate::engine::monitor::{Change, PastCitation, Verdict};
use serde::Serialize;

/// Static facts about one audited property.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyInfo {
    /// The property's id.
    pub id: String,
    /// Its description from the spec.
    pub description: String,
    /// The formula, normalized, in Spot syntax (with its `forall` prefix if parametric).
    pub formula: String,
    /// The formula in plain English, with the spec's proposition descriptions.
    pub english: String,
    /// `ltl3` or `ltlf`.
    pub semantics: &'static str,
}

/// A verdict reached at one step, with its witness.
#[derive(Clone, Debug, Serialize)]
pub struct VerdictRecord {
    /// The property's id.
    pub property: String,
    /// 1-based step; 0 for a verdict decided before the first step.
    pub step: usize,
    /// `violated` or `satisfied`.
    pub verdict: Verdict,
    /// For a parametric property, the value of its variable.
    pub value: Option<String>,
    /// The residual formula at the verdict: `false` or `true` (Spot syntax).
    pub residual: String,
    /// The residual the property restarted with (TRAC_R), if it restarted.
    pub restarted_with: Option<String>,
    /// The witness: the steps since the property's last (re)start that changed its residual,
    /// ending with the verdict step.
    pub witness: Vec<Change>,
    /// For a property with past-time operators: why the past-time subformulas that decided the
    /// verdict step had their values, with the steps that made them so
    /// ([`crate::engine::past`]). Empty (and not serialized) otherwise, and for verdicts at step 0, at
    /// the end of an LTLf trace, and inherited by a parametric instance from its template.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub past: Vec<PastCitation>,
    /// The step number the log itself gives the verdict step ([`Event::declared_step`](crate::trace::Event::declared_step)), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_step: Option<u64>,
    /// The timestamp the log gives the verdict step ([`Event::timestamp`](crate::trace::Event::timestamp)), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// For a call step (`--step-per call`): the 1-based position of its call among the tool
    /// calls of its message (the event's field [`CALL_INDEX`](crate::trace::CALL_INDEX)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_index: Option<u64>,
}

/// The state of one instance of a property at the end of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct InstanceEnd {
    /// The parameter value (None for a non-parametric property).
    pub value: Option<String>,
    /// LTL3 verdict at the end of the trace (after restarts).
    pub verdict: Verdict,
    /// Finite-trace (LTLf) verdict of the whole trace.
    pub ltlf: Verdict,
    /// Residual formula at the end.
    pub residual: String,
    /// Number of violations reported.
    pub violations: usize,
}

/// One property at the end of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyEnd {
    /// The property's id.
    pub property: String,
    /// LTL3 verdict at the end. For a parametric property `forall x: φ`, the conjunction over
    /// every value, seen or not: violated if an instance or the template (standing for every
    /// value not seen yet) is currently violated, satisfied if all of them are satisfied,
    /// pending otherwise. For `ltlf` properties, the LTLf verdict.
    pub verdict: Verdict,
    /// Number of violations reported over the trace (all instances).
    pub violations: usize,
    /// Finite-trace verdict: violated if the LTLf verdict of an instance or of the template
    /// (every value not seen yet) is.
    pub ltlf: Verdict,
    /// Per-instance details (one entry for a non-parametric property).
    pub instances: Vec<InstanceEnd>,
}
