//! Patterns and sets in formulas (`result(update_*)`, `result(a|b)`) over a chat log: one atom
//! stands for every tool that matches, so five write tools are not five alternatives. Expected
//! steps derived by hand from `fixtures/openai_airline.json` (one step per message: 1 system,
//! 2 user, 3 call get_user_details, 4 its result, 5 assistant text, 6 user "what about
//! baggage?", 7 call update_reservation_flights, 8 its result, 9 user "Yes, ...", 10 call
//! update_reservation_baggages, 11 its result, 12 assistant text).

use std::path::Path;
use trac_runtime::audit::{audit_path, AuditOptions};
use trac_runtime::label::labeler::check_spec;
use trac_spec::spec::Spec;

const SPEC: &str = r#"(
  name: "results",
  propositions: [
    (name: "result", param: Some("tool"), description: "a result of tool {tool}",
     rule: Some(AllOf([Role("tool"), Field("tool_name", "^(?P<tool>.+)$")]))),
    (name: "confirm", rule: Some(AllOf([Role("user"), Input(Regex(r"\b(yes|confirm|go ahead)\b"))]))),
  ],
  properties: [
    (id: "confirmed", formula: "G(result(update_*) -> O confirm)"),
    (id: "set", formula: "G !result(update_reservation_flights|update_reservation_cabin)"),
    (id: "lookup", formula: "G(result(update_*) -> (exists t: Y O result(t)))"),
    (id: "no_get", formula: "G !result(get_*)"),
  ],
)"#;

#[test]
fn patterns_and_sets_over_tool_results() {
    let spec = check_spec(&Spec::from_str(SPEC, "results.ron").unwrap()).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openai_airline.json");
    for opts in [
        AuditOptions {
            engine: trac_runtime::engine::Engine::Progression,
            ..AuditOptions::default()
        },
        AuditOptions {
            compiler: Some(trac_compile::Compiler::shared()),
            ..AuditOptions::default()
        },
    ] {
        let r = audit_path(&spec, &path, &opts).expect("audit").remove(0);
        assert_eq!(r.steps, 12);
        // The update result at 8 comes before the only confirmation (9); the one at 11 after.
        assert_eq!(r.property("confirmed").violation_steps(), vec![8]);
        // update_reservation_flights is in the set, update_reservation_baggages (11) is not.
        assert_eq!(r.property("set").violation_steps(), vec![8]);
        // A tool result (get_user_details, 4) precedes every update result.
        assert_eq!(r.property("lookup").violation_steps(), Vec::<usize>::new());
        assert_eq!(r.property("no_get").violation_steps(), vec![4]);
    }
}
