//! `trac experiment temporal`'s library with scripted judges (in-process models whose answers
//! are known): the generator's truth against TRAC's monitors, the judge's accuracy and
//! interval by hand, retries and failures, determinism, the plot.

use std::sync::atomic::{AtomicU64, Ordering};
use trac_experiments::stats::wilson;
use trac_experiments::temporal::{
    parse_verdicts, run_sweep, svg, FormulaKind, Sweep, SweepConfig, SweepResult,
};
use trac_llm::{ChatModel, ChatRequest, ChatResponse, Choice, ModelError, Usage};

/// A judge answering every request with `answer(user message)`.
struct Scripted<F: Fn(&str) -> String + Send + Sync> {
    answer: F,
    requests: AtomicU64,
}

fn scripted<F: Fn(&str) -> String + Send + Sync>(answer: F) -> Scripted<F> {
    Scripted {
        answer,
        requests: AtomicU64::new(0),
    }
}

impl<F: Fn(&str) -> String + Send + Sync> ChatModel for Scripted<F> {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let user = &req.messages.last().expect("a message").content;
        Ok(ChatResponse {
            choices: vec![Choice {
                content: (self.answer)(user),
                finish_reason: None,
                logprobs: None,
            }],
            usage: Usage::default(),
        })
    }
    fn usage(&self) -> Usage {
        Usage {
            requests: self.requests.load(Ordering::Relaxed),
            ..Usage::default()
        }
    }
}

fn config(sweep: Sweep, values: Option<Vec<usize>>, samples: usize) -> SweepConfig {
    SweepConfig {
        values,
        samples,
        seeds: 2,
        concurrency: 2,
        ..SweepConfig::new(sweep)
    }
}

fn run(model: &dyn ChatModel, c: &SweepConfig) -> SweepResult {
    run_sweep(model, c).expect("the sweep runs")
}

#[test]
fn an_always_valid_judge_is_right_on_half_and_trac_on_all() {
    // Half of the traces of each point satisfy the constraint (even samples): a judge that
    // always says VALID is right on exactly 2 of 4; TRAC on every one.
    let m = scripted(|_| "VALID".to_string());
    for (sweep, formula, values) in [
        (Sweep::Gap, FormulaKind::Simple, Some(vec![1, 7, 300])),
        (Sweep::Gap, FormulaKind::Tree, Some(vec![1, 4])),
        (Sweep::Propositions, FormulaKind::Simple, Some(vec![1, 5])),
        (Sweep::Propositions, FormulaKind::Tree, Some(vec![3])),
        (Sweep::Language, FormulaKind::Simple, None),
    ] {
        let c = SweepConfig {
            formula,
            ..config(sweep, values, 4)
        };
        let r = run(&m, &c);
        for p in &r.points {
            assert_eq!(
                (p.answers, p.judge_correct, p.judge_failures),
                (4, 2, 0),
                "{sweep:?} {p:?}"
            );
            assert_eq!(p.judge_accuracy, wilson(2, 4));
            assert_eq!(p.trac_accuracy, Some(1.0), "{sweep:?} {formula:?} {p:?}");
        }
        if sweep == Sweep::Language {
            assert_eq!(r.points.len(), 21);
            assert_eq!(r.points[10].label, "precedence/precise");
        }
    }
}

#[test]
fn constraints_are_answered_one_by_one() {
    // A judge that says INVALID for every constraint is right exactly on the violated ones,
    // which TRAC finds all.
    let m = scripted(|u: &str| {
        let k = u.matches("\nConstraint ").count() + usize::from(u.starts_with("Constraint"));
        (1..=k.max(1))
            .map(|i| format!("Constraint {i}: INVALID"))
            .collect::<Vec<_>>()
            .join("\n")
    });
    let r = run(&m, &config(Sweep::Constraints, Some(vec![1, 6, 20]), 3));
    for (p, k) in r.points.iter().zip([1, 6, 20]) {
        assert_eq!(p.answers, 3 * k);
        assert_eq!(p.judge_failures, 0, "{p:?}");
        assert_eq!(p.trac_accuracy, Some(1.0));
    }
    // The same judge answering VALID is right exactly where INVALID was wrong.
    let v = scripted(|u: &str| {
        let k = u.matches("\nConstraint ").count() + usize::from(u.starts_with("Constraint"));
        (1..=k.max(1))
            .map(|i| format!("- **Constraint {i}**: valid"))
            .collect::<Vec<_>>()
            .join("\n")
    });
    let r2 = run(&v, &config(Sweep::Constraints, Some(vec![1, 6, 20]), 3));
    for (a, b) in r.points.iter().zip(&r2.points) {
        assert_eq!(a.judge_correct + b.judge_correct, a.answers, "{a:?} {b:?}");
    }
}

