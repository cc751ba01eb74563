//! The monitor interface shared by every engine and by generated code: LTL3 [`Verdict`]s, the
//! [`Monitor`] trait, TRAC_R's [`ResetPolicy`] and witness entries ([`Change`], and
//! [`PastCitation`]s of past-time subformulas, tracked by a [`PastWitness`]).
//!
//! The semantics of TRAC and TRAC_R (Alamdari, Klassen & McIlraith, arXiv 2605.16198, §4), and
//! the rule that each failing position counts once, are described in `trac_runtime::engine::monitor`,
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

/// Why a past-time subformula of a property had its value at a verdict step: part of a
/// witness. The steps cited are those that made the value what it is (for `O confirm` false at
/// step 9: none, no step 1..9 had `confirm`; for `!deny S confirm` false: the last `confirm`
/// and the later step where `!deny` failed).
///
/// Per operator, with `t` = [`PastCitation::step`]: `Y a` / `Z a` cite step `t - 1` (none at
/// step 1); `O a` true cites the last step where `a` held, false none; `H a` true none, false
/// the first step where `a` failed; `a S b` true cites the last step where `b` held, false the
/// last step where `b` held (none if it never did) and the step after it where `a` failed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PastCitation {
    /// The past-time subformula, in Spot syntax (`O confirm`).
    pub subformula: String,
    /// The step it is evaluated at: the verdict step, or the step a `Y` / `Z` around it reads.
    pub step: usize,
    /// Its value at [`PastCitation::step`].
    pub value: bool,
    /// The step since which it has had this value without interruption (1: since the first
    /// step).
    pub since_step: usize,
    /// The steps that made the value, in step order, with their text.
    pub steps: Vec<CitedStep>,
    /// The same in words (`confirm held at no step 1..9`).
    pub reason: String,
}

/// One step cited by a [`PastCitation`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CitedStep {
    /// 1-based step number in the trace.
    pub step: usize,
    /// The step's text.
    pub text: String,
    /// What held or failed there (`confirm held`, `!deny failed`).
    pub what: String,
}

/// A side evaluator of a property's past-time subformulas that explains verdicts
/// ([`PastCitation`]); implemented by `trac_runtime::engine::past::PastCiter`, built from the property's
/// formula, and attached to monitors of properties with past-time operators only, so properties
/// without them pay nothing. Engines step it with the same inputs as the monitor.
pub trait PastWitness: Send + Sync + fmt::Debug {
    /// Reads one step (before [`PastWitness::cite`] at that step).
    fn step(&mut self, input: &StepInput<'_>);
    /// The citations of a verdict at the step just read (`input`, the same as the last
    /// [`PastWitness::step`]'s): the past-time subformulas whose value at that step decided
    /// the step's part of the property, and those a `Y` / `Z` among them reads.
    fn cite(&self, input: &StepInput<'_>) -> Vec<PastCitation>;
    /// Back to the state before the first step.
    fn reset(&mut self);
    /// A copy (state included) for the value `value` of the parametric variable `var`.
    fn instantiate(&self, var: &str, value: &str) -> Box<dyn PastWitness>;
    /// A copy, state included.
    fn clone_box(&self) -> Box<dyn PastWitness>;
}

impl Clone for Box<dyn PastWitness> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
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
    /// The LTLf verdict of the current run alone: the property judged on the steps since its
    /// last TRAC_R restart (a restart at step `t` starts the run at `t`, or at `t + 1` when it
    /// was decided again there), `X` read as weak next at the end; the whole trace if it never
    /// restarted. `None` when the current run has read no step (it starts at the next
    /// position), or when the engine cannot tell (a compiled table without per-state
    /// acceptance, after a restart). Exact while the verdict is pending (what the end of an
    /// LTLf audit asks); a decided run reads its verdict. O(|residual|) for progression, O(1)
    /// for tables.
    fn ltlf_since_restart(&self) -> Option<Verdict> {
        None
    }
    /// The past-time citations of the last verdict reached ([`PastCitation`]): why the
    /// property's past-time subformulas had their values at that step. Empty for properties
    /// without past-time operators (and for engines that do not track them).
    fn past_citations(&self) -> Vec<PastCitation> {
        Vec::new()
    }
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
