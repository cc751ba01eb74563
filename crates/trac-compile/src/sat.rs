//! Satisfiability and validity of residual formulas, with the state of their past-time
//! subformulas: the decision procedure behind complete (LTL3) verdicts.
//!
//! A monitor's state after `t` steps is a residual formula `ψ` together with the bits of the
//! property's past-time subformulas ([`PastState::bits`]). The rest of the trace satisfies the
//! property iff it satisfies `ψ` when the past subformulas inside `ψ` are evaluated by the
//! deterministic past tracker started from those bits. A state is
//! - ⊥ (violated) iff `ψ` is unsatisfiable over infinite words from those bits,
//! - ⊤ (satisfied) iff `¬ψ` is,
//!
//! the LTL3 verdicts of Bauer, Leucker & Schallhart, "Runtime verification for LTL and TLTL",
//! TOSEM 20(4), 2011. For finite traces (LTLf, De Giacomo & Vardi, IJCAI 2013, `X` weak) the
//! same questions are asked over non-empty finite words ([`SatChecker::ltlf_verdict`]).
//!
//! # Construction
//! The tableau is the one of Gerth, Peled, Vardi & Wolper, "Simple on-the-fly automatic
//! verification of linear temporal logic", PSTV 1995, with transition-based acceptance as in
//! Couvreur, "On-the-fly verification of linear temporal logic", FM 1999:
//! 1. The formula is put in negation normal form ([`SatChecker::nnf`]) over `X`, `X[!]`, `F`, `G`,
//!    `U`, `R` (`a W b = b R (a | b)`, `a M b = b U (a & b)`); past-time subformulas are kept as
//!    opaque literals.
//! 2. A tableau state is a conjunction of NNF formulas (an interned [`Formula`], so states are
//!    shared between queries). Its *covers* are the ways to satisfy it now: a consistent set of
//!    literals, the conjunction of next-step obligations, and the eventualities (`F`, `U`) that
//!    were postponed without their goal holding ("pending"). An edge is accepting for an
//!    eventuality iff the eventuality is not pending on it.
//! 3. Past time (Lichtenstein, Pnueli & Zuck, "The glory of the past", 1985): the tableau is
//!    taken in product with the deterministic past tracker. Along an edge the valuation of the
//!    atoms under past operators is enumerated (`2^k` for `k` such atoms in the state's cone,
//!    typically 1 to 3); the past literals of the cover must agree with the tracker, whose next
//!    bits give the successor. Bits of past subformulas that no longer occur in a state (and
//!    do not feed one that does) are cleared, so they do not split states.
//! 4. Emptiness over infinite words: Tarjan's SCC algorithm (Tarjan, "Depth-first search and
//!    linear graph algorithms", SIAM J. Comput. 1972; petgraph's [`petgraph::algo::tarjan_scc`])
//!    on the explored product; an SCC is
//!    accepting iff it has an internal edge and, for every eventuality, an internal edge on which
//!    it is not pending (the intersection of the pending sets of its internal edges is empty). A
//!    state is satisfiable iff it reaches an accepting SCC. A self-loop alone proves nothing:
//!    `F p` loops on `!p` with `F p` pending. Over finite words: a state is satisfiable iff it
//!    reaches a cover without strong next obligations (`X[!]`, and the postponement of `F`/`U`).
//!
//! Before building a tableau, a cheap search tries the constant words `σ^ω` for a few letters
//! `σ` (no atom, every atom, one atom in or out) by progression; on a constant word every future
//! operator reduces to its operand, so the truth of a cycle's residual is immediate. It settles
//! most pending states (which need a model of both `ψ` and `¬ψ`) without a tableau.
//!
//! Everything is memoized per (formula, past bits), so the states of a monitor, which share
//! most of their subformulas, share the work. Worst case exponential in the formula (LTL
//! satisfiability is PSPACE-complete, Sistla & Clarke 1985).

use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use trac_core::Semantics;
use trac_ltl::formula::{Arena, Formula, Node, Sym};
use trac_ltl::progress::{eval_last, progress, PastState};

/// The bits of the past-time subformulas of a property, one per node of [`PastState::nodes`].
pub type Bits = Box<[bool]>;

/// One way to satisfy a tableau state at the current step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Cover {
    /// Atoms and past subformulas with their required value, sorted, consistent.
    lits: Vec<(Formula, bool)>,
    /// The conjunction of the obligations for the next step (NNF).
    next: Formula,
    /// Eventualities postponed at this step without their goal holding, sorted.
    pending: Vec<Formula>,
    /// Some next obligation is strong: the word cannot end here (LTLf).
    strong: bool,
}

/// Past-time facts about a formula: which past bits it depends on and the atoms under them.
#[derive(Clone, Debug)]
struct Cone {
    /// Per past node: whether the formula depends on its bit.
    mask: Box<[bool]>,
    /// Atoms occurring under those past nodes, sorted.
    atoms: Vec<Sym>,
}

/// A product state: tableau states (one per component) and the past bits.
type Key = (Vec<Formula>, Bits);

/// Eventualities pending on an edge, tagged with their component.
type Pending = Vec<(usize, Formula)>;

/// A lasso word `prefix·cycle^ω`, each letter the atoms that hold.
type Lasso = (Vec<Vec<Sym>>, Vec<Vec<Sym>>);

/// The satisfiability / validity checker of one property's residuals (see the module docs).
///
/// Build one per property (it knows the property's past-time subformulas) and reuse it: answers
/// are memoized. Clone is cheap enough for parametric instances (the memo is copied).
#[derive(Clone, Debug)]
pub struct SatChecker {
    past: PastState,
    /// Per past node: the past nodes it depends on (itself included), as a mask.
    node_deps: Vec<Box<[bool]>>,
    /// Per past node: the atoms under it.
    node_atoms: Vec<Vec<Sym>>,
    cones: HashMap<Formula, Rc<Cone>>,
    nnf: HashMap<(Formula, bool), Formula>,
    covers: HashMap<Formula, Rc<[Cover]>>,
    /// Infinite-word emptiness, per component list (with fairness flags) and bits.
    inf: HashMap<(Vec<(Formula, bool)>, Bits), bool>,
    /// Finite-word satisfiability per (NNF state, bits).
    fin: HashMap<(Formula, Bits), bool>,
    /// LTL3 verdicts per (residual, masked bits).
    verdicts: HashMap<(Formula, Bits), Option<bool>>,
    /// LTLf satisfiability per (residual, masked bits).
    fin_sat: HashMap<(Formula, Bits), bool>,
    /// Number of product states explored (statistics).
    explored: usize,
    /// While set: stop exploring once `explored` reaches it ([`SatChecker::inf_satisfiable_within`]).
    limit: Option<usize>,
    /// The limit was reached: the current answer is unknown and nothing is memoized.
    exceeded: bool,
    /// With [`SatChecker::with_check_budget`]: the work each verdict may do.
    pub(crate) check_budget: Option<usize>,
    /// Checks that ran out of budget so far; after [`GIVE_UP_AFTER`] of them, none is tried.
    /// Shared by this checker's clones and the checkers its `VerdictSession::fresh` makes (the
    /// sessions of one audit plan clone its template's checker): once the property's tableau
    /// proved too large to search, no later session of the plan searches it again.
    pub(crate) over_budget: Rc<Cell<u32>>,
    /// LTL3 verdicts shared by this checker's clones (and `VerdictSession::fresh` checkers of
    /// the same property): the sessions of one audit plan clone its template's checker, and
    /// each would otherwise search the same states again.
    pub(crate) shared: Rc<RefCell<SharedVerdicts>>,
}

