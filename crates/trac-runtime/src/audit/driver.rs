//! The one audit loop of trac: events in, per session, verdicts out to a [`Sink`].
//!
//! [`Driver`] owns everything between a trace reader and a report: splitting a file's events
//! into sessions (the `session` field; each session is a trace of its own, `FILE#SESSION`),
//! `"session_end": true` markers, recycled auditors, step-0 verdicts, end-of-trace verdicts,
//! coverage and "not audited", the order of end records, and per-session failures (a failure of
//! one session ends that session only). The CLI's printers, the Python package and `trac run`
//! are sinks of this one driver, so they cannot drift apart.
//!
//! Two ways in:
//! - **pull**: [`audit_file`] opens a trace file (any format [`trace::open_with`] reads), passes
//!   it through an optional [`LabelStage`] (an LLM labeler) and drives it to its end;
//!   [`Driver::read`] drives any iterator of events.
//! - **push**, for online monitoring: [`Driver::feed`] one event at a time (its verdicts go to
//!   the sink at once), [`Driver::end_session`] when a session is over, [`Driver::finish`] at
//!   the end.
//!
//! Cost per event: O(1) to find its session (a hash of its id, then its open number) plus the
//! auditor's step. Memory: the open sessions' auditors and what the sink keeps of them; an ended
//! session's auditor is recycled ([`AuditPlan::reset`]) for a later session. With
//! [`Driver::set_compaction`] (on in [`audit_file`]), idle sessions keep only their monitors'
//! run states ([`Compaction`]).

use crate::audit::auditor::Auditor;
use crate::audit::compact::{Compact, LabelIds};
use crate::audit::coverage::Coverage;
use crate::audit::jsonl;
use crate::audit::plan::AuditPlan;
use crate::audit::sink::{EndError, Level, Notice, ReadFailure, Sink, TraceEnd, TraceStart};
use crate::engine::crosscheck::Mismatch;
use crate::trace::{self, Event, TraceReader};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;
use std::sync::{Arc, Mutex};
use trac_core::labels::LabelSet;
use trac_spec::spec::CheckedSpec;

/// What the driver checks a file's coverage against when it ends: which specs could have read
/// it. Cheap to clone (shared behind `Arc`s).
#[derive(Clone, Debug, Default)]
pub struct Checks {
    /// Every checked spec audited (`--formula` properties included): a file on which no
    /// property's propositions can hold is not audited; one on which some cannot, names them.
    pub specs: Arc<[CheckedSpec]>,
    /// Steps are labeled by a model (which reads every step), not only by the specs' rules.
    pub model: bool,
    /// The `--formula` properties, if any: their atoms that no spec declares and that never held
    /// are warned about.
    pub adhoc: Option<Arc<CheckedSpec>>,
    /// The propositions the spec files declare.
    pub declared: Arc<[String]>,
}

/// The cross-check engine found a step where its engines differ: the audit stops there.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{trace}: property {property}{}: {mismatch}", value.as_ref().map(|v| format!(" ({v})")).unwrap_or_default())]
pub struct CrossCheckFailure {
    /// The trace (session) it happened in.
    pub trace: String,
    /// The property's id.
    pub property: String,
    /// The parameter value of a parametric instance.
    pub value: Option<String>,
    /// What differed (boxed: it carries both engines' witnesses).
    #[source]
    pub mismatch: Box<Mismatch>,
}

/// How the audit of one file ended.
#[derive(Clone, Debug, Default)]
pub struct FileEnd {
    /// Violations over its traces.
    pub violations: usize,
    /// Steps read over its traces.
    pub steps: usize,
    /// Traces (sessions) audited.
    pub traces: usize,
    /// The file could not be read to its end, or was (partly) not audited: exit code 2.
    pub bad_input: bool,
    /// The failure that stopped reading the file, if any.
    pub error: Option<Arc<ReadFailure>>,
    /// The failures that each ended one session (the others read on), in order.
    pub session_failures: Vec<Arc<ReadFailure>>,
    /// Why the file, read without error, was not audited, if it was not.
    pub not_audited: Option<String>,
    /// The cross-check engine stopped the audit (no end records were given for open sessions).
    pub mismatch: Option<CrossCheckFailure>,
    /// The most sessions open at once.
    pub peak_open: usize,
    /// Event fields trac does not read, in order of first appearance (from the reader).
    pub unknown_fields: Vec<String>,
}

