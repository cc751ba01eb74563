//! Parametric properties by trace slicing: one monitor instance per parameter value.
//!
//! A property `forall item: G(take(item) -> X examine(item))` is monitored, as JavaMOP does
//! (Chen & Roşu, "Parametric trace slicing and monitoring", TACAS 2009), by one instance per
//! value of `item` seen in the trace. A *template* instance runs from the first step with the
//! variable standing for "a value not seen yet" (all its parametric atoms false); when a value
//! `v` first appears in a label `take(v)` (or any parametric proposition of the property) at step
//! `t`, the instance for `v` starts as a copy of the template's state after step `t - 1`, with the
//! variable replaced by `v`. Every instance then reads every step, so each one behaves exactly as
//! a monitor of the instantiated formula that ran from the first step.
//!
//! The quantifier ranges over the values seen in the trace; the template itself is never reported.
//! Cost per step: O(instances × |residual|).

use crate::labels::StepInput;
use crate::monitor::{Monitor, ProgressionMonitor, ResetPolicy, Verdict};
use std::collections::HashMap;
use trac_spec::formula::{Arena, AtomName, Formula};

/// A monitor that can be copied, state included, for one value of a parametric variable.
pub trait Instantiate: Monitor + Clone {
    /// A copy of this monitor (state included) whose propositions `base(var)` become
    /// `base(value)`.
    fn instantiate(&self, var: &str, value: &str) -> Self;
}

impl Instantiate for ProgressionMonitor {
    fn instantiate(&self, var: &str, value: &str) -> Self {
        ProgressionMonitor::instantiate(self, var, value)
    }
}

/// A monitor for a universally quantified property: one monitor (by default a
/// [`ProgressionMonitor`]) per value.
#[derive(Clone, Debug)]
pub struct ParametricMonitor<M = ProgressionMonitor> {
    var: String,
    bases: Vec<String>,
    template: M,
    instances: Vec<(String, M)>,
    index: HashMap<String, usize>,
}

impl ParametricMonitor {
    /// A monitor for `forall var: formula`. The parametric propositions are the atoms
    /// `base(var)` of `formula`.
    pub fn new(arena: Arena, formula: Formula, var: &str, policy: ResetPolicy) -> Self {
        let template = ProgressionMonitor::new(arena.clone(), formula, policy);
        ParametricMonitor::with_template(&arena, formula, var, template)
    }
}

