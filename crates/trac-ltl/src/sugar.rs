//! Syntactic sugar: bounded operators, counting and `end`, expanded into the core operators
//! when parsed and recognized again when printed.
//!
//! Every construct here is an abbreviation, as in Spot (`spot/tl/formula.cc`,
//! `nested_unop_range`): the parser builds its expansion through the arena's normalizing
//! constructors, so no engine (progression, compiled tables, cross-check, generated code) needs
//! to know about it, and a compiled table stays finite (a bound of `m` steps is at most `m`
//! nested `X`, each a state). [`recognize`] finds the expansions again for the printer and the
//! English rendering, so `F[1:4] cut` prints back as `F[1:4] cut`; an expansion that
//! normalization merged with its context prints expanded, which parses back to the same formula.
//!
//! | written | expansion |
//! |---|---|
//! | `X[n] a` | `X X … X a` (`n` times; `X[n!]` with `X[!]`) |
//! | `F[n:m] a` | `X[n](a \| X(a \| … X a))` (`m − n` nested `X`) |
//! | `F[n:$] a` | `X[n] F a` |
//! | `G[n:m] a`, `G[n:$] a` | the same with `&` and `G` |
//! | `F[n:m!] a`, `G[n:m!] a`, … | the same with the strong `X[!]` |
//! | `Y[n] a`, `Z[n] a` | `n` nested `Y` (false before the first step) / `Z` (true there) |
//! | `O[n:m] a`, `O[n:$] a` | `Y[n](a \| Y(a \| … Y a))`, `Y[n] O a` |
//! | `H[n:m] a`, `H[n:$] a` | `Z[n](a & Z(a & … Z a))`, `Z[n] H a` |
//! | `count(a) >= k` | `O(a & Y O(a & … Y O a))` (`k` nested `O`): `a` held at `k` steps so far |
//! | `count[w](a) >= k` | `a` held at `k` of the last `w` steps (see [`at_least`]) |
//! | `end` | `!X[!] true`: true at the last step of a finite trace (LTLf), never under LTL3 |

use crate::formula::{Arena, Formula, Node};
use std::collections::HashMap;

/// The largest bound `n` or `m` (and count or window) the parser accepts: larger bounds are a
/// positioned parse error. An expansion has about `m` nodes, and a compiled table of a bounded
/// operator about `m` states (also when windows overlap, as in `G(p -> F[0:m] q)`: the arena's
/// conjunctions keep only the earliest pending deadline, see `Arena::and`, so its states are the
/// `m + 1` distances to it rather than the sets of deadlines).
pub const MAX_BOUND: u32 = 256;

/// The step operator of a nested chain.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Step {
    /// `X` (weak next).
    Next,
    /// `X[!]` (strong next).
    StrongNext,
    /// `Y` (false before the first step).
    Yesterday,
    /// `Z` (true before the first step).
    WeakYesterday,
}

/// The operator of a bounded range.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum RangeOp {
    /// `F[n:m]`: at some step `n` to `m` steps ahead.
    Finally,
    /// `G[n:m]`: at every step `n` to `m` steps ahead.
    Globally,
    /// `O[n:m]`: at some step `n` to `m` steps back.
    Once,
    /// `H[n:m]`: at every step `n` to `m` steps back.
    Historically,
}

impl RangeOp {
    /// The operator's letter.
    pub fn letter(self) -> char {
        match self {
            RangeOp::Finally => 'F',
            RangeOp::Globally => 'G',
            RangeOp::Once => 'O',
            RangeOp::Historically => 'H',
        }
    }

    /// The step operator of the expansion (`strong` only matters for `F` and `G`).
    pub fn step(self, strong: bool) -> Step {
        match (self, strong) {
            (RangeOp::Finally | RangeOp::Globally, false) => Step::Next,
            (RangeOp::Finally | RangeOp::Globally, true) => Step::StrongNext,
            (RangeOp::Once, _) => Step::Yesterday,
            (RangeOp::Historically, _) => Step::WeakYesterday,
        }
    }

    fn disjunctive(self) -> bool {
        matches!(self, RangeOp::Finally | RangeOp::Once)
    }
}

/// A comparison of a count with a constant.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Cmp {
    /// `>=`
    Ge,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `<`
    Lt,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl Cmp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            Cmp::Ge => ">=",
            Cmp::Gt => ">",
            Cmp::Le => "<=",
            Cmp::Lt => "<",
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
        }
    }
}

