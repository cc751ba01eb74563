//! The shared Trucks / TextWorld / ScienceWorld logs (`../shared/data/paper-traces`) audited with
//! the bundled specs by every engine: the cross-check (compiled, complete and plain progression,
//! see also `cross_check.rs`) finds no difference; the compiled and the
//! complete progression engines report the same verdicts; plain progression reports the same
//! violations (step, property, value) and violation counts, and a subset of the satisfactions
//! (complete verdicts see some satisfactions earlier, e.g. `order_6_5` of Trucks at step 8 of
//! `out1.txt`, which progression never folds to `true`).
//!
//! Skipped with a notice when the shared data is missing, except on CI (`CI=true`).

use std::path::{Path, PathBuf};
use trac_runtime::audit::{AuditOptions, Auditor};
use trac_runtime::engine::Engine;
use trac_runtime::trace;
use trac_spec::spec::Spec;

fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/paper-traces");
    if dir.is_dir() {
        return Some(dir);
    }
    // Tests calling this are ignored (`cfg(no_shared_logs)`, build/needs.rs) when the logs
    // were missing at build time outside CI: here they are missing under CI=true, or removed since.
    panic!(
        "the shared paper traces are missing at {} (under CI=true they must be beside the repository)",
        dir.display()
    )
}

/// (step, property, value, verdict) of every verdict, then (property, verdict, ltlf, violations)
/// at the end.
type Summary = (Vec<String>, Vec<String>);

fn audit(spec: &Path, log: &Path, engine: Engine, reset: bool) -> Summary {
    let checked = Spec::from_path(spec).unwrap().check().unwrap();
    let opts = AuditOptions {
        reset,
        engine,
        compiler: Some(trac_compile::Compiler::shared()),
    };
    let mut a = Auditor::new(std::slice::from_ref(&checked), &opts).unwrap();
    let mut recs: Vec<String> = Vec::new();
    let show = |r: &trac_runtime::audit::VerdictRecord| {
        format!("{} {} {:?} {}", r.step, r.property, r.value, r.verdict)
    };
    recs.extend(a.initial().iter().map(show));
    for ev in trace::open(log).unwrap() {
        let ev = ev.unwrap();
        recs.extend(a.step(&ev).iter().map(show));
        if let Some((id, value, m)) = a.mismatch() {
            panic!("{}: {id} {value:?}: {m}", log.display());
        }
    }
    let ends = a
        .finish()
        .iter()
        .map(|e| format!("{} {} {} {}", e.property, e.verdict, e.ltlf, e.violations))
        .collect();
    (recs, ends)
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn every_engine_agrees_on_the_shared_logs() {
    let Some(dir) = shared_dir() else { return };
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs");
    let mut logs = 0;
    let mut differences = Vec::new();
    for (env, spec) in [
        ("trucks", "trucks.ron"),
        ("textworld", "textworld.ron"),
        ("scienceworld", "scienceworld.ron"),
    ] {
        let spec = specs.join(spec);
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(env))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        files.sort();
        for log in files {
            logs += 1;
            for reset in [true, false] {
                let compiled = audit(&spec, &log, Engine::Compiled, reset);
                audit(&spec, &log, Engine::CrossCheck, reset);
                let complete = audit(&spec, &log, Engine::CompleteProgression, reset);
                if complete != compiled {
                    differences.push(format!(
                        "{} (reset {reset}): complete progression {complete:?}\n  compiled {compiled:?}",
                        log.display(),
                    ));
                }
                let plain = audit(&spec, &log, Engine::Progression, reset);
                let violations = |s: &Summary| -> Vec<String> {
                    s.0.iter()
                        .filter(|r| r.ends_with("violated"))
                        .cloned()
                        .collect()
                };
                let counts = |s: &Summary| -> Vec<String> {
                    s.1.iter()
                        .map(|e| {
                            let w: Vec<&str> = e.split(' ').collect();
                            format!("{} {} {}", w[0], w[2], w[3])
                        })
                        .collect()
                };
                let satisfied_missing: Vec<&String> = plain
                    .0
                    .iter()
                    .filter(|r| r.ends_with("satisfied") && !compiled.0.contains(r))
                    .collect();
                if violations(&plain) != violations(&compiled)
                    || counts(&plain) != counts(&compiled)
                    || !satisfied_missing.is_empty()
                {
                    differences.push(format!(
                        "{} (reset {reset}): progression {plain:?}\n  compiled {compiled:?}",
                        log.display(),
                    ));
                }
            }
        }
    }
    assert!(logs >= 20, "expected the paper's logs, found {logs}");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
