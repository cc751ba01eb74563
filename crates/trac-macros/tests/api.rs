//! The generated API on inline declarations: typed and label steps, the `Monitor` trait,
//! TRAC / TRAC_R, LTLf verdicts, options, parametric properties.

// A second name for trac-core, for the `crate = ...` option (as `::trac::core` is for users of
// the `trac` crate).
extern crate trac_core as core_renamed;

use trac_core::generated::Values;
use trac_core::labels::{LabelSet, StepInput};
use trac_runtime::{Monitor, Verdict};

trac_macros::trac_monitor! {
    /// One rule: the monitor is itself a `Monitor`.
    pub struct Look {
        props { look: "the agent looks around" }
        /// Never look twice in a row.
        no_double_look: "G(look -> X !look)",
    }
}

trac_macros::trac_monitor! {
    #[trac(crate = "::core_renamed")]
    pub struct Options {
        props { p: "p holds", q: "q holds" }
        #[ltlf]
        finite: "F p",
        #[reset_on_satisfaction]
        again: "F q",
        response: "G(p -> X q)",
    }
}

trac_macros::trac_monitor! {
    pub struct Kitchen {
        props {
            take(item): "the agent takes {item}",
            examine(item): "the agent examines {item}",
            look: "the agent looks around",
        }
        examine_next: "forall item: G(take(item) -> X examine(item))",
        no_knife: "G !take(knife)",
    }
}

fn labels(l: &[&str]) -> LabelSet {
    l.iter().copied().collect()
}

#[test]
fn trac_r_counts_every_violation() {
    let mut m = Look::new();
    let got: Vec<Option<Verdict>> = (0..5)
        .map(|_| m.step(&LookValuation { look: true }).no_double_look)
        .collect();
    let v = Some(Verdict::Violated);
    assert_eq!(got, vec![None, v, v, v, v]);
    assert_eq!(m.residuals(), ["!look & G(look -> X!look)"]);
    let mut plain = Look::with_reset(false);
    for _ in 0..5 {
        plain.step(&LookValuation { look: true });
    }
    assert_eq!(plain.verdicts(), [Verdict::Violated]);
    assert_eq!(plain.residuals(), ["false"]);
    plain.reset();
    assert_eq!(plain.verdicts(), [Verdict::Pending]);
}

#[test]
fn a_single_property_monitor_is_a_monitor() {
    let mut m = Look::new();
    let mut dynamic: &mut dyn Monitor = &mut m;
    let set = labels(&["look"]);
    let mut got = Vec::new();
    for step in 1..=3 {
        let input = StepInput {
            step,
            text: "look",
            labels: &set,
        };
        got.push(dynamic.step(&input));
    }
    assert_eq!(
        got,
        [None, Some(Verdict::Violated), Some(Verdict::Violated)]
    );
    let w: Vec<usize> = dynamic.witness().iter().map(|c| c.step).collect();
    assert_eq!(w, [2, 3]);
    dynamic = &mut m;
    assert_eq!(dynamic.residual(), "!look & G(look -> X!look)");
    assert_eq!(Look::PROPERTIES, ["no_double_look"]);
    assert_eq!(Look::PROPOSITIONS, ["look"]);
}

/// The typed `step` runs a fused step of its own (`static`, computed at compile time); steps
/// through labels, through the `Monitor` trait or a `_mut` accessor, and `reset`, move the
/// property's monitor another way: the next typed step starts from where they left it.
/// `G(look -> X !look)`: a `look` right after a `look` is the only violation, so a typed step
/// from a stale position (after a `look`) would report one where none is.
#[test]
fn typed_steps_follow_the_other_ways_of_stepping() {
    let mut m = Look::new();
    let look = LookValuation { look: true };
    let none = labels(&[]);
    let input = StepInput {
        step: 0,
        text: "",
        labels: &none,
    };
    assert_eq!(m.step(&look).no_double_look, None);
    assert_eq!(m.step_labels(&input).no_double_look, None);
    assert_eq!(m.step(&look).no_double_look, None, "after step_labels");
    assert_eq!(Monitor::step(m.no_double_look_mut(), &input), None);
    assert_eq!(m.step(&look).no_double_look, None, "after a _mut step");
    m.reset();
    assert_eq!(m.step(&look).no_double_look, None, "after reset");
    assert_eq!(Monitor::step(&mut m, &input), None);
    assert_eq!(m.step(&look).no_double_look, None, "after Monitor::step");
    let v = Some(Verdict::Violated);
    assert_eq!(m.step(&look).no_double_look, v);
    assert_eq!(m.verdicts(), [Verdict::Pending], "TRAC_R restarted");
    assert_eq!(m.residuals(), ["!look & G(look -> X!look)"]);
    // The monitor behind the accessor was stepped by the typed steps too.
    assert_eq!(Monitor::step(m.no_double_look_mut(), &input), None);
    assert_eq!(m.residuals(), ["G(look -> X!look)"]);
    let mut plain = Look::with_reset(false);
    let got: Vec<_> = (0..3).map(|_| plain.step(&look).no_double_look).collect();
    assert_eq!(got, [None, v, None], "TRAC reports a violation once");
    assert_eq!(plain.verdicts(), [Verdict::Violated]);
}