impl<M: Instantiate> ParametricMonitor<M> {
    /// A monitor for `forall var: formula` whose instances are copies of `template`, a monitor of
    /// `formula` (with `var` free) of any engine.
    pub fn with_template(arena: &Arena, formula: Formula, var: &str, template: M) -> Self {
        let mut bases: Vec<String> = arena
            .atoms(formula)
            .into_iter()
            .map(|s| arena.sym_parts(s).clone())
            .filter(|p| p.arg.as_deref() == Some(var))
            .map(|p| p.base)
            .collect();
        bases.sort();
        bases.dedup();
        ParametricMonitor {
            var: var.to_string(),
            bases,
            template,
            instances: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// The quantified variable.
    pub fn var(&self) -> &str {
        &self.var
    }

    /// The monitor standing for every value not seen yet.
    pub fn template(&self) -> &M {
        &self.template
    }

    /// The instances, in the order their values first appeared.
    pub fn instances(&self) -> impl Iterator<Item = (&str, &M)> {
        self.instances.iter().map(|(v, m)| (v.as_str(), m))
    }

    /// The instance for `value`, if that value was seen.
    pub fn instance(&self, value: &str) -> Option<&M> {
        self.index.get(value).map(|&i| &self.instances[i].1)
    }

    /// Verdict decided before the first step (the template's).
    pub fn initial(&self) -> Option<Verdict> {
        self.template.initial()
    }

    /// Reads one step: creates instances for new values, then steps every instance. Returns the
    /// verdicts reached at this step, with their values, in instance order.
    pub fn step(&mut self, input: &StepInput<'_>) -> Vec<(String, Verdict)> {
        let mut fresh: Vec<String> = Vec::new();
        for label in input.labels.iter() {
            let parts = AtomName::parse(label);
            if let Some(arg) = parts.arg {
                if self.bases.contains(&parts.base) && !self.index.contains_key(&arg) {
                    fresh.push(arg);
                }
            }
        }
        fresh.sort();
        fresh.dedup();
        for v in fresh {
            let m = self.template.instantiate(&self.var, &v);
            self.index.insert(v.clone(), self.instances.len());
            self.instances.push((v, m));
        }
        self.template.step(input);
        let mut out = Vec::new();
        for (v, m) in &mut self.instances {
            if let Some(verdict) = m.step(input) {
                out.push((v.clone(), verdict));
            }
        }
        out
    }

    /// Back to the state before the first step, forgetting every instance.
    pub fn reset(&mut self) {
        self.template.reset();
        self.instances.clear();
        self.index.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::LabelSet;

    fn run(f: &str, var: &str, steps: &[&[&str]]) -> Vec<(usize, String, Verdict)> {
        let mut arena = Arena::new();
        let formula = trac_spec::parse(&mut arena, f).expect("test formula parses");
        let mut m = ParametricMonitor::new(arena, formula, var, ResetPolicy::default());
        let mut out = Vec::new();
        for (i, labels) in steps.iter().enumerate() {
            let set: LabelSet = labels.iter().copied().collect();
            let input = StepInput {
                step: i + 1,
                text: "",
                labels: &set,
            };
            for (v, verdict) in m.step(&input) {
                out.push((i + 1, v, verdict));
            }
        }
        out
    }

    #[test]
    fn one_instance_per_value_and_violations_name_the_value() {
        let got = run(
            "G(take(item) -> X examine(item))",
            "item",
            &[
                &["take(a)"],
                &["examine(a)", "take(b)"],
                &["examine(a)"],
                &[],
            ],
        );
        assert_eq!(got, vec![(3, "b".to_string(), Verdict::Violated)]);
    }

    #[test]
    fn instances_started_late_inherit_the_template_history() {
        // "loaded at most once": the past operator must see the load of p2 at step 2 only, and
        // values first seen at step 3 start with a clean history.
        let got = run(
            "G(load(p) -> !Y O load(p))",
            "p",
            &[
                &["load(p1)"],
                &["load(p2)"],
                &["load(p3)", "load(p1)"],
                &["load(p2)"],
            ],
        );
        assert_eq!(
            got,
            vec![
                (3, "p1".to_string(), Verdict::Violated),
                (4, "p2".to_string(), Verdict::Violated)
            ]
        );
    }

    #[test]
    fn literal_values_and_variables_mix() {
        // Knife must never be taken after the value was dropped; a literal atom beside the variable.
        let got = run(
            "G(drop(x) -> X G !take(x)) & G !take(spoon)",
            "x",
            &[
                &["drop(knife)"],
                &["take(fork)"],
                &["take(knife)"],
                &["take(spoon)"],
            ],
        );
        assert!(
            got.contains(&(3, "knife".to_string(), Verdict::Violated)),
            "{got:?}"
        );
        // fork is a value too (seen in `take(fork)`), never dropped: only the literal conjunct
        // can fail for it.
        assert!(
            !got.contains(&(2, "fork".to_string(), Verdict::Violated)),
            "{got:?}"
        );
        // The literal conjunct is violated in every instance that exists at step 4.
        assert!(
            got.contains(&(4, "knife".to_string(), Verdict::Violated)),
            "{got:?}"
        );
        assert!(
            got.contains(&(4, "fork".to_string(), Verdict::Violated)),
            "{got:?}"
        );
        assert_eq!(got.len(), 4, "{got:?}");
    }
}