/// What a reader said about the file it read, for the end-of-file checks.
#[derive(Clone, Debug, Default)]
pub struct ReaderFacts {
    /// The event fields met, in order of first appearance.
    pub fields_seen: Vec<String>,
    /// Those trac does not read.
    pub unknown_fields: Vec<String>,
    /// Notes (text-field aliases read).
    pub notes: Vec<String>,
    /// Warnings (aliases not read, text-like fields ignored, a chat dialect mismatch).
    pub warnings: Vec<String>,
}

impl ReaderFacts {
    /// What `reader` says about the fields and the chat dialect of the trace it read.
    pub fn of<R: BufRead>(reader: &TraceReader<R>) -> ReaderFacts {
        ReaderFacts {
            fields_seen: reader.fields_seen().to_vec(),
            unknown_fields: reader
                .unknown_fields()
                .into_iter()
                .map(str::to_string)
                .collect(),
            notes: reader.alias_notes(),
            warnings: reader
                .field_warnings()
                .into_iter()
                .chain(reader.format_mismatch())
                .collect(),
        }
    }
}

/// An event to audit, with the labels a labeling stage gave it (`None`: the specs' rules label
/// it), or the failure read instead.
pub type Item = Result<(Event, Option<LabelSet>), ReadFailure>;

/// A trace reader shared between a labeling stage (which may read it on another thread) and
/// the driver (which reads the fields it met at the end).
pub struct SharedReader(Arc<Mutex<TraceReader<trace::Input>>>);

impl Iterator for SharedReader {
    type Item = Result<Event, trace::TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        // A poisoned lock means a reader call panicked on another thread: end the trace.
        self.0.lock().ok()?.next()
    }
}

/// A labeling stage between the reader and the driver: an LLM labeler labeling steps
/// concurrently, or a printer of labels.
pub trait LabelStage {
    /// The events of trace `file` read by `reader`, with their labels when computed here, in
    /// step order; a step that cannot be labeled ends the stream with
    /// [`ReadFailure::Labeling`].
    fn events(&self, file: &str, reader: SharedReader) -> Box<dyn Iterator<Item = Item> + '_>;

    /// Whether a model labels the steps (it reads every step, so no property is "not audited"
    /// for want of rules that read them).
    fn uses_model(&self) -> bool;
}

/// One open session: its auditor (full, or compacted while idle) and what the sink keeps of it.
#[derive(Clone)]
struct Open<T> {
    name: String,
    auditor: Slot,
    trace: T,
    /// The driver's count of events when this session last read one (for compaction).
    last: usize,
}

/// An open session's auditor: full (boxed: an open session's box is sized by the compact one),
/// or compacted ([`Compact`]).
#[derive(Clone)]
enum Slot {
    Full(Box<Auditor>),
    Compact(Compact),
}

impl Slot {
    /// Steps read.
    fn steps(&self) -> usize {
        match self {
            Slot::Full(a) => a.steps(),
            Slot::Compact(c) => c.steps(),
        }
    }

    /// Steps understood.
    fn understood(&self) -> usize {
        match self {
            Slot::Full(a) => a.coverage().understood,
            Slot::Compact(c) => c.understood(),
        }
    }

    /// Adds the session's coverage to `cov`.
    fn merge_coverage(&self, cov: &mut Coverage, labels: &LabelIds) {
        match self {
            Slot::Full(a) => cov.merge(a.coverage()),
            Slot::Compact(c) => c.merge_coverage(cov, labels),
        }
    }

    /// The full auditor, rebuilt from `spare` (or `plan`) if compacted; `rebuilt` says whether
    /// it was.
    fn full<'a>(
        &'a mut self,
        plan: &AuditPlan,
        spare: &mut Spares,
        labels: &LabelIds,
    ) -> (&'a mut Auditor, bool) {
        let rebuilt = if let Slot::Compact(c) = self {
            let mut a = fresh(plan, spare);
            a.restore(c, labels);
            *self = Slot::Full(a);
            true
        } else {
            false
        };
        match self {
            Slot::Full(a) => (a, rebuilt),
            Slot::Compact(_) => unreachable!("made full above"),
        }
    }
}

/// A fresh auditor of `plan`: a recycled one from `spare`, or a new one.
fn fresh(plan: &AuditPlan, spare: &mut Spares) -> Box<Auditor> {
    match spare.pop() {
        Some(mut a) => {
            plan.reset(&mut a);
            a
        }
        None => Box::new(plan.auditor()),
    }
}

/// Auditors of ended sessions kept for new ones ([`AuditPlan::reset`] reuses their buffers).
const SPARE_AUDITORS: usize = 16;

