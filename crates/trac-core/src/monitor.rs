//! The monitor interface shared by every engine and by generated code: LTL3 [`Verdict`]s, the
//! [`Monitor`] trait, TRAC_R's [`ResetPolicy`] and witness entries ([`Change`]).
//!
//! The semantics of TRAC and TRAC_R (Alamdari, Klassen & McIlraith, arXiv 2605.16198, §4), and
//! the rule that each failing position counts once, are described in `trac_runtime::monitor`,
//! beside the progression monitor that defines them.

use crate::labels::StepInput;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An LTL3 verdict (Bauer, Leucker & Schallhart, TOSEM 2011): ⊤, ⊥ or ?.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// ⊤: every continuation of the trace satisfies the property.
    Satisfied,
    /// ⊥: no continuation of the trace satisfies the property.
    Violated,
    /// ?: not decided yet.
    Pending,
}

impl Verdict {
    /// `satisfied`, `violated` or `pending`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Satisfied => "satisfied",
            Verdict::Violated => "violated",
            Verdict::Pending => "pending",
        }
    }

    /// The residual formula of a decided verdict: `true`, `false`, or `?` when pending.
    pub fn residual_str(self) -> &'static str {
        match self {
            Verdict::Satisfied => "true",
            Verdict::Violated => "false",
            Verdict::Pending => "?",
        }
    }

    /// ⊤ for `true`, ⊥ for `false` (for two-valued verdicts such as LTLf's).
    pub fn of_bool(b: bool) -> Verdict {
        if b {
            Verdict::Satisfied
        } else {
            Verdict::Violated
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When a monitor restarts its property after a verdict.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ResetPolicy {
    /// TRAC_R: restart after a violation (at the violating step itself). Without it (plain TRAC)
    /// a violated property stays violated.
    pub on_violation: bool,
    /// Restart after the property is satisfied too.
    pub on_satisfaction: bool,
}

impl Default for ResetPolicy {
    /// TRAC_R: reset on violation, not on satisfaction.
    fn default() -> Self {
        ResetPolicy {
            on_violation: true,
            on_satisfaction: false,
        }
    }
}

/// One step that changed a monitor's residual formula: part of a witness.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// 1-based step number in the trace.
    pub step: usize,
    /// The step's text (the agent's action or output).
    pub text: String,
    /// The property's atomic propositions that held at this step, sorted.
    pub held: Vec<String>,
    /// The residual formula after this step (Spot syntax).
    pub residual: String,
}

/// The most steps kept in a monitor's explanation; older ones are dropped (and counted).
pub const MAX_EXPLANATION: usize = 32;

/// A runtime monitor for one property.
///
/// Protocol: [`Monitor::initial`] once, then [`Monitor::step`] once per trace step, then
/// [`Monitor::ltlf`] at the end of the trace.
pub trait Monitor {
    /// The verdict already decided before the first step (reported at step 0), if any.
    fn initial(&self) -> Option<Verdict>;
    /// Reads one step; returns the verdict reached at this step, if one was (at most one per step).
    fn step(&mut self, input: &StepInput<'_>) -> Option<Verdict>;
    /// The current verdict: of the restarted property after a TRAC_R restart.
    fn verdict(&self) -> Verdict;
    /// The current residual formula in Spot syntax.
    fn residual(&self) -> String;
    /// The steps since the last restart that changed the residual (at most [`MAX_EXPLANATION`]).
    fn explanation(&self) -> &[Change];
    /// The witness of the last verdict reached: the steps from the property's (re)start to the
    /// verdict step that changed its residual, the last one ending in `true` or `false`.
    fn witness(&self) -> &[Change];
    /// [`Monitor::witness`] as owned entries. Monitors that record witnesses compactly
    /// ([`crate::table::TableMonitor`]) build them without keeping a rendered copy.
    fn witness_owned(&self) -> Vec<Change> {
        self.witness().to_vec()
    }
    /// [`Monitor::explanation`] as owned entries (see [`Monitor::witness_owned`]).
    fn explanation_owned(&self) -> Vec<Change> {
        self.explanation().to_vec()
    }
    /// The finite-trace (LTLf) verdict of the whole trace read so far, `X` read as weak next.
    fn ltlf(&self) -> Verdict;
    /// Back to the state before the first step.
    fn reset(&mut self);
}

/// How a property's verdict is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Semantics {
    /// Three-valued LTL: satisfied / violated as soon as every infinite extension agrees,
    /// inconclusive otherwise.
    #[default]
    Ltl3,
    /// LTL on finite traces: the end of the trace is the end of the run.
    Ltlf,
}
