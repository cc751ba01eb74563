//! Exploration of the progression closure with symbolic transitions.
//!
//! A state is a key `(residual, past bits, accepting)`. Its transition diagram is one
//! progression step computed symbolically: [`Builder::sprg`] follows the rules of
//! [`trac_ltl::progress::progress`] with every atom replaced by its decision diagram `p ? true :
//! false` and every connective applied leafwise (so each leaf holds exactly the formula concrete
//! progression would compute for the valuations reaching it), then the leaves are combined with
//! the diagrams of the next past bits (and, when needed, of the end-of-trace evaluation) into
//! successor keys. Only the propositions a state actually tests appear in its diagram; no step
//! enumerates valuations.

use crate::dd::{Dd, Op, Ref};
use crate::sat::{Bits, SatChecker};
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;
use trac_ltl::formula::{Arena, Formula, Node, Sym};
use trac_ltl::progress::PastState;

/// A state: residual, past bits, and whether the trace read so far is accepted (LTLf).
pub(crate) type Key = (Formula, Bits, bool);

/// Which automaton is explored.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// LTL3 verdicts: keys `(residual, masked bits, false)`.
    Ltl3,
    /// LTLf verdicts: keys `(residual, masked bits, accepting)`.
    Ltlf,
    /// The auxiliary automaton: the run without restarts, `(residual, all bits, accepting)`.
    Aux,
}

/// An explored automaton: keys and per state the transition diagram (leaves = state indices).
#[derive(Debug, Default)]
pub(crate) struct Explored {
    pub(crate) keys: Vec<Key>,
    pub(crate) roots: Vec<Ref>,
}

const TRUE_ID: u32 = 0;
const FALSE_ID: u32 = 1;

/// The cached operations of the canonical-form manager (Boolean leaves).
const CANON_NOT: Op = Op(0);
const CANON_AND: Op = Op(1);
const CANON_OR: Op = Op(2);
const CANON_XOR: Op = Op(3);
const CANON_IMPLIES: Op = Op(4);
const CANON_EQUIV: Op = Op(5);
/// The cached operations of the builder's manager (formula-id leaves).
const F_AND: Op = Op(0);
const F_OR: Op = Op(1);

/// Everything but the diagram manager (split so closures can borrow it while the manager
/// builds).
pub(crate) struct Ctx<'a> {
    pub(crate) arena: &'a mut Arena,
    pub(crate) sat: SatChecker,
    pub(crate) past_nodes: Vec<Formula>,
    past: PastState,
    /// Proposition index → symbol, and back.
    pub(crate) props: Vec<Sym>,
    var_of: HashMap<Sym, u32>,
    /// Formula ids: leaf payloads of formula-valued diagrams (0 = true, 1 = false).
    fid: Vec<Formula>,
    fidx: HashMap<Formula, u32>,
    canon: Canon,
}

/// Propositional canonical forms: a residual is a Boolean combination of atoms, past and
/// temporal subformulas of the property (progression creates no other), so its reduced ordered
/// BDD over those "variables" (in order of first use) is canonical up to propositional
/// equivalence. Without it the progression closure need not be finite: `(a xor F b) U c` piles up
/// `F b | x & (F b | y & (...))` forever. Progression and end-of-trace evaluation commute with
/// the Boolean connectives, so replacing a residual by an equivalent one changes nothing else.
#[derive(Default)]
struct Canon {
    dd: Dd,
    var_of: HashMap<Formula, u32>,
    vars: Vec<Formula>,
    to: HashMap<Formula, Ref>,
    from: HashMap<Ref, Formula>,
    memo: HashMap<Formula, Formula>,
}

fn bool_op(x: u32, y: u32, n: &Node) -> u32 {
    let (x, y) = (x == TRUE_ID, y == TRUE_ID);
    let v = match n {
        Node::And(_) => x && y,
        Node::Or(_) => x || y,
        Node::Xor(..) => x != y,
        Node::Implies(..) => !x || y,
        _ => x == y,
    };
    if v {
        TRUE_ID
    } else {
        FALSE_ID
    }
}

