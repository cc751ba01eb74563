//! One conversation: its session of the library's audit driver (a [`Supervisor`] forked from
//! the one of its monitor thread, [`crate::monitors`]), the messages it has seen, and what its
//! steps gave.
//!
//! A request's steps are the messages it adds to the conversation's history (user messages,
//! tool results, and on the first request the system message), then the response's assistant
//! message. Messages are compared by content ([`message_key`], [`match_history`]): a request
//! that carries the whole history adds what follows it; one that carries only a window of it
//! (its newest message and what follows) adds what follows that message; one that does not carry
//! its newest message at all (the client sends only its newest messages, or rewound or edited
//! its history) adds its messages past the prefix it shares with the history, and the gateway
//! writes a notice (stderr once per conversation and kind, the interventions file, the
//! session's `windows` / `divergences` counts). No message is committed twice, and none is
//! dropped without a notice. Each message is written as a log line (the message with a `session`
//! field), and that line is read back by the trace reader ([`MessageReader`]) into the events
//! that are checked and committed: so the gateway's events are, by construction, the ones
//! `trac audit` reads from the log.

use crate::log::Log;
use crate::options::OnBlock;
use crate::shield::{blocked_error, refusal_message, refusal_text, Sample, Violation};
use serde::Serialize;
use serde_json::{json, Value};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use trac_agent::predict::Continuation;
use trac_agent::supervisor::{Check, Exact, Supervisor};
use trac_runtime::audit::VerdictRecord;
use trac_runtime::trace::{Event, MessageReader, TraceError};
use trac_runtime::Verdict;
use trac_spec::spec::CheckedSpec;

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
    /// Requests that carried only a window of the history: the messages after the newest
    /// seen one were taken as new steps ([`HistoryMatch::Window`]).
    pub windows: usize,
    /// Requests that did not carry the history's newest message (a client that sends only its
    /// newest messages, or rewound or edited its history): their messages past the prefix
    /// shared with the history were taken as new steps ([`HistoryMatch::Diverged`]).
    pub divergences: usize,
    /// The violations, in order.
    pub violations: Vec<Found>,
    /// Every verdict reached, in order.
    pub verdicts: Vec<Found>,
    /// Interventions: responses blocked under `shield` (replaced by a sample, a refusal or an
    /// error), and responses at risk under `resample`, `inject` or `switch`.
    pub interventions: usize,
    /// Model calls spent beyond the responses themselves: samples for blocked responses
    /// (`--samples`), and the answers and prediction samples of the predictive interventions.
    pub samples: usize,
    /// Responses passed without monitoring: they could not be read as a chat message.
    pub unread: usize,
    /// Log lines that could not be written.
    pub log_errors: usize,
    /// The properties not audited so far, as `trac audit` reports them: none of their
    /// propositions can hold on the conversation's steps (their rules read roles, tools,
    /// arguments or fields no step has, as tool-call propositions on a text-only
    /// conversation), so they pass vacuously.
    pub not_audited: Vec<NotAudited>,
}

/// A property that could not be audited on a conversation ([`Stats::not_audited`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotAudited {
    /// The property's id.
    pub property: String,
    /// Its propositions, none of which can hold on the steps so far.
    pub propositions: Vec<String>,
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

/// How a request's messages stand to the conversation's history ([`match_history`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryMatch {
    /// The request starts with the whole history (the usual case, and the first request).
    Extends,
    /// It carries the history's newest message, but not the whole history before it (a
    /// client that trims old messages): what follows that message is new.
    Window,
    /// It does not carry the history's newest message: what follows the prefix it shares with
    /// the history is new (the seen messages past that prefix stay committed: a trace is not
    /// rewound).
    Diverged,
}

/// Where a request's new messages start ([`match_history`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistorySplit {
    /// How the request stands to the history.
    pub kind: HistoryMatch,
    /// The index of its first new message.
    pub new_from: usize,
    /// The length of the prefix it shares with the history.
    pub common: usize,
}

