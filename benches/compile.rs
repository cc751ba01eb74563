//! Workload 5 of issue 5: compile time and state counts of the 55 Dwyer patterns
//! (`benches/data/dwyer.ron`), the Trucks spec (`examples/specs/trucks.ron`) and the paper's tree
//! formulas of depth 1–3. Before the criterion measurements, prints one line per property:
//! compile time, states explored, states and auxiliary states of the minimized table, decision
//! nodes and bits of monitor state.
//!
//! The depth-4 tree formula is left out: its compilation explores the ~4.6·10^5 sets of tree
//! nodes seen so far and did not finish within 9 minutes (set `TRAC_BENCH_TREE4=1` to try it).

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use support::*;

fn print_stats(group: &str, props: &[(String, Prop)]) {
    println!("{group}: id, compile time, explored, states, aux states, nodes, state bits");
    for (id, p) in props {
        let s = compile_stat(id, p);
        println!(
            "  {:32} {:>9.3} ms {:>6} {:>6} {:>6} {:>6} {:>3}",
            s.id,
            s.time.as_secs_f64() * 1e3,
            s.explored,
            s.states,
            s.aux_states,
            s.nodes,
            state_bits(s.states, s.aux_states)
        );
    }
}

fn trees() -> Vec<(String, Prop)> {
    let max = if std::env::var_os("TRAC_BENCH_TREE4").is_some() {
        4
    } else {
        3
    };
    (1..=max)
        .map(|d| (format!("tree-b2-d{d}"), Prop::parse(&tree_formula(2, d).0)))
        .collect()
}

fn w5_compile(c: &mut Criterion) {
    let dwyer = dwyer_patterns();
    let trucks = trucks_props();
    let trees = trees();
    print_stats("dwyer", &dwyer);
    print_stats("trucks", &trucks);
    print_stats("tree", &trees);
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
    }
    for (id, p) in &trees {
        g.bench_function(id.as_str(), |b| b.iter(|| compile_stat(id, p).states));
    }
    g.finish();
}

criterion_group!(benches, w5_compile);
criterion_main!(benches);
