//! Monitors: the [`Monitor`] trait, LTL3 [`Verdict`]s, and the progression monitor
//! ([`ProgressionMonitor`]) implementing TRAC and TRAC_R.
//!
//! # TRAC and TRAC_R
//! TRAC (Alamdari, Klassen & McIlraith, arXiv 2605.16198, §4) progresses a property's formula
//! through the trace and reports a verdict when the residual formula becomes `true` (⊤) or `false`
//! (⊥). TRAC_R (§4.2) restarts the property after a verdict to count violations. Here a restart
//! after a violation at step `t` restarts the property from its original formula **at step `t`
//! itself** (`residual = prg(φ, σ_t)`), so obligations created at step `t` are kept; the paper's
//! code restarts at `t + 1` and loses them. At most one verdict is reported per step: if the
//! restarted formula is violated again at `t`, the next step starts afresh from `φ`. A satisfied
//! property stays satisfied unless [`ResetPolicy::on_satisfaction`] is set. History kept for
//! past-time subformulas is never reset: a restart checks `φ` at position `t` of the same trace.
//!
//! **Each failing position counts once, whichever step first knows it.** With complete
//! verdicts, the run of `φ` from position `t + 1` can be decided at step `t`, from the history
//! alone (`G(Y a)` after `{a},{a},{}`: position 4 fails); at step 0 for position 1 (`Y a`).
//! Such a verdict is reported at step `t` (step 0: [`Monitor::initial`]) or, when step `t`
//! already has one, merged into it. The monitor then rests in the decided state; when that
//! verdict restarts the property, the next step does not read that run again (which would count
//! the same failure twice) but starts the run from position `t + 2`, whose verdict, if already
//! known, is that step's. So `Y a` on `{a}` has 1 violation (step 0), `G(Y a)` on
//! `{a},{a},{},{a}` 2 (steps 0 and 3; plain progression: 1 and 4).

use crate::engine::past::PastCiter;
use trac_core::labels::StepInput;
pub use trac_core::monitor::{
    Change, CitedStep, Monitor, PastCitation, ResetPolicy, Verdict, MAX_EXPLANATION,
};
use trac_ltl::compiler::{VerdictOracle, VerdictSession};
use trac_ltl::formula::{Arena, Formula, Sym};
use trac_ltl::progress::{eval_empty, eval_last, progress, PastState, ResidualVerdict};
use trac_spec::spec::Semantics;

/// A progression monitor (TRAC / TRAC_R) for one formula, owning its arena.
///
/// Memory: the arena grows with the distinct residuals met (bounded by the progression closure of
/// the formula); cost per step O(|residual|) plus one label lookup per atomic proposition.
#[derive(Clone, Debug)]
pub struct ProgressionMonitor {
    arena: Arena,
    original: Formula,
    residual: Formula,
    past: PastState,
    atoms: Vec<(Sym, String)>,
    policy: ResetPolicy,
    verdict: Verdict,
    steps: usize,
    /// Before any restart: the residual before the last step, for the LTLf verdict.
    prev_unreset: Formula,
    /// The atoms that held at the last step.
    last_true: Vec<Sym>,
    /// The current run's residual before the last step it read; `None` when it read no step
    /// (it starts at the next position): for [`Monitor::ltlf_since_restart`].
    run_prev: Option<Formula>,
    /// First verdict (step, verdict) in the run without restarts.
    first_decision: Option<(usize, Verdict)>,
    explanation: Vec<Change>,
    dropped: usize,
    witness: Vec<Change>,
    /// The complete mode's state, when on.
    complete: Option<Box<Complete>>,
    /// The side evaluator citing past-time steps, for formulas with past operators.
    citer: Option<PastCiter>,
    /// The past-time citations of the last verdict.
    past_cited: Vec<PastCitation>,
}

/// The state of the complete mode of a [`ProgressionMonitor`].
#[derive(Clone, Debug)]
struct Complete {
    semantics: Semantics,
    sat: Box<dyn VerdictSession>,
    /// The complete verdict before the first step.
    initial: Verdict,
    /// LTLf: whether the current run (restarts included) accepts the trace read so far.
    acc: bool,
    /// The run without restarts, for the LTLf verdict of the whole trace: its residual and
    /// whether it accepts the trace read so far.
    unreset: Formula,
    unreset_acc: bool,
}

