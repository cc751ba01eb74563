//! Hash-consed LTL formulas with past-time operators.
//!
//! Every formula lives in an [`Arena`]; a [`Formula`] is a `u32` handle into it. The arena interns
//! nodes, so two structurally equal formulas always get the same handle: equality and hashing of
//! formulas are O(1). Constructors normalize as they build (see [`Arena::and`] and friends), so a
//! handle always denotes a formula in normal form.
//!
//! # Normalization
//! Only identities that hold both over infinite words (LTL) and over finite, non-empty words
//! (LTLf, with `X` read as weak next and `X[!]` as strong next) are applied, so one arena serves both
//! semantics:
//! - `&` / `|`: flattened, operands sorted by handle and deduplicated, `true`/`false` absorbed,
//!   `a & !a = false`, `a | !a = true`, a single operand is returned as is.
//! - `!true = false`, `!false = true`, `!!a = a`.
//! - `->`, `<->`, `xor`: constant folding and `a -> a = true`, `a <-> a = true`, `a xor a = false`;
//!   operands of the commutative `<->` and `xor` are sorted.
//! - `F true = true`, `F false = false`, `FF a = F a`; `G true = true`, `G false = false`,
//!   `GG a = G a`; `X true = true` (weak next), `X[!] false = false`.
//! - `U`: `a U true = true`, `a U false = false`, `false U b = b`, `true U b = F b`, `a U a = a`.
//! - `W`: `a W true = true`, `a W false = G a`, `false W b = b`, `true W b = true`, `a W a = a`.
//! - `R`: `a R true = true`, `a R false = false`, `true R b = b`, `false R b = G b`, `a R a = a`.
//! - `M`: `a M false = false`, `false M b = false`, `true M b = b`, `a M true = F a`, `a M a = a`.
//! - past: `Y false = false`, `Z true = true`, `O`/`H` of a constant is that constant, `OO a = O a`,
//!   `HH a = H a`, `a S true = true`, `a S false = false`, `false S b = b`, `true S b = O b`.
//!
//! Deliberately *not* applied: `X false = false` and `X[!] true = true` (false in LTLf at the last
//! position), and `!X a = X !a` (in LTLf the dual of weak next is strong next).

use std::collections::HashMap;
use std::fmt;

/// A handle to a formula interned in an [`Arena`]. Equal handles denote structurally equal formulas.
///
/// Handles are only meaningful together with the arena that made them.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Formula(u32);

impl Formula {
    /// The constant `true`; present in every arena at index 0.
    pub const TRUE: Formula = Formula(0);
    /// The constant `false`; present in every arena at index 1.
    pub const FALSE: Formula = Formula(1);

    /// The handle's index in its arena (dense, starting at 0).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A handle to an interned atomic-proposition name in an [`Arena`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Sym(u32);

impl Sym {
    /// The symbol's index in its arena (dense, starting at 0).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The node visits [`Arena::implies_syntactically`] may spend: enough for chains of the
/// longest bound the parser accepts ([`crate::sugar::MAX_BOUND`]) on both sides.
pub const IMPLIES_BUDGET: u32 = 8 * 1024;

/// One node of a formula. Children are handles into the same arena.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Node {
    /// `true` (also written `1`).
    True,
    /// `false` (also written `0`).
    False,
    /// An atomic proposition.
    Atom(Sym),
    /// `!a`.
    Not(Formula),
    /// `a & b & ...`: at least two operands, sorted and deduplicated.
    And(Box<[Formula]>),
    /// `a | b | ...`: at least two operands, sorted and deduplicated.
    Or(Box<[Formula]>),
    /// `a xor b` (operands sorted).
    Xor(Formula, Formula),
    /// `a -> b`.
    Implies(Formula, Formula),
    /// `a <-> b` (operands sorted).
    Equiv(Formula, Formula),
    /// `X a`: next; weak next at the end of a finite trace.
    Next(Formula),
    /// `X[!] a`: strong next.
    StrongNext(Formula),
    /// `F a`: eventually.
    Finally(Formula),
    /// `G a`: always.
    Globally(Formula),
    /// `a U b`: strong until.
    Until(Formula, Formula),
    /// `a W b`: weak until.
    WeakUntil(Formula, Formula),
    /// `a R b`: (weak) release.
    Release(Formula, Formula),
    /// `a M b`: strong release.
    StrongRelease(Formula, Formula),
    /// `Y a`: yesterday (false at the first step).
    Yesterday(Formula),
    /// `Z a`: weak yesterday (true at the first step).
    WeakYesterday(Formula),
    /// `O a`: once (at some step so far, including this one).
    Once(Formula),
    /// `H a`: historically (at every step so far, including this one).
    Historically(Formula),
    /// `a S b`: since (`b` held at some step so far and `a` at every step after it).
    Since(Formula, Formula),
}

impl Node {
    /// The node's children, left to right (none for leaves, one or two for operators, two or
    /// more for `&` / `|`).
    pub fn operands(&self) -> smallvec::SmallVec<[Formula; 2]> {
        use Node::*;
        match self {
            True | False | Atom(_) => smallvec::SmallVec::new(),
            Not(a) | Next(a) | StrongNext(a) | Finally(a) | Globally(a) | Yesterday(a)
            | WeakYesterday(a) | Once(a) | Historically(a) => smallvec::smallvec![*a],
            And(v) | Or(v) => v.iter().copied().collect(),
            Xor(a, b)
            | Implies(a, b)
            | Equiv(a, b)
            | Until(a, b)
            | WeakUntil(a, b)
            | Release(a, b)
            | StrongRelease(a, b)
            | Since(a, b) => smallvec::smallvec![*a, *b],
        }
    }

