//! Trace readers: JSON Lines and plain-text logs, errors with positions, format detection.

use std::io::{Cursor, Write};
use std::path::Path;
use trac_runtime::trace::{detect_format, open, Event, TraceError, TraceFormat, TraceReader};

fn read(src: &str, format: TraceFormat) -> Vec<Result<Event, TraceError>> {
    TraceReader::from_reader(Cursor::new(src.as_bytes().to_vec()), "t.jsonl", format).collect()
}

#[test]
fn jsonl_events_fields_and_step_numbering() {
    let src = concat!(
        r#"{"session": "s1", "step": 7, "input": "You see a knife.", "output": "take knife", "labels": ["take(knife)"]}"#,
        "\n\n   \n",
        r#"{"output": "look", "extra": {"ignored": [1, 2]}}"#,
        "\n",
        r#"{"input": "only input"}"#,
    );
    let evs: Vec<Event> = read(src, TraceFormat::Jsonl)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(evs.len(), 3);
    let e = &evs[0];
    assert_eq!(e.session.as_deref(), Some("s1"));
    assert_eq!((e.step, e.declared_step, e.line), (1, Some(7), 1));
    assert_eq!(e.input.as_deref(), Some("You see a knife."));
    assert_eq!(e.text(), "take knife");
    assert_eq!(e.labels, Some(vec!["take(knife)".to_string()]));
    assert!(e.raw.starts_with(r#"{"session": "s1""#));
    assert_eq!(
        (evs[1].step, evs[1].declared_step, evs[1].line),
        (2, None, 4)
    );
    assert_eq!(evs[1].text(), "look");
    assert_eq!(evs[1].labels, None);
    assert_eq!((evs[2].step, evs[2].line), (3, 5));
    assert_eq!(evs[2].text(), "only input");
    assert_eq!(Event::default().text(), "");
}

#[test]
fn jsonl_bad_lines_are_errors_and_reading_goes_on() {
    let src = concat!(
        r#"{"output": "a"}"#,
        "\n",
        r#"{"step": "three", "output": "b"}"#,
        "\n",
        r#"{"output": "c""#,
        "\n",
        r#"{"labels": "p"}"#,
        "\n",
        "[1, 2]\n",
        r#"{"output": "d"}"#,
        "\r\n",
    );
    let items = read(src, TraceFormat::Jsonl);
    assert_eq!(items.len(), 6);
    let msgs: Vec<String> = items
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
        .collect();
    assert_eq!(
        msgs,
        vec![
            r#"t.jsonl:2:16: invalid type: string "three", expected u64"#.to_string(),
            "t.jsonl:3:14: EOF while parsing an object".to_string(),
            r#"t.jsonl:4:14: invalid type: string "p", expected a sequence"#.to_string(),
            "t.jsonl:5:1: expected a JSON object `{...}`".to_string(),
        ]
    );
    let ok: Vec<(usize, usize, String)> = items
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| (e.step, e.line, e.raw.clone()))
        .collect();
    assert_eq!(
        ok,
        vec![
            (1, 1, r#"{"output": "a"}"#.to_string()),
            (2, 6, r#"{"output": "d"}"#.to_string()),
        ]
    );
}

#[test]
fn text_logs_strip_numbering_and_decoration() {
    let src = "1. **DRIVE truck1 from l3 to-l1**  \n\n2.*LOAD package1 into a1 of truck1 at l1\n   \n Step 2: go door to the hallway\r\nStep: 19 Action: PREPARE MEAL: prepare meal\n7. ** **\nlook\n";
    let items = read(src, TraceFormat::Text);
    let got: Vec<String> = items
        .iter()
        .map(|r| match r {
            Ok(e) => format!(
                "{} {:?} {:?} L{}",
                e.step,
                e.declared_step,
                e.text(),
                e.line
            ),
            Err(e) => e.to_string(),
        })
        .collect();
    assert_eq!(
        got,
        vec![
            r#"1 Some(1) "DRIVE truck1 from l3 to-l1" L1"#,
            r#"2 Some(2) "LOAD package1 into a1 of truck1 at l1" L3"#,
            r#"3 Some(2) "go door to the hallway" L5"#,
            r#"4 Some(19) "PREPARE MEAL: prepare meal" L6"#,
            "t.jsonl:7:1: no action left on the line after removing its step number and markdown decoration",
            r#"5 None "look" L8"#,
        ]
    );
    let first = items[0].as_ref().unwrap();
    assert_eq!(first.raw, "1. **DRIVE truck1 from l3 to-l1**  ");
    assert_eq!(first.input, None);
    assert_eq!(
        items[2].as_ref().unwrap().raw,
        " Step 2: go door to the hallway"
    );
}

#[test]
fn invalid_utf8_is_an_error_for_that_line_only() {
    let bytes = b"take knife\nta\xffke\nlook\n".to_vec();
    let items: Vec<_> =
        TraceReader::from_reader(Cursor::new(bytes), "x.txt", TraceFormat::Text).collect();
    assert_eq!(items.len(), 3);
    assert_eq!(
        items[1].as_ref().unwrap_err().to_string(),
        "x.txt:2:3: invalid UTF-8"
    );
    assert_eq!(items[2].as_ref().unwrap().step, 2);
}

#[test]
fn format_detection() {
    assert_eq!(
        detect_format(Path::new("a.jsonl"), "1. look"),
        TraceFormat::Jsonl
    );
    assert_eq!(detect_format(Path::new("a.JSON"), ""), TraceFormat::Jsonl);
    assert_eq!(
        detect_format(Path::new("a.txt"), "  {\"output\": \"x\"}"),
        TraceFormat::Jsonl
    );
    assert_eq!(
        detect_format(Path::new("a.log"), "1. look"),
        TraceFormat::Text
    );
    assert_eq!(detect_format(Path::new("noext"), ""), TraceFormat::Text);
}

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trac-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

#[test]
fn open_sniffs_the_first_non_empty_line() {
    let p = temp_file(
        "log.txt",
        "\n\n{\"output\": \"take knife\"}\n{\"output\": \"look\"}\n",
    );
    let r = open(&p).unwrap();
    assert_eq!(r.format(), TraceFormat::Jsonl);
    let evs: Vec<Event> = r.map(Result::unwrap).collect();
    assert_eq!(
        evs.iter().map(Event::text).collect::<Vec<_>>(),
        ["take knife", "look"]
    );
    assert_eq!(evs[0].line, 3);

    let p = temp_file("log2.txt", "1. take knife\n2. look\n");
    let r = open(&p).unwrap();
    assert_eq!(r.format(), TraceFormat::Text);
    assert!(!r.is_stream(), "a regular file is not a stream");
    assert_eq!(r.count(), 2);

    let missing = p.with_file_name("missing.txt");
    let err = open(&missing).unwrap_err();
    assert_eq!(err.line, 0);
    assert!(
        err.to_string()
            .starts_with(&format!("{}: cannot read trace: ", missing.display())),
        "{err}"
    );
}

/// A reader that hands out at most `chunk` bytes per read, as a pipe does when its writer is
/// slow, and that cannot be rewound.
struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn sniffing_replays_the_lines_it_read_ahead() {
    let src = "\n  \n{\"output\": \"take knife\"}\n{\"output\": \"look\"}\n";
    for chunk in [1, 3, 4096] {
        let r = std::io::BufReader::with_capacity(
            chunk.max(8),
            Trickle {
                data: src.as_bytes(),
                chunk,
            },
        );
        let r = TraceReader::sniff(r, "pipe", None).unwrap();
        assert_eq!(r.format(), TraceFormat::Jsonl, "chunk {chunk}");
        let evs: Vec<(usize, usize, String)> = r
            .map(Result::unwrap)
            .map(|e| (e.step, e.line, e.text().to_string()))
            .collect();
        assert_eq!(
            evs,
            [(1, 3, "take knife".to_string()), (2, 4, "look".to_string())],
            "chunk {chunk}"
        );
    }
    // A text log: its first line is an event too.
    let r = TraceReader::sniff(Cursor::new(b"1. look\n2. take knife".to_vec()), "t", None).unwrap();
    assert_eq!(r.format(), TraceFormat::Text);
    let texts: Vec<String> = r.map(|e| e.unwrap().text().to_string()).collect();
    assert_eq!(texts, ["look", "take knife"]);
    // Empty and blank-only inputs: no event, no error.
    for src in ["", "\n\n  \n"] {
        let r = TraceReader::sniff(Cursor::new(src.as_bytes().to_vec()), "e", None).unwrap();
        assert_eq!(r.count(), 0, "{src:?}");
    }
    // The extension decides without reading: a `.jsonl` text line is an error, not a text event.
    let r = TraceReader::sniff(
        Cursor::new(b"look\n".to_vec()),
        "x.jsonl",
        Some(Path::new("x.jsonl")),
    )
    .unwrap();
    assert_eq!(r.format(), TraceFormat::Jsonl);
    assert!(r.collect::<Vec<_>>()[0].is_err());
}

#[test]
fn jsonl_reader_lists_the_fields_it_ignored() {
    let src = concat!(
        r#"{"role": "user", "content": "hi"}"#,
        "\n",
        r#"{"role": "assistant", "content": "take knife", "output": "x", "meta": {"a": [1]}}"#,
        "\n",
    );
    let mut r = TraceReader::from_reader(
        Cursor::new(src.as_bytes().to_vec()),
        "chat.jsonl",
        TraceFormat::Jsonl,
    );
    let first = r.next().unwrap().unwrap();
    assert_eq!(
        (first.input, first.output, first.labels),
        (None, None, None)
    );
    assert_eq!(r.fields_seen(), ["role", "content"]);
    assert_eq!(r.next().unwrap().unwrap().text(), "x");
    assert!(r.next().is_none());
    assert_eq!(r.fields_seen(), ["role", "content", "output", "meta"]);
    assert_eq!(r.unknown_fields(), ["role", "content", "meta"]);
    // A field given twice is an error, with its position.
    let items = read(r#"{"step": 1, "step": 2}"#, TraceFormat::Jsonl);
    let err = items[0].as_ref().unwrap_err().to_string();
    assert!(err.starts_with("t.jsonl:1:"), "{err}");
    assert!(err.contains("duplicate field `step`"), "{err}");
}

#[test]
fn open_reads_a_named_pipe_once_without_losing_its_first_line() {
    let dir = std::env::temp_dir().join(format!("trac-fifo-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("trace.pipe");
    let _ = std::fs::remove_file(&fifo);
    // mkfifo is in every Unix's base system (coreutils): its absence is a failure, not a skip.
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(
        matches!(made, Ok(s) if s.success()),
        "mkfifo failed: {made:?}"
    );
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        for line in ["1. look", "2. take knife", "3. examine knife"] {
            writeln!(w, "{line}").unwrap();
            w.flush().unwrap();
        }
    });
    let r = open(&fifo).unwrap();
    assert!(r.is_stream());
    assert_eq!(r.format(), TraceFormat::Text);
    let texts: Vec<String> = r.map(|e| e.unwrap().text().to_string()).collect();
    writer.join().unwrap();
    assert_eq!(texts, ["look", "take knife", "examine knife"]);
    let _ = std::fs::remove_file(&fifo);
}

/// A malformed label in `labels` is an error at the label's position in the line (the column of
/// the problem inside it), never kept: it would never equal a proposition and so never hold.
#[test]
fn malformed_labels_are_errors_with_their_column() {
    let cases = [
        // (line, column of the problem, what the message says)
        (
            r#"{"output": "take", "labels": ["take(knife"]}"#,
            36,
            "unclosed `(`",
        ),
        (
            r#"{"labels": ["look", "(knife)"]}"#,
            22,
            "no name before `(`",
        ),
        (
            r#"{"labels": ["take(knife,)"]}"#,
            25,
            "empty value after `,`",
        ),
        (r#"{"labels": ["take,"]}"#, 18, "unexpected `,`"),
        (r#"{"labels": ["take()"]}"#, 19, "empty value"),
        (r#"{"labels": [""]}"#, 14, "empty label"),
        (r#"{"labels": ["take)"]}"#, 18, "`)` without `(`"),
        (r#"{"labels": ["take(knife) x"]}"#, 25, "text after `)`"),
        // Escapes before the problem are counted as written.
        (r#"{"labels": ["\"q\"(x", "y"]}"#, 19, "unclosed `(`"),
    ];
    for (line, col, what) in cases {
        let items = read(line, TraceFormat::Jsonl);
        let e = items[0].as_ref().expect_err(line);
        assert_eq!((e.line, e.column), (1, col), "{line}: {e}");
        assert!(e.message.contains(what), "{line}: {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("t.jsonl:1:{col}: malformed label")),
            "{e}"
        );
    }
    // The reader goes on after the bad line (the audit stops the trace there).
    let items = read(
        "{\"labels\": [\"take(knife\"]}\n{\"labels\": [\"take(knife)\", \"look\"]}\n",
        TraceFormat::Jsonl,
    );
    assert!(items[0].is_err());
    let ev = items[1].as_ref().unwrap();
    assert_eq!(
        ev.labels.as_deref(),
        Some(&["take(knife)".to_string(), "look".to_string()][..])
    );
    // Chat messages with labels: the same check, for the message's line.
    let items = read(
        "{\"role\": \"user\", \"content\": \"hi\", \"labels\": [\"greet(\"]}\n",
        TraceFormat::OpenAi,
    );
    let e = items[0].as_ref().unwrap_err();
    assert_eq!(e.line, 1, "{e}");
    assert!(
        e.message
            .contains("malformed label \"greet(\": unclosed `(`"),
        "{e}"
    );
    let items = read(
        "{\"role\": \"user\", \"content\": \"hi\", \"labels\": [\"ok\", 3]}\n",
        TraceFormat::OpenAi,
    );
    assert!(items[0]
        .as_ref()
        .unwrap_err()
        .message
        .contains("must hold strings"));
}

/// An endless input without a newline (as `/dev/zero`): `byte` forever.
struct Endless(u8);

impl std::io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        buf.fill(self.0);
        Ok(buf.len())
    }
}

#[test]
fn a_line_over_the_limit_is_an_error_at_its_line_and_ends_the_reading() {
    use trac_runtime::trace::ReadOptions;
    let opts = ReadOptions {
        max_line_bytes: 1 << 20,
        ..ReadOptions::default()
    };
    // Sniffed (the first line is the endless one), and with each format given.
    for format in [
        None,
        Some(TraceFormat::Jsonl),
        Some(TraceFormat::Text),
        Some(TraceFormat::OpenAi),
    ] {
        let input = std::io::Read::chain(Cursor::new(b"\n".to_vec()), Endless(0));
        let opts = ReadOptions { format, ..opts };
        let r =
            TraceReader::sniff_with(std::io::BufReader::new(input), "zero", None, &opts).unwrap();
        let items: Vec<_> = r.collect();
        assert_eq!(items.len(), 1, "{format:?}: {items:?}");
        let e = items[0].as_ref().unwrap_err();
        assert_eq!(e.line, 2, "{format:?}");
        assert!(
            e.to_string()
                .starts_with("zero:2: the line is longer than 1048576 bytes"),
            "{format:?}: {e}"
        );
    }
    // Lines before it are read; a pretty-printed document and an array element are bounded too.
    let cases: [(&[u8], u8, TraceFormat, &str); 3] = [
        (
            b"{\"output\": \"a\"}\n",
            b'x',
            TraceFormat::Jsonl,
            "t:2: the line is longer",
        ),
        (
            b"{\"messages\": [\n",
            b' ',
            TraceFormat::OpenAi,
            "t:1:1: the JSON document starting here is longer than 1048576 bytes",
        ),
        (
            b"[{\"role\": \"user\", \"content\": \"hi\"},\n {\"content\": \"",
            b'a',
            TraceFormat::OpenAi,
            "t:2:2: message 2: longer than 1048576 bytes",
        ),
    ];
    for (head, byte, format, want) in cases {
        let input = std::io::Read::chain(Cursor::new(head.to_vec()), Endless(byte));
        let r = TraceReader::from_reader(std::io::BufReader::new(input), "t", format)
            .with_max_line_bytes(1 << 20);
        let items: Vec<_> = r.collect();
        let last = items.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(last.starts_with(want), "{last}");
        assert!(
            items[..items.len() - 1].iter().all(Result::is_ok),
            "{items:?}"
        );
    }
}

#[test]
fn a_bad_jsonl_line_names_its_session_when_it_can() {
    let src = concat!(
        "{\"session\": \"b\", \"output\": \"cut\n",
        "{\"step\": \"three\", \"session\": 7}\n",
        "{\"output\": 1}\n",
        "{\"outp\n",
        "{\"session\": \"c\", \"labels\": [\"take(knife\"]}\n",
    );
    let got: Vec<Option<Option<String>>> = read(src, TraceFormat::Jsonl)
        .into_iter()
        .map(|r| r.unwrap_err().session)
        .collect();
    let s = |v: &str| Some(Some(v.to_string()));
    assert_eq!(got, [s("b"), s("7"), Some(None), None, s("c")]);
}

#[test]
fn jsonl_text_aliases_are_read_and_unread_text_fields_are_named() {
    let src = concat!(
        r#"{"action": "take knife", "input": "You see a knife."}"#,
        "\n",
        r#"{"observation": "A door.", "completion": "open door", "response": "hi"}"#,
        "\n",
        r#"{"output": "look", "action": "examine knife", "text": "notes", "prompt": 3}"#,
        "\n",
    );
    let mut r = TraceReader::from_reader(
        Cursor::new(src.as_bytes().to_vec()),
        "t.jsonl",
        TraceFormat::Jsonl,
    );
    let evs: Vec<Event> = r.by_ref().map(Result::unwrap).collect();
    // `action` is the agent's output, `observation` its input: the action is audited, not
    // only the observation.
    assert_eq!(evs[0].output.as_deref(), Some("take knife"));
    assert_eq!(evs[0].input.as_deref(), Some("You see a knife."));
    assert_eq!(evs[0].text(), "take knife");
    assert_eq!(evs[1].input.as_deref(), Some("A door."));
    assert_eq!(evs[1].output.as_deref(), Some("open door"));
    // The field itself wins over its alias; a non-string alias is no text.
    assert_eq!(evs[2].output.as_deref(), Some("look"));
    assert_eq!(evs[2].input, None);
    assert_eq!(
        r.alias_notes(),
        [
            "field `action` read as `output`",
            "field `completion` read as `output`",
            "field `observation` read as `input`"
        ]
    );
    assert_eq!(
        r.field_warnings(),
        [
            "field `response` was not read: trac read the step's text from `completion` instead (an event has one input and one output)",
            "field `action` was not read: trac read the step's text from `output` instead (an event has one input and one output)",
            "field `text` may hold the step's text, but trac does not read it (it read `input`, `output`, `action`, `completion`, `observation`): rename it `input` (what the agent saw) or `output` (what it did)",
        ]
    );
    // The aliases met as text are not "ignored fields"; `prompt` (a number) and `text` are.
    assert_eq!(r.unknown_fields(), ["text", "prompt"]);
}
