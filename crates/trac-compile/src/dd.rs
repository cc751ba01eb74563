//! Reduced, ordered multi-terminal decision diagrams (Bryant, "Graph-based algorithms for
//! Boolean function manipulation", IEEE TC 1986; multi-terminal: Clarke et al. 1993) over the
//! propositions of one property, hash-consed in one manager.
//!
//! A reference is either a leaf (high bit set, the low bits a payload whose meaning the caller
//! knows: a formula id, a state id, a class id) or a node index. Variables are proposition
//! indices and increase along every path.
//!
//! # Apply
//! Every combination is **binary** ([`Dd::apply2`]): Bryant's apply, memoized by the pair of
//! operands, so combining diagrams of sizes `m` and `n` costs O(m × n) at most (in practice the
//! size of the result). Operations with a fixed meaning for the manager's lifetime (the
//! conjunction and disjunction of formula ids, the Boolean connectives of [`crate::build`]'s
//! canonical forms) share one apply cache keyed by `(op, left, right)` across calls; and an
//! operand that is an *absorbing* leaf (`false` for `&`, `true` for `|`) answers at once without
//! looking at the other one. An n-ary combination ([`Dd::apply`]) is a left fold of binary
//! applies over interned tuples of payloads, then one leaf map: O(n × the sizes of the partial
//! products), where the former n-ary Shannon expansion memoized vectors of operands and only
//! stopped when all of them were leaves (exponential in the width of `a1 | … | an`).

use rustc_hash::FxHashMap as HashMap;

/// The high bit of a reference: a leaf.
pub(crate) const LEAF: u32 = 1 << 31;

/// A reference to a leaf or a node.
pub(crate) type Ref = u32;

/// An operation with a fixed meaning for the manager's lifetime, whose results are cached across
/// calls ([`Dd::apply2_cached`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Op(pub(crate) u32);

/// The manager: every node is unique (no two nodes with the same variable and children) and
/// reduced (no node with equal children), so equal functions have equal references.
#[derive(Default, Debug)]
pub(crate) struct Dd {
    nodes: Vec<(u32, Ref, Ref)>,
    unique: HashMap<(u32, Ref, Ref), Ref>,
    /// The apply cache of the operations with a fixed meaning.
    cache: HashMap<(Op, Ref, Ref), Ref>,
}

impl Dd {
    /// The leaf with payload `p`.
    pub(crate) fn leaf(p: u32) -> Ref {
        debug_assert!(p < LEAF);
        LEAF | p
    }

    /// Whether `r` is a leaf.
    pub(crate) fn is_leaf(r: Ref) -> bool {
        r & LEAF != 0
    }

    /// The payload of a leaf.
    pub(crate) fn payload(r: Ref) -> u32 {
        r & !LEAF
    }

    /// `(var, lo, hi)` of a node.
    pub(crate) fn node(&self, r: Ref) -> (u32, Ref, Ref) {
        self.nodes[r as usize]
    }

