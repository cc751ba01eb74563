//! Chat (OpenAI, Anthropic) and OTLP GenAI traces: detection, sessions, tool calls, steps per
//! turn, and labeling rules over roles, tool names and tool-call arguments. The fixtures are
//! hand-written (tests/fixtures); expected values are read off them by hand.

use serde_json::json;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use trac_runtime::label::labeler::{check_spec, Labeler, RuleLabeler};
use trac_runtime::trace::{
    open, open_with, sniff_line, Event, ReadOptions, StepPer, ToolCall, TraceFormat, TraceReader,
};
use trac_spec::spec::Spec;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read_all(name: &str) -> (TraceFormat, Vec<Event>) {
    let mut r = open(&fixture(name)).unwrap();
    let events: Vec<Event> = r.by_ref().map(Result::unwrap).collect();
    (r.format(), events)
}

fn read_src(src: &str, opts: &ReadOptions) -> Vec<Result<Event, String>> {
    let r = TraceReader::sniff_with(Cursor::new(src.as_bytes().to_vec()), "t", None, opts).unwrap();
    r.map(|e| e.map_err(|e| e.to_string())).collect()
}

fn airline() -> Spec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs/airline.ron");
    let spec = Spec::from_path(&path).unwrap();
    check_spec(&spec).unwrap();
    spec
}

fn roles(evs: &[Event]) -> Vec<&str> {
    evs.iter()
        .map(|e| e.role.as_deref().unwrap_or("-"))
        .collect()
}

