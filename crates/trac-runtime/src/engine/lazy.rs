//! A lazy automaton: progression with a memo of (state, valuation) → next state.
//!
//! [`LazyMonitor`] reports exactly what plain progression ([`crate::engine::monitor::ProgressionMonitor::new`]) reports
//! (TRAC / TRAC_R, sound but not complete verdicts, the same LTLf verdict), but it interns every
//! monitor state it meets, a residual formula with the bits of the property's past-time
//! subformulas, and caches every transition it takes, keyed by the state and the valuation of the
//! atoms that transition can read. Progression runs once per distinct (state, valuation); after
//! that a step is one table lookup. Nothing is built ahead of time, so unlike a compiled table
//! ([`trac_core::table`]) it never explores states the trace does not visit: a lazy DFA in the sense
//! of regex-automata's `hybrid` engine, for LTL.
//!
//! # Transitions
//! A state reads the atoms of its residual, of the past-time subformulas (their bits advance at
//! every step), and, when the reset policy can restart the property, of the original formula.
//! Its transitions are cached in a dense array indexed by that valuation when the state reads at
//! most [`DENSE_ATOMS`] atoms (no hashing at all), else in a hash map keyed by (state, valuation)
//! when it reads at most 64 atoms, else not at all (plain progression). The hash map stops
//! growing at [`MAX_CACHED`] entries (steps then still work, by progression).
//!
//! # Cost and memory
//! A cached step costs the label lookups of the state's atoms ([`Monitor::step`]) or none
//! ([`LazyMonitor::step_bits`]), plus one array or hash lookup. Memory grows with the states
//! and transitions met: at most the size of the property's progression automaton.
//!
//! No witnesses are kept: [`Monitor::explanation`] and [`Monitor::witness`] are empty. Use
//! [`crate::engine::monitor::ProgressionMonitor`] or [`trac_core::table::TableMonitor`] to explain verdicts.

use crate::engine::monitor::{Change, Monitor, ResetPolicy, Verdict};
use crate::engine::parametric::Instantiate;
use std::collections::HashMap;
use trac_core::labels::StepInput;
use trac_ltl::formula::{Arena, Formula, Sym};
use trac_ltl::progress::{eval_empty, eval_last, progress, PastState, ResidualVerdict};

/// States reading at most this many atoms keep their transitions in a dense array of
/// `2^DENSE_ATOMS` entries at most.
pub const DENSE_ATOMS: usize = 8;

/// The most transitions kept in the hash map (states reading more than [`DENSE_ATOMS`] atoms).
pub const MAX_CACHED: usize = 1 << 22;

/// An edge not computed yet.
const UNKNOWN: u32 = u32::MAX;

/// A monitor state.
#[derive(Clone, Debug)]
struct State {
    residual: Formula,
    /// The past-time bits (all false for a decided state that never restarts).
    bits: Box<[bool]>,
    /// The atoms (indices in `Automaton::atoms`) a transition from this state reads, ascending.
    reads: Box<[u16]>,
    /// `reads` is every atom, in order (the valuation key is the step's bits as given).
    all: bool,
    /// Start of this state's dense transition array in `Automaton::dense`, if it has one.
    dense: Option<u32>,
}

/// `(state, valuation)` keys hashed with the Fx hash (rustc's): small integers, no need for SipHash.
type KeyMap = HashMap<(u32, u64), u32, rustc_hash::FxBuildHasher>;

/// The automaton discovered so far, with the progression machinery that extends it.
#[derive(Clone, Debug)]
struct Automaton {
    arena: Arena,
    original: Formula,
    /// Scratch past state (bits are loaded from the state being expanded).
    past: PastState,
    policy: ResetPolicy,
    /// The atoms, by index.
    atoms: Vec<Sym>,
    /// Per symbol index of the arena: the atom's index, or `u32::MAX`.
    atom_of_sym: Vec<u32>,
    /// Atoms every state reads: those of the past-time subformulas, and of the original formula
    /// when the policy can restart.
    base_reads: Vec<u16>,
    states: Vec<State>,
    ids: HashMap<(Formula, Box<[bool]>), u32>,
    /// Dense transition arrays, concatenated: `next << 2 | event` or [`UNKNOWN`].
    dense: Vec<u32>,
    /// Transitions of states without a dense array.
    sparse: KeyMap,
}

/// Encodes an edge: target state and the verdict event of the step.
fn edge(next: u32, event: Option<Verdict>) -> u32 {
    next << 2
        | match event {
            None | Some(Verdict::Pending) => 0,
            Some(Verdict::Violated) => 1,
            Some(Verdict::Satisfied) => 2,
        }
}

