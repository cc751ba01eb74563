//! Exact look-ahead on a compiled monitor automaton: what no amount of sampling gives.
//!
//! A compiled [`Table`] is a complete LTL3 (or LTLf) monitor: a deterministic automaton over
//! valuations of the table's propositions whose state 0 is the ⊥ sink. From the state a monitor is
//! in, a breadth-first search over the automaton (backwards from ⊥) gives the least number of
//! steps after which some valuation sequence reaches ⊥ ([`Lookahead::steps_to_violation`]), and
//! the transition diagram of the state gives the set of next-step valuations that lead to ⊥ at
//! once ([`violating_cubes`]). From these, [`Lookahead::exact_risk`] decides the probability of a
//! violation within `k` steps without looking at the agent at all when it is 0 (⊥ is not reachable
//! within `k` steps) or 1 (every next-step valuation consistent with what is known leads to ⊥).
//! Only in between does the sampling predictor (paper §4.2) need model calls.
//!
//! Successors are read from the reduced ordered decision diagrams of the table (each path tests
//! each proposition at most once, so every path is satisfiable): the BFS costs
//! O(states + diagram nodes) and never enumerates the 2^props valuations.

use std::collections::VecDeque;
use trac_core::table::{Table, LEAF, SATISFIED, VIOLATED};

/// What is known of the next step's valuation, by proposition index of the table:
/// `Some(true/false)` when known, `None` when it could be either.
pub type Known<'a> = &'a dyn Fn(u32) -> Option<bool>;

/// The next step's valuation is entirely unknown.
pub fn unknown(_: u32) -> Option<bool> {
    None
}

/// The exact part of a violation risk (see [`Lookahead::exact_risk`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExactRisk {
    /// No valuation sequence of at most `k` steps (consistent with what is known of the first)
    /// reaches ⊥: the probability of a violation within `k` steps is exactly 0.
    Zero,
    /// Every next-step valuation consistent with what is known leads to ⊥ at once: the
    /// probability is exactly 1.
    One,
    /// ⊥ is reachable in `min_steps` ≤ `k` steps but not forced: only sampling can tell.
    Unknown {
        /// The least number of steps to ⊥ (1 = the next step can violate).
        min_steps: u32,
    },
}

/// Distances to ⊥ of every state of a table (computed once per table, O(states + nodes)).
#[derive(Clone, Debug)]
pub struct Lookahead {
    /// Per main state: least number of steps to reach state 0 (0 for state 0 itself), `None`
    /// when ⊥ is unreachable.
    dist: Vec<Option<u32>>,
}

/// The distinct target states of the diagram rooted at `root`, restricted by `known`.
fn leaves(root: u32, nodes: &[u32], known: Known<'_>, out: &mut Vec<u32>) {
    let mut stack = vec![root];
    while let Some(r) = stack.pop() {
        if r & LEAF != 0 {
            let s = r & !LEAF;
            if !out.contains(&s) {
                out.push(s);
            }
            continue;
        }
        let i = 3 * r as usize;
        match known(nodes[i]) {
            Some(false) => stack.push(nodes[i + 1]),
            Some(true) => stack.push(nodes[i + 2]),
            None => {
                stack.push(nodes[i + 1]);
                stack.push(nodes[i + 2]);
            }
        }
    }
}

impl Lookahead {
    /// Breadth-first search backwards from the ⊥ sink over the main automaton of `table`.
    pub fn new<S: AsRef<[u32]>, T: AsRef<str>>(table: &Table<S, T>) -> Lookahead {
        let n = table.state_count();
        let nodes = table.parts().nodes.as_ref();
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut succ = Vec::new();
        for s in 0..n as u32 {
            if s <= SATISFIED {
                continue;
            }
            succ.clear();
            leaves(table.root(s), nodes, &unknown, &mut succ);
            for &t in &succ {
                preds[t as usize].push(s);
            }
        }
        let mut dist = vec![None; n];
        dist[VIOLATED as usize] = Some(0);
        let mut queue = VecDeque::from([VIOLATED]);
        while let Some(t) = queue.pop_front() {
            let d = dist[t as usize].expect("queued states have a distance");
            for &s in &preds[t as usize] {
                if dist[s as usize].is_none() {
                    dist[s as usize] = Some(d + 1);
                    queue.push_back(s);
                }
            }
        }
        Lookahead { dist }
    }

