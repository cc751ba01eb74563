//! LTL progression with past-time subformulas, and finite-trace evaluation.
//!
//! # Progression
//! [`progress`] computes `prg(φ, σ)` of Bacchus & Kabanza, "Using temporal logics to express
//! search control knowledge for planning", AIJ 116 (2000), §4.1: the formula that the rest of the
//! trace must satisfy after the step `σ`. The rules (with `s` = the current step):
//!
//! | φ | prg(φ, σ) |
//! |---|---|
//! | `p` | `true` iff `p ∈ σ` |
//! | `!a`, `a & b`, `a \| b`, `->`, `<->`, `xor` | the same connective over the progressed operands |
//! | `X a`, `X[!] a` | `a` |
//! | `F a` | `prg(a) \| F a` |
//! | `G a` | `prg(a) & G a` |
//! | `a U b` | `prg(b) \| (prg(a) & a U b)` |
//! | `a W b` | `prg(b) \| (prg(a) & a W b)` |
//! | `a R b` | `prg(b) & (prg(a) \| a R b)` |
//! | `a M b` | `prg(b) & (prg(a) \| a M b)` |
//! | past subformula `ψ` | `true` iff `ψ` holds at step `s` ([`PastState`]) |
//!
//! Progression never creates past subformulas, so every past node in a residual is a subformula of
//! the original property: a [`PastState`] built once from the property evaluates all of them.
//!
//! # Past time
//! Past operators follow NuSMV: `Y a` (false at the first step), `Z a` (true at the first step),
//! `O a`, `H a` and `a S b`, all including the current step. A past operator may contain only
//! propositional and past formulas ([`validate`] rejects `O F a`), the usual restriction of
//! "past-time inside future-time" monitoring; each past subformula costs one bit of state.
//!
//! # End of a finite trace (LTLf)
//! [`eval_last`] evaluates a formula at the *last* position of a finite trace with the LTLf
//! semantics of De Giacomo & Vardi, IJCAI 2013: `X a` is read as **weak next** (true at the last
//! position), `X[!] a` as strong next (false), `F a`/`a U b`/`a M b` need their operand now, and
//! `G a`/`a W b`/`a R b` hold when their operand holds now. The LTLf verdict of a trace
//! `σ1..σn` for φ is `eval_last(prg(..prg(φ, σ1).., σn-1), σn)`. [`eval_empty`] gives the convention
//! for an empty trace: weak operators (`X`, `G`, `W`, `R`, `Z`, `H`) hold, strong ones and atoms
//! do not.

use crate::formula::{Arena, Formula, Node, Sym};
use std::collections::HashMap;
use trac_core::Verdict;

/// The verdict a residual formula shows by itself (`Verdict::of_residual(f)` with this trait in
/// scope): ⊤ for `true`, ⊥ for `false`, ? otherwise, as plain progression decides.
pub trait ResidualVerdict {
    /// The verdict of the residual `f`.
    fn of_residual(f: Formula) -> Self;
}

impl ResidualVerdict for Verdict {
    fn of_residual(f: Formula) -> Verdict {
        match f {
            Formula::TRUE => Verdict::Satisfied,
            Formula::FALSE => Verdict::Violated,
            _ => Verdict::Pending,
        }
    }
}

/// The truth of atomic propositions at one step (a valuation): `holds(s)` is true iff the atomic
/// proposition `s` is in the step's label set.
pub trait Valuation {
    /// Whether `s` holds at this step.
    fn holds(&self, s: Sym) -> bool;
}

impl<F: Fn(Sym) -> bool> Valuation for F {
    fn holds(&self, s: Sym) -> bool {
        self(s)
    }
}

/// A past-time operator of a formula contains a future-time one (see [`validate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FutureInPast {
    operator: &'static str,
}

impl FutureInPast {
    /// The past operator that contains a future one: `Y`, `Z`, `O`, `H` or `S`.
    pub fn operator(&self) -> &'static str {
        self.operator
    }
}

impl std::fmt::Display for FutureInPast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a past-time operator ({}) may not contain a future-time operator (X, F, G, U, W, R, M)",
            self.operator
        )
    }
}

impl std::error::Error for FutureInPast {}

