//! Comparisons of captured values inside quantified properties (`a != b`, `a = "x"`, issue
//! 24): hand-derived violation steps on small traces, on every engine (progression, complete
//! progression, compiled tables, the cross-check engine, which stops at the first difference
//! between them). A comparison is an atom `=(a, b)` that instantiation gives values; it holds
//! when its values are equal, and does not hold while a side has no value yet.

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

/// The violations `(step, value)` of `formula` (RON-escaped) over `steps` with `engine`, in
/// report order (`None`: the tuples not seen yet), end-of-trace verdicts included.
fn audit(formula: &str, engine: Engine, steps: &[&[&str]]) -> Vec<(usize, Option<String>)> {
    let src = format!("(name: \"t\", properties: [(id: \"P\", formula: \"{formula}\")])");
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
    out
}

fn v(step: usize, value: &str) -> (usize, Option<String>) {
    (step, Some(value.to_string()))
}

#[test]
fn inequality_of_two_variables_on_every_engine() {
    // Never send to an address other than an owner's.
    let f = "forall a, b: G(!(sent_to(a) & O owner(b) & a != b))";
    let steps: &[&[&str]] = &[
        &["owner(ann)"],
        // (ann, ann): `ann != ann` is false, so no violation.
        &["sent_to(ann)"],
        // (bob, ann): sent to bob, ann owned at step 1, bob != ann.
        &["sent_to(bob)"],
        &["sent_to(ann)"],
    ];
    for e in ENGINES {
        assert_eq!(audit(f, e, steps), [v(3, "bob, ann")], "{e:?}");
    }
    // Only equal values: never violated.
    let same: &[&[&str]] = &[&["owner(ann)"], &["sent_to(ann)"], &["sent_to(ann)"]];
    for e in ENGINES {
        assert_eq!(audit(f, e, same), [], "{e:?}");
    }
    // `a = b` written the other way round is the same rule.
    let g = "forall a, b: G(sent_to(a) & O owner(b) -> b = a)";
    for e in ENGINES {
        assert_eq!(audit(g, e, steps), [v(3, "bob, ann")], "{e:?}");
    }
}

#[test]
fn comparison_with_a_value_on_every_engine() {
    // Values are compared exactly: `Boss` is not `boss`.
    let f = "forall a: G(send(a) -> a = \\\"boss\\\")";
    let steps: &[&[&str]] = &[&["send(boss)"], &["send(eve)"], &[], &["send(Boss)"]];
    for e in ENGINES {
        assert_eq!(audit(f, e, steps), [v(2, "eve"), v(4, "Boss")], "{e:?}");
    }
    let g = "forall a: G(send(a) -> a != \\\"eve\\\")";
    for e in ENGINES {
        assert_eq!(audit(g, e, steps), [v(2, "eve")], "{e:?}");
    }
}

#[test]
fn a_variable_without_a_value_is_equal_to_nothing() {
    // At step 1 `b` has no value: `x != b` holds, so `p(x)` breaks nothing. From step 2 on
    // `b = x` has a value: at step 3 the tuple (x, x) needs `q(x)`, which does not hold.
    let f = "forall a, b: G(p(a) -> q(b) | a != b)";
    let steps: &[&[&str]] = &[&["p(x)"], &["q(x)"], &["p(x)"]];
    for e in ENGINES {
        assert_eq!(audit(f, e, steps), [v(3, "x, x")], "{e:?}");
    }
}

#[test]
fn two_comparisons_that_one_tuple_makes_one_on_every_engine() {
    // For `b := "x"`, `a = b` and `a = "x"` are one atom: the rule then says `p(a) -> false`.
    // Steps: q(x) gives b = x; p(x) gives a = x: (x, x) has `a = b` and `a = "x"`, both true
    // (no violation); p(y) gives a = y: (y, x) has both false: violated at step 3.
    let f = "forall a, b: G(p(a) & O q(b) -> (a = b <-> a = \\\"x\\\"))";
    let steps: &[&[&str]] = &[&["q(x)"], &["p(x)"], &["p(y)"]];
    for e in ENGINES {
        assert_eq!(audit(f, e, steps), [], "{e:?}");
    }
    let g = "forall a, b: G(p(a) & O q(b) -> a != b & a = \\\"x\\\")";
    // (x, x): `a != b` false: violated at step 2; (y, x): `a = "x"` false: step 3.
    for e in ENGINES {
        assert_eq!(audit(g, e, steps), [v(2, "x, x"), v(3, "y, x")], "{e:?}");
    }
}

#[test]
fn tuples_of_values_seen_apart_are_compared_too() {
    // The one atom has both variables (`load(p, a)`), but `p != a` is decided per tuple: the
    // tuples (x, x) and (y, y), whose values were seen apart (x for `p` at step 1 and for `a`
    // at step 2), break `p != a` once both values are seen, at step 2.
    let f = "forall p, a: G(p != a | load(p, a))";
    let steps: &[&[&str]] = &[&["load(x, y)"], &["load(y, x)"]];
    for e in ENGINES {
        let mut got = audit(f, e, steps);
        got.sort();
        assert_eq!(got, [v(2, "x, x"), v(2, "y, y")], "{e:?}");
    }
}
