//! The per-event cost of a `trac_monitor!` monitor's `step` (issue 27: compile-time monitors use
//! the fused table step), beside, in the same run and on the same valuations:
//! - **step_bits (macro before)**: what `step` emitted before, `TableMonitor::step_bits` on the
//!   monitor's own `static` tables (the runtime builds the fused step at the first step and reads
//!   it through the monitor's state);
//! - **FusedMonitor (runtime)**: `trac_core::table::FusedMonitor::step`, the runtime's fastest
//!   stepping of the same tables.
//!
//! Workloads: W1 of BENCHMARKS.md (one property, 4 propositions, 10^5 random steps, each
//! proposition true with probability 1/4, TRAC_R restarting after every verdict) and the 55 Dwyer
//! patterns (`benches/data/dwyer.ron`, 10^4 random steps, 6 propositions). For W1 the "before"
//! valuation bits are gathered from the typed valuation as the old generated code did; for Dwyer
//! the step_bits and FusedMonitor columns read bits gathered per table beforehand (their gathering
//! is not timed, the macro's is). The three engines' verdicts are checked equal at every step
//! before timing. Run: `cargo bench -p trac-macros --bench fused`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use trac_core::generated::{static_monitor, StaticTable};
use trac_core::table::FusedMonitor;
use trac_core::ResetPolicy;

trac_macros::trac_monitor! {
    /// Workload 1's property (Dwyer's "S responds to P after Q until R").
    pub struct W1Monitor {
        props { p: "P", q: "Q (the scope opens)", r: "R (the scope closes)", s: "S" }
        /// S responds to P after Q until R.
        #[reset_on_satisfaction]
        w1: "G((q & !r) -> ((p -> (!r U (s & !r))) W r))",
    }
}

trac_macros::trac_monitor!(pub struct DwyerMonitor from "../../benches/data/dwyer.ron");

/// TRAC_R, restarting after satisfactions too (as W1 and every Dwyer pattern declare).
const POLICY: ResetPolicy = ResetPolicy {
    on_violation: true,
    on_satisfaction: true,
};

/// xorshift64: a reproducible random stream without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `n` bits, each set with probability 1/4.
    fn quarter_bits(&mut self, n: u32) -> u64 {
        let (a, b) = (self.next(), self.next());
        a & b & ((1 << n) - 1)
    }
}

/// The bits of table `t`'s propositions for the global valuation `g` (bit `k` = `p{k}` / the
/// `k`-th of `names`).
fn gather(t: &StaticTable, names: &[&str], g: u64) -> u64 {
    t.prop_names().enumerate().fold(0, |acc, (i, n)| {
        let k = names
            .iter()
            .position(|x| *x == n)
            .expect("a known proposition");
        acc | (g >> k & 1) << i
    })
}

fn w1(c: &mut Criterion) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let trace: Vec<W1MonitorValuation> = (0..100_000)
        .map(|_| {
            let g = rng.quarter_bits(4);
            W1MonitorValuation {
                p: g & 1 != 0,
                q: g & 2 != 0,
                r: g & 4 != 0,
                s: g & 8 != 0,
            }
        })
        .collect();
    let table = W1Monitor::tables()[0];
    // The old generated code's shifts follow the table's proposition order.
    assert_eq!(table.prop_names().collect::<Vec<_>>(), ["q", "r", "p", "s"]);
    let bits = |v: &W1MonitorValuation| {
        u64::from(v.q) | u64::from(v.r) << 1 | u64::from(v.p) << 2 | u64::from(v.s) << 3
    };
    // The three read the same verdicts at every step (checked before timing).
    let mut m = W1Monitor::new();
    let mut old = static_monitor(table, POLICY);
    let mut fm = FusedMonitor::new(table, POLICY).expect("a fused step");
    for v in &trace {
        let (a, b, c) = (m.step(v).w1, old.step_bits(&[bits(v)]), fm.step(bits(v)));
        assert!(a == b && b == c, "W1: the engines disagree");
    }
    let mut g = c.benchmark_group("W1");
    g.throughput(Throughput::Elements(trace.len() as u64));
    g.bench_function(BenchmarkId::new("macro step (fused, static)", "1e5"), |b| {
        let mut m = W1Monitor::new();
        b.iter(|| {
            m.reset();
            let mut n = 0u64;
            for v in &trace {
                n += u64::from(m.step(v).w1.is_some());
            }
            black_box(n)
        })
    });
    g.bench_function(BenchmarkId::new("step_bits (macro before)", "1e5"), |b| {
        let mut m = static_monitor(table, POLICY);
        b.iter(|| {
            trac_core::Monitor::reset(&mut m);
            let mut n = 0u64;
            for v in &trace {
                n += u64::from(m.step_bits(&[bits(v)]).is_some());
            }
            black_box(n)
        })
    });
    g.bench_function(BenchmarkId::new("FusedMonitor (runtime)", "1e5"), |b| {
        b.iter(|| {
            let mut m = FusedMonitor::new(table, POLICY).expect("a fused step");
            let mut n = 0u64;
            for v in &trace {
                n += u64::from(m.step(bits(v)).is_some());
            }
            black_box(n)
        })
    });
    g.finish();
}

