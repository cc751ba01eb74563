//! Reduced, ordered multi-terminal decision diagrams (Bryant, "Graph-based algorithms for
//! Boolean function manipulation", IEEE TC 1986; multi-terminal: Clarke et al. 1993) over the
//! propositions of one property, hash-consed in one manager.
//!
//! A reference is either a leaf (high bit set, the low bits a payload whose meaning the caller
//! knows: a formula id, a state id, a class id) or a node index. Variables are proposition
//! indices and increase along every path.

use std::collections::HashMap;

/// The high bit of a reference: a leaf.
pub(crate) const LEAF: u32 = 1 << 31;

/// A reference to a leaf or a node.
pub(crate) type Ref = u32;

/// The manager: every node is unique (no two nodes with the same variable and children) and
/// reduced (no node with equal children), so equal functions have equal references.
#[derive(Default, Debug)]
pub(crate) struct Dd {
    nodes: Vec<(u32, Ref, Ref)>,
    unique: HashMap<(u32, Ref, Ref), Ref>,
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

    /// The diagram of the pointwise combination `f(payloads of refs)` (Shannon expansion on the
    /// smallest variable first). O(product of the diagrams' sizes) worst case, memoized per call.
    pub(crate) fn apply(&mut self, refs: &[Ref], f: &mut dyn FnMut(&[u32]) -> u32) -> Ref {
        let mut memo = HashMap::new();
        self.apply_rec(refs, f, &mut memo)
    }

    fn apply_rec(
        &mut self,
        refs: &[Ref],
        f: &mut dyn FnMut(&[u32]) -> u32,
        memo: &mut HashMap<Vec<Ref>, Ref>,
    ) -> Ref {
        if refs.iter().all(|&r| Self::is_leaf(r)) {
            let payloads: Vec<u32> = refs.iter().map(|&r| Self::payload(r)).collect();
            return Self::leaf(f(&payloads));
        }
        if let Some(&r) = memo.get(refs) {
            return r;
        }
        let v = refs.iter().map(|&r| self.var(r)).min().expect("non-empty");
        let mut lo = Vec::with_capacity(refs.len());
        let mut hi = Vec::with_capacity(refs.len());
        for &r in refs {
            if self.var(r) == v {
                let (_, l, h) = self.node(r);
                lo.push(l);
                hi.push(h);
            } else {
                lo.push(r);
                hi.push(r);
            }
        }
        let l = self.apply_rec(&lo, f, memo);
        let h = self.apply_rec(&hi, f, memo);
        let r = self.mk(v, l, h);
        memo.insert(refs.to_vec(), r);
        r
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
        let mut seen = std::collections::HashSet::new();
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
        let not = dd.map(and, &mut |p| 1 - p, &mut HashMap::new());
        let back = dd.map(not, &mut |p| 1 - p, &mut HashMap::new());
        assert_eq!(back, and);
    }
}
