//! The audit loop of `trac audit`: one file at a time ([`FileAudit::run`]), its sessions each
//! audited by an auditor of one shared [`AuditPlan`], and the files of a run audited one after
//! the other or, with `-j N`, on a rayon pool with their output put back in argument order
//! ([`audit_files`]).
//!
//! Memory: an open session costs its auditor (monitor states, bounded witness windows) and its
//! outcome so far; a session that ends (`"session_end": true`) is finished at once, and the
//! printer keeps of it only what its format writes at the end ([`Printer::keep`]): nothing for
//! text and JSON Lines, packed rows for the summary, the outcome for JSON, SARIF and HTML.

use crate::llm::Labeling;
use crate::report::progress::Progress;
use crate::report::{Kept, Printer, TraceOutcome};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use trac_runtime::audit::{AuditPlan, Auditor, Coverage, VerdictRecord};
use trac_runtime::trace;
use trac_spec::spec::CheckedSpec;

/// Writes a line to `err` with the progress bar hidden; write errors are ignored (as the
/// crate's `eprintln!`).
macro_rules! warn {
    ($progress:expr, $err:expr, $($arg:tt)*) => {{
        $progress.suspend(|| {
            let _ = writeln!($err, $($arg)*);
        })
    }};
}

/// What the audit of every file shares: the plan, the printer, and the checks' inputs.
pub(crate) struct FileAudit<'a> {
    /// Monitors, tables and labeling rules, built once.
    pub plan: &'a AuditPlan,
    /// The report's printer (shared by the workers with `-j N`).
    pub printer: &'a dyn Printer,
    /// How traces are read.
    pub read_options: trace::ReadOptions,
    /// The `--formula` properties, if any (their atoms that never held are warned about).
    pub adhoc: Option<&'a CheckedSpec>,
    /// The propositions the `--spec` files declare.
    pub declared: &'a [&'a str],
    /// Every checked spec (`--formula`s included): labels that meet none of their propositions
    /// are warned about.
    pub specs: &'a [CheckedSpec],
    /// The output is text, not `--summary` (verdicts of a streamed input are printed as
    /// reached).
    pub text: bool,
}

/// How the audit of one file ended.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FileEnd {
    /// Violations found in its traces.
    pub violations: usize,
    /// The file could not be read to its end, or was not audited (exit code 2).
    pub bad_input: bool,
    /// The cross-check engine found a disagreement: the run stops after this file's output,
    /// with exit code 2 (the error is written).
    pub abort: bool,
    /// The most sessions open at once (their auditors and outcomes in memory).
    pub peak_open: usize,
}

/// Records verdicts, after the printer has seen them: with `--format jsonl`, or text output of
/// a streamed trace, they are written at once (and flushed for a streamed input, so a pipe
/// shows verdicts as its events arrive).
fn emit(
    out: &mut dyn Write,
    printer: &dyn Printer,
    recs: Vec<VerdictRecord>,
    o: &mut TraceOutcome,
) {
    if recs.is_empty() {
        return;
    }
    printer.verdicts(out, o, &recs);
    if o.stream {
        let _ = out.flush();
    }
    printer.retain(o, recs);
}

/// One open session of a trace file: its auditor and outcome so far.
struct Session {
    auditor: Auditor,
    outcome: TraceOutcome,
}

/// Finishes one session's audit: its end-of-trace records (unless `error`), steps and end
/// verdicts, and the printer's trace end. Returns the finished outcome and the auditor (to be
/// recycled by [`AuditPlan::reset`](trac_runtime::audit::AuditPlan::reset) or dropped).
fn end_session(
    out: &mut dyn Write,
    printer: &dyn Printer,
    progress: &Progress,
    Session {
        mut auditor,
        mut outcome,
    }: Session,
    error: Option<String>,
    not_audited: bool,
) -> (TraceOutcome, Auditor) {
    outcome.error = error;
    outcome.not_audited = not_audited;
    if outcome.error.is_none() {
        let recs = auditor.end_of_trace();
        emit(out, printer, recs, &mut outcome);
    }
    outcome.steps = auditor.steps();
    outcome.ends = auditor.finish();
    progress.suspend(|| {
        printer.trace_end(out, &outcome);
        if outcome.stream {
            let _ = out.flush();
        }
    });
    (outcome, auditor)
}

