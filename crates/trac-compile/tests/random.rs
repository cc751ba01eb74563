//! Random formulas (at most 4 propositions, depth at most 5, wide `&` / `|`, up to 40 nodes,
//! past operators included) × random
//! traces: the compiled monitor agrees with complete progression at every step (TRAC and
//! TRAC_R, LTL3 and LTLf), the minimized table with the unminimized one, plain progression never
//! contradicts them, and no two states of a minimized table are equivalent (brute force).

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use std::sync::Arc;
use trac_compile::sat::SatChecker;
use trac_compile::{compile, CompileOptions, Minimize, Semantics};
use trac_core::labels::{LabelSet, StepInput};
use trac_core::table::{Table, TableMonitor};
use trac_ltl::progress::{eval_last, progress, PastState};
use trac_ltl::{Arena, Formula, Sym};
use trac_runtime::{Monitor, ProgressionMonitor, ResetPolicy, Verdict};

const PROPS: [&str; 4] = ["a", "b", "c", "d"];

/// The largest formula tried (nodes of the hash-consed DAG).
const MAX_NODES: u32 = 40;

#[derive(Clone, Debug)]
enum RF {
    Atom(usize),
    Const(bool),
    Un(u8, Box<RF>),
    Bin(u8, Box<RF>, Box<RF>),
    /// A wide conjunction (`true`) or disjunction of 3 to 8 operands.
    Wide(bool, Vec<RF>),
}

/// Unary: ! X X[!] F G | Y Z O H; binary: & | -> <-> xor U W R M | S.
const FUTURE_UN: u8 = 5;
const PAST_UN: u8 = 4;
const FUTURE_BIN: u8 = 9;

fn gen(g: &mut Gen, depth: usize, past_only: bool) -> RF {
    let leaf = depth == 0 || u8::arbitrary(g) % 4 == 0;
    if leaf {
        return if u8::arbitrary(g) % 10 == 0 {
            RF::Const(bool::arbitrary(g))
        } else {
            RF::Atom(usize::arbitrary(g) % PROPS.len())
        };
    }
    let pick = u8::arbitrary(g) % 8;
    if pick == 7 {
        let n = 3 + usize::arbitrary(g) % 6;
        return RF::Wide(
            bool::arbitrary(g),
            (0..n).map(|_| gen(g, depth - 1, past_only)).collect(),
        );
    }
    if pick < 2 {
        // Unary.
        let k = if past_only {
            // `!` or a past operator.
            match u8::arbitrary(g) % (PAST_UN + 1) {
                0 => 0,
                x => FUTURE_UN + x - 1,
            }
        } else {
            u8::arbitrary(g) % (FUTURE_UN + PAST_UN)
        };
        let inner_past = past_only || k >= FUTURE_UN;
        RF::Un(k, Box::new(gen(g, depth - 1, inner_past)))
    } else {
        let k = if past_only {
            // & | -> <-> xor or S.
            match u8::arbitrary(g) % 6 {
                5 => FUTURE_BIN,
                x => x,
            }
        } else {
            u8::arbitrary(g) % (FUTURE_BIN + 1)
        };
        let inner_past = past_only || k == FUTURE_BIN;
        RF::Bin(
            k,
            Box::new(gen(g, depth - 1, inner_past)),
            Box::new(gen(g, depth - 1, inner_past)),
        )
    }
}

