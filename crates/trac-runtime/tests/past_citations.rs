//! Past-time citations of witnesses (issue 12) on every engine, and the end-of-trace LTLf
//! judgement of the run since the last TRAC_R restart (`Monitor::ltlf_since_restart`).
//! Every expected step below is derived by hand from the trace next to it.

use trac_core::labels::{LabelSet, StepInput};
use trac_ltl::formula::Arena;
use trac_runtime::audit::{TraceReport, VerdictRecord};
use trac_runtime::engine::monitor::{CitedStep, Monitor, PastCitation, ResetPolicy, Verdict};
use trac_runtime::engine::{Engine, EngineMonitor};
use trac_runtime::trace::TraceFormat;
use trac_spec::spec::{CheckedSpec, Semantics};

const ENGINES: [Engine; 4] = [
    Engine::Compiled,
    Engine::Progression,
    Engine::CompleteProgression,
    Engine::CrossCheck,
];

mod support;

fn spec(formulas: &[&str], semantics: Semantics) -> CheckedSpec {
    support::spec_of(formulas, semantics, Vec::new())
}

fn audit(spec: &CheckedSpec, steps: &[&[&str]], engine: Engine) -> TraceReport {
    support::audit_text(spec, &support::jsonl_of(steps), TraceFormat::Jsonl, engine)
}

fn cited(step: usize, what: &str) -> CitedStep {
    CitedStep {
        step,
        text: format!("s{step}"),
        what: what.to_string(),
    }
}

fn citation(
    subformula: &str,
    step: usize,
    value: bool,
    since_step: usize,
    steps: Vec<CitedStep>,
    reason: &str,
) -> PastCitation {
    PastCitation {
        subformula: subformula.into(),
        step,
        value,
        since_step,
        steps,
        reason: reason.into(),
    }
}

/// The violations of `formula` over `steps` on `engine`: (step, value, past citations).
fn violations(
    formula: &str,
    steps: &[&[&str]],
    engine: Engine,
) -> Vec<(usize, Option<String>, Vec<PastCitation>)> {
    let report = audit(&spec(&[formula], Semantics::Ltl3), steps, engine);
    assert!(report.error.is_none(), "{:?}", report.error);
    report
        .records
        .into_iter()
        .filter(|r| r.verdict == Verdict::Violated)
        .map(|r| (r.step, r.value, r.past))
        .collect()
}

/// A trace: the labels of each step.
type Steps = Vec<&'static [&'static str]>;
/// Violations expected: (step, citations).
type Expected = Vec<(usize, Vec<PastCitation>)>;

/// `(formula, trace, expected violations with their citations)`, derived by hand.
fn cases() -> Vec<(&'static str, Steps, Expected)> {
    let mut all = single_cases();
    all.extend(nested_cases());
    all.extend(abbreviation_cases());
    all
}