fn edge_event(e: u32) -> Option<Verdict> {
    match e & 3 {
        1 => Some(Verdict::Violated),
        2 => Some(Verdict::Satisfied),
        _ => None,
    }
}

impl Automaton {
    fn new(arena: Arena, formula: Formula, policy: ResetPolicy) -> Automaton {
        let past = PastState::new(&arena, formula);
        let atoms = arena.atoms(formula);
        let mut atom_of_sym = vec![u32::MAX; arena.sym_count()];
        for (i, s) in atoms.iter().enumerate() {
            atom_of_sym[s.index()] = i as u32;
        }
        let mut base: Vec<u16> = Vec::new();
        for &node in past.nodes() {
            base.extend(
                arena
                    .atoms(node)
                    .iter()
                    .map(|s| atom_of_sym[s.index()] as u16),
            );
        }
        if policy.on_violation || policy.on_satisfaction {
            base.extend(0..atoms.len() as u16);
        }
        base.sort_unstable();
        base.dedup();
        let mut a = Automaton {
            original: formula,
            past,
            policy,
            atoms,
            atom_of_sym,
            base_reads: base,
            states: Vec::new(),
            ids: HashMap::new(),
            dense: Vec::new(),
            sparse: KeyMap::default(),
            arena,
        };
        let bits: Box<[bool]> = a.past.bits().into();
        a.intern(formula, bits);
        a
    }

    fn restarts(&self, v: Verdict) -> bool {
        match v {
            Verdict::Violated => self.policy.on_violation,
            Verdict::Satisfied => self.policy.on_satisfaction,
            Verdict::Pending => false,
        }
    }

    /// The id of the state (`residual`, `bits`), created if new.
    fn intern(&mut self, residual: Formula, mut bits: Box<[bool]>) -> u32 {
        let verdict = Verdict::of_residual(residual);
        let sticky = verdict != Verdict::Pending && !self.restarts(verdict);
        if sticky {
            // A verdict that stays forever: the history no longer matters.
            bits.iter_mut().for_each(|b| *b = false);
        }
        if let Some(&id) = self.ids.get(&(residual, bits.clone())) {
            return id;
        }
        let mut reads: Vec<u16> = if sticky {
            Vec::new()
        } else {
            let mut r = self.base_reads.clone();
            r.extend(
                self.arena
                    .atoms(residual)
                    .iter()
                    .map(|s| self.atom_of_sym[s.index()] as u16),
            );
            r.sort_unstable();
            r.dedup();
            r
        };
        reads.shrink_to_fit();
        let all = reads.len() == self.atoms.len();
        let dense = if reads.len() <= DENSE_ATOMS {
            let start = self.dense.len() as u32;
            self.dense
                .resize(self.dense.len() + (1 << reads.len()), UNKNOWN);
            Some(start)
        } else {
            None
        };
        let id = self.states.len() as u32;
        assert!(id < 1 << 30, "too many lazy monitor states");
        self.states.push(State {
            residual,
            bits: bits.clone(),
            reads: reads.into(),
            all,
            dense,
        });
        self.ids.insert((residual, bits), id);
        id
    }

    /// Progression from state `from` on the valuation `holds` (by atom index): the edge.
    fn expand(&mut self, from: u32, holds: &dyn Fn(usize) -> bool) -> u32 {
        let st = &self.states[from as usize];
        let before = st.residual;
        self.past.set_bits(&st.bits);
        let atom_of_sym = &self.atom_of_sym;
        let v = |s: Sym| match atom_of_sym.get(s.index()) {
            Some(&i) if i != u32::MAX => holds(i as usize),
            _ => false,
        };
        self.past.step(&self.arena, &v);
        let after = progress(&mut self.arena, before, &v, &self.past);
        let reached = Verdict::of_residual(after);
        let restart = self.restarts(reached);
        // The verdict before the step is the residual's (plain progression).
        let fresh = reached != Verdict::Pending
            && (Verdict::of_residual(before) == Verdict::Pending || restart);
        let next = if restart {
            // TRAC_R: restart at this very step; if decided again, start afresh.
            let restarted = progress(&mut self.arena, self.original, &v, &self.past);
            if Verdict::of_residual(restarted) == Verdict::Pending {
                restarted
            } else {
                self.original
            }
        } else {
            after
        };
        let bits: Box<[bool]> = self.past.bits().into();
        let to = self.intern(next, bits);
        edge(to, fresh.then_some(reached))
    }