/// At most this many verdicts are shared per property ([`SharedVerdicts`]): past it, each
/// session keeps its own memo only (as before sharing), so memory stays bounded over a long
/// audit whose sessions visit ever new states (an entry: the printed residual and its bits,
/// about a hundred bytes).
pub const SHARED_VERDICTS: usize = 200_000;

/// The LTL3 verdicts of one property's states, shared by the checkers of that property
/// ([`SatChecker`]'s clones). Keyed by the residual printed in Spot syntax (formula handles are
/// local to each session's arena) and its masked past bits (whose meaning the property fixes).
#[derive(Debug, Default)]
pub(crate) struct SharedVerdicts {
    /// The property, printed: checkers of another property get their own map.
    pub(crate) property: String,
    /// Verdict per (printed residual, masked bits); `None` also for a check over its budget.
    verdicts: HashMap<(String, Bits), Option<bool>>,
}

/// A checker with a check budget stops searching after this many checks ran out of it: every
/// later undecided state is pending at once, as under plain progression (sound, not complete),
/// so a property whose tableau is too large costs a progression step per step, not a failed
/// search per step.
pub const GIVE_UP_AFTER: u32 = 3;

impl SatChecker {
    /// A checker for the residuals of `property` (which fixes the past-time subformulas and the
    /// meaning of the bits). `property` should pass [`trac_ltl::progress::validate`].
    pub fn new(arena: &Arena, property: Formula) -> SatChecker {
        let past = PastState::new(arena, property);
        let n = past.nodes().len();
        let mut node_deps = Vec::with_capacity(n);
        let mut node_atoms = Vec::with_capacity(n);
        for &g in past.nodes() {
            let mut mask = vec![false; n].into_boxed_slice();
            for h in arena.subformulas_postorder(g) {
                if let Some(j) = past.nodes().iter().position(|&x| x == h) {
                    mask[j] = true;
                }
            }
            node_deps.push(mask);
            node_atoms.push(arena.atoms(g));
        }
        SatChecker {
            past,
            node_deps,
            node_atoms,
            cones: HashMap::default(),
            nnf: HashMap::default(),
            covers: HashMap::default(),
            inf: HashMap::default(),
            fin: HashMap::default(),
            verdicts: HashMap::default(),
            fin_sat: HashMap::default(),
            explored: 0,
            limit: None,
            exceeded: false,
            check_budget: None,
            over_budget: Rc::default(),
            shared: Rc::new(RefCell::new(SharedVerdicts {
                property: trac_ltl::print(arena, property),
                verdicts: HashMap::default(),
            })),
        }
    }

    /// This checker, its verdicts ([`SatChecker::verdict`], [`SatChecker::ltlf_verdict`])
    /// each doing at most `budget` units of work, a unit being one past-time subformula of one
    /// tableau product state explored (the cost of a state grows with the past-time
    /// subformulas it steps): past it, the verdict is `None` (pending), which is sound but not
    /// complete (the state is decided later, by progression folding its residual, or never);
    /// after [`GIVE_UP_AFTER`] such checks, counted over this checker and its clones together
    /// (`Clone` shares the count), no more are tried. For properties whose tableau is too large
    /// to search, such as `G(a -> Y[40] b)` (2^40 past histories).
    pub fn with_check_budget(mut self, budget: usize) -> SatChecker {
        self.check_budget = Some(budget);
        self
    }

    /// Whether some check of this checker or of a clone ran out of its budget
    /// ([`SatChecker::with_check_budget`]): a verdict may then have been left pending that an
    /// unbounded check would have given.
    pub fn gave_up(&self) -> bool {
        self.over_budget.get() > 0
    }

    /// `f(self)` under the check budget, if any: `None` when it was exceeded or the checker has
    /// given up (then nothing learned during the call is memoized: every memo insert is guarded
    /// by `exceeded`).
    fn within_budget<T>(&mut self, f: impl FnOnce(&mut SatChecker) -> T) -> Option<T> {
        let Some(budget) = self.check_budget else {
            return Some(f(self));
        };
        if self.over_budget.get() >= GIVE_UP_AFTER {
            return None;
        }
        let states = budget / (1 + self.past_len());
        let r = self.explore_at_most(states, f);
        if r.is_none() {
            self.over_budget.set(self.over_budget.get() + 1);
        }
        r
    }

    /// `f(self)` exploring at most `states` more tableau product states: `None` when that was
    /// exceeded (nothing learned during the call is memoized then). The caller's own limit is
    /// restored after.
    fn explore_at_most<T>(
        &mut self,
        states: usize,
        f: impl FnOnce(&mut SatChecker) -> T,
    ) -> Option<T> {
        let saved = (self.limit, self.exceeded);
        self.limit = Some(self.explored.saturating_add(states));
        self.exceeded = false;
        let r = f(self);
        let over = self.exceeded;
        (self.limit, self.exceeded) = saved;
        (!over).then_some(r)
    }

    /// The past bits before the first step.
    pub fn initial_bits(&self) -> Bits {
        self.past.bits().into()
    }

    /// The number of past-time subformulas (the length of the bit vectors).
    pub fn past_len(&self) -> usize {
        self.past.nodes().len()
    }

    /// Product states explored so far by tableau searches (a cost measure).
    pub fn explored(&self) -> usize {
        self.explored
    }

    /// `bits` with the bits that `f` does not depend on cleared: two states whose residuals are
    /// equal and whose masked bits are equal have the same future.
    pub fn mask(&mut self, arena: &Arena, f: Formula, bits: &[bool]) -> Bits {
        if bits.is_empty() {
            return Bits::default();
        }
        let cone = self.cone(arena, f);
        bits.iter()
            .zip(cone.mask.iter())
            .map(|(&b, &m)| b && m)
            .collect()
    }

    fn cone(&mut self, arena: &Arena, f: Formula) -> Rc<Cone> {
        if let Some(c) = self.cones.get(&f) {
            return c.clone();
        }
        let n = self.past.nodes().len();
        let mut mask = vec![false; n].into_boxed_slice();
        let mut atoms = Vec::new();
        if n > 0 && arena.info(f).has_past {
            for g in arena.subformulas_postorder(f) {
                if let Some(i) = self.past.nodes().iter().position(|&x| x == g) {
                    for (m, &d) in mask.iter_mut().zip(self.node_deps[i].iter()) {
                        *m |= d;
                    }
                    atoms.extend_from_slice(&self.node_atoms[i]);
                }
            }
            atoms.sort_unstable();
            atoms.dedup();
        }
        let c = Rc::new(Cone { mask, atoms });
        self.cones.insert(f, c.clone());
        c
    }

