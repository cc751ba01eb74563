//! The audit driver: sessions, end markers, per-session failures, pull and push giving the same
//! records, and the spec-set policy.

use std::io::{Cursor, Write};
use trac_runtime::audit::driver::{audit_file, Checks, Driver, ReaderFacts};
use trac_runtime::audit::sink::{Collect, Notice, ReadFailure};
use trac_runtime::audit::specs::{combine, SpecSetError};
use trac_runtime::audit::{AuditOptions, AuditPlan};
use trac_runtime::trace::{TraceFormat, TraceReader};
use trac_runtime::Verdict;

mod support;

use support::{named_spec as spec, plan};

/// Three interleaved sessions; `a` ends with a marker after its 2nd event, `b` has a bad line
/// (its later events are skipped), `c` runs to the end of the file.
const SESSIONS: &str = r#"{"session": "a", "labels": ["p", "r"]}
{"session": "b", "labels": ["p"]}
{"session": "c", "labels": ["p", "r"]}
{"session": "a", "labels": ["q"], "session_end": true}
{"session": "b", "labels": 3}
{"session": "b", "labels": ["p", "r"]}
{"session": "c", "labels": ["q"]}
"#;

/// `(trace, step, verdict)` of every record, then `(trace, steps, violations, error?)` of every
/// end, in the order they reached the sink.
type Seen = (
    Vec<(String, usize, Verdict)>,
    Vec<(String, usize, usize, bool)>,
);

fn seen(c: &Collect) -> Seen {
    let mut recs = Vec::new();
    let mut ends = Vec::new();
    for t in &c.traces {
        for r in &t.records {
            recs.push((t.name.clone(), r.step, r.verdict));
        }
        let e = t.end.as_ref().unwrap();
        ends.push((t.name.clone(), e.steps, e.violations(), e.error.is_some()));
    }
    (recs, ends)
}

#[test]
fn sessions_end_at_their_marker_and_a_bad_line_ends_only_its_session() {
    let specs = vec![spec("s", &[("f1", "G !(p & r)")])];
    let checks = Checks {
        specs: specs.clone().into(),
        ..Checks::default()
    };
    let mut sink = Collect::default();
    let mut driver = Driver::new(plan(&specs), checks, "f");
    let reader = TraceReader::from_reader(Cursor::new(SESSIONS), "f", TraceFormat::Jsonl);
    driver
        .read(&mut sink, reader.map(|r| Ok((r?, None))))
        .unwrap();
    let end = driver.finish(&mut sink, &ReaderFacts::default());
    let (_, ends) = seen(&sink);
    // In the order they ended: a at its marker (line 4), b at its bad line (line 5; its line 6
    // is skipped), c at the end of the file.
    assert_eq!(
        ends,
        vec![
            ("f#a".to_string(), 2, 1, false),
            ("f#b".to_string(), 1, 0, true),
            ("f#c".to_string(), 2, 1, false),
        ]
    );
    assert_eq!((end.violations, end.traces, end.steps), (2, 3, 5));
    assert!(end.bad_input, "a session's bad line is bad input");
    assert!(end.error.is_none(), "the file itself was read to its end");
    // The failure of b, then the note that the other sessions went on.
    let notices: Vec<String> = sink.notices.iter().map(|n| n.to_string()).collect();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(notices[0].starts_with("error: f:5:"), "{notices:?}");
    assert!(matches!(
        sink.notices[1],
        Notice::OtherSessionsAudited { .. }
    ));
    assert_eq!(end.peak_open, 3);
}

