//! Workload 6 of issue 5: end to end, `trac audit --spec examples/specs/trucks.ron` on a
//! generated labeled JSON Lines log (`target/bench-data/trucks-N.jsonl`, written at bench time,
//! never committed) of a mostly compliant Trucks agent: 16 properties, 61 monitor instances.
//!
//! First one run of the release `trac` binary on 10^6 events, printing events per second and
//! the peak resident memory of the child process (`/usr/bin/time -f %M`, or VmHWM polled from
//! `/proc`); then criterion measurements on 10^5 events: the CLI, and the in-process audit loop
//! (`trac_runtime::audit`) with each engine.

mod support;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;
use support::*;
use trac_runtime::engine::Engine;

fn log(events: usize) -> std::path::PathBuf {
    let path = target_dir()
        .join("bench-data")
        .join(format!("trucks-{events}.jsonl"));
    audit_log(&path, events).expect("the bench log can be written");
    path
}

fn cli_args(spec: &std::path::Path, trace: &std::path::Path, extra: &[String]) -> Vec<String> {
    let mut a = vec![
        "--spec".to_string(),
        spec.display().to_string(),
        "--format".into(),
        "jsonl".into(),
    ];
    a.extend(extra.iter().cloned());
    a.push(trace.display().to_string());
    a
}

fn w6_audit(c: &mut Criterion) {
    let spec_path = root().join("examples/specs/trucks.ron");
    let bin = trac_binary().expect("trac builds");
    let engines = cli_engines(&bin);
    let big = log(1_000_000);
    for (name, extra) in &engines {
        let args = cli_args(&spec_path, &big, extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_audit(&bin, &args).expect("trac audit runs");
        println!(
            "trac audit ({name}), 10^6 events x 61 instances: {:.2} s, {:.0} events/s, peak RSS {:.1} MiB, exit {:?}, {} bytes of output",
            r.time.as_secs_f64(),
            1e6 / r.time.as_secs_f64(),
            r.peak_kib as f64 / 1024.0,
            r.code,
            r.out_bytes
        );
    }
    let small = log(100_000);
    let spec = trucks_spec();
    let mut g = c.benchmark_group("w6_audit");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(100_000));
    for (name, extra) in &engines {
        let args = cli_args(&spec_path, &small, extra);
        let name = format!("cli-{name}");
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                (0..iters)
                    .map(|_| run_audit(&bin, &args).expect("trac audit runs").time)
                    .sum()
            })
        });
    }
    for engine in [
        Engine::Compiled,
        Engine::Progression,
        Engine::CompleteProgression,
    ] {
        g.bench_function(format!("in-process-{}", engine.as_str()), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| audit_in_process(&spec, &small, engine).0)
                    .sum()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, w6_audit);
criterion_main!(benches);
