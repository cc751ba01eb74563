//! Tests of the engines side by side: the compiler requirements of each, and the cross-check.

use crate::engine::crosscheck::*;
use crate::engine::monitor::{Monitor, ProgressionMonitor, ResetPolicy, Verdict};
use crate::engine::select::{Engine, EngineError, EngineMonitor};
use std::sync::Arc;
use trac_core::labels::LabelSet;
use trac_core::labels::StepInput;
use trac_core::table::{AuxFile, TableFile, FORMAT, LEAF, VERSION};
use trac_core::table::{Table, TableMonitor};
use trac_ltl::formula::Arena;
use trac_spec::spec::Semantics;

/// `G(p -> X q)` by hand: state 2 = G(p -> X q), 3 = q & G(p -> X q).
#[rustfmt::skip]
fn response() -> Arc<Table> {
    let file = TableFile {
        format: FORMAT.into(),
        version: VERSION,
        formula: "G(p -> X q)".into(),
        semantics: Semantics::Ltl3,
        minimized: true,
        props: vec!["p".into(), "q".into()],
        initial: 2,
        residuals: vec![
            "false".into(),
            "true".into(),
            "G(p -> X q)".into(),
            "q & G(p -> X q)".into(),
        ],
        roots: vec![LEAF, LEAF | 1, 0, 1],
        nodes: vec![0, LEAF | 2, LEAF | 3, 1, LEAF, 2, 0, LEAF | 2, LEAF | 3],
        // LTLf: 0 = no pending `p`, 1 = `p` at the last step, 2 = violated.
        aux: AuxFile {
            initial: 0,
            roots: vec![0, 1, LEAF | 2],
            nodes: vec![
                0,
                LEAF,
                LEAF | 1,
                0,
                2,
                3,
                1,
                LEAF | 2,
                LEAF,
                1,
                LEAF | 2,
                LEAF | 1,
            ],
            accepting: vec![true, true, false],
            restart: vec![2, 2, 2],
        },
        accepting: None,
    };
    Arc::new(Table::from_file(file).unwrap())
}

#[test]
fn complete_engines_need_the_compiler_and_its_oracle() {
    let mut a = Arena::new();
    let f = trac_ltl::parse(&mut a, "F p & G !p").unwrap();
    let (p, s) = (ResetPolicy::default(), Semantics::Ltl3);
    let new = |e, c| EngineMonitor::new(e, &a, f, p, s, c).map(|m| m.initial());
    assert_eq!(
        new(Engine::CompleteProgression, None),
        Err(EngineError::NoOracle)
    );
    assert_eq!(new(Engine::Compiled, None), Err(EngineError::NoCompiler));
    assert_eq!(new(Engine::CrossCheck, None), Err(EngineError::NoCompiler));
    // Plain progression needs neither, and misses the violation before any step.
    assert_eq!(new(Engine::Progression, None), Ok(None));
    // With the compiler, complete progression decides through its oracle.
    let compiler = trac_compile::Compiler::new();
    assert_eq!(
        new(Engine::CompleteProgression, Some(&compiler)),
        Ok(Some(Verdict::Violated))
    );
}

fn complete(src: &str, policy: ResetPolicy) -> ProgressionMonitor {
    let mut a = Arena::new();
    let f = trac_ltl::parse(&mut a, src).unwrap();
    ProgressionMonitor::with_options(a, f, policy, Some(&trac_compile::SatOracle))
}

fn run(m: &mut CrossCheckMonitor, steps: &[&[&str]]) {
    for (i, l) in steps.iter().enumerate() {
        let set: LabelSet = l.iter().copied().collect();
        m.step(&StepInput {
            step: i + 1,
            text: "",
            labels: &set,
        });
    }
}

const TRACE: &[&[&str]] = &[
    &["p"],
    &["q"],
    &["p"],
    &["p"],
    &[],
    &["p", "q"],
    &["q"],
    &["p"],
    &[],
];

#[test]
fn three_engines_agree_and_plain_progression_is_compared() {
    for policy in [
        ResetPolicy::default(),
        ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        },
    ] {
        let mut m = CrossCheckMonitor::new(
            TableMonitor::new(response(), policy),
            complete("G(p -> X q)", policy),
        );
        run(&mut m, TRACE);
        assert_eq!(m.mismatch(), None);
        // Plain progression decided the runs from positions 1 and 5 (violated at steps 4
        // and 9); the run from position 5 starts once the compiled one from 1 is decided.
        assert_eq!(m.plain_checked(), 2);
    }
}

#[test]
fn a_fault_shared_by_compiled_and_complete_progression_is_caught_by_plain_progression() {
    // Compiled and complete progression agree (as they would on a fault of the
    // satisfiability checker they share); plain progression, here of a formula the
    // trace violates at step 2, disagrees with both.
    let policy = ResetPolicy::default();
    let mut m = CrossCheckMonitor::new(
        TableMonitor::new(response(), policy),
        complete("G(p -> X q)", policy),
    );
    let mut a = Arena::new();
    let wrong = trac_ltl::parse(&mut a, "G(p -> X !q)").unwrap();
    let no_reset = ResetPolicy {
        on_violation: false,
        on_satisfaction: false,
    };
    m.plain = ProgressionMonitor::new(a, wrong, no_reset);
    m.probes.clear();
    m.start_probe();
    run(&mut m, &TRACE[..2]);
    let x = m.mismatch().expect("plain progression disagrees");
    assert_eq!((x.step, x.against), (2, "plain progression"));
    assert_eq!(x.compiled, Some(Verdict::Pending));
    assert_eq!(x.progression, Some(Verdict::Violated));
    assert!(x.to_string().contains("plain progression violated"), "{x}");
}
