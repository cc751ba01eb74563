//! The verdicts of the explored states: LTL3 (satisfiability of each residual and of its
//! negation) and LTLf (reachability of accepting states), over the SCCs of the state graph.

use crate::build::{Builder, Explored};
use crate::dd::Dd;
use petgraph::graph::{DiGraph, NodeIndex};

/// The explored automaton as a petgraph graph: node `i` is explored state `i`, one edge per
/// successor state (the guards stay in the decision diagrams), with its SCCs (petgraph's
/// Tarjan: every SCC listed after the SCCs its edges reach). Built once per compilation and
/// shared by the LTL3 and LTLf verdicts. O(states + edges).
pub(crate) struct StateGraph {
    graph: DiGraph<(), ()>,
    sccs: Vec<Vec<NodeIndex>>,
    /// Per state: its SCC's index in `sccs`.
    scc_of: Vec<usize>,
}

impl StateGraph {
    pub(crate) fn new(dd: &Dd, ex: &Explored) -> StateGraph {
        let n = ex.keys.len();
        let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n, n);
        let ids: Vec<_> = (0..n).map(|_| graph.add_node(())).collect();
        for (s, &r) in ex.roots.iter().enumerate() {
            for t in dd.leaves(r) {
                graph.add_edge(ids[s], ids[t as usize], ());
            }
        }
        let sccs = petgraph::algo::tarjan_scc(&graph);
        let mut scc_of = vec![0usize; n];
        for (c, scc) in sccs.iter().enumerate() {
            for v in scc {
                scc_of[v.index()] = c;
            }
        }
        StateGraph {
            graph,
            sccs,
            scc_of,
        }
    }
}

/// LTL3 verdicts per SCC of the state graph (petgraph's Tarjan, successors first). All states
/// of an SCC are equally satisfiable (each reaches the others, and progression preserves
/// satisfiability backwards: a state with a satisfiable successor is satisfiable) and equally
/// valid. So an SCC is satisfiable if a successor SCC is, else one satisfiability check of its
/// smallest residual decides; it is valid only if every successor SCC is, and then one check of the
/// negation decides. Most states need no tableau at all.
pub(crate) fn ltl3_verdicts(b: &mut Builder<'_>, ex: &Explored, sg: &StateGraph) -> Vec<u8> {
    let n = ex.keys.len();
    let (g, sccs, scc_of) = (&sg.graph, &sg.sccs, &sg.scc_of);
    let mut sat = vec![false; sccs.len()];
    let mut valid = vec![false; sccs.len()];
    for (c, scc) in sccs.iter().enumerate() {
        let (mut succ_sat, mut succ_valid) = (false, true);
        for v in scc {
            for w in g.neighbors(*v) {
                let d = scc_of[w.index()];
                if d != c {
                    succ_sat |= sat[d];
                    succ_valid &= valid[d];
                }
            }
        }
        let rep = scc
            .iter()
            .map(|v| v.index())
            .min_by_key(|&s| b.ctx.arena.info(ex.keys[s].0).size)
            .expect("SCCs are not empty");
        let (f, bits, _) = &ex.keys[rep];
        sat[c] = succ_sat || b.ctx.sat.inf_satisfiable(b.ctx.arena, *f, bits);
        valid[c] = sat[c] && succ_valid && {
            let nf = b.ctx.arena.not(*f);
            !b.ctx.sat.inf_satisfiable(b.ctx.arena, nf, bits)
        };
    }
    (0..n)
        .map(|s| {
            let c = scc_of[s];
            if !sat[c] {
                0
            } else if valid[c] {
                1
            } else {
                2
            }
        })
        .collect()
}

/// LTLf verdicts: ⊥ iff no accepting state is reachable (the state itself included), ⊤ iff
/// every reachable state accepts. SCCs in reverse topological order (petgraph's Tarjan), then
/// one pass. O(states + edges).
pub(crate) fn ltlf_verdicts(ex: &Explored, sg: &StateGraph) -> Vec<u8> {
    let n = ex.keys.len();
    let (g, sccs, scc_of) = (&sg.graph, &sg.sccs, &sg.scc_of);
    let mut acc = vec![false; sccs.len()];
    let mut rej = vec![false; sccs.len()];
    for (c, scc) in sccs.iter().enumerate() {
        for v in scc {
            if ex.keys[v.index()].2 {
                acc[c] = true;
            } else {
                rej[c] = true;
            }
            for w in g.neighbors(*v) {
                let d = scc_of[w.index()];
                if d != c {
                    acc[c] |= acc[d];
                    rej[c] |= rej[d];
                }
            }
        }
    }
    (0..n)
        .map(|s| {
            let c = scc_of[s];
            if !acc[c] {
                0
            } else if !rej[c] {
                1
            } else {
                2
            }
        })
        .collect()
}
