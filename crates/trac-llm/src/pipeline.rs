//! Concurrent labeling in trace order.
//!
//! Once the window of earlier steps is fixed (it is made of the trace's events, not of their
//! labels), the steps of a trace can be labeled independently. [`label_in_order`] reads the
//! events, hands each step with its window to a bounded pool of worker threads, and yields the
//! labeled steps strictly in trace order as soon as each one and all before it are labeled, so
//! the monitors run in step order and verdicts stream out. At most `2 × workers` steps are read
//! ahead of the first unlabeled one.
//!
//! A trace error (a malformed line) is yielded after every step before it; a labeling failure is
//! yielded in its step's place and ends the stream (later steps are not reported: their verdicts
//! would depend on the failed step). The first failure stops the labeling: no later step is read
//! or started (steps are started in trace order, so every step before a failed one is started
//! already), the steps in flight finish, and the failure is yielded once they have (so a model's
//! request count is final when the stream ends).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use trac_runtime::label::labeler::LabelFailure;
use trac_runtime::trace::Event;

/// Why the stream of labeled steps ended early; `E` is the trace reader's error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError<E> {
    /// The trace reader failed.
    #[error("{0}")]
    Trace(#[source] E),
    /// A step could not be labeled.
    #[error("cannot label {0}")]
    Label(LabelFailure),
}

/// A labeling function for [`label_in_order`]: the event and the earlier events of its session
/// (oldest first, at most the window).
pub type LabelFn<T> = dyn Fn(&Event, &[Event]) -> Result<T, LabelFailure> + Send + Sync;

/// An iterator over labeled steps, in trace order (see the [module docs](self)).
pub struct LabeledSteps<T, E> {
    rx: Receiver<Result<(Event, T), PipelineError<E>>>,
    done: bool,
}

impl<T, E> Iterator for LabeledSteps<T, E> {
    type Item = Result<(Event, T), PipelineError<E>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.rx.recv() {
            Ok(item) => {
                if item.is_err() {
                    self.done = true;
                }
                Some(item)
            }
            Err(_) => {
                self.done = true;
                None
            }
        }
    }
}

type Job = (usize, Event, Vec<Event>);

/// A step's result from a worker: `None` when it was not labeled (a step failed before).
type Outcome<T> = (usize, Event, Option<Result<T, LabelFailure>>);