#[test]
fn openai_array_one_session_tool_calls_linked_to_results() {
    let (format, evs) = read_all("openai_airline.json");
    assert_eq!(format, TraceFormat::OpenAi);
    assert_eq!(evs.len(), 12);
    assert!(evs.iter().all(|e| e.session.is_none()));
    assert_eq!(
        evs.iter().map(|e| e.step).collect::<Vec<_>>(),
        (1..=12).collect::<Vec<_>>()
    );
    assert_eq!(
        roles(&evs),
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    // User and tool messages are inputs; assistant messages outputs.
    assert!(evs[1].input.as_deref().unwrap().contains("ZFA04Y"));
    assert_eq!(evs[1].output, None);
    assert_eq!(
        evs[4].output.as_deref(),
        Some("I can move you to HAT045 on May 20. Shall I proceed?")
    );
    assert_eq!(
        evs[2].tool_calls,
        [ToolCall {
            id: Some("call_1".into()),
            name: "get_user_details".into(),
            arguments: json!({"user_id": "mia_li_3668"}),
        }]
    );
    assert_eq!(evs[2].text(), "");
    assert!(evs[2].has_content());
    assert_eq!(
        evs[2].display_text(),
        r#"get_user_details({"user_id":"mia_li_3668"})"#
    );
    assert_eq!(evs[3].tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(evs[3].tool_name.as_deref(), Some("get_user_details"));
    assert_eq!(
        evs[7].tool_name.as_deref(),
        Some("update_reservation_flights")
    );
    assert_eq!(
        evs[6].tool_calls[0].arguments["flights"][0]["flight_number"],
        json!("HAT045")
    );
    // Text and a tool call in one message.
    assert_eq!(evs[9].output.as_deref(), Some("Adding one bag now."));
    assert_eq!(evs[9].tool_calls[0].name, "update_reservation_baggages");
}

#[test]
fn openai_jsonl_messages_keep_string_and_numeric_sessions_and_log_steps() {
    let (format, evs) = read_all("openai_sessions.jsonl");
    assert_eq!(format, TraceFormat::OpenAi);
    let sessions: Vec<&str> = evs.iter().map(|e| e.session.as_deref().unwrap()).collect();
    assert_eq!(sessions, ["7", "s-2", "7", "s-2", "s-2", "s-2", "s-2", "7"]);
    let log_steps: Vec<u64> = evs.iter().map(|e| e.declared_step.unwrap()).collect();
    assert_eq!(log_steps, [1, 1, 2, 2, 3, 4, 5, 3]);
    assert_eq!(evs[3].line, 4);
    // Parallel tool calls, each result linked to its own call.
    let names: Vec<&str> = evs[3].tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_user_details", "get_reservation_details"]);
    assert_eq!(evs[4].tool_name.as_deref(), Some("get_user_details"));
    assert_eq!(evs[5].tool_name.as_deref(), Some("get_reservation_details"));
    // A refusal is a field rules can read.
    assert!(evs[7].field("refusal").unwrap().starts_with("I can't book"));
    assert_eq!(evs[7].field("session").as_deref(), Some("7"));
}

#[test]
fn conversation_objects_over_several_lines_are_one_session_each() {
    let (format, evs) = read_all("openai_conversations.json");
    assert_eq!(format, TraceFormat::OpenAi);
    let sessions: Vec<&str> = evs.iter().map(|e| e.session.as_deref().unwrap()).collect();
    assert_eq!(
        sessions,
        ["conv-a", "conv-a", "conv-a", "42", "42", "42", "42", "42", "42"]
    );
    // Each message's own line (so SARIF and errors point at it), not its conversation's.
    assert_eq!((evs[0].line, evs[1].line, evs[3].line), (4, 5, 14));
    assert_eq!(
        evs[8].tool_calls[0].arguments["reservation_id"],
        json!("9XY8Z7")
    );
    // The same conversations one per line, and as one array of conversations.
    let one_line: Vec<String> = std::fs::read_to_string(fixture("openai_conversations.json"))
        .unwrap()
        .split("\n}\n")
        .filter(|c| !c.trim().is_empty())
        .map(|c| {
            let v: serde_json::Value = serde_json::from_str(&format!("{c}\n}}")).unwrap();
            v.to_string()
        })
        .collect();
    let jsonl = read_src(&one_line.join("\n"), &ReadOptions::default());
    let array = read_src(
        &format!("[{}]", one_line.join(",")),
        &ReadOptions::default(),
    );
    for evs2 in [jsonl, array] {
        let evs2: Vec<Event> = evs2.into_iter().map(Result::unwrap).collect();
        assert_eq!(evs2.len(), 9);
        assert_eq!(evs2[3].session.as_deref(), Some("42"));
        assert_eq!(evs2[8].tool_calls, evs[8].tool_calls);
    }
}

#[test]
fn anthropic_content_blocks() {
    let (format, evs) = read_all("anthropic.json");
    assert_eq!(format, TraceFormat::Anthropic);
    assert_eq!(
        roles(&evs),
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    // Each message's own line in the pretty-printed file (the system prompt: the document's).
    let lines: Vec<usize> = evs.iter().map(|e| e.line).collect();
    assert_eq!(lines, [1, 5, 6, 10, 13, 16, 19]);
    assert!(evs.iter().all(|e| e.session.as_deref() == Some("anth-1")));
    assert!(evs[0]
        .input
        .as_deref()
        .unwrap()
        .starts_with("You are an airline agent"));
    assert_eq!(evs[2].output.as_deref(), Some("Let me look you up."));
    assert_eq!(evs[2].tool_calls[0].arguments, json!({"user_id": "sara_2"}));
    assert_eq!(evs[3].tool_call_id.as_deref(), Some("toolu_1"));
    assert_eq!(evs[3].tool_name.as_deref(), Some("get_user_details"));
    assert_eq!(evs[5].input.as_deref(), Some("updated"));
    assert_eq!(
        evs[5].tool_name.as_deref(),
        Some("update_reservation_cabin")
    );
}

#[test]
fn otlp_spans_one_session_per_trace_in_time_order() {
    let (format, evs) = read_all("otlp.json");
    assert_eq!(format, TraceFormat::Otlp);
    // The HTTP span is not a GenAI span. A model call whose last input message is the user's
    // is two steps: that user message, then the assistant's answer (spans 0001 and 0102); the
    // plain-text older `gen_ai.prompt` of span 0101 has no role and stays the call's input.
    assert_eq!(evs.len(), 6);
    let a = "5b8aa5a2d2c872e8321cf37308d69df2";
    let b = "0af7651916cd43dd8448eb211c80319c";
    let sessions: Vec<&str> = evs.iter().map(|e| e.session.as_deref().unwrap()).collect();
    assert_eq!(sessions, [a, a, a, b, b, b]);
    let ts: Vec<&str> = evs
        .iter()
        .map(|e| e.timestamp.as_deref().unwrap())
        .collect();
    assert_eq!(
        ts,
        [
            "1717000001000000000",
            "1717000001000000000",
            "1717000002000000000",
            "1717000005000000000",
            "1717000006000000000",
            "1717000006000000000"
        ]
    );
    assert_eq!(
        roles(&evs),
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant"
        ]
    );
    // Each step at the line its span starts on (the file is pretty-printed; spans 0001, 0002,
    // 0101 and 0102 start on lines 23, 9, 66 and 52).
    let lines: Vec<usize> = evs.iter().map(|e| e.line).collect();
    assert_eq!(lines, [23, 23, 9, 66, 52, 52]);
    // Current conventions: input/output messages with parts.
    assert_eq!(
        evs[0].input.as_deref(),
        Some("Change my flight on OTL001 to tomorrow.")
    );
    // The steps of the spans themselves (without the user steps).
    let evs: Vec<Event> = [1, 2, 3, 5].iter().map(|&i| evs[i].clone()).collect();
    assert_eq!(evs[0].input, None);
    assert_eq!(evs[0].tool_calls[0].name, "update_reservation_flights");
    assert_eq!(
        evs[0].tool_calls[0].arguments,
        json!({"reservation_id": "OTL001"})
    );
    assert_eq!(
        evs[0].field("gen_ai.request.model").as_deref(),
        Some("gpt-4o")
    );
    assert_eq!(
        evs[0].field("gen_ai.usage.input_tokens").as_deref(),
        Some("412")
    );
    // A tool execution span.
    assert_eq!(
        evs[1].tool_name.as_deref(),
        Some("update_reservation_flights")
    );
    assert_eq!(evs[1].output.as_deref(), Some("{\"status\": \"updated\"}"));
    // Older conventions: prompt/completion in span events, and indexed attributes.
    assert_eq!(
        evs[2].input.as_deref(),
        Some("What is my baggage allowance?")
    );
    assert_eq!(evs[2].output.as_deref(), Some("Two checked bags."));
    assert_eq!(evs[3].input, None);
    assert_eq!(
        evs[3].tool_calls[0].arguments,
        json!({"reservation_id": "OLD777", "total_baggages": 2})
    );
}

#[test]
fn the_first_line_decides_the_format() {
    assert_eq!(sniff_line(r#"{"output": "look"}"#), TraceFormat::Jsonl);
    assert_eq!(
        sniff_line(r#"{"role": "user", "content": "hi"}"#),
        TraceFormat::OpenAi
    );
    assert_eq!(sniff_line(r#"{"messages": []}"#), TraceFormat::OpenAi);
    assert_eq!(
        sniff_line(r#"{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}"#),
        TraceFormat::Anthropic
    );
    assert_eq!(sniff_line(r#"{"resourceSpans": []}"#), TraceFormat::Otlp);
    assert_eq!(sniff_line("["), TraceFormat::OpenAi);
    assert_eq!(sniff_line("{"), TraceFormat::OpenAi);
    assert_eq!(sniff_line("1. look around"), TraceFormat::Text);
    // A `.jsonl` file with chat lines is chat, not JSON Lines events.
    let t = std::env::temp_dir().join(format!("trac-formats-{}.jsonl", std::process::id()));
    std::fs::write(&t, "\n{\"role\": \"user\", \"content\": \"hi\"}\n").unwrap();
    let mut r = open(&t).unwrap();
    assert_eq!(r.format(), TraceFormat::OpenAi);
    let ev = r.next().unwrap().unwrap();
    assert_eq!((ev.role.as_deref(), ev.line), (Some("user"), 2));
    std::fs::remove_file(&t).unwrap();
    // A given format is used as is: chat lines read as JSON Lines events have no text.
    let r = open_with(
        &fixture("openai_sessions.jsonl"),
        &ReadOptions {
            format: Some(TraceFormat::Jsonl),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.format(), TraceFormat::Jsonl);
    let evs: Vec<Event> = r.map(Result::unwrap).collect();
    assert!(evs.iter().all(|e| e.role.is_none() && e.text().is_empty()));
}

#[test]
fn malformed_arguments_and_unknown_records_are_errors_with_positions() {
    let src = concat!(
        "{\"role\": \"user\", \"content\": \"hi\"}\n",
        "{\"role\": \"assistant\", \"tool_calls\": [{\"id\": \"1\", \"function\": {\"name\": \"update_x\", \"arguments\": \"{\\\"reservation_id\\\": \\\"A\\\"\"}}]}\n",
        "{\"role\": \"assistant\", \"content\": \"ok\"}\n",
        "{\"speaker\": \"bot\", \"text\": \"?\"}\n",
    );
    let items = read_src(src, &ReadOptions::default());
    assert_eq!(items.len(), 4);
    assert!(items[0].is_ok());
    let e = items[1].as_ref().unwrap_err();
    assert!(e.starts_with("t:2:1: tool call `update_x`: its `arguments` string is not valid JSON: EOF while parsing an object (at line 1 column 22 of the string)"), "{e}");
    // Reading goes on; the next message is step 2.
    assert_eq!(items[2].as_ref().unwrap().step, 2);
    let e = items[3].as_ref().unwrap_err();
    assert!(e.starts_with("t:4:1: unrecognized openai record"), "{e}");
    assert!(e.ends_with("fields seen: speaker, text"), "{e}");
    // A broken document: the error is at the line and column where its message starts, and
    // names where serde_json stopped.
    let items = read_src(
        "[\n {\"role\": \"user\",\n  \"content\": }\n]\n",
        &ReadOptions::default(),
    );
    let e = items[0].as_ref().unwrap_err();
    assert!(
        e.starts_with("t:2:2: message 1: expected value (at line 3 column 14)"),
        "{e}"
    );
}

#[test]
fn steps_per_turn() {
    let r = open_with(
        &fixture("openai_airline.json"),
        &ReadOptions {
            step_per: StepPer::Turn,
            ..Default::default()
        },
    )
    .unwrap();
    let turns: Vec<Event> = r.map(Result::unwrap).collect();
    // Turns start at messages 1 (the first), 2, 6 and 9 (user messages).
    assert_eq!(turns.len(), 4);
    assert_eq!(roles(&turns), ["system", "user", "user", "user"]);
    assert_eq!(
        turns[2].fields["turn_roles"],
        json!(["user", "assistant", "tool"])
    );
    assert!(!turns[0].fields.contains_key("turn_roles"));
    let calls = |t: &Event| {
        t.tool_calls
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(calls(&turns[1]), ["get_user_details"]);
    assert_eq!(calls(&turns[2]), ["update_reservation_flights"]);
    assert_eq!(calls(&turns[3]), ["update_reservation_baggages"]);
    // A turn's input is its user message and tool results; its output the assistant's text.
    assert!(turns[2]
        .input
        .as_deref()
        .unwrap()
        .starts_with("Actually wait"));
    assert!(turns[2]
        .input
        .as_deref()
        .unwrap()
        .contains("\"status\": \"updated\""));
    assert_eq!(
        turns[3].output.as_deref(),
        Some("Adding one bag now.\nDone: you are on HAT045 with one checked bag.")
    );
    assert_eq!(
        turns.iter().map(|t| t.step).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
}

#[test]
fn rules_see_roles_tools_arguments_and_fields() {
    let spec = airline();
    let mut l = RuleLabeler::new(&spec).unwrap();
    let (_, evs) = read_all("openai_airline.json");
    let labels: Vec<Vec<String>> = evs.iter().map(|e| l.label(e, &[])).collect();
    let at = |s: usize| labels[s - 1].join(" ");
    assert_eq!(at(3), "lookup");
    // Values from tool-call arguments keep their case (reservation ids are case-sensitive).
    assert_eq!(at(7), "modify(ZFA04Y) write");
    assert_eq!(at(9), "confirm");
    assert_eq!(at(10), "modify(ZFA04Y) write text_with_call");
    // `confirm` needs the user's role: the assistant's "Shall I proceed?" is not one.
    assert_eq!(at(5), "");
    // Tool results repeat the reservation id, but are not calls.
    assert_eq!(at(8), "");
    let (_, evs) = read_all("openai_sessions.jsonl");
    assert_eq!(l.label(&evs[7], &[]), ["refusal"]);
    assert_eq!(l.label(&evs[1], &[]), ["confirm"]);
}

#[test]
fn tool_and_arg_leaves_speak_of_one_call() {
    let src = r#"
(
  name: "t",
  propositions: [
    (name: "modify", param: Some("rid"), rule: Some(AllOf([Tool("update_*"), Arg(path: "$.reservation_id", capture: Some("rid"))]))),
    (name: "flight", param: Some("f"), rule: Some(Arg(path: "$.flights[*].flight_number", pattern: Some("^HAT"), capture: Some("f")))),
    (name: "model", param: Some("m"), rule: Some(Field("model", "(?P<m>gpt-\\w+)"))),
    (name: "says_ok", rule: Some(Output(Words("ok")))),
    (name: "saw_ok", rule: Some(Input(Words("ok")))),
  ],
  properties: [(id: "p", formula: "forall rid: G !modify(rid)")],
)"#;
    let spec = Spec::from_str(src, "t.ron").unwrap();
    check_spec(&spec).unwrap();
    let mut l = RuleLabeler::new(&spec).unwrap();
    let ev = Event {
        role: Some("assistant".into()),
        input: Some("is it ok?".into()),
        output: Some("fine".into()),
        tool_calls: vec![
            ToolCall {
                id: None,
                name: "get_reservation_details".into(),
                arguments: json!({"reservation_id": "R1"}),
            },
            ToolCall {
                id: None,
                name: "update_reservation_flights".into(),
                arguments: json!({"reservation_id": "R2", "flights": [{"flight_number": "HAT1"}, {"flight_number": "XY2"}, {"flight_number": "HAT3"}]}),
            },
        ],
        fields: json!({"model": "gpt-4o", "n": 3})
            .as_object()
            .unwrap()
            .clone(),
        ..Event::default()
    };
    // `modify` holds for R2 only: R1 is an argument of a call that is not an update.
    assert_eq!(
        l.label(&ev, &[]),
        [
            "modify(R2)",
            "flight(HAT1)",
            "flight(HAT3)",
            "model(gpt-4o)",
            "saw_ok"
        ]
    );
    // A text alone: structural leaves do not hold.
    assert_eq!(l.label_text("ok"), ["says_ok", "saw_ok"]);
}

#[test]
fn bad_structural_rules_are_spec_errors_with_positions() {
    let src = "(\n  name: \"t\",\n  propositions: [\n    (name: \"m\", param: Some(\"rid\"), rule: Some(Arg(path: \"reservation_id\", capture: Some(\"rid\")))),\n    (name: \"n\", param: Some(\"x\"), rule: Some(AllOf([Role(\"user\"), Arg(path: \"$.a[\", capture: Some(\"y\"))]))),\n    (name: \"f\", rule: Some(Field(\"model\", \"gpt[\"))),\n  ],\n  properties: [(id: \"p\", formula: \"G !f\")],\n)";
    let spec = Spec::from_str(src, "t.ron").unwrap();
    let e = check_spec(&spec).unwrap_err().to_string();
    assert!(e.contains("t.ron:4:58: proposition `m`: invalid argument path: a path starts with `$` at byte 0 of \"reservation_id\""), "{e}");
    assert!(
        e.contains("t.ron:5:77: proposition `n`: invalid argument path: unclosed `[` at byte 3"),
        "{e}"
    );
    assert!(
        e.contains("t.ron:6:43: proposition `f`: invalid regex: unclosed character class"),
        "{e}"
    );
}

#[test]
fn session_end_ends_a_session_and_a_bare_marker_is_not_a_step() {
    let src = concat!(
        r#"{"session":"a","labels":["p"]}"#,
        "\n",
        r#"{"session":"a","labels":["q"],"session_end":true}"#,
        "\n",
        r#"{"session":"b","session_end":true}"#,
        "\n",
        r#"{"session":"b","labels":[],"session_end":false}"#,
        "\n",
        r#"{"session":"b","session_end":"yes"}"#,
        "\n",
    );
    let evs = read_src(src, &ReadOptions::default());
    let ok: Vec<&Event> = evs.iter().take(4).map(|e| e.as_ref().unwrap()).collect();
    assert_eq!(
        ok.iter().map(|e| e.ends_session()).collect::<Vec<_>>(),
        [false, true, true, false]
    );
    assert_eq!(
        ok.iter().map(|e| e.is_end_marker()).collect::<Vec<_>>(),
        [false, false, true, false]
    );
    // A session_end of the wrong type is an error with its position, not ignored.
    let err = evs[4].as_ref().unwrap_err();
    assert!(err.starts_with("t:5:") && err.contains("boolean"), "{err}");
}

#[test]
fn bracketed_text_logs_are_text_not_broken_json() {
    // `[` then a word is a text log's tag, whatever the extension.
    assert_eq!(sniff_line("[INFO] go north"), TraceFormat::Text);
    assert_eq!(sniff_line("[ Agent ] look"), TraceFormat::Text);
    // ... but JSON arrays stay chat.
    assert_eq!(sniff_line("[true]"), TraceFormat::OpenAi);
    assert_eq!(sniff_line(r#"[{"role": "user"}"#), TraceFormat::OpenAi);
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    // In a `.txt` / `.log` file, a first line that is not JSON is text, so every line is a step.
    for (name, src) in [
        ("a.txt", "[12:01] go north\n[12:02] take lamp\n"),
        ("b.log", "{draft} go north\ntake lamp\n"),
    ] {
        let t = dir.join(format!("trac-bracket-{pid}-{name}"));
        std::fs::write(&t, src).unwrap();
        let r = open(&t).unwrap();
        assert_eq!(r.format(), TraceFormat::Text, "{name}");
        let texts: Vec<String> = r.map(|e| e.unwrap().text().to_string()).collect();
        assert_eq!(texts.len(), 2, "{name}: {texts:?}");
        assert!(texts[1].contains("take lamp"), "{name}: {texts:?}");
        std::fs::remove_file(&t).unwrap();
    }
    // A `.txt` file whose first line is JSON is still read as JSON.
    let t = dir.join(format!("trac-bracket-{pid}-c.txt"));
    std::fs::write(&t, "{\"output\": \"go north\"}\n").unwrap();
    assert_eq!(open(&t).unwrap().format(), TraceFormat::Jsonl);
    std::fs::remove_file(&t).unwrap();
}

#[test]
fn anthropic_tool_results_are_tool_steps_and_the_user_text_after_them_a_user_step() {
    // One user message answering two parallel calls, then saying something: two `tool` steps
    // (one per result, each linked to its call) and one `user` step, as the OpenAI shape has.
    let src = r#"{"messages": [
      {"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "get_user_details", "input": {}},
        {"type": "tool_use", "id": "b", "name": "get_reservation_details", "input": {}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "a", "content": "booking confirmed"},
        {"type": "tool_result", "tool_use_id": "b", "content": "ok"},
        {"type": "text", "text": "yes, go ahead"}]}
    ]}"#;
    let evs: Vec<Event> = read_src(src, &ReadOptions::default())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(roles(&evs), ["assistant", "tool", "tool", "user"]);
    assert_eq!(evs[1].tool_name.as_deref(), Some("get_user_details"));
    assert_eq!(evs[1].input.as_deref(), Some("booking confirmed"));
    assert_eq!(evs[2].tool_name.as_deref(), Some("get_reservation_details"));
    assert_eq!(evs[3].input.as_deref(), Some("yes, go ahead"));
    assert_eq!(evs[3].tool_call_id, None);
    assert_eq!(evs.iter().map(|e| e.line).collect::<Vec<_>>(), [2, 5, 5, 5]);
}

#[test]
fn messages_of_pretty_printed_arrays_keep_their_lines() {
    let src = "[\n {\"role\": \"user\", \"content\": \"hi\"},\n\n {\"role\": \"assistant\",\n  \"content\": \"hello\"}\n]\n";
    let evs: Vec<Event> = read_src(src, &ReadOptions::default())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(evs.iter().map(|e| e.line).collect::<Vec<_>>(), [2, 4]);
    // A list of conversations: each message at its own line.
    let src = "[{\"id\": \"c1\", \"messages\": [\n  {\"role\": \"user\", \"content\": \"a\"}]},\n {\"id\": \"c2\", \"messages\": [\n  {\"role\": \"user\", \"content\": \"b\"}]}]\n";
    let evs: Vec<Event> = read_src(src, &ReadOptions::default())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        evs.iter()
            .map(|e| (e.session.clone().unwrap(), e.line))
            .collect::<Vec<_>>(),
        [("c1".to_string(), 2), ("c2".to_string(), 4)]
    );
}

#[test]
fn otlp_spans_without_a_start_time_keep_their_place_and_have_no_timestamp() {
    let span = |id: &str, start: Option<&str>, tool: &str| {
        let start = start.map_or(String::new(), |t| {
            format!("\"startTimeUnixNano\": \"{t}\", ")
        });
        format!(
            "{{\"traceId\": \"t\", \"spanId\": \"{id}\", {start}\"attributes\": [{{\"key\": \"gen_ai.tool.name\", \"value\": {{\"stringValue\": \"{tool}\"}}}}]}}"
        )
    };
    let src = format!(
        "{{\"resourceSpans\": [{{\"scopeSpans\": [{{\"spans\": [{}, {}, {}]}}]}}]}}\n",
        span("1", Some("20"), "second"),
        span("2", None, "third"),
        span("3", Some("10"), "first")
    );
    let evs: Vec<Event> = read_src(&src, &ReadOptions::default())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let names: Vec<&str> = evs
        .iter()
        .map(|e| e.tool_name.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["first", "second", "third"]);
    assert_eq!(evs[2].timestamp, None);
}

#[test]
fn otlp_without_gen_ai_spans_says_what_it_saw() {
    let src = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "name": "llm", "attributes": [{"key": "llm.model_name", "value": {"stringValue": "gpt-4o"}}]}]}]}]}"#;
    let out = read_src(src, &ReadOptions::default());
    let err = out.last().unwrap().as_ref().unwrap_err();
    assert!(
        err.contains("1 span(s) read, none with `gen_ai.*` attributes")
            && err.contains("attributes seen: llm.model_name"),
        "{err}"
    );
}

/// A chat array of `n` messages, one per line (a user message, then assistant ones).
fn chat_array(n: usize) -> String {
    let mut s = String::from("[\n");
    for k in 1..=n {
        let role = if k == 1 { "user" } else { "assistant" };
        let sep = if k < n { "," } else { "" };
        s.push_str(&format!(
            "  {{\"role\": \"{role}\", \"content\": \"m{k}\"}}{sep}\n"
        ));
    }
    s.push_str("]\n");
    s
}

#[test]
fn a_cut_array_keeps_its_complete_messages() {
    let full = chat_array(10);
    // Cut inside the 10th message (line 11).
    let cut = &full[..full.find("m10").unwrap()];
    let items = read_src(cut, &ReadOptions::default());
    assert_eq!(items.len(), 10, "{items:?}");
    let texts: Vec<String> = items[..9]
        .iter()
        .map(|e| e.as_ref().unwrap().text().to_string())
        .collect();
    assert_eq!(texts, (1..=9).map(|k| format!("m{k}")).collect::<Vec<_>>());
    let lines: Vec<usize> = items[..9]
        .iter()
        .map(|e| e.as_ref().unwrap().line)
        .collect();
    assert_eq!(lines, (2..=10).collect::<Vec<_>>());
    let e = items[9].as_ref().unwrap_err();
    assert!(
        e.starts_with("t:11:3: message 10: the input ends inside it"),
        "{e}"
    );
    // Cut between messages, and a missing `]`, and on one line.
    let items = read_src(
        &full[..full
            .find(",\n  {\"role\": \"assistant\", \"content\": \"m3")
            .unwrap()
            + 1],
        &ReadOptions::default(),
    );
    assert_eq!(items.len(), 3, "{items:?}");
    assert!(items[2].as_ref().unwrap_err().contains("no closing `]`"));
    let one_line =
        "[{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"b";
    let items = read_src(one_line, &ReadOptions::default());
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(
        items[1]
            .as_ref()
            .unwrap_err()
            .starts_with("t:1:36: message 2:"),
        "{items:?}"
    );
    // What follows the array's `]` on its line is read on: another conversation.
    let items = read_src(
        "[{\"role\": \"user\", \"content\": \"a\"}] \n{\"messages\": [{\"role\": \"user\", \"content\": \"b\"}]}\n",
        &ReadOptions::default(),
    );
    let evs: Vec<Event> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        evs.iter()
            .map(|e| (e.text(), e.line, e.session.as_deref()))
            .collect::<Vec<_>>(),
        [("a", 1, None), ("b", 2, Some("#2"))]
    );
}

/// A reader that hands out at most `allowed` bytes: reading past them is an error, so a test
/// sees whether events come before the rest of the input is read.
struct Gate {
    data: Vec<u8>,
    pos: usize,
    allowed: std::rc::Rc<std::cell::Cell<usize>>,
}

impl std::io::Read for Gate {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = self.allowed.get().min(self.data.len());
        if self.pos == end && end < self.data.len() {
            return Err(std::io::Error::other(
                "read past the bytes that have arrived",
            ));
        }
        let n = buf.len().min(end - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn array_messages_stream_as_the_array_arrives() {
    let full = chat_array(4);
    // The first two messages and a part of the third have arrived.
    let half = full.find("m3").unwrap();
    let allowed = std::rc::Rc::new(std::cell::Cell::new(half));
    let gate = Gate {
        data: full.clone().into_bytes(),
        pos: 0,
        allowed: allowed.clone(),
    };
    let mut r = TraceReader::sniff_with(
        std::io::BufReader::new(gate),
        "t",
        None,
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(r.format(), TraceFormat::OpenAi);
    let first: Vec<String> = r
        .by_ref()
        .take(2)
        .map(|e| e.unwrap().text().to_string())
        .collect();
    assert_eq!(first, ["m1", "m2"]);
    allowed.set(full.len());
    let rest: Vec<String> = r.map(|e| e.unwrap().text().to_string()).collect();
    assert_eq!(rest, ["m3", "m4"]);
}

#[test]
fn errors_in_pretty_printed_documents_are_at_their_message() {
    let src = concat!(
        "{\"id\": \"c1\", \"messages\": [\n",
        "  {\"role\": \"user\", \"content\": \"hi\"},\n",
        "    {\"role\": \"assistant\", \"tool_calls\": [{\"id\": \"1\", \"function\": {\"name\": \"f\", \"arguments\": \"{\"}}]},\n",
        "  {\"role\": \"assistant\", \"content\": \"ok\"}\n",
        "]}\n",
    );
    let items = read_src(src, &ReadOptions::default());
    assert_eq!(items.len(), 3, "{items:?}");
    let e = items[1].as_ref().unwrap_err();
    assert!(e.starts_with("t:3:5: message 2:"), "{e}");
    // The same message in an array.
    let src = src
        .replacen("{\"id\": \"c1\", \"messages\": [", "[", 1)
        .replacen("]}\n", "]\n", 1);
    let items = read_src(&src, &ReadOptions::default());
    let e = items[1].as_ref().unwrap_err();
    assert!(e.starts_with("t:3:5: message 2:"), "{e}");
}

#[test]
fn an_unreadable_array_element_names_its_session_when_it_can() {
    let scope = |src: &str| {
        let r = TraceReader::sniff_with(
            Cursor::new(src.as_bytes().to_vec()),
            "t",
            None,
            &ReadOptions::default(),
        )
        .unwrap();
        let errors: Vec<Option<Option<String>>> =
            r.filter_map(Result::err).map(|e| e.session).collect();
        errors
    };
    // A message of the array's own conversation: the default session.
    let messages = "[\n{\"role\": \"user\", \"content\": \"a\"},\n{\"role\": }\n]\n";
    assert_eq!(scope(messages), [Some(None)]);
    // After a conversation element, a broken element may be any conversation.
    let conversations = "[\n{\"id\": \"c1\", \"messages\": []},\n{\"id\": }\n]\n";
    assert_eq!(scope(conversations), [None]);
}

/// Chat messages one per line (OpenAI's dialect as JSON Lines): a line that breaks after naming
/// its `session` stops that session only; the other sessions' messages are all read.
#[test]
fn a_bad_chat_line_names_its_session_and_the_others_are_read() {
    let src = concat!(
        "{\"session\": \"A\", \"role\": \"user\", \"content\": \"hi\"}\n",
        "{\"session\": \"B\", \"role\": \"assistant\", \"content\": \"x\",}\n",
        "{\"session\": \"C\", \"role\": \"user\", \"content\": \"yo\"}\n",
        "{\"role\": \"user\", \"content\": }\n",
    );
    let opts = ReadOptions {
        format: Some(TraceFormat::OpenAi),
        ..ReadOptions::default()
    };
    let r =
        TraceReader::sniff_with(Cursor::new(src.as_bytes().to_vec()), "t", None, &opts).unwrap();
    let items: Vec<Result<Event, trac_runtime::trace::TraceError>> = r.collect();
    let sessions: Vec<Result<Option<String>, Option<Option<String>>>> = items
        .into_iter()
        .map(|i| i.map(|e| e.session).map_err(|e| e.session))
        .collect();
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        sessions,
        // Line 4 breaks before naming a session: unknown (`None`), so it stops the whole file.
        [Ok(s("A")), Err(Some(s("B"))), Ok(s("C")), Err(None)]
    );
}

#[test]
fn otlp_malformed_messages_and_start_times_are_errors_at_their_span() {
    let intact = std::fs::read_to_string(fixture("otlp.json")).unwrap();
    let ok = read_src(&intact, &ReadOptions::default());
    assert!(ok.iter().all(Result::is_ok));
    let n = ok.len();
    // Span 0001 (line 23): its output messages broken, then not JSON at all, then its input
    // messages broken; span 0102 (line 52): a start time that is no number.
    let out_msgs = "[{\\\"role\\\": \\\"assistant\\\", \\\"parts\\\": [{\\\"type\\\": \\\"tool_call\\\", \\\"id\\\": \\\"c1\\\"";
    let cases = [
        (
            intact.replacen(out_msgs, "[{\\\"role\\\": \\\"assist", 1),
            23,
            "span 0001: attribute `gen_ai.output.messages` is not valid JSON: expected `,` or `}` (at line 1 column 21 of the string)",
        ),
        (
            intact.replacen(&format!("\"{out_msgs}"), "\"not json\", \"x\": \"", 1),
            23,
            "span 0001: attribute `gen_ai.output.messages` is not valid JSON: expected ident",
        ),
        (
            intact.replacen("[{\\\"role\\\": \\\"system\\\"", "[{\\\"role\\\": ", 1),
            23,
            "span 0001: attribute `gen_ai.input.messages` is not valid JSON",
        ),
        (
            intact.replacen("\"1717000006000000000\"", "\"tomorrow\"", 1),
            52,
            "span 0102: `startTimeUnixNano` \"tomorrow\" is not a whole number of nanoseconds",
        ),
    ];
    for (src, line, msg) in cases {
        assert_ne!(src, intact, "the corruption applies");
        let items = read_src(&src, &ReadOptions::default());
        let errs: Vec<&String> = items.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with(&format!("t:{line}:")) && errs[0].contains(msg),
            "{}",
            errs[0]
        );
        // The other spans are still read.
        assert!(items.iter().filter(|r| r.is_ok()).count() < n);
        // Its JSON path names the span where a line holds several (a compact export).
        let path = if line == 23 {
            "(at resourceSpans[0].scopeSpans[0].spans[1])"
        } else {
            "(at resourceSpans[1].scopeSpans[0].spans[0])"
        };
        assert!(errs[0].ends_with(path), "{}", errs[0]);
        let compact: serde_json::Value = serde_json::from_str(&src).unwrap();
        let items = read_src(&format!("{compact}\n"), &ReadOptions::default());
        let errs: Vec<&String> = items.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("t:1:") && errs[0].contains(msg),
            "{}",
            errs[0]
        );
        assert!(errs[0].ends_with(path), "{}", errs[0]);
        assert!(items.iter().filter(|r| r.is_ok()).count() >= n - 2);
    }
}

#[test]
fn unknown_roles_are_errors_and_legacy_function_calls_are_tool_calls_and_results() {
    let src = concat!(
        "{\"role\": \"user\", \"content\": \"book it\"}\n",
        "{\"role\": \"asistant\", \"content\": \"done\"}\n",
        "{\"role\": \"assistant\", \"content\": null, \"function_call\": {\"name\": \"book_flight\", \"arguments\": \"{\\\"rid\\\": \\\"A1\\\"}\"}}\n",
        "{\"role\": \"function\", \"name\": \"book_flight\", \"content\": \"booked\"}\n",
    );
    let items = read_src(src, &ReadOptions::default());
    assert_eq!(items.len(), 4);
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(
        e,
        "t:2:1: unknown role `asistant`: trac knows system, developer, user, assistant, tool, function"
    );
    let call = items[2].as_ref().unwrap();
    assert_eq!(call.role.as_deref(), Some("assistant"));
    assert_eq!(call.tool_calls[0].name, "book_flight");
    assert_eq!(call.tool_calls[0].arguments, json!({"rid": "A1"}));
    let result = items[3].as_ref().unwrap();
    assert_eq!(result.role.as_deref(), Some("tool"));
    assert_eq!(result.tool_name.as_deref(), Some("book_flight"));
    assert_eq!(result.input.as_deref(), Some("booked"));
    // A rule on tool results reads it.
    let spec = Spec::from_str(
        r#"(name: "t", propositions: [(name: "booked", rule: Some(AllOf([Role("tool"), Words("booked")])))],
            properties: [(id: "p", formula: "G !booked")])"#,
        "t.ron",
    )
    .unwrap();
    check_spec(&spec).unwrap();
    let mut l = RuleLabeler::new(&spec).unwrap();
    assert_eq!(l.label(result, &[]), ["booked"]);
}

/// From a new-user trial: tool calls in a shape trac does not read were silently dropped (a
/// misspelled `tool_call` field, `tool_calls` as a string, an unknown `tool_usee` block), and
/// a number as `content` was read as no text. Each is an error at its message.
#[test]
fn tool_calls_in_a_shape_trac_does_not_read_are_errors() {
    let cases = [
        (
            r#"[{"role": "assistant", "content": null, "tool_call": [{"id": "1", "function": {"name": "x", "arguments": "{}"}}]}]"#,
            "field `tool_call` is not one trac reads",
        ),
        (
            r#"[{"role": "assistant", "content": "x", "tool_calls": "update"}]"#,
            "`tool_calls` must be an array of calls, found a string",
        ),
        (
            r#"[{"role": "assistant", "content": "x", "tool_calls": ["update"]}]"#,
            "each of `tool_calls` must be an object, found a string",
        ),
        (
            r#"[{"role": "assistant", "function_call": "update"}]"#,
            "`function_call` must be an object",
        ),
        (
            r#"[{"role": "assistant", "content": [{"type": "tool_usee", "id": "t", "name": "x", "input": {}}]}]"#,
            "content block type `tool_usee`",
        ),
        (
            r#"[{"role": "user", "content": 5}]"#,
            "`content` must be a string, an array of content parts, or null; found a number",
        ),
    ];
    for (src, want) in cases {
        let items = read_src(src, &ReadOptions::default());
        assert_eq!(items.len(), 1, "{src}: {items:?}");
        let e = items[0].as_ref().unwrap_err();
        assert!(
            e.starts_with("t:1:2: message 1: ") && e.contains(want),
            "{src}: {e}"
        );
    }
    // What trac reads is read as before: tool_calls, null content, a text block of any type.
    let ok = r#"[{"role": "assistant", "content": null, "tool_calls": [{"id": "1", "function": {"name": "x", "arguments": "{}"}}]}, {"role": "assistant", "content": [{"type": "thinking", "text": "hm"}]}]"#;
    let items = read_src(ok, &ReadOptions::default());
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    assert_eq!(items[0].as_ref().unwrap().tool_calls[0].name, "x");
}

/// From a new-user trial: a text log whose first line starts with `[` is sniffed as a JSON
/// array where its name does not say text (standard input): the error says how to read it.
#[test]
fn a_text_log_taken_for_a_json_array_gets_the_input_format_hint() {
    let items = read_src(
        "[12:01] take knife\n[12:02] look\n",
        &ReadOptions::default(),
    );
    let e = items[0].as_ref().unwrap_err();
    assert!(
        e.starts_with("t:1:2: message 1: ") && e.ends_with("give --input-format text"),
        "{e}"
    );
    // Given as the format, an array's bad element gets no such hint.
    let opts = ReadOptions {
        format: Some(TraceFormat::OpenAi),
        ..ReadOptions::default()
    };
    let items = read_src("[12:01] take knife\n", &opts);
    assert!(
        !items[0].as_ref().unwrap_err().contains("--input-format"),
        "{items:?}"
    );
}

/// A pretty-printed conversation object cut (or broken) inside its `messages`: its complete
/// messages are read, in the conversation's session, then the error; before, every verdict of
/// the document was lost.
#[test]
fn a_cut_conversation_object_keeps_its_complete_messages() {
    let doc = concat!(
        "{\n",
        "  \"id\": \"c1\",\n",
        "  \"messages\": [\n",
        "    {\"role\": \"user\", \"content\": \"m1\"},\n",
        "    {\"role\": \"assistant\", \"content\": \"m2\"},\n",
        "    {\"role\": \"user\", \"content\": \"m3\"},\n",
        "    {\"role\": \"assistant\", \"content\": \"m4\"}\n",
        "  ]\n",
        "}\n",
    );
    let cut = &doc[..doc.find("m4").unwrap()];
    let items = read_src(cut, &ReadOptions::default());
    let ok: Vec<(&str, Option<&str>)> = items
        .iter()
        .filter_map(|i| i.as_ref().ok())
        .map(|e| (e.text(), e.session.as_deref()))
        .collect();
    assert_eq!(
        ok,
        [("m1", Some("c1")), ("m2", Some("c1")), ("m3", Some("c1"))]
    );
    let e = items.last().unwrap().as_ref().unwrap_err();
    assert!(e.starts_with("t:7:"), "{e}");
    // Broken (not cut) after its second message: the first two, then the error.
    let broken = doc.replace("\"content\": \"m3\"", "\"content\": m3");
    let items = read_src(&broken, &ReadOptions::default());
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|i| i.as_ref().ok())
        .map(|e| e.text())
        .collect();
    assert_eq!(texts, ["m1", "m2"]);
    assert!(items.last().unwrap().is_err());
    // The intact document gives all four, as before.
    let items = read_src(doc, &ReadOptions::default());
    assert_eq!(items.iter().filter(|i| i.is_ok()).count(), 4, "{items:?}");
}

#[test]
fn a_message_reader_reads_each_line_as_the_file_reader_does() {
    // `trac gateway` reads each message it logs with `MessageReader`: the events must be the
    // ones `trac audit` reads from the log (tool results linked to earlier calls per session).
    let (_, from_file) = read_all("openai_sessions.jsonl");
    let text = std::fs::read_to_string(fixture("openai_sessions.jsonl")).unwrap();
    let mut reader = trac_runtime::trace::MessageReader::new("log");
    let mut one_by_one = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        one_by_one.extend(reader.read_line(line).unwrap());
    }
    assert_eq!(one_by_one.len(), 8);
    assert_eq!(one_by_one, from_file);
    assert_eq!(one_by_one[4].tool_name.as_deref(), Some("get_user_details"));
    // A bad line is the reader's error, naming its session; the reader reads on.
    let err = reader
        .read_line(r#"{"session": "x", "role": "asistant", "content": "hi"}"#)
        .unwrap_err();
    assert!(err.message.contains("unknown role `asistant`"), "{err}");
    assert_eq!(err.session, Some(Some("x".into())));
    assert!(reader.read_line("{not json").is_err());
    assert!(reader.read_line(r#"{"content": "no role"}"#).is_err());
}
