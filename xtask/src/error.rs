//! The errors of the xtask commands, each with its cause.

use std::path::PathBuf;
use std::process::ExitStatus;

/// Why an xtask command failed. The message names the file and includes the cause's message;
/// the cause is also the [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory that cannot be read, written or removed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A spec file that does not load or check.
    #[error("{file}:\n{source}")]
    Spec {
        /// The spec file, relative to the workspace root.
        file: String,
        /// Why it does not load or check.
        #[source]
        source: trac_spec::spec::SpecError,
    },
    /// Generated code that does not parse as a Rust file (a generator bug).
    #[error("{file}: generated code does not parse: {source}")]
    Unparsable {
        /// The spec file, relative to the workspace root.
        file: String,
        /// The Rust parser's error.
        #[source]
        source: syn::Error,
    },
    /// `cargo xtask codegen --check`: generated files that differ from the generator's output,
    /// or that it no longer produces (one line each, `path is stale`).
    #[error("{}\nrun `cargo xtask codegen` to regenerate (generated files must not be edited by hand)", .0.join("\n"))]
    Stale(Vec<String>),
    /// `cargo` cannot be started.
    #[error("cannot run cargo: {0}")]
    Cargo(#[source] std::io::Error),
    /// The benchmark report did not run to the end.
    #[error("cargo bench --bench report failed ({0})")]
    BenchFailed(ExitStatus),
    /// The benchmark report printed no table.
    #[error("the report printed no table (no bench-report markers)")]
    NoTable,
    /// `BENCHMARKS.md` has no markers to put the table between.
    #[error("{}: no {begin} ... {end} markers", path.display())]
    NoMarkers {
        /// `BENCHMARKS.md`.
        path: PathBuf,
        /// The opening marker.
        begin: &'static str,
        /// The closing marker.
        end: &'static str,
    },
}

/// An [`Error::Io`] for `path`, as a `map_err` argument.
pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}