impl ProgressionMonitor {
    /// A monitor for `formula` (an arena handle; the arena is moved in). `formula` should pass
    /// [`trac_ltl::progress::validate`].
    pub fn new(arena: Arena, formula: Formula, policy: ResetPolicy) -> ProgressionMonitor {
        let past = PastState::new(&arena, formula);
        let atoms = arena
            .atoms(formula)
            .into_iter()
            .map(|s| (s, arena.sym_name(s).to_string()))
            .collect();
        ProgressionMonitor {
            original: formula,
            residual: formula,
            past,
            atoms,
            policy,
            verdict: Verdict::of_residual(formula),
            steps: 0,
            prev_unreset: formula,
            last_true: Vec::new(),
            run_prev: None,
            first_decision: None,
            explanation: Vec::new(),
            dropped: 0,
            witness: Vec::new(),
            complete: None,
            citer: PastCiter::new(&arena, formula),
            past_cited: Vec::new(),
            arena,
        }
    }

    /// A monitor for `formula`; with a `complete` oracle, LTL3 verdicts are complete: a state is
    /// violated as soon as no infinite continuation satisfies the residual (with its past-time
    /// bits) and satisfied as soon as every one does, decided lazily by the oracle
    /// (`trac_compile::SatOracle`, memoized per residual and past bits). Without one, the same
    /// as [`ProgressionMonitor::new`].
    pub fn with_options(
        arena: Arena,
        formula: Formula,
        policy: ResetPolicy,
        complete: Option<&dyn VerdictOracle>,
    ) -> ProgressionMonitor {
        ProgressionMonitor::with_semantics(arena, formula, policy, complete, Semantics::Ltl3)
    }

    /// Like [`ProgressionMonitor::with_options`], with the semantics of the complete verdicts:
    /// for [`Semantics::Ltlf`], violated as soon as neither the trace read so far nor any finite
    /// extension satisfies the property (`X` weak at the end), satisfied as soon as the trace
    /// and every finite extension do. `semantics` is ignored without `complete`.
    pub fn with_semantics(
        mut arena: Arena,
        formula: Formula,
        policy: ResetPolicy,
        complete: Option<&dyn VerdictOracle>,
        semantics: Semantics,
    ) -> ProgressionMonitor {
        let Some(oracle) = complete else {
            return ProgressionMonitor::new(arena, formula, policy);
        };
        let mut sat = oracle.session(&arena, formula);
        let acc = eval_empty(&arena, formula);
        let bits = sat.initial_bits();
        let initial = judge(&mut arena, sat.as_mut(), semantics, formula, &bits, acc);
        let mut m = ProgressionMonitor::new(arena, formula, policy);
        m.verdict = initial;
        m.complete = Some(Box::new(Complete {
            semantics,
            sat,
            initial,
            acc,
            unreset: formula,
            unreset_acc: acc,
        }));
        m
    }

    /// Whether verdicts are complete (see [`ProgressionMonitor::with_options`]).
    pub fn is_complete(&self) -> bool {
        self.complete.is_some()
    }

    /// The verdict of a residual reached after a step: syntactic, or complete.
    fn judge_now(&mut self, f: Formula, acc: bool) -> Verdict {
        match &mut self.complete {
            None => Verdict::of_residual(f),
            Some(c) => judge(
                &mut self.arena,
                c.sat.as_mut(),
                c.semantics,
                f,
                self.past.bits(),
                acc,
            ),
        }
    }

    /// The arena holding the formulas of this monitor.
    pub fn arena(&self) -> &Arena {
        &self.arena
    }

    /// The original formula.
    pub fn formula(&self) -> Formula {
        self.original
    }

    /// The side evaluator citing past-time steps ([`PastCiter`]), for formulas with past
    /// operators.
    pub fn citer(&self) -> Option<&PastCiter> {
        self.citer.as_ref()
    }

    /// The current residual formula's handle.
    pub fn residual_formula(&self) -> Formula {
        self.residual
    }