    /// True for the past-time operators `Y`, `Z`, `O`, `H`, `S`.
    pub fn is_past_operator(&self) -> bool {
        matches!(
            self,
            Node::Yesterday(_)
                | Node::WeakYesterday(_)
                | Node::Once(_)
                | Node::Historically(_)
                | Node::Since(..)
        )
    }

    /// True for the future-time operators `X`, `X[!]`, `F`, `G`, `U`, `W`, `R`, `M`.
    pub fn is_future_operator(&self) -> bool {
        matches!(
            self,
            Node::Next(_)
                | Node::StrongNext(_)
                | Node::Finally(_)
                | Node::Globally(_)
                | Node::Until(..)
                | Node::WeakUntil(..)
                | Node::Release(..)
                | Node::StrongRelease(..)
        )
    }
}

/// Facts about a formula computed once when it is interned.
#[derive(Copy, Clone, Debug, Default)]
pub struct Info {
    /// Contains a future-time operator.
    pub has_future: bool,
    /// Contains a past-time operator.
    pub has_past: bool,
    /// Number of nodes in the formula's tree (shared subtrees counted each time), saturating.
    pub size: u32,
}

pub use trac_core::names::{instantiate_name, split_atom_name, AtomName};

/// An interner of formulas and atomic-proposition names.
///
/// Memory: one `Node` plus one `Info` per distinct formula ever built, never freed; build a fresh
/// arena per spec if that matters.
#[derive(Clone)]
pub struct Arena {
    nodes: Vec<Node>,
    info: Vec<Info>,
    table: HashMap<Node, Formula>,
    syms: Vec<AtomName>,
    sym_table: HashMap<String, Sym>,
    /// Formulas built as windowed counts (`count[w](body) >= k`), so that the printer can
    /// write them so: `f ↦ (body, w, k)` (see [`Arena::note_window`]).
    windows: HashMap<Formula, (Formula, u32, u32)>,
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("formulas", &self.nodes.len())
            .field("atoms", &self.syms.len())
            .finish()
    }
}

impl Arena {
    /// An arena holding only `true` ([`Formula::TRUE`]) and `false` ([`Formula::FALSE`]).
    pub fn new() -> Arena {
        let mut a = Arena {
            nodes: Vec::new(),
            info: Vec::new(),
            table: HashMap::new(),
            syms: Vec::new(),
            sym_table: HashMap::new(),
            windows: HashMap::new(),
        };
        let t = a.intern(Node::True);
        let f = a.intern(Node::False);
        debug_assert_eq!((t, f), (Formula::TRUE, Formula::FALSE));
        a
    }

    /// The node behind a handle. Panics if the handle is from another, larger arena.
    pub fn node(&self, f: Formula) -> &Node {
        &self.nodes[f.index()]
    }

    /// Facts computed when the formula was interned.
    pub fn info(&self, f: Formula) -> Info {
        self.info[f.index()]
    }

