//! Workload 5 of issue 5: compile time and state counts of the 55 Dwyer patterns
//! (`benches/data/dwyer.ron`), the Trucks spec (`examples/specs/trucks.ron`), the paper's tree
//! formulas of depth 1–4, and wide `|` / `&` (issue 8: `G(a1 | … | a100)`,
//! `G((a1 | … | a50) -> F b) & F c`, goal < 50 ms each). Before the criterion measurements,
//! prints one line per property: compile time, states explored, states and auxiliary states of
//! the table minimized by language (the default), states when minimized by verdict only,
//! decision nodes and bits of monitor state.

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use support::*;
use trac_compile::Minimize;

fn print_stats(group: &str, props: &[(String, Prop)]) {
    println!(
        "{group}: id, compile time, explored, states, aux states, nodes, state bits | by verdict: time, states"
    );
    for (id, p) in props {
        let s = compile_stat(id, p);
        let v = compile_stat_with(id, p, Minimize::Verdict);
        println!(
            "  {:32} {:>9.3} ms {:>6} {:>6} {:>6} {:>6} {:>3} | {:>9.3} ms {:>6}",
            s.id,
            s.time.as_secs_f64() * 1e3,
            s.explored,
            s.states,
            s.aux_states,
            s.nodes,
            state_bits(s.states, s.aux_states),
            v.time.as_secs_f64() * 1e3,
            v.states,
        );
    }
}

fn trees() -> Vec<(String, Prop)> {
    (1..=4)
        .map(|d| (format!("tree-b2-d{d}"), Prop::parse(&tree_formula(2, d).0)))
        .collect()
}

/// `a1 | … | an` (or `&`).
fn wide(n: usize, op: &str) -> String {
    (1..=n)
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>()
        .join(&format!(" {op} "))
}

fn wides() -> Vec<(String, Prop)> {
    vec![
        (
            "G(a1|..|a100)".into(),
            Prop::parse(&format!("G({})", wide(100, "|"))),
        ),
        (
            "G((a1|..|a50) -> F b) & F c".into(),
            Prop::parse(&format!("G(({}) -> F b) & F c", wide(50, "|"))),
        ),
        (
            "F(a1&..&a100)".into(),
            Prop::parse(&format!("F({})", wide(100, "&"))),
        ),
    ]
}

fn w5_compile(c: &mut Criterion) {
    let dwyer = dwyer_patterns();
    let trucks = trucks_props();
    let trees = trees();
    let wides = wides();
    print_stats("dwyer", &dwyer);
    print_stats("trucks", &trucks);
    print_stats("tree", &trees);
    print_stats("wide", &wides);
    let mut g = c.benchmark_group("w5_compile");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (name, props) in [("dwyer-55", &dwyer), ("trucks-16", &trucks)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                props
                    .iter()
                    .map(|(id, p)| compile_stat(id, p).states)
                    .sum::<usize>()
            })
        });
        g.bench_function(format!("{name}-by-verdict"), |b| {
            b.iter(|| {
                props
                    .iter()
                    .map(|(id, p)| compile_stat_with(id, p, Minimize::Verdict).states)
                    .sum::<usize>()
            })
        });
    }
    for (id, p) in trees.iter().chain(&wides) {
        g.bench_function(id.as_str(), |b| b.iter(|| compile_stat(id, p).states));
    }
    g.finish();
}

criterion_group!(benches, w5_compile);
criterion_main!(benches);
