//! A child process spoken to in JSON lines: one request line on its stdin, one answer line on
//! its stdout, each answer awaited at most a timeout. Used by the command model
//! ([`crate::command`]) and by `trac-agent`'s command environments.
//!
//! Lines are read by a reader thread, so a silent child costs a timeout, never a hang. The
//! child's stderr is inherited, or its last lines kept for error messages
//! ([`ChildStderr::Keep`]). After a failure the owner marks the child broken
//! ([`JsonLinesChild::mark_broken`]): answers could no longer be matched to requests, so later
//! exchanges fail at once. The child is stopped when dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What becomes of the child's stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildStderr {
    /// Inherited: the child writes to this process's stderr.
    Inherit,
    /// Piped; its last `n` lines are kept ([`JsonLinesChild::stderr_tail`]).
    Keep(usize),
}

/// How to start a [`JsonLinesChild`].
#[derive(Clone, Copy, Debug)]
pub struct ChildOptions {
    /// What becomes of the child's stderr.
    pub stderr: ChildStderr,
    /// The message of the error an exchange gets when the child has closed its stdout.
    pub closed_message: &'static str,
}

/// Why one exchange (a request line out, an answer line back) failed.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The child was marked broken by an earlier failure.
    #[error("unusable since an earlier failure: {0}")]
    Broken(String),
    /// The request could not be written to the child's stdin.
    #[error("cannot write the request: {0}")]
    Write(#[source] std::io::Error),
    /// Reading the answer failed, or the child closed its stdout.
    #[error("no answer: {0}")]
    Read(#[source] std::io::Error),
    /// No answer came within the timeout.
    #[error("no answer within {:.1} s", .0.as_secs_f64())]
    Timeout(Duration),
    /// The reader thread has gone.
    #[error("no answer: stdout closed")]
    Disconnected,
}

/// A running child process speaking JSON lines (see the module docs).
pub struct JsonLinesChild {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    stderr: Option<Arc<Mutex<VecDeque<String>>>>,
    broken: Option<String>,
}

impl std::fmt::Debug for JsonLinesChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonLinesChild")
            .field("pid", &self.child.id())
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

impl JsonLinesChild {
    /// Starts `argv[0]` with the arguments `argv[1..]`, stdin and stdout piped.
    ///
    /// # Errors
    /// The program cannot be started.
    ///
    /// # Panics
    /// When `argv` is empty.
    pub fn spawn(argv: &[String], opts: ChildOptions) -> std::io::Result<JsonLinesChild> {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match opts.stderr {
                ChildStderr::Inherit => Stdio::inherit(),
                ChildStderr::Keep(_) => Stdio::piped(),
            })
            .spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let closed = opts.closed_message;
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) => {
                        let _ = tx.send(Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            closed,
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
        let stderr = match opts.stderr {
            ChildStderr::Inherit => None,
            ChildStderr::Keep(n) => {
                let pipe = child.stderr.take().expect("piped stderr");
                let tail = Arc::new(Mutex::new(VecDeque::new()));
                let tail2 = Arc::clone(&tail);
                std::thread::spawn(move || {
                    for line in BufReader::new(pipe).lines() {
                        let Ok(line) = line else { return };
                        let mut t = tail2.lock().unwrap_or_else(|e| e.into_inner());
                        if t.len() == n {
                            t.pop_front();
                        }
                        t.push_back(line);
                    }
                });
                Some(tail)
            }
        };
        Ok(JsonLinesChild {
            child,
            stdin,
            lines: rx,
            stderr,
            broken: None,
        })
    }

    /// Fails at once when the child is broken; else writes `line` and a newline to the child's
    /// stdin and waits at most `timeout` for its next line (returned with its newline).
    ///
    /// # Errors
    /// See [`ExchangeError`]. The child is not marked broken: its owner decides.
    pub fn exchange(&mut self, line: &str, timeout: Duration) -> Result<String, ExchangeError> {
        if let Some(why) = &self.broken {
            return Err(ExchangeError::Broken(why.clone()));
        }
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|_| self.stdin.write_all(b"\n"))
            .and_then(|_| self.stdin.flush())
            .map_err(ExchangeError::Write)?;
        match self.lines.recv_timeout(timeout) {
            Ok(Ok(l)) => Ok(l),
            Ok(Err(e)) => Err(ExchangeError::Read(e)),
            Err(RecvTimeoutError::Timeout) => Err(ExchangeError::Timeout(timeout)),
            Err(RecvTimeoutError::Disconnected) => Err(ExchangeError::Disconnected),
        }
    }

    /// Why the child is broken, once it is.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Marks the child broken with `why` (after a failure; stop it with [`Self::stop`]): later
    /// exchanges fail at once.
    pub fn mark_broken(&mut self, why: String) {
        self.broken = Some(why);
    }

    /// Stops the child (kill, then wait); returns its exit status when it could be read.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        let _ = self.child.kill();
        self.child.wait().ok()
    }

    /// The last lines of the child's stderr as `; its stderr ends with:` and the indented
    /// lines, or nothing (none kept, or none written). Waits a moment first, for the last lines
    /// of a dying child.
    pub fn stderr_tail(&self) -> String {
        let Some(tail) = &self.stderr else {
            return String::new();
        };
        std::thread::sleep(Duration::from_millis(50));
        let t = tail.lock().unwrap_or_else(|e| e.into_inner());
        if t.is_empty() {
            String::new()
        } else {
            let lines: Vec<&str> = t.iter().map(String::as_str).collect();
            format!("; its stderr ends with:\n  {}", lines.join("\n  "))
        }
    }
}

impl Drop for JsonLinesChild {
    fn drop(&mut self) {
        self.stop();
    }
}
