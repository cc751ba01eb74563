//! The 55 specification patterns of Dwyer, Avrunin & Corbett ("Patterns in property
//! specifications for finite-state verification", ICSE 1999), in the LTL form listed by Spot's
//! `genltl --dac-patterns` (propositions p0..p5), compile, with their state counts written down;
//! and a 20-level nested `F(a1 & X F(a2 & ...))` over 8 propositions compiles without blow-up.

use std::time::Instant;
use trac_compile::{
    compile, monitorability, monitorability_within, CompileOptions, Minimize, Monitorability,
};
use trac_ltl::Arena;

const DAC: [&str; 55] = [
    // Absence.
    "G(!p0)",
    "F p2 -> (!p0 U p2)",
    "G(p1 -> G(!p0))",
    "G((p1 & !p2 & F p2) -> (!p0 U p2))",
    "G(p1 & !p2 -> (!p0 W p2))",
    // Existence.
    "F(p0)",
    "!p2 W (p0 & !p2)",
    "G(!p1) | F(p1 & F p0)",
    "G(p1 & !p2 -> (!p2 W (p0 & !p2)))",
    "G(p1 & !p2 -> (!p2 U (p0 & !p2)))",
    // Bounded existence.
    "(!p0 W (p0 W (!p0 W (p0 W G !p0))))",
    "F p2 -> ((!p0 & !p2) U (p2 | ((p0 & !p2) U (p2 | ((!p0 & !p2) U (p2 | ((p0 & !p2) U (p2 | (!p0 U p2)))))))))",
    "F p1 -> (!p1 U (p1 & (!p0 W (p0 W (!p0 W (p0 W G !p0))))))",
    "G((p1 & F p2) -> ((!p0 & !p2) U (p2 | ((p0 & !p2) U (p2 | ((!p0 & !p2) U (p2 | ((p0 & !p2) U (p2 | (!p0 U p2))))))))))",
    "G(p1 -> ((!p0 & !p2) U (p2 | ((p0 & !p2) U (p2 | ((!p0 & !p2) U (p2 | ((p0 & !p2) U (p2 | (!p0 W p2) | G p0)))))))))",
    // Universality.
    "G(p0)",
    "F p2 -> (p0 U p2)",
    "G(p1 -> G(p0))",
    "G((p1 & !p2 & F p2) -> (p0 U p2))",
    "G(p1 & !p2 -> (p0 W p2))",
    // Precedence.
    "!p0 W p3",
    "F p2 -> (!p0 U (p3 | p2))",
    "G !p1 | F(p1 & (!p0 W p3))",
    "G((p1 & !p2 & F p2) -> (!p0 U (p3 | p2)))",
    "G(p1 & !p2 -> (!p0 W (p3 | p2)))",
    // Response.
    "G(p0 -> F p3)",
    "F p2 -> (p0 -> (!p2 U (p3 & !p2))) U p2",
    "G(p1 -> G(p0 -> F p3))",
    "G((p1 & !p2 & F p2) -> ((p0 -> (!p2 U (p3 & !p2))) U p2))",
    "G(p1 & !p2 -> ((p0 -> (!p2 U (p3 & !p2))) W p2))",
    // Precedence chain (two causes, one effect).
    "F p0 -> (!p0 U (p3 & !p0 & X(!p0 U p4)))",
    "F p2 -> (!p0 U (p2 | (p3 & !p0 & X(!p0 U p4))))",
    "(G !p1) | (!p1 U (p1 & F p0 -> (!p0 U (p3 & !p0 & X(!p0 U p4)))))",
    "G((p1 & F p2) -> (!p0 U (p2 | (p3 & !p0 & X(!p0 U p4)))))",
    "G(p1 -> (F p0 -> (!p0 U (p2 | (p3 & !p0 & X(!p0 U p4))))))",
    // Precedence chain (one cause, two effects).
    "(F(p3 & X F p4)) -> ((!p3) U p0)",
    "F p2 -> ((!(p3 & (!p2) & X(!p2 U (p4 & !p2)))) U (p2 | p0))",
    "(G !p1) | ((!p1) U (p1 & ((F(p3 & X F p4)) -> ((!p3) U p0))))",
    "G((p1 & F p2) -> ((!(p3 & (!p2) & X(!p2 U (p4 & !p2)))) U (p2 | p0)))",
    "G(p1 -> (!(p3 & (!p2) & X(!p2 U (p4 & !p2))) U (p2 | p0) | G(!(p3 & X F p4))))",
    // Response chain (two stimuli, one response).
    "G(p3 & X F p4 -> X(F(p4 & F p0)))",
    "F p2 -> (p3 & X(!p2 U p4) -> X(!p2 U (p4 & F p0))) U p2",
    "G(p1 -> G(p3 & X F p4 -> X(!p4 U (p4 & F p0))))",
    "G((p1 & F p2) -> (p3 & X(!p2 U p4) -> X(!p2 U (p4 & F p0))) U p2)",
    "G(p1 -> (p3 & X(!p2 U p4) -> X(!p2 U (p4 & F p0))) U (p2 | G(p3 & X(!p2 U p4) -> X(!p2 U (p4 & F p0)))))",
    // Response chain (one stimulus, two responses).
    "G(p0 -> F(p3 & X F p4))",
    "F p2 -> (p0 -> (!p2 U (p3 & !p2 & X(!p2 U p4)))) U p2",
    "G(p1 -> G(p0 -> (p3 & X F p4)))",
    "G((p1 & F p2) -> (p0 -> (!p2 U (p3 & !p2 & X(!p2 U p4)))) U p2)",
    "G(p1 -> (p0 -> (!p2 U (p3 & !p2 & X(!p2 U p4)))) U (p2 | G(p0 -> (p3 & X F p4))))",
    // Constrained chain.
    "G(p0 -> F(p3 & !p5 & X(!p5 U p4)))",
    "F p2 -> (p0 -> (!p2 U (p3 & !p2 & !p5 & X((!p2 & !p5) U p4)))) U p2",
    "G(p1 -> G(p0 -> (p3 & !p5 & X(!p5 U p4))))",
    "G((p1 & F p2) -> (p0 -> (!p2 U (p3 & !p2 & !p5 & X((!p2 & !p5) U p4)))) U p2)",
    "G(p1 -> (p0 -> (!p2 U (p3 & !p2 & !p5 & X((!p2 & !p5) U p4)))) U (p2 | G(p0 -> (p3 & !p5 & X(!p5 U p4)))))",
];

