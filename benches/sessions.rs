//! Issue 14, sessions: a trace file of many short sessions should cost what its events cost.
//!
//! First, side by side in one run, the release `trac` binary on two pre-labeled JSON Lines files
//! of the same number of events (written to `target/bench-data` at bench time, never committed):
//! `N` sessions of 5 events (`TRAC_BENCH_SESSIONS`, default 10^5) and one session of `5·N`
//! events, with 3 `--formula` properties and `--summary`; it prints wall time, peak RSS and the
//! ratio (goal: ≤ 1.5). Then criterion, in process: auditing 10^4 sessions of 5 events with one
//! [`AuditPlan`] (an auditor cloned per session) against one auditor over 5·10^4 events.

mod support;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use support::*;
use trac_runtime::audit::{AuditOptions, AuditPlan};
use trac_runtime::trace::Event;

const FORMULAS: [&str; 3] = ["G(p -> F q)", "G !(p & r)", "G(q -> X !q)"];
const LABELS: [&[&str]; 5] = [&["p"], &["q"], &["r"], &["p", "q"], &[]];

/// Writes `sessions` sessions of `k` events (no `session` field when there is one).
fn sessions_log(sessions: usize, k: usize) -> PathBuf {
    let path = target_dir()
        .join("bench-data")
        .join(format!("sessions-{sessions}x{k}.jsonl"));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for s in 0..sessions {
        for i in 0..k {
            let labels: Vec<String> = LABELS[(s + i) % 5]
                .iter()
                .map(|l| format!("\"{l}\""))
                .collect();
            let sess = if sessions == 1 {
                String::new()
            } else {
                format!("\"session\":\"s{s}\",")
            };
            writeln!(w, "{{{sess}\"labels\":[{}]}}", labels.join(",")).unwrap();
        }
    }
    w.flush().unwrap();
    path
}

fn events(sessions: usize, k: usize) -> Vec<Event> {
    let mut out = Vec::with_capacity(sessions * k);
    for s in 0..sessions {
        for i in 0..k {
            out.push(Event {
                session: Some(format!("s{s}")),
                step: out.len() + 1,
                declared_step: None,
                input: None,
                output: None,
                labels: Some(LABELS[(s + i) % 5].iter().map(|l| l.to_string()).collect()),
                raw: String::new(),
                line: out.len() + 1,
                ..Event::default()
            });
        }
    }
    out
}

fn formula_spec() -> trac_spec::spec::CheckedSpec {
    let spec = trac_spec::spec::Spec {
        name: "bench".into(),
        properties: FORMULAS
            .iter()
            .enumerate()
            .map(|(i, f)| trac_spec::spec::PropertyDecl {
                id: format!("f{}", i + 1),
                formula: f.to_string(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    trac_runtime::label::labeler::check_spec(&spec).expect("bench formulas check")
}

fn sessions(c: &mut Criterion) {
    let n: usize = std::env::var("TRAC_BENCH_SESSIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let bin = trac_binary().expect("trac builds");
    let mut runs = Vec::new();
    for (sessions, k) in [(1, 5 * n), (n, 5)] {
        let log = sessions_log(sessions, k);
        let mut args: Vec<String> = Vec::new();
        for f in FORMULAS {
            args.extend(["--formula".to_string(), f.to_string()]);
        }
        args.extend(["--summary".to_string(), log.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_audit(&bin, &args).expect("trac audit runs");
        println!(
            "trac audit, {sessions} session(s) of {k} events: {:.2} s, peak RSS {:.1} MiB, exit {:?}",
            r.time.as_secs_f64(),
            r.peak_kib as f64 / 1024.0,
            r.code
        );
        runs.push(r.time.as_secs_f64());
    }
    println!(
        "ratio ({n} sessions of 5) / (1 session of {}): {:.2} (goal <= 1.5)",
        5 * n,
        runs[1] / runs[0]
    );

    let spec = formula_spec();
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..Default::default()
    };
    let plan = AuditPlan::new(std::slice::from_ref(&spec), &opts).expect("plan");
    let many = events(10_000, 5);
    let mut g = c.benchmark_group("sessions");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(many.len() as u64));
    g.bench_function("one-session-5e4-events", |b| {
        b.iter(|| {
            let mut a = plan.auditor();
            let mut n = a.initial().len();
            for ev in &many {
                n += a.step(ev).len();
            }
            n += a.end_of_trace().len();
            (n, a.finish().len())
        })
    });
    g.bench_function("1e4-sessions-of-5", |b| {
        b.iter(|| {
            let mut n = 0;
            for chunk in many.chunks(5) {
                let mut a = plan.auditor();
                n += a.initial().len();
                for ev in chunk {
                    n += a.step(ev).len();
                }
                n += a.end_of_trace().len();
                n += a.finish().len();
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, sessions);
criterion_main!(benches);
