//! `-j N` inside one trace file: its sessions audited on N worker threads, with the sink called
//! as a sequential audit ([`audit_file`]) calls it (but for the two calls said below).
//!
//! [`audit_file`]: crate::audit::driver::audit_file
//!
//! Design (one audit loop, three stages, bounded channels):
//! - a **reader** thread parses the file's lines ([`crate::trace::TraceReader`]), numbers each
//!   event (its global index) and routes it to worker `hash(session) mod N`, in batches of
//!   [`BATCH`] events (every worker gets one message per batch, maybe empty);
//! - each **worker** runs the ordinary [`Driver`] over its share of sessions, with its own
//!   [`AuditPlan`] built on its thread (a plan is not `Send`: complete progression's monitor
//!   holds the compiler oracle's `Box<dyn VerdictSession>`; a plan's compiled tables come from
//!   the compiler's shared cache, so nothing is compiled twice).
//!   Its sink records every call (`Op`) behind a mark with the index of the event that caused
//!   it;
//! - the **merger** (the calling thread, which owns the real sink) merges the workers' records
//!   of each batch by index and replays them on the sink, so the sink sees the same calls, with
//!   the same arguments, in the same order as in a sequential audit (two exceptions below). At
//!   the end of the file the workers' tallies are merged, the coverage checks run once, and the
//!   workers end their open sessions, replayed in order of first appearance.
//!
//! Two calls differ from a sequential audit's, and no printer of trac reads them: [`Sink::step`]
//! is given an event that carries only its `line` (the event itself goes back to the reader, to
//! be freed on the thread that allocated it: glibc's allocator is slow at frees on another
//! thread), and [`Sink::verdicts`] is
//! not called with no record. A sink that reads more of a step's event must be driven by
//! [`audit_file`].
//!
//! Memory: at most 2 batches wait per channel, so O(N × [`BATCH`]) events are in flight;
//! the reorder buffer is one batch's records. A cross-check mismatch stops the replay at its
//! event, as it stops a sequential audit.
//!
//! Not parallel (audited as by [`audit_file`], on the calling thread): standard input and
//! pipes (events arrive over time), a file that cannot be opened, `jobs` ≤ 1, a file of fewer
//! than [`BATCH`] events, and one whose first [`BATCH`] events are all of one session (one
//! session cannot be spread). A labeling stage is never parallel (callers use [`audit_file`] for it).
//! Measured (BENCHMARKS.md, issue 27): on a loaded 2-core machine the threads cost 1.6–1.75× the
//! CPU of a sequential audit and did not shorten the wall time, so the CLI uses this only with
//! an explicit `-j N`.

use crate::audit::driver::{
    audit_opened, step_per_notice, Checks, Closing, Compaction, CrossCheckFailure, Driver, FileEnd,
    Item, ReaderFacts, Tally,
};
use crate::audit::plan::AuditPlan;
use crate::audit::records::VerdictRecord;
use crate::audit::sink::{Notice, ReadFailure, Sink, TraceEnd, TraceStart};
use crate::trace::{self, Event, TraceReader};
use rustc_hash::FxHashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// Events per batch sent to the workers.
pub const BATCH: usize = 4096;

/// Batches that may wait in each channel.
const QUEUE: usize = 2;

/// Why a parallel audit could not be run to its end.
#[derive(Debug, thiserror::Error)]
pub enum ParallelError {
    /// A worker could not build its audit plan (`make_plan` returned `None`).
    #[error("a worker thread could not build the audit plan")]
    Plan,
    /// A worker thread stopped without its results (it panicked).
    #[error("a worker thread of the audit stopped early")]
    Worker,
}

/// One call a worker's driver made on its sink, to be replayed on the real sink.
enum Op {
    /// The calls after it are caused by the event of this global index (or, at the end of the
    /// file, end the session that first appeared at this index).
    Mark(usize),
    Start(Box<OwnedStart>),
    Verdicts(u64, Vec<VerdictRecord>),
    /// A step, by its event's line (the event itself stays on the worker).
    Step(u64, usize),
    End(u64, Box<TraceEnd>),
    Notice(Box<Notice>),
    Consumed(usize),
}

