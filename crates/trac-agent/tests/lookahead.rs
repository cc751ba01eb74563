//! The exact look-ahead against brute force: random formulas (3 propositions, past operators
//! included) compiled to monitor tables; from every state, every valuation sequence of length
//! at most k (≤ 3) is enumerated, with random partial knowledge of the first valuation.

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use trac_agent::lookahead::{violating_cubes, ExactRisk, Lookahead};
use trac_compile::{compile, CompileOptions, Semantics};
use trac_core::table::Table;
use trac_ltl::{Arena, Formula};

const PROPS: [&str; 3] = ["a", "b", "c"];

#[derive(Clone, Debug)]
enum RF {
    Atom(usize),
    Un(u8, Box<RF>),
    Bin(u8, Box<RF>, Box<RF>),
}

fn gen(g: &mut Gen, depth: usize, past: bool) -> RF {
    if depth == 0 || u8::arbitrary(g) % 4 == 0 {
        return RF::Atom(usize::arbitrary(g) % PROPS.len());
    }
    if bool::arbitrary(g) {
        // ! X F G | Y O H (past operators only over past formulas).
        let k = if past {
            [0, 4, 5, 6][usize::arbitrary(g) % 4]
        } else {
            u8::arbitrary(g) % 7
        };
        RF::Un(k, Box::new(gen(g, depth - 1, past || k >= 4)))
    } else {
        // & | -> U W R | S
        let k = if past {
            [0, 1, 2, 6][usize::arbitrary(g) % 4]
        } else {
            u8::arbitrary(g) % 7
        };
        let p = past || k == 6;
        RF::Bin(
            k,
            Box::new(gen(g, depth - 1, p)),
            Box::new(gen(g, depth - 1, p)),
        )
    }
}