/// A recognized abbreviation (see the [module docs](self)).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Sugar {
    /// `X[n]`, `X[n!]`, `Y[n]`, `Z[n]` with `n >= 2`.
    Repeat {
        /// The step operator.
        step: Step,
        /// How many times.
        n: u32,
        /// The operand.
        body: Formula,
    },
    /// `F[n:m]`, `G[n:m]`, `O[n:m]`, `H[n:m]` (`hi` `None` for `$`), strong with `!]`.
    Range {
        /// The operator.
        op: RangeOp,
        /// `F[n:m!]` / `G[n:m!]`: strong next.
        strong: bool,
        /// `n`.
        lo: u32,
        /// `m`, or `None` for the open end `$`.
        hi: Option<u32>,
        /// The operand.
        body: Formula,
    },
    /// `count(body) >= k` or `count(body) <= k` over the run so far, or over the last `w` steps
    /// (`count[w](body)`).
    Count {
        /// What is counted.
        body: Formula,
        /// The window, if any.
        window: Option<u32>,
        /// `Ge` or `Le`.
        cmp: Cmp,
        /// The constant.
        k: u32,
    },
    /// `end`: the last step of a finite trace.
    End,
}

/// `step(a)`.
pub fn step(arena: &mut Arena, s: Step, a: Formula) -> Formula {
    match s {
        Step::Next => arena.next(a),
        Step::StrongNext => arena.strong_next(a),
        Step::Yesterday => arena.yesterday(a),
        Step::WeakYesterday => arena.weak_yesterday(a),
    }
}

/// `n` nested `step` over `a` (`X[n] a` and friends; `a` itself for `n = 0`).
pub fn repeat(arena: &mut Arena, s: Step, n: u32, a: Formula) -> Formula {
    (0..n).fold(a, |f, _| step(arena, s, f))
}

/// The expansion of `op[lo:hi] body` (`hi` `None` for `$`), as Spot's `nested_unop_range`
/// builds it. Requires `lo <= hi`.
pub fn range(
    arena: &mut Arena,
    op: RangeOp,
    strong: bool,
    lo: u32,
    hi: Option<u32>,
    body: Formula,
) -> Formula {
    let s = op.step(strong);
    let inner = match hi {
        None => match op {
            RangeOp::Finally => arena.finally(body),
            RangeOp::Globally => arena.globally(body),
            RangeOp::Once => arena.once(body),
            RangeOp::Historically => arena.historically(body),
        },
        Some(hi) => {
            let mut r = body;
            for _ in lo..hi {
                let next = step(arena, s, r);
                r = if op.disjunctive() {
                    arena.or2(body, next)
                } else {
                    arena.and2(body, next)
                };
            }
            r
        }
    };
    repeat(arena, s, lo, inner)
}

/// `body` held at at least `k` steps so far (`window` `None`), or at at least `k` of the last
/// `w` steps, this one included (`window` `Some(w)`; steps before the first do not count).
///
/// Run so far: `O(a & Y O(a & … Y O a))`, `k` nested `O`: the compiled table counts up to `k`
/// in `k + 1` states. Window: `al(k, w) = (a & Y al(k−1, w−1)) | Y al(k, w−1)` (`al(0, w)` is
/// `true`, the `Y` is dropped before it; `al(k, w)` is `false` for `w < k`), a shift register
/// of the window: up to `C(w, ≤k)` past states, so keep windows small.
pub fn at_least(arena: &mut Arena, body: Formula, k: u32, window: Option<u32>) -> Formula {
    if k == 0 {
        return Formula::TRUE;
    }
    match window {
        None => {
            let mut f = arena.once(body);
            for _ in 1..k {
                let y = arena.yesterday(f);
                let both = arena.and2(body, y);
                f = arena.once(both);
            }
            f
        }
        Some(w) => {
            let mut memo = HashMap::new();
            let f = windowed(arena, body, k, w, &mut memo);
            // Only a real window is noted: a constant (`k > w`) or a range (`k = 1`) prints as
            // what it is.
            if k >= 2 && w > 1 && f != Formula::TRUE && f != Formula::FALSE && f != body {
                arena.note_window(f, body, w, k);
            }
            f
        }
    }
}

fn windowed(
    arena: &mut Arena,
    body: Formula,
    k: u32,
    w: u32,
    memo: &mut HashMap<(u32, u32), Formula>,
) -> Formula {
    if k == 0 {
        return Formula::TRUE;
    }
    if w < k {
        return Formula::FALSE;
    }
    if let Some(&f) = memo.get(&(k, w)) {
        return f;
    }
    let rest = if k == 1 {
        Formula::TRUE
    } else {
        let r = windowed(arena, body, k - 1, w - 1, memo);
        arena.yesterday(r)
    };
    let here = arena.and2(body, rest);
    let earlier = if w >= 2 {
        let e = windowed(arena, body, k, w - 1, memo);
        arena.yesterday(e)
    } else {
        Formula::FALSE
    };
    let f = arena.or2(here, earlier);
    memo.insert((k, w), f);
    f
}