/// A [`TraceStart`] that owns its fields.
struct OwnedStart {
    id: u64,
    name: String,
    file: Arc<str>,
    session: Option<String>,
    stream: bool,
}

/// The sink of a worker's driver: it records the calls. Its traces are ids unique over the
/// workers (`n × workers + worker`).
struct Recorder {
    ops: Vec<Op>,
    next: u64,
    worker: u64,
    workers: u64,
}

impl Sink for Recorder {
    type Trace = u64;

    fn start(&mut self, t: &TraceStart<'_>) -> u64 {
        let id = self.next * self.workers + self.worker;
        self.next += 1;
        self.ops.push(Op::Start(Box::new(OwnedStart {
            id,
            name: t.name.to_string(),
            file: Arc::clone(t.file),
            session: t.session.map(str::to_string),
            stream: t.stream,
        })));
        id
    }

    fn verdicts(&mut self, trace: &mut u64, records: Vec<VerdictRecord>) {
        // A call without records is not replayed (module docs).
        if !records.is_empty() {
            self.ops.push(Op::Verdicts(*trace, records));
        }
    }

    fn step(&mut self, trace: &mut u64, event: &Event) {
        self.ops.push(Op::Step(*trace, event.line));
    }

    fn end(&mut self, trace: u64, end: TraceEnd) {
        self.ops.push(Op::End(trace, Box::new(end)));
    }

    fn notice(&mut self, notice: Notice) {
        self.ops.push(Op::Notice(Box::new(notice)));
    }

    fn consumed(&mut self, bytes: usize) {
        self.ops.push(Op::Consumed(bytes));
    }
}

/// What a worker sends the merger.
enum Reply {
    /// The records of one batch, and the mismatch that stopped the worker in it, if any.
    Batch(Vec<Op>, Option<CrossCheckFailure>),
    /// The input is over: the worker's tally for the end-of-file checks.
    Tally(Tally),
    /// The records of the end of the worker's open sessions.
    Closed(Vec<Op>),
    /// The worker could not build its plan.
    NoPlan,
}

/// The worker `hash(session) mod workers` that audits `session`.
fn route(session: Option<&str>, workers: usize) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    session.hash(&mut h);
    (h.finish() % workers as u64) as usize
}

/// Audits the trace file `path` as [`audit_file`](crate::audit::driver::audit_file) does (no
/// labeling stage), its sessions spread over `jobs` worker threads; the calls on `sink` are the
/// sequential audit's, in its order (but for the two of the module docs), so a printer's output
/// is byte-identical. `make_plan` builds
/// the plan on each worker's thread (and on the calling one when the audit falls back to
/// sequential: standard input, a pipe, a file that cannot be opened, `jobs` ≤ 1, a file of one
/// batch or whose first batch is one session). Threads: a reader, `jobs` workers, and the caller
/// (the merger). [`FileEnd::peak_open`] counts the traces started and not ended as the sink
/// saw them (a session whose first line is bad counts one more than in a sequential audit).
///
/// # Errors
/// [`ParallelError`]: `make_plan` returned `None`, or a worker stopped early; the sink may have
/// received part of the file's results.
pub fn audit_file_parallel<S: Sink>(
    make_plan: &(dyn Fn() -> Option<AuditPlan> + Sync),
    checks: Checks,
    path: &Path,
    opts: &trace::ReadOptions,
    jobs: usize,
    sink: &mut S,
) -> Result<FileEnd, ParallelError> {
    audit_batched(make_plan, checks, path, opts, jobs, BATCH, sink)
}