/// Per pattern: main states (the two sinks included) of the table minimized by language (the
/// default, [`Minimize::Language`]), minimized by verdict ([`Minimize::Verdict`]), and without
/// minimization (sinks merged, pending states kept apart); auxiliary states; the monitorability
/// class. Measured with this implementation; a change is a change of the construction and must
/// be explained. Checked by hand: `G(p0 -> F p3)` (26) has two pending residuals, `G(p0 -> F
/// p3)` and `F p3 & G(p0 -> F p3)`, which verdict minimization merges (3 states) and language
/// minimization keeps (4); `G(p1 -> G(p0 -> F p3))` (28) has three, the initial one,
/// `G(p0 -> F p3)` once `p1` held, and `F p3 & G(p0 -> F p3)` (5 states, 3 by verdict).
const EXPECTED: [(usize, usize, usize, usize, Monitorability); 55] = [
    (3, 3, 3, 2, Monitorability::Safety),           // 1
    (4, 4, 4, 4, Monitorability::Safety),           // 2
    (4, 4, 4, 3, Monitorability::Safety),           // 3
    (5, 5, 5, 4, Monitorability::Safety),           // 4
    (4, 4, 4, 3, Monitorability::Safety),           // 5
    (3, 3, 3, 2, Monitorability::CoSafety),         // 6
    (3, 3, 3, 3, Monitorability::Safety),           // 7
    (4, 4, 4, 3, Monitorability::Monitorable),      // 8
    (4, 4, 4, 3, Monitorability::Safety),           // 9
    (4, 4, 4, 3, Monitorability::Monitorable),      // 10
    (7, 7, 8, 6, Monitorability::Safety),           // 11
    (8, 8, 9, 8, Monitorability::Safety),           // 12
    (8, 8, 8, 7, Monitorability::Safety),           // 13
    (9, 9, 9, 8, Monitorability::Safety),           // 14
    (8, 8, 8, 7, Monitorability::Safety),           // 15
    (3, 3, 3, 2, Monitorability::Safety),           // 16
    (4, 4, 4, 4, Monitorability::Safety),           // 17
    (4, 4, 4, 3, Monitorability::Safety),           // 18
    (5, 5, 5, 4, Monitorability::Safety),           // 19
    (4, 4, 4, 3, Monitorability::Safety),           // 20
    (3, 3, 3, 3, Monitorability::Safety),           // 21
    (4, 4, 4, 4, Monitorability::Safety),           // 22
    (5, 4, 5, 4, Monitorability::Monitorable),      // 23
    (5, 5, 5, 4, Monitorability::Safety),           // 24
    (4, 4, 4, 3, Monitorability::Safety),           // 25
    (4, 3, 4, 2, Monitorability::NonMonitorable),   // 26
    (4, 4, 4, 4, Monitorability::Safety),           // 27
    (5, 3, 5, 3, Monitorability::NonMonitorable),   // 28
    (5, 5, 5, 4, Monitorability::Safety),           // 29
    (5, 5, 5, 4, Monitorability::Monitorable),      // 30
    (4, 4, 4, 4, Monitorability::Safety),           // 31
    (5, 5, 5, 5, Monitorability::Safety),           // 32
    (5, 5, 5, 5, Monitorability::Safety),           // 33
    (6, 6, 6, 5, Monitorability::Safety),           // 34
    (5, 5, 5, 4, Monitorability::Safety),           // 35
    (4, 4, 4, 5, Monitorability::Safety),           // 36
    (5, 5, 6, 5, Monitorability::Safety),           // 37
    (5, 5, 5, 6, Monitorability::Safety),           // 38
    (6, 6, 7, 5, Monitorability::Safety),           // 39
    (6, 5, 7, 6, Monitorability::Safety),           // 40
    (6, 3, 6, 4, Monitorability::NonMonitorable),   // 41
    (7, 7, 7, 6, Monitorability::Monitorable),      // 42
    (7, 3, 7, 5, Monitorability::NonMonitorable),   // 43
    (10, 3, 10, 8, Monitorability::NonMonitorable), // 44
    (8, 3, 10, 6, Monitorability::NonMonitorable),  // 45
    (5, 3, 5, 4, Monitorability::NonMonitorable),   // 46
    (5, 5, 5, 5, Monitorability::Safety),           // 47
    (5, 4, 5, 5, Monitorability::Monitorable),      // 48
    (6, 6, 6, 5, Monitorability::Safety),           // 49
    (9, 8, 12, 11, Monitorability::Monitorable),    // 50
    (5, 3, 5, 4, Monitorability::NonMonitorable),   // 51
    (5, 5, 5, 5, Monitorability::Safety),           // 52
    (5, 5, 5, 5, Monitorability::Monitorable),      // 53
    (6, 6, 6, 5, Monitorability::Safety),           // 54
    (9, 9, 12, 11, Monitorability::Monitorable),    // 55
];

