//! Generated monitors (`trac_monitor!`) on the faults of issue 8: TRAC_R counts each failing
//! position once (§1.1), and the verdict of `forall x: φ` covers the values not seen yet (§1.2).

use trac_core::labels::{LabelSet, StepInput};

use trac_runtime::Verdict;

trac_macros::trac_monitor! {
    /// Past-time properties whose failures are known one step before their position.
    struct Past {
        props { a: "a holds", valid: "the output is valid" }
        yesterday: "Y a",
        always_yesterday: "G(Y a)",
        valid_before: "G(Y true -> Y valid)",
    }
}

trac_macros::trac_monitor! {
    /// Parametric properties.
    struct Files {
        props {
            bad(f): "file {f} is corrupted",
            done(f): "file {f} is done",
            write(f): "file {f} is written",
            init: "the store is initialized",
        }
        done_before_bad: "forall f: !bad(f) U done(f)",
        written_after_init: "forall f: G(write(f) -> O init)",
    }
}

/// Steps, each a list of labels.
type Steps<'a> = &'a [&'a [&'a str]];

fn labels(steps: Steps<'_>) -> Vec<LabelSet> {
    steps.iter().map(|s| s.iter().copied().collect()).collect()
}

#[test]
fn trac_r_counts_each_failing_position_once() {
    // (property index, trace, violation steps: known one step before their position)
    let cases: [(usize, Steps<'_>, &[usize]); 3] = [
        (0, &[&["a"]], &[0]),
        (1, &[&["a"], &["a"], &[], &["a"]], &[0, 3]),
        (2, &[&["valid"], &[], &["valid"], &["valid"]], &[2]),
    ];
    for (k, steps, want) in cases {
        for typed in [true, false] {
            let mut m = Past::new();
            let mut got = Vec::new();
            if m.initial().to_array()[k] == Some(Verdict::Violated) {
                got.push(0);
            }
            for (i, l) in labels(steps).iter().enumerate() {
                let v = if typed {
                    m.step(&PastValuation::from_labels(l))
                } else {
                    m.step_labels(&StepInput {
                        step: i + 1,
                        text: "",
                        labels: l,
                    })
                };
                if v.to_array()[k] == Some(Verdict::Violated) {
                    got.push(i + 1);
                }
            }
            assert_eq!(got, want, "{} (typed: {typed})", Past::FORMULAS[k]);
        }
    }
}

#[test]
fn a_forall_verdict_covers_the_values_not_seen_yet() {
    for typed in [true, false] {
        let mut m = Files::new();
        let mut reached = Vec::new();
        for (i, l) in labels(&[&["done(a)"], &["bad(b)"], &["init"], &["write(c)"]])
            .iter()
            .enumerate()
        {
            let v = if typed {
                m.step(&FilesValuation::from_labels(l))
            } else {
                m.step_labels(&StepInput {
                    step: i + 1,
                    text: "",
                    labels: l,
                })
            };
            reached.push(v.to_array());
            if i == 0 {
                // `a` is done, but not every value: pending, and not reported satisfied.
                assert_eq!(m.verdicts()[0], Verdict::Pending, "typed: {typed}");
                assert_eq!(v.done_before_bad, None, "typed: {typed}");
                // Finite trace: the values not seen yet are not done.
                assert_eq!(m.ltlf()[0], Verdict::Violated);
            }
        }
        let s = Some(Verdict::Satisfied);
        let want = [
            [None, None],
            // `b` goes bad.
            [Some(Verdict::Violated), None],
            // Every value, seen or not, is satisfied once `init` happened.
            [None, s],
            [None, None],
        ];
        assert_eq!(reached, want, "typed: {typed}");
        assert_eq!(m.verdicts()[1], Verdict::Satisfied);
    }
}

trac_macros::trac_monitor! {
    /// A parametric property violated by every value not seen yet.
    struct Takes {
        props { take(x): "{x} is taken" }
        next_take: "forall x: X take(x)",
    }
}

#[test]
fn a_violation_of_every_value_not_seen_yet_is_reached() {
    // `forall x: X take(x)` fails at step 2 for every value not taken there: before, the
    // generated monitor reached no verdict (no instance existed), a silent pass. TRAC_R
    // restarts the template, which fails again at step 3 for the values other than `apple`.
    for typed in [true, false] {
        let mut m = Takes::new();
        let mut reached = Vec::new();
        for (i, l) in labels(&[&[], &[], &["take(apple)"]]).iter().enumerate() {
            let v = if typed {
                m.step(&TakesValuation::from_labels(l))
            } else {
                m.step_labels(&StepInput {
                    step: i + 1,
                    text: "",
                    labels: l,
                })
            };
            reached.push(v.next_take);
        }
        let bad = Some(Verdict::Violated);
        assert_eq!(reached, [None, bad, bad], "typed: {typed}");
    }
}
