//! The spec reader: RON text -> `Spec::from_str` -> `check_spec` (regexes compiled), then, for a
//! spec that checks, its rule labeler on a few events and a progression audit of them.
//! Invariants: a diagnostic's position is within the text; every checked spec builds a labeler
//! and an auditor (a spec that passes the check is usable).
#![no_main]
use trac_runtime::audit::{AuditOptions, Auditor};
use trac_runtime::engine::Engine;
use trac_runtime::label::labeler::{check_spec, RuleLabeler};
use trac_runtime::trace::{Event, ToolCall};
use trac_spec::spec::Spec;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let lines = src.lines().count() + 1;
    let checked = match Spec::from_str(src, "fuzz.ron").and_then(|s| check_spec(&s)) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.diagnostics.is_empty(), "an error without a diagnostic");
            for d in &e.diagnostics {
                if let Some((line, col)) = d.position {
                    assert!(line >= 1 && line <= lines + 1, "{d} in a {lines}-line text");
                    assert!(col >= 1, "{d}");
                }
            }
            let _ = e.to_string();
            return;
        }
    };
    let labeler = RuleLabeler::new(&checked.spec).expect("a checked spec builds its labeler");
    let events = sample_events();
    for ev in &events {
        let _ = labeler.label_event(ev);
    }
    let opts = AuditOptions {
        engine: Engine::Progression,
        ..AuditOptions::default()
    };
    // A property whose past operator holds a future one is an audit error, not a check error.
    let Ok(mut auditor) = Auditor::new(std::slice::from_ref(&checked), &opts) else {
        return;
    };
    let _ = auditor.initial();
    for ev in &events {
        let _ = auditor.step(ev);
    }
    let _ = auditor.end_of_trace();
});

/// Three steps touching text, roles, tool calls with arguments, and fields.
fn sample_events() -> Vec<Event> {
    let mut fields = serde_json::Map::new();
    fields.insert("refusal".into(), "no".into());
    vec![
        Event {
            step: 1,
            line: 1,
            input: Some("You are in a kitchen. yes, go ahead".into()),
            output: Some("take the knife from the table".into()),
            role: Some("user".into()),
            raw: "take the knife from the table".into(),
            ..Event::default()
        },
        Event {
            step: 2,
            line: 2,
            output: Some("1. **DRIVE**: Move truck1 from l3 to l1.".into()),
            role: Some("assistant".into()),
            tool_calls: vec![ToolCall {
                id: Some("c1".into()),
                name: "update_reservation_flights".into(),
                arguments: serde_json::json!({"reservation_id": "ZFA04Y", "items": [1, {"a": "b"}]}),
            }],
            fields,
            raw: "{}".into(),
            ..Event::default()
        },
        Event {
            step: 3,
            line: 3,
            output: Some("examine knife; open fridge; look".into()),
            labels: Some(vec!["take(knife)".into(), "look".into()]),
            raw: "examine knife".into(),
            ..Event::default()
        },
    ]
}