/// [`audit_file_parallel`] with batches of `batch` events.
pub(crate) fn audit_batched<S: Sink>(
    make_plan: &(dyn Fn() -> Option<AuditPlan> + Sync),
    checks: Checks,
    path: &Path,
    opts: &trace::ReadOptions,
    jobs: usize,
    batch: usize,
    sink: &mut S,
) -> Result<FileEnd, ParallelError> {
    let opened = trace::open_with(path, opts);
    let mut reader = match opened {
        Ok(reader) if !reader.is_stream() && jobs > 1 => reader,
        other => {
            let plan = make_plan().ok_or(ParallelError::Plan)?;
            return Ok(audit_opened(plan, checks, path, other, opts, None, sink));
        }
    };
    if let Some(n) = step_per_notice(reader.name(), opts, reader.format()) {
        sink.notice(n);
    }
    let (first, mut file_error) = next_batch(&mut reader, batch);
    if first.len() < batch || file_error.is_some() || one_session(&first) {
        // A file of one batch, or whose first batch is one session: as today, on this thread.
        let plan = make_plan().ok_or(ParallelError::Plan)?;
        let mut driver = Driver::new(plan, checks, &path.display().to_string());
        driver.set_compaction(Some(Compaction::default()));
        driver.set_source(reader.name(), false);
        let rest = std::iter::from_fn(|| file_error.take().map(Err))
            .chain((&mut reader).map(|r| r.map(|e| (e, None)).map_err(ReadFailure::Trace)));
        if let Err(m) = driver.read(sink, first.into_iter().chain(rest)) {
            return Ok(driver.abort(m));
        }
        return Ok(driver.finish(sink, &ReaderFacts::of(&reader)));
    }
    let file: Arc<str> = Arc::from(reader.name());
    std::thread::scope(|scope| {
        let mut inputs = Vec::with_capacity(jobs);
        let mut closers = Vec::with_capacity(jobs);
        let mut replies = Vec::with_capacity(jobs);
        let mut recycle = Vec::with_capacity(jobs);
        // Emptied buffers go back where they were filled (fewer allocations freed on another
        // thread, which glibc's allocator makes slow).
        let (spare_in_tx, spare_in_rx) = sync_channel::<Vec<(usize, Item)>>((QUEUE + 2) * jobs);
        for w in 0..jobs {
            let (in_tx, input) = sync_channel::<Vec<(usize, Item)>>(QUEUE);
            let (close_tx, close) = sync_channel::<Closing>(1);
            let (reply, reply_rx) = sync_channel::<Reply>(QUEUE);
            let (recycle_tx, spare_ops) = sync_channel::<Vec<Op>>(QUEUE + 1);
            let worker = Worker {
                index: w,
                workers: jobs,
                file: Arc::clone(&file),
                input,
                close,
                reply,
                spare_in: spare_in_tx.clone(),
                spare_ops,
            };
            scope.spawn(move || worker.run(make_plan));
            inputs.push(in_tx);
            closers.push(close_tx);
            replies.push(reply_rx);
            recycle.push(recycle_tx);
        }
        drop(spare_in_tx);
        let read = scope.spawn(move || read(reader, first, inputs, spare_in_rx, batch));
        let merger = Merger {
            file: Arc::clone(&file),
            replies,
            closers,
            recycle,
            traces: FxHashMap::default(),
            end: FileEnd::default(),
            open: 0,
        };
        merger.run(sink, &checks, make_plan, read)
    })
}

/// The session of an item (an event's, or a session failure's; `None` for a failure of the
/// file).
fn session_of(item: &Item) -> Option<Option<&str>> {
    match item {
        Ok((event, _)) => Some(event.session.as_deref()),
        Err(failure) => failure
            .trace_error()
            .and_then(|e| e.session.as_ref())
            .map(Option::as_deref),
    }
}

/// Whether every item of `items` is of the same session.
fn one_session(items: &[Item]) -> bool {
    let Some(first) = items.first().map(session_of) else {
        return true;
    };
    items.iter().all(|i| session_of(i) == first)
}

/// Up to `size` items of `reader`, up to its end or its first failure of the file (returned
/// apart).
fn next_batch(
    reader: &mut TraceReader<trace::Input>,
    size: usize,
) -> (Vec<Item>, Option<ReadFailure>) {
    let mut items = Vec::with_capacity(size.min(BATCH));
    while items.len() < size {
        match reader.next() {
            None => break,
            Some(Ok(event)) => items.push(Ok((event, None))),
            Some(Err(e)) => {
                let failure = ReadFailure::Trace(e);
                if failure.session().is_none() {
                    return (items, Some(failure));
                }
                items.push(Err(failure));
            }
        }
    }
    (items, None)
}