/// Abbreviations over past steps (`count[w]`, `count`, `Y[n]`, `O[n:m]`): cited as written,
/// with the steps of their window, not as the nodes of their expansion.
fn abbreviation_cases() -> Vec<(&'static str, Steps, Expected)> {
    vec![
        // Window of 3: `a` at steps 1 and 3 (2 > 1) at step 3, at 3 and 4 in 2..4 at step 4.
        (
            "G(count[3](a) <= 1)",
            vec![&["a"], &[], &["a"], &["a"]],
            vec![
                (
                    3,
                    vec![citation(
                        "count[3](a) <= 1",
                        3,
                        false,
                        3,
                        vec![cited(1, "a held"), cited(3, "a held")],
                        "`a` held at 2 of the steps 1..3 (the last 3)",
                    )],
                ),
                (
                    4,
                    vec![citation(
                        "count[3](a) <= 1",
                        4,
                        false,
                        3,
                        vec![cited(3, "a held"), cited(4, "a held")],
                        "`a` held at 2 of the steps 2..4 (the last 3)",
                    )],
                ),
            ],
        ),
        // Three `a` in the window and `need` = 2: the latest two are cited, and the reason
        // says so (before, it counted 3 and listed 2 without a word).
        (
            "G(count[3](a) <= 1)",
            vec![&["a"], &["a"], &["a"]],
            vec![
                (
                    2,
                    vec![citation(
                        "count[3](a) <= 1",
                        2,
                        false,
                        2,
                        vec![cited(1, "a held"), cited(2, "a held")],
                        "`a` held at 2 of the steps 1..2 (the last 3)",
                    )],
                ),
                (
                    3,
                    vec![citation(
                        "count[3](a) <= 1",
                        3,
                        false,
                        2,
                        vec![cited(2, "a held"), cited(3, "a held")],
                        "`a` held at 3 of the steps 1..3 (the last 3) (the latest 2 cited)",
                    )],
                ),
            ],
        ),
        // The run so far: `a` at steps 1 and 3.
        (
            "G(count(a) <= 1)",
            vec![&["a"], &[], &["a"]],
            vec![(
                3,
                vec![citation(
                    "count(a) <= 1",
                    3,
                    false,
                    3,
                    vec![cited(1, "a held"), cited(3, "a held")],
                    "`a` held at 2 of the steps 1..3",
                )],
            )],
        ),
        // Y[2] b: false at 1 (no step 2 back), 2, 3 (no `b` at 1); true at 4 (`b` at 2);
        // false at 5 (no `b` at 3).
        (
            "G(a -> Y[2] b)",
            vec![&["a"], &["b"], &[], &["a"], &["a"]],
            vec![
                (
                    1,
                    vec![citation(
                        "Y[2] b",
                        1,
                        false,
                        1,
                        vec![],
                        "there is no step 2 steps before step 1",
                    )],
                ),
                (
                    5,
                    vec![citation(
                        "Y[2] b",
                        5,
                        false,
                        5,
                        vec![cited(3, "b did not hold")],
                        "`b` did not hold at step 3 (2 steps back)",
                    )],
                ),
            ],
        ),
        // O[1:2] b: false at 1 (no step back), true at 2 and 3 (`b` at 1), false from 4.
        (
            "G(a -> O[1:2] b)",
            vec![&["b"], &["a"], &[], &[], &["a"]],
            vec![(
                5,
                vec![citation(
                    "O[1:2] b",
                    5,
                    false,
                    4,
                    vec![],
                    "`b` held at no step 3..4",
                )],
            )],
        ),
    ]
}

/// Cases of one past operator each: O, S (anchored and not), Y.
fn single_cases() -> Vec<(&'static str, Steps, Expected)> {
    vec![
        // O: no step 1..3 had `confirm`.
        (
            "G(book -> O confirm)",
            vec![&[], &[], &["book"], &["confirm"], &["book"]],
            vec![(
                3,
                vec![citation(
                    "O confirm",
                    3,
                    false,
                    1,
                    vec![],
                    "`confirm` held at no step 1..3",
                )],
            )],
        ),
        // S: the last `confirm` (step 1), then `deny` at step 3 broke it; false since 3.
        (
            "G(write -> (!deny S confirm))",
            vec![&["confirm"], &["write"], &["deny"], &[], &["write"]],
            vec![(
                5,
                vec![citation(
                    "!deny S confirm",
                    5,
                    false,
                    3,
                    vec![cited(1, "confirm held"), cited(3, "!deny failed")],
                    "`confirm` held last at step 1, then `!deny` failed at step 3",
                )],
            )],
        ),
        // S never anchored.
        (
            "G(write -> (!deny S confirm))",
            vec![&[], &["write"]],
            vec![(
                2,
                vec![citation(
                    "!deny S confirm",
                    2,
                    false,
                    1,
                    vec![],
                    "`confirm` held at no step 1..2",
                )],
            )],
        ),
        // Y at step 1 (no previous step), then Y reading step 4: `quote` held at step 2 only,
        // so Y quote was true at step 3 alone and is false since step 4.
        (
            "G(pay -> Y quote)",
            vec![&["pay"], &["quote"], &["pay"], &[], &["pay"]],
            vec![
                (
                    1,
                    vec![citation(
                        "Y quote",
                        1,
                        false,
                        1,
                        vec![],
                        "step 1 has no previous step",
                    )],
                ),
                (
                    5,
                    vec![citation(
                        "Y quote",
                        5,
                        false,
                        4,
                        vec![cited(4, "quote did not hold")],
                        "`quote` did not hold at step 4",
                    )],
                ),
            ],
        ),
    ]
}