/// Spare auditors, boxed as [`Slot::Full`] holds them: a box moves between a session and the
/// spares without copying the auditor or allocating.
#[allow(clippy::vec_box)]
type Spares = Vec<Box<Auditor>>;

/// When a [`Driver`] compacts idle sessions ([`Driver::set_compaction`]): once `max_full`
/// sessions hold a full auditor, the sessions that read no event of the last
/// `idle_events` events are compacted to their monitors' run states ([`Compact`]; ≈ 250 bytes
/// for three properties instead of ≈ 2 KB), and rebuilt when their next event comes or at
/// their end, with the same records, end states and coverage. Sessions whose auditor holds more
/// than run states (witness entries, past-time state, parametric or progression monitors,
/// derived atoms) stay full. At most `idle_events` sessions are busy at a time, so a sweep
/// leaves at most that many full ones that could be compacted; sweeps cost O(full sessions)
/// each and their thresholds double, so O(1) per event amortized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compaction {
    /// Full auditors from which on idle sessions are compacted.
    pub max_full: usize,
    /// A session that read none of the last `idle_events` events is idle.
    pub idle_events: usize,
}

impl Default for Compaction {
    /// 4,096 full auditors (≈ 8 MB with three properties), idle after 4,096 events.
    fn default() -> Self {
        Compaction {
            max_full: 4096,
            idle_events: 4096,
        }
    }
}

/// The audit of one file (or one stream of events) against one [`AuditPlan`], split by session.
/// `T` is the sink's [`Sink::Trace`]. A clone is an independent copy of every open session
/// (what-if runs on it commit nothing to the original).
#[derive(Clone)]
pub struct Driver<T> {
    plan: AuditPlan,
    checks: Checks,
    file: Arc<str>,
    stream: bool,
    /// Open sessions by order of first appearance (boxed: a B-tree keeps its values in
    /// half-full nodes).
    sessions: BTreeMap<usize, Box<Open<T>>>,
    index: FxHashMap<Option<String>, usize>,
    opened: usize,
    /// Coverage of the sessions that ended.
    ended_cov: Coverage,
    /// Sessions stopped by a failure of their own: their later events are skipped.
    failed: FxHashSet<Option<String>>,
    spare: Spares,
    /// The failure that stopped the file.
    file_error: Option<Arc<ReadFailure>>,
    end: FileEnd,
    /// Idle sessions are compacted (`None`: never).
    compaction: Option<Compaction>,
    /// The numbering of the labels of compacted sessions.
    labels: LabelIds,
    /// Events fed so far (the clock of idleness).
    ticks: usize,
    /// The open numbers of sessions made full since the last sweep or left full by it (some
    /// may have ended since).
    full: Vec<usize>,
    /// The length of `full` that starts the next sweep.
    sweep_at: usize,
}

impl<T> Driver<T> {
    /// A driver of the events of trace `file` (its name in reports), with `plan`'s monitors.
    pub fn new(plan: AuditPlan, checks: Checks, file: &str) -> Driver<T> {
        Driver {
            plan,
            checks,
            file: Arc::from(file),
            stream: false,
            sessions: BTreeMap::new(),
            index: FxHashMap::default(),
            opened: 0,
            ended_cov: Coverage::default(),
            failed: FxHashSet::default(),
            spare: Vec::new(),
            file_error: None,
            end: FileEnd::default(),
            compaction: None,
            labels: LabelIds::default(),
            ticks: 0,
            full: Vec::new(),
            sweep_at: 0,
        }
    }

    /// Compacts idle sessions as `compaction` says (`None`, the default of [`Driver::new`]:
    /// never; [`audit_file`] uses [`Compaction::default`]). Reports are the same either way;
    /// [`Driver::open_sessions`] and [`Driver::session`] see only the sessions not compacted.
    pub fn set_compaction(&mut self, compaction: Option<Compaction>) {
        self.compaction = compaction;
        self.sweep_at = compaction.map_or(0, |c| c.max_full);
    }

    /// Compacts the idle sessions when more than the threshold hold full auditors (see
    /// [`Compaction`]).
    fn sweep(&mut self) {
        let Some(c) = self.compaction else { return };
        if self.full.len() < self.sweep_at {
            return;
        }
        let mut kept = Vec::new();
        for i in std::mem::take(&mut self.full) {
            let Some(s) = self.sessions.get_mut(&i) else {
                continue;
            };
            let Slot::Full(a) = &s.auditor else { continue };
            let compacted = if s.last + c.idle_events <= self.ticks {
                a.compact(&mut self.labels)
            } else {
                None
            };
            match compacted {
                Some(compact) => {
                    if let Slot::Full(a) = std::mem::replace(&mut s.auditor, Slot::Compact(compact))
                    {
                        if self.spare.len() < SPARE_AUDITORS {
                            self.spare.push(a);
                        }
                    }
                }
                None => kept.push(i),
            }
        }
        self.sweep_at = 2 * c.max_full.max(kept.len());
        self.full = kept;
    }