    /// How many explanation entries were dropped because of [`MAX_EXPLANATION`].
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// A copy of this monitor (state included) whose formulas have `var` replaced by `value`
    /// (trace slicing for parametric properties; see [`crate::engine::parametric`]).
    pub fn instantiate(&self, var: &str, value: &str) -> ProgressionMonitor {
        let mut m = self.clone();
        let a = &mut m.arena;
        m.original = a.instantiate(self.original, var, value);
        m.residual = a.instantiate(self.residual, var, value);
        m.prev_unreset = a.instantiate(self.prev_unreset, var, value);
        m.run_prev = self.run_prev.map(|f| a.instantiate(f, var, value));
        let mut past = PastState::new(a, m.original);
        let mut bits = vec![false; past.nodes().len()];
        for (i, &node) in self.past.nodes().iter().enumerate() {
            let inst = a.instantiate(node, var, value);
            if let Some(j) = past.nodes().iter().position(|&g| g == inst) {
                bits[j] = self.past.bits()[i];
            }
        }
        past.set_bits(&bits);
        m.past = past;
        if let Some(c) = &mut m.complete {
            c.unreset = a.instantiate(c.unreset, var, value);
            c.sat = c.sat.fresh(a, m.original);
            // Instantiation can decide what the template could not (when `base(value)` is
            // also a constant proposition of the formula, e.g. `go(x) -> go(hall)` for `hall`):
            // the instance's own initial verdict. A residual decided by instantiation keeps the
            // template's pending verdict, so the decision is reported at the instance's first
            // step (when the value appears).
            let acc0 = eval_empty(a, m.original);
            let bits0 = c.sat.initial_bits();
            c.initial = judge(a, c.sat.as_mut(), c.semantics, m.original, &bits0, acc0);
        }
        m.citer = self.citer.as_ref().map(|c| c.instantiate_citer(var, value));
        m.atoms = a
            .atoms(m.original)
            .into_iter()
            .map(|s| (s, a.sym_name(s).to_string()))
            .collect();
        m.last_true = m
            .atoms
            .iter()
            .filter(|(_, n)| {
                self.last_true.iter().any(|&s| {
                    trac_ltl::formula::instantiate_name(self.arena.sym_name(s), var, value) == *n
                })
            })
            .map(|(s, _)| *s)
            .collect();
        m
    }

    /// A plain TRAC monitor (no reset, not complete) of the original formula that starts at
    /// the next position, with this monitor's history of past-time subformulas: the run of
    /// the formula from the next step on (for the cross-check engine's plain progression).
    pub(crate) fn plain_run_from_here(&self) -> ProgressionMonitor {
        let mut m = self.clone();
        m.complete = None;
        m.policy = ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        };
        m.fresh_run_state();
        m
    }

    /// The state of a monitor that has read no step, its buffers kept: residual and verdict
    /// of the original formula, no step, no witness, no citation. The past-time state, the
    /// citer and the complete mode's state are the callers' ([`Monitor::reset`] resets them;
    /// [`ProgressionMonitor::plain_run_from_here`] keeps the past).
    fn fresh_run_state(&mut self) {
        self.residual = self.original;
        self.verdict = Verdict::of_residual(self.original);
        self.steps = 0;
        self.prev_unreset = self.original;
        self.last_true.clear();
        self.run_prev = None;
        self.first_decision = None;
        self.explanation.clear();
        self.dropped = 0;
        self.witness.clear();
        self.past_cited.clear();
    }

    fn record_step(&mut self, input: &StepInput<'_>, true_syms: &[Sym], after: Formula) {
        let held = true_syms
            .iter()
            .map(|&s| self.arena.sym_name(s).to_string())
            .collect();
        let residual = trac_ltl::print(&self.arena, after);
        self.record(Change {
            step: input.step,
            text: input.text.to_string(),
            held,
            residual,
        });
    }

    /// Records the past-time citations of a verdict at the step just read.
    fn cite_past(&mut self, input: &StepInput<'_>) {
        if let Some(c) = &self.citer {
            self.past_cited = c.citations(input);
        }
    }

    fn record(&mut self, change: Change) {
        if self.explanation.len() == MAX_EXPLANATION {
            self.explanation.remove(0);
            self.dropped += 1;
        }
        self.explanation.push(change);
    }
}

/// The complete verdict of the state (`f`, `bits`), `acc` telling (LTLf) whether the trace read
/// so far is accepted.
fn judge(
    arena: &mut Arena,
    sat: &mut dyn VerdictSession,
    semantics: Semantics,
    f: Formula,
    bits: &[bool],
    acc: bool,
) -> Verdict {
    let v = match semantics {
        Semantics::Ltl3 => sat.ltl3(arena, f, bits),
        Semantics::Ltlf => sat.ltlf(arena, f, bits, acc),
    };
    match v {
        Some(b) => Verdict::of_bool(b),
        None => Verdict::Pending,
    }
}

impl Monitor for ProgressionMonitor {
    fn initial(&self) -> Option<Verdict> {
        let v = match &self.complete {
            Some(c) => c.initial,
            None => Verdict::of_residual(self.original),
        };
        match v {
            Verdict::Pending => None,
            v => Some(v),
        }
    }

