//! Audits trace files in process and prints every verdict and end record as the CLI's JSON
//! Lines (`trac_runtime::audit::jsonl`), one `AuditPlan`, one auditor per session (as `trac audit`,
//! without its session-end handling). For before/after comparisons of the audit loop
//! (BENCHMARKS.md, issue 14): byte-identical output and wall time (printed on stderr).
//!
//! usage: `cargo run --release -p trac-runtime --example audit_dump -- [--quiet] [--no-witnesses]
//! (--spec FILE | --formula F)... TRACE...`

use rustc_hash::FxHashMap;
use std::io::Write;
use std::time::Instant;
use trac_runtime::audit::jsonl::{end_record, session_trace_name, verdict_record};
use trac_runtime::audit::{AuditOptions, AuditPlan, Auditor};
use trac_runtime::trace;
use trac_spec::spec::{PropertyDecl, Spec};

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let (mut specs, mut formulas, mut traces, mut quiet) = (vec![], vec![], vec![], false);
    let mut witnesses = true;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quiet" => quiet = true,
            "--no-witnesses" => witnesses = false,
            "--spec" => specs.push(args.next().expect("--spec FILE")),
            "--formula" => formulas.push(args.next().expect("--formula F")),
            _ => traces.push(a),
        }
    }
    let mut checked = Vec::new();
    for s in &specs {
        let spec = Spec::from_path(std::path::Path::new(s)).expect("spec");
        checked.push(trac_runtime::label::labeler::check_spec(&spec).expect("spec checks"));
    }
    if !formulas.is_empty() {
        let spec = Spec {
            name: "formulas".into(),
            properties: formulas
                .iter()
                .enumerate()
                .map(|(i, f)| PropertyDecl {
                    id: format!("f{}", i + 1),
                    formula: f.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        checked.push(trac_runtime::label::labeler::check_spec(&spec).expect("formulas check"));
    }
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let mut plan = AuditPlan::new(&checked, &opts).expect("plan");
    plan.set_witnesses(witnesses);
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let t0 = Instant::now();
    let mut events = 0usize;
    for path in &traces {
        let reader = trace::open(std::path::Path::new(path)).expect("open");
        let mut sessions: Vec<(String, Auditor)> = Vec::new();
        let mut index: FxHashMap<Option<String>, usize> = FxHashMap::default();
        let mut error = None;
        for ev in reader {
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            };
            events += 1;
            let i = *index.entry(ev.session.clone()).or_insert_with(|| {
                let mut a = plan.auditor();
                let name = session_trace_name(path, ev.session.as_deref());
                for r in a.initial() {
                    if !quiet {
                        writeln!(out, "{}", verdict_record(&name, &r)).unwrap();
                    }
                }
                sessions.push((name, a));
                sessions.len() - 1
            });
            let (name, a) = &mut sessions[i];
            for r in a.step(&ev) {
                if !quiet {
                    writeln!(out, "{}", verdict_record(name, &r)).unwrap();
                }
            }
        }
        for (name, mut a) in sessions {
            if error.is_none() {
                for r in a.end_of_trace() {
                    if !quiet {
                        writeln!(out, "{}", verdict_record(&name, &r)).unwrap();
                    }
                }
            }
            for e in a.finish() {
                if !quiet {
                    writeln!(
                        out,
                        "{}",
                        end_record(&name, a.steps(), &e, error.as_deref())
                    )
                    .unwrap();
                }
            }
        }
    }
    out.flush().unwrap();
    let dt = t0.elapsed().as_secs_f64();
    eprintln!(
        "{events} events in {dt:.3} s ({:.0} events/s)",
        events as f64 / dt
    );
}