/// A worker: its place among the workers and its channels.
struct Worker {
    index: usize,
    workers: usize,
    file: Arc<str>,
    /// Its events, by batch.
    input: Receiver<Vec<(usize, Item)>>,
    /// How its open sessions end, at the end of the file.
    close: Receiver<Closing>,
    reply: SyncSender<Reply>,
    /// Emptied batches, back to the reader.
    spare_in: SyncSender<Vec<(usize, Item)>>,
    /// Emptied record buffers, back from the merger.
    spare_ops: Receiver<Vec<Op>>,
}

impl Worker {
    /// Audits the batches of `input` with a [`Driver`] of its own, replying once per batch, then
    /// its tally, then (after the merger's [`Closing`]) the end of its open sessions.
    fn run(self, make_plan: &(dyn Fn() -> Option<AuditPlan> + Sync)) {
        let reply = &self.reply;
        let Some(plan) = make_plan() else {
            let _ = reply.send(Reply::NoPlan);
            return;
        };
        // The coverage checks run on the merger, against the real checks.
        let mut driver: Driver<u64> = Driver::new(plan, Checks::default(), &self.file);
        // Each worker's idle sessions are compacted as in a one-thread audit (same records).
        driver.set_compaction(Some(Compaction::default()));
        driver.set_source(&self.file, false);
        let mut rec = Recorder {
            ops: Vec::new(),
            next: 0,
            worker: self.index as u64,
            workers: self.workers as u64,
        };
        // The global index of each session's first event, by its open number.
        let mut firsts: Vec<usize> = Vec::new();
        for mut batch in &self.input {
            let mut mismatch = None;
            // The events stay in the batch, which goes back to the reader: they are freed on
            // the thread that allocated them.
            for (i, item) in batch.iter_mut() {
                let i = *i;
                rec.ops.push(Op::Mark(i));
                match item {
                    Ok((event, labels)) => {
                        if let Err(m) = driver.feed(&mut rec, event, labels.take()) {
                            mismatch = Some(m);
                        }
                    }
                    Err(_) => {
                        // Taken out of the batch (a failure is rare).
                        if let Err(failure) = std::mem::replace(item, Ok((Event::default(), None)))
                        {
                            driver.fail(&mut rec, failure);
                        }
                    }
                }
                firsts.resize(driver.opened(), i);
                if mismatch.is_some() {
                    break;
                }
            }
            let _ = self.spare_in.try_send(batch);
            let stop = mismatch.is_some();
            let cap = rec.ops.len();
            let fresh = self
                .spare_ops
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(cap));
            let ops = std::mem::replace(&mut rec.ops, fresh);
            if reply.send(Reply::Batch(ops, mismatch)).is_err() || stop {
                return;
            }
        }
        if reply.send(Reply::Tally(driver.tally())).is_err() {
            return;
        }
        let Ok(closing) = self.close.recv() else {
            return;
        };
        driver.close_all(&mut rec, &closing, |rec, n| {
            rec.ops.push(Op::Mark(firsts[n]))
        });
        let _ = reply.send(Reply::Closed(std::mem::take(&mut rec.ops)));
    }
}

/// The reader thread: numbers the events of `reader` (after those of `first`) and sends each
/// to its session's worker, one batch to every worker at a time, up to the end of the file or
/// its first failure of the file (a failure of one session goes to that session's worker).
/// Returns what the reader said of the fields it met, and the failure of the file.
fn read(
    mut reader: TraceReader<trace::Input>,
    first: Vec<Item>,
    inputs: Vec<SyncSender<Vec<(usize, Item)>>>,
    spare: Receiver<Vec<(usize, Item)>>,
    size: usize,
) -> (ReaderFacts, Option<ReadFailure>) {
    let workers = inputs.len();
    let mut index = 0;
    let mut file_error = None;
    let mut first = Some(first);
    loop {
        let mut batches: Vec<Vec<(usize, Item)>> = (0..workers)
            .map(|_| {
                // Its events are dropped here, where they were allocated.
                let mut v = spare.try_recv().unwrap_or_default();
                v.clear();
                v
            })
            .collect();
        let start = index;
        let mut push = |item: Item, index: &mut usize| {
            let w = route(session_of(&item).flatten(), workers);
            batches[w].push((*index, item));
            *index += 1;
        };
        match first.take() {
            Some(items) => items.into_iter().for_each(|i| push(i, &mut index)),
            None => {
                while index - start < size {
                    let item = match reader.next() {
                        None => break,
                        Some(Ok(event)) => Ok((event, None)),
                        Some(Err(e)) => {
                            let failure = ReadFailure::Trace(e);
                            if failure.session().is_none() {
                                file_error = Some(failure);
                                break;
                            }
                            Err(failure)
                        }
                    };
                    push(item, &mut index);
                }
            }
        }
        if index == start {
            break;
        }
        for (tx, batch) in inputs.iter().zip(batches) {
            // A worker that is gone was stopped by the merger (a mismatch): stop reading.
            if tx.send(batch).is_err() {
                return (ReaderFacts::of(&reader), file_error);
            }
        }
        if file_error.is_some() {
            break;
        }
    }
    (ReaderFacts::of(&reader), file_error)
}

