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
//!
//! Several variables (`forall tool, rid: φ`) and propositions with several parameters
//! (`forall p: G(load(p, a1) -> F unload(p, a1))`) are sliced per value tuple: see
//! [`ParametricMonitor`].

use crate::engine::monitor::{Change, ProgressionMonitor, ResetPolicy, Verdict};
use std::collections::{HashMap, HashSet};
use trac_core::labels::StepInput;
use trac_core::parametric::Slicing;
use trac_ltl::formula::{Arena, Formula};

pub use trac_core::parametric::{conjunction, Instantiate};

impl Instantiate for ProgressionMonitor {
    fn instantiate(&self, var: &str, value: &str) -> Self {
        ProgressionMonitor::instantiate(self, var, value)
    }
}

/// A verdict of one instance of a parametric property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamVerdict {
    /// The value of the quantified variable (for several variables, the value tuple joined
    /// by `, `, in the order of the `forall`).
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

/// One monitor of the slicing: a (partial) value tuple and its monitor.
#[derive(Clone, Debug)]
struct Node<M> {
    /// Per variable, its value, or `None`: every value of it not seen yet.
    key: Vec<Option<String>>,
    /// The key written as reports show it: the values joined by `, ` (`*` for none).
    value: String,
    monitor: M,
    /// For a node with a `None` in its key: the verdicts it reached (step, verdict, witness),
    /// replayed for the nodes made from it.
    events: Vec<(usize, Verdict, Vec<Change>)>,
}

impl<M> Node<M> {
    fn full(&self) -> bool {
        self.key.iter().all(Option::is_some)
    }

    fn key_value(key: &[Option<String>]) -> String {
        let parts: Vec<&str> = key.iter().map(|v| v.as_deref().unwrap_or("*")).collect();
        parts.join(", ")
    }
}

/// A monitor for a universally quantified property: one monitor (by default a
/// [`ProgressionMonitor`]) per value, or per value tuple for several variables.
///
/// # Several variables
/// `forall x1, ..., xn: φ` is sliced per value tuple. Values are per variable, from the labels
/// that match an atom of φ at that variable's argument ([`Slicing`]). The monitors are keyed
/// by *partial* tuples, each place a value seen or `*` (every value not seen yet): the
/// template is `(*, ..., *)`; when a value `v` first appears for `xk` at step t, every monitor
/// whose key has `*` at `k` gets a copy for `xk := v` (its state after step t − 1, with `xk`
/// replaced by `v`), reporting the verdicts that monitor reached before. So the tuples with
/// monitors are the **cross product** of the values seen per variable (with `*`): the
/// instances (every place a value) are reported with their values, `v1, v2`; the monitors
/// with a `*` stand for the tuples not seen yet, whose verdicts are reported with no value,
/// as the template's. This is exact: a partial tuple's monitor has read every step with the
/// atoms of its unseen values false, which they were. When every atom that mentions a
/// variable mentions all of them ([`Slicing::is_joint`], e.g. `load(p, a)` and
/// `unload(p, a)`), a tuple whose values never occurred together in one label has had all its
/// atoms false, exactly as the template: then only the tuples of the labels get instances
/// (copies of the template), and no partial monitor is kept. Memory: one monitor per tuple of
/// the cross product (product of the values seen per variable, plus one per variable), or
/// per tuple of the labels in the joint case.
#[derive(Clone, Debug)]
pub struct ParametricMonitor<M = ProgressionMonitor> {
    var: String,
    /// Boxed: read once per label, and it keeps the monitor small next to plain ones.
    slicing: Box<Slicing>,
    joint: bool,
    /// `nodes[0]` is the template; the others in the order they were made.
    nodes: Vec<Node<M>>,
    /// The full tuples (instances), by value.
    index: HashMap<String, usize>,
    /// Per variable, the values seen.
    seen: Vec<HashSet<String>>,
    /// Per variable, the values first seen at the current step (a buffer kept between steps).
    fresh: Vec<Vec<String>>,
    /// The verdict of the whole property after the last step, and whether it became ⊤ there.
    whole: Verdict,
    satisfied_now: bool,
    satisfied_witness: Vec<Change>,
    /// The verdict a monitor of the tuples not seen yet reached at the last step, if any, and
    /// which (⊥ first).
    template_reached: Option<(Verdict, usize)>,
}

