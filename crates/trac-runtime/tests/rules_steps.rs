//! Issue 24, steps and values: exact captured values, their case, `Tool` alternatives and
//! captures, `Result` leaves; expected labels derived by hand from the events below.

use serde_json::json;
use trac_runtime::label::labeler::{check_spec, Labeler, RuleLabeler};
use trac_runtime::trace::{Event, ToolCall};
use trac_spec::spec::Spec;

const SPEC: &str = r#"
(
  name: "tools",
  propositions: [
    (name: "run", param: Some("c"), rule: Some(AllOf([Tool("shell"), Arg(path: "$.cmd", capture: Some("c"))]))),
    (name: "notify", rule: Some(Tool("send_email|send_sms"))),
    (name: "call", param: Some("t"), rule: Some(Tool((name: "*", capture: Some("t"))))),
    (name: "from", param: Some("who"), rule: Some(AllOf([Field("tool_name", "^read_mail$"), Result(path: "$.sender", capture: Some("who"))]))),
    (name: "said", param: Some("x"), rule: Some(Regex("say (?P<x>.+)"))),
  ],
  properties: [(id: "p", formula: "forall c: G(run(c) -> X !run(c))")],
)"#;

fn labeler() -> RuleLabeler {
    let spec = Spec::from_str(SPEC, "tools.ron").unwrap();
    check_spec(&spec).unwrap();
    RuleLabeler::new(&spec).unwrap()
}

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: Some(format!("id-{name}")),
        name: name.into(),
        arguments: args,
    }
}

fn assistant(calls: Vec<ToolCall>) -> Event {
    Event {
        role: Some("assistant".into()),
        tool_calls: calls,
        ..Event::default()
    }
}

#[test]
fn argument_values_are_kept_exactly_and_keep_their_case() {
    let mut l = labeler();
    let a = assistant(vec![call("shell", json!({"cmd": "cut -d, -f1 a.csv"}))]);
    let b = assistant(vec![call("shell", json!({"cmd": "cut -d -f1 a.csv"}))]);
    let c = assistant(vec![call("shell", json!({"cmd": "Echo  (x) \"q\""}))]);
    assert_eq!(
        l.label(&a, &[]),
        [r#"run("cut -d, -f1 a.csv")"#, "call(shell)"]
    );
    assert_eq!(l.label(&b, &[]), ["run(cut -d -f1 a.csv)", "call(shell)"]);
    // Case, the double space, the parentheses and the quotes survive.
    assert_eq!(
        l.label(&c, &[]),
        [r#"run("Echo  (x) \"q\"")"#, "call(shell)"]
    );
    for ev in [&a, &b, &c] {
        for label in l.label(ev, &[]) {
            trac_runtime::label::labeler::check_label(&label).unwrap();
        }
    }
}

#[test]
fn text_values_keep_the_case_rule_and_are_quoted_when_needed() {
    let l = labeler();
    // Lowercased (the spec is not case_sensitive), whitespace runs made one space, the comma
    // kept (quoted).
    assert_eq!(
        l.label_text("say Hello,   World"),
        [r#"said("hello, world")"#]
    );
}

#[test]
fn tool_alternatives_match_and_tool_names_are_captured() {
    let mut l = labeler();
    let ev = assistant(vec![
        call("send_sms", json!({})),
        call("lookup", json!({})),
        call("send_email", json!({})),
    ]);
    assert_eq!(
        l.label(&ev, &[]),
        [
            "notify",
            "call(send_sms)",
            "call(lookup)",
            "call(send_email)"
        ]
    );
    let ev = assistant(vec![call("send_fax", json!({}))]);
    assert_eq!(l.label(&ev, &[]), ["call(send_fax)"]);
}

#[test]
fn results_are_read_as_json_at_the_tool_message() {
    let mut l = labeler();
    let result = |name: &str, content: &str| Event {
        role: Some("tool".into()),
        tool_call_id: Some("c1".into()),
        tool_name: Some(name.into()),
        input: Some(content.into()),
        ..Event::default()
    };
    assert_eq!(
        l.label(
            &result("read_mail", r#"{"sender": "Mia.Li@x.org", "body": "hi"}"#),
            &[]
        ),
        ["from(Mia.Li@x.org)"]
    );
    // Another tool's result, a result without the path, and a text result: no value.
    assert!(l
        .label(&result("search", r#"{"sender": "a"}"#), &[])
        .is_empty());
    assert!(l
        .label(&result("read_mail", r#"{"body": "hi"}"#), &[])
        .is_empty());
    assert!(l.label(&result("read_mail", "sender: a"), &[]).is_empty());
    // The same JSON in an assistant message is not a tool result.
    let mut ev = result("read_mail", r#"{"sender": "a"}"#);
    ev.role = Some("assistant".into());
    ev.tool_call_id = None;
    assert!(l.label(&ev, &[]).is_empty());
}

#[test]
fn a_capturing_tool_leaf_in_single_parentheses_is_a_clear_error() {
    let src = SPEC.replace(
        r#"Tool((name: "*", capture: Some("t")))"#,
        r#"Tool(name: "*", capture: Some("t"))"#,
    );
    let e = Spec::from_str(&src, "tools.ron").unwrap_err().to_string();
    assert!(e.contains("two pairs of parentheses"), "{e}");
    assert!(e.contains("tools.ron:"), "{e}");
}
