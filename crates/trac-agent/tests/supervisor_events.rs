//! The supervisor's event-level methods (`check_event`, `commit_event`, `fork`), which
//! `trac gateway` uses: chat messages read by the trace reader, labeled by the spec's rules over
//! roles, tools and arguments, give exactly `trac audit`'s verdicts.

use std::path::PathBuf;
use trac_agent::{Supervisor, SupervisorOptions};
use trac_runtime::audit::{audit_events, AuditOptions};
use trac_runtime::trace::{Event, MessageReader};
use trac_runtime::Verdict;
use trac_spec::spec::{CheckedSpec, Spec};

fn airline() -> CheckedSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs/airline.ron");
    Spec::from_path(&path).unwrap().check().unwrap()
}

/// A conversation that looks the user up, then updates a reservation without confirmation, then
/// (after the user confirms) updates it again.
fn lines(session: &str) -> Vec<String> {
    [
        r#"{"role": "system", "content": "You are an airline agent."}"#,
        r#"{"role": "user", "content": "Change reservation ZFA04Y to HAT045, user mia_li_3668."}"#,
        r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_user_details", "arguments": "{\"user_id\": \"mia_li_3668\"}"}}]}"#,
        r#"{"role": "tool", "tool_call_id": "c1", "content": "{\"name\": \"Mia Li\"}"}"#,
        r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "update_reservation_flights", "arguments": "{\"reservation_id\": \"ZFA04Y\"}"}}]}"#,
        r#"{"role": "tool", "tool_call_id": "c2", "content": "updated"}"#,
        r#"{"role": "user", "content": "Yes, go ahead and add a bag too."}"#,
        r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "update_reservation_baggages", "arguments": "{\"reservation_id\": \"ZFA04Y\"}"}}]}"#,
    ]
    .iter()
    .map(|l| {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["session"] = session.into();
        v.to_string()
    })
    .collect()
}

fn events(lines: &[String]) -> Vec<Event> {
    let mut r = MessageReader::new("log");
    lines.iter().flat_map(|l| r.read_line(l).unwrap()).collect()
}

type Found = Vec<(String, usize, Verdict, Option<String>)>;

fn key(r: &trac_runtime::audit::VerdictRecord) -> (String, usize, Verdict, Option<String>) {
    (r.property.clone(), r.step, r.verdict, r.value.clone())
}

#[test]
fn event_verdicts_are_the_audits_and_a_check_commits_nothing() {
    let specs = [airline()];
    let template = Supervisor::new(&specs, &SupervisorOptions::default()).unwrap();
    let mut sup = template.fork(Some("conv-1"));
    assert_eq!(sup.session(), Some("conv-1"));
    let evs = events(&lines("conv-1"));
    let mut found: Found = sup.initial().iter().map(key).collect();
    for (i, ev) in evs.iter().enumerate() {
        let check = sup.check_event(ev);
        // The unconfirmed update (message 5) is the one violation a check foresees.
        assert_eq!(
            check.violated,
            if i == 4 {
                // Values from tool-call arguments keep their case.
                vec![(
                    "confirm-before-write".to_string(),
                    Some("ZFA04Y".to_string()),
                )]
            } else {
                vec![]
            },
            "message {}",
            i + 1
        );
        // Checking twice gives the same: nothing was committed.
        assert_eq!(sup.check_event(ev).violated, check.violated);
        found.extend(sup.commit_event(ev).iter().map(key));
    }
    assert_eq!(sup.steps(), evs.len());
    let reports =
        audit_events(&specs, "log", evs.iter().cloned().map(Ok), &audit_options()).unwrap();
    assert_eq!(reports.len(), 1);
    let audited: Found = reports[0].records.iter().map(key).collect();
    assert_eq!(found, audited);
    assert!(found.contains(&(
        "confirm-before-write".into(),
        5,
        Verdict::Violated,
        Some("ZFA04Y".into())
    )));
    assert_eq!(reports[0].violation_count(), 1);
}

#[test]
fn forks_are_independent_runs_and_events_join_the_forks_session() {
    let specs = [airline()];
    let template = Supervisor::new(&specs, &SupervisorOptions::default()).unwrap();
    let mut a = template.fork(Some("a"));
    let mut b = template.fork(Some("b"));
    // Events of another session name are the fork's own.
    let evs = events(&lines("elsewhere"));
    let mut va = 0;
    for ev in &evs[..5] {
        va += a
            .commit_event(ev)
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .count();
    }
    assert_eq!(va, 1);
    assert_eq!(a.steps(), 5);
    assert_eq!(b.steps(), 0);
    // b has seen no update: after the lookup and a confirmation, one violates nothing.
    for ev in &evs[..3] {
        b.commit_event(ev);
    }
    let confirmed = events(&[
        r#"{"role": "user", "content": "yes"}"#.to_string(),
        r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "x", "type": "function", "function": {"name": "update_reservation_flights", "arguments": "{\"reservation_id\": \"ZFA04Y\"}"}}]}"#.to_string(),
    ]);
    b.commit_event(&confirmed[0]);
    assert!(b.check_event(&confirmed[1]).compliant());
    // ... while on a, past its violation, an update is still unconfirmed.
    assert!(!a.check_event(&confirmed[1]).compliant());
    assert_eq!(template.steps(), 0);
}

/// `trac audit`'s defaults: the compiled engine, TRAC_R.
fn audit_options() -> AuditOptions {
    AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    }
}