/// Checks that no past operator of `f` contains a future operator.
///
/// # Errors
/// [`FutureInPast`], naming the offending past subformula's operator.
pub fn validate(arena: &Arena, f: Formula) -> Result<(), FutureInPast> {
    for g in arena.subformulas_postorder(f) {
        let node = arena.node(g);
        if node.is_past_operator() && node.operands().iter().any(|&c| arena.info(c).has_future) {
            return Err(FutureInPast {
                operator: past_name(node),
            });
        }
    }
    Ok(())
}

fn past_name(n: &Node) -> &'static str {
    match n {
        Node::Yesterday(_) => "Y",
        Node::WeakYesterday(_) => "Z",
        Node::Once(_) => "O",
        Node::Historically(_) => "H",
        Node::Since(..) => "S",
        _ => "?",
    }
}

/// The state of the past-time subformulas of one property: one bit per past operator node.
///
/// Call [`PastState::step`] once per trace step, before progressing with [`progress`]; it computes
/// the value of every past subformula at that step. Cost O(number of past nodes + their operands)
/// per step.
#[derive(Clone, Debug)]
pub struct PastState {
    /// Past-operator nodes, children before parents.
    nodes: Vec<Formula>,
    index: HashMap<Formula, usize>,
    /// Per node: for `Y`/`Z`, the operand's value at the previous step; for `O`/`H`/`S`, the
    /// node's own value at the previous step.
    slots: Vec<bool>,
    /// Per node: the value at the current step (valid after `step`).
    now: Vec<bool>,
}

impl PastState {
    /// The past state of `f` before the first step. `f` should pass [`validate`].
    pub fn new(arena: &Arena, f: Formula) -> PastState {
        let nodes: Vec<Formula> = arena
            .subformulas_postorder(f)
            .into_iter()
            .filter(|&g| arena.node(g).is_past_operator())
            .collect();
        let index = nodes.iter().enumerate().map(|(i, &g)| (g, i)).collect();
        let mut s = PastState {
            slots: vec![false; nodes.len()],
            now: vec![false; nodes.len()],
            nodes,
            index,
        };
        s.reset(arena);
        s
    }

    /// Back to the state before the first step.
    pub fn reset(&mut self, arena: &Arena) {
        for (i, &g) in self.nodes.iter().enumerate() {
            // Z and H are true "before the first step"; Y, O and S false.
            self.slots[i] = matches!(
                arena.node(g),
                Node::WeakYesterday(_) | Node::Historically(_)
            );
            self.now[i] = false;
        }
    }

    /// True if the property has no past-time subformula.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The past-operator subformulas tracked, children before parents.
    pub fn nodes(&self) -> &[Formula] {
        &self.nodes
    }

    /// The state bits (one per node of [`PastState::nodes`]), for use as part of a monitor state.
    pub fn bits(&self) -> &[bool] {
        &self.slots
    }

    /// Overwrites the state bits (same length and order as [`PastState::bits`]).
    pub fn set_bits(&mut self, bits: &[bool]) {
        self.slots.copy_from_slice(bits);
    }

    /// Advances by one step with valuation `v`: afterwards [`PastState::value`] gives each past
    /// subformula's truth at this step.
    pub fn step(&mut self, arena: &Arena, v: &dyn Valuation) {
        for i in 0..self.nodes.len() {
            let g = self.nodes[i];
            let val = match arena.node(g) {
                Node::Yesterday(_) | Node::WeakYesterday(_) => self.slots[i],
                Node::Once(a) => self.eval_now(arena, *a, v) || self.slots[i],
                Node::Historically(a) => self.eval_now(arena, *a, v) && self.slots[i],
                Node::Since(a, b) => {
                    self.eval_now(arena, *b, v) || (self.eval_now(arena, *a, v) && self.slots[i])
                }
                _ => unreachable!("only past nodes are tracked"),
            };
            self.now[i] = val;
        }
        for i in 0..self.nodes.len() {
            let g = self.nodes[i];
            self.slots[i] = match arena.node(g) {
                Node::Yesterday(a) | Node::WeakYesterday(a) => self.eval_now(arena, *a, v),
                _ => self.now[i],
            };
        }
    }

    /// The value at the current step of a past subformula tracked by this state.
    pub fn value(&self, g: Formula) -> Option<bool> {
        self.index.get(&g).map(|&i| self.now[i])
    }

