//! Inputs found by the fuzz targets (`fuzz/`, issue 21) and by the hand-made large inputs tried
//! with them that made trac-runtime's readers fail, kept as regression tests.
//!
//! The two large inputs were quadratic to read (a list scanned per message / span); their reads
//! are checked here for what they give, not timed (the project keeps speed in benchmarks, never
//! in timed tests): before the fix, 40,000 sessions took 307 s and 40,000 traces 195 s in the
//! fuzz build, after it 1.1 s and 1.7 s.

use std::io::Cursor;
use trac_runtime::trace::{Event, ReadOptions, StepPer, TraceFormat, TraceReader};

/// Reads `input` in `format` and `step_per`; fails on any error.
fn read_all(input: &str, format: TraceFormat, step_per: StepPer) -> Vec<Event> {
    let opts = ReadOptions {
        format: Some(format),
        step_per,
        ..ReadOptions::default()
    };
    let reader = TraceReader::sniff_with(Cursor::new(input.as_bytes()), "t", None, &opts).unwrap();
    reader.map(|ev| ev.unwrap()).collect()
}

/// Trace `trace_openai` per turn, many one-message sessions (40,000 took 307 s in the fuzz
/// build): each message looked its session's open turn up in a list of every open turn. Each
/// session is one turn, in the order of the sessions.
#[test]
fn many_chat_sessions_per_turn_are_one_turn_each_in_order() {
    let n = 20_000;
    let input: String = (0..n)
        .map(|i| format!("{{\"role\":\"user\",\"content\":\"yes\",\"session\":\"s{i}\"}}\n"))
        .collect();
    let events = read_all(&input, TraceFormat::OpenAi, StepPer::Turn);
    let sessions: Vec<String> = events.into_iter().map(|e| e.session.unwrap()).collect();
    assert_eq!(
        sessions,
        (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>()
    );
}

/// Turns still open at the end of the input come out in the order their sessions first
/// appeared, as before the map (the order of the former list of open turns).
#[test]
fn open_turns_are_flushed_in_order_of_first_message() {
    let input = [
        r#"{"role":"user","content":"a1","session":"a"}"#,
        r#"{"role":"user","content":"b1","session":"b"}"#,
        r#"{"role":"assistant","content":"a2","session":"a"}"#,
        r#"{"role":"user","content":"c1","session":"c"}"#,
        r#"{"role":"user","content":"b3","session":"b"}"#,
    ]
    .join("\n");
    let opts = ReadOptions {
        format: Some(TraceFormat::OpenAi),
        step_per: StepPer::Turn,
        ..ReadOptions::default()
    };
    let reader = TraceReader::sniff_with(Cursor::new(input.as_bytes()), "t", None, &opts).unwrap();
    let turns: Vec<(Option<String>, usize)> = reader
        .map(|e| e.unwrap())
        .map(|e| (e.session, e.line))
        .collect();
    let s = |x: &str| Some(x.to_string());
    // b's first turn ends at line 5 (b3 starts a new one); then, at the end, a (from line 1),
    // b's second turn (line 5) and c (line 4): sessions a, b, c in order of first appearance.
    assert_eq!(
        turns,
        vec![(s("b"), 2), (s("a"), 1), (s("b"), 5), (s("c"), 4)]
    );
}

/// Trace `trace_otlp`, one span in each of many traces (40,000 took 195 s in the fuzz build):
/// each span looked its trace id up in a list of every trace id. Long ids with a common prefix
/// make each of those comparisons cost what it can in a real log.
#[test]
fn many_otlp_traces_are_one_session_each() {
    let n = 10_000;
    let prefix = "0".repeat(300);
    let spans: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "traceId": format!("{prefix}{i}"), "spanId": format!("s{i}"), "name": "chat",
                "startTimeUnixNano": i.to_string(),
                "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                               {"key": "gen_ai.completion.0.content", "value": {"stringValue": "hi"}},
                               {"key": "gen_ai.completion.0.role", "value": {"stringValue": "assistant"}}]
            })
        })
        .collect();
    let input = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
    let events = read_all(&input.to_string(), TraceFormat::Otlp, StepPer::Message);
    assert!(events.len() >= n, "{} events of {n} spans", events.len());
    // Each trace is a session of its own.
    let mut sessions: Vec<String> = events.into_iter().filter_map(|e| e.session).collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), n);
}
