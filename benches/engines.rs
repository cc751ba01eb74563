//! Workloads 1–4 of issue 5, every engine side by side in one criterion group per workload:
//!
//! 1. `w1_trace_length`: one property (Dwyer's "S responds to P after Q until R"), 10^3 … 10^6
//!    random events.
//! 2. `w2_properties`: 1, 11, 55 and 110 Dwyer patterns, and the Trucks spec (16 properties,
//!    61 instances), on random events.
//! 3. `w3_distractors`: one property, 1 … 256 propositions holding per step (the others are
//!    distractors).
//! 4. `w4_tree`: the paper's tree formulas (branching 2, depth 1 … 4) with gaps of 1 … 1000
//!    steps between the relevant events.
//!
//! Throughput is in events: criterion prints time per iteration (one whole trace) and
//! events per second. See `benches/support/mod.rs` for the engines and traces, BENCHMARKS.md for
//! results. Quick run: `cargo bench --bench engines -- --quick`.

mod support;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;
use support::*;

fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g
}

/// Benchmarks every engine of `props` on `t` in group `g`, at parameter `param`.
fn engines(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    props: &[Prop],
    t: &Trace,
    param: &str,
    mut macro_runner: Option<Box<dyn Runner>>,
    compiled: bool,
) {
    g.throughput(Throughput::Elements(t.len() as u64));
    let tables = compiled.then(|| compile_all(props));
    for e in Eng::ALL {
        if !compiled && matches!(e, Eng::CompiledBits | Eng::CompiledLabels) {
            continue;
        }
        let r = match runner(e, props, &t.names, tables.as_deref(), POLICY) {
            Some(r) => Some(r),
            None => macro_runner.take(),
        };
        if let Some(mut r) = r {
            g.bench_with_input(BenchmarkId::new(e.name(), param), t, |b, t| {
                b.iter(|| r.run(t))
            });
        }
    }
}

fn w1_trace_length(c: &mut Criterion) {
    let mut g = group(c, "w1_trace_length");
    let props = vec![Prop::parse(W1)];
    for len in [1_000usize, 10_000, 100_000, 1_000_000] {
        let t = w1_trace(len);
        let mac: Box<dyn Runner> = Box::new(W1Macro::new(&t));
        engines(&mut g, &props, &t, &len.to_string(), Some(mac), true);
    }
    g.finish();
}

fn w2_properties(c: &mut Criterion) {
    let mut g = group(c, "w2_properties");
    for n in [1usize, 11, 55, 110] {
        let props = dwyer_props(n);
        let t = w2_trace(n, 10_000);
        let mac: Option<Box<dyn Runner>> = if n % 55 == 0 {
            Some(Box::new(DwyerMacro::new(&t, n / 55)))
        } else {
            None
        };
        engines(&mut g, &props, &t, &format!("dwyer-{n}"), mac, true);
    }
    let t = trucks_trace(10_000);
    let spec = trucks_spec();
    g.throughput(Throughput::Elements(t.len() as u64));
    for e in Eng::ALL {
        if let Some(mut r) = spec_engine(e, &spec) {
            g.bench_with_input(BenchmarkId::new(e.name(), "trucks-61"), &t, |b, t| {
                b.iter(|| r.run(t))
            });
        }
    }
    g.finish();
}

fn w3_distractors(c: &mut Criterion) {
    let mut g = group(c, "w3_distractors");
    let props = vec![Prop::parse(W1)];
    for n in [1usize, 4, 16, 64, 256] {
        let t = w3_trace(n, 10_000);
        let mac: Box<dyn Runner> = Box::new(W1Macro::new(&t));
        engines(&mut g, &props, &t, &n.to_string(), Some(mac), true);
    }
    g.finish();
}

fn w4_tree(c: &mut Criterion) {
    let mut g = group(c, "w4_tree");
    for d in 1..=4usize {
        for gap in [1usize, 10, 100, 1000] {
            let (p, t) = tree_trace(2, d, gap, 20_000);
            engines(&mut g, &[p], &t, &format!("d{d}-gap{gap}"), None, true);
        }
    }
    g.finish();
}

criterion_group!(
    benches,
    w1_trace_length,
    w2_properties,
    w3_distractors,
    w4_tree
);
criterion_main!(benches);