/// The expansion of `count(body) CMP k` (`count[w](body)` with a window).
pub fn count(arena: &mut Arena, body: Formula, window: Option<u32>, cmp: Cmp, k: u32) -> Formula {
    let al = |arena: &mut Arena, k: u32| at_least(arena, body, k, window);
    match cmp {
        Cmp::Ge => al(arena, k),
        Cmp::Gt => al(arena, k + 1),
        Cmp::Lt => {
            let f = al(arena, k);
            arena.not(f)
        }
        Cmp::Le => {
            let f = al(arena, k + 1);
            arena.not(f)
        }
        Cmp::Eq | Cmp::Ne => {
            let lo = al(arena, k);
            let hi = al(arena, k + 1);
            let not_hi = arena.not(hi);
            let eq = arena.and2(lo, not_hi);
            if cmp == Cmp::Eq {
                eq
            } else {
                arena.not(eq)
            }
        }
    }
}

/// `end`: `!X[!] true`.
pub fn end(arena: &mut Arena) -> Formula {
    let x = arena.strong_next(Formula::TRUE);
    arena.not(x)
}

/// Whether `f` mentions `end` (`!X[!] true`, or `X[!] true` under a negation normal form):
/// a formula that does means something only under LTLf, since under LTL3 a trace never ends.
/// O(size of `f`).
pub fn mentions_end(arena: &Arena, f: Formula) -> bool {
    arena
        .subformulas_postorder(f)
        .into_iter()
        .any(|g| matches!(arena.node(g), Node::StrongNext(t) if *t == Formula::TRUE))
}

fn step_of(node: &Node) -> Option<(Step, Formula)> {
    Some(match node {
        Node::Next(a) => (Step::Next, *a),
        Node::StrongNext(a) => (Step::StrongNext, *a),
        Node::Yesterday(a) => (Step::Yesterday, *a),
        Node::WeakYesterday(a) => (Step::WeakYesterday, *a),
        _ => return None,
    })
}

/// The abbreviation whose expansion `f` is, if any (the largest one at the root), when it nests
/// at least two steps: a single `X a`, `O a`, `X F a` or `a | X a` prints as it is, while
/// `X X a` is `X[2] a`, `X(a | X a)` is `F[1:2] a` and `X X F a` is `F[2:$] a`.
pub fn recognize(arena: &Arena, f: Formula) -> Option<Sugar> {
    if let Node::Not(a) = arena.node(f) {
        if matches!(arena.node(*a), Node::StrongNext(t) if *t == Formula::TRUE) {
            return Some(Sugar::End);
        }
        if let Some((body, window, k)) = count_of(arena, *a) {
            return Some(Sugar::Count {
                body,
                window,
                cmp: Cmp::Le,
                k: k - 1,
            });
        }
        return None;
    }
    if let Some((body, window, k)) = count_of(arena, f) {
        return Some(Sugar::Count {
            body,
            window,
            cmp: Cmp::Ge,
            k,
        });
    }
    // Peel a chain of one step operator.
    let Some((s, _)) = step_of(arena.node(f)) else {
        return range_at(arena, f, None, 0);
    };
    let mut n = 0;
    let mut x = f;
    while let Some((s2, inner)) = step_of(arena.node(x)) {
        // At most MAX_BOUND steps per abbreviation, so that what is printed parses back
        // (`Y[238] Y[22] a` is 260 nested `Y`: printed `Y[256] Y[4] a`).
        if s2 != s || n == MAX_BOUND {
            break;
        }
        n += 1;
        x = inner;
    }
    if let Some(r) = range_at(arena, x, Some(s), n) {
        return Some(r);
    }
    (n >= 2).then_some(Sugar::Repeat {
        step: s,
        n,
        body: x,
    })
}

/// A range `op[lo:hi]` whose part after the `lo` steps is `g` (the steps being `s`).
fn range_at(arena: &Arena, g: Formula, s: Option<Step>, lo: u32) -> Option<Sugar> {
    let ops = [
        RangeOp::Finally,
        RangeOp::Globally,
        RangeOp::Once,
        RangeOp::Historically,
    ];
    for op in ops {
        for strong in [false, true] {
            let st = op.step(strong);
            if strong && matches!(op, RangeOp::Once | RangeOp::Historically) {
                continue;
            }
            if s.is_some_and(|s| s != st) {
                continue;
            }
            // Open end: `op body` after at least one step.
            let open = match (op, arena.node(g)) {
                (RangeOp::Finally, Node::Finally(b))
                | (RangeOp::Globally, Node::Globally(b))
                | (RangeOp::Once, Node::Once(b))
                | (RangeOp::Historically, Node::Historically(b)) => Some(*b),
                _ => None,
            };
            if let Some(body) = open {
                if lo >= 2 {
                    return Some(Sugar::Range {
                        op,
                        strong,
                        lo,
                        hi: None,
                        body,
                    });
                }
                continue;
            }
            if let Some((body, len)) =
                chain(arena, g, op, st).filter(|&(_, len)| lo + len >= 2 && lo + len <= MAX_BOUND)
            {
                return Some(Sugar::Range {
                    op,
                    strong,
                    lo,
                    hi: Some(lo + len),
                    body,
                });
            }
        }
    }
    None
}