/// Labels `events` with `label` on `workers` threads (at least one), keeping for each step the
/// last `window` events of its session (events with the same [`Event::session`]) as its history.
/// See the [module docs](self). Dropping the iterator stops reading (steps in flight finish).
pub fn label_in_order<I, E, T>(
    events: I,
    label: Arc<LabelFn<T>>,
    workers: usize,
    window: usize,
) -> LabeledSteps<T, E>
where
    I: Iterator<Item = Result<Event, E>> + Send + 'static,
    E: Send + 'static,
    T: Send + 'static,
{
    let workers = workers.max(1);
    let (out_tx, out_rx) = mpsc::sync_channel(workers);
    std::thread::spawn(move || {
        let (job_tx, job_rx) = mpsc::sync_channel::<Job>(workers);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (res_tx, res_rx) = mpsc::channel::<Outcome<T>>();
        // Set by the first failure: the steps queued after it are not labeled.
        let failed = Arc::new(AtomicBool::new(false));
        for _ in 0..workers {
            let job_rx = Arc::clone(&job_rx);
            let res_tx = res_tx.clone();
            let label = Arc::clone(&label);
            let failed = Arc::clone(&failed);
            std::thread::spawn(move || loop {
                // The flag is read under the queue's lock: a step taken before a later one
                // failed is labeled.
                let (job, skip) = {
                    let rx = job_rx.lock().unwrap_or_else(|e| e.into_inner());
                    let job = rx.recv();
                    (job, failed.load(Ordering::SeqCst))
                };
                let Ok((i, ev, history)) = job else { return };
                let r = if skip {
                    None
                } else {
                    let r = label(&ev, &history);
                    if r.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    Some(r)
                };
                if res_tx.send((i, ev, r)).is_err() {
                    return;
                }
            });
        }
        drop(res_tx);
        let mut events = events;
        let mut windows: HashMap<Option<String>, VecDeque<Event>> = HashMap::new();
        let mut pending: BTreeMap<usize, (Event, Option<Result<T, LabelFailure>>)> =
            BTreeMap::new();
        let (mut next_in, mut next_out, mut in_flight) = (0usize, 0usize, 0usize);
        let mut exhausted = false;
        let mut trace_error: Option<E> = None;
        loop {
            while !exhausted && in_flight < 2 * workers && !failed.load(Ordering::SeqCst) {
                match events.next() {
                    None => exhausted = true,
                    Some(Err(e)) => {
                        exhausted = true;
                        trace_error = Some(e);
                    }
                    Some(Ok(ev)) => {
                        let w = windows.entry(ev.session.clone()).or_default();
                        let history: Vec<Event> = w.iter().cloned().collect();
                        if window > 0 {
                            if w.len() == window {
                                w.pop_front();
                            }
                            w.push_back(ev.clone());
                        }
                        if job_tx.send((next_in, ev, history)).is_err() {
                            return;
                        }
                        next_in += 1;
                        in_flight += 1;
                    }
                }
            }
            if in_flight == 0 {
                break;
            }
            let Ok((i, ev, r)) = res_rx.recv() else {
                return;
            };
            in_flight -= 1;
            pending.insert(i, (ev, r));
            // The successes in order; a failure waits for the steps in flight.
            while let Some((_, Some(Ok(_)))) = pending.get(&next_out) {
                let Some((ev, Some(Ok(t)))) = pending.remove(&next_out) else {
                    unreachable!("checked just above");
                };
                next_out += 1;
                if out_tx.send(Ok((ev, t))).is_err() {
                    return;
                }
            }
        }
        // A step before every unlabeled one failed: the first failure in trace order.
        if let Some(f) = pending
            .into_values()
            .find_map(|(_, r)| r.and_then(Result::err))
        {
            let _ = out_tx.send(Err(PipelineError::Label(f)));
            return;
        }
        if let Some(e) = trace_error {
            let _ = out_tx.send(Err(PipelineError::Trace(e)));
        }
    });
    LabeledSteps {
        rx: out_rx,
        done: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ev(step: usize, session: Option<&str>) -> Event {
        Event {
            step,
            line: step,
            session: session.map(Into::into),
            output: Some(format!("a{step}")),
            ..Event::default()
        }
    }

    #[test]
    fn order_is_kept_and_windows_are_per_session() {
        let events: Vec<Result<Event, String>> = (1..=40)
            .map(|i| Ok(ev(i, Some(if i % 2 == 0 { "even" } else { "odd" }))))
            .collect();
        // Later steps finish first.
        let label: Arc<LabelFn<Vec<usize>>> = Arc::new(|e: &Event, h: &[Event]| {
            std::thread::sleep(Duration::from_millis(((40 - e.step) % 7) as u64));
            Ok(h.iter().map(|x| x.step).collect())
        });
        let out: Vec<_> = label_in_order(events.into_iter(), label, 4, 2)
            .map(Result::unwrap)
            .collect();
        assert_eq!(out.len(), 40);
        for (k, (e, hist)) in out.iter().enumerate() {
            assert_eq!(e.step, k + 1);
            let same: Vec<usize> = (1..e.step).filter(|s| s % 2 == e.step % 2).collect();
            let want = same[same.len().saturating_sub(2)..].to_vec();
            assert_eq!(hist, &want, "step {}", e.step);
        }
    }

    #[test]
    fn the_first_failure_stops_the_labeling_after_the_steps_in_flight() {
        use std::sync::atomic::AtomicUsize;
        use std::sync::Barrier;
        // Every step fails, as with a server that answers HTTP 501. The first 3 steps wait for
        // each other, so all 3 workers are busy when the first failure comes; the other 17
        // steps must not be labeled: 3 calls, and one item, step 1's failure.
        let events: Vec<Result<Event, String>> = (1..=20).map(|i| Ok(ev(i, None))).collect();
        let calls = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(3));
        let (c, b) = (Arc::clone(&calls), Arc::clone(&barrier));
        let label: Arc<LabelFn<()>> = Arc::new(move |e: &Event, _h: &[Event]| {
            c.fetch_add(1, Ordering::SeqCst);
            if e.step <= 3 {
                b.wait();
            }
            Err(LabelFailure {
                step: e.step,
                line: e.line,
                message: "HTTP 501".into(),
            })
        });
        let out: Vec<_> = label_in_order(events.into_iter(), label, 3, 0).collect();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(out.len(), 1);
        assert!(matches!(&out[0], Err(PipelineError::Label(f)) if f.step == 1));
    }

    #[test]
    fn failure_ends_the_stream_in_its_place_and_trace_errors_come_last() {
        let events: Vec<Result<Event, String>> = (1..=10).map(|i| Ok(ev(i, None))).collect();
        let label: Arc<LabelFn<()>> = Arc::new(|e: &Event, _h: &[Event]| {
            if e.step == 6 {
                Err(LabelFailure {
                    step: 6,
                    line: 6,
                    message: "boom".into(),
                })
            } else {
                Ok(())
            }
        });
        let out: Vec<_> = label_in_order(events.into_iter(), label, 3, 0).collect();
        assert_eq!(out.len(), 6);
        assert!(out[..5].iter().all(Result::is_ok));
        assert!(matches!(&out[5], Err(PipelineError::Label(f)) if f.step == 6));

        let mut events: Vec<Result<Event, String>> = (1..=3).map(|i| Ok(ev(i, None))).collect();
        events.push(Err("t.jsonl:4:1: bad line".into()));
        events.push(Ok(ev(5, None)));
        let label: Arc<LabelFn<()>> = Arc::new(|_: &Event, _: &[Event]| Ok(()));
        let out: Vec<_> = label_in_order(events.into_iter(), label, 2, 1).collect();
        assert_eq!(out.len(), 4);
        assert!(matches!(&out[3], Err(PipelineError::Trace(m)) if m.contains("bad line")));
    }
}