    /// The cached edge of `from` for the valuation `key` of its reads, computing it if needed.
    #[inline]
    fn next(&mut self, from: u32, key: u64, holds: &dyn Fn(usize) -> bool) -> u32 {
        let st = &self.states[from as usize];
        if let Some(start) = st.dense {
            let slot = start as usize + key as usize;
            let e = self.dense[slot];
            if e != UNKNOWN {
                return e;
            }
            let e = self.expand(from, holds);
            self.dense[slot] = e;
            return e;
        }
        if st.reads.len() > 64 {
            return self.expand(from, holds);
        }
        if let Some(&e) = self.sparse.get(&(from, key)) {
            return e;
        }
        let e = self.expand(from, holds);
        if self.sparse.len() < MAX_CACHED {
            self.sparse.insert((from, key), e);
        }
        e
    }
}

/// A plain progression monitor that memoizes its transitions (see the module docs).
#[derive(Clone, Debug)]
pub struct LazyMonitor {
    auto: Automaton,
    /// Per atom: the label that makes it hold (renamed in parametric instances).
    labels: Vec<String>,
    /// `(var, value)` of a parametric instance.
    instance: Option<(String, String)>,
    state: u32,
    steps: usize,
    /// First verdict (step, verdict) of the run without restarts.
    first_decision: Option<(usize, Verdict)>,
    /// While no verdict was reached: the state before the last step and the valuation of its
    /// reads (packed as the cache key; for a state reading more than 64 atoms, in `last`, by
    /// atom index), for the LTLf verdict.
    prev: u32,
    prev_key: u64,
    last: Vec<u64>,
}

impl LazyMonitor {
    /// A monitor for `formula` (an arena handle; the arena is moved in), which should pass
    /// [`trac_ltl::progress::validate`].
    pub fn new(arena: Arena, formula: Formula, policy: ResetPolicy) -> LazyMonitor {
        let auto = Automaton::new(arena, formula, policy);
        let labels = auto
            .atoms
            .iter()
            .map(|&s| auto.arena.sym_name(s).to_string())
            .collect();
        let words = auto.atoms.len().div_ceil(64).max(1);
        LazyMonitor {
            auto,
            labels,
            instance: None,
            state: 0,
            steps: 0,
            first_decision: None,
            prev: 0,
            prev_key: 0,
            last: vec![0; words],
        }
    }

    /// The atoms' labels, by index: the bit order of [`LazyMonitor::step_bits`].
    pub fn atom_labels(&self) -> &[String] {
        &self.labels
    }

    /// The number of states met so far.
    pub fn state_count(&self) -> usize {
        self.auto.states.len()
    }

    /// The number of transitions cached so far.
    pub fn transition_count(&self) -> usize {
        self.auto.dense.iter().filter(|&&e| e != UNKNOWN).count() + self.auto.sparse.len()
    }

    /// Bytes of heap held by the automaton's tables (states, transitions; not the arena).
    pub fn cache_bytes(&self) -> usize {
        let a = &self.auto;
        a.states.capacity() * std::mem::size_of::<State>()
            + a.states
                .iter()
                .map(|s| s.bits.len() + 2 * s.reads.len())
                .sum::<usize>()
            + a.dense.capacity() * 4
            + a.sparse.capacity() * 16
    }

    /// Reads one step given as a bitset over [`LazyMonitor::atom_labels`] (atom `i` holds iff
    /// bit `i % 64` of word `i / 64` is set); returns the verdict reached, as [`Monitor::step`]
    /// would. No allocation once the transition is cached.
    #[inline]
    pub fn step_bits(&mut self, bits: &[u64]) -> Option<Verdict> {
        let holds = |i: usize| bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1);
        let st = &self.auto.states[self.state as usize];
        let key = if st.all && st.reads.len() <= 64 {
            let w = bits.first().copied().unwrap_or(0);
            if st.reads.len() == 64 {
                w
            } else {
                w & ((1u64 << st.reads.len()) - 1)
            }
        } else {
            pack(&st.reads, holds)
        };
        self.advance(key, &holds)
    }

    #[inline]
    fn advance(&mut self, key: u64, holds: &dyn Fn(usize) -> bool) -> Option<Verdict> {
        self.steps += 1;
        if self.first_decision.is_none() {
            self.prev = self.state;
            self.prev_key = key;
            let reads = &self.auto.states[self.state as usize].reads;
            if reads.len() > 64 {
                self.last.iter_mut().for_each(|w| *w = 0);
                for &i in reads.iter() {
                    if holds(usize::from(i)) {
                        self.last[usize::from(i) / 64] |= 1 << (i % 64);
                    }
                }
            }
        }
        let e = self.auto.next(self.state, key, holds);
        self.state = e >> 2;
        let event = edge_event(e);
        if event.is_some() && self.first_decision.is_none() {
            self.first_decision = event.map(|v| (self.steps, v));
        }
        event
    }

    fn residual_formula(&self) -> Formula {
        self.auto.states[self.state as usize].residual
    }
}

