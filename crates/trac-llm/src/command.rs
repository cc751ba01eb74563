//! A command model (`--model cmd:PROGRAM ARGS...`): a child process that reads one request per
//! line on stdin and writes one response per line on stdout, in the JSON of the HTTP API.
//!
//! Each request is a chat-completions request object on one line (`{"model", "messages",
//! "temperature", "n"?, "seed"?, ...}`, as sent to `/v1/chat/completions`); the answer is one line
//! holding a chat-completion object (`{"choices": [{"message": {"content": ..}}], "usage"?: ..}`).
//! Requests are sent one at a time. A child that exits, closes stdout, answers a line that is not
//! a chat-completion object, or does not answer within the timeout is an error naming the request
//! (with the end of the child's stderr); the child is then stopped and later requests fail at once
//! (answers could no longer be matched to requests). Lines are read by a reader thread, so a
//! silent child costs a timeout, never a hang.

use crate::child::{ChildOptions, ChildStderr, JsonLinesChild};
use crate::model::{
    excerpt, gather_choices, ChatModel, ChatRequest, ChatResponse, ConfigError, ModelError, Usage,
    UsageCounter,
};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

/// Lines of the child's stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// A model served by a child process speaking JSON lines.
pub struct CommandModel {
    name: String,
    program: Vec<String>,
    timeout: Duration,
    child: Mutex<JsonLinesChild>,
    usage: UsageCounter,
}

impl std::fmt::Debug for CommandModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandModel")
            .field("program", &self.program)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl CommandModel {
    /// Starts `command` (`PROGRAM ARGS...`, split as a POSIX shell would, without expansions),
    /// waiting at most `timeout` for each answer. The model's name is `cmd:` + `command`.
    ///
    /// Errors: an empty or unbalanced command line, or a program that cannot be started
    /// ([`ModelError::Config`]).
    pub fn spawn(command: &str, timeout: Duration) -> Result<CommandModel, ModelError> {
        let program = shlex::split(command)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ModelError::Config(ConfigError::BadCommand(command.to_string())))?;
        let opts = ChildOptions {
            stderr: ChildStderr::Keep(STDERR_LINES),
            closed_message: "the child closed its stdout",
        };
        let child = JsonLinesChild::spawn(&program, opts).map_err(|e| {
            ModelError::Config(ConfigError::Start {
                program: program[0].clone(),
                source: Arc::new(e),
            })
        })?;
        Ok(CommandModel {
            name: format!("cmd:{command}"),
            program,
            timeout,
            child: Mutex::new(child),
            usage: UsageCounter::default(),
        })
    }

    fn call(&self, req: &ChatRequest, n: usize, sample: usize) -> Result<ChatResponse, ModelError> {
        let name = req.name();
        let fail = |message: String| ModelError::Command {
            request: name.clone(),
            message,
        };
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = child.broken() {
            return Err(fail(format!("unusable since an earlier failure: {why}")));
        }
        let line = req.to_openai_json(&self.name, n, sample).to_string();
        self.usage.add(Usage {
            requests: 1,
            ..Usage::default()
        });
        let answer = child
            .exchange(&line, self.timeout)
            .map_err(|e| e.to_string());
        let parsed = answer.and_then(|l| {
            let v: serde_json::Value = serde_json::from_str(l.trim())
                .map_err(|e| format!("the answer is not JSON ({e}): {}", excerpt(l.trim(), 200)))?;
            ChatResponse::from_openai_json(&v)
                .map_err(|m| format!("{m}: {}", excerpt(l.trim(), 200)))
        });
        match parsed {
            Ok(r) => {
                self.usage.add(Usage {
                    prompt_tokens: r.usage.prompt_tokens,
                    completion_tokens: r.usage.completion_tokens,
                    ..Usage::default()
                });
                Ok(r)
            }
            Err(message) => {
                let status = child
                    .stop()
                    .map(|s| format!(" (child {s})"))
                    .unwrap_or_default();
                let message = format!("{message}{status}{}", child.stderr_tail());
                child.mark_broken(message.clone());
                Err(fail(message))
            }
        }
    }
}

impl ChatModel for CommandModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        gather_choices(req, true, |n, sample| self.call(req, n, sample))
    }

    fn usage(&self) -> Usage {
        self.usage.get()
    }
}