    /// Names the file as its reader does (`<stdin>` for standard input) and says whether it is a
    /// stream. Call before the first event.
    pub fn set_source(&mut self, name: &str, stream: bool) {
        self.file = Arc::from(name);
        self.stream = stream;
    }

    /// The file's name in reports.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Steps read so far, over every session.
    pub fn steps(&self) -> usize {
        self.end.steps
            + self
                .sessions
                .values()
                .map(|s| s.auditor.steps())
                .sum::<usize>()
    }

    /// The open sessions, in order of first appearance: their trace names and auditors (the
    /// residuals of their monitors, a supervisor's look-ahead). Sessions compacted while idle
    /// ([`Driver::set_compaction`]) are left out.
    pub fn open_sessions(&self) -> impl Iterator<Item = (&str, &Auditor)> {
        self.sessions.values().filter_map(|s| match &s.auditor {
            Slot::Full(a) => Some((s.name.as_str(), &**a)),
            Slot::Compact(_) => None,
        })
    }

    /// The auditor of open session `session`, if it is open (and not compacted while idle).
    pub fn session(&self, session: Option<&str>) -> Option<&Auditor> {
        let i = self.index.get(&session.map(str::to_string))?;
        match &self.sessions.get(i)?.auditor {
            Slot::Full(a) => Some(a),
            Slot::Compact(_) => None,
        }
    }

    /// Opens session `key`: a fresh (or recycled) auditor, the sink's trace, its step-0
    /// verdicts.
    fn open<S: Sink<Trace = T>>(&mut self, sink: &mut S, key: Option<&str>) -> Open<T> {
        let auditor = fresh(&self.plan, &mut self.spare);
        let name = jsonl::session_trace_name(&self.file, key);
        let trace = sink.start(&TraceStart {
            name: &name,
            file: &self.file,
            session: key,
            stream: self.stream,
        });
        Open {
            name,
            auditor: Slot::Full(auditor),
            trace,
            last: self.ticks,
        }
    }

    /// Opens session `session` now, if it is not open yet (push): its step-0 verdicts go to the
    /// sink before any event of it, as an online monitor reports them when a session starts.
    /// Returns whether it was opened by this call (`false`: already open, or stopped by its own
    /// failure).
    pub fn open_session<S: Sink<Trace = T>>(
        &mut self,
        sink: &mut S,
        session: Option<&str>,
    ) -> bool {
        let key = session.map(str::to_string);
        if self.index.contains_key(&key) || self.failed.contains(&key) {
            return false;
        }
        self.open_indexed(sink, &key);
        true
    }

    /// Opens session `key` with its step-0 verdicts and indexes it; returns its open number.
    fn open_indexed<S: Sink<Trace = T>>(&mut self, sink: &mut S, key: &Option<String>) -> usize {
        let mut s = self.open(sink, key.as_deref());
        let (auditor, _) = s.auditor.full(&self.plan, &mut self.spare, &self.labels);
        let recs = auditor.initial();
        sink.verdicts(&mut s.trace, recs);
        let i = self.opened;
        self.index.insert(key.clone(), i);
        self.sessions.insert(i, Box::new(s));
        if self.compaction.is_some() {
            self.full.push(i);
        }
        self.end.peak_open = self.end.peak_open.max(self.sessions.len());
        self.opened += 1;
        i
    }

    /// Ends one session: its end-of-trace verdicts (unless `error`), then the sink's
    /// [`Sink::end`]. Returns its auditor (to be recycled).
    fn close<S: Sink<Trace = T>>(
        &mut self,
        sink: &mut S,
        s: Open<T>,
        error: Option<EndError>,
        error_line: Option<usize>,
    ) -> Box<Auditor> {
        let Open {
            auditor: mut slot,
            mut trace,
            ..
        } = s;
        slot.full(&self.plan, &mut self.spare, &self.labels);
        let Slot::Full(mut auditor) = slot else {
            unreachable!("made full above")
        };
        if error.is_none() {
            let recs = auditor.end_of_trace();
            if !recs.is_empty() {
                sink.verdicts(&mut trace, recs);
            }
        }
        let end = TraceEnd {
            steps: auditor.steps(),
            ends: auditor.finish(),
            error,
            error_line,
            // Taken, not cloned: a recycled auditor's coverage is reset from the plan.
            coverage: std::mem::take(&mut auditor.coverage),
        };
        self.end.steps += end.steps;
        self.end.violations += end.violations();
        self.end.traces += 1;
        sink.end(trace, end);
        auditor
    }