/// The valuation of `reads` packed into a word (bit `k` for `reads[k]`); only the first 64.
#[inline]
fn pack(reads: &[u16], holds: impl Fn(usize) -> bool) -> u64 {
    let mut key = 0u64;
    for (k, &i) in reads.iter().take(64).enumerate() {
        key |= u64::from(holds(usize::from(i))) << k;
    }
    key
}

impl Monitor for LazyMonitor {
    fn initial(&self) -> Option<Verdict> {
        match Verdict::of_residual(self.auto.original) {
            Verdict::Pending => None,
            v => Some(v),
        }
    }

    fn step(&mut self, input: &StepInput<'_>) -> Option<Verdict> {
        // Moved out for the duration of the step (`advance` borrows `self` mutably).
        let labels = std::mem::take(&mut self.labels);
        let holds = |i: usize| input.labels.contains(&labels[i]);
        let key = pack(&self.auto.states[self.state as usize].reads, holds);
        let v = self.advance(key, &holds);
        self.labels = labels;
        v
    }

    fn verdict(&self) -> Verdict {
        Verdict::of_residual(self.residual_formula())
    }

    fn residual(&self) -> String {
        let f = self.residual_formula();
        match &self.instance {
            None => trac_ltl::print(&self.auto.arena, f),
            Some((var, value)) => {
                let mut arena = self.auto.arena.clone();
                let g = arena.instantiate(f, var, value);
                trac_ltl::print(&arena, g)
            }
        }
    }

    /// Always empty: the lazy monitor keeps no witnesses.
    fn explanation(&self) -> &[Change] {
        &[]
    }

    /// Always empty: the lazy monitor keeps no witnesses.
    fn witness(&self) -> &[Change] {
        &[]
    }

    fn ltlf(&self) -> Verdict {
        let a = &self.auto;
        if self.steps == 0 {
            return Verdict::of_bool(eval_empty(&a.arena, a.original));
        }
        match self.first_decision {
            Some((t, v)) if t < self.steps => v,
            _ => {
                let st = &a.states[self.prev as usize];
                let (last, key) = (&self.last, self.prev_key);
                let holds = |i: usize| {
                    if st.reads.len() > 64 {
                        last[i / 64] >> (i % 64) & 1 == 1
                    } else {
                        st.reads
                            .iter()
                            .position(|&r| usize::from(r) == i)
                            .is_some_and(|k| key >> k & 1 == 1)
                    }
                };
                let v = |s: Sym| match a.atom_of_sym.get(s.index()) {
                    Some(&i) if i != u32::MAX => holds(i as usize),
                    _ => false,
                };
                let mut past = a.past.clone();
                past.set_bits(&st.bits);
                past.step(&a.arena, &v);
                Verdict::of_bool(eval_last(&a.arena, st.residual, &v, &past))
            }
        }
    }

    fn reset(&mut self) {
        self.state = 0;
        self.steps = 0;
        self.first_decision = None;
        self.prev = 0;
        self.prev_key = 0;
        self.last.iter_mut().for_each(|w| *w = 0);
    }
}

impl Instantiate for LazyMonitor {
    /// A copy (state and cached automaton included) whose atoms `base(var)` read the labels
    /// `base(value)`: the automaton of the instantiated formula is this one with renamed atoms,
    /// so it is copied, not rebuilt.
    fn instantiate(&self, var: &str, value: &str) -> Self {
        let mut m = self.clone();
        m.labels = self
            .labels
            .iter()
            .map(|l| trac_ltl::formula::instantiate_name(l, var, value))
            .collect();
        m.instance = Some((var.to_string(), value.to_string()));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::monitor::ProgressionMonitor;
    use crate::engine::parametric::ParametricMonitor;
    use trac_core::labels::LabelSet;

    const FORMULAS: &[&str] = &[
        "G(p -> X q)",
        "F p & G !p",
        "p U q",
        "G(p -> F q)",
        "G(q -> Y p)",
        "G(p -> O q)",
        "(p W q) & G(r -> X !r)",
        "F(p & X F(q & X F r))",
        "G((q & !r) -> ((p -> (!r U (s & !r))) W r))",
        "G(p -> !Y O p)",
        "X X p",
        "!p S q",
        "G(r -> (!p S q) | H !p)",
        "true",
        "false",
        "X false",
        "G F p",
    ];

    const POLICIES: [ResetPolicy; 3] = [
        ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        },
        ResetPolicy {
            on_violation: true,
            on_satisfaction: false,
        },
        ResetPolicy {
            on_violation: true,
            on_satisfaction: true,
        },
    ];

