//! Properties over several quantified variables (`forall tool, rid: φ`), `forall` over
//! propositions with several parameters, and `exists` bodies that mention the `forall`
//! variable: hand-derived violation steps on small traces (written below), on every engine
//! (progression, complete progression, compiled tables, the cross-check engine, which stops
//! at the first difference between them), and a quickcheck property comparing the sliced
//! monitor with a brute-force oracle (for each value tuple, the instantiated formula run by
//! plain progression over the whole trace).

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use trac_core::labels::{LabelSet, StepInput};
use trac_ltl::Arena;
use trac_runtime::audit::Auditor;
use trac_runtime::engine::parametric::ParametricMonitor;
use trac_runtime::engine::{Engine, EngineMonitor};
use trac_runtime::label::labeler::check_spec;
use trac_runtime::trace::Event;
use trac_runtime::{Monitor, ProgressionMonitor, ResetPolicy, Verdict};
use trac_spec::spec::{Semantics, Spec};

mod support;

const ENGINES: [Engine; 4] = [
    Engine::Progression,
    Engine::CompleteProgression,
    Engine::Compiled,
    Engine::CrossCheck,
];

/// The audit of `formula` (semantics `semantics`) over `steps` (the labels of each step) with
/// `engine`: the violations `(step, value)` in report order (`None`: the tuples not seen yet),
/// and the values of the instances at the end.
fn audit(
    formula: &str,
    semantics: &str,
    engine: Engine,
    steps: &[&[&str]],
) -> (Vec<(usize, Option<String>)>, Vec<String>) {
    let src = format!(
        "(name: \"t\", properties: [(id: \"P\", formula: \"{formula}\", semantics: {semantics})])"
    );
    let spec = check_spec(&Spec::from_str(&src, "t.ron").unwrap()).unwrap();
    let opts = support::options(engine);
    let mut a = Auditor::new(&[spec], &opts).unwrap();
    let mut out = Vec::new();
    let mut push = |rs: Vec<trac_runtime::audit::VerdictRecord>| {
        for r in rs {
            if r.verdict == Verdict::Violated {
                out.push((r.step, r.value));
            }
        }
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
    let ends = a.finish();
    let values = ends[0]
        .instances
        .iter()
        .filter_map(|i| i.value.clone())
        .collect();
    (out, values)
}

fn v(step: usize, value: &str) -> (usize, Option<String>) {
    (step, Some(value.to_string()))
}

#[test]
fn two_variables_sliced_per_tuple_on_every_engine() {
    // `call(tool)` and `target(rid)` each mention one variable: tuples are the cross product.
    let f = "forall tool, rid: G(call(tool) & target(rid) -> O allowed(tool, rid))";
    let steps: &[&[&str]] = &[
        &["allowed(upd, R1)"],        // 1
        &["call(upd)", "target(R1)"], // 2: (upd, R1) allowed at 1
        &["call(upd)", "target(R2)"], // 3: (upd, R2) never allowed: violated
        &["call(del)", "target(R1)"], // 4: (del, R1) never allowed: violated
        &["call(upd)", "target(R1)"], // 5: allowed at 1
        &["call(del)"],               // 6: no target: nothing
    ];
    for engine in ENGINES {
        let (got, mut values) = audit(f, "Ltl3", engine, steps);
        assert_eq!(got, vec![v(3, "upd, R2"), v(4, "del, R1")], "{engine:?}");
        values.sort();
        // 2 tools × 2 rids: the cross product of the values seen.
        assert_eq!(
            values,
            ["del, R1", "del, R2", "upd, R1", "upd, R2"],
            "{engine:?}"
        );
    }
}

#[test]
fn forall_over_one_argument_of_a_multi_parameter_proposition() {
    // p takes values only from labels whose second argument is a1.
    let f = "forall p: G(unload(p, a1) -> O load(p, a1))";
    let steps: &[&[&str]] = &[
        &["load(p1, a1)"],   // 1
        &["load(p2, a2)"],   // 2: not a1: p2 is not a value yet
        &["unload(p2, a1)"], // 3: p2 never loaded into a1: violated
        &["unload(p1, a1)"], // 4: loaded at 1
        &["unload(p3, a2)"], // 5: not a1
    ];
    for engine in ENGINES {
        let (got, values) = audit(f, "Ltl3", engine, steps);
        assert_eq!(got, vec![v(3, "p2")], "{engine:?}");
        assert_eq!(values, ["p1", "p2"], "{engine:?}");
    }
    // The brief's response property, as LTLf: p6 is still in a1 when the trace ends (4).
    let f = "forall p: G(load(p, a1) -> F unload(p, a1))";
    let steps: &[&[&str]] = &[
        &["load(p1, a1)"],
        &["load(p6, a1)"],
        &["unload(p1, a1)"],
        &["unload(p2, a2)"],
    ];
    for engine in ENGINES {
        let (got, _) = audit(f, "Ltlf", engine, steps);
        assert_eq!(got, vec![v(4, "p6")], "{engine:?}");
    }
}

#[test]
fn two_variables_of_one_proposition_get_the_tuples_of_the_labels() {
    // Every atom mentions p and a: only tuples seen together in a label get instances.
    let f = "forall p, a: G(unload(p, a) -> Y O load(p, a))";
    let steps: &[&[&str]] = &[
        &["load(p1, a1)"],   // 1
        &["load(p6, a1)"],   // 2
        &["unload(p1, a1)"], // 3: loaded at 1
        &["unload(p2, a2)"], // 4: (p2, a2) never loaded: violated
        &["unload(p6, a2)"], // 5: p6 was loaded into a1, not a2: violated
    ];
    for engine in ENGINES {
        let (got, values) = audit(f, "Ltl3", engine, steps);
        assert_eq!(got, vec![v(4, "p2, a2"), v(5, "p6, a2")], "{engine:?}");
        // Not the cross product (3 packages × 2 areas).
        assert_eq!(
            values,
            ["p1, a1", "p6, a1", "p2, a2", "p6, a2"],
            "{engine:?}"
        );
    }
    let f = "forall p, a: G(load(p, a) -> F unload(p, a))";
    let steps: &[&[&str]] = &[
        &["load(p1, a1)"],
        &["load(p6, a1)"],
        &["unload(p1, a1)"],
        &["unload(p2, a2)"],
    ];
    for engine in ENGINES {
        let (got, _) = audit(f, "Ltlf", engine, steps);
        // At the end (4): p6 never unloaded from a1.
        assert_eq!(got, vec![v(4, "p6, a1")], "{engine:?}");
    }
}

#[test]
fn equal_values_of_two_variables_merge_atoms() {
    // `p(x) & p(y)` for x = y is one atom: the compiled engines run this property by complete
    // progression, the same verdicts.
    let f = "forall x, y: G(p(x) & p(y) -> q(x, y))";
    let steps: &[&[&str]] = &[
        &["p(a)"], // 1: (a, a) needs q(a, a): violated
        &["p(a)", "p(b)", "q(a, b)", "q(b, a)", "q(a, a)", "q(b, b)"], // 2: all there
        &["p(b)", "p(c)", "q(b, c)"], // 3: (b, b), (c, b), (c, c) violated; (b, c) holds
    ];
    for engine in ENGINES {
        let (mut got, _) = audit(f, "Ltl3", engine, steps);
        got.sort();
        assert_eq!(
            got,
            vec![v(1, "a, a"), v(3, "b, b"), v(3, "c, b"), v(3, "c, c")],
            "{engine:?}"
        );
    }
}

#[test]
fn exists_body_mentions_the_forall_variable() {
    // "At check(a), area a was empty before this step": a is occupied while some package
    // loaded into it has not been unloaded from it (the Trucks example, per area).
    let f = "forall a: G(check(a) -> !Y(exists p: !unload(p, a) S load(p, a)))";
    let steps: &[&[&str]] = &[
        &["load(p1, a1)"],                // 1
        &["load(p6, a1)"],                // 2
        &["unload(p1, a1)"],              // 3: a1 still holds p6
        &["check(a1)", "unload(p2, a2)"], // 4: a1 occupied after 3: violated
        &["unload(p6, a1)"],              // 5: a1 empty
        &["check(a1)", "check(a2)"],      // 6: both empty after 5 (p2 was never loaded)
        &["load(p3, a3)"],                // 7: a3 first seen in the quantifier's body
        &["check(a3)"],                   // 8: a3 holds p3: violated
        &["check(a4)"],                   // 9: a4 first seen outside the body: empty
        &["load(p5, a4)"],                // 10
        &["check(a4)"],                   // 11: a4 holds p5: violated
    ];
    for engine in ENGINES {
        let (got, _) = audit(f, "Ltl3", engine, steps);
        assert_eq!(got, vec![v(4, "a1"), v(8, "a3"), v(11, "a4")], "{engine:?}");
    }
    // A pattern with the forall variable: `load(*, a)` for a value of a.
    let f = "forall a: G(check(a) -> !load(*, a))";
    let steps: &[&[&str]] = &[
        &["check(a1)", "load(p1, a2)"],
        &["check(a2)", "load(p1, a2)"],
    ];
    for engine in ENGINES {
        let (got, _) = audit(f, "Ltl3", engine, steps);
        assert_eq!(got, vec![v(2, "a2")], "{engine:?}");
    }
}

// ---- quickcheck: the sliced monitor against brute force ----

const VALUES: [&str; 2] = ["a", "b"];
/// A value that never occurs: brute force's stand-in for "every value not seen".
const FRESH: &str = "zz";

const FORMULAS: [&str; 10] = [
    "G(p(x) & q(y) -> O r(x, y))",
    "G(r(x, y) -> X q(y))",
    "G(p(x) -> !q(y)) | F r(y, x)",
    "p(x) U q(y)",
    "G(r(x, y) -> Y(!p(x) S q(y)))",
    "G(p(x) & p(y) -> r(x, y))",
    // Every atom has both variables: only the labels' tuples get instances.
    "G(r(x, y) -> !X r(x, y))",
    "G(r(x, y) -> Y O r(y, x))",
    // Comparisons beside the atoms that bind their variables (issue 24): decided by the tuple.
    "G(p(x) & O q(y) & x != y -> r(x, y))",
    "G(r(x, y) & x = y -> X p(x))",
];

/// `FORMULAS[i]` parsed as the body of `forall x, y: ...` (comparisons need the quantifier).
fn parse_case(arena: &mut Arena, i: usize) -> trac_ltl::Formula {
    let src = format!("forall x, y: {}", FORMULAS[i]);
    trac_ltl::parser::parse_property(arena, &src).unwrap().body
}

#[derive(Clone, Debug)]
struct Case {
    formula: usize,
    trace: Vec<Vec<String>>,
    reset: bool,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let len = usize::arbitrary(g) % 7;
        let trace = (0..len)
            .map(|_| {
                let mut step = Vec::new();
                for x in VALUES {
                    for (base, p) in [("p", 3), ("q", 3)] {
                        if u8::arbitrary(g) % p == 0 {
                            step.push(format!("{base}({x})"));
                        }
                    }
                    for y in VALUES {
                        if u8::arbitrary(g) % 4 == 0 {
                            step.push(format!("r({x}, {y})"));
                        }
                    }
                }
                step
            })
            .collect();
        Case {
            formula: usize::arbitrary(g) % FORMULAS.len(),
            trace,
            reset: bool::arbitrary(g),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Case>> {
        let c = self.clone();
        Box::new((0..self.trace.len()).rev().map(move |n| Case {
            trace: c.trace[..n].to_vec(),
            ..c.clone()
        }))
    }
}

fn policy(reset: bool) -> ResetPolicy {
    ResetPolicy {
        on_violation: reset,
        on_satisfaction: false,
    }
}

/// Per tuple: the violation steps of the instantiated formula run alone (plain progression).
fn brute_force(case: &Case, x: &str, y: &str) -> Vec<usize> {
    let mut arena = Arena::new();
    let f = parse_case(&mut arena, case.formula);
    // The comparison decided here, by the tuple's values, independently of the engines (which
    // read it through `LabelSet::contains`).
    let eq = arena.constant(x == y);
    let f = arena.map_bottom_up(f, &mut |a: &mut Arena, g| match a.node(g) {
        trac_ltl::Node::Atom(s) if a.sym_name(*s) == "=(x, y)" => eq,
        _ => g,
    });
    let g = arena.instantiate(f, "x, y", &format!("{x}, {y}"));
    let mut m = ProgressionMonitor::new(arena, g, policy(case.reset));
    let mut out: Vec<usize> = m
        .initial()
        .filter(|v| *v == Verdict::Violated)
        .map(|_| 0)
        .into_iter()
        .collect();
    for (i, labels) in case.trace.iter().enumerate() {
        let set: LabelSet = labels.iter().map(String::as_str).collect();
        let input = StepInput {
            step: i + 1,
            text: "",
            labels: &set,
        };
        if m.step(&input) == Some(Verdict::Violated) {
            out.push(i + 1);
        }
    }
    out
}

/// The sliced monitor of `engine`: violation steps per instance value, and the steps of the
/// violations of the tuples not seen yet.
fn sliced(case: &Case, engine: Engine) -> (Vec<(String, Vec<usize>)>, Vec<usize>) {
    let mut arena = Arena::new();
    let f = parse_case(&mut arena, case.formula);
    let compiler = trac_compile::Compiler::shared();
    let template = EngineMonitor::new_parametric(
        engine,
        &arena,
        f,
        "x, y",
        policy(case.reset),
        Semantics::Ltl3,
        Some(compiler.as_ref()),
    )
    .unwrap();
    let mut m = ParametricMonitor::with_template(&arena, f, "x, y", template);
    let mut per: Vec<(String, Vec<usize>)> = Vec::new();
    let mut unseen: Vec<usize> = m
        .initial()
        .filter(|v| *v == Verdict::Violated)
        .map(|_| 0)
        .into_iter()
        .collect();
    for (i, labels) in case.trace.iter().enumerate() {
        let set: LabelSet = labels.iter().map(String::as_str).collect();
        let input = StepInput {
            step: i + 1,
            text: "",
            labels: &set,
        };
        for e in m.step(&input) {
            if e.verdict == Verdict::Violated {
                match per.iter_mut().find(|(v, _)| *v == e.value) {
                    Some((_, s)) => s.push(e.step),
                    None => per.push((e.value.clone(), vec![e.step])),
                }
            }
        }
        if m.template_reached() == Some(Verdict::Violated) {
            unseen.push(i + 1);
        }
    }
    for (value, _) in m.instances() {
        if !per.iter().any(|(v, _)| v == value) {
            per.push((value.to_string(), Vec::new()));
        }
    }
    (per, unseen)
}

fn sliced_equals_brute_force(case: Case) -> TestResult {
    // The values seen per variable, by the slicing's own rule (an atom's argument place).
    let mut seen: [Vec<&str>; 2] = [Vec::new(), Vec::new()];
    let formula = FORMULAS[case.formula];
    for labels in &case.trace {
        for l in labels {
            let (base, args) = l.split_once('(').unwrap();
            let args: Vec<&str> = args.trim_end_matches(')').split(", ").collect();
            for (k, var) in ["x", "y"].iter().enumerate() {
                for (i, a) in args.iter().enumerate() {
                    let mut pattern: Vec<String> = args.iter().map(|_| "_".to_string()).collect();
                    pattern[i] = var.to_string();
                    let has = match args.len() {
                        1 => formula.contains(&format!("{base}({var})")),
                        _ => {
                            formula.contains(&format!(
                                "{base}({}",
                                if i == 0 {
                                    format!("{var}, ")
                                } else {
                                    String::new()
                                }
                            )) && (i == 0 || formula.contains(&format!(", {var})")))
                        }
                    };
                    if has && !seen[k].contains(a) {
                        seen[k].push(a);
                    }
                }
            }
        }
    }
    for engine in [Engine::Progression, Engine::Compiled] {
        let (per, unseen) = sliced(&case, engine);
        // Every instance: its violations are those of its tuple run alone.
        for (value, steps) in &per {
            let (x, y) = value.split_once(", ").unwrap();
            let want = brute_force(&case, x, y);
            if *steps != want {
                return TestResult::error(format!(
                    "{engine:?} {formula} {value}: sliced {steps:?}, brute force {want:?}"
                ));
            }
        }
        // The tuples with a value never seen: the union of their brute-force violations.
        let xs: Vec<&str> = seen[0].iter().copied().chain([FRESH]).collect();
        let ys: Vec<&str> = seen[1].iter().copied().chain([FRESH]).collect();
        let mut want: Vec<usize> = Vec::new();
        for x in &xs {
            for y in &ys {
                if *x == FRESH || *y == FRESH {
                    want.extend(brute_force(&case, x, y));
                }
            }
        }
        want.sort();
        want.dedup();
        if unseen != want {
            return TestResult::error(format!(
                "{engine:?} {formula}: unseen tuples violated at {unseen:?}, brute force {want:?}"
            ));
        }
    }
    TestResult::passed()
}

#[test]
fn sliced_monitor_equals_brute_force_per_tuple() {
    QuickCheck::new()
        .tests(150)
        .quickcheck(sliced_equals_brute_force as fn(Case) -> TestResult);
}

// ---- quickcheck: `exists` bodies over the `forall` variable against brute force ----

const EXISTS_FORMULAS: [&str; 3] = [
    "G(check(a) -> !Y(exists p: !unload(p, a) S load(p, a)))",
    "G((exists p: O load(p, a)) -> !check(a))",
    "G(check(a) -> (exists p: H !unload(p, a)) & X !check(a))",
];

#[derive(Clone, Debug)]
struct ExistsCase {
    formula: usize,
    trace: Vec<Vec<String>>,
}

impl Arbitrary for ExistsCase {
    fn arbitrary(g: &mut Gen) -> ExistsCase {
        let len = usize::arbitrary(g) % 8;
        let trace = (0..len)
            .map(|_| {
                let mut step = Vec::new();
                // Not `a`: a value named as the variable would be the template's atom.
                for a in ["a1", "a2"] {
                    if u8::arbitrary(g) % 3 == 0 {
                        step.push(format!("check({a})"));
                    }
                    for p in ["p1", "p2"] {
                        for base in ["load", "unload"] {
                            if u8::arbitrary(g) % 4 == 0 {
                                step.push(format!("{base}({p}, {a})"));
                            }
                        }
                    }
                }
                step
            })
            .collect();
        ExistsCase {
            formula: usize::arbitrary(g) % EXISTS_FORMULAS.len(),
            trace,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = ExistsCase>> {
        let c = self.clone();
        Box::new((0..self.trace.len()).rev().map(move |n| ExistsCase {
            trace: c.trace[..n].to_vec(),
            ..c.clone()
        }))
    }
}

/// Violation steps of `formula` (with free variables `forall`, if any) where every step's
/// labels get the formula's derived atoms first; per instance value, and for the values not
/// seen yet.
fn run_with_derived(
    formula: &str,
    forall: Option<&str>,
    trace: &[Vec<String>],
) -> (Vec<(String, Vec<usize>)>, Vec<usize>) {
    let mut arena = Arena::new();
    let f = trac_ltl::parse(&mut arena, formula).unwrap();
    let mut derived =
        trac_runtime::label::derived::DerivedAtoms::new([(&arena, f, forall)]).unwrap();
    let mut per: Vec<(String, Vec<usize>)> = Vec::new();
    let mut unseen = Vec::new();
    let policy = ResetPolicy::default();
    let mut plain = ProgressionMonitor::new(arena.clone(), f, policy);
    let mut param = forall.map(|v| ParametricMonitor::new(arena.clone(), f, v, policy));
    for (i, labels) in trace.iter().enumerate() {
        let mut set: LabelSet = labels.iter().map(String::as_str).collect();
        derived.extend(&mut set);
        let input = StepInput {
            step: i + 1,
            text: "",
            labels: &set,
        };
        match &mut param {
            None => {
                if plain.step(&input) == Some(Verdict::Violated) {
                    unseen.push(i + 1);
                }
            }
            Some(m) => {
                for e in m.step(&input) {
                    if e.verdict == Verdict::Violated {
                        match per.iter_mut().find(|(v, _)| *v == e.value) {
                            Some((_, s)) => s.push(e.step),
                            None => per.push((e.value.clone(), vec![e.step])),
                        }
                    }
                }
                if m.template_reached() == Some(Verdict::Violated) {
                    unseen.push(i + 1);
                }
            }
        }
    }
    (per, unseen)
}

fn exists_sliced_equals_brute_force(case: ExistsCase) -> TestResult {
    let formula = EXISTS_FORMULAS[case.formula];
    let (per, unseen) = run_with_derived(formula, Some("a"), &case.trace);
    for (value, steps) in &per {
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, formula).unwrap();
        let g = arena.instantiate(f, "a", value);
        let inst = trac_ltl::print(&arena, g);
        let (_, want) = run_with_derived(&inst, None, &case.trace);
        if *steps != want {
            return TestResult::error(format!(
                "{formula} for {value} ({inst}): sliced {steps:?}, brute force {want:?}"
            ));
        }
    }
    // Values never seen: the formula for a fresh value.
    let mut arena = Arena::new();
    let f = trac_ltl::parse(&mut arena, formula).unwrap();
    let g = arena.instantiate(f, "a", FRESH);
    let (_, want) = run_with_derived(&trac_ltl::print(&arena, g), None, &case.trace);
    if unseen != want {
        return TestResult::error(format!(
            "{formula}: unseen values violated at {unseen:?}, brute force {want:?}"
        ));
    }
    TestResult::passed()
}

#[test]
fn exists_over_the_forall_variable_equals_brute_force() {
    QuickCheck::new()
        .tests(200)
        .quickcheck(exists_sliced_equals_brute_force as fn(ExistsCase) -> TestResult);
}