    /// Number of distinct formulas interned so far.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: an arena holds at least `true` and `false`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The name of an interned atomic proposition.
    pub fn sym_name(&self, s: Sym) -> &str {
        &self.syms[s.index()].name
    }

    /// The name of an interned atomic proposition, split into base and parameter.
    pub fn sym_parts(&self, s: Sym) -> &AtomName {
        &self.syms[s.index()]
    }

    /// The symbol for a name, interning it if new.
    pub fn sym(&mut self, name: &str) -> Sym {
        if let Some(&s) = self.sym_table.get(name) {
            return s;
        }
        let s = Sym(self.syms.len() as u32);
        self.syms.push(AtomName::parse(name));
        self.sym_table.insert(name.to_string(), s);
        s
    }

    /// The symbol for a name if it was interned before.
    pub fn lookup_sym(&self, name: &str) -> Option<Sym> {
        self.sym_table.get(name).copied()
    }

    /// Records that `f` is `count[w](body) >= k` (`body` held at at least `k` of the last `w`
    /// steps), as `crate::sugar::at_least` built it. Only the printer reads this: the
    /// expansion has no other shape to recognize it by. [`Arena::map_bottom_up`] (hence
    /// instantiation) carries the note over to the rebuilt formula.
    pub fn note_window(&mut self, f: Formula, body: Formula, w: u32, k: u32) {
        self.windows.insert(f, (body, w, k));
    }

    /// The `(body, w, k)` noted for `f` by [`Arena::note_window`], if any.
    pub fn window_of(&self, f: Formula) -> Option<(Formula, u32, u32)> {
        self.windows.get(&f).copied()
    }

    /// Number of interned atomic-proposition names.
    pub fn sym_count(&self) -> usize {
        self.syms.len()
    }

    fn intern(&mut self, node: Node) -> Formula {
        if let Some(&f) = self.table.get(&node) {
            return f;
        }
        let mut info = Info {
            has_future: node.is_future_operator(),
            has_past: node.is_past_operator(),
            size: 1,
        };
        for c in node.operands() {
            let ci = self.info[c.index()];
            info.has_future |= ci.has_future;
            info.has_past |= ci.has_past;
            info.size = info.size.saturating_add(ci.size);
        }
        let f = Formula(self.nodes.len() as u32);
        self.nodes.push(node.clone());
        self.info.push(info);
        self.table.insert(node, f);
        f
    }

    /// `true` or `false`.
    pub fn constant(&self, b: bool) -> Formula {
        if b {
            Formula::TRUE
        } else {
            Formula::FALSE
        }
    }

    /// The atomic proposition `name` (any string; the printer quotes it when needed).
    pub fn atom(&mut self, name: &str) -> Formula {
        let s = self.sym(name);
        self.intern(Node::Atom(s))
    }

    /// The atomic proposition for an interned symbol.
    pub fn atom_sym(&mut self, s: Sym) -> Formula {
        self.intern(Node::Atom(s))
    }

    /// `!a`, with `!true = false`, `!false = true`, `!!a = a`.
    pub fn not(&mut self, a: Formula) -> Formula {
        match self.node(a) {
            Node::True => Formula::FALSE,
            Node::False => Formula::TRUE,
            Node::Not(b) => *b,
            _ => self.intern(Node::Not(a)),
        }
    }

    fn nary(&mut self, is_and: bool, ops: impl IntoIterator<Item = Formula>) -> Formula {
        let (unit, zero) = if is_and {
            (Formula::TRUE, Formula::FALSE)
        } else {
            (Formula::FALSE, Formula::TRUE)
        };
        let mut flat: Vec<Formula> = Vec::new();
        for f in ops {
            if f == zero {
                return zero;
            }
            if f == unit {
                continue;
            }
            match self.node(f) {
                Node::And(v) if is_and => flat.extend_from_slice(v),
                Node::Or(v) if !is_and => flat.extend_from_slice(v),
                _ => flat.push(f),
            }
        }
        flat.sort_unstable();
        flat.dedup();
        // a & !a = false, a | !a = true.
        for &f in &flat {
            if let Node::Not(inner) = self.node(f) {
                if flat.binary_search(inner).is_ok() {
                    return zero;
                }
            }
        }
        self.drop_subsumed(is_and, &mut flat);
        match flat.len() {
            0 => unit,
            1 => flat[0],
            _ => {
                let b = flat.into_boxed_slice();
                self.intern(if is_and { Node::And(b) } else { Node::Or(b) })
            }
        }
    }