    /// The number of nodes ever made (a cost measure).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    fn var(&self, r: Ref) -> u32 {
        if Self::is_leaf(r) {
            u32::MAX
        } else {
            self.nodes[r as usize].0
        }
    }

    /// The node testing `var` with children `lo` (false) and `hi` (true), reduced and shared.
    pub(crate) fn mk(&mut self, var: u32, lo: Ref, hi: Ref) -> Ref {
        if lo == hi {
            return lo;
        }
        if let Some(&r) = self.unique.get(&(var, lo, hi)) {
            return r;
        }
        let r = self.nodes.len() as Ref;
        assert!(r < LEAF, "decision diagram too large");
        self.nodes.push((var, lo, hi));
        self.unique.insert((var, lo, hi), r);
        r
    }

    /// The cofactors of `r` on `v` (`r` itself twice if it does not test `v` at its root).
    fn cofactors(&self, r: Ref, v: u32) -> (Ref, Ref) {
        if self.var(r) == v {
            let (_, l, h) = self.node(r);
            (l, h)
        } else {
            (r, r)
        }
    }

    /// The diagram of the pointwise combination `f(payload of a, payload of b)` (Bryant's apply),
    /// memoized per call by the operand pair; if `absorb` is `Some(p)`, a leaf with payload `p`
    /// on either side is the answer (`f(p, _) = f(_, p) = p`). O(|a| × |b|) worst case.
    pub(crate) fn apply2(
        &mut self,
        a: Ref,
        b: Ref,
        absorb: Option<u32>,
        f: &mut dyn FnMut(u32, u32) -> u32,
    ) -> Ref {
        let mut memo = HashMap::default();
        self.apply2_rec(a, b, absorb, f, &mut memo)
    }

    fn apply2_rec(
        &mut self,
        a: Ref,
        b: Ref,
        absorb: Option<u32>,
        f: &mut dyn FnMut(u32, u32) -> u32,
        memo: &mut HashMap<(Ref, Ref), Ref>,
    ) -> Ref {
        if let Some(z) = absorb {
            let z = Self::leaf(z);
            if a == z || b == z {
                return z;
            }
        }
        if Self::is_leaf(a) && Self::is_leaf(b) {
            return Self::leaf(f(Self::payload(a), Self::payload(b)));
        }
        if let Some(&r) = memo.get(&(a, b)) {
            return r;
        }
        let v = self.var(a).min(self.var(b));
        let (al, ah) = self.cofactors(a, v);
        let (bl, bh) = self.cofactors(b, v);
        let l = self.apply2_rec(al, bl, absorb, f, memo);
        let h = self.apply2_rec(ah, bh, absorb, f, memo);
        let r = self.mk(v, l, h);
        memo.insert((a, b), r);
        r
    }

    /// [`Dd::apply2`] for an operation `op` whose meaning (`f` and `absorb`) is the same at every
    /// call on this manager: results are kept in the manager's apply cache, keyed by
    /// `(op, a, b)`, and shared by all later calls.
    pub(crate) fn apply2_cached(
        &mut self,
        op: Op,
        a: Ref,
        b: Ref,
        absorb: Option<u32>,
        f: &mut dyn FnMut(u32, u32) -> u32,
    ) -> Ref {
        if let Some(z) = absorb {
            let z = Self::leaf(z);
            if a == z || b == z {
                return z;
            }
        }
        if Self::is_leaf(a) && Self::is_leaf(b) {
            return Self::leaf(f(Self::payload(a), Self::payload(b)));
        }
        if let Some(&r) = self.cache.get(&(op, a, b)) {
            return r;
        }
        let v = self.var(a).min(self.var(b));
        let (al, ah) = self.cofactors(a, v);
        let (bl, bh) = self.cofactors(b, v);
        let l = self.apply2_cached(op, al, bl, absorb, f);
        let h = self.apply2_cached(op, ah, bh, absorb, f);
        let r = self.mk(v, l, h);
        self.cache.insert((op, a, b), r);
        r
    }

    /// The diagram of the pointwise combination `f(payloads of refs)`: a left fold of binary
    /// applies whose leaves are interned tuples of the payloads seen so far, then one map of the
    /// tuples through `f`. O(Σ |partial product| × |next operand|).
    pub(crate) fn apply(&mut self, refs: &[Ref], f: &mut dyn FnMut(&[u32]) -> u32) -> Ref {
        match refs {
            [] => panic!("apply needs an operand"),
            [a] => return self.map(*a, &mut |p| f(&[p]), &mut HashMap::default()),
            [a, b] => return self.apply2(*a, *b, None, &mut |x, y| f(&[x, y])),
            _ => {}
        }
        let mut tuples = Tuples::default();
        let mut acc = self.apply2(refs[0], refs[1], None, &mut |x, y| tuples.intern(&[x, y]));
        for &r in &refs[2..] {
            acc = self.apply2(acc, r, None, &mut |t, p| tuples.extend(t, p));
        }
        let mut memo = HashMap::default();
        self.map(acc, &mut |t| f(&tuples.list[t as usize]), &mut memo)
    }

    /// The diagram with every leaf payload `p` replaced by `f(p)`, memoized in `memo` (which may
    /// be shared by calls with the same `f`).
    pub(crate) fn map(
        &mut self,
        r: Ref,
        f: &mut dyn FnMut(u32) -> u32,
        memo: &mut HashMap<Ref, Ref>,
    ) -> Ref {
        if Self::is_leaf(r) {
            return Self::leaf(f(Self::payload(r)));
        }
        if let Some(&x) = memo.get(&r) {
            return x;
        }
        let (v, lo, hi) = self.node(r);
        let l = self.map(lo, f, memo);
        let h = self.map(hi, f, memo);
        let x = self.mk(v, l, h);
        memo.insert(r, x);
        x
    }

    /// The distinct leaf payloads reachable from `r`, in depth-first order (low edge first).
    pub(crate) fn leaves(&self, r: Ref) -> Vec<u32> {
        let mut out = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![r];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if Self::is_leaf(x) {
                out.push(Self::payload(x));
            } else {
                let (_, l, h) = self.node(x);
                stack.push(h);
                stack.push(l);
            }
        }
        out
    }

    /// The distinct pairs `(payload of a, payload of b)` of the leaves `a` and `b` reach on the
    /// same valuation (the successor pairs of two states). O(|a| × |b|) worst case.
    pub(crate) fn leaf_pairs(&self, a: Ref, b: Ref) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![(a, b)];
        while let Some((x, y)) = stack.pop() {
            if !seen.insert((x, y)) {
                continue;
            }
            if Self::is_leaf(x) && Self::is_leaf(y) {
                out.push((Self::payload(x), Self::payload(y)));
                continue;
            }
            let v = self.var(x).min(self.var(y));
            let (xl, xh) = self.cofactors(x, v);
            let (yl, yh) = self.cofactors(y, v);
            stack.push((xh, yh));
            stack.push((xl, yl));
        }
        out
    }
}

