//! Issue 14, the per-event path of pre-labeled audits (BENCHMARKS.md, "Issue 14, third pass").
//!
//! Goals (reported, never asserted):
//! - pre-labeled JSON Lines: ≥ 10 M events/s per core with 10 properties;
//! - the compiled step: ≤ 2 ns per property-event (W1 in `engines.rs`; here the same dense step
//!   on the 10 properties' tables, without reading a trace).
//!
//! Input: the trace of `benches/support/gen_sessions.py 1 N` (labels cycling through `p`, `q`,
//! `r`, `p q`, none), written to `target/bench-data/` at bench time. Criterion measures, in
//! process, the audit loop as `trac audit` runs it (trace reader, labels, `Auditor::step`) with
//! the compiled and the plain progression engine, 3 and 10 properties, with witnesses and without
//! (`AuditPlan::set_witnesses(false)`, what `trac audit --summary` runs); and the table monitors
//! alone (`TableMonitor::step_bits`, and `FusedMonitor::step` on valuations gathered beforehand).

mod support;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;
use trac_core::table::{FusedMonitor, TableMonitor};
use trac_runtime::audit::{AuditOptions, AuditPlan};
use trac_runtime::engine::monitor::ResetPolicy;
use trac_runtime::engine::Engine;
use trac_spec::spec::{CheckedSpec, PropertyDecl, Spec};

/// The 3 properties of the sessions benchmark, then 7 more over `p`, `q`, `r`.
pub const FORMULAS: [&str; 10] = [
    "G(p -> F q)",
    "G !(p & r)",
    "G(q -> X !q)",
    "G(r -> F(p & q))",
    "G(p -> X F r)",
    "F q",
    "G(q -> O p)",
    "G(r -> Y q)",
    "G F p",
    "G((p & q) -> X !r)",
];

const EVENTS: usize = 200_000;

fn trace(events: usize) -> std::path::PathBuf {
    let path = target_dir()
        .join("bench-data")
        .join(format!("prelabeled-{events}.jsonl"));
    if !path.exists() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("bench-data");
        let labels = ["[\"p\"]", "[\"q\"]", "[\"r\"]", "[\"p\",\"q\"]", "[]"];
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("trace"));
        for i in 0..events {
            writeln!(out, "{{\"labels\":{}}}", labels[i % 5]).expect("write");
        }
    }
    path
}

fn spec(n: usize) -> CheckedSpec {
    let spec = Spec {
        name: "formulas".into(),
        properties: FORMULAS[..n]
            .iter()
            .enumerate()
            .map(|(i, f)| PropertyDecl {
                id: format!("f{}", i + 1),
                formula: f.to_string(),
                ..PropertyDecl::default()
            })
            .collect(),
        ..Spec::default()
    };
    trac_runtime::label::labeler::check_spec(&spec).expect("bench formulas check")
}

/// One audit of `path` as `trac audit` runs it (one session): events read and verdicts.
fn audit(plan: &AuditPlan, path: &std::path::Path) -> (usize, usize) {
    let mut a = plan.auditor();
    let mut verdicts = a.initial().len();
    let mut events = 0;
    for ev in trac_runtime::trace::open(path).expect("trace opens") {
        let ev = ev.expect("trace reads");
        verdicts += a.step(&ev).len();
        events += 1;
    }
    verdicts += a.end_of_trace().len();
    (events, verdicts)
}

fn prelabeled(c: &mut Criterion) {
    let path = trace(EVENTS);
    let mut g = c.benchmark_group("issue14_prelabeled_jsonl");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(EVENTS as u64));
    for n in [3, 10] {
        let spec = spec(n);
        for engine in [Engine::Compiled, Engine::Progression] {
            let opts = AuditOptions {
                engine,
                compiler: Some(trac_compile::Compiler::shared()),
                ..AuditOptions::default()
            };
            for witnesses in [true, false] {
                let mut plan = AuditPlan::new(std::slice::from_ref(&spec), &opts).expect("plan");
                plan.set_witnesses(witnesses);
                let name = format!(
                    "{n}-props-{}{}",
                    engine.as_str(),
                    if witnesses { "" } else { "-no-witnesses" }
                );
                let t = Instant::now();
                let (events, verdicts) = audit(&plan, &path);
                let per = t.elapsed().as_secs_f64() / events as f64;
                println!(
                    "{name}: {:.2} M events/s ({:.0} ns/event, {:.1} ns per property-event; goal ≥ 10 M events/s with 10 properties), {verdicts} verdicts",
                    1e-6 / per,
                    per * 1e9,
                    per * 1e9 / n as f64,
                );
                g.bench_function(name, |b| b.iter(|| audit(&plan, &path)));
            }
        }
    }
    g.finish();
}

/// The 10 properties' table monitors alone, stepped by the valuations of the trace (dense rows).
fn compiled_step(c: &mut Criterion) {
    let spec = spec(10);
    let mut monitors: Vec<(TableMonitor, [usize; 3])> = spec
        .properties
        .iter()
        .map(|p| {
            let mut arena = p.arena.clone();
            let table = Arc::new(
                trac_compile::compile(&mut arena, p.formula, &Default::default())
                    .expect("bench properties compile")
                    .table,
            );
            let map = std::array::from_fn(|k| {
                let name = ["p", "q", "r"][k];
                table.prop_names().position(|n| n == name).unwrap_or(64)
            });
            let m = TableMonitor::new(
                table,
                ResetPolicy {
                    on_violation: true,
                    on_satisfaction: false,
                },
            );
            (m, map)
        })
        .collect();
    // p, q, r, p q, none as bits of (p, q, r).
    let cycle: [u64; 5] = [0b001, 0b010, 0b100, 0b011, 0];
    let mut g = c.benchmark_group("issue14_compiled_step");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(10 * 100_000));
    g.bench_function("10-props-step_bits-10^5-events", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for i in 0..100_000 {
                let v = cycle[i % 5];
                for (m, map) in &mut monitors {
                    let mut bits = 0u64;
                    for (k, &j) in map.iter().enumerate() {
                        if j < 64 {
                            bits |= (v >> k & 1) << j;
                        }
                    }
                    n += u64::from(m.step_bits(&[bits]).is_some());
                }
            }
            n
        })
    });
    // The same steps by `FusedMonitor` (one add and one load per step; issue 14's ≤ 2 ns goal),
    // each monitor's valuations of the 5-step cycle gathered beforehand.
    let mut fused: Vec<(FusedMonitor, [u64; 5])> = monitors
        .iter()
        .map(|(m, map)| {
            let f = FusedMonitor::new(m.table(), m.policy()).expect("dense tables fuse");
            let bits = cycle.map(|v| {
                map.iter()
                    .enumerate()
                    .filter(|&(_, &j)| j < 64)
                    .fold(0u64, |b, (k, &j)| b | (v >> k & 1) << j)
            });
            (f, bits)
        })
        .collect();
    g.bench_function("10-props-fused-10^5-events", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for i in 0..100_000 {
                for (m, bits) in &mut fused {
                    n += u64::from(m.step_reports(bits[i % 5]));
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, prelabeled, compiled_step);
criterion_main!(benches);