    /// Drops from the sorted operands of a conjunction the operands another one implies (of a
    /// disjunction: the operands that imply another), by the syntactic check
    /// [`Arena::implies_syntactically`].
    ///
    /// Why: the expansion of a bounded operator is a chain `q | X(q | X(…))`, and progressing
    /// `G(p -> F[1:m] q)` leaves one chain per pending deadline. Without this, the states of its
    /// monitor are the *sets* of pending deadlines (about 2^m progression formulas, which the
    /// compiler enumerates before minimizing: `m = 20` did not compile in minutes); the earliest
    /// deadline implies the later ones, so keeping it alone leaves `m + 1` states. Only operands
    /// with a next-step chain (`X`, `X[!]`, or `&`/`|` with such a member) are compared, so the
    /// formulas without bounded operators pay one scan. O(k² · chain length) for k such
    /// operands.
    fn drop_subsumed(&self, is_and: bool, flat: &mut Vec<Formula>) {
        let chains: Vec<usize> = (0..flat.len())
            .filter(|&i| self.has_next_member(flat[i]))
            .collect();
        if chains.len() < 2 {
            return;
        }
        let mut gone = vec![false; flat.len()];
        for (x, &i) in chains.iter().enumerate() {
            for &j in &chains[x + 1..] {
                if gone[i] || gone[j] {
                    continue;
                }
                // In a conjunction the weaker operand goes; in a disjunction the stronger.
                let (a, b) = (flat[i], flat[j]);
                if self.implies_syntactically(a, b) {
                    gone[if is_and { j } else { i }] = true;
                } else if self.implies_syntactically(b, a) {
                    gone[if is_and { i } else { j }] = true;
                }
            }
        }
        let mut k = 0;
        flat.retain(|_| {
            k += 1;
            !gone[k - 1]
        });
    }

    /// Whether `f` is `X a`, `X[!] a`, or a conjunction or disjunction with such an operand.
    fn has_next_member(&self, f: Formula) -> bool {
        let is_next = |g: &Formula| matches!(self.node(*g), Node::Next(_) | Node::StrongNext(_));
        match self.node(f) {
            Node::Next(_) | Node::StrongNext(_) => true,
            Node::And(v) | Node::Or(v) => v.iter().any(is_next),
            _ => false,
        }
    }

    /// A sound, incomplete syntactic check that `a` implies `b` (on every trace, finite or
    /// infinite): equality, `false`/`true`, an operand of a conjunction `a` or of a disjunction
    /// `b`, every operand of a disjunction `a` (of a conjunction `b`), and `X a' → X b'`
    /// (`X[!] a' → X b'`, `X[!] a' → X[!] b'`) when `a' → b'`, as both next operators are
    /// monotone. Bounded by a budget of [`IMPLIES_BUDGET`] node visits; `false` when spent.
    pub fn implies_syntactically(&self, a: Formula, b: Formula) -> bool {
        let mut budget = IMPLIES_BUDGET;
        self.implies_within(a, b, &mut budget)
    }

