//! The cross-check engine runs three engines (compiled, complete progression, plain
//! progression) and finds no difference: on the shared Trucks / TextWorld / ScienceWorld logs
//! (`../shared/data/paper-traces`, ignored when missing outside CI, a failure under `CI=true`)
//! with the bundled specs, and on random formulas (past and future operators) × random traces.
//! Each test also checks that plain progression's verdicts were actually compared.

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use trac_core::labels::{LabelSet, StepInput};
use trac_core::table::TableMonitor;
use trac_ltl::Arena;
use trac_runtime::audit::{AuditOptions, Auditor};
use trac_runtime::engine::parametric::ParametricMonitor;
use trac_runtime::engine::{CrossCheckMonitor, Engine, EngineMonitor};
use trac_runtime::{Monitor, ProgressionMonitor, ResetPolicy};
use trac_spec::spec::{Semantics, Spec};

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

fn plain_checked(m: &EngineMonitor) -> usize {
    match m {
        EngineMonitor::CrossCheck(c) => c.plain_checked(),
        _ => panic!("not a cross-check monitor"),
    }
}

enum Runner {
    Plain(EngineMonitor),
    Param(ParametricMonitor<EngineMonitor>),
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn three_engines_agree_on_the_shared_logs() {
    let Some(dir) = shared_dir() else { return };
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs");
    let compiler = trac_compile::Compiler::shared();
    let (mut logs, mut checked) = (0, 0);
    for (env, spec) in [
        ("trucks", "trucks.ron"),
        ("textworld", "textworld.ron"),
        ("scienceworld", "scienceworld.ron"),
    ] {
        let checked_spec = Spec::from_path(&specs.join(spec)).unwrap().check().unwrap();
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(env))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        files.sort();
        for log in files {
            logs += 1;
            for reset in [true, false] {
                let policy = ResetPolicy {
                    on_violation: reset,
                    on_satisfaction: false,
                };
                let mut runners: Vec<(String, Runner)> = checked_spec
                    .properties
                    .iter()
                    .map(|p| {
                        let c = Some(compiler.as_ref() as &dyn trac_ltl::compiler::TableCompiler);
                        let sem = p.decl.semantics;
                        let r = match &p.var {
                            None => Runner::Plain(
                                EngineMonitor::new(
                                    Engine::CrossCheck,
                                    &p.arena,
                                    p.formula,
                                    policy,
                                    sem,
                                    c,
                                )
                                .unwrap(),
                            ),
                            Some(v) => {
                                let t = EngineMonitor::new_parametric(
                                    Engine::CrossCheck,
                                    &p.arena,
                                    p.formula,
                                    v,
                                    policy,
                                    sem,
                                    c,
                                )
                                .unwrap();
                                Runner::Param(ParametricMonitor::with_template(
                                    &p.arena, p.formula, v, t,
                                ))
                            }
                        };
                        (p.decl.id.clone(), r)
                    })
                    .collect();
                // The auditor labels the events as an audit does.
                let mut labeler = Auditor::new(
                    std::slice::from_ref(&checked_spec),
                    &AuditOptions {
                        compiler: Some(compiler.clone()),
                        ..AuditOptions::default()
                    },
                )
                .unwrap();
                for (i, ev) in trac_runtime::trace::open(&log).unwrap().enumerate() {
                    let ev = ev.unwrap();
                    let labels = labeler.label(&ev);
                    labeler.step(&ev);
                    let input = StepInput {
                        step: i + 1,
                        text: "",
                        labels: &labels,
                    };
                    for (id, r) in &mut runners {
                        let monitors: Vec<&EngineMonitor> = match r {
                            Runner::Plain(m) => {
                                m.step(&input);
                                vec![m]
                            }
                            Runner::Param(pm) => {
                                pm.step(&input);
                                std::iter::once(pm.template())
                                    .chain(pm.instances().map(|(_, m)| m))
                                    .collect()
                            }
                        };
                        for m in monitors {
                            if let Some(x) = m.mismatch() {
                                panic!("{} (reset {reset}) {id}: {x}", log.display());
                            }
                        }
                    }
                }
                for (_, r) in &runners {
                    checked += match r {
                        Runner::Plain(m) => plain_checked(m),
                        Runner::Param(pm) => {
                            plain_checked(pm.template())
                                + pm.instances().map(|(_, m)| plain_checked(m)).sum::<usize>()
                        }
                    };
                }
            }
        }
    }
    assert!(logs >= 20, "expected the paper's logs, found {logs}");
    // Plain progression decides many runs of the logs' safety properties.
    assert!(
        checked > 100,
        "only {checked} plain progression verdicts compared"
    );
}