impl ParametricMonitor {
    /// A monitor for `forall var: formula` (`var` a variable or a list `x, y`). The parametric
    /// propositions are the atoms of `formula` with a variable as an argument.
    pub fn new(arena: Arena, formula: Formula, var: &str, policy: ResetPolicy) -> Self {
        let template = ProgressionMonitor::new(arena.clone(), formula, policy);
        ParametricMonitor::with_template(&arena, formula, var, template)
    }
}

/// The atom names trace slicing reads in `formula`: its atoms, and the atoms of the bodies of
/// its `exists q: ψ` atoms, with `q` written `*` (any value): a label `load(p1, a1)` gives `a`
/// the value `a1` in `forall a: ... (exists p: O load(p, a)) ...`.
pub fn slicing_names(arena: &Arena, formula: Formula) -> Vec<String> {
    let mut out = Vec::new();
    for s in arena.atoms(formula) {
        let name = arena.sym_name(s);
        out.push(name.to_string());
        if let Some((q, body)) = trac_ltl::parser::split_exists(name) {
            let mut inner = Arena::new();
            if let Ok(b) = trac_ltl::parse(&mut inner, body) {
                let star = inner.instantiate(b, q, "*");
                out.extend(slicing_names(&inner, star));
            }
        }
    }
    out
}