/// Interned tuples of payloads (the leaves of the partial products of [`Dd::apply`]).
#[derive(Default)]
struct Tuples {
    list: Vec<Box<[u32]>>,
    ids: HashMap<Box<[u32]>, u32>,
}

impl Tuples {
    fn intern(&mut self, t: &[u32]) -> u32 {
        if let Some(&i) = self.ids.get(t) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(t.into());
        self.ids.insert(t.into(), i);
        i
    }

    fn extend(&mut self, t: u32, p: u32) -> u32 {
        let mut v = self.list[t as usize].to_vec();
        v.push(p);
        self.intern(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduced_and_shared() {
        let mut dd = Dd::default();
        let a = dd.mk(0, Dd::leaf(0), Dd::leaf(1));
        let b = dd.mk(1, Dd::leaf(0), Dd::leaf(1));
        assert_eq!(dd.mk(0, Dd::leaf(0), Dd::leaf(1)), a);
        assert_eq!(dd.mk(3, a, a), a);
        // a & b with payload 1 = true.
        let and = dd.apply(&[a, b], &mut |p| p[0] & p[1]);
        let and2 = dd.apply(&[b, a], &mut |p| p[0] & p[1]);
        assert_eq!(and, and2);
        assert_eq!(dd.leaves(and), vec![0, 1]);
        let not = dd.map(and, &mut |p| 1 - p, &mut HashMap::default());
        let back = dd.map(not, &mut |p| 1 - p, &mut HashMap::default());
        assert_eq!(back, and);
    }

    /// The n-ary apply agrees with evaluation on every valuation, and a wide disjunction built
    /// by binary applies stays linear in size (one node per variable).
    #[test]
    fn n_ary_apply_is_pointwise_and_small() {
        let mut dd = Dd::default();
        let n = 12u32;
        let vars: Vec<Ref> = (0..n).map(|v| dd.mk(v, Dd::leaf(0), Dd::leaf(1))).collect();
        let before = dd.len();
        let mut or = Dd::leaf(0);
        for &v in &vars {
            or = dd.apply2_cached(Op(1), or, v, Some(1), &mut |x, y| x | y);
        }
        let mut reachable = rustc_hash::FxHashSet::default();
        let mut stack = vec![or];
        while let Some(x) = stack.pop() {
            if !Dd::is_leaf(x) && reachable.insert(x) {
                let (_, l, h) = dd.node(x);
                stack.extend([l, h]);
            }
        }
        assert_eq!(reachable.len(), n as usize, "one node per variable");
        let made = dd.len() - before;
        assert!(made <= (n * n) as usize, "quadratic at most: {made}");
        // Parity of the first three, weighted by the fourth: checks tuple order.
        let f = dd.apply(&vars[..4], &mut |p| (p[0] ^ p[1] ^ p[2]) + 2 * p[3]);
        for m in 0u32..1 << n {
            let mut r = or;
            let mut g = f;
            for x in [&mut r, &mut g] {
                while !Dd::is_leaf(*x) {
                    let (v, l, h) = dd.node(*x);
                    *x = if m >> v & 1 == 1 { h } else { l };
                }
            }
            assert_eq!(Dd::payload(r), u32::from(m != 0));
            assert_eq!(
                Dd::payload(g),
                (m & 1 ^ m >> 1 & 1 ^ m >> 2 & 1) + 2 * (m >> 3 & 1)
            );
        }
        // Absorbing leaves answer at once; cached applies agree with uncached ones.
        let z = dd.apply2_cached(Op(0), Dd::leaf(0), or, Some(0), &mut |x, y| x & y);
        assert_eq!(z, Dd::leaf(0));
        let x = dd.apply2_cached(Op(0), vars[0], vars[5], Some(0), &mut |x, y| x & y);
        let y = dd.apply2(vars[0], vars[5], None, &mut |x, y| x & y);
        assert_eq!(x, y);
    }
}