fn build(a: &mut Arena, f: &RF) -> Formula {
    match f {
        RF::Atom(i) => a.atom(PROPS[*i]),
        RF::Const(b) => a.constant(*b),
        RF::Un(k, x) => {
            let x = build(a, x);
            match k {
                0 => a.not(x),
                1 => a.next(x),
                2 => a.strong_next(x),
                3 => a.finally(x),
                4 => a.globally(x),
                5 => a.yesterday(x),
                6 => a.weak_yesterday(x),
                7 => a.once(x),
                _ => a.historically(x),
            }
        }
        RF::Wide(is_and, xs) => {
            let xs: Vec<Formula> = xs.iter().map(|x| build(a, x)).collect();
            if *is_and {
                a.and(xs)
            } else {
                a.or(xs)
            }
        }
        RF::Bin(k, x, y) => {
            let (x, y) = (build(a, x), build(a, y));
            match k {
                0 => a.and2(x, y),
                1 => a.or2(x, y),
                2 => a.implies(x, y),
                3 => a.equiv(x, y),
                4 => a.xor(x, y),
                5 => a.until(x, y),
                6 => a.weak_until(x, y),
                7 => a.release(x, y),
                8 => a.strong_release(x, y),
                _ => a.since(x, y),
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Case {
    formula: RF,
    /// One bitmask over `PROPS` per step.
    trace: Vec<u8>,
    ltlf: bool,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let depth = 1 + usize::arbitrary(g) % 5;
        let len = usize::arbitrary(g) % 12;
        Case {
            formula: gen(g, depth, false),
            trace: (0..len).map(|_| u8::arbitrary(g) % 16).collect(),
            ltlf: u8::arbitrary(g) % 4 == 0,
        }
    }
}

fn labels(mask: u8) -> LabelSet {
    PROPS
        .iter()
        .enumerate()
        .filter(|(i, _)| mask >> i & 1 == 1)
        .map(|(_, p)| *p)
        .collect()
}

/// Per step (step 0 first): (event, verdict, ltlf).
type Run = Vec<(Option<Verdict>, Verdict, Verdict)>;

fn run(m: &mut dyn Monitor, trace: &[u8]) -> Run {
    let mut out = vec![(m.initial(), m.verdict(), m.ltlf())];
    for (i, &mask) in trace.iter().enumerate() {
        let set = labels(mask);
        let input = StepInput {
            step: i + 1,
            text: "",
            labels: &set,
        };
        let e = m.step(&input);
        out.push((e, m.verdict(), m.ltlf()));
    }
    out
}

/// Brute force: every pair of distinct main states is distinguishable by some word.
#[allow(clippy::needless_range_loop)]
fn minimal(t: &Table) -> Result<(), String> {
    let n = t.state_count();
    let k = t.prop_count();
    let succ: Vec<Vec<u32>> = (0..n as u32)
        .map(|s| {
            (0u32..1 << k)
                .map(|m| t.next(s, |i| m >> i & 1 == 1))
                .collect()
        })
        .collect();
    let out = |s: usize| if s <= 1 { s } else { 2 };
    let mut dist = vec![vec![false; n]; n];
    for i in 0..n {
        for j in 0..n {
            dist[i][j] = out(i) != out(j);
        }
    }
    loop {
        let mut changed = false;
        for i in 0..n {
            for j in 0..n {
                if !dist[i][j]
                    && (0..succ[i].len()).any(|m| dist[succ[i][m] as usize][succ[j][m] as usize])
                {
                    dist[i][j] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    for i in 0..n {
        for j in i + 1..n {
            if !dist[i][j] {
                return Err(format!(
                    "states {i} ({}) and {j} ({}) are equivalent",
                    t.residual(i as u32),
                    t.residual(j as u32)
                ));
            }
        }
    }
    Ok(())
}

fn check(c: Case) -> TestResult {
    let start = std::time::Instant::now();
    let r = check_case(&c);
    if std::env::var("TRAC_TRACE").is_ok() && start.elapsed().as_millis() > 500 {
        let mut a = Arena::new();
        let f = build(&mut a, &c.formula);
        eprintln!("slow ({:?}): {}", start.elapsed(), trac_ltl::print(&a, f));
    }
    r
}

fn check_case(c: &Case) -> TestResult {
    let mut arena = Arena::new();
    let f = build(&mut arena, &c.formula);
    // Depth at most 5, wide `&` / `|` of up to 8 operands, at most MAX_NODES nodes (LTL
    // satisfiability is PSPACE-complete: a few of the largest take a second in a debug build).
    if arena.info(f).size > MAX_NODES {
        return TestResult::discard();
    }
    let sem = if c.ltlf {
        Semantics::Ltlf
    } else {
        Semantics::Ltl3
    };
    let printed = trac_ltl::print(&arena, f);
    let mut tables = Vec::new();
    for minimize in [Minimize::Language, Minimize::None, Minimize::Verdict] {
        let mut a = arena.clone();
        let opts = CompileOptions {
            semantics: sem,
            minimize,
        };
        tables.push(Arc::new(compile(&mut a, f, &opts).unwrap().table));
    }
    if let Err(e) = minimal(&tables[2]) {
        return TestResult::error(format!("{printed}: {e}"));
    }
    if tables[0].state_count() > tables[1].state_count()
        || tables[2].state_count() > tables[0].state_count()
    {
        return TestResult::error(format!("{printed}: minimization added states"));
    }
    for policy in [
        ResetPolicy::default(),
        ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        },
        ResetPolicy {
            on_violation: true,
            on_satisfaction: true,
        },
    ] {
        let mut p = ProgressionMonitor::with_semantics(
            arena.clone(),
            f,
            policy,
            Some(&trac_compile::SatOracle),
            sem,
        );
        let reference = run(&mut p, &c.trace);
        for (i, t) in tables.iter().enumerate() {
            let mut m = TableMonitor::new(t.clone(), policy);
            let got = run(&mut m, &c.trace);
            if got != reference {
                return TestResult::error(format!(
                    "{printed} ({sem:?}, {policy:?}, {}) on {:?}:\n compiled    {got:?}\n progression {reference:?}",
                    ["minimized", "unminimized", "verdict-minimized"][i],
                    c.trace
                ));
            }
        }
        // Plain progression is sound: under TRAC, when it decides, the complete verdict agrees.
        if !policy.on_violation && !policy.on_satisfaction && sem == Semantics::Ltl3 {
            let mut plain = ProgressionMonitor::new(arena.clone(), f, policy);
            let got = run(&mut plain, &c.trace);
            for (s, (x, y)) in got.iter().zip(reference.iter()).enumerate() {
                if x.1 != Verdict::Pending && x.1 != y.1 {
                    return TestResult::error(format!(
                        "{printed} at step {s}: progression {:?}, complete {:?}",
                        x.1, y.1
                    ));
                }
                if x.2 != y.2 {
                    return TestResult::error(format!(
                        "{printed} at step {s}: progression ltlf {:?}, complete {:?}",
                        x.2, y.2
                    ));
                }
            }
        }
    }
    TestResult::passed()
}

#[test]
fn compiled_equals_complete_progression_on_random_formulas() {
    // TRAC_QC_TESTS=5000 for a longer run.
    let tests = std::env::var("TRAC_QC_TESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    QuickCheck::new()
        .tests(tests)
        .quickcheck(check as fn(Case) -> TestResult);
}

/// The models of a residual on finite continuations: per continuation word (bitmasks over
/// `PROPS`) and per non-empty prefix of it, the LTLf truth of the residual on that prefix and the
/// LTL3 verdict of the residual after it (by the property's satisfiability checker), starting
/// from the past-time state `past`.
fn behaviour(
    arena: &mut Arena,
    residual: Formula,
    past: &PastState,
    words: &[Vec<u8>],
    sat: &mut SatChecker,
) -> Vec<(bool, Option<bool>)> {
    let mut out = Vec::new();
    let syms = prop_syms(arena);
    for w in words {
        let mut cur = residual;
        let mut p = past.clone();
        for &mask in w {
            let holds = |s: Sym| {
                syms.iter()
                    .position(|&q| q == s)
                    .is_some_and(|i| mask >> i & 1 == 1)
            };
            p.step(arena, &holds);
            let last = eval_last(arena, cur, &holds, &p);
            cur = progress(arena, cur, &holds, &p);
            out.push((last, sat.verdict(arena, cur, p.bits())));
        }
    }
    out
}

/// The symbols of `PROPS`, in order.
fn prop_syms(arena: &mut Arena) -> Vec<Sym> {
    PROPS
        .iter()
        .map(|p| {
            let a = arena.atom(p);
            arena.atoms(a)[0]
        })
        .collect()
}

#[derive(Clone, Debug)]
struct ResidualCase {
    formula: RF,
    trace: Vec<u8>,
    /// Continuations tried after every step.
    words: Vec<Vec<u8>>,
}

impl Arbitrary for ResidualCase {
    fn arbitrary(g: &mut Gen) -> ResidualCase {
        let depth = 1 + usize::arbitrary(g) % 5;
        let len = usize::arbitrary(g) % 8;
        let words = (0..12)
            .map(|_| {
                let n = 1 + usize::arbitrary(g) % 4;
                (0..n).map(|_| u8::arbitrary(g) % 16).collect()
            })
            .collect();
        ResidualCase {
            formula: gen(g, depth, false),
            trace: (0..len).map(|_| u8::arbitrary(g) % 16).collect(),
            words,
        }
    }
}

/// Issue 8 §1.3: after every step (TRAC, no restart), the residual the compiled table shows
/// ([`Minimize::Language`]) and plain progression's residual have the same LTLf truth and the
/// same LTL3 verdict after every continuation tried. The compiled residual is read back from its
/// printed form, as a reader of a witness would. States decided under LTL3 show `true` /
/// `false`, their LTL3 meaning, so their LTLf truth is not compared (the table's auxiliary
/// automaton gives the LTLf end verdict).
fn residuals_mean_the_obligation(c: ResidualCase) -> TestResult {
    let mut arena = Arena::new();
    let f = build(&mut arena, &c.formula);
    if arena.info(f).size > MAX_NODES {
        return TestResult::discard();
    }
    let printed = trac_ltl::print(&arena, f);
    let table = {
        let mut a = arena.clone();
        Arc::new(
            compile(&mut a, f, &CompileOptions::default())
                .unwrap()
                .table,
        )
    };
    let policy = ResetPolicy {
        on_violation: false,
        on_satisfaction: false,
    };
    let mut compiled = TableMonitor::new(table, policy);
    let mut plain = ProgressionMonitor::new(arena.clone(), f, policy);
    let mut past = PastState::new(&arena, f);
    let mut sat = SatChecker::new(&arena, f);
    for t in 0..=c.trace.len() {
        if t > 0 {
            let set = labels(c.trace[t - 1]);
            let input = StepInput {
                step: t,
                text: "",
                labels: &set,
            };
            compiled.step(&input);
            plain.step(&input);
            let mask = c.trace[t - 1];
            let syms = prop_syms(&mut arena);
            let holds = |s: Sym| {
                syms.iter()
                    .position(|&q| q == s)
                    .is_some_and(|i| mask >> i & 1 == 1)
            };
            past.step(&arena, &holds);
        }
        let (rc, rp) = (compiled.residual(), plain.residual());
        let gc = match trac_ltl::parse(&mut arena, &rc) {
            Ok(g) => g,
            Err(e) => return TestResult::error(format!("{printed}: residual {rc:?}: {e}")),
        };
        let gp = trac_ltl::parse(&mut arena, &rp).expect("progression residuals parse");
        let bc = behaviour(&mut arena, gc, &past, &c.words, &mut sat);
        let bp = behaviour(&mut arena, gp, &past, &c.words, &mut sat);
        let decided = compiled.verdict() != Verdict::Pending;
        let same = bc
            .iter()
            .zip(bp.iter())
            .all(|(x, y)| x.1 == y.1 && (decided || x.0 == y.0));
        let v0 = (
            sat.verdict(&mut arena, gc, past.bits()),
            sat.verdict(&mut arena, gp, past.bits()),
        );
        if !same || v0.0 != v0.1 {
            return TestResult::error(format!(
                "{printed} after {:?}: compiled residual {rc} and progression residual {rp} differ \
                 on the continuations {:?}:\n compiled    {bc:?}\n progression {bp:?}",
                &c.trace[..t],
                c.words
            ));
        }
    }
    TestResult::passed()
}

#[test]
fn compiled_residuals_mean_what_progression_residuals_mean() {
    let tests = std::env::var("TRAC_QC_TESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    QuickCheck::new()
        .tests(tests)
        .quickcheck(residuals_mean_the_obligation as fn(ResidualCase) -> TestResult);
}

/// The same property fails for verdict-only minimization, which is why it is not the default:
/// `G(c -> F b)` after `{c}` shows `G(c -> F b)` there (issue 8 §1.3).
#[test]
fn verdict_minimization_hides_the_obligation() {
    let mut arena = Arena::new();
    let f = trac_ltl::parse(&mut arena, "G(c -> F b)").unwrap();
    let shown = |m: Minimize| {
        let mut a = arena.clone();
        let opts = CompileOptions {
            minimize: m,
            ..CompileOptions::default()
        };
        let t = Arc::new(compile(&mut a, f, &opts).unwrap().table);
        let mut mon = TableMonitor::new(t, ResetPolicy::default());
        let set = labels(0b100);
        mon.step(&StepInput {
            step: 1,
            text: "",
            labels: &set,
        });
        mon.residual()
    };
    let mut plain = ProgressionMonitor::new(arena.clone(), f, ResetPolicy::default());
    let set = labels(0b100);
    plain.step(&StepInput {
        step: 1,
        text: "",
        labels: &set,
    });
    let expected = plain.residual();
    // What progression shows, by hand: the pending `F b` and the invariant.
    let mut a = arena.clone();
    let by_hand = trac_ltl::parse(&mut a, "F b & G(c -> F b)").unwrap();
    assert_eq!(expected, trac_ltl::print(&a, by_hand));
    let lang = shown(Minimize::Language);
    let g = trac_ltl::parse(&mut a, &lang).unwrap();
    let mut sat = SatChecker::new(&a, f);
    let d = a.xor(g, by_hand);
    assert!(
        !sat.inf_satisfiable(&mut a, d, &[]),
        "language minimization shows {lang}"
    );
    assert_eq!(shown(Minimize::Verdict), trac_ltl::print(&arena, f));
}