#[test]
fn push_and_pull_give_the_same_records() {
    let specs = vec![spec("s", &[("f1", "G !(p & r)"), ("f2", "G(p -> F q)")])];
    let checks = Checks {
        specs: specs.clone().into(),
        ..Checks::default()
    };
    let dir = std::env::temp_dir().join(format!("trac-driver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sessions.jsonl");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(SESSIONS.as_bytes())
        .unwrap();
    let mut pulled = Collect::default();
    let name = path.display().to_string();
    let end = audit_file(
        plan(&specs),
        checks.clone(),
        &path,
        &Default::default(),
        None,
        &mut pulled,
    );
    assert!(end.mismatch.is_none());
    let mut pushed = Collect::default();
    let mut driver = Driver::new(plan(&specs), checks, &name);
    let reader = TraceReader::from_reader(Cursor::new(SESSIONS), &name, TraceFormat::Jsonl);
    for item in reader {
        match item {
            Ok(ev) => driver.feed(&mut pushed, &ev, None).unwrap(),
            Err(e) => assert!(driver.fail(&mut pushed, ReadFailure::Trace(e))),
        }
    }
    driver.finish(&mut pushed, &ReaderFacts::default());
    assert_eq!(seen(&pulled), seen(&pushed));
    assert!(!seen(&pulled).0.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failure_of_the_file_ends_every_open_session_with_it() {
    let specs = vec![spec("s", &[("f1", "G !(p & r)")])];
    let cut = &SESSIONS[..SESSIONS
        .find("{\"session\": \"a\", \"labels\": [\"q\"]")
        .unwrap()
        + 10];
    let mut sink = Collect::default();
    let mut driver = Driver::new(plan(&specs), Checks::default(), "f");
    let reader = TraceReader::from_reader(Cursor::new(cut), "f", TraceFormat::Jsonl);
    driver
        .read(&mut sink, reader.map(|r| Ok((r?, None))))
        .unwrap();
    let end = driver.finish(&mut sink, &ReaderFacts::default());
    let (_, ends) = seen(&sink);
    assert_eq!(ends.len(), 3);
    assert!(
        ends.iter().all(|e| e.3),
        "every session ends with the error: {ends:?}"
    );
    assert!(end.error.is_some() && end.bad_input);
    let last: Vec<String> = sink.notices.iter().map(|n| n.to_string()).collect();
    assert!(
        last.last()
            .unwrap()
            .contains("the 3 step(s) read before the error were audited"),
        "{last:?}"
    );
}

#[test]
fn an_empty_stream_is_one_trace_not_audited_with_its_step_0_verdicts() {
    let specs = vec![spec("s", &[("f1", "false")])];
    let mut sink = Collect::default();
    let driver: Driver<_> = Driver::new(plan(&specs), Checks::default(), "e");
    let end = driver.finish(&mut sink, &ReaderFacts::default());
    assert_eq!(sink.traces.len(), 1);
    assert_eq!(sink.traces[0].records[0].step, 0);
    assert_eq!(sink.traces[0].records[0].verdict, Verdict::Violated);
    assert!(sink.traces[0].end.as_ref().unwrap().not_audited());
    assert_eq!(
        end.not_audited.as_deref(),
        Some("e: not audited: the trace is empty")
    );
    assert!(end.bad_input);
}

#[test]
fn end_session_ends_an_open_session_at_once() {
    let specs = vec![spec("s", &[("f1", "F q")])];
    let mut sink = Collect::default();
    let mut driver = Driver::new(plan(&specs), Checks::default(), "live");
    let ev = |s: &str, l: &str| trac_runtime::trace::Event {
        session: Some(s.into()),
        labels: Some(vec![l.into()]),
        ..Default::default()
    };
    driver.feed(&mut sink, &ev("x", "p"), None).unwrap();
    driver.feed(&mut sink, &ev("y", "q"), None).unwrap();
    assert_eq!(driver.open_sessions().count(), 2);
    driver.end_session(&mut sink, Some("x"));
    assert_eq!(driver.open_sessions().count(), 1);
    assert_eq!(sink.traces.len(), 1);
    assert_eq!(sink.traces[0].name, "live#x");
    assert!(driver.session(Some("y")).is_some() && driver.session(Some("x")).is_none());
    assert_eq!(driver.steps(), 2);
}

#[test]
fn open_session_reports_step_0_at_once_and_close_session_ends_it_even_unread() {
    let specs = vec![spec("s", &[("f1", "false"), ("f2", "F q")])];
    let mut sink = Collect::default();
    let mut driver = Driver::new(plan(&specs), Checks::default(), "live");
    assert!(driver.open_session(&mut sink, Some("x")));
    assert!(!driver.open_session(&mut sink, Some("x")), "already open");
    // Nothing understood yet: end_session keeps it open for the file's coverage check ...
    driver.end_session(&mut sink, Some("x"));
    assert_eq!(driver.open_sessions().count(), 1);
    // ... close_session ends it now.
    driver.close_session(&mut sink, Some("x"));
    assert_eq!(driver.open_sessions().count(), 0);
    assert_eq!(sink.traces.len(), 1);
    let t = &sink.traces[0];
    assert_eq!(t.name, "live#x");
    assert_eq!(
        t.records
            .iter()
            .map(|r| (r.property.as_str(), r.step, r.verdict))
            .collect::<Vec<_>>(),
        vec![("f1", 0, Verdict::Violated)]
    );
    let end = t.end.as_ref().unwrap();
    assert_eq!((end.steps, end.error.is_none()), (0, true));
}

#[test]
fn a_clone_of_the_driver_commits_nothing_to_the_original() {
    let specs = vec![spec("s", &[("f1", "G !p")])];
    let mut sink = Collect::default();
    let mut driver = Driver::new(plan(&specs), Checks::default(), "live");
    let ev = trac_runtime::trace::Event {
        session: Some("x".into()),
        labels: Some(vec!["p".into()]),
        ..Default::default()
    };
    let mut what_if = driver.clone();
    what_if.feed(&mut sink, &ev, None).unwrap();
    assert_eq!((what_if.steps(), driver.steps()), (1, 0));
    assert!(driver.session(Some("x")).is_none());
    driver.feed(&mut sink, &ev, None).unwrap();
    assert_eq!(driver.steps(), 1);
}

#[test]
fn shared_ids_are_namespaced_and_conflicting_propositions_refused() {
    let mut specs = vec![
        spec("tw", &[("R1", "G !p")]),
        spec("other", &[("R1", "G !q")]),
        spec("cli", &[("R1", "G !r")]),
    ];
    let files = vec![Some("a.ron".to_string()), Some("b.ron".to_string()), None];
    let renamed = combine(&mut specs, &files).unwrap();
    let ids: Vec<&str> = specs
        .iter()
        .map(|s| s.properties[0].decl.id.as_str())
        .collect();
    assert_eq!(ids, vec!["tw/R1", "other/R1", "R1"]);
    assert_eq!(
        renamed[0].to_string(),
        "property id `R1` is declared by several specs: reported as `tw/R1` (a.ron), `other/R1` (b.ron)"
    );
    let mut same = vec![spec("tw", &[("R1", "G !p")]), spec("tw", &[("R1", "G !q")])];
    let errors = combine(&mut same, &files[..2]).unwrap_err();
    assert!(matches!(&errors[0], SpecSetError::DuplicateId { id, .. } if id == "R1"));
    // Namespaced, the plan builds; not namespaced, duplicate ids are refused.
    let progression = AuditOptions {
        engine: trac_runtime::engine::Engine::Progression,
        ..AuditOptions::default()
    };
    assert!(AuditPlan::new(&specs, &progression).is_ok());
    let err = AuditPlan::new(&same, &progression).err().unwrap();
    assert!(err.to_string().contains("duplicate property id"), "{err}");
}

/// Two interleaved sessions: `a` and `b` alternate, so with compaction after one idle event
/// each is compacted while the other reads, and rebuilt at its next event.
const ALTERNATING: &str = r#"{"session": "a", "labels": ["p"]}
{"session": "b", "labels": ["p"]}
{"session": "a", "labels": ["q"]}
{"session": "b", "labels": ["r"]}
{"session": "a", "labels": ["p", "r"]}
{"session": "b", "labels": ["p", "r"]}
{"session": "a", "labels": []}
{"session": "b", "labels": ["q"]}
"#;

/// `(trace, property, step, verdict)` of a record.
type Rec = (String, String, usize, Verdict);

/// Every record as `(trace, property, step, verdict)`, and every end with its properties' end
/// states and the coverage (labels sorted), as text.
fn collected(c: &Collect) -> (Vec<Rec>, Vec<String>) {
    let mut recs = Vec::new();
    let mut ends = Vec::new();
    for t in &c.traces {
        for r in &t.records {
            recs.push((t.name.clone(), r.property.clone(), r.step, r.verdict));
        }
        let e = t.end.as_ref().unwrap();
        let mut labels: Vec<&String> = e.coverage.labels_seen.iter().collect();
        labels.sort();
        let cov = &e.coverage;
        ends.push(format!(
            "{} {} {:?} {:?} {:?}",
            t.name,
            e.steps,
            e.ends,
            (cov.steps, cov.with_labels, cov.understood, cov.with_text),
            labels
        ));
    }
    (recs, ends)
}

/// The audit of `trace` (`G !(p & r)`, `G(p -> X q)`), with `compaction`; witnesses on or
/// off. Returns what the sink saw and how many sessions were full at the last event.
fn alternating(
    trace: &str,
    compaction: Option<trac_runtime::audit::driver::Compaction>,
    witnesses: bool,
) -> (Collect, usize) {
    let specs = vec![spec("s", &[("f1", "G !(p & r)"), ("f2", "G(p -> X q)")])];
    let checks = Checks {
        specs: specs.clone().into(),
        ..Checks::default()
    };
    let mut plan = plan(&specs);
    plan.set_witnesses(witnesses);
    let mut sink = Collect::default();
    let mut driver = Driver::new(plan, checks, "f");
    driver.set_compaction(compaction);
    let reader = TraceReader::from_reader(Cursor::new(trace.to_string()), "f", TraceFormat::Jsonl);
    driver
        .read(&mut sink, reader.map(|r| Ok((r?, None))))
        .unwrap();
    let full = driver.open_sessions().count();
    driver.finish(&mut sink, &ReaderFacts::default());
    (sink, full)
}

#[test]
fn compacted_sessions_give_the_same_records_as_full_ones() {
    let every_event = trac_runtime::audit::driver::Compaction {
        max_full: 0,
        idle_events: 1,
    };
    let (compacted, full) = alternating(ALTERNATING, Some(every_event), false);
    // `a` read the 7th event, `b` the 8th: `a` was compacted by the last sweep.
    assert_eq!(full, 1, "one of the two sessions is compacted at the end");
    let (plain, full) = alternating(ALTERNATING, None, false);
    assert_eq!(full, 2);
    let (recs, ends) = collected(&compacted);
    // Hand-derived: a = {p},{q},{p,r},{}: f1 violated at 3 (p & r), f2 at 4 (p at 3, no q at
    // 4); b = {p},{r},{p,r},{q}: f2 violated at 2 (p at 1, no q at 2), f1 at 3.
    let v = Verdict::Violated;
    let r = |t: &str, p: &str, s| (t.to_string(), p.to_string(), s, v);
    assert_eq!(
        recs,
        vec![
            r("f#a", "f1", 3),
            r("f#a", "f2", 4),
            r("f#b", "f2", 2),
            r("f#b", "f1", 3),
        ]
    );
    assert_eq!((recs, ends), collected(&plain));
    for t in &compacted.traces {
        let e = t.end.as_ref().unwrap();
        assert_eq!((e.steps, e.violations()), (4, 2), "{}", t.name);
        assert_eq!(e.coverage.understood, 4);
    }
    // With witnesses, a monitor that recorded witness entries is not compacted, and the
    // records (witnesses included) are again those of an audit without compaction.
    let (with, _) = alternating(ALTERNATING, Some(every_event), true);
    let (without, _) = alternating(ALTERNATING, None, true);
    let records = |c: &Collect| -> Vec<String> {
        c.traces
            .iter()
            .map(|t| format!("{:?}", t.records))
            .collect()
    };
    assert_eq!(records(&with), records(&without));
    assert_eq!(collected(&with), collected(&without));
}

#[test]
fn a_compacted_session_ends_at_its_marker_as_a_full_one() {
    let every_event = trac_runtime::audit::driver::Compaction {
        max_full: 0,
        idle_events: 1,
    };
    // `a` is compacted after `b`'s last event, then its marker comes: it is rebuilt and ended
    // there (before the file's end), and `b`, compacted at the marker, at the file's end.
    let trace = format!("{ALTERNATING}{{\"session\": \"a\", \"session_end\": true}}\n");
    let (compacted, full) = alternating(&trace, Some(every_event), false);
    assert_eq!(full, 0, "a ended, b compacted");
    let (plain, _) = alternating(&trace, None, false);
    assert_eq!(collected(&compacted), collected(&plain));
    let ends: Vec<(&str, usize, usize)> = compacted
        .traces
        .iter()
        .map(|t| {
            let e = t.end.as_ref().unwrap();
            (t.name.as_str(), e.steps, e.violations())
        })
        .collect();
    // Hand-derived (see `compacted_sessions_give_the_same_records_as_full_ones`).
    assert_eq!(ends, vec![("f#a", 4, 2), ("f#b", 4, 2)]);
}