impl Canon {
    fn canonical(&mut self, arena: &mut Arena, f: Formula) -> Formula {
        if let Some(&g) = self.memo.get(&f) {
            return g;
        }
        let r = self.bdd_of(arena, f);
        let g = self.formula_of(arena, r);
        self.memo.insert(f, g);
        self.memo.insert(g, g);
        g
    }

    fn bdd_of(&mut self, arena: &Arena, f: Formula) -> Ref {
        if let Some(&r) = self.to.get(&f) {
            return r;
        }
        let node = arena.node(f).clone();
        let r = match &node {
            Node::True => Dd::leaf(TRUE_ID),
            Node::False => Dd::leaf(FALSE_ID),
            Node::Not(a) => {
                let a = self.bdd_of(arena, *a);
                // TRUE_ID and FALSE_ID are 0 and 1.
                self.dd
                    .apply2_cached(CANON_NOT, a, a, None, &mut |p, _| 1 - p)
            }
            Node::And(xs) | Node::Or(xs) => {
                let (op, absorb) = match node {
                    Node::And(_) => (CANON_AND, FALSE_ID),
                    _ => (CANON_OR, TRUE_ID),
                };
                // The operands first, in order (their atoms get variables in formula order),
                // then folded from the right: each operand is then combined with the diagram of
                // the operands after it, whose variables are below its own, in time
                // proportional to the new nodes (the cache answers the rest). A left fold
                // walked the whole partial diagram again at each operand, O(n²) for a
                // conjunction of n atoms (`trac check` on 1000 atoms took seconds).
                let bs: Vec<Ref> = xs.iter().map(|&x| self.bdd_of(arena, x)).collect();
                let mut acc = bs[bs.len() - 1];
                for &b in bs[..bs.len() - 1].iter().rev() {
                    acc = self
                        .dd
                        .apply2_cached(op, b, acc, Some(absorb), &mut |x, y| bool_op(x, y, &node));
                }
                acc
            }
            Node::Xor(a, b) | Node::Implies(a, b) | Node::Equiv(a, b) => {
                let (a, b) = (self.bdd_of(arena, *a), self.bdd_of(arena, *b));
                let op = match node {
                    Node::Xor(..) => CANON_XOR,
                    Node::Implies(..) => CANON_IMPLIES,
                    _ => CANON_EQUIV,
                };
                self.dd
                    .apply2_cached(op, a, b, None, &mut |x, y| bool_op(x, y, &node))
            }
            _ => {
                let v = match self.var_of.get(&f) {
                    Some(&v) => v,
                    None => {
                        let v = self.vars.len() as u32;
                        self.vars.push(f);
                        self.var_of.insert(f, v);
                        v
                    }
                };
                self.dd.mk(v, Dd::leaf(FALSE_ID), Dd::leaf(TRUE_ID))
            }
        };
        self.to.insert(f, r);
        r
    }

    fn formula_of(&mut self, arena: &mut Arena, r: Ref) -> Formula {
        if Dd::is_leaf(r) {
            return arena.constant(Dd::payload(r) == TRUE_ID);
        }
        if let Some(&f) = self.from.get(&r) {
            return f;
        }
        let (v, lo, hi) = self.dd.node(r);
        let t = self.vars[v as usize];
        let (l, h) = (self.formula_of(arena, lo), self.formula_of(arena, hi));
        let f = if l == Formula::FALSE {
            arena.and2(t, h)
        } else if h == Formula::FALSE {
            let nt = arena.not(t);
            arena.and2(nt, l)
        } else if h == Formula::TRUE {
            arena.or2(t, l)
        } else if l == Formula::TRUE {
            let nt = arena.not(t);
            arena.or2(nt, h)
        } else {
            let nt = arena.not(t);
            let (x, y) = (arena.and2(t, h), arena.and2(nt, l));
            arena.or2(x, y)
        };
        self.from.insert(r, f);
        f
    }
}

