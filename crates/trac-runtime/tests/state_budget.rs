//! The compiled engine under a state budget (`trac_compile::Compiler::with_max_states`): a
//! property whose table is over it is run by progression with bounded satisfiability checks,
//! named by [`AuditPlan::fallbacks`], with the verdicts of the unbounded table at the same
//! steps (hand-derived below), and never a hang.

use std::sync::Arc;
use trac_runtime::audit::{audit_events, AuditOptions, AuditPlan, VerdictRecord};
use trac_runtime::engine::Engine;
use trac_runtime::trace::{TraceFormat, TraceReader};
use trac_runtime::Verdict;
use trac_spec::spec::Semantics;

mod support;

fn options(max_states: usize) -> AuditOptions {
    AuditOptions {
        engine: Engine::Compiled,
        compiler: Some(Arc::new(trac_compile::Compiler::with_max_states(
            max_states,
        ))),
        ..AuditOptions::default()
    }
}

/// `(property, step, verdict)` of every record of `formulas` over `steps` with a budget.
fn verdicts(
    formulas: &[&str],
    steps: &[&[&str]],
    max_states: usize,
) -> Vec<(String, usize, Verdict)> {
    let spec = support::spec_of(formulas, Semantics::Ltl3, Vec::new());
    let src = support::jsonl_of(steps);
    let r = TraceReader::from_reader(
        std::io::Cursor::new(src.into_bytes()),
        "t",
        TraceFormat::Jsonl,
    );
    let report = audit_events(&[spec], "t", r, &options(max_states))
        .unwrap()
        .remove(0);
    report
        .records
        .iter()
        .map(|r: &VerdictRecord| (r.property.clone(), r.step, r.verdict))
        .collect()
}

#[test]
fn a_table_over_the_budget_falls_back_with_the_same_verdicts() {
    // At most 2 `a` in any window of 4 steps: the 3rd `a` within 4 steps violates it (step 5:
    // a at 2, 4, 5), and under TRAC_R the property restarts with its window intact.
    let formulas = ["G(count[4](a) <= 2)", "G(a -> F b)"];
    let steps: &[&[&str]] = &[&[], &["a"], &[], &["a"], &["a", "b"], &[], &[]];
    let table = verdicts(&formulas, steps, usize::MAX);
    let small = verdicts(&formulas, steps, 3);
    assert_eq!(table, small);
    assert_eq!(
        table
            .iter()
            .filter(|r| r.0 == "p1")
            .map(|r| (r.1, r.2))
            .next(),
        Some((5, Verdict::Violated))
    );

    let spec = support::spec_of(&formulas, Semantics::Ltl3, Vec::new());
    let plan = AuditPlan::new(std::slice::from_ref(&spec), &options(3)).unwrap();
    let named: Vec<&str> = plan
        .fallbacks()
        .iter()
        .map(|f| f.property.as_str())
        .collect();
    // `G(a -> F b)` explores 2 states (itself, and `F b` pending with it): within 3.
    assert_eq!(named, ["p1"]);
    let msg = plan.fallbacks()[0].cause.to_string();
    assert!(msg.contains("more than 3 states"), "{msg}");
    let unbounded = AuditPlan::new(&[spec], &options(usize::MAX)).unwrap();
    assert!(unbounded.fallbacks().is_empty());
}

#[test]
fn an_exponential_past_window_is_monitored_without_compiling_it() {
    // `Y[40] b` remembers 40 steps of `b`: 2^40 states. Step 1 has no yesterday, so `a` there
    // violates it at once; so does `a` at step 3 (b did not hold 40 steps earlier).
    let steps: &[&[&str]] = &[&["a"], &["b"], &["a"]];
    let got = verdicts(
        &["G(a -> Y[40] b)"],
        steps,
        trac_compile::DEFAULT_MAX_STATES,
    );
    let violated: Vec<usize> = got
        .iter()
        .filter(|r| r.2 == Verdict::Violated)
        .map(|r| r.1)
        .collect();
    assert_eq!(violated, [1, 3]);
}