impl<M: Instantiate> ParametricMonitor<M> {
    /// A monitor for `forall var: formula` whose instances are copies of `template`, a monitor of
    /// `formula` (with `var` free) of any engine. `var` is one variable or a list `x, y` (see
    /// the type's docs).
    pub fn with_template(arena: &Arena, formula: Formula, var: &str, template: M) -> Self {
        let names = slicing_names(arena, formula);
        let slicing = Slicing::new(names.iter().map(String::as_str), var);
        let n = slicing.vars().len();
        let events = template
            .initial()
            .map(|v| (0, v, Vec::new()))
            .into_iter()
            .collect();
        let whole = template.unseen_verdict(&|_| false);
        ParametricMonitor {
            var: var.to_string(),
            joint: n > 1 && slicing.is_joint(),
            slicing: Box::new(slicing),
            nodes: vec![Node {
                value: Node::<M>::key_value(&vec![None; n]),
                key: vec![None; n],
                monitor: template,
                events,
            }],
            index: HashMap::new(),
            seen: vec![HashSet::new(); n],
            fresh: Vec::new(),
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
        let seen = &self.seen[0];
        let unseen = self.nodes[0].monitor.unseen_verdict(&|v| seen.contains(v));
        conjunction(
            std::iter::once(unseen).chain(self.nodes[1..].iter().map(|n| n.monitor.verdict())),
        )
    }

    /// The LTLf verdict of the whole property on the trace read so far: ⊥ if the template's
    /// (every value not seen yet) or an instance's is ⊥, else ⊤.
    pub fn ltlf(&self) -> Verdict {
        let seen = &self.seen[0];
        let unseen = self.nodes[0].monitor.unseen_ltlf(&|v| seen.contains(v));
        conjunction(std::iter::once(unseen).chain(self.nodes[1..].iter().map(|n| n.monitor.ltlf())))
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
    /// step read, if any; with several variables, a monitor of the tuples not seen yet (a
    /// partial tuple, ⊥ first: see [`ParametricMonitor::template_reached_monitor`]). A ⊥
    /// there is a violation of the property for every value (tuple) not seen yet: the audit
    /// reports it once, with no value, and a value appearing later inherits it (see the
    /// module docs).
    pub fn template_reached(&self) -> Option<Verdict> {
        self.template_reached.map(|(v, _)| v)
    }

    /// The monitor whose verdict [`ParametricMonitor::template_reached`] gives: the template,
    /// or with several variables the monitor of a partial tuple (for its residual and witness).
    pub fn template_reached_monitor(&self) -> &M {
        let k = self.template_reached.map_or(0, |(_, k)| k);
        &self.nodes[k].monitor
    }

    /// The quantified variable (several: the list joined by `, `).
    pub fn var(&self) -> &str {
        &self.var
    }

    /// The quantified variables, in order.
    pub fn vars(&self) -> &[String] {
        self.slicing.vars()
    }

    /// The monitor standing for every value not seen yet.
    pub fn template(&self) -> &M {
        &self.nodes[0].monitor
    }

    /// Calls `f` on every monitor made so far (the template, partial tuples, instances): to
    /// set an option before the first step, which the monitors made later inherit (they are
    /// clones of these).
    pub fn for_each_monitor_mut(&mut self, mut f: impl FnMut(&mut M)) {
        for n in &mut self.nodes {
            f(&mut n.monitor);
        }
    }

    /// The monitors of the tuples not seen yet, with their partial tuples (`v1, *`: `*` for
    /// every value not seen yet), the template first. One variable: the template alone.
    pub fn unseen(&self) -> impl Iterator<Item = (&str, &M)> {
        self.nodes
            .iter()
            .filter(|n| !n.full())
            .map(|n| (n.value.as_str(), &n.monitor))
    }

    /// The instances (every variable given a value seen), in the order they were made, with
    /// their values (a tuple joined by `, `).
    pub fn instances(&self) -> impl Iterator<Item = (&str, &M)> {
        self.nodes
            .iter()
            .filter(|n| n.full())
            .map(|n| (n.value.as_str(), &n.monitor))
    }

    /// The instance for `value` (a tuple joined by `, ` for several variables), if seen.
    pub fn instance(&self, value: &str) -> Option<&M> {
        self.index.get(value).map(|&i| &self.nodes[i].monitor)
    }

    /// Verdict decided before the first step (the template's).
    pub fn initial(&self) -> Option<Verdict> {
        self.nodes[0].monitor.initial()
    }

    /// Makes node `key` from node `parent` (state after the last step), reporting into `out`
    /// the verdicts the parent reached before if the new node is an instance.
    fn make(&mut self, parent: usize, key: Vec<Option<String>>, out: &mut Vec<ParamVerdict>) {
        let p = &self.nodes[parent];
        let (mut vars, mut vals) = (Vec::new(), Vec::new());
        for (k, v) in key.iter().enumerate() {
            if let (Some(v), None) = (v, &p.key[k]) {
                vars.push(self.slicing.vars()[k].as_str());
                vals.push(v.as_str());
            }
        }
        let monitor = p.monitor.instantiate(&vars.join(", "), &vals.join(", "));
        let node = Node {
            value: Node::<M>::key_value(&key),
            key,
            monitor,
            events: Vec::new(),
        };
        if node.full() {
            let value = node.value.clone();
            for (step, verdict, witness) in &p.events {
                out.push(ParamVerdict {
                    value: value.clone(),
                    verdict: *verdict,
                    step: *step,
                    inherited: true,
                    witness: witness.clone(),
                });
            }
            self.index.insert(value, self.nodes.len());
            self.nodes.push(node);
        } else {
            let events = p.events.clone();
            self.nodes.push(Node { events, ..node });
        }
    }

    /// Reads one step: creates instances for new values, then steps every instance. Returns the
    /// verdicts reached at this step, with their values, in instance order; a new value first
    /// gets the verdicts the template reached before it appeared (`inherited`).
    pub fn step(&mut self, input: &StepInput<'_>) -> Vec<ParamVerdict> {
        let n = self.seen.len();
        let mut out = Vec::new();
        // New values per variable (and, joint, new tuples), sorted.
        // Reused between steps: no allocation on a step without new values.
        let mut fresh = std::mem::take(&mut self.fresh);
        fresh.resize(n, Vec::new());
        let mut tuples: Vec<Vec<String>> = Vec::new();
        for label in input.labels.iter() {
            self.slicing.bindings(label, |b| {
                for (k, v) in b.iter().enumerate() {
                    if let Some(v) = v {
                        if !self.seen[k].contains(*v) && !fresh[k].iter().any(|f| f == v) {
                            fresh[k].push(v.to_string());
                        }
                    }
                }
                if self.joint {
                    let t: Vec<String> = b.iter().map(|v| v.unwrap_or("").to_string()).collect();
                    if !self.index.contains_key(&t.join(", ")) && !tuples.contains(&t) {
                        tuples.push(t);
                    }
                }
            });
        }
        if self.joint {
            tuples.sort();
            for t in tuples {
                self.make(0, t.into_iter().map(Some).collect(), &mut out);
            }
        } else {
            for k in 0..n {
                fresh[k].sort();
                for v in fresh[k].clone() {
                    let parents: Vec<usize> = (0..self.nodes.len())
                        .filter(|&i| self.nodes[i].key[k].is_none())
                        .collect();
                    for i in parents {
                        let mut key = self.nodes[i].key.clone();
                        key[k] = Some(v.clone());
                        self.make(i, key, &mut out);
                    }
                }
            }
        }
        for (k, values) in fresh.iter_mut().enumerate() {
            self.seen[k].extend(values.drain(..));
        }
        self.fresh = fresh;
        let (mut completed, mut completed_instance): (Option<usize>, Option<usize>) = (None, None);
        self.template_reached = None;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            let Some(verdict) = node.monitor.step(input) else {
                continue;
            };
            if node.full() {
                out.push(ParamVerdict {
                    value: node.value.clone(),
                    verdict,
                    step: input.step,
                    inherited: false,
                    witness: Vec::new(),
                });
            } else {
                node.events
                    .push((input.step, verdict, node.monitor.witness().to_vec()));
                let better = match self.template_reached {
                    None => true,
                    Some((v, _)) => v != Verdict::Violated && verdict == Verdict::Violated,
                };
                if better {
                    self.template_reached = Some((verdict, i));
                }
            }
            // The witness of a whole ⊤: the template's (or a partial tuple's) if it reached
            // ⊤ here, else the last instance's.
            if verdict == Verdict::Satisfied {
                if node.full() {
                    completed_instance = Some(i);
                } else if completed.is_none() {
                    completed = Some(i);
                }
            }
        }
        let before = self.whole;
        self.whole = self.compute_verdict();
        self.satisfied_now = self.whole == Verdict::Satisfied && before != Verdict::Satisfied;
        if self.satisfied_now {
            let m = &self.nodes[completed.or(completed_instance).unwrap_or(0)].monitor;
            self.satisfied_witness = m.witness().to_vec();
        }
        out
    }

    /// Back to the state before the first step, forgetting every instance.
    pub fn reset(&mut self) {
        self.nodes.truncate(1);
        let t = &mut self.nodes[0];
        t.monitor.reset();
        t.events = t
            .monitor
            .initial()
            .map(|v| (0, v, Vec::new()))
            .into_iter()
            .collect();
        self.index.clear();
        for s in &mut self.seen {
            s.clear();
        }
        self.whole = self.compute_verdict();
        self.satisfied_now = false;
        self.satisfied_witness.clear();
        self.template_reached = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trac_core::labels::LabelSet;

    fn run(f: &str, var: &str, steps: &[&[&str]]) -> Vec<(usize, String, Verdict)> {
        let mut arena = Arena::new();
        let formula = trac_ltl::parse(&mut arena, f).expect("test formula parses");
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
        let formula = trac_ltl::parse(&mut arena, f).expect("test formula parses");
        let oracle = crate::engine::monitor::tests::oracle(complete);
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