    /// Audits one event of session `event.session` (push). A new session gets its own auditor,
    /// whose step-0 verdicts come first; an end marker (`"session_end": true`) or an event that
    /// ends its session finishes it now, unless nothing of it was understood (then the file's
    /// coverage decides at [`Driver::finish`]). `labels`: the labels a labeling stage gave the
    /// step (`None`: the specs' rules label it). Events of a session stopped by its own failure
    /// are skipped.
    ///
    /// # Errors
    /// [`CrossCheckFailure`] at the first step where the cross-check engines differ: the audit
    /// stops there (call nothing but [`Driver::abort`] after it).
    pub fn feed<S: Sink<Trace = T>>(
        &mut self,
        sink: &mut S,
        event: &Event,
        labels: Option<LabelSet>,
    ) -> Result<(), CrossCheckFailure> {
        if !self.failed.is_empty() && self.failed.contains(&event.session) {
            sink.consumed(event.raw.len() + 1);
            return Ok(());
        }
        let marker = event.is_end_marker();
        let i = match self.index.get(&event.session) {
            Some(&i) => i,
            // A marker of a session never opened (or already ended): nothing to end.
            None if marker => return Ok(()),
            None => self.open_indexed(sink, &event.session),
        };
        self.ticks += 1;
        let s = &mut **self.sessions.get_mut(&i).expect("indexed");
        s.last = self.ticks;
        let (auditor, rebuilt) = s.auditor.full(&self.plan, &mut self.spare, &self.labels);
        if rebuilt {
            self.full.push(i);
        }
        if !marker {
            let recs = match labels {
                Some(l) => auditor.step_labeled(event, l),
                None => auditor.step(event),
            };
            sink.step(&mut s.trace, event);
            sink.verdicts(&mut s.trace, recs);
            if let Some((property, value, mismatch)) = auditor.mismatch() {
                return Err(CrossCheckFailure {
                    trace: s.name.clone(),
                    property,
                    value,
                    mismatch: Box::new(mismatch),
                });
            }
        }
        sink.consumed(event.raw.len() + 1);
        if event.ends_session() && auditor.coverage().understood > 0 {
            self.end_open(sink, &event.session, i);
        }
        self.sweep();
        Ok(())
    }

    /// Ends open session `key` (number `i`) without error, recycling its auditor.
    fn end_open<S: Sink<Trace = T>>(&mut self, sink: &mut S, key: &Option<String>, i: usize) {
        self.index.remove(key);
        let s = *self.sessions.remove(&i).expect("indexed");
        s.auditor.merge_coverage(&mut self.ended_cov, &self.labels);
        let auditor = self.close(sink, s, None, None);
        if self.spare.len() < SPARE_AUDITORS {
            self.spare.push(auditor);
        }
    }

    /// Ends session `session` now (push; as its `"session_end": true` marker would): its
    /// end-of-trace verdicts and end go to the sink, and its auditor is recycled. A session not
    /// open is ignored; one of which nothing was understood stays open until
    /// [`Driver::finish`] (whose coverage check decides whether it was audited).
    pub fn end_session<S: Sink<Trace = T>>(&mut self, sink: &mut S, session: Option<&str>) {
        let key = session.map(str::to_string);
        let Some(&i) = self.index.get(&key) else {
            return;
        };
        if self.sessions[&i].auditor.understood() > 0 {
            self.end_open(sink, &key, i);
        }
    }

    /// Ends session `session` now even if nothing of it was understood (push; a run that is
    /// over whatever it did, as a supervisor's): its end-of-trace verdicts and end go to the sink.
    /// A session not open is ignored.
    pub fn close_session<S: Sink<Trace = T>>(&mut self, sink: &mut S, session: Option<&str>) {
        let key = session.map(str::to_string);
        if let Some(&i) = self.index.get(&key) {
            self.end_open(sink, &key, i);
        }
    }

