//! Trace slicing helpers shared by every engine (Chen & Roşu, "Parametric trace slicing and
//! monitoring", TACAS 2009): the [`Instantiate`] trait of monitors that can be copied for one
//! value of a quantified variable, and the [`conjunction`] of the verdicts of the values.

use crate::monitor::{Monitor, Verdict};

/// A monitor that can be copied, state included, for one value of a parametric variable.
pub trait Instantiate: Monitor + Clone {
    /// A copy of this monitor (state included) whose propositions `base(var)` become
    /// `base(value)`.
    fn instantiate(&self, var: &str, value: &str) -> Self;

    /// For a template: the LTL3 verdict of every value not seen yet (`seen(v)` tells whether
    /// `v` was seen). By default the template's own verdict; a compiled template with shadows
    /// (values written in the formula, see [`crate::table::TableMonitor::with_shadows`]) adds
    /// the verdicts of the shadows of values not seen yet.
    fn unseen_verdict(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        let _ = seen;
        self.verdict()
    }

    /// For a template: the LTLf verdict of every value not seen yet (see
    /// [`Instantiate::unseen_verdict`]).
    fn unseen_ltlf(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        let _ = seen;
        self.ltlf()
    }
}

/// The conjunction of LTL3 verdicts: ⊥ if one is ⊥, else ⊤ if all are ⊤ (also when there is
/// none), else ?.
pub fn conjunction(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    let mut out = Verdict::Satisfied;
    for v in verdicts {
        match v {
            Verdict::Violated => return Verdict::Violated,
            Verdict::Pending => out = Verdict::Pending,
            Verdict::Satisfied => {}
        }
    }
    out
}