#[test]
fn options_and_accessors() {
    let mut m = Options::new();
    assert_eq!(m.initial(), OptionsVerdicts::default());
    assert_eq!(
        Options::tables()[0].semantics(),
        trac_core::generated::Semantics::Ltlf
    );
    let none = OptionsValuation::default();
    let q = OptionsValuation { q: true, ..none };
    assert_eq!(m.step(&q).again, Some(Verdict::Satisfied));
    // `reset_on_satisfaction`: pending again, satisfied again at the next `q`.
    assert_eq!(m.verdicts()[1], Verdict::Pending);
    assert_eq!(m.step(&none).again, None);
    assert_eq!(m.step(&q).again, Some(Verdict::Satisfied));
    assert_eq!(m.ltlf()[0], Verdict::Violated);
    let p = OptionsValuation { p: true, ..none };
    let v = m.step(&p);
    assert_eq!(v.finite, Some(Verdict::Satisfied));
    assert!(!v.any_violated());
    assert!(m.step(&none).any_violated());
    assert_eq!(m.last_verdicts().response, Some(Verdict::Violated));
    let mut events = Vec::new();
    m.for_each_event(|id, value, v| events.push((id, value.map(str::to_string), v)));
    assert_eq!(events, [("response", None, Verdict::Violated)]);
    assert_eq!(Monitor::verdict(m.finite()), Verdict::Satisfied);
    Monitor::reset(m.finite_mut());
    assert_eq!(Monitor::verdict(m.finite()), Verdict::Pending);
}

#[test]
fn parametric_properties() {
    let mut m = Kitchen::new();
    let knife = ["knife"];
    let apple = ["apple"];
    let step = |m: &mut Kitchen, take: &[&str], examine: &[&str]| {
        m.step(&KitchenValuation {
            take: Values::list(take),
            examine: Values::list(examine),
            look: false,
        })
    };
    assert_eq!(step(&mut m, &apple, &[]).examine_next, None);
    assert_eq!(
        step(&mut m, &knife, &apple).no_knife,
        Some(Verdict::Violated)
    );
    let v = step(&mut m, &[], &[]);
    assert_eq!(v.examine_next, Some(Verdict::Violated));
    let mut events = Vec::new();
    m.for_each_event(|id, value, v| events.push((id, value.map(str::to_string), v)));
    assert_eq!(
        events,
        [("examine_next", Some("knife".to_string()), Verdict::Violated)]
    );
    let values: Vec<&str> = m
        .examine_next()
        .instances()
        .iter()
        .map(|i| i.value())
        .collect();
    assert_eq!(values, ["apple", "knife"]);
    // The same through labels.
    let mut l = Kitchen::new();
    for (i, set) in [
        labels(&["take(apple)"]),
        labels(&["take(knife)", "examine(apple)"]),
        labels(&[]),
    ]
    .iter()
    .enumerate()
    {
        l.step_labels(&StepInput {
            step: i + 1,
            text: "",
            labels: set,
        });
    }
    assert_eq!(l.last_verdicts(), v);
    assert_eq!(l.verdicts(), m.verdicts());
    let inst = l.examine_next().instance("knife").expect("an instance");
    // TRAC_R: restarted after the violation; the witness ends with it.
    assert_eq!(
        Monitor::residual(inst.monitor()),
        "G(take(knife) -> X examine(knife))"
    );
    let w = Monitor::witness(inst.monitor());
    assert_eq!(w.iter().map(|c| c.step).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(w[1].residual, "false");
    let set = labels(&["take(knife)", "look"]);
    let v = KitchenValuation::from_labels(&set);
    assert!(v.take.contains("knife") && !v.take.contains("apple") && v.look);
}
