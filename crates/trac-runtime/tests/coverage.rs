//! Audit coverage: which steps were understood, and which atoms never held.

use std::io::Cursor;
use trac_runtime::audit::{audit_events, AuditOptions};
use trac_runtime::trace::{TraceFormat, TraceReader};
use trac_spec::spec::{CheckedSpec, PropertyDecl, PropositionDecl, Rule, Spec};

fn spec(formulas: &[&str], props: Vec<PropositionDecl>) -> CheckedSpec {
    Spec {
        name: "t".into(),
        propositions: props,
        properties: formulas
            .iter()
            .enumerate()
            .map(|(i, f)| PropertyDecl {
                id: format!("p{}", i + 1),
                formula: f.to_string(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
    .check()
    .unwrap()
}

fn audit(spec: &CheckedSpec, src: &str, format: TraceFormat) -> trac_runtime::audit::TraceReport {
    let r = TraceReader::from_reader(Cursor::new(src.as_bytes().to_vec()), "t", format);
    audit_events(
        std::slice::from_ref(spec),
        "t",
        r,
        &AuditOptions {
            compiler: Some(trac_compile::Compiler::shared()),
            ..AuditOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn chat_lines_without_known_fields_are_not_understood() {
    let s = spec(&["G !bad"], vec![]);
    let src = "{\"role\": \"user\", \"content\": \"hi\"}\n{\"role\": \"assistant\", \"content\": \"bad\"}\n";
    let c = audit(&s, src, TraceFormat::Jsonl).coverage;
    assert_eq!(
        (c.steps, c.with_text, c.with_labels, c.understood),
        (2, 0, 0, 0)
    );
}

#[test]
fn text_is_understood_only_when_rules_read_it() {
    let src = "1. look\n2. take knife\n";
    // No labeling rule: the text of a plain log cannot make any atom hold.
    let c = audit(&spec(&["G !look"], vec![]), src, TraceFormat::Text).coverage;
    assert_eq!((c.steps, c.with_text, c.understood), (2, 2, 0));
    let look = PropositionDecl {
        name: "look".into(),
        rule: Some(Rule::Words("look".into())),
        ..Default::default()
    };
    let r = audit(&spec(&["G !look"], vec![look]), src, TraceFormat::Text);
    assert_eq!((r.coverage.steps, r.coverage.understood), (2, 2));
    assert!(r.coverage.labels_seen.contains("look"));
    assert_eq!(r.violation_count(), 1);
}

#[test]
fn never_labeled_atoms_match_quantified_atoms_by_base() {
    let s = spec(
        &[
            "G(lok -> X look)",
            "forall x: G(take(x) -> F eat(x))",
            "F take(apple)",
        ],
        vec![],
    );
    let src = "{\"labels\": [\"look\", \"take(knife)\"]}\n{\"labels\": []}\n";
    let r = audit(&s, src, TraceFormat::Jsonl);
    assert_eq!((r.coverage.with_labels, r.coverage.understood), (2, 2));
    let missing = r.coverage.never_labeled(&s);
    let pairs: Vec<(&str, &str)> = missing
        .iter()
        .map(|(p, a)| (p.as_str(), a.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [("p1", "lok"), ("p2", "eat(x)"), ("p3", "take(apple)")]
    );
}