/// The calling thread's part: replays the workers' records on the real sink in event order.
struct Merger<T> {
    file: Arc<str>,
    replies: Vec<Receiver<Reply>>,
    closers: Vec<SyncSender<Closing>>,
    /// Emptied record buffers, back to each worker.
    recycle: Vec<SyncSender<Vec<Op>>>,
    /// The real sink's open traces, by the workers' ids.
    traces: FxHashMap<u64, T>,
    end: FileEnd,
    /// Traces started and not ended (for [`FileEnd::peak_open`]).
    open: usize,
}

impl<T> Merger<T> {
    /// Replays every batch, then ends the file as [`Driver::finish`] does.
    fn run<S: Sink<Trace = T>>(
        mut self,
        sink: &mut S,
        checks: &Checks,
        make_plan: &(dyn Fn() -> Option<AuditPlan> + Sync),
        read: std::thread::ScopedJoinHandle<'_, (ReaderFacts, Option<ReadFailure>)>,
    ) -> Result<FileEnd, ParallelError> {
        let mut tally = Tally::default();
        loop {
            let mut batch = Vec::with_capacity(self.replies.len());
            let mut mismatches = Vec::with_capacity(self.replies.len());
            let mut over = false;
            for rx in &self.replies {
                match rx.recv().map_err(|_| ParallelError::Worker)? {
                    Reply::Batch(ops, m) => {
                        batch.push(ops);
                        mismatches.push(m);
                    }
                    Reply::Tally(t) => {
                        tally.merge(&t);
                        over = true;
                    }
                    Reply::Closed(_) => return Err(ParallelError::Worker),
                    Reply::NoPlan => return Err(ParallelError::Plan),
                }
            }
            if over {
                break;
            }
            let stops: Vec<bool> = mismatches.iter().map(Option::is_some).collect();
            if let Some(w) = self.replay(sink, batch, &stops) {
                self.end.mismatch = mismatches[w].take();
                return Ok(self.end);
            }
        }
        let (facts, file_error) = read.join().map_err(|_| ParallelError::Worker)?;
        if tally.opened == 0 {
            // No session was opened: the sequential end of an empty file (one empty trace).
            let mut driver =
                Driver::new(make_plan().ok_or(ParallelError::Plan)?, checks.clone(), "");
            driver.set_source(&self.file, false);
            if let Some(f) = file_error {
                driver.fail(sink, f);
            }
            return Ok(driver.finish(sink, &facts));
        }
        let file_error = file_error.map(Arc::new);
        let closing = Closing::check(
            sink,
            &self.file,
            &tally,
            file_error.as_ref(),
            &facts,
            checks,
        );
        for tx in &self.closers {
            tx.send(closing.clone())
                .map_err(|_| ParallelError::Worker)?;
        }
        let mut closed = Vec::with_capacity(self.replies.len());
        for rx in &self.replies {
            match rx.recv().map_err(|_| ParallelError::Worker)? {
                Reply::Closed(ops) => closed.push(ops),
                _ => return Err(ParallelError::Worker),
            }
        }
        self.replay(sink, closed, &[]);
        let mut end = std::mem::take(&mut self.end);
        closing.conclude(sink, &self.file, &tally, file_error, &facts, &mut end);
        Ok(end)
    }

