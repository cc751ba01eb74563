//! The files of `trac audit`: each audited by the library's driver with the printer as its sink
//! ([`FileAudit::run`]), one after the other or, with `-j N`, on a rayon pool with their output
//! put back in argument order ([`audit_files`]). One file with `-j N`: its sessions on N
//! threads by the library ([`FileAudit::run_sessions_parallel`]).
//!
//! Memory: an open session costs its auditor (monitor states, bounded witness windows; an idle
//! one is compacted to its monitors' run states where it holds nothing else, see
//! `trac_runtime::audit::driver::Compaction`) and its outcome so far; a session that ends (`"session_end": true`) is finished at once, and the
//! printer keeps of it only what its format writes at the end ([`Printer::keep`]): nothing for
//! text and JSON Lines, packed rows for the summary, the outcome for JSON, SARIF and HTML.

use crate::llm::Labeling;
use crate::report::progress::Progress;
use crate::report::{Kept, Printer, TraceOutcome};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use trac_runtime::audit::driver::{audit_file, Checks, Item, LabelStage, SharedReader};
use trac_runtime::audit::sink::{Notice, ReadFailure, Sink, TraceEnd, TraceStart};
use trac_runtime::audit::{audit_file_parallel, AuditPlan, VerdictRecord};
use trac_runtime::trace;

/// What the audit of every file shares: the plan, the printer, and the coverage checks.
pub(crate) struct FileAudit<'a> {
    /// Monitors, tables and labeling rules, built once.
    pub plan: &'a AuditPlan,
    /// The report's printer (shared by the workers with `-j N`).
    pub printer: &'a dyn Printer,
    /// How traces are read.
    pub read_options: trace::ReadOptions,
    /// What a file's coverage is checked against at its end.
    pub checks: &'a Checks,
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
    #[cfg_attr(not(test), allow(dead_code))]
    pub peak_open: usize,
}

/// The printer as a sink of the audit driver: verdicts are handed to the printer as reached
/// (with `--format jsonl`, or text output of a streamed trace, they are written at once, and
/// flushed for a streamed input so a pipe shows verdicts as its events arrive); a finished trace
/// goes to the printer's [`Printer::trace_end`] and [`Printer::keep`]; notices are written to
/// `err` with the progress bar hidden (write errors are ignored, as the crate's `eprintln!`).
struct PrintSink<'a> {
    printer: &'a dyn Printer,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    progress: &'a mut Progress,
    kept: &'a mut Kept,
    text: bool,
    /// The printer reads steps' lines ([`Printer::step_lines`]).
    lines: bool,
}

impl Sink for PrintSink<'_> {
    type Trace = TraceOutcome;

    fn start(&mut self, t: &TraceStart<'_>) -> TraceOutcome {
        TraceOutcome::new(
            t.name.to_string(),
            Arc::clone(t.file),
            t.stream,
            t.stream && self.text,
        )
    }

    fn step(&mut self, o: &mut TraceOutcome, event: &trace::Event) {
        if self.lines {
            o.lines.push(event.line);
        }
    }

    fn verdicts(&mut self, o: &mut TraceOutcome, recs: Vec<VerdictRecord>) {
        if recs.is_empty() {
            return;
        }
        self.printer.verdicts(self.out, o, &recs);
        if o.stream {
            let _ = self.out.flush();
        }
        self.printer.retain(o, recs);
    }

    fn end(&mut self, mut o: TraceOutcome, end: TraceEnd) {
        o.not_audited = end.not_audited();
        o.error = end.error.as_ref().map(|e| e.to_string());
        o.error_line = end.error_line;
        o.steps = end.steps;
        o.ends = end.ends;
        let (printer, out) = (self.printer, &mut *self.out);
        self.progress.suspend(|| {
            printer.trace_end(out, &o);
            if o.stream {
                let _ = out.flush();
            }
        });
        self.printer.keep(o, self.kept);
    }

    fn notice(&mut self, notice: Notice) {
        let err = &mut *self.err;
        self.progress.suspend(|| {
            let _ = writeln!(err, "{notice}");
        });
    }

    fn consumed(&mut self, bytes: usize) {
        self.progress.advance(bytes);
    }
}

/// The LLM / `--show-labels` pipeline as the driver's labeling stage. Its failures (a trace
/// error included) end the file.
impl LabelStage for Labeling {
    fn events(&self, file: &str, reader: SharedReader) -> Box<dyn Iterator<Item = Item> + '_> {
        Box::new(
            Labeling::events(self, file, reader)
                .map(|r| r.map_err(|message| ReadFailure::Labeling(message.into()))),
        )
    }

    fn uses_model(&self) -> bool {
        Labeling::uses_model(self)
    }
}

