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
}
