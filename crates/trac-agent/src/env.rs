//! Environments an agent acts in: the [`Environment`] trait, and [`CommandEnv`], any environment
//! served by a child process over JSON lines (`trac run --env-cmd CMD`).
//!
//! # The JSON-lines protocol of [`CommandEnv`]
//! One request per line on the child's stdin, one answer per line on its stdout:
//!
//! | request | answer |
//! | --- | --- |
//! | `{"op": "reset", "seed": S}` | `{"observation": "...", "instructions"?: "...", "task"?: "...", "noop"?: "...", "state_labels"?: {"p": true, ...}}` |
//! | `{"op": "step", "action": "..."}` | `{"observation": "...", "reward"?: 0.0, "done"?: false, "labels"?: ["p", ...], "state_labels"?: {...}}` |
//!
//! `instructions` (the domain and the allowed actions, the start of the agent's system prompt),
//! `task` (its goals) and `noop` (an action that changes nothing, for the shield) are read once,
//! at reset. `labels` are the ground-truth atomic propositions of the step; without them the
//! spec's labeling rules label the action. `state_labels` are the propositions the environment's
//! state fixes before the next action (used by the exact look-ahead). A child that exits, answers
//! something else than such an object, or does not answer within the timeout is an error naming
//! the request, never a hang.

use serde_json::{json, Value};
use std::time::Duration;
use trac_llm::child::{ChildOptions, ChildStderr, JsonLinesChild};

/// What one step of an environment returned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// What the agent observes after its action.
    pub observation: String,
    /// The reward of this step.
    pub reward: f64,
    /// Whether the episode is over.
    pub done: bool,
    /// The ground-truth atomic propositions of this step (the action's and the state's before
    /// it), when the environment knows them.
    pub labels: Option<Vec<String>>,
}

/// An environment failed (not a bad action: those are observations).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("environment {env}: {request}: {message}")]
pub struct EnvError {
    /// The environment's name.
    pub env: String,
    /// The request that failed (`reset`, `step 4`).
    pub request: String,
    /// What happened.
    pub message: String,
}

/// An environment an agent acts in, one text action per step.
///
/// An action the environment cannot parse or execute is not an error: it is an observation
/// saying so. Errors are failures of the environment itself (a child process that died).
pub trait Environment: Send {
    /// A short name for messages and logs.
    fn name(&self) -> String;

    /// Starts an episode; returns the first observation.
    ///
    /// # Errors
    /// The environment failed.
    fn reset(&mut self, seed: u64) -> Result<String, EnvError>;

    /// Executes `action`.
    ///
    /// # Errors
    /// The environment failed.
    fn step(&mut self, action: &str) -> Result<Outcome, EnvError>;

    /// The domain and the allowed actions: the start of the agent's system prompt.
    fn instructions(&self) -> String;

    /// The goals of the episode (the agent's task).
    fn task(&self) -> String;

    /// An action that changes nothing (the shield's fallback).
    fn noop(&self) -> String;

    /// The propositions the current state fixes for the next step, with their values (used by
    /// the exact look-ahead for the first step). Default: none.
    fn state_labels(&self) -> Vec<(String, bool)> {
        Vec::new()
    }

    /// A copy to simulate actions on without touching this one (sampled continuations, trying a
    /// candidate action), or `None` when the environment cannot be copied (a child process).
    fn try_clone(&self) -> Option<Box<dyn Environment>>;
}

/// An environment served by a child process over JSON lines (see the module docs).
pub struct CommandEnv {
    command: String,
    timeout: Duration,
    child: JsonLinesChild,
    instructions: String,
    task: String,
    noop: String,
    state_labels: Vec<(String, bool)>,
    steps: usize,
}

impl std::fmt::Debug for CommandEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandEnv")
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