    fn step(&mut self, input: &StepInput<'_>) -> Option<Verdict> {
        self.steps += 1;
        let true_syms: Vec<Sym> = self
            .atoms
            .iter()
            .filter(|(_, name)| input.labels.contains(name))
            .map(|(s, _)| *s)
            .collect();
        let v = |s: Sym| true_syms.contains(&s);
        self.past.step(&self.arena, &v);
        if let Some(c) = &mut self.citer {
            c.read(input);
        }
        let before = self.residual;
        if self.first_decision.is_none() {
            self.prev_unreset = before;
        }
        self.last_true.clone_from(&true_syms);
        let mut acc = false;
        if let Some(c) = &mut self.complete {
            c.unreset_acc = eval_last(&self.arena, c.unreset, &v, &self.past);
            c.unreset = progress(&mut self.arena, c.unreset, &v, &self.past);
            acc = eval_last(&self.arena, before, &v, &self.past);
        }
        if self.restarts(self.verdict) {
            // Each failing position counts once: the run from this position was decided before
            // its position (at step 0, or merged into the previous step's verdict); do not read
            // it again, start the next run after this step (see the module docs).
            return self.skip_decided_run(input, &true_syms);
        }
        let mut after = progress(&mut self.arena, before, &v, &self.past);
        self.run_prev = Some(before);
        let reached = self.judge_now(after, acc);
        if self.complete.is_some() && reached != Verdict::Pending {
            // A complete verdict is final for this run: show it as the residual.
            after = self.arena.constant(reached == Verdict::Satisfied);
        }
        let mut event = None;
        if before != after || reached != Verdict::Pending {
            self.record_step(input, &true_syms, after);
        }
        // A verdict is an event only when it is reached (not when a sticky verdict persists).
        let fresh = reached != Verdict::Pending
            && (self.verdict == Verdict::Pending || self.restarts(reached));
        if fresh {
            event = Some(reached);
            self.witness.clone_from(&self.explanation);
            self.cite_past(input);
            if self.first_decision.is_none() {
                self.first_decision = Some((input.step, reached));
            }
        }
        if reached != Verdict::Pending && self.restarts(reached) {
            // Restart at this very step: keep the obligations the step creates.
            let restarted = progress(&mut self.arena, self.original, &v, &self.past);
            let racc =
                self.complete.is_some() && eval_last(&self.arena, self.original, &v, &self.past);
            let pending = self.judge_now(restarted, racc) == Verdict::Pending;
            if pending {
                after = restarted;
                acc = racc;
                self.verdict = Verdict::Pending;
                // The new run starts at this step.
                self.run_prev = Some(self.original);
            } else {
                // The new run starts at the next position.
                self.run_prev = None;
                // Decided again at the same step: at most one verdict per step, start afresh
                // at the next position. If that run is decided already, it is the same failure,
                // known at this same step: merged (the next step skips it).
                after = self.original;
                acc = self.complete.is_some() && eval_empty(&self.arena, self.original);
                self.verdict = self.judge_now(after, acc);
                if self.verdict != Verdict::Pending {
                    after = self.arena.constant(self.verdict == Verdict::Satisfied);
                }
            }
            // The next explanation starts with this step if it created obligations.
            self.explanation.clear();
            self.dropped = 0;
            if pending && after != self.original {
                self.record_step(input, &true_syms, after);
            }
        } else {
            self.verdict = reached;
            if after == self.original && reached == Verdict::Pending {
                // Back to the start: earlier steps no longer explain anything.
                self.explanation.clear();
                self.dropped = 0;
            }
        }
        if let Some(c) = &mut self.complete {
            c.acc = acc;
        }
        self.residual = after;
        event
    }

    fn verdict(&self) -> Verdict {
        self.verdict
    }

    fn residual(&self) -> String {
        trac_ltl::print(&self.arena, self.residual)
    }

    fn explanation(&self) -> &[Change] {
        &self.explanation
    }

    fn witness(&self) -> &[Change] {
        &self.witness
    }

    fn ltlf(&self) -> Verdict {
        if self.steps == 0 {
            return Verdict::of_bool(eval_empty(&self.arena, self.original));
        }
        if let Some(c) = &self.complete {
            return Verdict::of_bool(c.unreset_acc);
        }
        match self.first_decision {
            // Decided before the last step: the remaining non-empty suffix must satisfy the
            // residual `true`/`false`, whatever the semantics.
            Some((t, v)) if t < self.steps => v,
            _ => {
                let last = &self.last_true;
                let v = |s: Sym| last.contains(&s);
                Verdict::of_bool(eval_last(&self.arena, self.prev_unreset, &v, &self.past))
            }
        }
    }

