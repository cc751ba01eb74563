//! `--step-per call` ([`StepPer::Call`]) in every reader that yields tool calls: OpenAI chat
//! (JSON Lines of messages, a top-level array, a conversation object), Anthropic messages and
//! OTLP GenAI spans. The traces are written inline; each expected step list is read off them by
//! hand: an assistant message with calls is one step per call, in order (field `call_index`),
//! then one step for its text if it has any; every other message is one step.

use serde_json::json;
use std::io::Cursor;
use trac_runtime::label::labeler::{check_spec, Labeler, RuleLabeler};
use trac_runtime::trace::{Event, ReadOptions, StepPer, TraceFormat, TraceReader, CALL_INDEX};
use trac_spec::spec::Spec;

/// Reads `src` (format detected) with steps per `step_per`; panics on any error.
fn read(src: &str, step_per: StepPer) -> (TraceFormat, Vec<Event>) {
    let opts = ReadOptions {
        step_per,
        ..ReadOptions::default()
    };
    let mut r =
        TraceReader::sniff_with(Cursor::new(src.as_bytes().to_vec()), "t", None, &opts).unwrap();
    let evs = r.by_ref().map(Result::unwrap).collect();
    (r.format(), evs)
}

/// One step as `(step, role, call name or "-", call_index or 0, text, line)`.
type Row = (usize, String, String, u64, String, usize);

fn rows(evs: &[Event]) -> Vec<Row> {
    evs.iter()
        .map(|e| {
            assert!(e.tool_calls.len() <= 1, "a call step has one call: {e:?}");
            (
                e.step,
                e.role.clone().unwrap_or_default(),
                e.tool_calls.first().map_or("-".into(), |c| c.name.clone()),
                e.fields
                    .get(CALL_INDEX)
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0),
                e.text().to_string(),
                e.line,
            )
        })
        .collect()
}

fn row(step: usize, role: &str, call: &str, k: u64, text: &str, line: usize) -> Row {
    (step, role.into(), call.into(), k, text.into(), line)
}

/// The conversation of the OpenAI tests: a user asks; the assistant says "On it." and calls
/// refund(7), lookup(7), refund(8) in that order; the lookup's result; a call of send_email
/// alone; a closing text.
const OPENAI_MESSAGES: [&str; 5] = [
    r#"{"role": "user", "content": "Refund order 7."}"#,
    r#"{"role": "assistant", "content": "On it.", "timestamp": "T2", "step": 2, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{\"order\": 7}"}}, {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": "{\"order\": 7}"}}, {"id": "c3", "type": "function", "function": {"name": "refund", "arguments": "{\"order\": 8}"}}]}"#,
    r#"{"role": "tool", "tool_call_id": "c2", "content": "{\"paid\": true}"}"#,
    r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c4", "type": "function", "function": {"name": "send_email", "arguments": "{}"}}]}"#,
    r#"{"role": "assistant", "content": "Done."}"#,
];

/// The steps of [`OPENAI_MESSAGES`] per call, message `k` (0-based) on line `line(k)`.
fn openai_call_steps(line: impl Fn(usize) -> usize) -> Vec<Row> {
    vec![
        row(1, "user", "-", 0, "Refund order 7.", line(0)),
        row(2, "assistant", "refund", 1, "", line(1)),
        row(3, "assistant", "lookup", 2, "", line(1)),
        row(4, "assistant", "refund", 3, "", line(1)),
        row(5, "assistant", "-", 0, "On it.", line(1)),
        row(6, "tool", "-", 0, "{\"paid\": true}", line(2)),
        row(7, "assistant", "send_email", 1, "", line(3)),
        row(8, "assistant", "-", 0, "Done.", line(4)),
    ]
}