/// Removes `session` from the open sessions, if it is open. O(log open sessions).
fn take_session(
    index: &mut rustc_hash::FxHashMap<Option<String>, usize>,
    sessions: &mut BTreeMap<usize, Box<Session>>,
    session: &Option<String>,
) -> Option<Session> {
    let i = index.remove(session)?;
    sessions.remove(&i).map(|s| *s)
}

/// Auditors of ended sessions kept for new ones ([`AuditPlan::reset`] reuses their buffers).
const SPARE_AUDITORS: usize = 16;

/// Why a trace that was read without error was not audited, if it was not: it is empty, no
/// event was understood (warned about on `err`), or no property's propositions can hold on it
/// (their rules read roles, tools, arguments or fields that no step has). When only some
/// properties are so, each is an `error:` line on `err` and the second value is their count
/// (exit code 2). Also warns about ignored JSON fields and `--formula` atoms that never held.
#[allow(clippy::too_many_arguments)]
fn coverage_check(
    err: &mut dyn Write,
    file: &str,
    cov: &Coverage,
    fields_seen: &[String],
    (unknown_fields, field_notes): (&[&str], &FieldNotes),
    adhoc: Option<&CheckedSpec>,
    declared: &[&str],
    (specs, model): (&[CheckedSpec], bool),
) -> (Option<String>, usize) {
    if cov.steps == 0 {
        return (trac_runtime::jsonl::not_audited(file, cov), 0);
    }
    for n in &field_notes.notes {
        let _ = writeln!(err, "note: {file}: {n}");
    }
    for w in &field_notes.warnings {
        let _ = writeln!(err, "warning: {file}: {w}");
    }
    if cov.understood == 0 {
        if cov.with_text == 0 && cov.with_labels == 0 {
            let fields = if fields_seen.is_empty() {
                "none".to_string()
            } else {
                fields_seen.join(", ")
            };
            let _ = writeln!(
                err,
                "warning: no event of {file} had text or labels: fields seen: {fields}"
            );
        } else {
            let _ = writeln!(
                err,
                "warning: no event of {file} had labels, and no --spec has labeling rules to read its text"
            );
        }
        return (trac_runtime::jsonl::not_audited(file, cov), 0);
    }
    if !unknown_fields.is_empty() {
        let _ = writeln!(
            err,
            "warning: {file}: event field(s) ignored: {} (trac reads {})",
            unknown_fields.join(", "),
            trace::KNOWN_FIELDS.join(", ")
        );
    }
    for w in cov.label_warnings(file, specs, model) {
        let _ = writeln!(err, "warning: {w}");
    }
    if let Some(why) = trac_runtime::jsonl::not_audited_for(file, cov, specs, model) {
        return (Some(why), 0);
    }
    let unaudited = cov.unaudited_properties(specs, model);
    for (id, props) in &unaudited {
        let _ = writeln!(
            err,
            "error: {file}: property {id} not audited: its propositions ({}) can never hold on this trace",
            props.join(", ")
        );
    }
    if let Some(adhoc) = adhoc {
        for (id, atom) in cov.never_labeled(adhoc) {
            let base = trac_spec::formula::AtomName::parse(&atom).base;
            if !declared.contains(&base.as_str()) {
                let _ = writeln!(
                    err,
                    "warning: atom `{atom}` of {id} was never labeled in {file}"
                );
            }
        }
    }
    (None, unaudited.len())
}

/// What the reader said about a JSON Lines trace's text fields: aliases read (notes), aliases
/// not read and text-like fields ignored (warnings); see
/// [`trace::TraceReader::field_warnings`].
#[derive(Default)]
struct FieldNotes {
    notes: Vec<String>,
    warnings: Vec<String>,
}

impl FieldNotes {
    /// What `reader` says about the text fields and the chat dialect of the trace it read.
    fn of<R: std::io::BufRead>(reader: &trace::TraceReader<R>) -> FieldNotes {
        FieldNotes {
            notes: reader.alias_notes(),
            warnings: reader
                .field_warnings()
                .into_iter()
                .chain(reader.format_mismatch())
                .collect(),
        }
    }
}

