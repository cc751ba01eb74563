//! The gateway's log: JSON Lines, one line per step, each an OpenAI chat message with a
//! `session` field (the format `trac audit` reads natively, so `trac audit --spec SPEC FILE`
//! re-audits it to the gateway's verdicts); and the interventions, one JSON object per line in
//! `FILE.interventions.jsonl` beside it (kept apart so that the log holds nothing but the
//! conversation's messages). Each line is written whole and flushed at once: nothing logged is
//! lost if the gateway is killed. Credentials are never written: only message bodies are.

use crate::options::GatewayError;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The log files (created anew, truncating old ones: a log re-audits to the verdicts of the
/// gateway that wrote it).
#[derive(Debug)]
pub struct Log {
    steps: Mutex<File>,
    interventions: Mutex<File>,
    path: PathBuf,
}

/// The interventions file of log `path`: `FILE.interventions.jsonl`, where `FILE` is `path`
/// without its `.jsonl` extension.
pub fn interventions_path(path: &Path) -> PathBuf {
    let s = path.to_string_lossy();
    let stem = s.strip_suffix(".jsonl").unwrap_or(&s);
    PathBuf::from(format!("{stem}.interventions.jsonl"))
}

fn create(path: &Path) -> Result<File, GatewayError> {
    File::create(path).map_err(|source| GatewayError::Log {
        path: path.to_path_buf(),
        source,
    })
}

fn write_line(file: &Mutex<File>, line: &str) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
    f.write_all(&buf)?;
    f.flush()
}

impl Log {
    /// Creates the log at `path` and its interventions file.
    ///
    /// # Errors
    /// [`GatewayError::Log`]: either file cannot be created.
    pub fn create(path: &Path) -> Result<Log, GatewayError> {
        Ok(Log {
            steps: Mutex::new(create(path)?),
            interventions: Mutex::new(create(&interventions_path(path))?),
            path: path.to_path_buf(),
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one step (one JSON message, without its newline) and flushes it.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn step(&self, line: &str) -> std::io::Result<()> {
        write_line(&self.steps, line)
    }

    /// Appends one intervention record and flushes it.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn intervention(&self, record: &serde_json::Value) -> std::io::Result<()> {
        write_line(&self.interventions, &record.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interventions_go_beside_the_log() {
        assert_eq!(
            interventions_path(Path::new("/x/gw.jsonl")),
            Path::new("/x/gw.interventions.jsonl")
        );
        assert_eq!(
            interventions_path(Path::new("gw.log")),
            Path::new("gw.log.interventions.jsonl")
        );
    }
}