#[test]
fn openai_jsonl_messages_one_step_per_call() {
    let src: String = OPENAI_MESSAGES
        .iter()
        .map(|m| m.replacen('{', "{\"session\": \"s\", ", 1) + "\n")
        .collect();
    let (format, evs) = read(&src, StepPer::Call);
    assert_eq!(format, TraceFormat::OpenAi);
    assert_eq!(rows(&evs), openai_call_steps(|k| k + 1));
    assert!(evs.iter().all(|e| e.session.as_deref() == Some("s")));
    // The call steps and the text step keep the message's timestamp and log step.
    for e in &evs[1..5] {
        assert_eq!(e.timestamp.as_deref(), Some("T2"));
        assert_eq!(e.declared_step, Some(2));
    }
    // Each call step carries its own arguments.
    assert_eq!(evs[1].tool_calls[0].arguments, json!({"order": 7}));
    assert_eq!(evs[3].tool_calls[0].arguments, json!({"order": 8}));
    assert_eq!(evs[3].tool_calls[0].id.as_deref(), Some("c3"));
    // The result still links to the call it answers (c2: lookup).
    assert_eq!(evs[5].tool_call_id.as_deref(), Some("c2"));
    assert_eq!(evs[5].tool_name.as_deref(), Some("lookup"));
    // `tool_call_count` of a call step is 1, of the text step 0.
    assert_eq!(evs[1].field("tool_call_count").as_deref(), Some("1"));
    assert_eq!(evs[4].field("tool_call_count").as_deref(), Some("0"));
    assert_eq!(evs[2].field("call_index").as_deref(), Some("2"));

    // Per message (the default): five steps, the three calls in one.
    let (_, evs) = read(&src, StepPer::Message);
    assert_eq!(evs.len(), 5);
    assert_eq!(evs[1].tool_calls.len(), 3);
    assert!(evs.iter().all(|e| !e.fields.contains_key(CALL_INDEX)));
}

#[test]
fn openai_array_and_conversation_one_step_per_call() {
    // A top-level array, one message per line after the `[` line.
    let src = format!("[\n{}\n]\n", OPENAI_MESSAGES.join(",\n"));
    let (format, evs) = read(&src, StepPer::Call);
    assert_eq!(format, TraceFormat::OpenAi);
    assert_eq!(rows(&evs), openai_call_steps(|k| k + 2));
    assert_eq!(evs[5].tool_name.as_deref(), Some("lookup"));

    // A conversation object on one line: every step on line 1, session `conv`.
    let src = format!(
        "{{\"id\": \"conv\", \"messages\": [{}]}}\n",
        OPENAI_MESSAGES.join(", ")
    );
    let (_, evs) = read(&src, StepPer::Call);
    assert_eq!(rows(&evs), openai_call_steps(|_| 1));
    assert!(evs.iter().all(|e| e.session.as_deref() == Some("conv")));
}

#[test]
fn anthropic_tool_use_blocks_one_step_per_call() {
    let src = r#"[
{"role": "user", "content": "Refund order 7."},
{"role": "assistant", "content": [{"type": "text", "text": "On it."}, {"type": "tool_use", "id": "u1", "name": "refund", "input": {"order": 7}}, {"type": "tool_use", "id": "u2", "name": "lookup", "input": {"order": 7}}]},
{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u2", "content": "paid"}, {"type": "tool_result", "tool_use_id": "u1", "content": "refunded"}]}
]
"#;
    let (format, evs) = read(src, StepPer::Call);
    assert_eq!(format, TraceFormat::Anthropic);
    assert_eq!(
        rows(&evs),
        [
            row(1, "user", "-", 0, "Refund order 7.", 2),
            row(2, "assistant", "refund", 1, "", 3),
            row(3, "assistant", "lookup", 2, "", 3),
            row(4, "assistant", "-", 0, "On it.", 3),
            row(5, "tool", "-", 0, "paid", 4),
            row(6, "tool", "-", 0, "refunded", 4),
        ]
    );
    // Each result links to its own call, whatever the order of the results.
    assert_eq!(evs[4].tool_name.as_deref(), Some("lookup"));
    assert_eq!(evs[5].tool_name.as_deref(), Some("refund"));
}