    /// The least number of steps from `state` until some valuation sequence reaches ⊥ (`Some(0)`
    /// for the ⊥ sink itself), or `None` when no sequence ever does (⊤ sink, or a pending state of
    /// a property that can no longer be violated).
    pub fn steps_to_violation(&self, state: u32) -> Option<u32> {
        self.dist.get(state as usize).copied().flatten()
    }

    /// The exact risk of a violation within `k` steps from a monitor in `state` whose next-step
    /// valuation is known as far as `known` says.
    ///
    /// - The sinks: [`ExactRisk::Zero`] (⊤ can never be violated; in ⊥ without TRAC_R restarts
    ///   no new violation verdict can come).
    /// - [`ExactRisk::One`] when every next-step valuation consistent with `known` leads to ⊥.
    /// - [`ExactRisk::Zero`] when `k == 0` or no consistent path reaches ⊥ within `k` steps.
    /// - Otherwise [`ExactRisk::Unknown`] with the least number of steps to ⊥.
    ///
    /// Sound with partial knowledge: unknown propositions only make the answer `Unknown` more
    /// often. O(size of `state`'s diagram).
    pub fn exact_risk<S: AsRef<[u32]>, T: AsRef<str>>(
        &self,
        table: &Table<S, T>,
        state: u32,
        k: u32,
        known: Known<'_>,
    ) -> ExactRisk {
        if state <= SATISFIED || k == 0 {
            return ExactRisk::Zero;
        }
        let mut next = Vec::new();
        leaves(
            table.root(state),
            table.parts().nodes.as_ref(),
            known,
            &mut next,
        );
        if next.iter().all(|&s| s == VIOLATED) {
            return ExactRisk::One;
        }
        let min = next
            .iter()
            .filter_map(|&s| self.steps_to_violation(s))
            .min()
            .map(|d| d + 1);
        match min {
            Some(m) if m <= k => ExactRisk::Unknown { min_steps: m },
            _ => ExactRisk::Zero,
        }
    }
}

/// The next-step valuations that lead from `state` to ⊥ at once, as cubes: each a list of
/// `(proposition index, value)` constraints (propositions not listed are free). Empty when no
/// valuation does. One cube per path of the state's diagram that ends in ⊥.
pub fn violating_cubes<S: AsRef<[u32]>, T: AsRef<str>>(
    table: &Table<S, T>,
    state: u32,
) -> Vec<Vec<(u32, bool)>> {
    if state <= SATISFIED {
        return Vec::new();
    }
    table
        .paths(state)
        .into_iter()
        .filter(|(_, target)| *target == VIOLATED)
        .map(|(cube, _)| cube)
        .collect()
}

/// A cube in Spot syntax with the table's proposition names (`load_into(a2) & !free(a1)`);
/// `true` for the empty cube.
pub fn cube_string<S: AsRef<[u32]>, T: AsRef<str>>(
    table: &Table<S, T>,
    cube: &[(u32, bool)],
) -> String {
    if cube.is_empty() {
        return "true".into();
    }
    cube.iter()
        .map(|&(p, v)| {
            let name = table.prop_name(p as usize);
            let name = if name
                .chars()
                .all(|c| c.is_alphanumeric() || "_()".contains(c))
            {
                name.to_string()
            } else {
                format!("\"{name}\"")
            };
            if v {
                name
            } else {
                format!("!{name}")
            }
        })
        .collect::<Vec<_>>()
        .join(" & ")
}
