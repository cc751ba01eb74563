//! Partition refinement of a deterministic Moore machine with symbolic transitions.
//!
//! Two states are equivalent iff they have the same output and, for every valuation, equivalent
//! successors. The coarsest such partition is computed by Moore's refinement (Moore, "Gedanken-
//! experiments on sequential machines", 1956): start from the partition by output; in each round,
//! a state's signature is its class and its transition diagram with every leaf replaced by the
//! leaf's class, reduced and hash-consed so that equal signatures are equal references; split by
//! signature; stop when no class splits. Hopcroft's O(n log n) variant (Hopcroft 1971) processes
//! splitters per letter, which needs an explicit alphabet; with diagrams over many propositions
//! the symbolic generalization (D'Antoni & Veanes, "Minimization of symbolic automata", POPL
//! 2014) is what this round-based refinement amounts to, at O(rounds × diagram size), rounds ≤
//! number of states (in practice a handful).
//!
//! [`Languages`] serves [`crate::Minimize::Language`]: which states are already known to have
//! the same language over infinite words from the transitions alone (successors of a proved pair,
//! and states whose successors are known pairs), so that the satisfiability checker is asked
//! only the pairs that neither direction settles.

use crate::dd::{Dd, Ref};
use rustc_hash::FxHashMap as HashMap;

/// The coarsest partition of the states (with transition diagrams `roots`, leaves = state
/// indices) that respects `outputs` and transitions. Returns a class index per state; classes
/// are numbered by first occurrence.
pub(crate) fn refine(dd: &mut Dd, roots: &[Ref], outputs: &[u64]) -> Vec<u32> {
    let n = roots.len();
    let mut by_output: HashMap<u64, u32> = HashMap::default();
    let mut class: Vec<u32> = outputs
        .iter()
        .map(|&o| {
            let len = by_output.len() as u32;
            *by_output.entry(o).or_insert(len)
        })
        .collect();
    let mut count = by_output.len();
    loop {
        let mut memo = HashMap::default();
        let mut sigs: HashMap<(u32, Ref), u32> = HashMap::default();
        let mut next = vec![0u32; n];
        for s in 0..n {
            let sig = dd.map(roots[s], &mut |p| class[p as usize], &mut memo);
            let len = sigs.len() as u32;
            next[s] = *sigs.entry((class[s], sig)).or_insert(len);
        }
        let done = sigs.len() == count;
        count = sigs.len();
        class = next;
        if done {
            return class;
        }
    }
}

/// States known to have the same language over infinite words, as a union-find (`parent`)
/// whose classes are closed under successors (if two states are in one class, so are their
/// successors on every valuation). Residuals are exact derivatives: the language of a state is
/// the union over letters `σ` of `σ·L(successor on σ)`. So
/// - a proof that two states have the same language (the satisfiability checker) gives the same
///   for every pair of successors on a common word ([`Languages::merge`], forward), and
/// - two states whose successors are, on every valuation, in one class have the same language
///   ([`Languages::derive`], backward: a least fixed point from known classes, every merge
///   justified by earlier ones; a greatest fixed point would not be sound over infinite words,
///   `GF p` and `FG p` both loop on every letter).
///
/// Every state with LTL3 verdict ⊥ has the empty language and every ⊤ state the universal
/// one. Equal classes imply equal languages, not conversely.
pub(crate) struct Languages {
    parent: Vec<u32>,
}

