//! Issue 24's formula language on every engine (progression, complete progression, compiled
//! tables, the cross-check engine, which stops at the first difference between them): bounded
//! operators, their past counterparts, counts and `end`, with the violation steps derived by
//! hand on small traces (each case says why).

use trac_runtime::audit::Auditor;
use trac_runtime::engine::Engine;
use trac_runtime::label::labeler::check_spec;
use trac_runtime::trace::Event;
use trac_runtime::Verdict;
use trac_spec::spec::Spec;

mod support;

const ENGINES: [Engine; 4] = [
    Engine::Progression,
    Engine::CompleteProgression,
    Engine::Compiled,
    Engine::CrossCheck,
];

/// The steps at which `formula` (under `semantics`) is reported violated over `steps` (the
/// labels of each step), end of trace included, with `engine`.
fn violations(formula: &str, semantics: &str, engine: Engine, steps: &[&[&str]]) -> Vec<usize> {
    let src = format!(
        "(name: \"t\", properties: [(id: \"P\", formula: \"{formula}\", semantics: {semantics})])"
    );
    let spec = check_spec(&Spec::from_str(&src, "t.ron").unwrap()).unwrap();
    let mut a = Auditor::new(&[spec], &support::options(engine)).unwrap();
    let mut out = Vec::new();
    let mut push = |rs: Vec<trac_runtime::audit::VerdictRecord>| {
        out.extend(
            rs.iter()
                .filter(|r| r.verdict == Verdict::Violated)
                .map(|r| r.step),
        );
    };
    push(a.initial());
    for (i, labels) in steps.iter().enumerate() {
        let event = Event {
            step: i + 1,
            labels: Some(labels.iter().map(|l| l.to_string()).collect()),
            ..Event::default()
        };
        push(a.step(&event));
        if let Some((id, v, m)) = a.mismatch() {
            panic!("{engine:?}: cross-check mismatch on {id} {v:?}: {m}");
        }
    }
    push(a.end_of_trace());
    out
}

#[track_caller]
fn expect(formula: &str, semantics: &str, steps: &[&[&str]], expected: &[usize]) {
    for engine in ENGINES {
        assert_eq!(
            violations(formula, semantics, engine, steps),
            expected,
            "`{formula}` ({semantics}) with {engine:?}"
        );
    }
}

#[test]
fn bounded_future_operators() {
    // Take at 1: a cut is due at 2, 3 or 4; step 4 passes without one.
    expect(
        "G(take -> F[1:3] cut)",
        "Ltl3",
        &[&["take"], &[], &[], &[], &["cut"]],
        &[4],
    );
    // The cut at 3 is in time.
    expect(
        "G(take -> F[1:3] cut)",
        "Ltl3",
        &[&["take"], &[], &["cut"], &[]],
        &[],
    );
    // A call at 1 needs a check exactly 2 steps later, at 3.
    expect(
        "G(call -> X[2] check)",
        "Ltl3",
        &[&["call"], &["check"], &[]],
        &[3],
    );
    // Busy at 2 and 3 after a start at 1: step 3 is not busy.
    expect(
        "G(start -> G[1:2] busy)",
        "Ltl3",
        &[&["start"], &["busy"], &[], &["busy"]],
        &[3],
    );
    // Under LTLf the weak `F[1:3]` is satisfied by a trace that ends first; the strong
    // `F[1:3!]` demands the cut, so the trace ending at 2 violates it (at its end, step 2).
    expect("G(take -> F[1:3] cut)", "Ltlf", &[&["take"], &[]], &[]);
    expect("G(take -> F[1:3!] cut)", "Ltlf", &[&["take"], &[]], &[2]);
    // `F[2:$!]`: a report at step 3 or later, which must exist; the weak `F[2:$]` is also
    // satisfied by a trace of fewer than 3 steps.
    expect("F[2:$!] report", "Ltlf", &[&["report"], &["report"]], &[2]);
    expect("F[2:$] report", "Ltlf", &[&["report"], &["report"]], &[]);
    expect(
        "F[2:$!] report",
        "Ltlf",
        &[&["report"], &[], &["report"]],
        &[],
    );
}