fn dwyer(c: &mut Criterion) {
    let names = ["p0", "p1", "p2", "p3", "p4", "p5"];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let globals: Vec<u64> = (0..10_000).map(|_| rng.quarter_bits(6)).collect();
    let trace: Vec<DwyerMonitorValuation> = globals
        .iter()
        .map(|&g| DwyerMonitorValuation {
            p0: g & 1 != 0,
            p1: g & 2 != 0,
            p2: g & 4 != 0,
            p3: g & 8 != 0,
            p4: g & 16 != 0,
            p5: g & 32 != 0,
        })
        .collect();
    let tables = DwyerMonitor::tables();
    let per_table: Vec<Vec<u64>> = globals
        .iter()
        .map(|&g| tables.iter().map(|t| gather(t, &names, g)).collect())
        .collect();
    // The three read the same verdicts at every step (checked before timing).
    let mut m = DwyerMonitor::new();
    let mut old: Vec<_> = tables.iter().map(|t| static_monitor(t, POLICY)).collect();
    let mut fm: Vec<FusedMonitor> = tables
        .iter()
        .map(|t| FusedMonitor::new(*t, POLICY).expect("a fused step"))
        .collect();
    for (v, bits) in trace.iter().zip(&per_table) {
        let a = m.step(v).to_array();
        for (k, &x) in bits.iter().enumerate() {
            let (b, c) = (old[k].step_bits(&[x]), fm[k].step(x));
            assert!(a[k] == b && b == c, "Dwyer: the engines disagree");
        }
    }
    let mut g = c.benchmark_group("Dwyer55");
    g.throughput(Throughput::Elements((trace.len() * tables.len()) as u64));
    g.bench_function(BenchmarkId::new("macro step (fused, static)", "1e4"), |b| {
        let mut m = DwyerMonitor::new();
        b.iter(|| {
            m.reset();
            let mut n = 0u64;
            for v in &trace {
                n += m.step(v).to_array().iter().filter(|x| x.is_some()).count() as u64;
            }
            black_box(n)
        })
    });
    g.bench_function(BenchmarkId::new("step_bits (macro before)", "1e4"), |b| {
        let mut ms: Vec<_> = tables.iter().map(|t| static_monitor(t, POLICY)).collect();
        b.iter(|| {
            ms.iter_mut().for_each(trac_core::Monitor::reset);
            let mut n = 0u64;
            for bits in &per_table {
                for (m, &x) in ms.iter_mut().zip(bits) {
                    n += u64::from(m.step_bits(&[x]).is_some());
                }
            }
            black_box(n)
        })
    });
    g.bench_function(BenchmarkId::new("FusedMonitor (runtime)", "1e4"), |b| {
        b.iter(|| {
            let mut ms: Vec<FusedMonitor> = tables
                .iter()
                .map(|t| FusedMonitor::new(*t, POLICY).expect("a fused step"))
                .collect();
            let mut n = 0u64;
            for bits in &per_table {
                for (m, &x) in ms.iter_mut().zip(bits) {
                    n += u64::from(m.step(x).is_some());
                }
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, w1, dwyer);
criterion_main!(benches);