impl CommandEnv {
    /// Starts `command` (`PROGRAM ARGS...`, split as a POSIX shell would), waiting at most
    /// `timeout` for each answer.
    ///
    /// # Errors
    /// An empty or unbalanced command line, or a program that cannot be started.
    pub fn spawn(command: &str, timeout: Duration) -> Result<CommandEnv, EnvError> {
        let fail = |message: String| EnvError {
            env: command.to_string(),
            request: "start".into(),
            message,
        };
        let argv = shlex::split(command)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| fail("expected PROGRAM ARGS...".into()))?;
        let opts = ChildOptions {
            stderr: ChildStderr::Inherit,
            closed_message: "the child closed its stdout (exited?)",
        };
        let child = JsonLinesChild::spawn(&argv, opts)
            .map_err(|e| fail(format!("cannot start `{}`: {e}", argv[0])))?;
        Ok(CommandEnv {
            command: command.to_string(),
            timeout,
            child,
            instructions: String::new(),
            task: String::new(),
            noop: "wait".into(),
            state_labels: Vec::new(),
            steps: 0,
        })
    }

    fn call(&mut self, request: &str, body: Value) -> Result<Value, EnvError> {
        let fail = |message: String| EnvError {
            env: self.command.clone(),
            request: request.to_string(),
            message,
        };
        let answer = self
            .child
            .exchange(&body.to_string(), self.timeout)
            .map_err(|e| e.to_string())
            .and_then(|l| {
                let v: Value = serde_json::from_str(l.trim())
                    .map_err(|e| format!("the answer is not JSON ({e}): {}", excerpt(l.trim())))?;
                if v.get("observation").and_then(Value::as_str).is_none() {
                    return Err(format!(
                        "the answer has no string `observation`: {}",
                        excerpt(l.trim())
                    ));
                }
                Ok(v)
            });
        match answer {
            Ok(v) => Ok(v),
            // Broken by an earlier failure: stopped then.
            Err(message) if self.child.broken().is_some() => Err(fail(message)),
            Err(message) => {
                self.child.stop();
                self.child.mark_broken(message.clone());
                Err(fail(message))
            }
        }
    }

    fn read_state_labels(&mut self, v: &Value) {
        if let Some(obj) = v.get("state_labels").and_then(Value::as_object) {
            self.state_labels = obj
                .iter()
                .filter_map(|(k, b)| Some((k.clone(), b.as_bool()?)))
                .collect();
        }
    }
}

/// The start of an answer line, for error messages.
fn excerpt(s: &str) -> String {
    trac_llm::model::excerpt(s, 200)
}

impl Environment for CommandEnv {
    fn name(&self) -> String {
        format!("cmd:{}", self.command)
    }

    fn reset(&mut self, seed: u64) -> Result<String, EnvError> {
        self.steps = 0;
        let v = self.call("reset", json!({"op": "reset", "seed": seed}))?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        if let Some(i) = s("instructions") {
            self.instructions = i;
        }
        if let Some(t) = s("task") {
            self.task = t;
        }
        if let Some(n) = s("noop") {
            self.noop = n;
        }
        self.read_state_labels(&v);
        Ok(s("observation").unwrap_or_default())
    }

    fn step(&mut self, action: &str) -> Result<Outcome, EnvError> {
        self.steps += 1;
        let request = format!("step {}", self.steps);
        let v = self.call(&request, json!({"op": "step", "action": action}))?;
        self.read_state_labels(&v);
        let labels = match v.get("labels") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|l| {
                        l.as_str().map(str::to_string).ok_or_else(|| EnvError {
                            env: self.command.clone(),
                            request: request.clone(),
                            message: format!("`labels` holds a non-string: {l}"),
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(other) => {
                return Err(EnvError {
                    env: self.command.clone(),
                    request,
                    message: format!("`labels` is not an array: {other}"),
                })
            }
        };
        Ok(Outcome {
            observation: v["observation"].as_str().unwrap_or_default().to_string(),
            reward: v.get("reward").and_then(Value::as_f64).unwrap_or(0.0),
            done: v.get("done").and_then(Value::as_bool).unwrap_or(false),
            labels,
        })
    }

    fn instructions(&self) -> String {
        self.instructions.clone()
    }

    fn task(&self) -> String {
        self.task.clone()
    }

    fn noop(&self) -> String {
        self.noop.clone()
    }

    fn state_labels(&self) -> Vec<(String, bool)> {
        self.state_labels.clone()
    }

    fn try_clone(&self) -> Option<Box<dyn Environment>> {
        None
    }
}