#[test]
fn otlp_model_call_one_step_per_call_tool_span_one_step() {
    let attr = |k: &str, v: &str| {
        format!(
            "{{\"key\": \"{k}\", \"value\": {{\"stringValue\": {}}}}}",
            serde_json::to_string(v).unwrap()
        )
    };
    let chat = [
        attr("gen_ai.operation.name", "chat"),
        attr(
            "gen_ai.input.messages",
            r#"[{"role": "user", "parts": [{"type": "text", "content": "Refund 7"}]}]"#,
        ),
        attr(
            "gen_ai.output.messages",
            r#"[{"role": "assistant", "parts": [{"type": "text", "content": "On it."}, {"type": "tool_call", "id": "c1", "name": "refund", "arguments": {"order": 7}}, {"type": "tool_call", "id": "c2", "name": "lookup", "arguments": {"order": 7}}]}]"#,
        ),
    ];
    let tool = [
        attr("gen_ai.operation.name", "execute_tool"),
        attr("gen_ai.tool.name", "lookup"),
        attr("gen_ai.tool.call.id", "c2"),
        attr("gen_ai.tool.call.arguments", "{\"order\": 7}"),
        attr("gen_ai.tool.call.result", "paid"),
    ];
    let span = |id: &str, start: &str, attrs: &[String]| {
        format!(
            "{{\"traceId\": \"t1\", \"spanId\": \"{id}\", \"startTimeUnixNano\": \"{start}\", \"attributes\": [{}]}}",
            attrs.join(", ")
        )
    };
    let src = format!(
        "{{\"resourceSpans\": [{{\"scopeSpans\": [{{\"spans\": [{}, {}]}}]}}]}}\n",
        span("2", "20", &tool),
        span("1", "10", &chat)
    );
    let (format, evs) = read(&src, StepPer::Call);
    assert_eq!(format, TraceFormat::Otlp);
    // The user's message, the model call's two calls then its text, the tool execution (one
    // step with its one call: not split, no `call_index`).
    let got: Vec<(String, String, u64)> = rows(&evs)
        .into_iter()
        .map(|(_, role, call, k, _, _)| (role, call, k))
        .collect();
    let want = [
        ("user", "-", 0),
        ("assistant", "refund", 1),
        ("assistant", "lookup", 2),
        ("assistant", "-", 0),
        ("tool", "lookup", 0),
    ];
    let want: Vec<(String, String, u64)> = want
        .iter()
        .map(|&(r, c, k)| (r.into(), c.into(), k))
        .collect();
    assert_eq!(got, want);
    assert_eq!(evs[3].output.as_deref(), Some("On it."));
    assert_eq!(
        evs.iter().map(|e| e.step).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(evs[1].timestamp, evs[3].timestamp);
    let (_, per_message) = read(&src, StepPer::Message);
    assert_eq!(per_message.len(), 3);
}

#[test]
fn labels_on_the_last_step_and_rules_see_one_call() {
    // Two calls and no text: two steps, the message's labels on the second.
    let src = r#"{"role": "assistant", "labels": ["flagged"], "tool_calls": [{"id": "a", "type": "function", "function": {"name": "refund", "arguments": "{\"order\": 7}"}}, {"id": "b", "type": "function", "function": {"name": "refund", "arguments": "{\"order\": 8}"}}]}
"#;
    let (_, evs) = read(src, StepPer::Call);
    assert_eq!(evs.len(), 2);
    assert_eq!(evs[0].labels, None);
    assert_eq!(evs[1].labels, Some(vec!["flagged".to_string()]));

    // A `Tool` + `Arg` capture: one value per call step, both on the message step (with the
    // message's own label, on the last call step).
    let spec = Spec::from_str(
        r#"(
  name: "t",
  propositions: [
    (name: "refund", param: Some("o"), rule: Some(AllOf([Tool("refund"), Arg(path: "$.order", capture: Some("o"))]))),
  ],
  properties: [(id: "p", formula: "forall o: G !refund(o)")],
)"#,
        "t.ron",
    )
    .unwrap();
    check_spec(&spec).unwrap();
    let mut l = RuleLabeler::new(&spec).unwrap();
    assert_eq!(l.label(&evs[0], &[]), ["refund(7)"]);
    assert_eq!(l.label(&evs[1], &[]), ["refund(8)", "flagged"]);
    let (_, one) = read(src, StepPer::Message);
    assert_eq!(l.label(&one[0], &[]), ["refund(7)", "refund(8)", "flagged"]);
}
