//! One conversation: its session of the library's audit driver (a [`Supervisor`] forked from
//! the one of its monitor thread, [`crate::monitors`]), the messages it has seen, and what its
//! steps gave.
//!
//! A request's steps are the messages it adds since the conversation's last request (the
//! client sends the whole history each time; the ones past [`Conversation::seen`] are new: user
//! messages, tool results, and on the first request the system message), then the response's
//! assistant message. Each message is written as a log line (the message with a `session`
//! field), and that line is read back by the trace reader ([`MessageReader`]) into the events
//! that are checked and committed: so the gateway's events are, by construction, the ones
//! `trac audit` reads from the log.

use crate::log::Log;
use crate::options::OnBlock;
use crate::shield::{blocked_error, refusal_message, refusal_text, Sample, Violation};
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use trac_agent::supervisor::{Check, Supervisor};
use trac_runtime::audit::VerdictRecord;
use trac_runtime::trace::{Event, MessageReader, TraceError};
use trac_runtime::Verdict;

/// A verdict a conversation reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Found {
    /// The property's id.
    pub property: String,
    /// The step (1-based; 0 before the first step).
    pub step: usize,
    /// `violated` or `satisfied`.
    pub verdict: Verdict,
    /// The value of a parametric property's variable.
    pub value: Option<String>,
}

impl Found {
    /// The verdict of `r`.
    pub fn of(r: &VerdictRecord) -> Found {
        Found {
            property: r.property.clone(),
            step: r.step,
            verdict: r.verdict,
            value: r.value.clone(),
        }
    }
}

/// What a conversation has done so far, readable while a request of it is in flight
/// (`GET /trac/sessions`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// The session id.
    pub session: String,
    /// Steps committed (events fed to the monitors).
    pub steps: usize,
    /// Messages of the conversation seen (the history the next request is expected to carry).
    pub messages: usize,
    /// The violations, in order.
    pub violations: Vec<Found>,
    /// Every verdict reached, in order.
    pub verdicts: Vec<Found>,
    /// Responses blocked under `shield` (replaced by a sample, a refusal or an error).
    pub interventions: usize,
    /// Model calls spent on samples for blocked responses (`--samples`).
    pub samples: usize,
    /// Responses passed without monitoring: they could not be read as a chat message.
    pub unread: usize,
    /// Log lines that could not be written.
    pub log_errors: usize,
}

/// What became of a response.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// It reaches the agent as it is (committed and logged).
    Pass,
    /// Replaced by a refusal, which is what was committed and logged.
    Refused {
        /// The refusal (an assistant message without tool calls).
        message: Value,
        /// What the response would have violated.
        violations: Vec<Violation>,
    },
    /// Replaced by an error response (`--on-block error`): nothing was committed.
    Blocked {
        /// What the response would have violated.
        violations: Vec<Violation>,
    },
    /// Replaced by a sample of the upstream that violates nothing (`--samples`), which is
    /// what was committed and logged.
    Resampled {
        /// The sample's assistant message.
        message: Value,
        /// Which sample (1 is the first one drawn after the blocked response).
        sample: usize,
        /// What the response would have violated.
        violations: Vec<Violation>,
    },
    /// It could not be read as a chat message: it passes, unmonitored and not logged.
    Unread {
        /// Why.
        reason: String,
    },
}

/// A response checked, nothing committed ([`Conversation::screen`]).
#[derive(Clone, Debug)]
pub enum Screen {
    /// It violates nothing.
    Clean,
    /// It would lead these properties to ⊥.
    Violates(Vec<Violation>),
    /// It cannot be read as a chat message (why).
    Unread(String),
}

/// One conversation (behind its own lock in the gateway).
#[derive(Clone)]
pub struct Conversation {
    id: String,
    sup: Supervisor,
    reader: MessageReader,
    seen: usize,
    stats: Arc<Mutex<Stats>>,
}

impl Conversation {
    /// Conversation `id`, a new session of `template`'s monitors, keeping its stats in
    /// `stats` (shared with whoever shows them).
    pub fn new(id: &str, template: &Supervisor, stats: Arc<Mutex<Stats>>) -> Conversation {
        stats.lock().unwrap_or_else(|e| e.into_inner()).session = id.to_string();
        Conversation {
            id: id.to_string(),
            sup: template.fork(Some(id)),
            reader: MessageReader::new(id),
            seen: 0,
            stats,
        }
    }