/// A trace error as the audit loop scopes it: its text (`FILE:LINE:COLUMN: ...`), the session
/// it belongs to where known ([`trace::TraceError::session`]: an error of a known session ends
/// only that session; `None`, one of any session or of the labeling pipeline, ends them all),
/// and its line.
#[derive(Clone)]
struct ReadError {
    message: String,
    session: Option<Option<String>>,
    line: Option<usize>,
}

impl From<trace::TraceError> for ReadError {
    fn from(e: trace::TraceError) -> Self {
        ReadError {
            message: e.to_string(),
            line: (e.line > 0).then_some(e.line),
            session: e.session,
        }
    }
}

/// An event to audit (with the labels the pipeline gave it, if any), or the error read instead.
type ReadItem = Result<(trace::Event, Option<trac_runtime::labels::LabelSet>), ReadError>;

/// A trace reader shared between the labeling pipeline (which may read it on another thread)
/// and the audit loop (which reads the fields it met at the end).
struct SharedReader(Arc<Mutex<trace::TraceReader<trace::Input>>>);

impl Iterator for SharedReader {
    type Item = Result<trace::Event, trace::TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        // A poisoned lock means a reader call panicked on another thread: end the trace.
        self.0.lock().ok()?.next()
    }
}

impl FileAudit<'_> {
    /// The warning for `--step-per turn` on trace `file` of `format`, which has no messages to
    /// group into turns (text, JSON Lines): each record is a step whatever the flag.
    fn step_per_warning(&self, file: &str, format: trace::TraceFormat) -> Option<String> {
        (self.read_options.step_per == trace::StepPer::Turn && !format.is_structured()).then(|| {
            format!(
                "warning: {file}: --step-per turn has no effect: a {} trace has no messages, each of its records is a step",
                format.name()
            )
        })
    }

    /// Audits the trace file `path`: one audit per session (a JSON Lines file may interleave
    /// sessions, `session` field; each is a trace of its own, named `FILE#SESSION`). Writes the
    /// report's streamed parts to `out` and messages to `err`, and hands each finished trace to
    /// the printer's [`Printer::keep`] into `kept`. `labeling`: the LLM / `--show-labels`
    /// pipeline, if active (`None` labels with the auditors' own rules).
    ///
    /// Per event: O(1) to find its session (hash of its id, then its open number) plus the
    /// auditor's step. Open sessions are kept by order of first appearance; a session that
    /// ends (`"session_end": true`) is finished at once and its state freed.
    pub fn run(
        &self,
        path: &Path,
        labeling: Option<&Labeling>,
        out: &mut dyn Write,
        err: &mut dyn Write,
        progress: &mut Progress,
        kept: &mut Kept,
    ) -> FileEnd {
        let printer = self.printer;
        let mut end = FileEnd::default();
        let mut file = path.display().to_string();
        // Boxed: a B-tree keeps its values in half-full nodes.
        let mut sessions: BTreeMap<usize, Box<Session>> = Default::default();
        let mut index: rustc_hash::FxHashMap<Option<String>, usize> = Default::default();
        let mut opened = 0usize;
        let mut ended_cov = Coverage::default();
        let mut file_steps = 0;
        let mut file_error: Option<ReadError> = None;
        // Sessions stopped by an error of their own: their later events are skipped.
        let mut failed: rustc_hash::FxHashSet<Option<String>> = Default::default();
        let mut session_errors = 0usize;
        let mut fields_seen = Vec::new();
        let mut unknown_fields = Vec::new();
        let mut field_notes = FieldNotes::default();
        let mut streamed = false;
        let mut stream = false;
        progress.start_file(&file);
        let mut shared_file: Arc<str> = Arc::from(file.as_str());
        let mut spare: Vec<Auditor> = Vec::new();
        let new_session = |file: &Arc<str>,
                           session: Option<&str>,
                           stream: bool,
                           streamed: bool,
                           spare: &mut Vec<Auditor>| {
            let auditor = match spare.pop() {
                Some(mut a) => {
                    self.plan.reset(&mut a);
                    a
                }
                None => self.plan.auditor(),
            };
            let name = trac_runtime::jsonl::session_trace_name(file, session);
            let outcome = TraceOutcome::new(name, Arc::clone(file), stream, streamed);
            Session { auditor, outcome }
        };
        let mut finish = |outcome: TraceOutcome, end: &mut FileEnd, kept: &mut Kept| {
            file_steps += outcome.steps;
            end.violations += outcome.ends.iter().map(|e| e.violations).sum::<usize>();
            printer.keep(outcome, kept);
        };
        match trace::open_with(path, &self.read_options) {
            Err(e) => file_error = Some(e.into()),
            Ok(reader) => {
                file = reader.name().to_string();
                shared_file = Arc::from(file.as_str());
                if let Some(w) = self.step_per_warning(&file, reader.format()) {
                    warn!(progress, err, "{w}");
                }
                stream = reader.is_stream();
                streamed = stream && self.text;
                // The labeling pipeline may read the trace on another thread; the reader is
                // shared so that the fields it met can be read back after the audit.
                let reader = SharedReader(Arc::new(Mutex::new(reader)));
                let shared = Arc::clone(&reader.0);
                let events: Box<dyn Iterator<Item = ReadItem>> = match labeling {
                    Some(l) => Box::new(l.events(&file, reader).map(|r| {
                        r.map_err(|message| ReadError {
                            message,
                            session: None,
                            line: None,
                        })
                    })),
                    None => Box::new(reader.map(|r| r.map(|e| (e, None)).map_err(ReadError::from))),
                };
                for ev in events {
                    let (ev, labels) = match ev {
                        Ok(ev) => ev,
                        Err(e) => {
                            let Some(session) = e.session.clone() else {
                                file_error = Some(e);
                                break;
                            };
                            // An error of one session ends that session only (with its error
                            // record); the others are audited on.
                            // A session stopped by an error has no later errors either: what
                            // follows in it is not audited (its events are skipped below).
                            if !failed.insert(session.clone()) {
                                continue;
                            }
                            session_errors += 1;
                            warn!(progress, err, "error: {}", e.message);
                            let mut sess = take_session(&mut index, &mut sessions, &session)
                                .unwrap_or_else(|| {
                                    // Its first line is the bad one: still a trace, reported.
                                    opened += 1;
                                    let s = session.as_deref();
                                    let mut s =
                                        new_session(&shared_file, s, stream, streamed, &mut spare);
                                    let recs = s.auditor.initial();
                                    emit(out, printer, recs, &mut s.outcome);
                                    s
                                });
                            sess.outcome.error_line = e.line;
                            let (outcome, _) =
                                end_session(out, printer, progress, sess, Some(e.message), false);
                            finish(outcome, &mut end, kept);
                            continue;
                        }
                    };
                    if !failed.is_empty() && failed.contains(&ev.session) {
                        progress.advance(ev.raw.len() + 1);
                        continue;
                    }
                    let marker = ev.is_end_marker();
                    let i = match index.get(&ev.session) {
                        Some(&i) => i,
                        None if marker => continue,
                        None => {
                            let mut sess = new_session(
                                &shared_file,
                                ev.session.as_deref(),
                                stream,
                                streamed,
                                &mut spare,
                            );
                            let recs = sess.auditor.initial();
                            emit(out, printer, recs, &mut sess.outcome);
                            index.insert(ev.session.clone(), opened);
                            sessions.insert(opened, Box::new(sess));
                            end.peak_open = end.peak_open.max(sessions.len());
                            opened += 1;
                            opened - 1
                        }
                    };
                    let Session { auditor, outcome } =
                        &mut **sessions.get_mut(&i).expect("indexed");
                    if !marker {
                        let recs = match labels {
                            Some(l) => auditor.step_labeled(&ev, l),
                            None => auditor.step(&ev),
                        };
                        outcome.lines.push(ev.line);
                        emit(out, printer, recs, outcome);
                        if let Some((id, value, m)) = auditor.mismatch() {
                            let value = value.map(|v| format!(" ({v})")).unwrap_or_default();
                            progress.finish();
                            let _ =
                                writeln!(err, "error: {}: property {id}{value}: {m}", outcome.name);
                            let _ = out.flush();
                            end.abort = true;
                            return end;
                        }
                    }
                    progress.advance(ev.raw.len() + 1);
                    // A session that ended is finished now, unless nothing of it was understood
                    // (then the file's coverage decides at its end, as for open sessions).
                    if ev.ends_session() && auditor.coverage().understood > 0 {
                        index.remove(&ev.session);
                        let sess = *sessions.remove(&i).expect("indexed");
                        ended_cov.merge(sess.auditor.coverage());
                        let (outcome, auditor) =
                            end_session(out, printer, progress, sess, None, false);
                        if spare.len() < SPARE_AUDITORS {
                            spare.push(auditor);
                        }
                        finish(outcome, &mut end, kept);
                    }
                }
                // `try_lock`: after a labeling failure the pipeline's reader thread may still
                // be waiting on a stream; the field warnings are then left out.
                if let Ok(reader) = shared.try_lock() {
                    fields_seen = reader.fields_seen().to_vec();
                    unknown_fields = reader
                        .unknown_fields()
                        .into_iter()
                        .map(str::to_string)
                        .collect();
                    field_notes = FieldNotes::of(&reader);
                };
            }
        }
        if sessions.is_empty() && opened == 0 {
            // An empty or unreadable trace: still one (empty) audit, so step-0 verdicts are
            // reported.
            let mut sess = new_session(&shared_file, None, stream, streamed, &mut spare);
            if file_error.is_none() {
                let recs = sess.auditor.initial();
                emit(out, printer, recs, &mut sess.outcome);
            }
            sessions.insert(0, Box::new(sess));
        }
        let mut unaudited = 0;
        let mut cov = ended_cov;
        for s in sessions.values() {
            cov.merge(s.auditor.coverage());
        }
        // Sessions stopped by their own error are not in `cov`: the others are checked, unless
        // there are none.
        let not_audited = if file_error.is_none() && (session_errors == 0 || cov.steps > 0) {
            let unknown: Vec<&str> = unknown_fields.iter().map(String::as_str).collect();
            let (why, partial) = progress.suspend(|| {
                coverage_check(
                    err,
                    &file,
                    &cov,
                    &fields_seen,
                    (&unknown, &field_notes),
                    self.adhoc,
                    self.declared,
                    (self.specs, labeling.is_some_and(|l| l.uses_model())),
                )
            });
            unaudited = partial;
            why
        } else {
            None
        };
        progress.end_file(path);
        for mut sess in sessions.into_values() {
            sess.outcome.error_line = file_error.as_ref().and_then(|e| e.line);
            let error = file_error
                .as_ref()
                .map(|e| e.message.clone())
                .or_else(|| not_audited.clone());
            let (outcome, _) =
                end_session(out, printer, progress, *sess, error, not_audited.is_some());
            finish(outcome, &mut end, kept);
        }
        if session_errors > 0 {
            end.bad_input = true;
            // Only where other sessions were audited on (a file of one session has none).
            if file_error.is_none() && opened > failed.len() {
                let _ = writeln!(
                    err,
                    "note: each error above stopped its own session of {file}; the other sessions were audited to their end"
                );
            }
        }
        if let Some(e) = &file_error {
            end.bad_input = true;
            warn!(progress, err, "error: {}", e.message);
            if file_steps > 0 {
                let _ = writeln!(
                    err,
                    "note: the {file_steps} step(s) read before the error were audited; their verdicts are reported"
                );
            }
        } else if let Some(e) = &not_audited {
            end.bad_input = true;
            warn!(progress, err, "error: {e}");
        } else if unaudited > 0 {
            end.bad_input = true;
        }
        end
    }
}