/// Cases of H, of past operators nested in each other, and of the one citation picked.
fn nested_cases() -> Vec<(&'static str, Steps, Expected)> {
    vec![
        // H: `error` at step 2 made `H !error` false for good.
        (
            "G(submit -> H !error)",
            vec![&[], &["error"], &[], &["submit"]],
            vec![(
                4,
                vec![citation(
                    "H!error",
                    4,
                    false,
                    2,
                    vec![cited(2, "!error failed")],
                    "`!error` failed at step 2",
                )],
            )],
        ),
        // Y over O: Y O deliver2 read step 1, where O deliver2 was false.
        (
            "G(deliver1 -> Y O deliver2)",
            vec![&[], &["deliver1"]],
            vec![(
                2,
                vec![
                    citation(
                        "Y O deliver2",
                        2,
                        false,
                        1,
                        vec![cited(1, "O deliver2 did not hold")],
                        "`O deliver2` did not hold at step 1",
                    ),
                    citation(
                        "O deliver2",
                        1,
                        false,
                        1,
                        vec![],
                        "`deliver2` held at no step 1..1",
                    ),
                ],
            )],
        ),
        // Y over O, true: `deliver2` at step 1 made O deliver2 true from step 1, so
        // Y O deliver2 true from step 2.
        (
            "G(deliver1 -> !Y O deliver2)",
            vec![&["deliver2"], &[], &["deliver1"]],
            vec![(
                3,
                vec![
                    citation(
                        "Y O deliver2",
                        3,
                        true,
                        2,
                        vec![cited(2, "O deliver2 held")],
                        "`O deliver2` held at step 2",
                    ),
                    citation(
                        "O deliver2",
                        2,
                        true,
                        1,
                        vec![cited(1, "deliver2 held")],
                        "`deliver2` held last at step 1",
                    ),
                ],
            )],
        ),
        // Only the past subformula that decided the step is cited: at step 2, `a` does not
        // hold, so `Y p` does not matter (and is true anyway).
        (
            "G((a -> Y p) & (b -> Y q))",
            vec![&["p"], &["b"]],
            vec![(
                2,
                vec![citation(
                    "Y q",
                    2,
                    false,
                    1,
                    vec![cited(1, "q did not hold")],
                    "`q` did not hold at step 1",
                )],
            )],
        ),
    ]
}

#[test]
fn past_citations_are_hand_derived_on_every_engine() {
    for (formula, steps, want) in cases() {
        for engine in ENGINES {
            let got: Vec<(usize, Vec<PastCitation>)> = violations(formula, &steps, engine)
                .into_iter()
                .map(|(s, _, p)| (s, p))
                .collect();
            assert_eq!(got, want, "{formula} on {}", engine.as_str());
        }
    }
}

#[test]
fn parametric_instances_cite_their_own_subformulas() {
    // Value `b` first appears at step 3 (its instance starts as a copy of the template):
    // `init(b)` never held.
    let steps: &[&[&str]] = &[&["init(a)"], &["use(a)"], &["use(b)"]];
    for engine in ENGINES {
        let got = violations("forall x: G(use(x) -> O init(x))", steps, engine);
        assert_eq!(
            got,
            vec![(
                3,
                Some("b".to_string()),
                vec![citation(
                    "O init(b)",
                    3,
                    false,
                    1,
                    vec![],
                    "`init(b)` held at no step 1..3",
                )],
            )],
            "{}",
            engine.as_str()
        );
    }
}

#[test]
fn properties_without_past_operators_cite_nothing() {
    let steps: &[&[&str]] = &[&["look"], &["look"]];
    for engine in ENGINES {
        let v = violations("G(look -> X !look)", steps, engine);
        assert_eq!(v.len(), 1);
        assert!(v[0].2.is_empty());
        // Nor does a record of them carry the field.
        let report = audit(
            &spec(&["G(look -> X !look)"], Semantics::Ltl3),
            steps,
            engine,
        );
        let rec = trac_runtime::audit::jsonl::verdict_record("t", &report.records[0]);
        assert!(rec.get("past").is_none(), "{rec}");
    }
}

#[test]
fn past_citations_round_trip_through_the_jsonl_schema() {
    let report = audit(
        &spec(&["G(write -> (!deny S confirm))"], Semantics::Ltl3),
        &[&["confirm"], &["write"], &["deny"], &[], &["write"]],
        Engine::Compiled,
    );
    let r: &VerdictRecord = &report.records[0];
    assert!(!r.past.is_empty());
    let rec = trac_runtime::audit::jsonl::verdict_record("t", r);
    // The old fields are unchanged, `past` is added.
    for key in [
        "trace",
        "property",
        "step",
        "verdict",
        "value",
        "residual",
        "restarted_with",
        "witness",
    ] {
        assert!(rec.get(key).is_some(), "{key} missing in {rec}");
    }
    assert_eq!(rec["past"][0]["subformula"], "!deny S confirm");
    assert_eq!(rec["past"][0]["since_step"], 3);
    assert_eq!(rec["past"][0]["steps"][1]["step"], 3);
    let text = rec.to_string();
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    let past: Vec<PastCitation> = serde_json::from_value(back["past"].clone()).unwrap();
    assert_eq!(past, r.past);
}