    /// The LTL3 verdict of the state (`f`, `bits`): `Some(false)` if no infinite continuation
    /// satisfies `f` (⊥), `Some(true)` if every one does (⊤), `None` otherwise (?).
    ///
    /// `bits` are the past bits after the last step read ([`PastState::bits`]).
    pub fn verdict(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> Option<bool> {
        match f {
            Formula::TRUE => return Some(true),
            Formula::FALSE => return Some(false),
            _ => {}
        }
        let bits = self.mask(arena, f, bits);
        let key = (f, bits);
        if let Some(&v) = self.verdicts.get(&key) {
            return v;
        }
        let text = (trac_ltl::print(arena, f), key.1.clone());
        let known = self.shared.borrow().verdicts.get(&text).copied();
        if let Some(v) = known {
            self.verdicts.insert(key, v);
            return v;
        }
        let v = match self.within_budget(|s| s.verdict_searched(arena, key.0, &key.1)) {
            Some(v) => v,
            None => {
                // Over the budget: pending, for good (sound; see `with_check_budget`).
                self.verdicts.insert(key, None);
                None
            }
        };
        let mut shared = self.shared.borrow_mut();
        if shared.verdicts.len() < SHARED_VERDICTS {
            shared.verdicts.insert(text, v);
        }
        v
    }

    /// [`SatChecker::verdict`] of a state not memoized yet, by tableau search.
    fn verdict_searched(&mut self, arena: &mut Arena, f: Formula, bits: &Bits) -> Option<bool> {
        let bits = bits.clone();
        let nf = arena.not(f);
        let (mut sat, mut sat_neg) = self.quick_inf(arena, f, &bits);
        if !sat {
            let g = self.nnf(arena, f, false);
            sat = self.nonempty(arena, vec![(g, true)], &bits);
        }
        let v = if !sat {
            Some(false)
        } else {
            if !sat_neg {
                let g = self.nnf(arena, nf, false);
                sat_neg = self.nonempty(arena, vec![(g, true)], &bits);
            }
            if sat_neg {
                None
            } else {
                Some(true)
            }
        };
        if !self.exceeded {
            self.verdicts.insert((f, bits), v);
        }
        v
    }

    /// Whether some continuation of the state (`f`, `bits`) satisfies `f`: an infinite word
    /// ([`Semantics::Ltl3`]) or a non-empty finite word with `X` weak ([`Semantics::Ltlf`]).
    pub fn satisfiable(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        semantics: Semantics,
    ) -> bool {
        match semantics {
            Semantics::Ltl3 => self.inf_satisfiable(arena, f, bits),
            Semantics::Ltlf => self.fin_satisfiable(arena, f, bits),
        }
    }

    /// Whether an infinite word satisfies `f` from `bits` (one tableau at most, where
    /// [`SatChecker::verdict`] may need two).
    pub fn inf_satisfiable(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> bool {
        match f {
            Formula::TRUE => return true,
            Formula::FALSE => return false,
            _ => {}
        }
        let bits = self.mask(arena, f, bits);
        if let Some(v) = self.verdicts.get(&(f, bits.clone())) {
            return *v != Some(false);
        }
        for (prefix, cycle) in Self::words(arena, f) {
            if self.lasso(arena, f, &bits, &prefix, &cycle) == Some(true) {
                return true;
            }
        }
        let g = self.nnf(arena, f, false);
        self.nonempty(arena, vec![(g, true)], &bits)
    }

    /// [`SatChecker::inf_satisfiable`] exploring at most `budget` tableau product states:
    /// `None` if that was not enough (nothing learned is memoized then). For questions whose
    /// answer is an optimization, such as merging equivalent monitor states.
    pub fn inf_satisfiable_within(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        budget: usize,
    ) -> Option<bool> {
        self.explore_at_most(budget, |c| c.inf_satisfiable(arena, f, bits))
    }

    /// The LTLf verdict of a state: `accepting` tells whether the trace read so far satisfies the
    /// property (the end-of-trace evaluation of the previous residual on the last step, or
    /// [`trac_ltl::progress::eval_empty`] before the first step); `f` and `bits` are the state after
    /// it. ⊥ (`Some(false)`) iff neither the trace so far nor any non-empty extension satisfies
    /// the property; ⊤ (`Some(true)`) iff the trace so far and every non-empty extension do.
    pub fn ltlf_verdict(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        accepting: bool,
    ) -> Option<bool> {
        self.within_budget(|s| s.ltlf_searched(arena, f, bits, accepting))
            .flatten()
    }

    /// [`SatChecker::ltlf_verdict`], by finite-word reachability.
    fn ltlf_searched(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        accepting: bool,
    ) -> Option<bool> {
        if accepting {
            let nf = arena.not(f);
            if self.fin_satisfiable(arena, nf, bits) {
                None
            } else {
                Some(true)
            }
        } else if self.fin_satisfiable(arena, f, bits) {
            None
        } else {
            Some(false)
        }
    }

    /// Whether a non-empty finite word satisfies `f` (LTLf, `X` weak) from `bits`.
    pub fn fin_satisfiable(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> bool {
        match f {
            Formula::TRUE => return true,
            Formula::FALSE => return false,
            _ => {}
        }
        let bits = self.mask(arena, f, bits);
        if let Some(&v) = self.fin_sat.get(&(f, bits.clone())) {
            return v;
        }
        let v = self.quick_fin(arena, f, &bits) || {
            let g = self.nnf(arena, f, false);
            self.fin_reach(arena, g, &bits)
        };
        if !self.exceeded {
            self.fin_sat.insert((f, bits), v);
        }
        v
    }

    /// Whether `f` (with past bits `bits`) is a safety property: every infinite word violating
    /// it has a finite prefix that no continuation can repair (Alpern & Schneider 1985). Decided
    /// as the emptiness of the product of the tableau of `f` without acceptance, restricted to
    /// satisfiable states (its safety closure), with the tableau of `¬f`.
    pub fn is_safety(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> bool {
        let bits = self.mask(arena, f, bits);
        let pos = self.nnf(arena, f, false);
        let neg = self.nnf(arena, f, true);
        if !self.nonempty(arena, vec![(pos, true)], &bits) {
            return true;
        }
        !self.nonempty(arena, vec![(pos, false), (neg, true)], &bits)
    }

    /// [`SatChecker::is_safety`] exploring at most `budget` tableau product states per
    /// emptiness check: `None` if that was not enough (nothing learned is memoized then).
    pub fn is_safety_within(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        budget: usize,
    ) -> Option<bool> {
        self.explore_at_most(budget, |c| c.is_safety(arena, f, bits))
    }

    /// Negation normal form of `f` (of `!f` when `negate`), over `X`, `X[!]`, `F`, `G`, `U`,
    /// `R`, `&`, `|` and literals (atoms and past subformulas, possibly negated). Valid over
    /// infinite and finite words (`!X a = X[!] !a`). Memoized; O(|f|) new nodes, except `<->` and
    /// `xor`, which duplicate their operands.
    pub fn nnf(&mut self, arena: &mut Arena, f: Formula, negate: bool) -> Formula {
        if let Some(&r) = self.nnf.get(&(f, negate)) {
            return r;
        }
        let node = arena.node(f).clone();
        let r = match node {
            Node::True | Node::False => {
                if negate {
                    arena.not(f)
                } else {
                    f
                }
            }
            Node::Atom(_) => {
                if negate {
                    arena.not(f)
                } else {
                    f
                }
            }
            n if n.is_past_operator() => {
                if negate {
                    arena.not(f)
                } else {
                    f
                }
            }
            Node::Not(a) => self.nnf(arena, a, !negate),
            Node::And(xs) | Node::Or(xs) => {
                let is_and = matches!(arena.node(f), Node::And(_)) != negate;
                let ops: Vec<Formula> = xs.iter().map(|&x| self.nnf(arena, x, negate)).collect();
                if is_and {
                    arena.and(ops)
                } else {
                    arena.or(ops)
                }
            }
            Node::Implies(a, b) => {
                if negate {
                    let (a, b) = (self.nnf(arena, a, false), self.nnf(arena, b, true));
                    arena.and2(a, b)
                } else {
                    let (a, b) = (self.nnf(arena, a, true), self.nnf(arena, b, false));
                    arena.or2(a, b)
                }
            }
            Node::Equiv(a, b) | Node::Xor(a, b) => {
                let equiv = matches!(arena.node(f), Node::Equiv(..)) != negate;
                let (pa, na) = (self.nnf(arena, a, false), self.nnf(arena, a, true));
                let (pb, nb) = (self.nnf(arena, b, false), self.nnf(arena, b, true));
                let (l, r) = if equiv {
                    (arena.and2(pa, pb), arena.and2(na, nb))
                } else {
                    (arena.and2(pa, nb), arena.and2(na, pb))
                };
                arena.or2(l, r)
            }
            Node::Next(a) => {
                let a = self.nnf(arena, a, negate);
                if negate {
                    arena.strong_next(a)
                } else {
                    arena.next(a)
                }
            }
            Node::StrongNext(a) => {
                let a = self.nnf(arena, a, negate);
                if negate {
                    arena.next(a)
                } else {
                    arena.strong_next(a)
                }
            }
            Node::Finally(a) => {
                let a = self.nnf(arena, a, negate);
                if negate {
                    arena.globally(a)
                } else {
                    arena.finally(a)
                }
            }
            Node::Globally(a) => {
                let a = self.nnf(arena, a, negate);
                if negate {
                    arena.finally(a)
                } else {
                    arena.globally(a)
                }
            }
            Node::Until(a, b) => {
                let (a, b) = (self.nnf(arena, a, negate), self.nnf(arena, b, negate));
                if negate {
                    arena.release(a, b)
                } else {
                    arena.until(a, b)
                }
            }
            Node::Release(a, b) => {
                let (a, b) = (self.nnf(arena, a, negate), self.nnf(arena, b, negate));
                if negate {
                    arena.until(a, b)
                } else {
                    arena.release(a, b)
                }
            }
            // a W b = b R (a | b); !(a W b) = !b U (!a & !b).
            Node::WeakUntil(a, b) => {
                let (a, b) = (self.nnf(arena, a, negate), self.nnf(arena, b, negate));
                if negate {
                    let ab = arena.and2(a, b);
                    arena.until(b, ab)
                } else {
                    let ab = arena.or2(a, b);
                    arena.release(b, ab)
                }
            }
            // a M b = b U (a & b); !(a M b) = !b R (!a | !b).
            Node::StrongRelease(a, b) => {
                let (a, b) = (self.nnf(arena, a, negate), self.nnf(arena, b, negate));
                if negate {
                    let ab = arena.or2(a, b);
                    arena.release(b, ab)
                } else {
                    let ab = arena.and2(a, b);
                    arena.until(b, ab)
                }
            }
            Node::Yesterday(_)
            | Node::WeakYesterday(_)
            | Node::Once(_)
            | Node::Historically(_)
            | Node::Since(..) => unreachable!("past operators are handled above"),
        };
        self.nnf.insert((f, negate), r);
        r
    }

    /// The covers of an NNF tableau state (memoized). O(2^(number of disjunctive choices)).
    fn covers(&mut self, arena: &mut Arena, s: Formula) -> Rc<[Cover]> {
        if let Some(c) = self.covers.get(&s) {
            return c.clone();
        }
        let mut out = Vec::new();
        let start = Branch {
            todo: vec![s],
            old: Vec::new(),
            lits: Vec::new(),
            next: Vec::new(),
            strong: false,
            evs: Vec::new(),
        };
        expand(arena, start, &mut out, &mut HashMap::default());
        out.sort_by_key(|c| c.lits.len() + c.pending.len());
        let mut seen = HashSet::default();
        out.retain(|c| seen.insert(c.clone()));
        // Drop covers subsumed by another one (fewer literals, obligations and pending
        // eventualities): they add no model. Quadratic, so only for moderate sizes.
        if out.len() <= 256 {
            let mut keep: Vec<Cover> = Vec::with_capacity(out.len());
            for c in out {
                if !keep.iter().any(|k| subsumes(arena, k, &c)) {
                    keep.retain(|k| !subsumes(arena, &c, k));
                    keep.push(c);
                }
            }
            out = keep;
        }
        let rc: Rc<[Cover]> = out.into();
        self.covers.insert(s, rc.clone());
        rc
    }

    /// The successors of a product state: per combination of component covers and valuation of
    /// the past atoms, the next product state and the tagged pending eventualities (component
    /// index, eventuality), and whether the word may end there.
    fn successors(
        &mut self,
        arena: &mut Arena,
        comps: &[Formula],
        bits: &[bool],
    ) -> Vec<(Key, Pending, bool)> {
        let covers: Vec<Rc<[Cover]>> = comps.iter().map(|&c| self.covers(arena, c)).collect();
        let mut out = Vec::new();
        let mut idx = vec![0usize; comps.len()];
        if covers.iter().any(|c| c.is_empty()) {
            return out;
        }
        loop {
            // Merge the literals of this combination.
            let mut lits: Vec<(Formula, bool)> = Vec::new();
            let mut ok = true;
            for (ci, &i) in idx.iter().enumerate() {
                for &l in &covers[ci][i].lits {
                    match lits.binary_search_by_key(&l.0, |x| x.0) {
                        Ok(j) => {
                            if lits[j].1 != l.1 {
                                ok = false;
                            }
                        }
                        Err(j) => lits.insert(j, l),
                    }
                }
            }
            if ok {
                let nexts: Vec<Formula> = idx
                    .iter()
                    .enumerate()
                    .map(|(ci, &i)| covers[ci][i].next)
                    .collect();
                let mut pending = Vec::new();
                let mut strong = false;
                for (ci, &i) in idx.iter().enumerate() {
                    pending.extend(covers[ci][i].pending.iter().map(|&p| (ci, p)));
                    strong |= covers[ci][i].strong;
                }
                for nb in self.past_successors(arena, &lits, &nexts, bits) {
                    out.push(((nexts.clone(), nb), pending.clone(), !strong));
                }
            }
            // Next combination.
            let mut k = 0;
            loop {
                if k == idx.len() {
                    return out;
                }
                idx[k] += 1;
                if idx[k] < covers[k].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    /// The next past bits compatible with the literals, from `bits`: the valuations of the past
    /// atoms are enumerated (2^k for k past atoms in the cone). Without past subformulas, the
    /// empty bit vector.
    fn past_successors(
        &mut self,
        arena: &mut Arena,
        lits: &[(Formula, bool)],
        nexts: &[Formula],
        bits: &[bool],
    ) -> Vec<Bits> {
        if self.past.nodes().is_empty() {
            return vec![Bits::default()];
        }
        let mut target_mask = vec![false; bits.len()];
        for &n in nexts {
            let c = self.cone(arena, n);
            for (m, &x) in target_mask.iter_mut().zip(c.mask.iter()) {
                *m |= x;
            }
        }
        // The atoms the past literals and the tracked bits depend on.
        let mut atoms: Vec<Sym> = Vec::new();
        let mut relevant = vec![false; bits.len()];
        relevant.copy_from_slice(&target_mask);
        for &(l, _) in lits {
            if arena.node(l).is_past_operator() {
                let c = self.cone(arena, l);
                atoms.extend_from_slice(&c.atoms);
                for (m, &x) in relevant.iter_mut().zip(c.mask.iter()) {
                    *m |= x;
                }
            }
        }
        for (i, _) in relevant.iter().enumerate().filter(|(_, &r)| r) {
            atoms.extend_from_slice(&self.node_atoms[i]);
        }
        atoms.sort_unstable();
        atoms.dedup();
        let mut out: Vec<Bits> = Vec::new();
        let mut past = self.past.clone();
        for m in 0u64..(1u64 << atoms.len().min(63)) {
            let holds = |s: Sym| match atoms.binary_search(&s) {
                Ok(i) => m >> i & 1 == 1,
                Err(_) => false,
            };
            // Atom literals on past atoms must agree with this valuation.
            let agrees = lits.iter().all(|&(l, v)| match arena.node(l) {
                Node::Atom(s) => atoms.binary_search(s).is_err() || holds(*s) == v,
                _ => true,
            });
            if !agrees {
                continue;
            }
            past.set_bits(bits);
            past.step(arena, &holds);
            if !lits.iter().all(|&(l, v)| match past.value(l) {
                Some(x) => x == v,
                None => true,
            }) {
                continue;
            }
            let nb: Bits = past
                .bits()
                .iter()
                .zip(target_mask.iter())
                .map(|(&b, &m)| b && m)
                .collect();
            if !out.contains(&nb) {
                out.push(nb);
            }
        }
        out
    }

    /// Whether the product of the components (tableau states with a fairness flag: `true` =
    /// generalized Büchi acceptance, `false` = only satisfiable states, no acceptance) from
    /// `bits` has an infinite accepting run. Explores the product, runs Tarjan's SCC algorithm and
    /// memoizes the answer of every state explored.
    fn nonempty(&mut self, arena: &mut Arena, comps: Vec<(Formula, bool)>, bits: &[bool]) -> bool {
        let fair: Vec<bool> = comps.iter().map(|c| c.1).collect();
        let start: Key = (comps.iter().map(|c| c.0).collect(), bits.into());
        let memo_key = |k: &Key| -> (Vec<(Formula, bool)>, Bits) {
            (
                k.0.iter().zip(fair.iter()).map(|(&f, &x)| (f, x)).collect(),
                k.1.clone(),
            )
        };
        if let Some(&v) = self.inf.get(&memo_key(&start)) {
            return v;
        }
        // Explore.
        let mut ids: HashMap<Key, usize> = HashMap::default();
        let mut keys: Vec<Key> = Vec::new();
        let mut known: Vec<Option<bool>> = Vec::new();
        let mut edges: Vec<Vec<(usize, Pending)>> = Vec::new();
        ids.insert(start.clone(), 0);
        keys.push(start);
        known.push(None);
        edges.push(Vec::new());
        let mut i = 0;
        while i < keys.len() {
            let key = keys[i].clone();
            if i > 0 {
                if let Some(&v) = self.inf.get(&memo_key(&key)) {
                    known[i] = Some(v);
                    i += 1;
                    continue;
                }
            }
            if key.0.contains(&Formula::FALSE) {
                known[i] = Some(false);
                i += 1;
                continue;
            }
            if self.limit.is_some_and(|l| self.explored >= l) {
                self.exceeded = true;
            }
            if self.exceeded {
                return false;
            }
            self.explored += 1;
            for (next, pending, _) in self.successors(arena, &key.0, &key.1) {
                // Unfair components only keep satisfiable states (the safety closure).
                let mut alive = true;
                for (ci, &f) in next.0.iter().enumerate() {
                    if !fair[ci] && !self.nonempty(arena, vec![(f, true)], &next.1) {
                        alive = false;
                        break;
                    }
                }
                if !alive {
                    continue;
                }
                let pending: Vec<(usize, Formula)> =
                    pending.into_iter().filter(|(ci, _)| fair[*ci]).collect();
                let j = match ids.get(&next) {
                    Some(&j) => j,
                    None => {
                        let j = keys.len();
                        ids.insert(next.clone(), j);
                        keys.push(next);
                        known.push(None);
                        edges.push(Vec::new());
                        j
                    }
                };
                edges[i].push((j, pending));
            }
            i += 1;
        }
        if self.exceeded {
            // A nested search ran out of budget on the last state: the graph is incomplete.
            return false;
        }
        // SCCs, sinks first (petgraph's Tarjan lists every SCC after those its edges reach).
        let mut graph: DiGraph<(), (), usize> = DiGraph::with_capacity(edges.len(), edges.len());
        for _ in 0..edges.len() {
            graph.add_node(());
        }
        for (v, es) in edges.iter().enumerate() {
            for (w, _) in es {
                graph.add_edge(NodeIndex::new(v), NodeIndex::new(*w), ());
            }
        }
        let sccs: Vec<Vec<usize>> = petgraph::algo::tarjan_scc(&graph)
            .into_iter()
            .map(|scc| scc.into_iter().map(NodeIndex::index).collect())
            .collect();
        let mut comp_of = vec![0usize; edges.len()];
        for (c, scc) in sccs.iter().enumerate() {
            for &v in scc {
                comp_of[v] = c;
            }
        }
        let mut good = vec![false; edges.len()];
        for (c, scc) in sccs.iter().enumerate() {
            // Known states are leaves of the exploration.
            if scc.len() == 1 && known[scc[0]].is_some() {
                good[scc[0]] = known[scc[0]] == Some(true);
                continue;
            }
            let mut internal = false;
            let mut common: Option<Vec<(usize, Formula)>> = None;
            let mut reaches_good = false;
            for &v in scc {
                for (w, pending) in &edges[v] {
                    if comp_of[*w] == c {
                        internal = true;
                        common = Some(match common {
                            None => pending.clone(),
                            Some(cm) => cm.into_iter().filter(|p| pending.contains(p)).collect(),
                        });
                    } else if good[*w] {
                        reaches_good = true;
                    }
                }
            }
            let accepting = internal && common.is_some_and(|c| c.is_empty());
            let g = accepting || reaches_good;
            for &v in scc {
                good[v] = g;
            }
        }
        for (v, key) in keys.iter().enumerate() {
            if known[v].is_none() {
                self.inf.insert(memo_key(key), good[v]);
            }
        }
        good[0]
    }

    /// Finite-word satisfiability of an NNF state from `bits`: reachability of a cover without
    /// strong obligations.
    fn fin_reach(&mut self, arena: &mut Arena, s: Formula, bits: &[bool]) -> bool {
        let start: (Formula, Bits) = (s, bits.into());
        if let Some(&v) = self.fin.get(&start) {
            return v;
        }
        let mut ids: HashMap<(Formula, Bits), usize> = HashMap::default();
        let mut keys = vec![start.clone()];
        ids.insert(start, 0);
        let mut preds: Vec<Vec<usize>> = vec![Vec::new()];
        let mut good: Vec<bool> = vec![false];
        let mut i = 0;
        while i < keys.len() {
            let (f, b) = keys[i].clone();
            if i > 0 {
                if let Some(&v) = self.fin.get(&(f, b.clone())) {
                    good[i] = v;
                    i += 1;
                    continue;
                }
            }
            if self.limit.is_some_and(|l| self.explored >= l) {
                self.exceeded = true;
            }
            if self.exceeded {
                return false;
            }
            self.explored += 1;
            for ((next, nb), _, can_end) in self.successors(arena, &[f], &b) {
                if can_end {
                    good[i] = true;
                }
                let key = (next[0], nb);
                let j = match ids.get(&key) {
                    Some(&j) => j,
                    None => {
                        let j = keys.len();
                        ids.insert(key.clone(), j);
                        keys.push(key);
                        preds.push(Vec::new());
                        good.push(false);
                        j
                    }
                };
                preds[j].push(i);
            }
            i += 1;
        }
        if self.exceeded {
            return false;
        }
        // Backward propagation of "can reach an end".
        let mut stack: Vec<usize> = (0..keys.len()).filter(|&v| good[v]).collect();
        while let Some(v) = stack.pop() {
            for &u in &preds[v] {
                if !good[u] {
                    good[u] = true;
                    stack.push(u);
                }
            }
        }
        for (v, key) in keys.into_iter().enumerate() {
            self.fin.insert(key, good[v]);
        }
        good[0]
    }

    /// Candidate lasso words `u·v^ω` for the quick searches: the constant words of no atom, every
    /// atom, and (for at most 12 atoms) each atom alone and each atom missing; then 24
    /// pseudo-random lassos (prefix of 0 to 2 letters, cycle of 1 to 3 letters, random letters;
    /// a fixed xorshift seed, so answers are reproducible).
    fn words(arena: &Arena, f: Formula) -> Vec<Lasso> {
        let atoms = arena.atoms(f);
        let mut letters = vec![Vec::new(), atoms.clone()];
        if atoms.len() <= 12 {
            for &a in &atoms {
                letters.push(vec![a]);
                letters.push(atoms.iter().copied().filter(|&b| b != a).collect());
            }
        }
        letters.dedup();
        let mut out: Vec<Lasso> = letters.into_iter().map(|l| (Vec::new(), vec![l])).collect();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ (f.index() as u64);
        let mut rand = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let letter = |rand: &mut dyn FnMut() -> u64| -> Vec<Sym> {
            let bits = rand();
            atoms
                .iter()
                .enumerate()
                .filter(|(i, _)| bits >> (i % 64) & 1 == 1)
                .map(|(_, &a)| a)
                .collect()
        };
        for _ in 0..24 {
            let (p, c) = ((rand() % 3) as usize, 1 + (rand() % 3) as usize);
            let prefix = (0..p).map(|_| letter(&mut rand)).collect();
            let cycle = (0..c).map(|_| letter(&mut rand)).collect();
            out.push((prefix, cycle));
        }
        out
    }

    /// Tries lasso words: returns (some word satisfies `f`, some word violates it).
    fn quick_inf(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> (bool, bool) {
        let (mut sat, mut unsat) = (false, false);
        for (prefix, cycle) in Self::words(arena, f) {
            match self.lasso(arena, f, bits, &prefix, &cycle) {
                Some(true) => sat = true,
                Some(false) => unsat = true,
                None => {}
            }
            if sat && unsat {
                break;
            }
        }
        (sat, unsat)
    }

    /// The truth of `f` on the lasso word `prefix·cycle^ω` from `bits`, if found: progression
    /// along the word until a constant or a repeated (state, cycle position); a repeated residual
    /// without past subformulas is evaluated on the periodic rest of the word directly.
    fn lasso(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        prefix: &[Vec<Sym>],
        cycle: &[Vec<Sym>],
    ) -> Option<bool> {
        let mut past = self.past.clone();
        past.set_bits(bits);
        let mut seen: HashSet<(Formula, Bits, usize)> = HashSet::default();
        let mut cur = f;
        for t in 0.. {
            match cur {
                Formula::TRUE => return Some(true),
                Formula::FALSE => return Some(false),
                _ => {}
            }
            let letter = if t < prefix.len() {
                &prefix[t]
            } else {
                let pos = (t - prefix.len()) % cycle.len();
                let key = (cur, self.mask(arena, cur, past.bits()), pos);
                if !seen.insert(key) {
                    if arena.info(cur).has_past {
                        return None;
                    }
                    let rotated: Vec<Vec<Sym>> = (0..cycle.len())
                        .map(|i| cycle[(pos + i) % cycle.len()].clone())
                        .collect();
                    return Some(eval_periodic(arena, cur, &rotated, &mut HashMap::default())[0]);
                }
                if seen.len() > 64 {
                    return None;
                }
                &cycle[pos]
            };
            let holds = |s: Sym| letter.contains(&s);
            past.step(arena, &holds);
            cur = progress(arena, cur, &holds, &past);
        }
        None
    }

    /// Tries finite prefixes of the lasso words: whether one satisfies `f` (LTLf).
    fn quick_fin(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> bool {
        for (prefix, cycle) in Self::words(arena, f) {
            let mut past = self.past.clone();
            past.set_bits(bits);
            let mut seen: HashSet<(Formula, Bits, usize)> = HashSet::default();
            let mut cur = f;
            let mut t = 0;
            while cur != Formula::FALSE && seen.len() <= 64 {
                let letter = if t < prefix.len() {
                    &prefix[t]
                } else {
                    let pos = (t - prefix.len()) % cycle.len();
                    let key = (cur, self.mask(arena, cur, past.bits()), pos);
                    if !seen.insert(key) {
                        break;
                    }
                    &cycle[pos]
                };
                let holds = |s: Sym| letter.contains(&s);
                past.step(arena, &holds);
                if eval_last(arena, cur, &holds, &past) {
                    return true;
                }
                cur = progress(arena, cur, &holds, &past);
                t += 1;
            }
        }
        false
    }
}

/// The truth of a formula without past operators at each position of the periodic word
/// `cycle^ω` (positions `0..cycle.len()`). O(|f| × |cycle|²).
fn eval_periodic(
    arena: &Arena,
    f: Formula,
    cycle: &[Vec<Sym>],
    memo: &mut HashMap<Formula, Vec<bool>>,
) -> Vec<bool> {
    if let Some(v) = memo.get(&f) {
        return v.clone();
    }
    let m = cycle.len();
    let rec =
        |g: Formula, memo: &mut HashMap<Formula, Vec<bool>>| eval_periodic(arena, g, cycle, memo);
    // a U b at every position: b at some j >= i (cyclically, within one period) with a before.
    let until = |a: &[bool], b: &[bool]| -> Vec<bool> {
        (0..m)
            .map(|i| {
                for k in 0..m {
                    let j = (i + k) % m;
                    if b[j] {
                        return true;
                    }
                    if !a[j] {
                        return false;
                    }
                }
                false
            })
            .collect()
    };
    let not = |a: &[bool]| -> Vec<bool> { a.iter().map(|x| !x).collect() };
    let v: Vec<bool> = match arena.node(f) {
        Node::True => vec![true; m],
        Node::False => vec![false; m],
        Node::Atom(s) => cycle.iter().map(|l| l.contains(s)).collect(),
        Node::Not(a) => not(&rec(*a, memo)),
        Node::And(xs) => {
            let mut acc = vec![true; m];
            for &x in xs.iter() {
                let y = rec(x, memo);
                acc.iter_mut().zip(y).for_each(|(p, q)| *p &= q);
            }
            acc
        }
        Node::Or(xs) => {
            let mut acc = vec![false; m];
            for &x in xs.iter() {
                let y = rec(x, memo);
                acc.iter_mut().zip(y).for_each(|(p, q)| *p |= q);
            }
            acc
        }
        Node::Xor(a, b) | Node::Implies(a, b) | Node::Equiv(a, b) => {
            let (x, y) = (rec(*a, memo), rec(*b, memo));
            let n = arena.node(f);
            x.iter()
                .zip(y.iter())
                .map(|(&p, &q)| match n {
                    Node::Xor(..) => p != q,
                    Node::Implies(..) => !p || q,
                    _ => p == q,
                })
                .collect()
        }
        Node::Next(a) | Node::StrongNext(a) => {
            let x = rec(*a, memo);
            (0..m).map(|i| x[(i + 1) % m]).collect()
        }
        Node::Finally(a) => vec![rec(*a, memo).iter().any(|&x| x); m],
        Node::Globally(a) => vec![rec(*a, memo).iter().all(|&x| x); m],
        Node::Until(a, b) => {
            let (x, y) = (rec(*a, memo), rec(*b, memo));
            until(&x, &y)
        }
        Node::Release(a, b) => {
            let (x, y) = (rec(*a, memo), rec(*b, memo));
            not(&until(&not(&x), &not(&y)))
        }
        Node::WeakUntil(a, b) => {
            let (x, y) = (rec(*a, memo), rec(*b, memo));
            let g = x.iter().all(|&p| p);
            until(&x, &y).into_iter().map(|u| u || g).collect()
        }
        Node::StrongRelease(a, b) => {
            let (x, y) = (rec(*a, memo), rec(*b, memo));
            let ab: Vec<bool> = x.iter().zip(y.iter()).map(|(&p, &q)| p && q).collect();
            until(&y, &ab)
        }
        _ => unreachable!("periodic evaluation of a past formula"),
    };
    memo.insert(f, v.clone());
    v
}

/// A partial cover under construction.
struct Branch {
    todo: Vec<Formula>,
    /// Formulas already expanded (few: a linear scan beats hashing and clones cheaply).
    old: Vec<Formula>,
    lits: Vec<(Formula, bool)>,
    next: Vec<Formula>,
    strong: bool,
    /// Eventualities met (`F a`, `a U b`).
    evs: Vec<Formula>,
}

/// A copy with room to grow: every branch pushes onto its vectors right after the split, and
/// `Vec::clone` leaves no spare capacity (so each first push would reallocate).
impl Clone for Branch {
    fn clone(&self) -> Branch {
        fn roomy<T: Copy>(v: &[T]) -> Vec<T> {
            let mut w = Vec::with_capacity(v.len() + 8);
            w.extend_from_slice(v);
            w
        }
        Branch {
            todo: roomy(&self.todo),
            old: roomy(&self.old),
            lits: roomy(&self.lits),
            next: roomy(&self.next),
            strong: self.strong,
            evs: roomy(&self.evs),
        }
    }
}

fn is_branching(n: &Node) -> bool {
    matches!(
        n,
        Node::Or(_) | Node::Finally(_) | Node::Until(..) | Node::Release(..)
    )
}

/// The conjunction of the next-step obligations of finished branches, per list of obligations
/// (as collected, so the memo returns exactly what [`Arena::and`] would): most branches of one
/// expansion end with a list seen before.
type NextMemo = HashMap<Vec<Formula>, Formula>;

/// GPVW expansion of a branch into covers: non-branching formulas first, then a split on the
/// first branching one.
fn expand(arena: &mut Arena, mut b: Branch, out: &mut Vec<Cover>, memo: &mut NextMemo) {
    loop {
        let pos = b
            .todo
            .iter()
            .rposition(|&f| !is_branching(arena.node(f)))
            .or_else(|| b.todo.len().checked_sub(1));
        let Some(pos) = pos else {
            // Done: a cover.
            let pending: Vec<Formula> = {
                let mut p: Vec<Formula> = b
                    .evs
                    .iter()
                    .copied()
                    .filter(|&u| {
                        let goal = match arena.node(u) {
                            Node::Finally(a) => *a,
                            Node::Until(_, g) => *g,
                            _ => unreachable!(),
                        };
                        !b.old.contains(&goal)
                    })
                    .collect();
                p.sort_unstable();
                p.dedup();
                p
            };
            let next = match memo.get(b.next.as_slice()) {
                Some(&n) => n,
                None => {
                    let n = arena.and(b.next.iter().copied());
                    memo.insert(b.next.clone(), n);
                    n
                }
            };
            if next == Formula::FALSE {
                return;
            }
            b.lits.sort_unstable();
            out.push(Cover {
                lits: b.lits,
                next,
                pending,
                strong: b.strong,
            });
            return;
        };
        let f = b.todo.swap_remove(pos);
        if b.old.contains(&f) {
            continue;
        }
        b.old.push(f);
        let node = match arena.node(f) {
            // Without copying the operands.
            Node::And(xs) => {
                b.todo.extend_from_slice(xs);
                continue;
            }
            n => n.clone(),
        };
        match node {
            Node::True => {}
            Node::False => return,
            Node::Atom(_) => {
                if !add_lit(&mut b.lits, f, true) {
                    return;
                }
            }
            ref n if n.is_past_operator() => {
                if !add_lit(&mut b.lits, f, true) {
                    return;
                }
            }
            Node::Not(g) => {
                if !add_lit(&mut b.lits, g, false) {
                    return;
                }
            }
            Node::And(_) => unreachable!("handled above"),
            Node::Next(a) => b.next.push(a),
            Node::StrongNext(a) => {
                b.next.push(a);
                b.strong = true;
            }
            Node::Globally(a) => {
                b.todo.push(a);
                b.next.push(f);
            }
            Node::Or(xs) => {
                // One copy per disjunct but the last, which continues with this branch.
                let Some((&last, init)) = xs.split_last() else {
                    return;
                };
                for &x in init {
                    let mut c = b.clone();
                    c.todo.push(x);
                    expand(arena, c, out, memo);
                }
                b.todo.push(last);
            }
            Node::Finally(a) => {
                b.evs.push(f);
                let mut now = b.clone();
                now.todo.push(a);
                expand(arena, now, out, memo);
                b.next.push(f);
                b.strong = true;
            }
            Node::Until(a, g) => {
                b.evs.push(f);
                let mut now = b.clone();
                now.todo.push(g);
                expand(arena, now, out, memo);
                b.todo.push(a);
                b.next.push(f);
                b.strong = true;
            }
            Node::Release(a, g) => {
                let mut now = b.clone();
                now.todo.push(a);
                now.todo.push(g);
                expand(arena, now, out, memo);
                b.todo.push(g);
                b.next.push(f);
            }
            other => unreachable!("not in negation normal form: {other:?}"),
        }
    }
}

/// Adds a literal; false on a contradiction.
fn add_lit(lits: &mut Vec<(Formula, bool)>, f: Formula, v: bool) -> bool {
    match lits.iter().find(|l| l.0 == f) {
        Some(l) => l.1 == v,
        None => {
            lits.push((f, v));
            true
        }
    }
}

/// `a` subsumes `b`: every literal, obligation and pending eventuality of `a` is in `b`.
fn subsumes(arena: &Arena, a: &Cover, b: &Cover) -> bool {
    if a.strong && !b.strong {
        return false;
    }
    if !a.lits.iter().all(|l| b.lits.binary_search(l).is_ok()) {
        return false;
    }
    if !a.pending.iter().all(|p| b.pending.binary_search(p).is_ok()) {
        return false;
    }
    let conj = |f: Formula| -> Vec<Formula> {
        match arena.node(f) {
            Node::And(xs) => xs.to_vec(),
            Node::True => Vec::new(),
            _ => vec![f],
        }
    };
    let (na, nb) = (conj(a.next), conj(b.next));
    na.iter().all(|x| nb.binary_search(x).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn petgraph_tarjan_orders_sinks_first() {
        // The emptiness check relies on this order (an SCC after every SCC it reaches).
        let g: DiGraph<(), (), usize> = DiGraph::from_edges([(0, 1), (1, 2), (2, 1), (2, 3)]);
        let sccs: Vec<Vec<usize>> = petgraph::algo::tarjan_scc(&g)
            .into_iter()
            .map(|c| c.into_iter().map(NodeIndex::index).collect())
            .collect();
        assert_eq!(sccs.len(), 3);
        assert_eq!(sccs[0], vec![3]);
        let mut mid = sccs[1].clone();
        mid.sort();
        assert_eq!(mid, vec![1, 2]);
        assert_eq!(sccs[2], vec![0]);
    }

    #[test]
    fn ltl3_verdicts_of_classic_formulas() {
        let mut arena = Arena::new();
        let a = &mut arena;
        let p = a.atom("p");
        let fp = a.finally(p);
        let np = a.not(p);
        let gnp = a.globally(np);
        let gp = a.globally(p);
        let fnp = a.finally(np);
        let gfp = a.globally(fp);
        let fgnp = {
            let g = a.globally(np);
            a.finally(g)
        };
        let mut sc = SatChecker::new(a, p);
        let bits = sc.initial_bits();
        let f1 = a.and2(fp, gnp);
        assert_eq!(sc.verdict(a, f1, &bits), Some(false));
        let f2 = a.and2(gp, fnp);
        assert_eq!(sc.verdict(a, f2, &bits), Some(false));
        let f3 = a.and2(gfp, fgnp);
        assert_eq!(sc.verdict(a, f3, &bits), Some(false));
        assert_eq!(sc.verdict(a, gfp, &bits), None);
        assert_eq!(sc.verdict(a, fp, &bits), None);
        let nfnp = a.not(fnp);
        let f4 = a.equiv(gp, nfnp);
        assert_eq!(sc.verdict(a, f4, &bits), Some(true));
        let xf = a.next(Formula::FALSE);
        let pxf = a.and2(p, xf);
        let f5 = a.finally(pxf);
        assert_eq!(sc.verdict(a, f5, &bits), Some(false));
        // In LTLf the same formula is satisfied by a trace ending with p.
        assert!(sc.fin_satisfiable(a, f5, &bits));
        assert!(!sc.fin_satisfiable(a, f1, &bits));
    }

    #[test]
    fn safety_classification() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let q = a.atom("q");
        let gp = a.globally(p);
        let fq = a.finally(q);
        let gpfq = a.and2(gp, fq);
        let mut sc = SatChecker::new(&a, gpfq);
        let bits = sc.initial_bits();
        assert!(sc.is_safety(&mut a, gp, &bits));
        assert!(!sc.is_safety(&mut a, fq, &bits));
        assert!(!sc.is_safety(&mut a, gpfq, &bits));
        let nfq = a.not(fq);
        assert!(sc.is_safety(&mut a, nfq, &bits));
        assert!(sc.is_safety(&mut a, p, &bits));
    }

    #[test]
    fn past_bits_take_part() {
        let mut a = Arena::new();
        let p = a.atom("p");
        // Y p & G !p: at the first step Y p is false.
        let yp = a.yesterday(p);
        let np = a.not(p);
        let gnp = a.globally(np);
        let f = a.and2(yp, gnp);
        let mut sc = SatChecker::new(&a, f);
        let bits = sc.initial_bits();
        assert_eq!(sc.verdict(&mut a, f, &bits), Some(false));
        // F(Y p & !p) needs p then !p: satisfiable, and G(O p -> q)-like facts.
        let ypnp = a.and2(yp, np);
        let g = a.finally(ypnp);
        let mut sc = SatChecker::new(&a, g);
        let bits = sc.initial_bits();
        assert_eq!(sc.verdict(&mut a, g, &bits), None);
        // G(Y p) is unsatisfiable (false at the first step); G(Z p) needs G p.
        let gyp = a.globally(yp);
        let mut sc = SatChecker::new(&a, gyp);
        let bits = sc.initial_bits();
        assert_eq!(sc.verdict(&mut a, gyp, &bits), Some(false));
        // H p after p held so far is pending; O p once p was seen is valid.
        let op = a.once(p);
        let mut sc = SatChecker::new(&a, op);
        let mut past = PastState::new(&a, op);
        past.step(&a, &|_s: Sym| true);
        assert_eq!(
            sc.verdict(&mut a, op, past.bits()),
            Some(true),
            "p was seen: O p holds"
        );
        let bits0 = sc.initial_bits();
        assert_eq!(sc.verdict(&mut a, op, &bits0), None);
        let fop = a.finally(op);
        let gfop = a.globally(fop);
        let mut sc = SatChecker::new(&a, gfop);
        let bits0 = sc.initial_bits();
        assert_eq!(sc.verdict(&mut a, gfop, &bits0), None);
        let bits = vec![true; sc.past_len()];
        assert_eq!(
            sc.verdict(&mut a, gfop, &bits),
            Some(true),
            "once p, always O p"
        );
    }
}