    /// Replays the records of one batch (one list per worker, each in index order) on `sink`
    /// in index order. `stops[w]`: worker `w`'s list ends with a mismatch: the replay stops at
    /// the end of the first such list reached, and returns its worker.
    fn replay<S: Sink<Trace = T>>(
        &mut self,
        sink: &mut S,
        mut lists: Vec<Vec<Op>>,
        stops: &[bool],
    ) -> Option<usize> {
        let mut at = vec![0; lists.len()];
        let stopped = loop {
            // The worker whose next mark is the smallest index.
            let next = lists
                .iter()
                .zip(&at)
                .enumerate()
                .filter_map(|(w, (l, &p))| match l.get(p) {
                    Some(Op::Mark(i)) => Some((*i, w)),
                    _ => None,
                })
                .min();
            let Some((_, w)) = next else { break None };
            let list = &mut lists[w];
            let mut p = at[w] + 1;
            while p < list.len() && !matches!(list[p], Op::Mark(_)) {
                let op = std::mem::replace(&mut list[p], Op::Mark(0));
                self.apply(sink, op);
                p += 1;
            }
            at[w] = p;
            if stops.get(w) == Some(&true) && p == list.len() {
                break Some(w);
            }
        };
        for (mut list, tx) in lists.into_iter().zip(&self.recycle) {
            list.clear();
            let _ = tx.try_send(list);
        }
        stopped
    }