fn build(a: &mut Arena, f: &RF) -> Formula {
    match f {
        RF::Atom(i) => a.atom(PROPS[*i]),
        RF::Un(k, x) => {
            let x = build(a, x);
            match k {
                0 => a.not(x),
                1 => a.next(x),
                2 => a.finally(x),
                3 => a.globally(x),
                4 => a.yesterday(x),
                5 => a.once(x),
                _ => a.historically(x),
            }
        }
        RF::Bin(k, x, y) => {
            let (x, y) = (build(a, x), build(a, y));
            match k {
                0 => a.and2(x, y),
                1 => a.or2(x, y),
                2 => a.implies(x, y),
                3 => a.until(x, y),
                4 => a.weak_until(x, y),
                5 => a.release(x, y),
                _ => a.since(x, y),
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Case {
    formula: RF,
    k: u32,
    /// Per proposition index of the table: 0 unknown, 1 known false, 2 known true.
    known: [u8; 3],
    ltlf: bool,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let depth = 1 + usize::arbitrary(g) % 4;
        Case {
            formula: gen(g, depth, false),
            k: 1 + u32::arbitrary(g) % 3,
            known: [
                u8::arbitrary(g) % 3,
                u8::arbitrary(g) % 3,
                u8::arbitrary(g) % 3,
            ],
            ltlf: u8::arbitrary(g) % 4 == 0,
        }
    }
}

/// Does some sequence of `len` valuations from `state` (the first consistent with `first`)
/// reach ⊥?
fn reaches(t: &Table, state: u32, len: u32, first: &dyn Fn(u32) -> bool) -> bool {
    if state == 0 {
        return true;
    }
    if len == 0 {
        return false;
    }
    let n = t.prop_count();
    (0u32..1 << n)
        .filter(|&v| first(v))
        .any(|v| reaches(t, t.next(state, |i| v >> i & 1 == 1), len - 1, &|_| true))
}

fn check(case: Case) -> TestResult {
    let mut arena = Arena::new();
    let f = build(&mut arena, &case.formula);
    let opts = CompileOptions {
        semantics: if case.ltlf {
            Semantics::Ltlf
        } else {
            Semantics::Ltl3
        },
        minimize: trac_compile::Minimize::Language,
    };
    let Ok(c) = compile(&mut arena, f, &opts) else {
        return TestResult::discard();
    };
    let t = c.table;
    let n = t.prop_count();
    let la = Lookahead::new(&t);
    let known = |i: u32| match case.known.get(i as usize) {
        Some(1) => Some(false),
        Some(2) => Some(true),
        _ => None,
    };
    let consistent =
        |v: u32| (0..n as u32).all(|i| known(i).is_none_or(|b| (v >> i & 1 == 1) == b));
    for s in 2..t.state_count() as u32 {
        // Least steps to ⊥ (unrestricted), up to k.
        let bf_min = (1..=case.k).find(|&l| reaches(&t, s, l, &|_| true));
        let d = la.steps_to_violation(s);
        match bf_min {
            Some(m) => {
                if d != Some(m) {
                    return TestResult::error(format!("state {s}: BFS {d:?}, brute force {m}"));
                }
            }
            None => {
                if d.is_some_and(|d| d <= case.k) {
                    return TestResult::error(format!(
                        "state {s}: BFS {d:?} ≤ k, brute force none"
                    ));
                }
            }
        }
        // Exact risk with partial knowledge of the first step.
        let bf_known = (1..=case.k).find(|&l| reaches(&t, s, l, &consistent));
        let all_bad = (0u32..1 << n)
            .filter(|&v| consistent(v))
            .all(|v| t.next(s, |i| v >> i & 1 == 1) == 0);
        let want = if all_bad {
            ExactRisk::One
        } else {
            match bf_known {
                None => ExactRisk::Zero,
                Some(m) => ExactRisk::Unknown { min_steps: m },
            }
        };
        let got = la.exact_risk(&t, s, case.k, &known);
        if got != want {
            return TestResult::error(format!(
                "state {s} ({}), k={}, known {:?}: got {got:?}, brute force {want:?}",
                t.residual(s),
                case.k,
                case.known
            ));
        }
        // The violating cubes are exactly the valuations leading to ⊥ at once.
        let cubes = violating_cubes(&t, s);
        for v in 0u32..1 << n {
            let bad = t.next(s, |i| v >> i & 1 == 1) == 0;
            let in_cube = cubes
                .iter()
                .any(|c| c.iter().all(|&(p, b)| (v >> p & 1 == 1) == b));
            if bad != in_cube {
                return TestResult::error(format!("state {s}: valuation {v:b} cube mismatch"));
            }
        }
    }
    TestResult::passed()
}

#[test]
fn exact_lookahead_matches_brute_force() {
    QuickCheck::new()
        .tests(300)
        .quickcheck(check as fn(Case) -> TestResult);
}

#[test]
fn known_examples() {
    let table = |src: &str| {
        let mut a = Arena::new();
        let f = trac_ltl::parse(&mut a, src).unwrap();
        compile(&mut a, f, &CompileOptions::default())
            .unwrap()
            .table
    };
    // G(p -> X X q): from the start ⊥ needs 3 steps (p, anything, !q).
    let t = table("G(p -> X X q)");
    let la = Lookahead::new(&t);
    assert_eq!(la.steps_to_violation(t.initial()), Some(3));
    assert_eq!(
        la.exact_risk(&t, t.initial(), 2, &|_| None),
        ExactRisk::Zero
    );
    assert_eq!(
        la.exact_risk(&t, t.initial(), 3, &|_| None),
        ExactRisk::Unknown { min_steps: 3 }
    );
    // G !p: one step, and forced when p is known to hold.
    let t = table("G !p");
    let la = Lookahead::new(&t);
    assert_eq!(
        la.exact_risk(&t, t.initial(), 1, &|_| Some(true)),
        ExactRisk::One
    );
    // Knowing p false at the next step only defers ⊥ by one step.
    assert_eq!(
        la.exact_risk(&t, t.initial(), 1, &|_| Some(false)),
        ExactRisk::Zero
    );
    assert_eq!(
        la.exact_risk(&t, t.initial(), 5, &|_| Some(false)),
        ExactRisk::Unknown { min_steps: 2 }
    );
    // F p is never violated: no distance at all.
    let t = table("F p");
    assert_eq!(Lookahead::new(&t).steps_to_violation(t.initial()), None);
}
