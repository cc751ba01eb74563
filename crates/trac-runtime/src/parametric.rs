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
//! The quantifier ranges over every value, seen in the trace or not: the template's verdict is
//! that of every value not seen yet. A verdict the template reached before a value appeared (e.g.
//! `forall x: take(x)` is violated at step 1 for every value not taken at step 1) holds for that
//! value too: it is reported, with its original step and witness, when the value first appears
//! ([`ParamVerdict::inherited`]). The template's own verdict at each step is
//! [`ParametricMonitor::template_reached`]: the audit reports a template violation at once, with
//! no value (every value not seen yet), so a violation is never silent when no value appears. The verdict of the whole property
//! ([`ParametricMonitor::verdict`], [`ParametricMonitor::ltlf`]) is the conjunction over the
//! instances **and the template**: `forall f: !bad(f) U done(f)` after `{done(a)}` is pending,
//! not satisfied (a value not seen yet may still go bad), and `forall f: G(write(f) -> O init)`
//! after `{init}` is satisfied although no value was seen. So a satisfied verdict of the whole
//! property is never taken back (LTL3); it is reported once reached
//! ([`ParametricMonitor::satisfied_now`]).
//! Cost per step: O(instances × |residual|).

use crate::labels::StepInput;
use crate::monitor::{Change, ProgressionMonitor, ResetPolicy, Verdict};
use std::collections::HashMap;
use trac_core::parametric::{new_values, parametric_bases};
use trac_spec::formula::{Arena, Formula};

pub use trac_core::parametric::{conjunction, Instantiate};

impl Instantiate for ProgressionMonitor {
    fn instantiate(&self, var: &str, value: &str) -> Self {
        ProgressionMonitor::instantiate(self, var, value)
    }
}

