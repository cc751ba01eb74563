//! Inputs found by the fuzz targets (`fuzz/`, issue 21) and by the hand-made large inputs tried
//! with them that made trac-runtime's readers fail, kept as regression tests.

use std::io::Cursor;
use std::time::{Duration, Instant};
use trac_runtime::trace::{ReadOptions, StepPer, TraceFormat, TraceReader};

/// Reads `input` in `format` and `step_per`, returning the number of events and the time taken;
/// fails on any error.
fn read_all(input: &str, format: TraceFormat, step_per: StepPer) -> (usize, Duration) {
    let opts = ReadOptions {
        format: Some(format),
        step_per,
    };
    let t = Instant::now();
    let reader = TraceReader::sniff_with(Cursor::new(input.as_bytes()), "t", None, &opts).unwrap();
    let mut n = 0;
    for ev in reader {
        ev.unwrap();
        n += 1;
    }
    (n, t.elapsed())
}

/// The bound of the reads below: they take 5-15 s each in a debug build on a busy machine; the
/// former quadratic code took minutes (about 10^9 comparisons of session or trace ids).
const BOUND: Duration = Duration::from_secs(40);

/// Trace `trace_openai` per turn, 40,000 one-message sessions (307 s in the fuzz build): each
/// message looked its session's open turn up in a list of every open turn.
#[test]
fn many_chat_sessions_per_turn_are_read_in_linear_time() {
    let n = 100_000;
    let input: String = (0..n)
        .map(|i| format!("{{\"role\":\"user\",\"content\":\"yes\",\"session\":\"s{i}\"}}\n"))
        .collect();
    let (events, took) = read_all(&input, TraceFormat::OpenAi, StepPer::Turn);
    assert_eq!(events, n);
    assert!(took < BOUND, "{n} sessions read in {took:?}");
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

/// Trace `trace_otlp`, one span in each of 40,000 traces (195 s in the fuzz build): each span
/// looked its trace id up in a list of every trace id. Long ids with a common prefix make each
/// of those comparisons cost what it can in a real log.
#[test]
fn many_otlp_traces_are_read_in_linear_time() {
    let n = 50_000;
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
    let (events, took) = read_all(&input.to_string(), TraceFormat::Otlp, StepPer::Message);
    assert!(events >= n, "{events} events of {n} spans");
    assert!(took < BOUND, "{n} traces read in {took:?}");
}