/// What the audit of one file left to print, with `-j N`: its report's streamed bytes, its
/// messages, what the printer kept, and how it ended.
struct Buffered {
    out: Vec<u8>,
    err: Vec<u8>,
    kept: Kept,
    end: FileEnd,
}

/// Whether the files of a run may be audited in parallel: every one is a regular file (or
/// cannot be opened: its error is reported in order all the same). Standard input and pipes are
/// read as events arrive and their verdicts printed at once, so a run with one is sequential.
pub(crate) fn parallel_safe(paths: &[PathBuf]) -> bool {
    paths.iter().all(|p| {
        p.as_os_str() != trace::STDIN && std::fs::metadata(p).map_or(true, |m| m.is_file())
    })
}

/// The totals of a run of [`audit_files`].
pub(crate) struct RunEnd {
    /// Violations over every trace.
    pub violations: usize,
    /// Some file could not be read or was not audited.
    pub bad_input: bool,
    /// A cross-check mismatch stopped the run (its error is written).
    pub abort: bool,
}

/// Audits `paths` in order, writing to `out` and standard error; `rebuild` builds the plan of
/// `fa` again (for a worker thread). With `jobs` > 1 (and no
/// labeling pipeline), up to `2 × jobs` files are audited at once on a rayon pool of `jobs`
/// threads, each into its own buffers; their output, messages and kept traces are written in
/// argument order as soon as every earlier file's are, so stdout, stderr and the exit code are
/// byte-identical to a sequential run's (a file's output is held until the files before it are
/// done: memory is bounded by the `2 × jobs` files in flight).
#[allow(clippy::too_many_arguments)]
pub(crate) fn audit_files(
    fa: &FileAudit<'_>,
    rebuild: &(dyn Fn() -> Option<AuditPlan> + Sync),
    paths: &[PathBuf],
    jobs: usize,
    labeling: Option<&Labeling>,
    out: &mut dyn Write,
    progress: &mut Progress,
    kept: &mut Kept,
) -> RunEnd {
    let mut run = RunEnd {
        violations: 0,
        bad_input: false,
        abort: false,
    };
    let add = |end: FileEnd, run: &mut RunEnd| {
        run.violations += end.violations;
        run.bad_input |= end.bad_input;
        run.abort |= end.abort;
    };
    if jobs <= 1 || paths.len() <= 1 || labeling.is_some() {
        for path in paths {
            let end = fa.run(path, labeling, out, &mut std::io::stderr(), progress, kept);
            add(end, &mut run);
            if run.abort {
                break;
            }
        }
        return run;
    }
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(p) => p,
        Err(_) => return audit_files(fa, rebuild, paths, 1, labeling, out, progress, kept),
    };
    let window = 2 * jobs;
    pool.in_place_scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Option<Buffered>)>();
        let (printer, adhoc, declared, specs, text) =
            (fa.printer, fa.adhoc, fa.declared, fa.specs, fa.text);
        let spawn = |i: usize| {
            let tx = tx.clone();
            let path = &paths[i];
            let read_options = fa.read_options;
            s.spawn(move |_| {
                // Every task audits with a plan of its own, built on its thread (the monitors
                // of complete progression are neither `Send` nor `Sync`); the tables come from
                // the compiler's cache, so nothing is compiled twice.
                let Some(plan) = rebuild() else {
                    let _ = tx.send((i, None));
                    return;
                };
                let fa = FileAudit {
                    plan: &plan,
                    printer,
                    read_options,
                    adhoc,
                    declared,
                    specs,
                    text,
                };
                let mut b = Buffered {
                    out: Vec::new(),
                    err: Vec::new(),
                    kept: Kept::default(),
                    end: FileEnd::default(),
                };
                b.end = fa.run(
                    path,
                    None,
                    &mut b.out,
                    &mut b.err,
                    &mut Progress::hidden(),
                    &mut b.kept,
                );
                let _ = tx.send((i, Some(b)));
            });
        };
        let mut spawned = 0;
        while spawned < paths.len().min(window) {
            spawn(spawned);
            spawned += 1;
        }
        let mut done: BTreeMap<usize, Buffered> = BTreeMap::new();
        for (next, path) in paths.iter().enumerate() {
            let b = loop {
                if let Some(b) = done.remove(&next) {
                    break b;
                }
                match rx.recv() {
                    Ok((i, Some(b))) => {
                        done.insert(i, b);
                    }
                    // The plan was built once already: it cannot fail to build again.
                    Ok((_, None)) => panic!("the audit plan could not be rebuilt"),
                    // A worker panicked (its sender dropped without a result).
                    Err(_) => panic!("a worker of the audit of {} failed", path.display()),
                }
            };
            if spawned < paths.len() && !run.abort {
                spawn(spawned);
                spawned += 1;
            }
            progress.start_file(&path.display().to_string());
            progress.suspend(|| {
                let _ = out.write_all(&b.out);
                let _ = std::io::stderr().write_all(&b.err);
            });
            progress.end_file(path);
            if let Err(e) = kept.append(b.kept) {
                let _ = writeln!(
                    std::io::stderr(),
                    "error: the summary's temporary file: {e}"
                );
                run.bad_input = true;
            }
            add(b.end, &mut run);
            if run.abort {
                let _ = out.flush();
                break;
            }
        }
    });
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{json::Json, summary::Summary, text::Text, Context};
    use trac_runtime::audit::AuditOptions;
    use trac_spec::spec::{PropertyDecl, Spec};

    /// The checked spec of `G !(p & r)`, and its audit plan (progression: no compiler needed).
    fn plan() -> (Vec<CheckedSpec>, AuditPlan) {
        let spec = Spec {
            name: "test".into(),
            properties: vec![PropertyDecl {
                id: "f1".into(),
                formula: "G !(p & r)".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let specs = vec![trac_runtime::labeler::check_spec(&spec).unwrap()];
        let opts = AuditOptions {
            engine: trac_runtime::engine::Engine::Progression,
            ..Default::default()
        };
        let plan = AuditPlan::new(&specs, &opts).unwrap();
        (specs, plan)
    }

    /// `n` sessions of 3 events one after the other (the second violates), each ending with a
    /// marker when `ends`.
    fn sessions_file(name: &str, n: usize, ends: bool) -> PathBuf {
        let mut s = String::new();
        for k in 0..n {
            s.push_str(&format!("{{\"session\": \"s{k}\", \"labels\": [\"p\"]}}\n"));
            s.push_str(&format!(
                "{{\"session\": \"s{k}\", \"labels\": [\"p\", \"r\"]}}\n"
            ));
            s.push_str(&format!("{{\"session\": \"s{k}\", \"labels\": [\"q\"]"));
            s.push_str(if ends {
                ", \"session_end\": true}\n"
            } else {
                "}\n"
            });
        }
        let dir = std::env::temp_dir().join(format!("trac-cli-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, s).unwrap();
        p
    }

    /// Audits `path` with `printer`; returns how it ended and what the printer kept.
    fn audit(path: &Path, printer: &dyn Printer, plan: &AuditPlan) -> (FileEnd, Kept, Vec<u8>) {
        let fa = FileAudit {
            plan,
            printer,
            read_options: Default::default(),
            adhoc: None,
            declared: &[],
            specs: &[],
            text: true,
        };
        let (mut out, mut err, mut kept) = (Vec::new(), Vec::new(), Kept::default());
        let end = fa.run(
            path,
            None,
            &mut out,
            &mut err,
            &mut Progress::hidden(),
            &mut kept,
        );
        assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
        (end, kept, out)
    }

    #[test]
    fn ended_sessions_are_freed_and_streaming_printers_keep_no_outcome() {
        let (specs, plan) = plan();
        let cx = || Context::new(&specs, &[], plan.properties(), true, "progression", None);
        let n = 200;
        let ended = sessions_file("ended.jsonl", n, true);
        let open = sessions_file("open.jsonl", n, false);
        let text = Text::new(&cx());
        let jsonl = Json::new(&cx(), true);
        for printer in [&text as &dyn Printer, &jsonl] {
            // With end markers, one session is open at a time; without, all of them until the
            // end of the file. Either way every session is reported, and none is kept.
            let (end, kept, out) = audit(&ended, printer, &plan);
            assert_eq!(end.peak_open, 1);
            assert_eq!(
                (end.violations, kept.traces, kept.outcomes.len()),
                (n, n, 0)
            );
            assert!(!out.is_empty());
            let (end, kept, _) = audit(&open, printer, &plan);
            assert_eq!(end.peak_open, n);
            assert_eq!(
                (end.violations, kept.traces, kept.outcomes.len()),
                (n, n, 0)
            );
        }
        // The JSON document keeps every outcome; the summary only rows.
        let (_, kept, _) = audit(&ended, &Json::new(&cx(), false), &plan);
        assert_eq!(kept.outcomes.len(), n);
        let (_, kept, _) = audit(&ended, &Summary::new(&cx()), &plan);
        assert_eq!((kept.traces, kept.outcomes.len()), (n, 0));
    }
}
