//! Comparisons with a value (`to = "boss"`, `to != "eve"`, issue 24) in a `trac_monitor!`
//! monitor: the generated valuation reads a comparison as the instance's value compared with
//! the constant; the same violation steps, derived by hand, through the typed valuation and
//! through labels.

use trac_core::generated::Values;
use trac_core::{LabelSet, StepInput, Verdict};

trac_macros::trac_monitor! {
    /// Mail sent to one address only.
    pub struct Mail {
        props { send(to): "the agent sends a message to {to}" }
        only_boss: "forall to: G(send(to) -> to = \"boss\")",
        not_eve: "forall to: G(send(to) -> to != \"eve\")",
    }
}

/// The trace: boss (allowed), eve (breaks both), nothing, `Boss` (not `boss`: values are
/// compared exactly, so it breaks `only_boss`).
const TRACE: [&[&str]; 4] = [&["boss"], &["eve"], &[], &["Boss"]];

const ONLY_BOSS: [Option<Verdict>; 4] =
    [None, Some(Verdict::Violated), None, Some(Verdict::Violated)];
const NOT_EVE: [Option<Verdict>; 4] = [None, Some(Verdict::Violated), None, None];

#[test]
fn comparisons_with_values_through_the_typed_valuation() {
    let mut m = Mail::new();
    for (i, values) in TRACE.iter().enumerate() {
        let v = MailValuation {
            send: Values::list(values),
        };
        let r = m.step(&v);
        assert_eq!(r.only_boss, ONLY_BOSS[i], "step {}", i + 1);
        assert_eq!(r.not_eve, NOT_EVE[i], "step {}", i + 1);
    }
}

#[test]
fn comparisons_with_values_through_labels() {
    let mut m = Mail::new();
    for (i, values) in TRACE.iter().enumerate() {
        let labels: LabelSet = values.iter().map(|v| format!("send({v})")).collect();
        let input = StepInput {
            step: i + 1,
            text: "",
            labels: &labels,
        };
        let r = m.step_labels(&input);
        assert_eq!(r.only_boss, ONLY_BOSS[i], "step {}", i + 1);
        assert_eq!(r.not_eve, NOT_EVE[i], "step {}", i + 1);
    }
}