impl Languages {
    pub(crate) fn new(dd: &mut Dd, roots: &[Ref], ltl3: &[u8]) -> Languages {
        let n = roots.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        for v in [0, 1] {
            if let Some(first) = ltl3.iter().position(|&x| x == v) {
                for s in first..n {
                    if ltl3[s] == v {
                        parent[s] = first as u32;
                    }
                }
            }
        }
        let mut l = Languages { parent };
        l.derive(dd, roots);
        l
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = p;
            x = p;
        }
        x
    }

    /// Whether `x` and `y` are known to have the same language.
    pub(crate) fn same(&mut self, x: usize, y: usize) -> bool {
        self.find(x as u32) == self.find(y as u32)
    }

    /// Unites two classes (the smaller root stays the root).
    fn union(&mut self, x: u32, y: u32) -> bool {
        let (a, b) = (self.find(x), self.find(y));
        if a == b {
            return false;
        }
        let (lo, hi) = (a.min(b), a.max(b));
        self.parent[hi as usize] = lo;
        true
    }

    /// `x` and `y` have the same language (proved): so do their successors on every common
    /// word; then what follows backwards ([`Languages::derive`]).
    pub(crate) fn merge(&mut self, dd: &mut Dd, roots: &[Ref], x: usize, y: usize) {
        let mut stack = vec![(x as u32, y as u32)];
        while let Some((u, v)) = stack.pop() {
            // Classes are closed under successors: a known pair's successors are known.
            if self.union(u, v) {
                stack.extend(dd.leaf_pairs(roots[u as usize], roots[v as usize]));
            }
        }
        self.derive(dd, roots);
    }

    /// Merges, until none is left, the states whose transition diagrams with every successor
    /// replaced by its class are equal (equal references: the diagrams are hash-consed).
    /// O(rounds × diagram sizes).
    fn derive(&mut self, dd: &mut Dd, roots: &[Ref]) {
        let n = roots.len();
        loop {
            let class: Vec<u32> = (0..n as u32).map(|s| self.find(s)).collect();
            let mut memo = HashMap::default();
            let mut sigs: HashMap<Ref, u32> = HashMap::default();
            let mut changed = false;
            for (s, &root) in roots.iter().enumerate() {
                let sig = dd.map(root, &mut |p| class[p as usize], &mut memo);
                let t = *sigs.entry(sig).or_insert(s as u32);
                changed |= self.union(s as u32, t);
            }
            if !changed {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_equivalent_states() {
        // States 0,1,2 over one proposition: 0 -p-> 1, 0 -!p-> 0; 1 -p-> 2, 1 -!p-> 1;
        // 2 loops. Outputs: 0 and 1 pending (0), 2 decided (1). 0 and 1 are equivalent.
        let mut dd = Dd::default();
        let r0 = dd.mk(0, Dd::leaf(0), Dd::leaf(1));
        let r1 = dd.mk(0, Dd::leaf(1), Dd::leaf(2));
        let r2 = Dd::leaf(2);
        let c = refine(&mut dd, &[r0, r1, r2], &[0, 0, 1]);
        assert_ne!(c[0], c[1], "0 needs two p's to reach 2, 1 needs one");
        let r0 = dd.mk(0, Dd::leaf(1), Dd::leaf(2));
        let c = refine(&mut dd, &[r0, r1, r2], &[0, 0, 1]);
        assert_eq!(c[0], c[1]);
        assert_ne!(c[0], c[2]);
    }

    #[test]
    fn languages_follow_transitions_both_ways() {
        // Over one proposition p: 0 the ⊥ sink, 1 the ⊤ sink; 2 and 3 pending, each looping on
        // every letter (like `GF p` and `FG p`: nothing is known about them); 4 and 5 go to ⊤
        // on p and to ⊥ on !p (same language); 6 and 7 go to 2 and 3 on every letter.
        let mut dd = Dd::default();
        let r45 = dd.mk(0, Dd::leaf(0), Dd::leaf(1));
        let roots = [
            Dd::leaf(0),
            Dd::leaf(1),
            Dd::leaf(2),
            Dd::leaf(3),
            r45,
            r45,
            Dd::leaf(2),
            Dd::leaf(3),
        ];
        let mut l = Languages::new(&mut dd, &roots, &[0, 1, 2, 2, 2, 2, 2, 2]);
        assert!(l.same(4, 5));
        assert!(!l.same(2, 3), "loops prove nothing");
        assert!(!l.same(6, 7));
        assert!(!l.same(4, 6));
        // Once 6 and 7 are proved equal, so are their successors 2 and 3.
        l.merge(&mut dd, &roots, 6, 7);
        assert!(l.same(2, 3));
        assert!(!l.same(2, 4));
    }
}