    fn implies_within(&self, a: Formula, b: Formula, budget: &mut u32) -> bool {
        if a == b || b == Formula::TRUE || a == Formula::FALSE {
            return true;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        match (self.node(a), self.node(b)) {
            (Node::Next(x), Node::Next(y))
            | (Node::StrongNext(x), Node::StrongNext(y))
            | (Node::StrongNext(x), Node::Next(y)) => return self.implies_within(*x, *y, budget),
            _ => {}
        }
        if let Node::Or(v) = self.node(b) {
            if v.binary_search(&a).is_ok() {
                return true;
            }
        }
        if let Node::And(v) = self.node(a) {
            if v.binary_search(&b).is_ok() {
                return true;
            }
        }
        if let Node::Or(v) = self.node(a) {
            return v.iter().all(|&x| self.implies_within(x, b, budget));
        }
        if let Node::And(v) = self.node(b) {
            return v.iter().all(|&y| self.implies_within(a, y, budget));
        }
        if let Node::Or(v) = self.node(b) {
            if v.iter().any(|&y| self.implies_within(a, y, budget)) {
                return true;
            }
        }
        if let Node::And(v) = self.node(a) {
            return v.iter().any(|&x| self.implies_within(x, b, budget));
        }
        false
    }

    /// The conjunction of the operands (`true` for none), normalized.
    pub fn and(&mut self, ops: impl IntoIterator<Item = Formula>) -> Formula {
        self.nary(true, ops)
    }

    /// The disjunction of the operands (`false` for none), normalized.
    pub fn or(&mut self, ops: impl IntoIterator<Item = Formula>) -> Formula {
        self.nary(false, ops)
    }

    /// `a & b`.
    pub fn and2(&mut self, a: Formula, b: Formula) -> Formula {
        self.nary(true, [a, b])
    }

    /// `a | b`.
    pub fn or2(&mut self, a: Formula, b: Formula) -> Formula {
        self.nary(false, [a, b])
    }

    /// `a -> b`.
    pub fn implies(&mut self, a: Formula, b: Formula) -> Formula {
        if a == Formula::TRUE {
            return b;
        }
        if a == Formula::FALSE || b == Formula::TRUE || a == b {
            return Formula::TRUE;
        }
        if b == Formula::FALSE {
            return self.not(a);
        }
        self.intern(Node::Implies(a, b))
    }

    /// `a <-> b`.
    pub fn equiv(&mut self, a: Formula, b: Formula) -> Formula {
        if a == b {
            return Formula::TRUE;
        }
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        // Constants have the lowest handles, so after sorting they are on the left.
        match a {
            Formula::TRUE => b,
            Formula::FALSE => self.not(b),
            _ => {
                if self.not(a) == b {
                    return Formula::FALSE;
                }
                self.intern(Node::Equiv(a, b))
            }
        }
    }

    /// `a xor b`.
    pub fn xor(&mut self, a: Formula, b: Formula) -> Formula {
        if a == b {
            return Formula::FALSE;
        }
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        match a {
            Formula::FALSE => b,
            Formula::TRUE => self.not(b),
            _ => {
                if self.not(a) == b {
                    return Formula::TRUE;
                }
                self.intern(Node::Xor(a, b))
            }
        }
    }

    /// `X a` (weak next at the end of a finite trace); `X true = true`.
    pub fn next(&mut self, a: Formula) -> Formula {
        if a == Formula::TRUE {
            return a;
        }
        self.intern(Node::Next(a))
    }

    /// `X[!] a` (strong next); `X[!] false = false`.
    pub fn strong_next(&mut self, a: Formula) -> Formula {
        if a == Formula::FALSE {
            return a;
        }
        self.intern(Node::StrongNext(a))
    }

    /// `F a`, with `F true = true`, `F false = false`, `FF a = F a`.
    pub fn finally(&mut self, a: Formula) -> Formula {
        match self.node(a) {
            Node::True | Node::False | Node::Finally(_) => a,
            _ => self.intern(Node::Finally(a)),
        }
    }

    /// `G a`, with `G true = true`, `G false = false`, `GG a = G a`.
    pub fn globally(&mut self, a: Formula) -> Formula {
        match self.node(a) {
            Node::True | Node::False | Node::Globally(_) => a,
            _ => self.intern(Node::Globally(a)),
        }
    }

    /// `a U b`.
    pub fn until(&mut self, a: Formula, b: Formula) -> Formula {
        if b == Formula::TRUE || b == Formula::FALSE || a == Formula::FALSE || a == b {
            return b;
        }
        if a == Formula::TRUE {
            return self.finally(b);
        }
        self.intern(Node::Until(a, b))
    }

    /// `a W b`.
    pub fn weak_until(&mut self, a: Formula, b: Formula) -> Formula {
        if b == Formula::TRUE || a == Formula::FALSE || a == b {
            return b;
        }
        if a == Formula::TRUE {
            return Formula::TRUE;
        }
        if b == Formula::FALSE {
            return self.globally(a);
        }
        self.intern(Node::WeakUntil(a, b))
    }

    /// `a R b`.
    pub fn release(&mut self, a: Formula, b: Formula) -> Formula {
        if b == Formula::TRUE || b == Formula::FALSE || a == Formula::TRUE || a == b {
            return b;
        }
        if a == Formula::FALSE {
            return self.globally(b);
        }
        self.intern(Node::Release(a, b))
    }

    /// `a M b`.
    pub fn strong_release(&mut self, a: Formula, b: Formula) -> Formula {
        if b == Formula::FALSE || a == Formula::FALSE {
            return Formula::FALSE;
        }
        if a == Formula::TRUE || a == b {
            return b;
        }
        if b == Formula::TRUE {
            return self.finally(a);
        }
        self.intern(Node::StrongRelease(a, b))
    }

    /// `Y a` (false at the first step); `Y false = false`.
    pub fn yesterday(&mut self, a: Formula) -> Formula {
        if a == Formula::FALSE {
            return a;
        }
        self.intern(Node::Yesterday(a))
    }

    /// `Z a` (true at the first step); `Z true = true`.
    pub fn weak_yesterday(&mut self, a: Formula) -> Formula {
        if a == Formula::TRUE {
            return a;
        }
        self.intern(Node::WeakYesterday(a))
    }

    /// `O a`, with `O` of a constant the constant and `OO a = O a`.
    pub fn once(&mut self, a: Formula) -> Formula {
        match self.node(a) {
            Node::True | Node::False | Node::Once(_) => a,
            _ => self.intern(Node::Once(a)),
        }
    }

    /// `H a`, with `H` of a constant the constant and `HH a = H a`.
    pub fn historically(&mut self, a: Formula) -> Formula {
        match self.node(a) {
            Node::True | Node::False | Node::Historically(_) => a,
            _ => self.intern(Node::Historically(a)),
        }
    }

    /// `a S b`.
    pub fn since(&mut self, a: Formula, b: Formula) -> Formula {
        if b == Formula::TRUE || b == Formula::FALSE || a == Formula::FALSE || a == b {
            return b;
        }
        if a == Formula::TRUE {
            return self.once(b);
        }
        self.intern(Node::Since(a, b))
    }

    /// Rebuilds `node` with new operands through the normalizing constructors.
    ///
    /// `ops` must have the arity of `node` (any length for `&` / `|`; ignored for leaves).
    pub fn rebuild(&mut self, node: &Node, ops: &[Formula]) -> Formula {
        use Node::*;
        match node {
            True => Formula::TRUE,
            False => Formula::FALSE,
            Atom(s) => self.atom_sym(*s),
            Not(_) => self.not(ops[0]),
            And(_) => self.and(ops.iter().copied()),
            Or(_) => self.or(ops.iter().copied()),
            Xor(..) => self.xor(ops[0], ops[1]),
            Implies(..) => self.implies(ops[0], ops[1]),
            Equiv(..) => self.equiv(ops[0], ops[1]),
            Next(_) => self.next(ops[0]),
            StrongNext(_) => self.strong_next(ops[0]),
            Finally(_) => self.finally(ops[0]),
            Globally(_) => self.globally(ops[0]),
            Until(..) => self.until(ops[0], ops[1]),
            WeakUntil(..) => self.weak_until(ops[0], ops[1]),
            Release(..) => self.release(ops[0], ops[1]),
            StrongRelease(..) => self.strong_release(ops[0], ops[1]),
            Yesterday(_) => self.yesterday(ops[0]),
            WeakYesterday(_) => self.weak_yesterday(ops[0]),
            Once(_) => self.once(ops[0]),
            Historically(_) => self.historically(ops[0]),
            Since(..) => self.since(ops[0], ops[1]),
        }
    }

    /// Applies `f` bottom-up to every node of `root`, rebuilding through the normalizing
    /// constructors; `f` sees each node after its operands were mapped and may replace it.
    /// Shared subformulas are visited once. O(size of the DAG).
    pub fn map_bottom_up(
        &mut self,
        root: Formula,
        f: &mut dyn FnMut(&mut Arena, Formula) -> Formula,
    ) -> Formula {
        let mut memo: HashMap<Formula, Formula> = HashMap::new();
        self.map_rec(root, f, &mut memo)
    }

    fn map_rec(
        &mut self,
        x: Formula,
        f: &mut dyn FnMut(&mut Arena, Formula) -> Formula,
        memo: &mut HashMap<Formula, Formula>,
    ) -> Formula {
        if let Some(&r) = memo.get(&x) {
            return r;
        }
        let node = self.node(x).clone();
        let ops = node.operands();
        let mapped: smallvec::SmallVec<[Formula; 2]> =
            ops.iter().map(|&c| self.map_rec(c, f, memo)).collect();
        let rebuilt = if mapped == ops {
            x
        } else {
            self.rebuild(&node, &mapped)
        };
        let r = f(self, rebuilt);
        memo.insert(x, r);
        if let Some((body, w, k)) = self.window_of(x) {
            if let Some(&b) = memo.get(&body) {
                if r != x {
                    self.note_window(r, b, w, k);
                }
            }
        }
        r
    }

    /// The atomic propositions occurring in `f`, sorted by symbol, without duplicates.
    pub fn atoms(&self, f: Formula) -> Vec<Sym> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![f];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            let n = self.node(x);
            if let Node::Atom(s) = n {
                out.push(*s);
            }
            stack.extend(n.operands());
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every distinct subformula of `f` (including `f`), children before parents.
    pub fn subformulas_postorder(&self, f: Formula) -> Vec<Formula> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        self.post_rec(f, &mut seen, &mut out);
        out
    }