impl FileAudit<'_> {
    /// The printer as the driver's sink, writing to `out` and `err`.
    fn sink<'s>(
        &'s self,
        out: &'s mut dyn Write,
        err: &'s mut dyn Write,
        progress: &'s mut Progress,
        kept: &'s mut Kept,
    ) -> PrintSink<'s> {
        PrintSink {
            printer: self.printer,
            out,
            err,
            progress,
            kept,
            text: self.text,
            lines: self.printer.step_lines(),
        }
    }

    /// Audits the trace file `path` with the library's driver
    /// ([`trac_runtime::audit::driver::audit_file`]: one trace per session, named
    /// `FILE#SESSION`). Writes the report's streamed parts to `out` and messages to `err`, and
    /// hands each finished trace to the printer's [`Printer::keep`] into `kept`. `labeling`: the
    /// LLM / `--show-labels` pipeline, if active (`None` labels with the auditors' own rules).
    pub fn run(
        &self,
        path: &Path,
        labeling: Option<&Labeling>,
        out: &mut dyn Write,
        err: &mut dyn Write,
        progress: &mut Progress,
        kept: &mut Kept,
    ) -> FileEnd {
        progress.start_file(&path.display().to_string());
        let checks = Checks {
            model: labeling.is_some_and(|l| l.uses_model()),
            ..self.checks.clone()
        };
        let mut sink = self.sink(out, err, progress, kept);
        let stage = labeling.map(|l| l as &dyn LabelStage);
        let end = audit_file(
            self.plan.clone(),
            checks,
            path,
            &self.read_options,
            stage,
            &mut sink,
        );
        sink.file_end(path, &end)
    }

    /// Audits the one trace file `path` as [`FileAudit::run`] does (no labeling pipeline), its
    /// sessions spread over `jobs` threads by the library
    /// ([`trac_runtime::audit::audit_file_parallel`]); the output is [`FileAudit::run`]'s, byte
    /// for byte. `rebuild` builds the plan on each worker thread.
    #[allow(clippy::too_many_arguments)]
    pub fn run_sessions_parallel(
        &self,
        rebuild: &(dyn Fn() -> Option<AuditPlan> + Sync),
        jobs: usize,
        path: &Path,
        out: &mut dyn Write,
        err: &mut dyn Write,
        progress: &mut Progress,
        kept: &mut Kept,
    ) -> FileEnd {
        progress.start_file(&path.display().to_string());
        let mut sink = self.sink(out, err, progress, kept);
        let checks = self.checks.clone();
        match audit_file_parallel(rebuild, checks, path, &self.read_options, jobs, &mut sink) {
            Ok(end) => sink.file_end(path, &end),
            Err(e) => {
                let _ = writeln!(sink.err, "error: {}: {e}", path.display());
                FileEnd {
                    bad_input: true,
                    abort: true,
                    ..FileEnd::default()
                }
            }
        }
    }
}

impl PrintSink<'_> {
    /// After the audit of `path`: the cross-check mismatch that stopped it, if any, or the
    /// progress bar's end of the file; how the file ended.
    fn file_end(self, path: &Path, end: &trac_runtime::audit::FileEnd) -> FileEnd {
        let PrintSink {
            out, err, progress, ..
        } = self;
        if let Some(m) = &end.mismatch {
            progress.finish();
            let _ = writeln!(err, "error: {m}");
            let _ = out.flush();
        } else {
            progress.end_file(path);
        }
        FileEnd {
            violations: end.violations,
            bad_input: end.bad_input,
            abort: end.mismatch.is_some(),
            peak_open: end.peak_open,
        }
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
/// `fa` again (for a worker thread). With one path and `session_jobs` > 1 (and no labeling
/// pipeline), its sessions are audited on `session_jobs` threads
/// ([`FileAudit::run_sessions_parallel`]). With `jobs` > 1 (and no
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
    session_jobs: usize,
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
    // One file: its sessions on `session_jobs` threads (the library falls back to one for a
    // pipe).
    if session_jobs > 1 && paths.len() == 1 && labeling.is_none() {
        let end = fa.run_sessions_parallel(
            rebuild,
            session_jobs,
            &paths[0],
            out,
            &mut std::io::stderr(),
            progress,
            kept,
        );
        add(end, &mut run);
        return run;
    }
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
        Err(_) => return audit_files(fa, rebuild, paths, 1, 1, labeling, out, progress, kept),
    };
    let window = 2 * jobs;
    pool.in_place_scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Option<Buffered>)>();
        let (printer, checks, text) = (fa.printer, fa.checks, fa.text);
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
                    checks,
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
    use trac_spec::spec::{CheckedSpec, Spec};

    /// The checked spec of `G !(p & r)`, and its audit plan (progression: no compiler needed).
    fn plan() -> (Vec<CheckedSpec>, AuditPlan) {
        let spec = Spec::from_formulas("test", [("f1", "G !(p & r)")]);
        let specs = vec![trac_runtime::label::labeler::check_spec(&spec).unwrap()];
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
            checks: &Checks::default(),
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