    /// The truth at the current step (after [`PastState::step`] with the same valuation) of a
    /// formula without future operators whose past subformulas this state tracks (`f` itself,
    /// or any subformula of the formula it was built for). O(|f|).
    pub fn eval(&self, arena: &Arena, f: Formula, v: &dyn Valuation) -> bool {
        self.eval_now(arena, f, v)
    }

    /// Evaluates a propositional/past formula at the current step (past nodes must have been
    /// computed by `step` already, which holds for operands thanks to the post-order).
    fn eval_now(&self, arena: &Arena, f: Formula, v: &dyn Valuation) -> bool {
        eval_state(arena, f, v, &|g| self.value(g))
    }
}

/// Evaluates a formula that has no future operator outside past nodes, at the current step.
fn eval_state(
    arena: &Arena,
    f: Formula,
    v: &dyn Valuation,
    past: &dyn Fn(Formula) -> Option<bool>,
) -> bool {
    match arena.node(f) {
        Node::True => true,
        Node::False => false,
        Node::Atom(s) => v.holds(*s),
        Node::Not(a) => !eval_state(arena, *a, v, past),
        Node::And(xs) => xs.iter().all(|&x| eval_state(arena, x, v, past)),
        Node::Or(xs) => xs.iter().any(|&x| eval_state(arena, x, v, past)),
        Node::Xor(a, b) => eval_state(arena, *a, v, past) != eval_state(arena, *b, v, past),
        Node::Implies(a, b) => !eval_state(arena, *a, v, past) || eval_state(arena, *b, v, past),
        Node::Equiv(a, b) => eval_state(arena, *a, v, past) == eval_state(arena, *b, v, past),
        _ => past(f).unwrap_or(false),
    }
}

/// One progression step: `prg(f, σ)` where `σ` is given by the valuation `v` and the past state
/// (already advanced to this step with [`PastState::step`]).
///
/// The result is normalized (see [`crate::formula`]), so a verdict is reached exactly when the
/// residual folds to [`Formula::TRUE`] or [`Formula::FALSE`]. Shared subformulas are progressed
/// once. Cost O(|f|) node visits plus interning.
pub fn progress(arena: &mut Arena, f: Formula, v: &dyn Valuation, past: &PastState) -> Formula {
    let mut memo = Memo::with_capacity_and_hasher(32, Default::default());
    prg(arena, f, v, past, &mut memo)
}

/// The per-call memo of [`progress`]: formula handles are small integers, so rustc-hash's Fx hash
/// hash replaces SipHash, and a first capacity avoids regrowing on typical residuals (the memo
/// was most of the cost of a progression step).
type Memo = HashMap<Formula, Formula, rustc_hash::FxBuildHasher>;

fn prg(
    arena: &mut Arena,
    f: Formula,
    v: &dyn Valuation,
    past: &PastState,
    memo: &mut Memo,
) -> Formula {
    if let Some(&r) = memo.get(&f) {
        return r;
    }
    let node = arena.node(f).clone();
    let r = match node {
        Node::True | Node::False => f,
        Node::Atom(s) => arena.constant(v.holds(s)),
        Node::Not(a) => {
            let a = prg(arena, a, v, past, memo);
            arena.not(a)
        }
        Node::And(xs) => {
            let mut out = Vec::with_capacity(xs.len());
            for &x in xs.iter() {
                let y = prg(arena, x, v, past, memo);
                if y == Formula::FALSE {
                    memo.insert(f, y);
                    return y;
                }
                out.push(y);
            }
            arena.and(out)
        }
        Node::Or(xs) => {
            let mut out = Vec::with_capacity(xs.len());
            for &x in xs.iter() {
                let y = prg(arena, x, v, past, memo);
                if y == Formula::TRUE {
                    memo.insert(f, y);
                    return y;
                }
                out.push(y);
            }
            arena.or(out)
        }
        Node::Xor(a, b) => {
            let (a, b) = (prg(arena, a, v, past, memo), prg(arena, b, v, past, memo));
            arena.xor(a, b)
        }
        Node::Implies(a, b) => {
            let (a, b) = (prg(arena, a, v, past, memo), prg(arena, b, v, past, memo));
            arena.implies(a, b)
        }
        Node::Equiv(a, b) => {
            let (a, b) = (prg(arena, a, v, past, memo), prg(arena, b, v, past, memo));
            arena.equiv(a, b)
        }
        Node::Next(a) | Node::StrongNext(a) => a,
        Node::Finally(a) => {
            let pa = prg(arena, a, v, past, memo);
            arena.or2(pa, f)
        }
        Node::Globally(a) => {
            let pa = prg(arena, a, v, past, memo);
            arena.and2(pa, f)
        }
        Node::Until(a, b) | Node::WeakUntil(a, b) => {
            let pb = prg(arena, b, v, past, memo);
            if pb == Formula::TRUE {
                Formula::TRUE
            } else {
                let pa = prg(arena, a, v, past, memo);
                let keep = arena.and2(pa, f);
                arena.or2(pb, keep)
            }
        }
        Node::Release(a, b) | Node::StrongRelease(a, b) => {
            let pb = prg(arena, b, v, past, memo);
            if pb == Formula::FALSE {
                Formula::FALSE
            } else {
                let pa = prg(arena, a, v, past, memo);
                let keep = arena.or2(pa, f);
                arena.and2(pb, keep)
            }
        }
        Node::Yesterday(_)
        | Node::WeakYesterday(_)
        | Node::Once(_)
        | Node::Historically(_)
        | Node::Since(..) => arena.constant(past.value(f).unwrap_or(false)),
    };
    memo.insert(f, r);
    r
}