    fn past_citations(&self) -> Vec<PastCitation> {
        self.past_cited.clone()
    }

    fn ltlf_since_restart(&self) -> Option<Verdict> {
        let prev = self.run_prev?;
        let last = &self.last_true;
        let v = |s: Sym| last.contains(&s);
        Some(Verdict::of_bool(eval_last(
            &self.arena,
            prev,
            &v,
            &self.past,
        )))
    }

    fn reset(&mut self) {
        self.fresh_run_state();
        self.past.reset(&self.arena);
        if let Some(c) = &mut self.citer {
            c.reset_state();
        }
        if let Some(c) = &mut self.complete {
            self.verdict = c.initial;
            c.acc = eval_empty(&self.arena, self.original);
            c.unreset = self.original;
            c.unreset_acc = c.acc;
        }
    }
}

impl ProgressionMonitor {
    /// A step that skips the current run, decided before its position (see
    /// [`Monitor::step`]): the next run starts from the original formula at the next position;
    /// its verdict, if already known at this step, is this step's.
    fn skip_decided_run(&mut self, input: &StepInput<'_>, true_syms: &[Sym]) -> Option<Verdict> {
        let acc = self.complete.is_some() && eval_empty(&self.arena, self.original);
        let reached = self.judge_now(self.original, acc);
        self.explanation.clear();
        self.dropped = 0;
        self.run_prev = None;
        let mut event = None;
        self.residual = self.original;
        if reached != Verdict::Pending {
            event = Some(reached);
            self.residual = self.arena.constant(reached == Verdict::Satisfied);
            self.record_step(input, true_syms, self.residual);
            self.witness.clone_from(&self.explanation);
            self.cite_past(input);
            if self.first_decision.is_none() {
                self.first_decision = Some((input.step, reached));
            }
            if self.restarts(reached) {
                self.explanation.clear();
            }
        }
        self.verdict = reached;
        if let Some(c) = &mut self.complete {
            c.acc = acc;
        }
        event
    }

    fn restarts(&self, v: Verdict) -> bool {
        match v {
            Verdict::Violated => self.policy.on_violation,
            Verdict::Satisfied => self.policy.on_satisfaction,
            Verdict::Pending => false,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The satisfiability checker of `trac-compile` when `complete`.
    pub(crate) fn oracle(complete: bool) -> Option<&'static dyn VerdictOracle> {
        complete.then_some(&trac_compile::SatOracle as &dyn VerdictOracle)
    }
    use trac_core::labels::LabelSet;

    fn look_monitor(policy: ResetPolicy) -> ProgressionMonitor {
        let mut a = Arena::new();
        let look = a.atom("look");
        let nl = a.not(look);
        let xnl = a.next(nl);
        let imp = a.implies(look, xnl);
        let g = a.globally(imp);
        ProgressionMonitor::new(a, g, policy)
    }

    fn run(m: &mut ProgressionMonitor, steps: &[&[&str]]) -> Vec<(usize, Verdict)> {
        let mut out = Vec::new();
        for (i, labels) in steps.iter().enumerate() {
            let set: LabelSet = labels.iter().copied().collect();
            let input = StepInput {
                step: i + 1,
                text: "",
                labels: &set,
            };
            if let Some(v) = m.step(&input) {
                out.push((i + 1, v));
            }
        }
        out
    }

    #[test]
    fn trac_r_restarts_at_the_violating_step() {
        let mut m = look_monitor(ResetPolicy::default());
        let five = [&["look"][..]; 5];
        let got = run(&mut m, &five);
        let v = Verdict::Violated;
        assert_eq!(got, vec![(2, v), (3, v), (4, v), (5, v)]);
        // The witness of the last violation: look at 4 created the obligation, look at 5 broke it.
        let w: Vec<usize> = m.witness().iter().map(|c| c.step).collect();
        assert_eq!(w, vec![4, 5]);
        assert_eq!(m.witness().last().unwrap().residual, "false");
    }

    #[test]
    fn trac_without_reset_reports_once_and_stays_violated() {
        let mut m = look_monitor(ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        });
        let five = [&["look"][..]; 5];
        assert_eq!(run(&mut m, &five), vec![(2, Verdict::Violated)]);
        assert_eq!(m.verdict(), Verdict::Violated);
        assert_eq!(m.ltlf(), Verdict::Violated);
    }