    /// Calls `sink` as the worker's driver called its recorder.
    fn apply<S: Sink<Trace = T>>(&mut self, sink: &mut S, op: Op) {
        match op {
            Op::Mark(_) => {}
            Op::Start(s) => {
                let t = sink.start(&TraceStart {
                    name: &s.name,
                    file: &s.file,
                    session: s.session.as_deref(),
                    stream: s.stream,
                });
                self.traces.insert(s.id, t);
                self.open += 1;
                self.end.peak_open = self.end.peak_open.max(self.open);
            }
            Op::Verdicts(id, records) => {
                if let Some(t) = self.traces.get_mut(&id) {
                    sink.verdicts(t, records);
                }
            }
            Op::Step(id, line) => {
                if let Some(t) = self.traces.get_mut(&id) {
                    sink.step(
                        t,
                        &Event {
                            line,
                            ..Event::default()
                        },
                    );
                }
            }
            Op::End(id, end) => {
                let Some(t) = self.traces.remove(&id) else {
                    return;
                };
                self.open -= 1;
                self.end.steps += end.steps;
                self.end.violations += end.violations();
                self.end.traces += 1;
                sink.end(t, *end);
            }
            Op::Notice(n) => {
                if let Notice::SessionFailed(f) = &*n {
                    self.end.session_failures.push(Arc::clone(f));
                }
                sink.notice(*n);
            }
            Op::Consumed(bytes) => sink.consumed(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::driver::audit_file;
    use crate::audit::plan::AuditOptions;
    use crate::audit::sink::Collect;
    use crate::engine::Engine;
    use trac_spec::spec::{CheckedSpec, Spec};

    /// The checked spec of `G !(p & r)` and `G(p -> F q)`, audited by progression (no compiler).
    fn specs() -> Vec<CheckedSpec> {
        let spec = Spec::from_formulas("t", [("f1", "G !(p & r)"), ("f2", "G(p -> F q)")]);
        vec![crate::label::labeler::check_spec(&spec).unwrap()]
    }

    fn opts() -> AuditOptions {
        AuditOptions {
            engine: Engine::Progression,
            ..Default::default()
        }
    }

    /// `n` sessions of 6 steps, interleaved; step 3 is `p & r` (a violation of f1), step 6 is
    /// `p` (f2 pending at the end); sessions `s{k}`, k % 4 == 0, end with a marker; `s2`'s 4th
    /// line is bad (`"labels": 5`). `tail` is appended.
    fn file(name: &str, n: usize, tail: &str) -> std::path::PathBuf {
        let mut s = String::new();
        for step in 1..=6 {
            for k in 0..n {
                let labels = match step {
                    3 => "[\"p\", \"r\"]",
                    6 => "[\"p\"]",
                    _ => "[\"q\"]",
                };
                if k == 2 && step == 4 {
                    s.push_str("{\"session\": \"s2\", \"labels\": 5}\n");
                    continue;
                }
                s.push_str(&format!(
                    "{{\"session\": \"s{k}\", \"labels\": {labels}}}\n"
                ));
                if step == 6 && k % 4 == 0 {
                    s.push_str(&format!(
                        "{{\"session\": \"s{k}\", \"session_end\": true}}\n"
                    ));
                }
            }
        }
        s.push_str(tail);
        let dir = std::env::temp_dir().join(format!("trac-parallel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, s).unwrap();
        p
    }

    /// The sink's whole story (traces in the order they ended, notices) and the file's end.
    fn story(c: &Collect, end: &FileEnd) -> String {
        format!(
            "{:?}\n{:?}\n{} {} {} {} {:?}",
            c.traces,
            c.notices.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            end.violations,
            end.steps,
            end.traces,
            end.bad_input,
            end.session_failures
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
        )
    }

    /// Audits `path` sequentially and with `jobs` workers and batches of `batch` events.
    fn both(path: &Path, jobs: usize, batch: usize) -> (String, String, FileEnd) {
        let specs = specs();
        let make = || AuditPlan::new(&specs, &opts()).ok();
        let checks = Checks {
            specs: specs.clone().into(),
            ..Checks::default()
        };
        let ropts = trace::ReadOptions::default();
        let mut seq = Collect::default();
        let plan = make().unwrap();
        let end = audit_file(plan, checks.clone(), path, &ropts, None, &mut seq);
        let mut par = Collect::default();
        let pend = audit_batched(&make, checks, path, &ropts, jobs, batch, &mut par).unwrap();
        (story(&seq, &end), story(&par, &pend), pend)
    }

    #[test]
    fn workers_give_the_sinks_calls_of_one_thread() {
        let path = file("many.jsonl", 50, "");
        for (jobs, batch) in [(2, 7), (3, 5), (3, 64), (8, 1)] {
            let (seq, par, end) = both(&path, jobs, batch);
            assert_eq!(seq, par, "jobs {jobs}, batch {batch}");
            // Hand-derived: 50 sessions, one f1 violation each at step 3 (f2 is pending at the
            // end: LTL3); s2's bad line ended it after 3 steps.
            assert_eq!(end.violations, 50);
            assert_eq!((end.traces, end.steps), (50, 49 * 6 + 3));
            assert!(end.bad_input);
            assert_eq!(end.session_failures.len(), 1);
        }
    }

    #[test]
    fn a_failure_of_the_file_ends_every_open_session_as_with_one_thread() {
        let path = file("stopped.jsonl", 30, "not json\n");
        for (jobs, batch) in [(2, 7), (3, 4)] {
            let (seq, par, end) = both(&path, jobs, batch);
            assert_eq!(seq, par, "jobs {jobs}, batch {batch}");
            // One f1 violation per session at step 3; the sessions without a marker end with
            // the error.
            assert!(end.error.is_some());
            assert_eq!(end.violations, 30);
        }
    }

    #[test]
    fn one_session_and_small_files_run_on_the_calling_thread() {
        // Fewer events than a batch, and an empty file: the sequential audit itself.
        let path = file("small.jsonl", 3, "");
        let (seq, par, _) = both(&path, 3, 4096);
        assert_eq!(seq, par);
        let empty = file("empty.jsonl", 0, "");
        let (seq, par, end) = both(&empty, 3, 2);
        assert_eq!(seq, par);
        assert_eq!(end.traces, 1);
        // Only end markers of sessions never opened: no worker opens a session, the file is
        // one empty trace (not audited), as with one thread.
        let markers = file("markers.jsonl", 0, &"{\"session\": \"a\", \"session_end\": true}\n{\"session\": \"b\", \"session_end\": true}\n".repeat(3));
        let (seq, par, end) = both(&markers, 2, 2);
        assert_eq!(seq, par);
        assert_eq!((end.traces, end.steps), (1, 0));
    }
}