/// The LTLf truth of `f` at the last position of a finite trace, where that position has
/// valuation `v` and past state `past` (already advanced to it). `X` is weak next.
pub fn eval_last(arena: &Arena, f: Formula, v: &dyn Valuation, past: &PastState) -> bool {
    let rec = |g| eval_last(arena, g, v, past);
    match arena.node(f) {
        Node::True => true,
        Node::False => false,
        Node::Atom(s) => v.holds(*s),
        Node::Not(a) => !rec(*a),
        Node::And(xs) => xs.iter().all(|&x| rec(x)),
        Node::Or(xs) => xs.iter().any(|&x| rec(x)),
        Node::Xor(a, b) => rec(*a) != rec(*b),
        Node::Implies(a, b) => !rec(*a) || rec(*b),
        Node::Equiv(a, b) => rec(*a) == rec(*b),
        Node::Next(_) => true,
        Node::StrongNext(_) => false,
        Node::Finally(a) | Node::Globally(a) => rec(*a),
        Node::Until(_, b) | Node::Release(_, b) => rec(*b),
        Node::WeakUntil(a, b) => rec(*a) || rec(*b),
        Node::StrongRelease(a, b) => rec(*a) && rec(*b),
        Node::Yesterday(_)
        | Node::WeakYesterday(_)
        | Node::Once(_)
        | Node::Historically(_)
        | Node::Since(..) => past.value(f).unwrap_or(false),
    }
}

