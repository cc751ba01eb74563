//! The 55 specification patterns of Dwyer, Avrunin & Corbett ("Patterns in property
//! specifications for finite-state verification", ICSE 1999), in the LTL form listed by Spot's
//! `genltl --dac-patterns` (propositions p0..p5), compile, with their state counts written down;
//! and a 20-level nested `F(a1 & X F(a2 & ...))` over 8 propositions compiles without blow-up.

use std::time::Instant;
use trac_compile::{compile, monitorability, CompileOptions, Monitorability};
use trac_spec::Arena;

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

#[test]
fn the_dwyer_patterns_compile() {
    let mut lines = Vec::new();
    let start = Instant::now();
    for (i, src) in DAC.iter().enumerate() {
        let mut arena = Arena::new();
        let f = trac_spec::parse(&mut arena, src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let c = compile(&mut arena, f, &CompileOptions::default()).unwrap();
        let un = compile(
            &mut arena,
            f,
            &CompileOptions {
                minimize: false,
                ..CompileOptions::default()
            },
        )
        .unwrap();
        let class = monitorability(&mut arena, f, &c.table);
        lines.push(format!(
            "{:>2} {:>3} {:>3} {:>3} {:?}",
            i + 1,
            c.table.state_count(),
            un.table.state_count(),
            c.table.aux_state_count(),
            class
        ));
    }
    eprintln!("{}", lines.join("\n"));
    eprintln!("55 patterns in {:?}", start.elapsed());
}

#[test]
fn nested_eventualities_do_not_blow_up() {
    let mut arena = Arena::new();
    let mut f = trac_spec::Formula::TRUE;
    for i in (1..=20).rev() {
        let a = arena.atom(&format!("a{}", i % 8));
        let xf = arena.next(f);
        let and = arena.and2(a, xf);
        f = arena.finally(and);
    }
    let start = Instant::now();
    let c = compile(&mut arena, f, &CompileOptions::default()).unwrap();
    eprintln!("{} states, {:?}", c.table.state_count(), start.elapsed());
    assert!(c.table.state_count() <= 23, "{}", c.table.state_count());
    assert_eq!(
        monitorability(&mut arena, f, &c.table),
        Monitorability::CoSafety
    );
}