// ---------------------------------------------------------------------------------------------
// Random formulas.

const PROPS: [&str; 3] = ["a", "b", "c"];

/// A random formula in Spot syntax: future operators, and past operators over past formulas.
fn formula(g: &mut Gen, depth: usize, past: bool) -> String {
    if depth == 0 || u8::arbitrary(g) % 4 == 0 {
        return PROPS[usize::arbitrary(g) % PROPS.len()].to_string();
    }
    let x = formula(g, depth - 1, past);
    if bool::arbitrary(g) {
        let ops: &[&str] = if past {
            &["!", "Y ", "Z ", "O ", "H "]
        } else {
            &["!", "X ", "F ", "G ", "Y ", "O ", "H "]
        };
        let op = ops[usize::arbitrary(g) % ops.len()];
        let inner = if op.trim().len() == 1 && "YZOH".contains(op.trim()) && !past {
            formula(g, depth - 1, true)
        } else {
            x
        };
        format!("{op}({inner})")
    } else {
        let ops: &[&str] = if past {
            &["&", "|", "->", "S"]
        } else {
            &["&", "|", "->", "<->", "U", "W", "R", "M", "S"]
        };
        let op = ops[usize::arbitrary(g) % ops.len()];
        let (l, r) = if op == "S" && !past {
            (formula(g, depth - 1, true), formula(g, depth - 1, true))
        } else {
            (x, formula(g, depth - 1, past))
        };
        format!("({l}) {op} ({r})")
    }
}

#[derive(Clone, Debug)]
struct Case {
    formula: String,
    trace: Vec<u8>,
    reset: bool,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let depth = 1 + usize::arbitrary(g) % 4;
        let len = usize::arbitrary(g) % 16;
        Case {
            formula: formula(g, depth, false),
            trace: (0..len).map(|_| u8::arbitrary(g) % 8).collect(),
            reset: bool::arbitrary(g),
        }
    }
}

/// `Some(number of plain progression verdicts compared)`, or the mismatch.
fn cross_check(c: &Case) -> Result<usize, String> {
    let mut arena = Arena::new();
    let f = trac_ltl::parse(&mut arena, &c.formula).map_err(|e| e.to_string())?;
    let policy = ResetPolicy {
        on_violation: c.reset,
        on_satisfaction: false,
    };
    let opts = trac_compile::CompileOptions {
        semantics: Semantics::Ltl3,
        minimize: trac_compile::Minimize::Language,
    };
    let table = trac_compile::compile(&mut arena.clone(), f, &opts)
        .map_err(|e| e.to_string())?
        .table;
    let mut m = CrossCheckMonitor::new(
        TableMonitor::new(Arc::new(table), policy),
        ProgressionMonitor::with_options(arena, f, policy, Some(&trac_compile::SatOracle)),
    );
    for (i, &mask) in c.trace.iter().enumerate() {
        let labels: LabelSet = PROPS
            .iter()
            .enumerate()
            .filter(|(k, _)| mask >> k & 1 == 1)
            .map(|(_, p)| *p)
            .collect();
        m.step(&StepInput {
            step: i + 1,
            text: "",
            labels: &labels,
        });
    }
    match m.mismatch() {
        Some(x) => Err(format!("{} on {:?}: {x}", c.formula, c.trace)),
        None => Ok(m.plain_checked()),
    }
}

#[test]
fn three_engines_agree_on_random_formulas() {
    // TRAC_QC_TESTS=5000 for a longer run.
    let tests = std::env::var("TRAC_QC_TESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    QuickCheck::new().tests(tests).quickcheck(
        (|c: Case| match cross_check(&c) {
            Ok(_) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }) as fn(Case) -> TestResult,
    );
    // And plain progression's verdicts are compared: a fixed sample decides some runs.
    let mut g = Gen::new(20);
    let compared: usize = (0..200)
        .map(|_| cross_check(&Case::arbitrary(&mut g)).unwrap())
        .sum();
    assert!(
        compared > 50,
        "only {compared} plain progression verdicts compared"
    );
}
