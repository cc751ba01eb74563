//! Trace slicing helpers shared by every engine (Chen & Roşu, "Parametric trace slicing and
//! monitoring", TACAS 2009): the [`Instantiate`] trait of monitors that can be copied for one
//! value of a quantified variable, and the [`conjunction`] of the verdicts of the values.

use crate::labels::LabelSet;
use crate::monitor::{Monitor, Verdict};
use crate::names::{split_atom_name, AtomName};

/// The base names `p` of the parametric propositions `p(var)` among `prop_names` (atom names
/// such as `take(x)`), sorted and without duplicates: the labels `p(v)` make `v` a value of
/// `var` (trace slicing). O(n log n) in the number of names.
pub fn parametric_bases<'a>(
    prop_names: impl IntoIterator<Item = &'a str>,
    var: &str,
) -> Vec<String> {
    let mut bases: Vec<String> = prop_names
        .into_iter()
        .map(AtomName::parse)
        .filter(|p| p.arg.as_deref() == Some(var))
        .map(|p| p.base)
        .collect();
    bases.sort();
    bases.dedup();
    bases
}

/// Pushes onto `fresh` every value `v` of a label `p(v)` of `labels` whose base `p` is in
/// `bases` ([`parametric_bases`]), not `seen` yet and not in `fresh` already: the values that
/// first appear at this step. Allocates only for such values. O(labels × (bases + fresh)).
pub fn new_values(
    labels: &LabelSet,
    bases: &[String],
    seen: impl Fn(&str) -> bool,
    fresh: &mut Vec<String>,
) {
    for label in labels.iter() {
        // `base(value)` without allocating: this runs for every label at every step.
        let Some((base, arg)) = split_atom_name(label) else {
            continue;
        };
        if bases.iter().any(|b| b == base) && !seen(arg) && !fresh.iter().any(|f| f == arg) {
            fresh.push(arg.to_string());
        }
    }
}

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