    /// Its session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Messages seen so far.
    pub fn seen(&self) -> usize {
        self.seen
    }

    /// Its stats, shared (they stay readable while the conversation is locked).
    pub fn stats(&self) -> Arc<Mutex<Stats>> {
        self.stats.clone()
    }

    fn with_stats(&self, f: impl FnOnce(&mut Stats)) {
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s);
        s.steps = self.sup.steps();
        s.messages = self.seen;
    }

    /// The log line of message `m`: the message with the conversation's `session`.
    fn line(&self, m: &Value) -> String {
        let mut m = m.clone();
        if let Some(o) = m.as_object_mut() {
            o.insert("session".into(), json!(self.id));
        }
        m.to_string()
    }

    /// Commits the events of one log line and writes the line.
    fn commit(&mut self, line: &str, events: &[Event], log: Option<&Log>) {
        let mut found = Vec::new();
        for ev in events {
            found.extend(self.sup.commit_event(ev).iter().map(Found::of));
        }
        let failed = log.is_some_and(|l| l.step(line).is_err());
        self.with_stats(|s| {
            for f in found {
                if f.verdict == Verdict::Violated {
                    s.violations.push(f.clone());
                }
                s.verdicts.push(f);
            }
            s.log_errors += usize::from(failed);
        });
    }

    /// The messages of a request: those past [`Conversation::seen`] are committed (and
    /// logged), in order. A request carrying fewer messages than seen adds none. Returns how
    /// many were new.
    ///
    /// # Errors
    /// A new message the trace reader refuses (a misspelled role, a malformed tool call):
    /// nothing of the request is committed.
    pub fn take_request(
        &mut self,
        messages: &[Value],
        log: Option<&Log>,
    ) -> Result<usize, TraceError> {
        let new = messages.get(self.seen..).unwrap_or(&[]);
        let lines: Vec<String> = new.iter().map(|m| self.line(m)).collect();
        let mut reader = self.reader.clone();
        let mut events = Vec::with_capacity(lines.len());
        for l in &lines {
            events.push(reader.read_line(l)?);
        }
        self.reader = reader;
        self.seen += new.len();
        for (l, evs) in lines.iter().zip(&events) {
            self.commit(l, evs, log);
        }
        Ok(new.len())
    }

    /// The rules `events` (one message) would violate now, committing nothing.
    fn violations(&self, events: &[Event]) -> Vec<Violation> {
        let checks: Vec<Check> = match events {
            [one] => vec![self.sup.check_event(one)],
            several => {
                let mut probe = self.sup.clone();
                several
                    .iter()
                    .map(|e| {
                        let c = probe.check_event(e);
                        probe.commit_event(e);
                        c
                    })
                    .collect()
            }
        };
        let props = self.sup.properties();
        let mut out: Vec<Violation> = Vec::new();
        for (property, value) in checks.into_iter().flat_map(|c| c.violated) {
            let rule = props
                .iter()
                .find(|p| p.id == property)
                .map(|p| {
                    if p.description.trim().is_empty() {
                        p.english.clone()
                    } else {
                        p.description.clone()
                    }
                })
                .unwrap_or_else(|| property.clone());
            let v = Violation {
                property,
                value,
                rule,
            };
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    /// What assistant message `message` would do as the next step, committing nothing.
    pub fn screen(&self, message: &Value) -> Screen {
        let line = self.line(message);
        let mut reader = self.reader.clone();
        match reader.read_line(&line) {
            Err(e) => Screen::Unread(e.message.clone()),
            Ok(events) => {
                let v = self.violations(&events);
                if v.is_empty() {
                    Screen::Clean
                } else {
                    Screen::Violates(v)
                }
            }
        }
    }

    /// A blocked response (`original`, violating `violations`) after `samples` more were
    /// drawn: the last of them is committed and logged when `chosen` (it violates nothing:
    /// [`Conversation::screen`] said so, and nothing was committed since), else the response is
    /// replaced as `on_block` says. The intervention is recorded with every sample and the
    /// model calls spent (the response and its samples).
    pub fn take_resampled(
        &mut self,
        original: &Value,
        violations: Vec<Violation>,
        samples: Vec<Sample>,
        chosen: bool,
        on_block: OnBlock,
        log: Option<&Log>,
    ) -> Outcome {
        let picked = if chosen {
            samples.last().and_then(|s| s.message.clone())
        } else {
            None
        };
        let Some(message) = picked else {
            return self.block(original, violations, &samples, on_block, log);
        };
        let step = self.sup.steps() + 1;
        let line = self.line(&message);
        let Ok(events) = self.reader.read_line(&line) else {
            return self.block(original, violations, &samples, on_block, log);
        };
        self.seen += 1;
        self.commit(&line, &events, log);
        let record = json!({
            "session": self.id,
            "step": step,
            "kind": "shield",
            "on_block": on_block.as_str(),
            "committed": true,
            "properties": violations,
            "replaced": original,
            "by": message,
            "samples": samples,
            "chosen": samples.len(),
            "model_calls": 1 + samples.len(),
        });
        let failed = log.is_some_and(|l| l.intervention(&record).is_err());
        let drawn = samples.len();
        self.with_stats(|s| {
            s.interventions += 1;
            s.samples += drawn;
            s.log_errors += usize::from(failed);
        });
        Outcome::Resampled {
            message,
            sample: drawn,
            violations,
        }
    }

    /// The response's assistant message: checked first when `shield` is given (a message that
    /// would lead a property to ⊥ is replaced, as `shield` says), then committed and logged.
    pub fn take_response(
        &mut self,
        message: &Value,
        shield: Option<OnBlock>,
        log: Option<&Log>,
    ) -> Outcome {
        let line = self.line(message);
        let mut reader = self.reader.clone();
        let events = match reader.read_line(&line) {
            Ok(evs) => evs,
            Err(e) => {
                // The agent may still append it to its history: count it as seen.
                self.seen += 1;
                self.with_stats(|s| s.unread += 1);
                return Outcome::Unread {
                    reason: e.message.clone(),
                };
            }
        };
        if let Some(on_block) = shield {
            let violations = self.violations(&events);
            if !violations.is_empty() {
                return self.block(message, violations, &[], on_block, log);
            }
        }
        self.reader = reader;
        self.seen += 1;
        self.commit(&line, &events, log);
        Outcome::Pass
    }

    /// A response that was not answered by the upstream in a form the gateway could read (a
    /// body that is not a completion): it passes unmonitored.
    pub fn note_unread(&mut self) {
        self.with_stats(|s| s.unread += 1);
    }

    /// Replaces blocked response `original` as `on_block` says (after `samples`, none of
    /// which could be used), and records the intervention.
    fn block(
        &mut self,
        original: &Value,
        violations: Vec<Violation>,
        samples: &[Sample],
        on_block: OnBlock,
        log: Option<&Log>,
    ) -> Outcome {
        let step = self.sup.steps() + 1;
        let (by, outcome) = match on_block {
            OnBlock::Refuse => {
                let message = refusal_message(&refusal_text(&violations));
                let line = self.line(&message);
                // A refusal is a plain assistant message: the reader always reads it.
                if let Ok(evs) = self.reader.read_line(&line) {
                    self.seen += 1;
                    self.commit(&line, &evs, log);
                }
                (
                    message.clone(),
                    Outcome::Refused {
                        message,
                        violations: violations.clone(),
                    },
                )
            }
            OnBlock::Error => {
                let body = blocked_error(&violations).body();
                (
                    serde_json::from_slice(&body).unwrap_or(Value::Null),
                    Outcome::Blocked {
                        violations: violations.clone(),
                    },
                )
            }
        };
        let record = json!({
            "session": self.id,
            "step": step,
            "kind": "shield",
            "on_block": on_block.as_str(),
            "committed": on_block == OnBlock::Refuse,
            "properties": violations,
            "replaced": original,
            "by": by,
            "samples": samples,
            "chosen": null,
            "model_calls": 1 + samples.len(),
        });
        let failed = log.is_some_and(|l| l.intervention(&record).is_err());
        self.with_stats(|s| {
            s.interventions += 1;
            s.samples += samples.len();
            s.log_errors += usize::from(failed);
        });
        outcome
    }
}
