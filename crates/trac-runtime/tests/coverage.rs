//! Audit coverage: which steps were understood, and which atoms never held.

use trac_runtime::engine::Engine;
use trac_runtime::trace::TraceFormat;
use trac_spec::spec::{CheckedSpec, PropositionDecl, Rule, Semantics};

mod support;

fn spec(formulas: &[&str], props: Vec<PropositionDecl>) -> CheckedSpec {
    support::spec_of(formulas, Semantics::default(), props)
}

fn audit(spec: &CheckedSpec, src: &str, format: TraceFormat) -> trac_runtime::audit::TraceReport {
    support::audit_text(spec, src, format, Engine::Compiled)
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

#[test]
fn propositions_on_structure_the_trace_lacks_never_hold_and_their_properties_are_not_audited() {
    use trac_runtime::label::labeler::{never_holds, Structure};
    let w = || Box::new(Rule::Words("yes".into()));
    let role = Rule::Role("user".into());
    let none = Structure::default();
    // `AllOf` fails with any part, `AnyOf` only with all; `Not` and text may always hold.
    assert_eq!(
        never_holds(&Rule::AllOf(vec![role.clone(), Rule::Input(w())]), none).as_deref(),
        Some("`Role(\"user\")` needs message roles")
    );
    assert_eq!(
        never_holds(
            &Rule::AnyOf(vec![role.clone(), Rule::Words("x".into())]),
            none
        ),
        None
    );
    assert_eq!(
        never_holds(
            &Rule::AnyOf(vec![role.clone(), Rule::Tool("book_*".into())]),
            none
        )
        .as_deref(),
        Some("`Role(\"user\")` needs message roles, `Tool(\"book_*\")` needs tool calls")
    );
    assert_eq!(never_holds(&Rule::Not(Box::new(role.clone())), none), None);
    assert_eq!(
        never_holds(&Rule::Field("input".into(), "x".into()), none),
        None
    );
    assert!(never_holds(&Rule::Field("model".into(), "x".into()), none).is_some());
    let chat = Structure {
        roles: true,
        tools: true,
        fields: true,
    };
    assert_eq!(never_holds(&role, chat), None);
    // On a text log: `confirm` (a role) never holds, `look` (text) does; a property of
    // `confirm` only is not audited, one with `look` is.
    let props = vec![
        PropositionDecl {
            name: "confirm".into(),
            rule: Some(Rule::AllOf(vec![role, Rule::Input(w())])),
            ..Default::default()
        },
        PropositionDecl {
            name: "look".into(),
            rule: Some(Rule::Words("look".into())),
            ..Default::default()
        },
    ];
    let s = spec(&["G !confirm", "G(look -> O confirm)"], props);
    let c = audit(&s, "1. look\n2. yes\n", TraceFormat::Text).coverage;
    assert_eq!((c.with_role, c.with_tools, c.with_fields), (0, 0, 0));
    let never = c.never_hold(std::slice::from_ref(&s), false);
    assert_eq!(never.len(), 1);
    assert_eq!(never[0].0, "confirm");
    assert_eq!(
        c.unaudited_properties(std::slice::from_ref(&s), false),
        [("p1".to_string(), vec!["confirm".to_string()])]
    );
    // An LLM labeler may make it hold: no claim.
    assert!(c.never_hold(std::slice::from_ref(&s), true).is_empty());
    // Read as chat, the same propositions may hold.
    let chat_src = "{\"role\": \"user\", \"content\": \"yes\"}\n";
    let c = audit(&s, chat_src, TraceFormat::OpenAi).coverage;
    assert_eq!(c.with_role, 1);
    assert!(c.never_hold(std::slice::from_ref(&s), false).is_empty());
}
