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

use crate::model::{
    excerpt, gather_choices, ChatModel, ChatRequest, ChatResponse, ModelError, Usage, UsageCounter,
};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Lines of the child's stderr kept for error messages.
const STDERR_LINES: usize = 20;

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    /// Why the child can no longer be used, once it cannot.
    broken: Option<String>,
}

/// A model served by a child process speaking JSON lines.
pub struct CommandModel {
    name: String,
    program: Vec<String>,
    timeout: Duration,
    state: Mutex<Running>,
    stderr: Arc<Mutex<VecDeque<String>>>,
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
            .ok_or_else(|| {
                ModelError::Config(format!(
                    "bad command model `cmd:{command}`: expected cmd:PROGRAM ARGS..."
                ))
            })?;
        let mut child = Command::new(&program[0])
            .args(&program[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                ModelError::Config(format!("cannot start command model `{}`: {e}", program[0]))
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) => {
                        let _ = tx.send(Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "the child closed its stdout",
                        )));
                        return;
                    }
                    Ok(_) => {
                        if tx.send(Ok(line)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail2 = Arc::clone(&tail);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                let mut t = tail2.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == STDERR_LINES {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        Ok(CommandModel {
            name: format!("cmd:{command}"),
            program,
            timeout,
            state: Mutex::new(Running {
                child,
                stdin,
                lines: rx,
                broken: None,
            }),
            stderr: tail,
            usage: UsageCounter::default(),
        })
    }

    fn stderr_tail(&self) -> String {
        // Give the stderr thread a moment to collect the last lines of a dying child.
        std::thread::sleep(Duration::from_millis(50));
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        if t.is_empty() {
            String::new()
        } else {
            let lines: Vec<&str> = t.iter().map(String::as_str).collect();
            format!("; its stderr ends with:\n  {}", lines.join("\n  "))
        }
    }

    fn call(&self, req: &ChatRequest, n: usize, sample: usize) -> Result<ChatResponse, ModelError> {
        let name = req.name();
        let fail = |message: String| ModelError::Command {
            request: name.clone(),
            message,
        };
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = &st.broken {
            return Err(fail(format!("unusable since an earlier failure: {why}")));
        }
        let line = req.to_openai_json(&self.name, n, sample).to_string();
        self.usage.add(Usage {
            requests: 1,
            ..Usage::default()
        });
        let written = st
            .stdin
            .write_all(line.as_bytes())
            .and_then(|_| st.stdin.write_all(b"\n"))
            .and_then(|_| st.stdin.flush());
        let answer = match written {
            Err(e) => Err(format!("cannot write the request: {e}")),
            Ok(()) => match st.lines.recv_timeout(self.timeout) {
                Ok(Ok(l)) => Ok(l),
                Ok(Err(e)) => Err(format!("no answer: {e}")),
                Err(RecvTimeoutError::Timeout) => Err(format!(
                    "no answer within {:.1} s",
                    self.timeout.as_secs_f64()
                )),
                Err(RecvTimeoutError::Disconnected) => Err("no answer: stdout closed".into()),
            },
        };
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
                let _ = st.child.kill();
                let status = st
                    .child
                    .wait()
                    .map(|s| format!(" (child {s})"))
                    .unwrap_or_default();
                let message = format!("{message}{status}{}", self.stderr_tail());
                st.broken = Some(message.clone());
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

impl Drop for CommandModel {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = st.child.kill();
        let _ = st.child.wait();
    }
}
