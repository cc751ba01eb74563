//! The compiled step in isolation, and the compile time of the 55 Dwyer patterns (BENCHMARKS.md,
//! "Issue 14, third pass"), without criterion and without building the `trac` binary: a quick
//! before/after check on a loaded machine: times are the thread's CPU time
//! (`/proc/thread-self/schedstat`), best of 5 rounds.
//!
//! usage: `cargo run --release -p trac-runtime --example step_speed -- [EVENTS]`
//!
//! - W1 (benches): `G((q & !r) -> ((p -> (!r U (s & !r))) W r))` on EVENTS (default 10^6)
//!   random steps, each proposition true with probability 1/4, TRAC_R (restart after every
//!   verdict): `TableMonitor::step_bits`.
//! - The 55 Dwyer patterns (`benches/data/dwyer.ron`) compiled together, minimized by language
//!   (the default) and by verdict (W5 of the report), and the verdict-minimized tables stepped
//!   together on EVENTS / 200 random steps over their 6 propositions.

use std::sync::Arc;
use std::time::Instant;
use trac_core::table::{FusedMonitor, Table, TableMonitor};
use trac_runtime::engine::monitor::ResetPolicy;
use trac_spec::spec::Spec;

/// CPU time of this thread in ns (`/proc/thread-self/schedstat`: time on a CPU, not waiting
/// for one: the machine may be loaded), else wall time since the first call.
fn cpu_ns() -> f64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or_else(|| START.get_or_init(Instant::now).elapsed().as_nanos() as f64)
}

fn rng(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Steps every table's monitor on `events` random steps (each of `names` true with probability
/// 1/4; per table, its propositions' bits gathered beforehand, so only the step is timed): ns per
/// property-event, best of `rounds`.
fn run(tables: &[Arc<Table>], names: &[&str], events: usize, rounds: usize) -> (f64, f64) {
    let policy = ResetPolicy {
        on_violation: true,
        on_satisfaction: true,
    };
    let maps: Vec<Vec<u32>> = tables
        .iter()
        .map(|t| {
            t.prop_names()
                .map(|n| names.iter().position(|g| *g == n).expect("known") as u32)
                .collect()
        })
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    // Flat: the valuations of step `k` are `steps[k * tables..(k + 1) * tables]`.
    let mut steps: Vec<u64> = Vec::with_capacity(events * tables.len());
    for _ in 0..events {
        let mut g = 0u64;
        for i in 0..names.len() {
            if rng(&mut seed).is_multiple_of(4) {
                g |= 1 << i;
            }
        }
        for m in &maps {
            steps.push(
                m.iter()
                    .enumerate()
                    .fold(0u64, |v, (k, &j)| v | (g >> j & 1) << k),
            );
        }
    }
    let (best, verdicts) = time(
        &steps,
        tables.len(),
        rounds,
        || {
            tables
                .iter()
                .map(|t| TableMonitor::new(t.clone(), policy))
                .collect()
        },
        |m: &mut TableMonitor, v| m.step_bits(&[v]).is_some(),
    );
    // The same steps by `FusedMonitor` (one add and one load per step), same verdicts.
    let (best_fused, fused_verdicts) = time(
        &steps,
        tables.len(),
        rounds,
        || {
            tables
                .iter()
                .map(|t| FusedMonitor::new(&**t, policy).expect("dense tables have a fused step"))
                .collect()
        },
        |m: &mut FusedMonitor, v| m.step_reports(v),
    );
    eprintln!("  ({verdicts} verdicts; fused: {fused_verdicts})");
    assert_eq!(
        verdicts, fused_verdicts,
        "both monitors report the same verdicts"
    );
    (best, best_fused)
}

/// Steps fresh monitors (`make`, one per table) by `step` over `steps` (per step, one valuation
/// per table), `rounds` times, at least 5·10^7 property-steps per round (the CPU clock read
/// advances by ticks): the best ns per property-event, and the verdicts reported.
fn time<M>(
    steps: &[u64],
    tables: usize,
    rounds: usize,
    make: impl Fn() -> Vec<M>,
    step: impl Fn(&mut M, u64) -> bool,
) -> (f64, u64) {
    let events = steps.len() / tables;
    let mut best = f64::INFINITY;
    let mut verdicts = 0u64;
    for _ in 0..rounds {
        let mut ms = make();
        let reps = (50_000_000 / (events * tables)).max(1);
        let t0 = cpu_ns();
        for _ in 0..reps {
            for s in steps.chunks_exact(tables) {
                for (m, &v) in ms.iter_mut().zip(s) {
                    verdicts += u64::from(step(m, v));
                }
            }
        }
        best = best.min((cpu_ns() - t0) / (reps * events * tables) as f64);
    }
    (best, verdicts)
}

fn main() {
    let events: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("EVENTS"));
    let compile = |arena: &trac_ltl::formula::Arena, f| {
        let mut a = arena.clone();
        Arc::new(
            trac_compile::compile(&mut a, f, &Default::default())
                .expect("compiles")
                .table,
        )
    };
    let mut arena = trac_ltl::formula::Arena::new();
    let w1 = trac_ltl::parser::parse(&mut arena, "G((q & !r) -> ((p -> (!r U (s & !r))) W r))")
        .expect("W1 parses");
    let t = compile(&arena, w1);
    let (ns, fused) = run(&[t], &["p", "q", "r", "s"], events, 5);
    println!("W1, {events} random steps: {ns:.2} ns per property-event by TableMonitor::step_bits, {fused:.2} ns by FusedMonitor::step (best of 5)");

    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/data/dwyer.ron");
    let spec = Spec::from_path(&root)
        .and_then(|s| s.check())
        .expect("dwyer.ron");
    let mut tables = Vec::new();
    for minimize in [
        trac_compile::Minimize::Language,
        trac_compile::Minimize::Verdict,
    ] {
        let opts = trac_compile::CompileOptions {
            minimize,
            ..Default::default()
        };
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t0 = cpu_ns();
            for _ in 0..10 {
                tables = spec
                    .properties
                    .iter()
                    .map(|p| {
                        let mut a = p.arena.clone();
                        Arc::new(
                            trac_compile::compile(&mut a, p.formula, &opts)
                                .expect("compiles")
                                .table,
                        )
                    })
                    .collect();
            }
            best = best.min((cpu_ns() - t0) / 1e7);
        }
        println!(
            "55 Dwyer patterns compiled together, minimized by {minimize:?}: {best:.1} ms (best of 5 rounds of 10; goal < 50 ms), {} states",
            tables.iter().map(|t| t.state_count()).sum::<usize>()
        );
    }
    let (ns, fused) = run(
        &tables,
        &["p0", "p1", "p2", "p3", "p4", "p5"],
        events / 200,
        5,
    );
    println!(
        "55 Dwyer patterns, {} random steps: {ns:.2} ns per property-event by TableMonitor::step_bits, {fused:.2} ns by FusedMonitor::step (best of 5)",
        events / 200
    );
}