impl Ctx<'_> {
    /// The canonical form of a residual (see [`Canon`]).
    pub(crate) fn canonical(&mut self, f: Formula) -> Formula {
        self.canon.canonical(self.arena, f)
    }
}

impl Ctx<'_> {
    fn id(&mut self, f: Formula) -> u32 {
        if let Some(&i) = self.fidx.get(&f) {
            return i;
        }
        let i = self.fid.len() as u32;
        self.fid.push(f);
        self.fidx.insert(f, i);
        i
    }

    fn formula(&self, id: u32) -> Formula {
        self.fid[id as usize]
    }
}

/// The builder of one property's automata.
pub(crate) struct Builder<'a> {
    pub(crate) dd: Dd,
    pub(crate) ctx: Ctx<'a>,
    sprg_memo: HashMap<(Formula, Bits), Ref>,
    last_memo: HashMap<(Formula, Bits), Ref>,
    past_memo: HashMap<Bits, Rc<PastDds>>,
}

/// The diagrams of the past subformulas' values at the current step and of the next bits, for
/// given bits before the step.
struct PastDds {
    values: Vec<Ref>,
    next: Vec<Ref>,
}

impl<'a> Builder<'a> {
    /// A builder for `property` (which fixes the propositions, in symbol order, and the past
    /// subformulas).
    pub(crate) fn new(arena: &'a mut Arena, property: Formula) -> Builder<'a> {
        let past = PastState::new(arena, property);
        let sat = SatChecker::new(arena, property);
        let props = arena.atoms(property);
        let var_of = props
            .iter()
            .enumerate()
            .map(|(i, &s)| (s, i as u32))
            .collect();
        let mut ctx = Ctx {
            past_nodes: past.nodes().to_vec(),
            past,
            sat,
            props,
            var_of,
            fid: Vec::new(),
            fidx: HashMap::default(),
            canon: Canon::default(),
            arena,
        };
        assert_eq!(ctx.id(Formula::TRUE), TRUE_ID);
        assert_eq!(ctx.id(Formula::FALSE), FALSE_ID);
        Builder {
            dd: Dd::default(),
            ctx,
            sprg_memo: HashMap::default(),
            last_memo: HashMap::default(),
            past_memo: HashMap::default(),
        }
    }

    /// The bits before the first step.
    pub(crate) fn initial_bits(&self) -> Bits {
        self.ctx.past.bits().into()
    }

    fn bool_leaf(b: bool) -> Ref {
        Dd::leaf(if b { TRUE_ID } else { FALSE_ID })
    }

    /// A leafwise combination of formula-valued diagrams.
    fn combine(
        &mut self,
        refs: &[Ref],
        op: &mut dyn FnMut(&mut Arena, &[Formula]) -> Formula,
    ) -> Ref {
        let ctx = &mut self.ctx;
        self.dd.apply(refs, &mut |p: &[u32]| {
            let fs: Vec<Formula> = p.iter().map(|&i| ctx.formula(i)).collect();
            let r = op(ctx.arena, &fs);
            ctx.id(r)
        })
    }

    /// The leafwise conjunction (`is_and`) or disjunction of formula-valued diagrams: a fold of
    /// cached binary applies, `false` (`true`) absorbing.
    fn and_or(&mut self, refs: &[Ref], is_and: bool) -> Ref {
        let (op, absorb) = if is_and {
            (F_AND, FALSE_ID)
        } else {
            (F_OR, TRUE_ID)
        };
        let ctx = &mut self.ctx;
        let mut acc = Dd::leaf(if is_and { TRUE_ID } else { FALSE_ID });
        // Folded from the right, as `Canon::bdd_of` does: the operands' variables mostly follow
        // their order, so each apply meets the diagram of the later operands below its own
        // variables and the cache answers it (a left fold re-walked the partial product: O(n²)
        // for n conjuncts). The leaves' `and2` / `or2` are normalized, so the order does not
        // change the result.
        for &r in refs.iter().rev() {
            acc = self
                .dd
                .apply2_cached(op, r, acc, Some(absorb), &mut |x, y| {
                    let (x, y) = (ctx.formula(x), ctx.formula(y));
                    let f = if is_and {
                        ctx.arena.and2(x, y)
                    } else {
                        ctx.arena.or2(x, y)
                    };
                    ctx.id(f)
                });
            if acc == Dd::leaf(absorb) {
                break;
            }
        }
        acc
    }

    fn past_dds(&mut self, bits: &Bits) -> Rc<PastDds> {
        if let Some(p) = self.past_memo.get(bits) {
            return p.clone();
        }
        let nodes = self.ctx.past_nodes.clone();
        let mut values: Vec<Ref> = Vec::with_capacity(nodes.len());
        let mut next = Vec::with_capacity(nodes.len());
        for (i, &g) in nodes.iter().enumerate() {
            let slot = Self::bool_leaf(bits[i]);
            let node = self.ctx.arena.node(g).clone();
            let v = match node {
                Node::Yesterday(_) | Node::WeakYesterday(_) => slot,
                Node::Once(a) => {
                    let a = self.eval_state(a, &nodes, &values);
                    self.combine(&[a, slot], &mut |ar, f| ar.or2(f[0], f[1]))
                }
                Node::Historically(a) => {
                    let a = self.eval_state(a, &nodes, &values);
                    self.combine(&[a, slot], &mut |ar, f| ar.and2(f[0], f[1]))
                }
                Node::Since(a, b) => {
                    let a = self.eval_state(a, &nodes, &values);
                    let b = self.eval_state(b, &nodes, &values);
                    self.combine(&[a, b, slot], &mut |ar, f| {
                        let keep = ar.and2(f[0], f[2]);
                        ar.or2(f[1], keep)
                    })
                }
                _ => unreachable!("only past nodes are tracked"),
            };
            values.push(v);
        }
        for (i, &g) in nodes.iter().enumerate() {
            let node = self.ctx.arena.node(g).clone();
            next.push(match node {
                Node::Yesterday(a) | Node::WeakYesterday(a) => self.eval_state(a, &nodes, &values),
                _ => values[i],
            });
        }
        let p = Rc::new(PastDds { values, next });
        self.past_memo.insert(bits.clone(), p.clone());
        p
    }

    /// The diagram of a propositional / past formula at the current step (bool leaves).
    fn eval_state(&mut self, f: Formula, nodes: &[Formula], values: &[Ref]) -> Ref {
        let node = self.ctx.arena.node(f).clone();
        match node {
            Node::True | Node::False => Dd::leaf(self.ctx.id(f)),
            Node::Atom(s) => self.atom(s),
            Node::Not(a) => {
                let a = self.eval_state(a, nodes, values);
                self.combine(&[a], &mut |ar, f| ar.not(f[0]))
            }
            Node::And(xs) | Node::Or(xs) => {
                let is_and = matches!(self.ctx.arena.node(f), Node::And(_));
                let refs: Vec<Ref> = xs
                    .iter()
                    .map(|&x| self.eval_state(x, nodes, values))
                    .collect();
                self.and_or(&refs, is_and)
            }
            Node::Xor(a, b) | Node::Implies(a, b) | Node::Equiv(a, b) => {
                let n = self.ctx.arena.node(f).clone();
                let (a, b) = (
                    self.eval_state(a, nodes, values),
                    self.eval_state(b, nodes, values),
                );
                self.combine(&[a, b], &mut |ar, x| ar.rebuild(&n, x))
            }
            _ => match nodes.iter().position(|&g| g == f) {
                Some(i) if i < values.len() => values[i],
                _ => Self::bool_leaf(false),
            },
        }
    }

    fn atom(&mut self, s: Sym) -> Ref {
        let v = self.ctx.var_of[&s];
        self.dd.mk(v, Dd::leaf(FALSE_ID), Dd::leaf(TRUE_ID))
    }

    /// Symbolic progression of `f` with past bits `bits` (formula leaves). Memoized per
    /// (subformula, bits it depends on).
    fn sprg(&mut self, f: Formula, bits: &Bits, pd: &PastDds) -> Ref {
        let masked = self.ctx.sat.mask(self.ctx.arena, f, bits);
        if let Some(&r) = self.sprg_memo.get(&(f, masked.clone())) {
            return r;
        }
        let node = self.ctx.arena.node(f).clone();
        let r = match node {
            Node::True | Node::False => Dd::leaf(self.ctx.id(f)),
            Node::Atom(s) => self.atom(s),
            Node::Not(a) => {
                let a = self.sprg(a, bits, pd);
                self.combine(&[a], &mut |ar, x| ar.not(x[0]))
            }
            Node::And(ref xs) | Node::Or(ref xs) => {
                let is_and = matches!(node, Node::And(_));
                let refs: Vec<Ref> = xs.iter().map(|&x| self.sprg(x, bits, pd)).collect();
                self.and_or(&refs, is_and)
            }
            Node::Xor(a, b) | Node::Implies(a, b) | Node::Equiv(a, b) => {
                let (a, b) = (self.sprg(a, bits, pd), self.sprg(b, bits, pd));
                self.combine(&[a, b], &mut |ar, x| ar.rebuild(&node, x))
            }
            Node::Next(a) | Node::StrongNext(a) => Dd::leaf(self.ctx.id(a)),
            Node::Finally(a) => {
                let a = self.sprg(a, bits, pd);
                self.combine(&[a], &mut |ar, x| ar.or2(x[0], f))
            }
            Node::Globally(a) => {
                let a = self.sprg(a, bits, pd);
                self.combine(&[a], &mut |ar, x| ar.and2(x[0], f))
            }
            Node::Until(a, b) | Node::WeakUntil(a, b) => {
                let (pa, pb) = (self.sprg(a, bits, pd), self.sprg(b, bits, pd));
                self.combine(&[pa, pb], &mut |ar, x| {
                    if x[1] == Formula::TRUE {
                        Formula::TRUE
                    } else {
                        let keep = ar.and2(x[0], f);
                        ar.or2(x[1], keep)
                    }
                })
            }
            Node::Release(a, b) | Node::StrongRelease(a, b) => {
                let (pa, pb) = (self.sprg(a, bits, pd), self.sprg(b, bits, pd));
                self.combine(&[pa, pb], &mut |ar, x| {
                    if x[1] == Formula::FALSE {
                        Formula::FALSE
                    } else {
                        let keep = ar.or2(x[0], f);
                        ar.and2(x[1], keep)
                    }
                })
            }
            _ => self.past_value(f, pd),
        };
        self.sprg_memo.insert((f, masked), r);
        r
    }

    fn past_value(&mut self, f: Formula, pd: &PastDds) -> Ref {
        match self.ctx.past_nodes.iter().position(|&g| g == f) {
            Some(i) => pd.values[i],
            None => Self::bool_leaf(false),
        }
    }

    /// Symbolic end-of-trace evaluation ([`trac_ltl::progress::eval_last`]; bool leaves).
    fn slast(&mut self, f: Formula, bits: &Bits, pd: &PastDds) -> Ref {
        let masked = self.ctx.sat.mask(self.ctx.arena, f, bits);
        if let Some(&r) = self.last_memo.get(&(f, masked.clone())) {
            return r;
        }
        let node = self.ctx.arena.node(f).clone();
        let r = match node {
            Node::True | Node::False => Dd::leaf(self.ctx.id(f)),
            Node::Atom(s) => self.atom(s),
            Node::Not(a) => {
                let a = self.slast(a, bits, pd);
                self.combine(&[a], &mut |ar, x| ar.not(x[0]))
            }
            Node::And(ref xs) | Node::Or(ref xs) => {
                let is_and = matches!(node, Node::And(_));
                let refs: Vec<Ref> = xs.iter().map(|&x| self.slast(x, bits, pd)).collect();
                self.and_or(&refs, is_and)
            }
            Node::Xor(a, b) | Node::Implies(a, b) | Node::Equiv(a, b) => {
                let (a, b) = (self.slast(a, bits, pd), self.slast(b, bits, pd));
                self.combine(&[a, b], &mut |ar, x| ar.rebuild(&node, x))
            }
            Node::Next(_) => Self::bool_leaf(true),
            Node::StrongNext(_) => Self::bool_leaf(false),
            Node::Finally(a) | Node::Globally(a) => self.slast(a, bits, pd),
            Node::Until(_, b) | Node::Release(_, b) => self.slast(b, bits, pd),
            Node::WeakUntil(a, b) => {
                let (a, b) = (self.slast(a, bits, pd), self.slast(b, bits, pd));
                self.combine(&[a, b], &mut |ar, x| ar.or2(x[0], x[1]))
            }
            Node::StrongRelease(a, b) => {
                let (a, b) = (self.slast(a, bits, pd), self.slast(b, bits, pd));
                self.combine(&[a, b], &mut |ar, x| ar.and2(x[0], x[1]))
            }
            _ => self.past_value(f, pd),
        };
        self.last_memo.insert((f, masked), r);
        r
    }

    /// The diagram of the end-of-trace evaluation of `f` on the next step (Boolean leaves, hash
    /// consed: equal functions of the next valuation have equal references).
    pub(crate) fn last_diagram(&mut self, f: Formula, bits: &Bits) -> Ref {
        let pd = self.past_dds(bits);
        self.slast(f, bits, &pd)
    }

    /// The key of a state, with its bits masked for the main automata.
    pub(crate) fn key(&mut self, kind: Kind, f: Formula, bits: &[bool], acc: bool) -> Key {
        let f = self.ctx.canonical(f);
        match kind {
            Kind::Ltl3 => (f, self.ctx.sat.mask(self.ctx.arena, f, bits), false),
            Kind::Ltlf => (f, self.ctx.sat.mask(self.ctx.arena, f, bits), acc),
            Kind::Aux => (f, bits.into(), acc),
        }
    }

    /// Explores every state reachable from `seeds` (breadth first; seeds get the first ids).
    ///
    /// # Errors
    /// The number of states explored, once it exceeds `limit` (checked after each state's
    /// transitions, so at most one state's successors past it are built).
    pub(crate) fn explore(
        &mut self,
        kind: Kind,
        seeds: &[Key],
        limit: usize,
    ) -> Result<Explored, usize> {
        let mut ex = Explored::default();
        let mut ids: HashMap<Key, u32> = HashMap::default();
        for k in seeds {
            if !ids.contains_key(k) {
                ids.insert(k.clone(), ex.keys.len() as u32);
                ex.keys.push(k.clone());
            }
        }
        let mut i = 0;
        while i < ex.keys.len() {
            let (f, bits, _) = ex.keys[i].clone();
            let pd = self.past_dds(&bits);
            let mut refs = vec![self.sprg(f, &bits, &pd)];
            let with_acc = kind != Kind::Ltl3;
            if with_acc {
                refs.push(self.slast(f, &bits, &pd));
            }
            refs.extend(pd.next.iter().copied());
            let skip = if with_acc { 2 } else { 1 };
            let ctx = &mut self.ctx;
            let keys = &mut ex.keys;
            let root = self.dd.apply(&refs, &mut |p: &[u32]| {
                let g = ctx.formula(p[0]);
                let g = ctx.canonical(g);
                let acc = with_acc && p[1] == TRUE_ID;
                let nb: Vec<bool> = p[skip..].iter().map(|&x| x == TRUE_ID).collect();
                let key: Key = match kind {
                    Kind::Aux => (g, nb.into(), acc),
                    _ => (g, ctx.sat.mask(ctx.arena, g, &nb), acc),
                };
                match ids.get(&key) {
                    Some(&j) => j,
                    None => {
                        let j = keys.len() as u32;
                        ids.insert(key.clone(), j);
                        keys.push(key);
                        j
                    }
                }
            });
            ex.roots.push(root);
            i += 1;
            if ex.keys.len() > limit {
                return Err(ex.keys.len());
            }
        }
        Ok(ex)
    }
}