/// The truth of `f` on the empty trace, by convention: weak operators (`X`, `G`, `W`, `R`, `Z`,
/// `H`) hold, strong ones (`X[!]`, `F`, `U`, `M`, `Y`, `O`, `S`) and atoms do not.
pub fn eval_empty(arena: &Arena, f: Formula) -> bool {
    let rec = |g| eval_empty(arena, g);
    match arena.node(f) {
        Node::True => true,
        Node::False | Node::Atom(_) => false,
        Node::Not(a) => !rec(*a),
        Node::And(xs) => xs.iter().all(|&x| rec(x)),
        Node::Or(xs) => xs.iter().any(|&x| rec(x)),
        Node::Xor(a, b) => rec(*a) != rec(*b),
        Node::Implies(a, b) => !rec(*a) || rec(*b),
        Node::Equiv(a, b) => rec(*a) == rec(*b),
        Node::Next(_) | Node::Globally(_) | Node::WeakUntil(..) | Node::Release(..) => true,
        Node::WeakYesterday(_) | Node::Historically(_) => true,
        Node::StrongNext(_) | Node::Finally(_) | Node::Until(..) | Node::StrongRelease(..) => false,
        Node::Yesterday(_) | Node::Once(_) | Node::Since(..) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(a: &mut Arena, f: Formula, trace: &[&[&str]]) -> Vec<Formula> {
        let mut past = PastState::new(a, f);
        let mut cur = f;
        let mut out = Vec::new();
        for step in trace {
            let names: Vec<String> = step.iter().map(|s| s.to_string()).collect();
            let syms: Vec<Sym> = names.iter().filter_map(|n| a.lookup_sym(n)).collect();
            let v = |s: Sym| syms.contains(&s);
            past.step(a, &v);
            cur = progress(a, cur, &v, &past);
            out.push(cur);
        }
        out
    }

    #[test]
    fn response_progression() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let q = a.atom("q");
        let xq = a.next(q);
        let imp = a.implies(p, xq);
        let g = a.globally(imp);
        let r = run(&mut a, g, &[&[], &["p"], &["q"], &["p"], &[]]);
        assert_eq!(r[0], g);
        assert_eq!(r[1], a.and2(q, g));
        assert_eq!(r[2], g);
        assert_eq!(r[4], Formula::FALSE);
    }

    #[test]
    fn until_and_release() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let q = a.atom("q");
        let u = a.until(p, q);
        assert_eq!(run(&mut a, u, &[&["p"], &["q"]])[1], Formula::TRUE);
        assert_eq!(run(&mut a, u, &[&["p"], &[]])[1], Formula::FALSE);
        let r = a.release(p, q);
        assert_eq!(run(&mut a, r, &[&["q"], &["p", "q"]])[1], Formula::TRUE);
        assert_eq!(run(&mut a, r, &[&["q"], &["p"]])[1], Formula::FALSE);
    }

    #[test]
    fn past_operators_track_history() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let q = a.atom("q");
        // G(q -> Y p): q only right after p.
        let yp = a.yesterday(p);
        let imp = a.implies(q, yp);
        let g = a.globally(imp);
        let r = run(&mut a, g, &[&["q"]]);
        assert_eq!(r[0], Formula::FALSE, "Y p is false at the first step");
        let r = run(&mut a, g, &[&["p"], &["q"], &["q"]]);
        assert_eq!(r[1], g);
        assert_eq!(r[2], Formula::FALSE);
        // G(q -> O p) and G(q -> !p S p) style.
        let op = a.once(p);
        let imp = a.implies(q, op);
        let g = a.globally(imp);
        let r = run(&mut a, g, &[&[], &["p"], &[], &["q"]]);
        assert_eq!(r[3], g);
        let r = run(&mut a, g, &[&[], &["q"]]);
        assert_eq!(r[1], Formula::FALSE);
        let np = a.not(p);
        let s = a.since(np, q);
        let ys = a.yesterday(s);
        let imp = a.implies(p, ys);
        let g = a.globally(imp);
        // p allowed only if q happened and no p since then.
        let r = run(&mut a, g, &[&["q"], &[], &["p"], &["p"]]);
        assert_eq!(r[2], g);
        assert_eq!(r[3], Formula::FALSE);
        let zp = a.weak_yesterday(p);
        let hp = a.historically(zp);
        let g = a.globally(hp);
        assert_eq!(run(&mut a, g, &[&["p"], &["p"], &[]])[2], g);
        assert_eq!(run(&mut a, g, &[&["p"], &[], &[]])[2], Formula::FALSE);
    }

    #[test]
    fn validate_rejects_future_inside_past() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let fp = a.finally(p);
        let ofp = a.once(fp);
        assert!(validate(&a, ofp).is_err());
        let op = a.once(p);
        let fop = a.finally(op);
        assert!(validate(&a, fop).is_ok());
    }

    #[test]
    fn ltlf_end_reads_x_as_weak_next() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let q = a.atom("q");
        let xq = a.next(q);
        let imp = a.implies(p, xq);
        let g = a.globally(imp);
        let past = PastState::new(&a, g);
        let vp = |s: Sym| a.sym_name(s) == "p";
        assert!(
            eval_last(&a, g, &vp, &past),
            "p at the last step: X q holds weakly"
        );
        let sxq = a.strong_next(q);
        let imp = a.implies(p, sxq);
        let g2 = a.globally(imp);
        let vp = |s: Sym| a.sym_name(s) == "p";
        assert!(!eval_last(&a, g2, &vp, &past));
        let fq = a.finally(q);
        assert!(!eval_empty(&a, fq));
        assert!(eval_empty(&a, g));
    }
}