#[test]
fn bounded_past_operators() {
    // An acknowledgment needed at 3 finds the ack of step 1 in its window 1..3; the one at 5
    // looks at 3..5 and finds none.
    expect(
        "G(ack_needed -> O[0:2] ack)",
        "Ltl3",
        &[&["ack"], &[], &["ack_needed"], &[], &["ack_needed"]],
        &[5],
    );
    // `Y[2] q` at 3 reads step 1 (q), at 4 reads step 2 (no q); at step 1 there is no step
    // two back, and `Y` is false there.
    expect(
        "G(p -> Y[2] q)",
        "Ltl3",
        &[&["q"], &[], &["p"], &["p"]],
        &[4],
    );
    expect("G(p -> Y[2] q)", "Ltl3", &[&["p"]], &[1]);
    // `Z[2]` is true where the step two back does not exist.
    expect("G(p -> Z[2] q)", "Ltl3", &[&["p"], &["p"], &["p"]], &[3]);
    // `H[1:2] ok`: the two previous steps (those that exist) were ok. At 1 there are none;
    // at 3, step 1 was not ok; at 5, step 4 was not; at 7, steps 5 and 6 were.
    expect(
        "G(deploy -> H[1:2] ok)",
        "Ltl3",
        &[
            &["deploy"],
            &["ok"],
            &["ok", "deploy"],
            &[],
            &["ok", "deploy"],
            &["ok"],
            &["deploy"],
        ],
        &[3, 5],
    );
}

#[test]
fn counts() {
    // At most 2 sends in the run: the third, at step 4, violates.
    expect(
        "G(count(send) <= 2)",
        "Ltl3",
        &[&["send"], &[], &["send"], &["send"]],
        &[4],
    );
    // At least 2 lookups before a refund: the refund at 3 has one lookup before it, the one at
    // 5 has two.
    expect(
        "G(refund -> count(lookup) >= 2)",
        "Ltl3",
        &[&["lookup"], &[], &["refund"]],
        &[3],
    );
    expect(
        "G(refund -> count(lookup) >= 2)",
        "Ltl3",
        &[&["lookup"], &[], &["lookup"], &[], &["refund"]],
        &[],
    );
    // The same call 3 times in a row (a window of 3 steps holding 3 calls): steps 2..4.
    expect(
        "G(count[3](call) < 3)",
        "Ltl3",
        &[&["call"], &["call"], &["call"]],
        &[3],
    );
    expect(
        "G(count[3](call) < 3)",
        "Ltl3",
        &[&["call"], &["call"], &[], &["call"], &["call"]],
        &[],
    );
    // At least 2 lookups in the last 4 steps before a refund: the refund at 4 sees lookups at
    // 1 and 3, the one at 5 only the one at 3.
    expect(
        "G(refund -> count[4](lookup) >= 2)",
        "Ltl3",
        &[&["lookup"], &[], &["lookup"], &["refund"], &["refund"]],
        &[5],
    );
}

#[test]
fn the_end_of_the_trace() {
    // "At least 2 lookups by the end": the trace ends at 2 with one.
    expect(
        "G(end -> count(lookup) >= 2)",
        "Ltlf",
        &[&["lookup"], &[]],
        &[2],
    );
    expect(
        "G(end -> count(lookup) >= 2)",
        "Ltlf",
        &[&["lookup"], &["lookup"], &[]],
        &[],
    );
    // "Some step must have saved by the end", written with `end`.
    expect("F(end & O saved)", "Ltlf", &[&[], &[]], &[2]);
    expect("F(end & O saved)", "Ltlf", &[&["saved"], &[]], &[]);
    // "The last step is done".
    expect("G(end -> done)", "Ltlf", &[&["done"], &[]], &[2]);
    expect("G(end -> done)", "Ltlf", &[&[], &["done"]], &[]);
    // Under LTL3 a trace never ends: `end` is false at every step.
    expect("G !end", "Ltl3", &[&[], &[]], &[]);
}