/// The key a message is compared by: a hash of its role, its text (string content, or the
/// text parts of an array; `null` and absent are empty), its tool calls (id, name, arguments),
/// `tool_call_id` and `name`. Fields a client may add or drop when it keeps a message in its
/// history (`refusal`, `annotations`, `audio`, ...) do not count.
pub fn message_key(m: &Value) -> u64 {
    let text = match m.get("content") {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(Value::Array(parts)) if parts.iter().all(|p| p.get("text").is_some()) => {
            Value::String(parts.iter().filter_map(|p| p["text"].as_str()).collect())
        }
        Some(other) => other.clone(),
    };
    let calls: Vec<Value> = m
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    json!([
                        c.get("id"),
                        c.pointer("/function/name"),
                        c.pointer("/function/arguments")
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    let key = json!([
        m.get("role"),
        text,
        calls,
        m.get("tool_call_id"),
        m.get("name")
    ]);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.to_string().hash(&mut h);
    h.finish()
}

/// Where the new messages of a request (their keys `request`) start, given the conversation's
/// history (`history`): past the whole history when the request starts with it; else past the
/// request's last message equal to the history's newest one; else past the prefix the two
/// share.
pub fn match_history(history: &[u64], request: &[u64]) -> HistorySplit {
    let common = history
        .iter()
        .zip(request)
        .take_while(|(a, b)| a == b)
        .count();
    if common == history.len() {
        return HistorySplit {
            kind: HistoryMatch::Extends,
            new_from: common,
            common,
        };
    }
    let newest = history[history.len() - 1];
    match request.iter().rposition(|k| *k == newest) {
        Some(i) => HistorySplit {
            kind: HistoryMatch::Window,
            new_from: i + 1,
            common,
        },
        None => HistorySplit {
            kind: HistoryMatch::Diverged,
            new_from: common,
            common,
        },
    }
}

/// A message of a request that the trace reader refuses.
#[derive(Debug, thiserror::Error)]
#[error("'messages[{index}]': {}", .error.message)]
pub struct BadMessage {
    /// Its index in the request's `messages`.
    pub index: usize,
    /// Why.
    pub error: TraceError,
}

/// One conversation (behind its own lock in the gateway).
#[derive(Clone)]
pub struct Conversation {
    id: String,
    sup: Supervisor,
    reader: MessageReader,
    /// The specs monitored (for the coverage: which properties could be audited).
    specs: Arc<[CheckedSpec]>,
    /// The keys ([`message_key`]) of the messages seen, in order: the history as the client
    /// is expected to hold it.
    history: Vec<u64>,
    /// History notices already printed on stderr (window, diverged): once each.
    told: [bool; 2],
    stats: Arc<Mutex<Stats>>,
}

impl Conversation {
    /// Conversation `id`, a new session of `template`'s monitors (of `specs`), keeping its
    /// stats in `stats` (shared with whoever shows them).
    pub fn new(
        id: &str,
        template: &Supervisor,
        specs: Arc<[CheckedSpec]>,
        stats: Arc<Mutex<Stats>>,
    ) -> Conversation {
        stats.lock().unwrap_or_else(|e| e.into_inner()).session = id.to_string();
        Conversation {
            id: id.to_string(),
            sup: template.fork(Some(id)),
            reader: MessageReader::new(id),
            specs,
            history: Vec::new(),
            told: [false; 2],
            stats,
        }
    }

    /// Its session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Messages seen so far.
    pub fn seen(&self) -> usize {
        self.history.len()
    }

    /// Its stats, shared (they stay readable while the conversation is locked).
    pub fn stats(&self) -> Arc<Mutex<Stats>> {
        self.stats.clone()
    }

    fn with_stats(&self, f: impl FnOnce(&mut Stats)) {
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s);
        s.steps = self.sup.steps();
        s.messages = self.history.len();
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
        let not_audited: Vec<NotAudited> = self
            .sup
            .coverage()
            .map(|c| c.unaudited_properties(&self.specs, false))
            .unwrap_or_default()
            .into_iter()
            .map(|(property, propositions)| NotAudited {
                property,
                propositions,
            })
            .collect();
        self.with_stats(|s| {
            s.not_audited = not_audited;
            for f in found {
                if f.verdict == Verdict::Violated {
                    s.violations.push(f.clone());
                }
                s.verdicts.push(f);
            }
            s.log_errors += usize::from(failed);
        });
    }

    /// The messages of a request: its new ones ([`match_history`]) are committed (and
    /// logged), in order; a request that does not extend the history gets a notice
    /// ([`Conversation::notice`]). Returns how many were new.
    ///
    /// # Errors
    /// A new message the trace reader refuses (a misspelled role, a malformed tool call), with
    /// its index: nothing of the request is committed.
    pub fn take_request(
        &mut self,
        messages: &[Value],
        log: Option<&Log>,
    ) -> Result<usize, BadMessage> {
        let keys: Vec<u64> = messages.iter().map(message_key).collect();
        let split = match_history(&self.history, &keys);
        let new = &messages[split.new_from..];
        let lines: Vec<String> = new.iter().map(|m| self.line(m)).collect();
        let mut reader = self.reader.clone();
        let mut events = Vec::with_capacity(lines.len());
        for (i, l) in lines.iter().enumerate() {
            let evs = reader.read_line(l).map_err(|error| BadMessage {
                index: split.new_from + i,
                error,
            })?;
            events.push(evs);
        }
        self.reader = reader;
        if split.kind != HistoryMatch::Extends {
            self.notice(split, messages.len(), log);
        }
        match split.kind {
            HistoryMatch::Diverged => self.history = keys,
            _ => self.history.extend_from_slice(&keys[split.new_from..]),
        }
        for (l, evs) in lines.iter().zip(&events) {
            self.commit(l, evs, log);
        }
        Ok(new.len())
    }

    /// Records a request (of `len` messages) that does not extend the history: a `history`
    /// record in the interventions file, its count in the stats, and a line on stderr the first
    /// time of each kind in this conversation.
    fn notice(&mut self, split: HistorySplit, len: usize, log: Option<&Log>) {
        let (seen, new) = (self.history.len(), len - split.new_from);
        let window = split.kind == HistoryMatch::Window;
        let record = json!({
            "session": self.id,
            "step": self.sup.steps() + 1,
            "kind": "history",
            "match": split.kind,
            "request_messages": len,
            "history_messages": seen,
            "common_prefix": split.common,
            "new": new,
            // Seen messages the request does not carry past the shared prefix (a rewind or
            // edit): they stay committed.
            "not_resent": if window { 0 } else { seen - split.common },
        });
        let failed = log.is_some_and(|l| l.intervention(&record).is_err());
        self.with_stats(|s| {
            if window {
                s.windows += 1;
            } else {
                s.divergences += 1;
            }
            s.log_errors += usize::from(failed);
        });
        let told = &mut self.told[usize::from(!window)];
        if !*told {
            *told = true;
            let what = if window {
                "carried only a window of the conversation's history: the messages after the newest one seen are taken as new steps".to_string()
            } else {
                format!(
                    "does not carry the conversation's newest message (only the newest messages sent, or the history rewound or edited): its {new} messages past the {} shared with the history are taken as new steps; the {} seen after those stay committed",
                    split.common,
                    seen - split.common
                )
            };
            eprintln!(
                "trac gateway: notice: a request of session `{}` {what} (counted in GET /trac/sessions from now on, without this notice)",
                self.id
            );
        }
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
        self.history.push(message_key(&message));
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
                self.history.push(message_key(message));
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
        self.history.push(message_key(message));
        self.commit(&line, &events, log);
        Outcome::Pass
    }

    /// The exact look-ahead of assistant message `message` as the next step, over a
    /// continuation of `k` model responses (the message first), committing nothing: per
    /// property (in order), risk 1 when the message itself leads it to ⊥; with `k = 1` risk 0
    /// otherwise (the message is the whole continuation); with `k > 1` what
    /// [`Supervisor::exact`] decides from the state after the message with nothing known of
    /// what follows, over any number of steps (a continuation's tool results are steps too, so
    /// no bound on its length in steps is assumed). `None` when the message cannot be read.
    pub fn lookahead(&self, message: &Value, k: u32) -> Option<Vec<Exact>> {
        let mut reader = self.reader.clone();
        let events = reader.read_line(&self.line(message)).ok()?;
        let mut probe = self.sup.clone();
        let mut violated: Vec<String> = Vec::new();
        for ev in &events {
            for r in probe.commit_event(ev) {
                if r.verdict == Verdict::Violated && !violated.contains(&r.property) {
                    violated.push(r.property);
                }
            }
        }
        let unknown = |_: &str| None;
        let after = if k > 1 {
            probe.exact(u32::MAX, &unknown)
        } else {
            Vec::new()
        };
        let exact = self
            .sup
            .properties()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let hit = violated.contains(&p.id);
                match after.get(i) {
                    Some(e) if !hit => e.clone(),
                    _ => Exact {
                        property: p.id.clone(),
                        risk: Some(if hit { 1.0 } else { 0.0 }),
                        min_steps: hit.then_some(1),
                        immediate: Vec::new(),
                    },
                }
            })
            .collect();
        Some(exact)
    }

    /// Sampled continuations (each a list of chat messages that would follow the
    /// conversation: responses and tool results) scored on cloned monitors
    /// ([`Supervisor::simulate_events`]), committing nothing. A continuation is cut at its
    /// first message the trace reader refuses.
    pub fn score(&self, continuations: &[Vec<Value>]) -> Vec<Continuation> {
        continuations
            .iter()
            .map(|messages| {
                let mut reader = self.reader.clone();
                let mut events = Vec::new();
                let mut actions = Vec::new();
                for m in messages {
                    let Ok(evs) = reader.read_line(&self.line(m)) else {
                        break;
                    };
                    events.extend(evs);
                    actions.push(m.to_string());
                }
                Continuation {
                    actions,
                    violations: self.sup.simulate_events(&events),
                }
            })
            .collect()
    }

    /// The residuals in plain English of the properties at `indices`
    /// ([`Supervisor::residual_english`]), for `inject` and the interventions' records.
    pub fn residuals(&self, indices: &[usize]) -> Vec<String> {
        indices
            .iter()
            .filter(|&&i| i < self.sup.properties().len())
            .map(|&i| self.sup.residual_english(i))
            .collect()
    }

    /// A response after a predictive intervention (resample, inject, switch): `chosen` (the
    /// response itself, or what replaced it; it was read by [`Conversation::lookahead`], and
    /// nothing was committed since) is committed and logged, and `record` written to the
    /// interventions file with its `session` and `step`. `extra_calls`: the model calls spent
    /// beyond the response itself (counted in the stats' `samples`).
    pub fn take_intervened(
        &mut self,
        chosen: &Value,
        mut record: Value,
        extra_calls: usize,
        log: Option<&Log>,
    ) -> Outcome {
        let step = self.sup.steps() + 1;
        let line = self.line(chosen);
        let Ok(events) = self.reader.read_line(&line) else {
            self.history.push(message_key(chosen));
            self.with_stats(|s| s.unread += 1);
            return Outcome::Unread {
                reason: "the chosen response cannot be read as a chat message".into(),
            };
        };
        self.history.push(message_key(chosen));
        self.commit(&line, &events, log);
        if let Some(o) = record.as_object_mut() {
            o.insert("session".into(), json!(self.id));
            o.insert("step".into(), json!(step));
        }
        let failed = log.is_some_and(|l| l.intervention(&record).is_err());
        self.with_stats(|s| {
            s.interventions += 1;
            s.samples += extra_calls;
            s.log_errors += usize::from(failed);
        });
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
                    self.history.push(message_key(&message));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_extends_trims_or_diverges_from_the_history() {
        let m = |k: u64| k;
        let h = [m(1), m(2), m(3), m(4)];
        let split = |r: &[u64]| {
            let s = match_history(&h, r);
            (s.kind, s.new_from, s.common)
        };
        assert_eq!(split(&[1, 2, 3, 4, 5, 6]), (HistoryMatch::Extends, 4, 4));
        assert_eq!(split(&[1, 2, 3, 4]), (HistoryMatch::Extends, 4, 4));
        assert_eq!(split(&[1, 3, 4, 5]), (HistoryMatch::Window, 3, 1));
        assert_eq!(split(&[4, 5]), (HistoryMatch::Window, 1, 0));
        assert_eq!(split(&[5]), (HistoryMatch::Diverged, 0, 0));
        assert_eq!(split(&[1, 2, 9]), (HistoryMatch::Diverged, 2, 2));
        assert_eq!(split(&[1, 2, 3]), (HistoryMatch::Diverged, 3, 3));
        assert_eq!(
            match_history(&[], &[7, 8]).kind,
            HistoryMatch::Extends,
            "the first request"
        );
    }

    #[test]
    fn a_message_kept_by_a_client_has_the_key_it_had_when_answered() {
        let answered = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
        let kept = json!({"role": "assistant", "refusal": null, "annotations": [], "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
        assert_eq!(message_key(&answered), message_key(&kept));
        let parts = json!({"role": "user", "content": [{"type": "text", "text": "hi"}]});
        assert_eq!(
            message_key(&parts),
            message_key(&json!({"role": "user", "content": "hi"}))
        );
        assert_ne!(
            message_key(&json!({"role": "user", "content": "hi"})),
            message_key(&json!({"role": "user", "content": "hi!"}))
        );
        let other_args = json!({"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]});
        assert_ne!(message_key(&answered), message_key(&other_args));
    }
}