#[test]
fn the_dwyer_patterns_compile() {
    let mut lines = Vec::new();
    let start = Instant::now();
    for (i, src) in DAC.iter().enumerate() {
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let c = compile(&mut arena, f, &CompileOptions::default()).unwrap();
        let by_verdict = compile(
            &mut arena,
            f,
            &CompileOptions {
                minimize: Minimize::Verdict,
                ..CompileOptions::default()
            },
        )
        .unwrap();
        let un = compile(
            &mut arena,
            f,
            &CompileOptions {
                minimize: Minimize::None,
                ..CompileOptions::default()
            },
        )
        .unwrap();
        let class = monitorability(&mut arena, f, &c.table);
        let got = (
            c.table.state_count(),
            by_verdict.table.state_count(),
            un.table.state_count(),
            c.table.aux_state_count(),
            class,
        );
        if got != EXPECTED[i] {
            lines.push(format!(
                "pattern {} ({src}): got {got:?}, expected {:?}",
                i + 1,
                EXPECTED[i]
            ));
        }
        assert!(by_verdict.table.state_count() <= c.table.state_count());
        assert!(c.table.state_count() <= un.table.state_count());
        lines.push(format!(
            "{:>2} {:>3} {:>3} {:>3} {:>3} {:?}",
            i + 1,
            c.table.state_count(),
            by_verdict.table.state_count(),
            un.table.state_count(),
            c.table.aux_state_count(),
            class
        ));
    }
    eprintln!("{}", lines.join("\n"));
    eprintln!("55 patterns in {:?}", start.elapsed());
    let wrong: Vec<&String> = lines.iter().filter(|l| l.starts_with("pattern")).collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn nested_eventualities_do_not_blow_up() {
    let mut arena = Arena::new();
    let mut f = trac_ltl::Formula::TRUE;
    // F(a1 & X F(a2 & X F(... F a20))), a_i over 8 propositions.
    for i in (1..=20).rev() {
        let a = arena.atom(&format!("a{}", i % 8));
        let xf = arena.next(f);
        let and = arena.and2(a, xf);
        f = arena.finally(and);
    }
    let start = Instant::now();
    let c = compile(&mut arena, f, &CompileOptions::default()).unwrap();
    eprintln!("{} states, {:?}", c.table.state_count(), start.elapsed());
    // One state per level reached, the initial one, and the two sinks.
    assert_eq!(c.table.state_count(), 22);
    assert!(c.stats.explored <= 23, "{:?}", c.stats);
}

/// `a1 | … | an` (`sep` = `|`) or `a1 & … & an`.
fn wide(n: usize, sep: &str) -> String {
    (1..=n)
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>()
        .join(&format!(" {sep} "))
}

/// Issue 8 §1.4: compile time was exponential in the width of `|` and `&` (`G(a1 | … | a20)`
/// took 2.4 s, 24 operands more than a minute). The goal, under 50 ms in a release build, is
/// measured by `cargo bench --bench compile` (BENCHMARKS.md); this test asserts the state
/// counts (derived by hand below) and, as the issue asks for the goal in a test, a generous
/// bound of 10 s per formula that holds in a debug build on a loaded machine.
#[test]
fn wide_disjunctions_and_conjunctions_compile() {
    // (formula, states by language, states by verdict, auxiliary states)
    let cases = [
        // Safety: pending until a step where no a_i holds. Initial + two sinks.
        (format!("G({})", wide(100, "|")), 3, 3, 2),
        // Co-safety: pending until all a_i hold at once.
        (format!("F({})", wide(100, "&")), 3, 3, 2),
        // Never decided. By language four pending residuals: the property, `F b & property`
        // (some a_i, no b, no c), `G(... -> F b)` (after c) and `F b & G(... -> F b)`; by
        // verdict one. Auxiliary (LTLf acceptance): the same four.
        (format!("G(({}) -> F b) & F c", wide(50, "|")), 6, 3, 4),
        (format!("G(({}) -> F b) & F c", wide(50, "&")), 6, 3, 4),
        // Never violated; satisfied by `b` then `c`. Pending residuals: the property φ, `c | φ`
        // (after b with some a_i), `F(b & X c)` (after a step with no a_i: the G part is
        // gone) and `c | F(b & X c)`. By verdict φ merges with `F(b & X c)` (both wait for
        // `b` then `c`), and `c | φ` with `c | F(b & X c)`. Auxiliary (the run without
        // restarts): the four residuals and `true`.
        (format!("G({}) | F(b & X c)", wide(100, "|")), 6, 4, 5),
    ];
    for (src, lang, verdict, aux) in cases {
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, &src).unwrap();
        let start = Instant::now();
        let c = compile(&mut arena, f, &CompileOptions::default()).unwrap();
        let took = start.elapsed();
        let v = compile(
            &mut arena,
            f,
            &CompileOptions {
                minimize: Minimize::Verdict,
                ..CompileOptions::default()
            },
        )
        .unwrap();
        eprintln!("{took:?} {:?}", c.stats);
        let short = &src[..src.len().min(60)];
        assert_eq!(
            (
                c.table.state_count(),
                v.table.state_count(),
                c.table.aux_state_count()
            ),
            (lang, verdict, aux),
            "{short}"
        );
        assert!(took.as_secs() < 10, "{short}: {took:?}");
    }
}

