//! A progress bar (indicatif) on standard error for audits of large files or many files, drawn
//! only when standard error is a terminal: the bytes read of all the trace files, and the file
//! being read.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Total size of the trace files from which a bar is shown (1 MiB).
pub(crate) const LARGE_BYTES: u64 = 1 << 20;
/// Number of trace files from which a bar is shown.
pub(crate) const MANY_FILES: usize = 10;

/// Whether to show a bar: standard error is a terminal and the audit is large (`bytes` of
/// regular files at least [`LARGE_BYTES`], or at least [`MANY_FILES`] files).
pub(crate) fn should_show(stderr_is_terminal: bool, bytes: u64, files: usize) -> bool {
    stderr_is_terminal && (bytes >= LARGE_BYTES || files >= MANY_FILES)
}

/// The progress of an audit (a no-op when no bar is shown).
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    done: u64,
}

impl Progress {
    /// A bar over the sizes of the regular files among `paths` (pipes and `-` count as 0 bytes),
    /// if [`should_show`] says so.
    pub fn new(paths: &[PathBuf]) -> Progress {
        let bytes: u64 = paths
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        let bar = should_show(std::io::stderr().is_terminal(), bytes, paths.len()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {binary_bytes}/{binary_total_bytes} {msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Progress { bar, done: 0 }
    }

    /// No bar (the workers of `-j N`: the run's bar advances as files are written).
    pub fn hidden() -> Progress {
        Progress { bar: None, done: 0 }
    }

    /// A new file, `name`, starts.
    pub fn start_file(&self, name: &str) {
        if let Some(b) = &self.bar {
            b.set_message(name.to_string());
        }
    }

    /// One line of `len` bytes (terminator included) was read.
    pub fn advance(&mut self, len: usize) {
        if let Some(b) = &self.bar {
            b.inc(len as u64);
        }
    }

    /// The file `path` has been read to its end.
    pub fn end_file(&mut self, path: &std::path::Path) {
        if let Some(b) = &self.bar {
            let size = std::fs::metadata(path)
                .ok()
                .filter(|m| m.is_file())
                .map_or(0, |m| m.len());
            self.done += size;
            b.set_position(self.done);
        }
    }

    /// Runs `f` (which writes to the terminal) with the bar hidden.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_only_on_a_terminal_and_for_large_audits() {
        assert!(!should_show(false, LARGE_BYTES * 10, 100));
        assert!(!should_show(true, 1000, 1));
        assert!(should_show(true, LARGE_BYTES, 1));
        assert!(should_show(true, 0, MANY_FILES));
    }
}
