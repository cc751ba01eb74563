//! From the partition to the table: class numbering (sinks 0 and 1, then breadth first), the
//! LTLf acceptance of each minimized state, and the flat layout of the decision diagrams.

use crate::build::{Explored, Kind};
use crate::dd::{Dd, Ref};
use std::collections::{HashMap, VecDeque};
use trac_core::table::LEAF;

/// LTLf tables: per main state (new ids, `n` of them), whether the run that reached it accepts
/// the trace it read (the `accepting` part of the explored keys), when that is a function of
/// the minimized state (always for [`Minimize::Language`], whose outputs include it, and
/// [`Minimize::None`]; for [`Minimize::Verdict`] only if no class mixes both). The ⊥ sink is
/// not accepting and the ⊤ sink is (LTLf verdicts). `None` for LTL3 tables, whose keys do not
/// track acceptance.
pub(crate) fn main_acceptance(
    kind: Kind,
    main: &Explored,
    class: &[u32],
    new_id: &[u32],
    n: usize,
) -> Option<Vec<bool>> {
    if kind != Kind::Ltlf {
        return None;
    }
    let mut acc: Vec<Option<bool>> = vec![None; n];
    acc[0] = Some(false);
    acc[1] = Some(true);
    for (s, (_, _, a)) in main.keys.iter().enumerate() {
        let id = new_id[class[s] as usize] as usize;
        if id <= 1 {
            continue;
        }
        match acc[id] {
            None => acc[id] = Some(*a),
            Some(b) if b != *a => return None,
            Some(_) => {}
        }
    }
    acc.into_iter().collect()
}

/// Numbers the classes of the main automaton: the ⊥ class 0, the ⊤ class 1, then the others
/// breadth first from state `start`, then the rest by first state. Returns the new id per class
/// and the representative (first) state per new id (`usize::MAX` for an empty sink).
pub(crate) fn renumber(
    dd: &Dd,
    roots: &[Ref],
    class: &[u32],
    verdicts: &[u8],
    start: usize,
) -> (Vec<u32>, Vec<usize>) {
    let n_classes = class.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut first = vec![usize::MAX; n_classes];
    for (s, &c) in class.iter().enumerate() {
        if first[c as usize] == usize::MAX {
            first[c as usize] = s;
        }
    }
    let mut new_id = vec![u32::MAX; n_classes];
    let mut reps = vec![usize::MAX, usize::MAX];
    for (s, &v) in verdicts.iter().enumerate() {
        if v <= 1 && new_id[class[s] as usize] == u32::MAX {
            new_id[class[s] as usize] = u32::from(v);
            reps[v as usize] = s;
        }
    }
    let mut queue = VecDeque::new();
    let visit =
        |s: usize, new_id: &mut Vec<u32>, reps: &mut Vec<usize>, q: &mut VecDeque<usize>| {
            let c = class[s] as usize;
            if new_id[c] == u32::MAX {
                new_id[c] = reps.len() as u32;
                reps.push(first[c]);
                q.push_back(first[c]);
            }
        };
    let mut order: Vec<usize> = vec![start];
    order.extend(0..class.len());
    for s in order {
        visit(s, &mut new_id, &mut reps, &mut queue);
        while let Some(x) = queue.pop_front() {
            for t in dd.leaves(roots[x]) {
                visit(t as usize, &mut new_id, &mut reps, &mut queue);
            }
        }
    }
    (new_id, reps)
}

/// Numbers classes breadth first from state 0, then the rest (auxiliary automaton).
pub(crate) fn renumber_plain(dd: &Dd, roots: &[Ref], class: &[u32]) -> (Vec<u32>, Vec<usize>) {
    let n_classes = class.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut new_id = vec![u32::MAX; n_classes];
    let mut reps = Vec::new();
    let mut queue = VecDeque::new();
    for s0 in 0..class.len() {
        let c = class[s0] as usize;
        if new_id[c] != u32::MAX {
            continue;
        }
        new_id[c] = reps.len() as u32;
        reps.push(s0);
        queue.push_back(s0);
        while let Some(x) = queue.pop_front() {
            for t in dd.leaves(roots[x]) {
                let c = class[t as usize] as usize;
                if new_id[c] == u32::MAX {
                    new_id[c] = reps.len() as u32;
                    reps.push(t as usize);
                    queue.push_back(t as usize);
                }
            }
        }
    }
    (new_id, reps)
}

/// Lays out the diagrams reachable from `roots` as flat `(prop, lo, hi)` triples, parents before
/// children (reverse post-order), with leaves as `LEAF | state`. Returns the nodes and the roots.
pub(crate) fn flatten(dd: &Dd, roots: &[Ref]) -> (Vec<u32>, Vec<u32>) {
    let mut post: Vec<Ref> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for &r in roots {
        // Iterative post-order.
        let mut stack = vec![(r, false)];
        while let Some((x, expanded)) = stack.pop() {
            if Dd::is_leaf(x) {
                continue;
            }
            if expanded {
                post.push(x);
                continue;
            }
            if !seen.insert(x) {
                continue;
            }
            stack.push((x, true));
            let (_, lo, hi) = dd.node(x);
            stack.push((hi, false));
            stack.push((lo, false));
        }
    }
    post.reverse();
    let index: HashMap<Ref, u32> = post
        .iter()
        .enumerate()
        .map(|(i, &x)| (x, i as u32))
        .collect();
    let conv = |x: Ref| {
        if Dd::is_leaf(x) {
            LEAF | Dd::payload(x)
        } else {
            index[&x]
        }
    };
    let mut nodes = Vec::with_capacity(post.len() * 3);
    for &x in &post {
        let (v, lo, hi) = dd.node(x);
        nodes.extend_from_slice(&[v, conv(lo), conv(hi)]);
    }
    (nodes, roots.iter().map(|&r| conv(r)).collect())
}
