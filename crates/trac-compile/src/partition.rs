//! The partitions of the main automaton's states that minimization starts from or computes:
//! by language ([`crate::Minimize::Language`]: Moore refinement, then language equivalence
//! decided by the satisfiability checker) and by sink only (no minimization). The refinement
//! itself is [`crate::minimize`].

use crate::build::{self, Builder, Explored};
use crate::minimize;
use std::collections::HashMap;
use trac_ltl::formula::{Arena, Formula};

/// The partition of [`Minimize::Language`]: Moore refinement with the output (table verdict,
/// LTL3 verdict, LTLf acceptance of the trace so far, LTLf acceptance diagram of the next step),
/// then each class split by language equivalence over infinite words, repeated until stable
/// (the intersection of two right congruences is one, but a split can make successors
/// distinguishable). Decided states keep their sinks: equal verdicts ⊥/⊤ mean equal languages.
/// A pair is decided by the satisfiability checker only if [`minimize::Languages`] (what the
/// transitions and earlier answers imply) does not know it equivalent already: every question
/// that does merge states has the same answer either way, except where the checker would have
/// run out of its budget ([`EQUIVALENCE_BUDGET`]) and kept the states apart.
pub(crate) fn language_partition(
    b: &mut Builder<'_>,
    ex: &Explored,
    verdicts: &[u8],
    ltl3: &[u8],
) -> Vec<u32> {
    let n = ex.keys.len();
    let mut outputs: Vec<u64> = Vec::with_capacity(n);
    for s in 0..n {
        let (f, bits, acc) = ex.keys[s].clone();
        let last = if verdicts[s] <= 1 {
            0
        } else {
            u64::from(b.last_diagram(f, &bits))
        };
        outputs.push(
            u64::from(verdicts[s]) | u64::from(ltl3[s]) << 2 | u64::from(acc) << 4 | last << 5,
        );
    }
    // Built at the first equivalence question (most compilations ask none).
    let mut known: Option<minimize::Languages> = None;
    let mut equiv: HashMap<(usize, usize), bool> = HashMap::new();
    loop {
        let class = minimize::refine(&mut b.dd, &ex.roots, &outputs);
        // Split each pending class into groups of pairwise equivalent residuals.
        let mut groups: HashMap<u32, Vec<usize>> = HashMap::new();
        let mut group_of = vec![0u64; n];
        let mut count = 0u64;
        for s in 0..n {
            if verdicts[s] <= 1 {
                group_of[s] = u64::from(class[s]);
                continue;
            }
            let reps = groups.entry(class[s]).or_default();
            let found = reps.iter().copied().find(|&r| {
                *equiv.entry((r, s)).or_insert_with(|| {
                    let (x, y) = (&ex.keys[r], &ex.keys[s]);
                    if !comparable(b, x, y) {
                        return false;
                    }
                    let known = known.get_or_insert_with(|| {
                        minimize::Languages::new(&mut b.dd, &ex.roots, ltl3)
                    });
                    if known.same(r, s) {
                        return true;
                    }
                    if !equal_models(b, x, y) {
                        return false;
                    }
                    known.merge(&mut b.dd, &ex.roots, r, s);
                    true
                })
            });
            match found {
                Some(r) => group_of[s] = group_of[r],
                None => {
                    reps.push(s);
                    group_of[s] = u64::from(u32::MAX) + count;
                    count += 1;
                }
            }
        }
        let split = groups.values().any(|r| r.len() > 1);
        if !split {
            return class;
        }
        outputs = group_of;
    }
}

/// The most tableau product states one equivalence check of [`Minimize::Language`] explores;
/// past it the two states are kept apart (a larger table, never a wrong residual). The largest
/// check of the 55 Dwyer patterns explores about 220.
pub const EQUIVALENCE_BUDGET: usize = 2048;

/// Whether two pending states may be merged by [`Minimize::Language`] at all: equal past-time
/// bits and past-time cones (so a residual shown with the trace's actual bits means the same).
/// They merge if, in addition, their models over infinite words are the same (known from the
/// transitions, [`minimize::Languages`], or decided by [`equal_models`]).
pub(crate) fn comparable(b: &mut Builder<'_>, x: &build::Key, y: &build::Key) -> bool {
    let ((f, fb, _), (g, gb, _)) = (x, y);
    if fb != gb {
        return false;
    }
    let all = vec![true; fb.len()];
    let (cf, cg) = (
        b.ctx.sat.mask(b.ctx.arena, *f, &all),
        b.ctx.sat.mask(b.ctx.arena, *g, &all),
    );
    cf == cg
}

/// Whether two comparable states (equal bits) have the same models over infinite words:
/// `ψ1 & !ψ2` and `ψ2 & !ψ1` unsatisfiable, each within [`EQUIVALENCE_BUDGET`] tableau states.
pub(crate) fn equal_models(b: &mut Builder<'_>, x: &build::Key, y: &build::Key) -> bool {
    let ((f, fb, _), (g, _, _)) = (x, y);
    // f = C & f', g = C & g' with common conjuncts C: f & !g is equivalent to f & !g' (C holds
    // wherever f does), which spares the tableau the branches of !C.
    let conjuncts = |a: &Arena, x: Formula| -> Vec<Formula> {
        match a.node(x) {
            trac_ltl::Node::And(xs) => xs.to_vec(),
            _ => vec![x],
        }
    };
    let (cf, cg) = (conjuncts(b.ctx.arena, *f), conjuncts(b.ctx.arena, *g));
    let rest = |a: &mut Arena, xs: &[Formula], ys: &[Formula]| {
        let r: Vec<Formula> = xs.iter().copied().filter(|x| !ys.contains(x)).collect();
        a.and(r)
    };
    let (rf, rg) = (rest(b.ctx.arena, &cf, &cg), rest(b.ctx.arena, &cg, &cf));
    for (x, y) in [(*f, rg), (*g, rf)] {
        let ny = b.ctx.arena.not(y);
        let d = b.ctx.arena.and2(x, ny);
        let sat = b
            .ctx
            .sat
            .inf_satisfiable_within(b.ctx.arena, d, fb, EQUIVALENCE_BUDGET);
        if sat != Some(false) {
            return false;
        }
    }
    true
}

/// Without minimization: ⊥ states in one class, ⊤ states in another, every other state alone.
pub(crate) fn sink_partition(verdicts: &[u8]) -> Vec<u32> {
    let (mut bot, mut top) = (None, None);
    let mut next = 0u32;
    verdicts
        .iter()
        .map(|&v| {
            let slot = match v {
                0 => &mut bot,
                1 => &mut top,
                _ => {
                    next += 1;
                    return next - 1;
                }
            };
            *slot.get_or_insert_with(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}