    /// A read failure (push). One of a known session ends that session only, with its error
    /// (its later events are skipped); one of the file (or of the labeling stage) stops the
    /// file: returns `false`, and [`Driver::finish`] ends every open session with it.
    pub fn fail<S: Sink<Trace = T>>(&mut self, sink: &mut S, failure: ReadFailure) -> bool {
        let Some(session) = failure.session() else {
            self.file_error = Some(Arc::new(failure));
            return false;
        };
        // A session stopped by a failure has no later failures either.
        if !self.failed.insert(session.clone()) {
            return true;
        }
        let failure = Arc::new(failure);
        self.end.session_failures.push(Arc::clone(&failure));
        sink.notice(Notice::SessionFailed(Arc::clone(&failure)));
        let s = match self.index.remove(&session) {
            Some(i) => *self.sessions.remove(&i).expect("indexed"),
            None => {
                // Its first line is the bad one: still a trace, reported.
                self.opened += 1;
                let mut s = self.open(sink, session.as_deref());
                let (auditor, _) = s.auditor.full(&self.plan, &mut self.spare, &self.labels);
                let recs = auditor.initial();
                sink.verdicts(&mut s.trace, recs);
                s
            }
        };
        let line = failure.line();
        self.close(sink, s, Some(EndError::Read(failure)), line);
        true
    }