/// A verdict of one instance of a parametric property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamVerdict {
    /// The value of the quantified variable.
    pub value: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The step it was reached at (0: before the first step).
    pub step: usize,
    /// True if the template reached it before the value first appeared: it is reported when the
    /// value appears, with the template's witness in [`ParamVerdict::witness`].
    pub inherited: bool,
    /// For an inherited verdict, the template's witness (empty otherwise: ask the instance).
    pub witness: Vec<Change>,
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
    /// Verdicts the template reached: (step, verdict, witness), replayed for each new value.
    template_events: Vec<(usize, Verdict, Vec<Change>)>,
    /// The verdict of the whole property after the last step, and whether it became ⊤ there.
    whole: Verdict,
    satisfied_now: bool,
    satisfied_witness: Vec<Change>,
    /// The verdict the template (every value not seen yet) reached at the last step, if any.
    template_reached: Option<Verdict>,
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
        let atoms = arena.atoms(formula);
        let bases = parametric_bases(atoms.iter().map(|&s| arena.sym_name(s)), var);
        let template_events = template
            .initial()
            .map(|v| (0, v, Vec::new()))
            .into_iter()
            .collect();
        let whole = template.unseen_verdict(&|_| false);
        ParametricMonitor {
            var: var.to_string(),
            bases,
            template,
            instances: Vec::new(),
            index: HashMap::new(),
            template_events,
            whole,
            satisfied_now: false,
            satisfied_witness: Vec::new(),
            template_reached: None,
        }
    }

    /// The LTL3 verdict of the whole property `forall var: φ` on the trace read so far: the
    /// conjunction of the template's (every value not seen yet) and every instance's current
    /// verdict (after TRAC_R restarts: of the restarted runs).
    pub fn verdict(&self) -> Verdict {
        self.whole
    }

    fn compute_verdict(&self) -> Verdict {
        let index = &self.index;
        let unseen = self.template.unseen_verdict(&|v| index.contains_key(v));
        conjunction(std::iter::once(unseen).chain(self.instances.iter().map(|(_, m)| m.verdict())))
    }

    /// The LTLf verdict of the whole property on the trace read so far: ⊥ if the template's
    /// (every value not seen yet) or an instance's is ⊥, else ⊤.
    pub fn ltlf(&self) -> Verdict {
        let index = &self.index;
        let unseen = self.template.unseen_ltlf(&|v| index.contains_key(v));
        conjunction(std::iter::once(unseen).chain(self.instances.iter().map(|(_, m)| m.ltlf())))
    }

    /// Whether the whole property became satisfied (⊤, for every value, seen or not) at the
    /// last step read (at step 0: see [`ParametricMonitor::verdict`] before any step).
    pub fn satisfied_now(&self) -> bool {
        self.satisfied_now
    }

    /// The witness of the whole property's ⊤ reached at the last step: that of the monitor
    /// (template or instance) whose ⊤ completed it.
    pub fn satisfied_witness(&self) -> &[Change] {
        &self.satisfied_witness
    }

    /// The verdict the template (standing for every value not seen yet) reached at the last
    /// step read, if any. A ⊥ there is a violation of the property for every value not seen
    /// yet: the audit reports it once, with no value, and a value appearing later inherits it
    /// (see the module docs).
    pub fn template_reached(&self) -> Option<Verdict> {
        self.template_reached
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
    /// verdicts reached at this step, with their values, in instance order; a new value first
    /// gets the verdicts the template reached before it appeared (`inherited`).
    pub fn step(&mut self, input: &StepInput<'_>) -> Vec<ParamVerdict> {
        let mut fresh: Vec<String> = Vec::new();
        let index = &self.index;
        new_values(
            input.labels,
            &self.bases,
            |v| index.contains_key(v),
            &mut fresh,
        );
        fresh.sort();
        let mut out = Vec::new();
        for v in fresh {
            for (step, verdict, witness) in &self.template_events {
                out.push(ParamVerdict {
                    value: v.clone(),
                    verdict: *verdict,
                    step: *step,
                    inherited: true,
                    witness: witness.clone(),
                });
            }
            let m = self.template.instantiate(&self.var, &v);
            self.index.insert(v.clone(), self.instances.len());
            self.instances.push((v, m));
        }
        let mut completed: Option<&M> = None;
        self.template_reached = self.template.step(input);
        if let Some(v) = self.template_reached {
            self.template_events
                .push((input.step, v, self.template.witness().to_vec()));
            if v == Verdict::Satisfied {
                completed = Some(&self.template);
            }
        }
        for (v, m) in &mut self.instances {
            if let Some(verdict) = m.step(input) {
                out.push(ParamVerdict {
                    value: v.clone(),
                    verdict,
                    step: input.step,
                    inherited: false,
                    witness: Vec::new(),
                });
            }
        }
        let before = self.whole;
        self.whole = self.compute_verdict();
        self.satisfied_now = self.whole == Verdict::Satisfied && before != Verdict::Satisfied;
        if self.satisfied_now {
            let last = out
                .iter()
                .rev()
                .find(|e| e.verdict == Verdict::Satisfied && !e.inherited)
                .and_then(|e| self.instance(&e.value));
            let m = completed.or(last).unwrap_or(&self.template);
            self.satisfied_witness = m.witness().to_vec();
        }
        out
    }

    /// Back to the state before the first step, forgetting every instance.
    pub fn reset(&mut self) {
        self.template.reset();
        self.instances.clear();
        self.index.clear();
        self.template_events = self
            .template
            .initial()
            .map(|v| (0, v, Vec::new()))
            .into_iter()
            .collect();
        self.whole = self.compute_verdict();
        self.satisfied_now = false;
        self.satisfied_witness.clear();
        self.template_reached = None;
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
            for e in m.step(&input) {
                out.push((e.step, e.value, e.verdict));
            }
        }
        out
    }

    /// `forall var: f` by progression (complete or not): the events `(step, value, verdict)`,
    /// the steps where the whole property became satisfied, and the monitor.
    fn run_engine(
        f: &str,
        var: &str,
        complete: bool,
        policy: ResetPolicy,
        steps: &[&[&str]],
    ) -> (Vec<(usize, String, Verdict)>, Vec<usize>, ParametricMonitor) {
        let mut arena = Arena::new();
        let formula = trac_spec::parse(&mut arena, f).expect("test formula parses");
        let oracle = crate::monitor::tests::oracle(complete);
        let template = ProgressionMonitor::with_options(arena.clone(), formula, policy, oracle);
        let mut m = ParametricMonitor::with_template(&arena, formula, var, template);
        let (mut out, mut whole) = (Vec::new(), Vec::new());
        if m.verdict() == Verdict::Satisfied {
            whole.push(0);
        }
        for (i, labels) in steps.iter().enumerate() {
            let set: LabelSet = labels.iter().copied().collect();
            let input = StepInput {
                step: i + 1,
                text: "",
                labels: &set,
            };
            for e in m.step(&input) {
                out.push((e.step, e.value, e.verdict));
            }
            if m.satisfied_now() {
                whole.push(i + 1);
            }
        }
        (out, whole, m)
    }

    #[test]
    fn the_whole_verdict_covers_values_not_seen_yet() {
        let policy = ResetPolicy::default();
        let no_reset = ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        };
        let until = "!bad(f) U done(f)";
        for complete in [false, true] {
            // `a` is done, but a value not seen yet may still go bad: pending, not satisfied.
            let (events, whole, m) = run_engine(until, "f", complete, policy, &[&["done(a)"]]);
            assert_eq!(events, vec![(1, "a".to_string(), Verdict::Satisfied)]);
            assert!(whole.is_empty(), "{whole:?}");
            assert_eq!(m.verdict(), Verdict::Pending);
            assert_eq!(m.ltlf(), Verdict::Violated, "unseen values are never done");
            // ... as `b` does at the next step.
            let steps: &[&[&str]] = &[&["done(a)"], &["bad(b)"]];
            let (events, _, m) = run_engine(until, "f", complete, no_reset, steps);
            assert!(events.contains(&(2, "b".to_string(), Verdict::Violated)));
            assert_eq!(m.verdict(), Verdict::Violated);
        }
        // No value seen, yet every value is satisfied after `init` (complete verdicts only:
        // progression cannot fold `G(write(f) -> O init)`).
        let g = "G(write(f) -> O init)";
        let (events, whole, m) = run_engine(g, "f", true, policy, &[&["init"], &["write(x)"]]);
        assert_eq!(whole, vec![1], "reported once, when reached");
        assert_eq!(events, vec![(1, "x".to_string(), Verdict::Satisfied)]);
        assert_eq!(m.verdict(), Verdict::Satisfied);
        let (_, whole, m) = run_engine(g, "f", false, policy, &[&["init"]]);
        assert!(whole.is_empty());
        assert_eq!(m.verdict(), Verdict::Pending);
        // Satisfied before the first step: `forall x: G(p(x) -> p(x))`.
        let (_, whole, _) = run_engine("G(p(x) -> p(x))", "x", false, policy, &[&["p(a)"]]);
        assert_eq!(whole, vec![0]);
    }

    #[test]
    fn each_failing_position_counts_once_per_value() {
        // `forall f: G(Y ok(f))`: for `a`, positions 1 and 4 fail (issue 8 §1.1).
        let steps: &[&[&str]] = &[&["ok(a)"], &["ok(a)"], &[], &["ok(a)"]];
        for (complete, want) in [(false, vec![1, 4]), (true, vec![0, 3])] {
            let (events, _, _) =
                run_engine("G(Y ok(f))", "f", complete, ResetPolicy::default(), steps);
            let at: Vec<usize> = events
                .iter()
                .filter(|e| e.1 == "a" && e.2 == Verdict::Violated)
                .map(|e| e.0)
                .collect();
            assert_eq!(at, want, "complete: {complete}");
        }
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
    fn values_seen_late_inherit_the_template_verdicts() {
        // `forall x: X take(x)`: every value not taken at step 2 violates it at step 2; apple first
        // appears at step 3 and gets that violation, with its original step. TRAC_R restarted
        // the template at step 2 with the obligation `take(x)`, which apple meets at step 3.
        let got = run("X take(x)", "x", &[&[], &["take(knife)"], &["take(apple)"]]);
        assert_eq!(
            got,
            vec![
                (2, "knife".to_string(), Verdict::Satisfied),
                (2, "apple".to_string(), Verdict::Violated),
                (3, "apple".to_string(), Verdict::Satisfied)
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
