//! Fixtures shared by trac-runtime's integration tests, written once (as ripgrep's
//! `searcher/src/testutil.rs`): specs of bare formulas, audit options on the shared compiler,
//! JSON Lines traces of label sets, and the audit of a trace given as text.
//!
//! Each test file declares `mod support;` and uses what it needs.
#![allow(dead_code)]

use std::io::Cursor;
use trac_runtime::audit::{audit_events, AuditOptions, AuditPlan, TraceReport};
use trac_runtime::engine::Engine;
use trac_runtime::trace::{TraceFormat, TraceReader};
use trac_spec::spec::{CheckedSpec, PropertyDecl, PropositionDecl, Semantics, Spec};

/// A checked spec `t` whose properties `p1`, `p2`, ... are `formulas` under `semantics`, with
/// `propositions` declared (empty: every atom is a bare label). Panics on a bad formula: the
/// fixtures are the test's own.
pub fn spec_of(
    formulas: &[&str],
    semantics: Semantics,
    propositions: Vec<PropositionDecl>,
) -> CheckedSpec {
    Spec {
        name: "t".into(),
        propositions,
        properties: formulas
            .iter()
            .enumerate()
            .map(|(i, f)| PropertyDecl {
                id: format!("p{}", i + 1),
                formula: f.to_string(),
                semantics,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
    .check()
    .unwrap()
}

/// A checked spec `name` of `(id, formula)` pairs.
pub fn named_spec(name: &str, formulas: &[(&str, &str)]) -> CheckedSpec {
    Spec::from_formulas(name, formulas.iter().copied())
        .check()
        .unwrap()
}

/// Audit options with `engine`, TRAC_R on, and the process-wide compiler (tables compiled once
/// for every test of the binary).
pub fn options(engine: Engine) -> AuditOptions {
    AuditOptions {
        engine,
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    }
}

/// The audit plan of `specs` with the compiled engine.
pub fn plan(specs: &[CheckedSpec]) -> AuditPlan {
    AuditPlan::new(specs, &options(Engine::Compiled)).unwrap()
}

/// A JSON Lines trace: step `i` (1-based) has output `s<i>` and the given labels.
pub fn jsonl_of(steps: &[&[&str]]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let labels: Vec<String> = l.iter().map(|x| format!("\"{x}\"")).collect();
            format!(
                "{{\"output\": \"s{}\", \"labels\": [{}]}}\n",
                i + 1,
                labels.join(", ")
            )
        })
        .collect()
}

/// The report of `spec` over the trace `src` in `format` (one session), with `engine`.
pub fn audit_text(
    spec: &CheckedSpec,
    src: &str,
    format: TraceFormat,
    engine: Engine,
) -> TraceReport {
    let r = TraceReader::from_reader(Cursor::new(src.as_bytes().to_vec()), "t", format);
    audit_events(std::slice::from_ref(spec), "t", r, &options(engine))
        .unwrap()
        .remove(0)
}