// ---- the end of an LTLf trace: the run since the last restart ----

/// A monitor of `formula` (LTLf verdicts, TRAC_R) on `engine` after reading `steps`.
fn ltlf_monitor(formula: &str, steps: &[&[&str]], engine: Engine) -> EngineMonitor {
    let mut arena = Arena::new();
    let f = trac_ltl::parse(&mut arena, formula).unwrap();
    let compiler = trac_compile::Compiler::shared();
    let mut m = EngineMonitor::new(
        engine,
        &arena,
        f,
        ResetPolicy::default(),
        Semantics::Ltlf,
        Some(compiler.as_ref()),
    )
    .unwrap();
    for (i, l) in steps.iter().enumerate() {
        let set: LabelSet = l.iter().copied().collect();
        m.step(&StepInput {
            step: i + 1,
            text: "",
            labels: &set,
        });
    }
    m
}

#[test]
fn ltlf_since_restart_is_exact_on_every_engine() {
    // (formula, trace, LTLf verdict of the run since the last restart), by hand.
    type Case<'a> = (&'a str, &'a [&'a [&'a str]], Option<Verdict>);
    let cases: [Case; 6] = [
        // Never restarted: the whole trace (F done unmet).
        ("F done", &[&["ok"], &["ok"]], Some(Verdict::Violated)),
        // Never restarted: weak next at the end holds.
        ("G(x -> X p)", &[&["ok"], &["x"]], Some(Verdict::Satisfied)),
        // Violated at step 1, decided again there: the run starts at step 2, where `x`
        // needs `p` only by a weak next.
        (
            "G !bad & G(x -> X p)",
            &[&["bad"], &["x"]],
            Some(Verdict::Satisfied),
        ),
        // Violated at step 2 (no `p` after `x`); the restarted run starts at step 2 itself
        // and `x` there needs `p` by a strong next after the end.
        ("G(x -> X[!] p)", &[&["x"], &["x"]], Some(Verdict::Violated)),
        // Violated at the last step, decided again there: the new run read nothing.
        ("G !bad", &[&["ok"], &["bad"]], None),
        // Restarted afresh at step 2 after `bad` at step 1: `done` still missing.
        (
            "G !bad & F done",
            &[&["bad"], &["ok"], &["ok"]],
            Some(Verdict::Violated),
        ),
    ];
    for (formula, steps, want) in cases {
        for engine in ENGINES {
            let m = ltlf_monitor(formula, steps, engine);
            assert_eq!(
                m.ltlf_since_restart(),
                want,
                "{formula} on {}",
                engine.as_str()
            );
        }
    }
}

#[test]
fn ltlf_end_of_trace_counts_only_the_run_since_the_last_restart() {
    let s = spec(
        &["G !bad & G(x -> X p)", "G(x -> X[!] p)", "G !bad & F done"],
        Semantics::Ltlf,
    );
    // (trace, violations per property), by hand.
    let cases: [(&[&[&str]], [usize; 3]); 3] = [
        // p1: `bad` at 1; the run from 2 satisfies the weak next (1). p2: never violated
        // during the trace, but `x` at 2 needs `p` after the end (1). p3: `bad` at 1, then
        // `done` never comes (1 + 1).
        (&[&["bad"], &["x"]], [1, 1, 2]),
        // p1: violated at 2 (no `p` after `x`); the run restarted at 2 satisfies the weak
        // next (1). p2: violated at 2, and the run restarted at 2 fails the strong next at
        // the end (2). p3: never restarted, `done` never comes (1).
        (&[&["x"], &["x"]], [1, 2, 1]),
        // p1, p3: violated at the last step, the new run read nothing (1 each).
        (&[&["done"], &["bad"]], [1, 0, 1]),
    ];
    for (steps, want) in cases {
        for engine in ENGINES {
            let report = audit(&s, steps, engine);
            let got: Vec<usize> = report.ends.iter().map(|e| e.violations).collect();
            assert_eq!(got, want, "{steps:?} on {}", engine.as_str());
        }
    }
}