#[test]
fn monitorability_is_bounded_and_decided_by_the_table_or_the_syntax_first() {
    let class = |src: &str, budget: usize| {
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, src).unwrap();
        let c = compile(&mut arena, f, &CompileOptions::default()).unwrap();
        monitorability_within(&mut arena, f, &c.table, budget)
    };
    // No search at all (budget 0): no cycle among pending states (every trace decided by step
    // 2); syntactic safety (`G`); syntactic co-safety (the paper's tree formula, depth 1: only
    // `F`, `X`, `&`, `|`); a pending state that reaches no verdict (`G F`).
    assert_eq!(class("p0 & X p1", 0), Some(Monitorability::Both));
    assert_eq!(class("G(p0)", 0), Some(Monitorability::Safety));
    assert_eq!(
        class("F(n0 & X F((n1 & X F sink) | (n2 & X F sink)))", 0),
        Some(Monitorability::CoSafety)
    );
    assert_eq!(class("G F p0", 0), Some(Monitorability::NonMonitorable));
    // Pattern 8 needs the search: within one tableau state it is unknown, unbounded it is
    // monitorable (EXPECTED above).
    assert_eq!(class(DAC[7], 1), None);
    assert_eq!(class(DAC[7], usize::MAX), Some(Monitorability::Monitorable));
}