/// `g = b ∘ s(b ∘ s(… s b))` (`∘` the range's `|` or `&`) with `len >= 1` steps: `(b, len)`.
fn chain(arena: &Arena, g: Formula, op: RangeOp, st: Step) -> Option<(Formula, u32)> {
    let pair = match (arena.node(g), op.disjunctive()) {
        (Node::Or(v), true) | (Node::And(v), false) if v.len() == 2 => [v[0], v[1]],
        _ => return None,
    };
    for (b, other) in [(pair[0], pair[1]), (pair[1], pair[0])] {
        let Some((s2, mut rest)) = step_of(arena.node(other)) else {
            continue;
        };
        if s2 != st {
            continue;
        }
        let mut len = 1;
        loop {
            if rest == b {
                return Some((b, len));
            }
            let inner = match (arena.node(rest), op.disjunctive()) {
                (Node::Or(v), true) | (Node::And(v), false) if v.len() == 2 => [v[0], v[1]],
                _ => break,
            };
            let next = if inner[0] == b {
                inner[1]
            } else if inner[1] == b {
                inner[0]
            } else {
                break;
            };
            match step_of(arena.node(next)) {
                Some((s3, r)) if s3 == st => {
                    rest = r;
                    len += 1;
                }
                _ => break,
            }
        }
    }
    None
}

/// `f` as a count `(body, window, k)`: a noted window or a run count.
fn count_of(arena: &Arena, f: Formula) -> Option<(Formula, Option<u32>, u32)> {
    if let Some((b, w, k)) = arena.window_of(f) {
        return Some((b, Some(w), k));
    }
    run_count(arena, f).map(|(b, k)| (b, None, k))
}

/// `f = O(b & Y O(b & … Y O b))` with `k >= 2` nested `O`: `(b, k)`.
fn run_count(arena: &Arena, f: Formula) -> Option<(Formula, u32)> {
    let Node::Once(x) = arena.node(f) else {
        return None;
    };
    let Node::And(v) = arena.node(*x) else {
        return None;
    };
    // A conjunctive body is flattened into the `&` beside `Y O(...)`: the body is every other
    // operand (`O(a & b & Y O(a & b))` counts `a & b`).
    for (i, &other) in v.iter().enumerate() {
        let Node::Yesterday(inner) = arena.node(other) else {
            continue;
        };
        let rest: Vec<Formula> = v
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &g)| g)
            .collect();
        let below = match arena.node(*inner) {
            Node::Once(c) if is_conjunction_of(arena, *c, &rest) => Some((*c, 1)),
            _ => run_count(arena, *inner).filter(|&(b2, _)| is_conjunction_of(arena, b2, &rest)),
        };
        if let Some((b, k)) = below {
            return Some((b, k + 1));
        }
    }
    None
}

/// Whether `b` is the conjunction of `ops` (sorted operands of a normalized `&`; one operand:
/// `b` itself).
fn is_conjunction_of(arena: &Arena, b: Formula, ops: &[Formula]) -> bool {
    match ops {
        [one] => b == *one,
        _ => matches!(arena.node(b), Node::And(w) if **w == *ops),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_are_recognized() {
        let mut a = Arena::new();
        let p = a.atom("p");
        let f = range(&mut a, RangeOp::Finally, false, 1, Some(4), p);
        assert_eq!(
            recognize(&a, f),
            Some(Sugar::Range {
                op: RangeOp::Finally,
                strong: false,
                lo: 1,
                hi: Some(4),
                body: p
            })
        );
        let g = range(&mut a, RangeOp::Historically, false, 2, None, p);
        assert_eq!(
            recognize(&a, g),
            Some(Sugar::Range {
                op: RangeOp::Historically,
                strong: false,
                lo: 2,
                hi: None,
                body: p
            })
        );
        let c = count(&mut a, p, None, Cmp::Le, 3);
        assert_eq!(
            recognize(&a, c),
            Some(Sugar::Count {
                body: p,
                window: None,
                cmp: Cmp::Le,
                k: 3
            })
        );
        let c = count(&mut a, p, Some(5), Cmp::Lt, 3);
        assert_eq!(
            recognize(&a, c),
            Some(Sugar::Count {
                body: p,
                window: Some(5),
                cmp: Cmp::Le,
                k: 2
            })
        );
        let e = end(&mut a);
        assert_eq!(recognize(&a, e), Some(Sugar::End));
        let x = a.next(p);
        assert_eq!(recognize(&a, x), None);
        let o = a.once(p);
        assert_eq!(recognize(&a, o), None);
    }
}
