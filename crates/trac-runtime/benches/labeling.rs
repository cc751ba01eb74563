//! Issue 14, rule-labeled text: the per-line costs of auditing a plain-text action log with a
//! spec's labeling rules, on the shared paper logs (`../shared/data/paper-traces`: Trucks,
//! ScienceWorld, TextWorld, each with its bundled spec; skipped with a message when absent).
//!
//! Per spec, per line of the spec's logs concatenated (throughput in lines):
//! - `read`: the plain-text reader (`TraceReader`, step prefix and markdown removal);
//! - `label/prefiltered`: `RuleLabeler::label_event` with the Aho–Corasick prefilter and the
//!   ASCII word-boundary regexes; `label/every-regex`: the same labeler running every rule's
//!   regex ([`RuleLabeler::without_prefilter`], the labeler before issue 14's third pass);
//! - `audit`: the whole audit loop in process (labels, derived atoms, monitors), one auditor of
//!   one `AuditPlan` per pass over the log.
//!
//! `cargo bench -p trac-runtime --bench labeling` (add `-- --warm-up-time 1 --measurement-time 2` on a shared
//! machine). Figures: BENCHMARKS.md, "Issue 14, third pass: rule-labeled text".

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::path::{Path, PathBuf};
use trac_runtime::audit::{AuditOptions, AuditPlan};
use trac_runtime::label::labeler::RuleLabeler;
use trac_runtime::trace::{Event, TraceFormat, TraceReader};
use trac_spec::spec::Spec;

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of every `*.txt` log of `dir`, in name order, concatenated.
fn logs(dir: &Path) -> Option<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let mut text = String::new();
    for f in files {
        text.push_str(&std::fs::read_to_string(f).ok()?);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Some(text)
}

fn read(text: &str) -> Vec<Event> {
    TraceReader::from_reader(text.as_bytes(), "bench", TraceFormat::Text)
        .filter_map(Result::ok)
        .collect()
}

fn bench(c: &mut Criterion) {
    let shared = root().join("../shared/data/paper-traces");
    for (spec_file, dir) in [
        ("trucks.ron", "trucks"),
        ("scienceworld.ron", "scienceworld"),
        ("textworld.ron", "textworld"),
    ] {
        let Some(text) = logs(&shared.join(dir)) else {
            eprintln!(
                "labeling: {} not found, skipped",
                shared.join(dir).display()
            );
            continue;
        };
        let spec = Spec::from_path(&root().join("examples/specs").join(spec_file)).unwrap();
        let events = read(&text);
        let mut g = c.benchmark_group(format!("labeling/{dir}"));
        g.throughput(Throughput::Elements(events.len() as u64));
        g.bench_function("read", |b| b.iter(|| read(&text).len()));
        let fast = RuleLabeler::new(&spec).unwrap();
        let plain = fast.clone().without_prefilter();
        for (name, labeler) in [("label/prefiltered", &fast), ("label/every-regex", &plain)] {
            g.bench_function(name, |b| {
                b.iter(|| {
                    events
                        .iter()
                        .map(|e| labeler.label_event(e).len())
                        .sum::<usize>()
                })
            });
        }
        let checked = trac_runtime::label::labeler::check_spec(&spec).unwrap();
        let opts = AuditOptions {
            compiler: Some(trac_compile::Compiler::shared()),
            ..AuditOptions::default()
        };
        let plan = AuditPlan::new(&[checked], &opts).unwrap();
        g.bench_function("audit", |b| {
            b.iter_batched(
                || plan.auditor(),
                |mut a| events.iter().map(|e| a.step(e).len()).sum::<usize>(),
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
