//! The satisfiability checker ([`trac_compile::sat::SatChecker`]) against brute force (issue 8 §2):
//! random formulas (up to 4 propositions, past and future operators, up to 30 nodes) are
//! evaluated on random lasso words `u·v^ω` (|u| + |v| ≤ 5) and finite words (length ≤ 5) by the
//! straightforward evaluator below, which shares no code with the checker, the progression or
//! the formula arena (it evaluates the test's own syntax tree, operator by operator, from the
//! textbook definitions). Whenever a word satisfies (violates) a formula, the checker must not
//! call it unsatisfiable (valid); the same for the residual after every prefix of `u` with its
//! past-time bits, and for finite words under LTLf (`X` weak).

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use trac_compile::sat::SatChecker;
use trac_ltl::progress::{eval_last, progress, PastState};
use trac_ltl::{Arena, Formula, Sym};

const PROPS: [&str; 4] = ["a", "b", "c", "d"];
const MAX_NODES: usize = 30;

/// The test's own syntax tree.
#[derive(Clone, Debug)]
enum T {
    Atom(usize),
    Const(bool),
    Not(Box<T>),
    /// `!`-free unary temporal operators: X, X[!], F, G, Y, Z, O, H.
    Un(Op1, Box<T>),
    Bin(Op2, Box<T>, Box<T>),
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Op1 {
    X,
    StrongX,
    F,
    G,
    Y,
    Z,
    O,
    H,
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Op2 {
    And,
    Or,
    Implies,
    Equiv,
    Xor,
    U,
    W,
    R,
    M,
    S,
}

const FUTURE1: [Op1; 4] = [Op1::X, Op1::StrongX, Op1::F, Op1::G];
const PAST1: [Op1; 4] = [Op1::Y, Op1::Z, Op1::O, Op1::H];
const BOOL2: [Op2; 5] = [Op2::And, Op2::Or, Op2::Implies, Op2::Equiv, Op2::Xor];
const FUTURE2: [Op2; 4] = [Op2::U, Op2::W, Op2::R, Op2::M];

fn size(t: &T) -> usize {
    match t {
        T::Atom(_) | T::Const(_) => 1,
        T::Not(a) | T::Un(_, a) => 1 + size(a),
        T::Bin(_, a, b) => 1 + size(a) + size(b),
    }
}

/// A random formula; under a past operator only past and Boolean operators.
fn gen(g: &mut Gen, depth: usize, past_only: bool) -> T {
    if depth == 0 || u8::arbitrary(g) % 5 == 0 {
        return if u8::arbitrary(g) % 12 == 0 {
            T::Const(bool::arbitrary(g))
        } else {
            T::Atom(usize::arbitrary(g) % PROPS.len())
        };
    }
    match u8::arbitrary(g) % 3 {
        0 => {
            if u8::arbitrary(g) % 4 == 0 {
                return T::Not(Box::new(gen(g, depth - 1, past_only)));
            }
            let past = past_only || bool::arbitrary(g);
            let op = if past {
                *g.choose(&PAST1).unwrap()
            } else {
                *g.choose(&FUTURE1).unwrap()
            };
            T::Un(op, Box::new(gen(g, depth - 1, past)))
        }
        _ => {
            let op = match u8::arbitrary(g) % 3 {
                0 => *g.choose(&BOOL2).unwrap(),
                1 if !past_only => *g.choose(&FUTURE2).unwrap(),
                _ => Op2::S,
            };
            let past = past_only || op == Op2::S;
            T::Bin(
                op,
                Box::new(gen(g, depth - 1, past)),
                Box::new(gen(g, depth - 1, past)),
            )
        }
    }
}

fn build(a: &mut Arena, t: &T) -> Formula {
    match t {
        T::Atom(i) => a.atom(PROPS[*i]),
        T::Const(b) => a.constant(*b),
        T::Not(x) => {
            let x = build(a, x);
            a.not(x)
        }
        T::Un(op, x) => {
            let x = build(a, x);
            match op {
                Op1::X => a.next(x),
                Op1::StrongX => a.strong_next(x),
                Op1::F => a.finally(x),
                Op1::G => a.globally(x),
                Op1::Y => a.yesterday(x),
                Op1::Z => a.weak_yesterday(x),
                Op1::O => a.once(x),
                Op1::H => a.historically(x),
            }
        }
        T::Bin(op, x, y) => {
            let (x, y) = (build(a, x), build(a, y));
            match op {
                Op2::And => a.and2(x, y),
                Op2::Or => a.or2(x, y),
                Op2::Implies => a.implies(x, y),
                Op2::Equiv => a.equiv(x, y),
                Op2::Xor => a.xor(x, y),
                Op2::U => a.until(x, y),
                Op2::W => a.weak_until(x, y),
                Op2::R => a.release(x, y),
                Op2::M => a.strong_release(x, y),
                Op2::S => a.since(x, y),
            }
        }
    }
}

/// A word as a graph: `letters[i]` (bitmask over `PROPS`) at position `i`, and the successor of
/// position `i` (`None` at the end of a finite word).
struct Word {
    letters: Vec<u8>,
    succ: Vec<Option<usize>>,
}

impl Word {
    /// `u·v^ω`, unrolled to `u·v^k` with the last position looping back to the start of the
    /// last copy of `v`. Past-time values are computed on the unrolled positions, so `k` must
    /// exceed the nesting depth of past operators (each level becomes periodic at most one
    /// period after its operands); `k = MAX_NODES + 2` is always enough.
    fn lasso(u: &[u8], v: &[u8]) -> Word {
        let k = MAX_NODES + 2;
        let mut letters = u.to_vec();
        for _ in 0..k {
            letters.extend_from_slice(v);
        }
        let n = letters.len();
        let succ = (0..n)
            .map(|i| Some(if i + 1 < n { i + 1 } else { n - v.len() }))
            .collect();
        Word { letters, succ }
    }

    fn finite(w: &[u8]) -> Word {
        let n = w.len();
        Word {
            letters: w.to_vec(),
            succ: (0..n).map(|i| (i + 1 < n).then_some(i + 1)).collect(),
        }
    }
}

/// Truth of `t` at every position of `w`, from the definitions. Past operators look at position
/// `i - 1`; future ones at the successor, as least (`U`, `M`, `F`) or greatest (`W`, `R`, `G`)
/// fixpoints of their expansion laws (iterated until stable). On a finite word `X` is weak and
/// `X[!]` strong at the last position (LTLf as trac defines it).
fn eval(t: &T, w: &Word) -> Vec<bool> {
    let n = w.letters.len();
    let fix = |init: bool, step: &dyn Fn(usize, &[bool]) -> bool| -> Vec<bool> {
        let mut v = vec![init; n];
        loop {
            let next: Vec<bool> = (0..n).map(|i| step(i, &v)).collect();
            if next == v {
                return v;
            }
            v = next;
        }
    };
    match t {
        T::Atom(p) => w.letters.iter().map(|l| l >> p & 1 == 1).collect(),
        T::Const(b) => vec![*b; n],
        T::Not(a) => eval(a, w).into_iter().map(|x| !x).collect(),
        T::Un(op, a) => {
            let a = eval(a, w);
            match op {
                Op1::X => (0..n).map(|i| w.succ[i].is_none_or(|j| a[j])).collect(),
                Op1::StrongX => (0..n).map(|i| w.succ[i].is_some_and(|j| a[j])).collect(),
                Op1::F => fix(false, &|i, v| a[i] || w.succ[i].is_some_and(|j| v[j])),
                Op1::G => fix(true, &|i, v| a[i] && w.succ[i].is_none_or(|j| v[j])),
                Op1::Y => (0..n).map(|i| i > 0 && a[i - 1]).collect(),
                Op1::Z => (0..n).map(|i| i == 0 || a[i - 1]).collect(),
                Op1::O => {
                    let mut v = vec![false; n];
                    for i in 0..n {
                        v[i] = a[i] || (i > 0 && v[i - 1]);
                    }
                    v
                }
                Op1::H => {
                    let mut v = vec![false; n];
                    for i in 0..n {
                        v[i] = a[i] && (i == 0 || v[i - 1]);
                    }
                    v
                }
            }
        }
        T::Bin(op, a, b) => {
            let (a, b) = (eval(a, w), eval(b, w));
            let pointwise = |f: fn(bool, bool) -> bool| (0..n).map(|i| f(a[i], b[i])).collect();
            match op {
                Op2::And => pointwise(|x, y| x && y),
                Op2::Or => pointwise(|x, y| x || y),
                Op2::Implies => pointwise(|x, y| !x || y),
                Op2::Equiv => pointwise(|x, y| x == y),
                Op2::Xor => pointwise(|x, y| x != y),
                // a U b: b now, or a now and a U b next (least).
                Op2::U => fix(false, &|i, v| {
                    b[i] || (a[i] && w.succ[i].is_some_and(|j| v[j]))
                }),
                // a W b: the same, greatest.
                Op2::W => fix(true, &|i, v| {
                    b[i] || (a[i] && w.succ[i].is_none_or(|j| v[j]))
                }),
                // a R b: b now, and a now or a R b next (greatest).
                Op2::R => fix(true, &|i, v| {
                    b[i] && (a[i] || w.succ[i].is_none_or(|j| v[j]))
                }),
                // a M b: the same, least.
                Op2::M => fix(false, &|i, v| {
                    b[i] && (a[i] || w.succ[i].is_some_and(|j| v[j]))
                }),
                Op2::S => {
                    let mut v = vec![false; n];
                    for i in 0..n {
                        v[i] = b[i] || (a[i] && i > 0 && v[i - 1]);
                    }
                    v
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Case {
    formula: T,
    /// Lassos `(u, v)` with |u| + |v| ≤ 5, |v| ≥ 1.
    lassos: Vec<(Vec<u8>, Vec<u8>)>,
    /// Finite words of length 1 to 5.
    words: Vec<Vec<u8>>,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let depth = 2 + usize::arbitrary(g) % 5;
        let letter = |g: &mut Gen| u8::arbitrary(g) % 16;
        let lassos = (0..40)
            .map(|_| {
                let total = 1 + usize::arbitrary(g) % 5;
                let v = 1 + usize::arbitrary(g) % total;
                let u = total - v;
                (
                    (0..u).map(|_| letter(g)).collect(),
                    (0..v).map(|_| letter(g)).collect(),
                )
            })
            .collect();
        let words = (0..20)
            .map(|_| {
                (0..1 + usize::arbitrary(g) % 5)
                    .map(|_| letter(g))
                    .collect()
            })
            .collect();
        Case {
            formula: gen(g, depth, false),
            lassos,
            words,
        }
    }
}

fn prop_syms(arena: &mut Arena) -> Vec<Sym> {
    PROPS
        .iter()
        .map(|p| {
            let a = arena.atom(p);
            arena.atoms(a)[0]
        })
        .collect()
}

fn check(c: Case) -> TestResult {
    if size(&c.formula) > MAX_NODES {
        return TestResult::discard();
    }
    let mut arena = Arena::new();
    let f = build(&mut arena, &c.formula);
    let syms = prop_syms(&mut arena);
    let shown = trac_ltl::print(&arena, f);
    let mut sat = SatChecker::new(&arena, f);
    let bits0 = sat.initial_bits();
    let v0 = sat.verdict(&mut arena, f, &bits0);
    for (u, v) in &c.lassos {
        let truth = eval(&c.formula, &Word::lasso(u, v))[0];
        if v0 == Some(!truth) {
            return TestResult::error(format!(
                "{shown}: verdict {v0:?}, but u = {u:?}, v = {v:?} gives {truth}"
            ));
        }
        if truth && !sat.inf_satisfiable(&mut arena, f, &bits0) {
            return TestResult::error(format!(
                "{shown}: called unsatisfiable, but u = {u:?}, v = {v:?} satisfies it"
            ));
        }
        // The residual after each prefix of u, with its past bits.
        let mut past = PastState::new(&arena, f);
        let mut cur = f;
        for (k, &mask) in u.iter().enumerate() {
            let holds = |s: Sym| {
                syms.iter()
                    .position(|&q| q == s)
                    .is_some_and(|i| mask >> i & 1 == 1)
            };
            past.step(&arena, &holds);
            cur = progress(&mut arena, cur, &holds, &past);
            let vk = sat.verdict(&mut arena, cur, past.bits());
            if vk == Some(!truth) {
                return TestResult::error(format!(
                    "{shown}: after {:?} the residual {} is {vk:?}, but the rest of u = {u:?}, \
                     v = {v:?} gives {truth}",
                    &u[..=k],
                    trac_ltl::print(&arena, cur)
                ));
            }
        }
    }
    // LTLf: finite words.
    let nf = arena.not(f);
    let fin_sat = sat.fin_satisfiable(&mut arena, f, &bits0);
    let fin_sat_neg = sat.fin_satisfiable(&mut arena, nf, &bits0);
    for w in &c.words {
        let truth = eval(&c.formula, &Word::finite(w))[0];
        if (truth && !fin_sat) || (!truth && !fin_sat_neg) {
            return TestResult::error(format!(
                "{shown}: LTLf satisfiable {fin_sat}, of the negation {fin_sat_neg}, but {w:?} \
                 gives {truth}"
            ));
        }
        // The progression's own end-of-trace evaluation agrees with the definitions too.
        let mut past = PastState::new(&arena, f);
        let mut cur = f;
        let mut last = false;
        for &mask in w {
            let holds = |s: Sym| {
                syms.iter()
                    .position(|&q| q == s)
                    .is_some_and(|i| mask >> i & 1 == 1)
            };
            past.step(&arena, &holds);
            last = eval_last(&arena, cur, &holds, &past);
            cur = progress(&mut arena, cur, &holds, &past);
        }
        if last != truth {
            return TestResult::error(format!(
                "{shown}: LTLf truth on {w:?} is {truth}, progression says {last}"
            ));
        }
    }
    TestResult::passed()
}

#[test]
fn sat_checker_agrees_with_brute_force_on_lasso_words() {
    // TRAC_QC_TESTS=5000 for a longer run.
    let tests = std::env::var("TRAC_QC_TESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    QuickCheck::new()
        .tests(tests)
        .quickcheck(check as fn(Case) -> TestResult);
}

/// The evaluator itself, on formulas whose truth is known by hand.
#[test]
fn the_brute_force_evaluator_follows_the_definitions() {
    let a = || Box::new(T::Atom(0));
    let b = || Box::new(T::Atom(1));
    // G F a on (∅)·({a} ∅)^ω: true; F G a: false.
    let w = Word::lasso(&[0], &[1, 0]);
    let gfa = T::Un(Op1::G, Box::new(T::Un(Op1::F, a())));
    let fga = T::Un(Op1::F, Box::new(T::Un(Op1::G, a())));
    assert!(eval(&gfa, &w)[0]);
    assert!(!eval(&fga, &w)[0]);
    // a U b on {a}{a}{b}∅^ω: true; on {a}^ω: false, a W b true.
    let w = Word::lasso(&[1, 1, 2], &[0]);
    assert!(eval(&T::Bin(Op2::U, a(), b()), &w)[0]);
    let w = Word::lasso(&[], &[1]);
    assert!(!eval(&T::Bin(Op2::U, a(), b()), &w)[0]);
    assert!(eval(&T::Bin(Op2::W, a(), b()), &w)[0]);
    // Y a at 0 is false, Z a true; F(Y a & !a) on {a}∅^ω: true at 0.
    assert!(!eval(&T::Un(Op1::Y, a()), &w)[0]);
    assert!(eval(&T::Un(Op1::Z, a()), &w)[0]);
    let w = Word::lasso(&[1], &[0]);
    let ya_na = T::Bin(
        Op2::And,
        Box::new(T::Un(Op1::Y, a())),
        Box::new(T::Not(a())),
    );
    assert!(eval(&T::Un(Op1::F, Box::new(ya_na)), &w)[0]);
    // Finite: X a at the last position is true (weak), X[!] a false.
    let w = Word::finite(&[0]);
    assert!(eval(&T::Un(Op1::X, a()), &w)[0]);
    assert!(!eval(&T::Un(Op1::StrongX, a()), &w)[0]);
    // G(b -> O a) on a finite word {b}: false; on {a}{b}: true.
    let g = T::Un(
        Op1::G,
        Box::new(T::Bin(Op2::Implies, b(), Box::new(T::Un(Op1::O, a())))),
    );
    assert!(!eval(&g, &Word::finite(&[2]))[0]);
    assert!(eval(&g, &Word::finite(&[1, 2]))[0]);
}