#[test]
fn an_unreadable_answer_is_asked_again_then_a_failure() {
    let m = scripted(|_| "It is hard to say.".to_string());
    let r = run(&m, &config(Sweep::Gap, Some(vec![2]), 3));
    let p = &r.points[0];
    assert_eq!((p.judge_correct, p.judge_failures), (0, 3));
    assert_eq!(p.judge_accuracy, wilson(0, 3));
    assert!(p
        .first_failure
        .as_deref()
        .unwrap()
        .contains("It is hard to say."));
    // One retry per sample.
    assert_eq!(m.usage().requests, 6);
}

#[test]
fn runs_are_deterministic_and_traces_read_as_sentences() {
    let seen = std::sync::Mutex::new(Vec::new());
    let m = scripted(|u: &str| {
        seen.lock().unwrap().push(u.to_string());
        "INVALID".to_string()
    });
    let c = config(Sweep::Gap, Some(vec![5]), 4);
    let a = serde_json::to_string(&run(&m, &c)).unwrap();
    let b = serde_json::to_string(&run(&m, &c)).unwrap();
    assert_eq!(a, b);
    let mut prompts = seen.into_inner().unwrap();
    prompts.sort();
    assert_eq!(prompts[0], prompts[1], "the same prompts twice");
    let first = &prompts[0];
    assert!(first.starts_with("Constraint: Eventually, "), "{first}");
    assert!(first.contains("\nStep 1: Observed a"), "{first}");
    assert!(first.contains(") alongside a"), "{first}");
}

#[test]
fn bad_settings_are_errors() {
    let m = scripted(|_| "VALID".to_string());
    let e = run_sweep(&m, &config(Sweep::Gap, Some(vec![0]), 2)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--values: 0 is out of range for the gap sweep (1 to 100000)"
    );
    let c = SweepConfig {
        formula: FormulaKind::Tree,
        ..config(Sweep::Constraints, None, 2)
    };
    assert!(run_sweep(&m, &c)
        .unwrap_err()
        .to_string()
        .contains("simple formula"));
    let e = run_sweep(&m, &config(Sweep::Gap, None, 0)).unwrap_err();
    assert!(e.to_string().contains("--samples"), "{e}");
}

#[test]
fn verdict_words_are_parsed() {
    assert_eq!(parse_verdicts("**INVALID**", 1), Some(vec![false]));
    assert_eq!(parse_verdicts("The answer: valid.", 1), Some(vec![true]));
    assert_eq!(parse_verdicts("Yes", 1), None);
    assert_eq!(
        parse_verdicts("Constraint 2: VALID\nConstraint 1: invalid", 2),
        Some(vec![false, true])
    );
    assert_eq!(parse_verdicts("Constraint 1: VALID", 2), None);
}

#[test]
fn the_plot_has_both_lines_axes_and_a_legend() {
    let m = scripted(|_| "VALID".to_string());
    let r = run(&m, &config(Sweep::Gap, Some(vec![1, 10, 100]), 2));
    let s = svg::plot(&r);
    assert!(
        s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{s}"
    );
    assert_eq!(s.matches("<polyline").count(), 2, "{s}");
    assert!(s.contains("Temporal elasticity: LLM judge vs TRAC (2 samples per point)"));
    assert!(s.contains(">judge: scripted</text>"));
    assert!(s.contains("gap between the constrained events (steps, log scale)"));
    assert!(s.contains("LLM judge (95% Wilson interval)") && s.contains("TRAC (monitors"));
    assert!(s.trim_end().ends_with("</svg>"));
}