    #[test]
    fn ltlf_reads_weak_next_at_the_end() {
        let mut m = look_monitor(ResetPolicy::default());
        run(&mut m, &[&[], &["look"]]);
        assert_eq!(m.verdict(), Verdict::Pending);
        assert_eq!(m.ltlf(), Verdict::Satisfied);
        let mut a = Arena::new();
        let p = a.atom("p");
        let f = a.finally(p);
        let mut m = ProgressionMonitor::new(a, f, ResetPolicy::default());
        run(&mut m, &[&[], &[]]);
        assert_eq!(m.ltlf(), Verdict::Violated);
        run(&mut m, &[&["p"]]);
        assert_eq!(m.ltlf(), Verdict::Satisfied);
        assert_eq!(m.verdict(), Verdict::Satisfied);
    }

    /// Issue 8 §1.1: `(formula, trace, violations)`, each failing position counted once.
    pub(crate) const PAST_FAILURES: [(&str, &[&[&str]], usize); 3] = [
        ("Y a", &[&["a"]], 1),
        ("G(Y a)", &[&["a"], &["a"], &[], &["a"]], 2),
        (
            "G(Y true -> Y valid)",
            &[&["valid"], &[], &["valid"], &["valid"]],
            1,
        ),
    ];

    /// Violations reported by `m` over `steps`, step 0 included.
    pub(crate) fn violations(m: &mut dyn Monitor, steps: &[&[&str]]) -> Vec<usize> {
        let mut out = Vec::new();
        if m.initial() == Some(Verdict::Violated) {
            out.push(0);
        }
        for (i, labels) in steps.iter().enumerate() {
            let set: LabelSet = labels.iter().copied().collect();
            let input = StepInput {
                step: i + 1,
                text: "",
                labels: &set,
            };
            if m.step(&input) == Some(Verdict::Violated) {
                out.push(i + 1);
            }
        }
        out
    }

    #[test]
    fn each_failing_position_counts_once() {
        for (src, steps, count) in PAST_FAILURES {
            for complete in [false, true] {
                let mut a = Arena::new();
                let f = trac_ltl::parse(&mut a, src).unwrap();
                let mut m = ProgressionMonitor::with_options(
                    a,
                    f,
                    ResetPolicy::default(),
                    oracle(complete),
                );
                let got = violations(&mut m, steps);
                assert_eq!(got.len(), count, "{src} (complete: {complete}): {got:?}");
                // No step reports two verdicts, and none is reported twice.
                let mut dedup = got.clone();
                dedup.dedup();
                assert_eq!(dedup, got);
            }
        }
        // The complete monitor knows a failure one step before its position.
        let mut a = Arena::new();
        let f = trac_ltl::parse(&mut a, "G(Y a)").unwrap();
        let mut m = ProgressionMonitor::with_options(a, f, ResetPolicy::default(), oracle(true));
        assert_eq!(violations(&mut m, PAST_FAILURES[1].1), vec![0, 3]);
        assert_eq!(m.verdict(), Verdict::Pending);
        assert_eq!(m.ltlf(), Verdict::Violated);
        // Unsatisfiable from every position: position t + 1 is known bad at step t by the
        // complete monitor (so 4 positions fail by step 3), at step t + 1 by progression.
        let three: &[&[&str]] = &[&["a"], &["a"], &["a"]];
        for (complete, want) in [(true, vec![0, 1, 2, 3]), (false, vec![1, 2, 3])] {
            let mut a = Arena::new();
            let f = trac_ltl::parse(&mut a, "G(Y a) & G !a").unwrap();
            let mut m =
                ProgressionMonitor::with_options(a, f, ResetPolicy::default(), oracle(complete));
            assert_eq!(violations(&mut m, three), want, "complete: {complete}");
        }
    }

    #[test]
    fn reset_on_satisfaction_counts_each_satisfaction() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let f = a.finally(p);
        let policy = ResetPolicy {
            on_violation: true,
            on_satisfaction: true,
        };
        let mut m = ProgressionMonitor::new(a, f, policy);
        let got = run(&mut m, &[&["p"], &[], &["p"]]);
        assert_eq!(got, vec![(1, Verdict::Satisfied), (3, Verdict::Satisfied)]);
        assert_eq!(m.verdict(), Verdict::Pending);
    }
}