    fn post_rec(
        &self,
        f: Formula,
        seen: &mut std::collections::HashSet<Formula>,
        out: &mut Vec<Formula>,
    ) {
        if !seen.insert(f) {
            return;
        }
        for c in self.node(f).operands() {
            self.post_rec(c, seen, out);
        }
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_consing_shares_equal_formulas() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let q = a.atom("q");
        let x = a.and2(p, q);
        let y = a.and2(q, p);
        assert_eq!(x, y);
        let fx = a.finally(x);
        let fy = a.finally(y);
        assert_eq!(fx, fy);
        assert_ne!(fx, x);
    }

    #[test]
    fn normalization_identities() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let q = a.atom("q");
        let np = a.not(p);
        assert_eq!(a.not(np), p);
        assert_eq!(a.and2(p, np), Formula::FALSE);
        assert_eq!(a.or2(p, np), Formula::TRUE);
        let pq = a.and2(p, q);
        let nested = a.and2(pq, p);
        assert_eq!(nested, pq);
        let gp = a.globally(p);
        assert_eq!(a.globally(gp), gp);
        let fp = a.finally(p);
        assert_eq!(a.finally(fp), fp);
        assert_eq!(a.until(Formula::TRUE, p), fp);
        assert_eq!(a.weak_until(p, Formula::FALSE), gp);
        assert_eq!(a.release(Formula::FALSE, p), gp);
        assert_eq!(a.strong_release(p, Formula::TRUE), fp);
        let xf = a.next(Formula::FALSE);
        assert_ne!(xf, Formula::FALSE, "X false is not false in LTLf");
        assert_eq!(a.implies(p, Formula::FALSE), np);
        assert_eq!(a.equiv(Formula::FALSE, p), np);
        assert_eq!(a.xor(p, np), Formula::TRUE);
    }

    #[test]
    fn atom_names_split_into_base_and_parameter() {
        let cases: [(&str, Option<(&str, &str)>); 7] = [
            ("take(knife)", Some(("take", "knife"))),
            ("take(red hot pepper)", Some(("take", "red hot pepper"))),
            ("f()", Some(("f", ""))),
            ("look", None),
            ("(x)", None),
            ("a(b(c))", None),
            ("a(b", None),
        ];
        for (name, expected) in cases {
            assert_eq!(split_atom_name(name), expected, "{name}");
            let parts = AtomName::parse(name);
            assert_eq!(parts.arg.as_deref(), expected.map(|e| e.1), "{name}");
            assert_eq!(parts.base, expected.map_or(name, |e| e.0), "{name}");
        }
        assert_eq!(
            instantiate_name("take(item)", "item", "knife"),
            "take(knife)"
        );
        assert_eq!(
            instantiate_name("take(fork)", "item", "knife"),
            "take(fork)"
        );
        assert_eq!(instantiate_name("look", "item", "knife"), "look");
    }

    #[test]
    fn instantiate_replaces_only_the_variable() {
        let mut a = Arena::new();
        let t = a.atom("take(item)");
        let e = a.atom("examine(item)");
        let l = a.atom("look");
        let xe = a.next(e);
        let imp = a.implies(t, xe);
        let body = a.and2(imp, l);
        let g = a.globally(body);
        let gi = a.instantiate(g, "item", "knife");
        let t2 = a.atom("take(knife)");
        let e2 = a.atom("examine(knife)");
        let xe2 = a.next(e2);
        let imp2 = a.implies(t2, xe2);
        let body2 = a.and2(imp2, l);
        assert_eq!(gi, a.globally(body2));
    }
}
