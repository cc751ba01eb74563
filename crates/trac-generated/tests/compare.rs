//! Comparisons with a value (`to = "boss"`, `to != "eve"`, issue 24) in a `trac_monitor!`
//! monitor: the generated valuation reads a comparison as the instance's value compared with
//! the constant; the same violation steps, derived by hand, through the typed valuation and
//! through labels. Two variables compared (`to = u`, issue 27): hand-derived steps and pairs.

use trac_core::generated::Values;
use trac_core::{LabelSet, Monitor, StepInput, Verdict};

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

trac_macros::trac_monitor! {
    /// Mail sent only to an address the user gave (two variables, one comparison).
    pub struct Given {
        props {
            send(to): "the agent sends a message to {to}",
            gave(u): "the user gives the address {u}",
        }
        send_to_given: "forall to, u: G(send(to) & O gave(u) -> to = u)",
    }
}

/// Per step, the values of `send` and of `gave`.
const GIVEN_TRACE: [(&[&str], &[&str]); 6] = [
    (&["a"], &[]),    // 1: no address given yet: no pair has `O gave(u)`.
    (&[], &["a"]),    // 2: `a` given.
    (&["a"], &[]),    // 3: (a, a): `to = u`, fine.
    (&["b"], &[]),    // 4: (b, a) fails.
    (&["b"], &["b"]), // 5: (b, b) fine (O includes now); (b, a) fails again (TRAC_R).
    (&[], &[]),       // 6: nothing.
];

/// Hand-derived, TRAC_R (`Given::new()`): violations at steps 4 and 5, of the pair `b, a`.
const GIVEN: [Option<Verdict>; 6] = [
    None,
    None,
    None,
    Some(Verdict::Violated),
    Some(Verdict::Violated),
    None,
];

fn given_events(m: &Given) -> Vec<String> {
    let mut out = Vec::new();
    m.for_each_event(|_, value, _| out.push(value.unwrap_or("").to_string()));
    out
}

#[test]
fn two_variables_and_a_comparison_through_the_typed_valuation() {
    let mut m = Given::new();
    for (i, (send, gave)) in GIVEN_TRACE.iter().enumerate() {
        let v = GivenValuation {
            send: Values::list(send),
            gave: Values::list(gave),
        };
        let r = m.step(&v);
        assert_eq!(r.send_to_given, GIVEN[i], "step {}", i + 1);
        if GIVEN[i].is_some() {
            assert_eq!(given_events(&m), ["b, a"], "step {}", i + 1);
        }
    }
    // Pairs with a value of each variable seen: (a, a), (a, b), (b, a), (b, b); partial
    // ones (`*`) stand for the values not seen yet.
    let keys: Vec<&str> = m.send_to_given().monitors().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        ["*, *", "a, *", "*, a", "a, a", "b, *", "b, a", "*, b", "a, b", "b, b"]
    );
}

#[test]
fn two_variables_and_a_comparison_through_labels() {
    let mut m = Given::new();
    for (i, (send, gave)) in GIVEN_TRACE.iter().enumerate() {
        let labels: LabelSet = send
            .iter()
            .map(|v| format!("send({v})"))
            .chain(gave.iter().map(|v| format!("gave({v})")))
            .collect();
        let input = StepInput {
            step: i + 1,
            text: "",
            labels: &labels,
        };
        let r = m.step_labels(&input);
        assert_eq!(r.send_to_given, GIVEN[i], "step {}", i + 1);
    }
}

trac_macros::trac_monitor! {
    /// Every `a(x)` after some `b(y)`: a tuple whose `y` has no value yet can fail.
    pub struct Before {
        props { a(x): "a of {x}", b(y): "b of {y}" }
        a_after_b: "forall x, y: G(a(x) -> O b(y))",
    }
}

/// TRAC_R, by hand: a violation of the tuples not seen yet (`x, *`: no `b` value yet) is
/// reached with no value, as the one-variable template's; `(1, 2)` is satisfied from step 2
/// on (`O b(2)` holds for good), while the tuples not seen yet keep failing.
#[test]
fn a_tuple_with_a_variable_not_seen_yet_can_fail() {
    let trace: [&[&str]; 4] = [&["a(1)"], &["b(2)"], &["a(1)"], &["a(3)"]];
    let want = [
        Some(Verdict::Violated),
        None,
        Some(Verdict::Violated),
        Some(Verdict::Violated),
    ];
    let mut m = Before::new();
    for (i, step) in trace.iter().enumerate() {
        let labels: LabelSet = step.iter().copied().collect();
        let r = m.step(&BeforeValuation::from_labels(&labels));
        assert_eq!(r.a_after_b, want[i], "step {}", i + 1);
        let mut events = Vec::new();
        m.for_each_event(|_, value, v| events.push((value.map(str::to_string), v)));
        // `(1, 2)` is made at step 2, when `b(2)` makes `O b(2)` hold for good.
        let satisfied = (Some("1, 2".to_string()), Verdict::Satisfied);
        let want_events = if i == 1 { vec![satisfied] } else { Vec::new() };
        assert_eq!(events, want_events, "step {}", i + 1);
        // `(*, 2)` is satisfied at step 2 too (no `a` of a value not seen yet can fail it).
        let template = if i == 1 {
            Some(Verdict::Satisfied)
        } else {
            want[i]
        };
        assert_eq!(m.a_after_b().template_event(), template, "step {}", i + 1);
    }
    let t = m.a_after_b();
    assert_eq!(
        t.instance("1, 2").map(|m| m.verdict()),
        Some(Verdict::Satisfied)
    );
    assert!(t.instance("1, 3").is_none(), "3 is a value of `x` only");
}