    /// Drives every item of `events` (pull): [`Driver::feed`] for an event, [`Driver::fail`] for
    /// a failure, up to the first failure of the file.
    ///
    /// # Errors
    /// As [`Driver::feed`].
    pub fn read<S: Sink<Trace = T>>(
        &mut self,
        sink: &mut S,
        events: impl IntoIterator<Item = Item>,
    ) -> Result<(), CrossCheckFailure> {
        for item in events {
            match item {
                Ok((event, labels)) => self.feed(sink, &event, labels)?,
                Err(failure) => {
                    if !self.fail(sink, failure) {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Stops the audit after a [`CrossCheckFailure`]: open sessions get no end. Returns how the
    /// file ended so far, with the failure.
    pub fn abort(mut self, failure: CrossCheckFailure) -> FileEnd {
        self.end.mismatch = Some(failure);
        self.end
    }

    /// Ends the file: checks its coverage (notices), ends every open session (with the file's
    /// failure, or the reason it was not audited), and says how the file ended. A file of no
    /// event is still one (empty) trace, so its step-0 verdicts are reported. `facts`: what the
    /// reader said of the fields it met.
    pub fn finish<S: Sink<Trace = T>>(mut self, sink: &mut S, facts: &ReaderFacts) -> FileEnd {
        if self.sessions.is_empty() && self.opened == 0 {
            let mut s = self.open(sink, None);
            if self.file_error.is_none() {
                let (auditor, _) = s.auditor.full(&self.plan, &mut self.spare, &self.labels);
                let recs = auditor.initial();
                sink.verdicts(&mut s.trace, recs);
            }
            self.sessions.insert(0, Box::new(s));
        }
        let tally = self.tally();
        let file = Arc::clone(&self.file);
        let file_error = self.file_error.take();
        let closing = Closing::check(
            sink,
            &file,
            &tally,
            file_error.as_ref(),
            facts,
            &self.checks,
        );
        self.close_all(sink, &closing, |_, _| {});
        let mut end = std::mem::take(&mut self.end);
        closing.conclude(sink, &file, &tally, file_error, facts, &mut end);
        end
    }

    /// What the end-of-file checks need of this driver: the coverage of every session read
    /// (ended or open, not those stopped by their own failure), and the counts of sessions.
    pub(crate) fn tally(&self) -> Tally {
        let mut coverage = self.ended_cov.clone();
        for s in self.sessions.values() {
            s.auditor.merge_coverage(&mut coverage, &self.labels);
        }
        Tally {
            coverage,
            failed: self.failed.len(),
            opened: self.opened,
        }
    }

    /// Sessions opened so far (by an event, or by a failure on their first line): each open
    /// session's number in [`Driver::close_all`]'s `mark`.
    pub(crate) fn opened(&self) -> usize {
        self.opened
    }

    /// Ends every open session, in order of first appearance, with `closing`'s error (if any).
    /// `mark(sink, n)` is called before the end of the session opened `n`-th (0-based).
    pub(crate) fn close_all<S: Sink<Trace = T>>(
        &mut self,
        sink: &mut S,
        closing: &Closing,
        mut mark: impl FnMut(&mut S, usize),
    ) {
        for (n, s) in std::mem::take(&mut self.sessions) {
            mark(sink, n);
            let auditor = self.close(sink, *s, closing.error.clone(), closing.line);
            // Compacted sessions are rebuilt one after the other from the same spare.
            if self.spare.len() < SPARE_AUDITORS {
                self.spare.push(auditor);
            }
        }
    }
}

/// What the end-of-file checks need of the driver(s) of one file (several with a parallel
/// audit: their tallies are [merged](Tally::merge)).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// Coverage of the sessions read (not those stopped by their own failure).
    pub coverage: Coverage,
    /// Sessions stopped by their own failure.
    pub failed: usize,
    /// Sessions opened.
    pub opened: usize,
}

impl Tally {
    /// Adds the tally of another driver of the same file (of other sessions).
    pub fn merge(&mut self, other: &Tally) {
        self.coverage.merge(&other.coverage);
        self.failed += other.failed;
        self.opened += other.opened;
    }
}

/// How a file's open sessions end, decided by its coverage at the end of the file.
#[derive(Clone, Debug)]
pub(crate) struct Closing {
    /// The error every open session ends with (the file's failure, or why it was not audited).
    pub error: Option<EndError>,
    /// Its line, when it has one.
    pub line: Option<usize>,
    not_audited: Option<String>,
    unaudited: usize,
}

impl Closing {
    /// Checks the coverage of a file (its notices go to `sink`), before its open sessions end.
    pub fn check<S: Sink>(
        sink: &mut S,
        file: &str,
        tally: &Tally,
        file_error: Option<&Arc<ReadFailure>>,
        facts: &ReaderFacts,
        checks: &Checks,
    ) -> Closing {
        let cov = &tally.coverage;
        // Sessions stopped by their own failure are not in `cov`: the others are checked,
        // unless there are none.
        let (not_audited, unaudited) =
            if file_error.is_none() && (tally.failed == 0 || cov.steps > 0) {
                coverage_notices(sink, file, cov, facts, checks)
            } else {
                (None, 0)
            };
        let line = file_error.and_then(|e| e.line());
        let error = match (file_error, &not_audited) {
            (Some(e), _) => Some(EndError::Read(Arc::clone(e))),
            (None, Some(why)) => Some(EndError::NotAudited(why.clone())),
            (None, None) => None,
        };
        Closing {
            error,
            line,
            not_audited,
            unaudited,
        }
    }

    /// The notices after the open sessions ended, and the rest of `end` (whose counts of steps,
    /// violations and traces are those of every session ended).
    pub fn conclude<S: Sink>(
        self,
        sink: &mut S,
        file: &str,
        tally: &Tally,
        file_error: Option<Arc<ReadFailure>>,
        facts: &ReaderFacts,
        end: &mut FileEnd,
    ) {
        let file = file.to_string();
        if tally.failed > 0 {
            end.bad_input = true;
            // Only where other sessions were audited on (a file of one session has none).
            if file_error.is_none() && tally.opened > tally.failed {
                sink.notice(Notice::OtherSessionsAudited { file: file.clone() });
            }
        }
        if let Some(e) = &file_error {
            end.bad_input = true;
            sink.notice(Notice::FileFailed(Arc::clone(e)));
            if end.steps > 0 {
                sink.notice(Notice::StepsBeforeFailure {
                    file,
                    steps: end.steps,
                });
            }
        } else if let Some(why) = &self.not_audited {
            end.bad_input = true;
            sink.notice(Notice::NotAudited(why.clone()));
        } else if self.unaudited > 0 {
            end.bad_input = true;
        }
        end.error = file_error;
        end.not_audited = self.not_audited;
        end.unknown_fields = facts.unknown_fields.clone();
    }
}

/// Why a file read without error was not audited, if it was not: it is empty, no event was
/// understood, or no property's propositions can hold on it (their rules read roles, tools,
/// arguments or fields that no step has). When only some properties are so, each is an error
/// notice and the second value is their count (exit code 2). Also notices ignored fields, label
/// warnings and `--formula` atoms that never held.
fn coverage_notices<S: Sink>(
    sink: &mut S,
    file: &str,
    cov: &Coverage,
    facts: &ReaderFacts,
    checks: &Checks,
) -> (Option<String>, usize) {
    if cov.steps == 0 {
        return (jsonl::not_audited(file, cov), 0);
    }
    let reader = |level, text: &String| Notice::Reader {
        file: file.to_string(),
        level,
        text: text.clone(),
    };
    for n in &facts.notes {
        sink.notice(reader(Level::Note, n));
    }
    for w in &facts.warnings {
        sink.notice(reader(Level::Warning, w));
    }
    if cov.understood == 0 {
        sink.notice(if cov.with_text == 0 && cov.with_labels == 0 {
            Notice::NoTextOrLabels {
                file: file.to_string(),
                fields: facts.fields_seen.clone(),
            }
        } else {
            Notice::NoLabelsNoRules {
                file: file.to_string(),
            }
        });
        return (jsonl::not_audited(file, cov), 0);
    }
    if !facts.unknown_fields.is_empty() {
        sink.notice(Notice::IgnoredFields {
            file: file.to_string(),
            fields: facts.unknown_fields.clone(),
        });
    }
    for w in cov.label_warnings(file, &checks.specs, checks.model) {
        sink.notice(Notice::Label(w));
    }
    if let Some(why) = jsonl::not_audited_for(file, cov, &checks.specs, checks.model) {
        return (Some(why), 0);
    }
    let unaudited = cov.unaudited_properties(&checks.specs, checks.model);
    for (id, propositions) in &unaudited {
        sink.notice(Notice::PropertyNotAudited {
            file: file.to_string(),
            id: id.clone(),
            propositions: propositions.clone(),
        });
    }
    for (spec, propositions) in cov.specs_never_held(&checks.specs, checks.model) {
        sink.notice(Notice::NoPropositionHeld {
            file: file.to_string(),
            spec,
            propositions,
            steps: cov.steps,
        });
    }
    if let Some(adhoc) = &checks.adhoc {
        for (id, atom) in cov.never_labeled(adhoc) {
            // A comparison (`a != b`) is decided by its values, never labeled.
            if trac_core::names::comparison_sides(&atom).is_some() {
                continue;
            }
            let base = trac_ltl::formula::AtomName::parse(&atom).base;
            if !checks.declared.contains(&base) {
                sink.notice(Notice::AtomNeverLabeled {
                    file: file.to_string(),
                    id,
                    atom,
                });
            }
        }
    }
    (None, unaudited.len())
}

/// The `--step-per turn|call` notice for a trace of `format`, which has no messages to group
/// into turns or split into calls (text, JSON Lines): each record is a step whatever the option.
pub(crate) fn step_per_notice(
    file: &str,
    opts: &trace::ReadOptions,
    format: trace::TraceFormat,
) -> Option<Notice> {
    (opts.step_per != trace::StepPer::Message && !format.is_structured()).then(|| {
        Notice::StepPerNoEffect {
            file: file.to_string(),
            format: format.name(),
            step_per: opts.step_per.name(),
        }
    })
}

/// Audits the trace file `path` (pull): opens it with `opts` (a file, a pipe, or `-` for
/// standard input; any format [`trace::open_with`] detects), labels its steps with `labeling`
/// if given (else the specs' rules do), and drives its events to `sink` to the end. A file that
/// cannot be opened is one trace ending with that failure. Returns how the file ended
/// ([`FileEnd::mismatch`] if the cross-check engine stopped it).
pub fn audit_file<S: Sink>(
    plan: AuditPlan,
    checks: Checks,
    path: &Path,
    opts: &trace::ReadOptions,
    labeling: Option<&dyn LabelStage>,
    sink: &mut S,
) -> FileEnd {
    let opened = trace::open_with(path, opts);
    audit_opened(plan, checks, path, opened, opts, labeling, sink)
}

/// [`audit_file`] of a trace already opened (or that could not be opened).
pub(crate) fn audit_opened<S: Sink>(
    plan: AuditPlan,
    checks: Checks,
    path: &Path,
    opened: Result<TraceReader<trace::Input>, trace::TraceError>,
    opts: &trace::ReadOptions,
    labeling: Option<&dyn LabelStage>,
    sink: &mut S,
) -> FileEnd {
    let mut driver: Driver<S::Trace> = Driver::new(plan, checks, &path.display().to_string());
    driver.set_compaction(Some(Compaction::default()));
    let mut facts = ReaderFacts::default();
    match opened {
        Err(e) => {
            driver.fail(sink, ReadFailure::Trace(e));
        }
        Ok(reader) => {
            driver.set_source(reader.name(), reader.is_stream());
            if let Some(n) = step_per_notice(reader.name(), opts, reader.format()) {
                sink.notice(n);
            }
            let shared = Arc::new(Mutex::new(reader));
            let reader = SharedReader(Arc::clone(&shared));
            let read = match labeling {
                Some(l) => {
                    let events = l.events(driver.file(), reader);
                    driver.read(sink, events)
                }
                None => driver.read(sink, reader.map(|r| Ok((r?, None)))),
            };
            if let Err(m) = read {
                return driver.abort(m);
            }
            // `try_lock`: after a labeling failure the stage's reader thread may still be
            // waiting on a stream; the field checks are then left out.
            if let Ok(reader) = shared.try_lock() {
                facts = ReaderFacts::of(&reader);
            };
        }
    }
    driver.finish(sink, &facts)
}
