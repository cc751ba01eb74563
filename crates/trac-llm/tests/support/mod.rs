//! Test fixtures shared by this crate's integration tests.

use trac_spec::spec::{PropositionDecl, Rule, Spec};

/// A small spec: `look` (plain) and `take(item)` (parametric), both by rules.
pub fn spec() -> Spec {
    Spec {
        name: "t".into(),
        propositions: vec![
            PropositionDecl {
                name: "look".into(),
                description: "the agent looks around".into(),
                rule: Some(Rule::Words("look".into())),
                ..Default::default()
            },
            PropositionDecl {
                name: "take".into(),
                param: Some("item".into()),
                description: "the agent takes the {item}".into(),
                rule: Some(Rule::Words("take {item...}".into())),
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}