    /// A deterministic pseudo-random trace over p, q, r, s (xorshift).
    fn trace(seed: u64, len: usize) -> Vec<LabelSet> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ["p", "q", "r", "s"]
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| x >> (i * 3) & 3 == 0)
                    .map(|(_, a)| *a)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn agrees_with_progression_on_random_traces() {
        for src in FORMULAS {
            for policy in POLICIES {
                for seed in 0..12u64 {
                    let mut arena = Arena::new();
                    let f = trac_ltl::parse(&mut arena, src).unwrap();
                    let mut prog = ProgressionMonitor::new(arena.clone(), f, policy);
                    let mut lazy = LazyMonitor::new(arena, f, policy);
                    assert_eq!(prog.initial(), lazy.initial(), "{src}");
                    let t = trace(seed, 1 + (seed as usize * 7) % 40);
                    // Run twice (reset in between) so the second run is served from the cache.
                    for round in 0..2 {
                        for (i, labels) in t.iter().enumerate() {
                            let input = StepInput {
                                step: i + 1,
                                text: "",
                                labels,
                            };
                            let a = prog.step(&input);
                            let b = lazy.step(&input);
                            let ctx = format!(
                                "{src} {policy:?} seed {seed} round {round} step {}",
                                i + 1
                            );
                            assert_eq!(a, b, "event: {ctx}");
                            assert_eq!(prog.verdict(), lazy.verdict(), "verdict: {ctx}");
                            assert_eq!(prog.residual(), lazy.residual(), "residual: {ctx}");
                            assert_eq!(prog.ltlf(), lazy.ltlf(), "ltlf: {ctx}");
                        }
                        prog.reset();
                        lazy.reset();
                        assert_eq!(prog.ltlf(), lazy.ltlf(), "{src}");
                    }
                }
            }
        }
    }

    #[test]
    fn each_failing_position_counts_once() {
        use crate::engine::monitor::tests::{violations, PAST_FAILURES};
        for (src, steps, count) in PAST_FAILURES {
            let mut arena = Arena::new();
            let f = trac_ltl::parse(&mut arena, src).unwrap();
            let mut m = LazyMonitor::new(arena, f, ResetPolicy::default());
            let got = violations(&mut m, steps);
            assert_eq!(got.len(), count, "{src}: {got:?}");
        }
    }

    #[test]
    fn step_bits_matches_step() {
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, "G((q & !r) -> ((p -> (!r U (s & !r))) W r))").unwrap();
        let mut a = LazyMonitor::new(arena.clone(), f, ResetPolicy::default());
        let mut b = LazyMonitor::new(arena, f, ResetPolicy::default());
        let names: Vec<String> = a.atom_labels().to_vec();
        for (i, labels) in trace(3, 200).iter().enumerate() {
            let mut w = 0u64;
            for (k, n) in names.iter().enumerate() {
                if labels.contains(n) {
                    w |= 1 << k;
                }
            }
            let input = StepInput {
                step: i + 1,
                text: "",
                labels,
            };
            assert_eq!(a.step(&input), b.step_bits(&[w]), "step {}", i + 1);
        }
        assert!(a.state_count() >= 2 && a.transition_count() >= 2);
        assert!(a.cache_bytes() > 0);
    }

    #[test]
    fn parametric_instances_agree_with_progression() {
        let src = "G(load(p) -> !Y O load(p)) & G(drop(p) -> X !take(p))";
        let steps: Vec<LabelSet> = [
            &["load(a)"][..],
            &["load(b)", "drop(a)"],
            &["take(a)", "load(a)"],
            &["load(b)"],
            &[],
            &["drop(b)"],
            &["take(b)", "take(c)"],
        ]
        .iter()
        .map(|s| s.iter().copied().collect())
        .collect();
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, src).unwrap();
        let mut prog = ParametricMonitor::new(arena.clone(), f, "p", ResetPolicy::default());
        let lazy = LazyMonitor::new(arena.clone(), f, ResetPolicy::default());
        let mut lazy = ParametricMonitor::with_template(&arena, f, "p", lazy);
        for (i, labels) in steps.iter().enumerate() {
            let input = StepInput {
                step: i + 1,
                text: "",
                labels,
            };
            assert_eq!(prog.step(&input), lazy.step(&input), "step {}", i + 1);
        }
        for (v, m) in prog.instances() {
            let l = lazy.instance(v).unwrap();
            assert_eq!(m.residual(), l.residual());
            assert_eq!(m.ltlf(), l.ltlf());
        }
    }
}
