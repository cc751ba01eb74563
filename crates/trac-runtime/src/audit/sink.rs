//! Where an audit's results go: the [`Sink`] trait the [`Driver`](crate::audit::driver::Driver)
//! hands every verdict record, trace end and notice to, as ripgrep's searcher hands matches to
//! its printers' sinks and RTLola's interpreter hands verdicts to its output sinks.
//!
//! A front end is a sink: the CLI's printers, the Python package's record collector, `trac run`'s
//! episode log. [`Collect`] is the sink that keeps everything in memory.

use crate::audit::coverage::Coverage;
use crate::audit::records::{PropertyEnd, VerdictRecord};
use crate::trace::{Event, TraceError};
use std::fmt;
use std::sync::Arc;
use trac_core::snippet::{snippet, SNIPPET_CHARS};

/// One trace the driver opens: a whole file, or one session of it (`FILE#SESSION`).
#[derive(Clone, Copy, Debug)]
pub struct TraceStart<'a> {
    /// Its name in reports ([`crate::audit::jsonl::session_trace_name`]).
    pub name: &'a str,
    /// The file it is read from, as given (`<stdin>` for standard input).
    pub file: &'a Arc<str>,
    /// Its session id, if the events carry one.
    pub session: Option<&'a str>,
    /// The file is standard input or a pipe: events arrive as they are written.
    pub stream: bool,
}

/// Why reading stopped, for one session or the whole file.
#[derive(Debug, thiserror::Error)]
pub enum ReadFailure {
    /// A trace line that could not be read (a file that cannot be opened, a malformed line).
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The labeling stage could not label a step (an LLM labeler's request failed).
    #[error(transparent)]
    Labeling(Box<dyn std::error::Error + Send + Sync>),
}

impl ReadFailure {
    /// The session the failure belongs to where known: `Some(session)` ends only that session;
    /// `None` (a failure of the file, or of the labeling stage) ends them all.
    pub fn session(&self) -> Option<Option<String>> {
        match self {
            ReadFailure::Trace(e) => e.session.clone(),
            ReadFailure::Labeling(_) => None,
        }
    }

    /// The 1-based line of the failure in its file, when it has one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ReadFailure::Trace(e) => (e.line > 0).then_some(e.line),
            ReadFailure::Labeling(_) => None,
        }
    }

    /// The trace error, if the failure is one.
    pub fn trace_error(&self) -> Option<&TraceError> {
        match self {
            ReadFailure::Trace(e) => Some(e),
            ReadFailure::Labeling(_) => None,
        }
    }
}

/// Why a trace has no end-of-trace verdicts: it stopped at a read failure, or it was read but not
/// audited (empty, nothing understood, or no property's propositions can hold on it).
#[derive(Clone, Debug)]
pub enum EndError {
    /// The failure that stopped reading (shared by every session it ended).
    Read(Arc<ReadFailure>),
    /// Why the trace was not audited (`FILE: not audited: ...`).
    NotAudited(String),
}

impl fmt::Display for EndError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndError::Read(e) => e.fmt(f),
            EndError::NotAudited(why) => f.write_str(why),
        }
    }
}

/// How one trace ended: handed to [`Sink::end`] once per trace.
#[derive(Clone, Debug)]
pub struct TraceEnd {
    /// Steps read.
    pub steps: usize,
    /// Every property's state at the end of the trace.
    pub ends: Vec<PropertyEnd>,
    /// Why the trace has no end-of-trace verdicts, if it has none.
    pub error: Option<EndError>,
    /// The line of `error` in the file, when it has one.
    pub error_line: Option<usize>,
    /// What the audit could read of the trace.
    pub coverage: Coverage,
}

impl TraceEnd {
    /// The trace was read but not audited.
    pub fn not_audited(&self) -> bool {
        matches!(self.error, Some(EndError::NotAudited(_)))
    }

    /// Violations counted over its properties.
    pub fn violations(&self) -> usize {
        self.ends.iter().map(|e| e.violations).sum()
    }
}

/// How serious a [`Notice`] is: the prefix of its line (`error:`, `warning:`, `note:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something was not audited, or reading stopped (exit code 2).
    Error,
    /// Something may not have been understood.
    Warning,
    /// For information.
    Note,
}

/// A message about the audit of a file, beside its verdicts. Its `Display` is the whole line the
/// CLI writes on standard error (`warning: FILE: ...`).
#[derive(Debug)]
pub enum Notice {
    /// A read failure of one session ended that session; the others are audited on.
    SessionFailed(Arc<ReadFailure>),
    /// A read failure of the file ended every open session.
    FileFailed(Arc<ReadFailure>),
    /// Steps read before the file's failure, whose verdicts are reported.
    StepsBeforeFailure {
        /// The file.
        file: String,
        /// Steps audited.
        steps: usize,
    },
    /// Each session failure stopped its own session; the other sessions were audited to their end.
    OtherSessionsAudited {
        /// The file.
        file: String,
    },
    /// The file was read but not audited (the text of [`EndError::NotAudited`]).
    NotAudited(String),
    /// `--step-per turn` or `--step-per call` on a trace without messages.
    StepPerNoEffect {
        /// The file.
        file: String,
        /// Its format's name.
        format: &'static str,
        /// The option's value (`turn`, `call`).
        step_per: &'static str,
    },
    /// What the reader says of the file's text fields (an alias read).
    Reader {
        /// The file.
        file: String,
        /// Note or warning.
        level: Level,
        /// The reader's text.
        text: String,
    },
    /// No event had text or labels.
    NoTextOrLabels {
        /// The file.
        file: String,
        /// The fields its events had.
        fields: Vec<String>,
    },
    /// No event had labels, and no spec has rules that read text.
    NoLabelsNoRules {
        /// The file.
        file: String,
    },
    /// Event fields trac does not read.
    IgnoredFields {
        /// The file.
        file: String,
        /// The fields, in order of first appearance.
        fields: Vec<String>,
    },
    /// A label warning of the coverage ([`crate::audit::coverage::Coverage::label_warnings`]).
    Label(String),
    /// A property whose propositions can never hold on the file.
    PropertyNotAudited {
        /// The file.
        file: String,
        /// The property's id.
        id: String,
        /// Its propositions.
        propositions: Vec<String>,
    },
    /// No proposition of a spec held at any step of the file
    /// ([`crate::audit::coverage::Coverage::specs_never_held`]): its properties pass vacuously.
    NoPropositionHeld {
        /// The file.
        file: String,
        /// The spec's file (or name).
        spec: String,
        /// Its propositions (what was expected).
        propositions: Vec<String>,
        /// Steps read.
        steps: usize,
    },
    /// An atom of a `--formula` property that no spec declares was never labeled.
    AtomNeverLabeled {
        /// The file.
        file: String,
        /// The property's id.
        id: String,
        /// The atom.
        atom: String,
    },
}

impl Notice {
    /// How serious it is.
    pub fn level(&self) -> Level {
        match self {
            Notice::SessionFailed(_)
            | Notice::FileFailed(_)
            | Notice::NotAudited(_)
            | Notice::PropertyNotAudited { .. } => Level::Error,
            Notice::StepsBeforeFailure { .. } | Notice::OtherSessionsAudited { .. } => Level::Note,
            Notice::Reader { level, .. } => *level,
            _ => Level::Warning,
        }
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.level() {
            Level::Error => f.write_str("error: ")?,
            Level::Warning => f.write_str("warning: ")?,
            Level::Note => f.write_str("note: ")?,
        }
        match self {
            Notice::SessionFailed(e) | Notice::FileFailed(e) => write!(f, "{e}"),
            Notice::StepsBeforeFailure { steps, .. } => write!(
                f,
                "the {steps} step(s) read before the error were audited; their verdicts are reported"
            ),
            Notice::OtherSessionsAudited { file } => write!(
                f,
                "each error above stopped its own session of {file}; the other sessions were audited to their end"
            ),
            Notice::NotAudited(why) | Notice::Label(why) => f.write_str(why),
            Notice::StepPerNoEffect {
                file,
                format,
                step_per,
            } => write!(
                f,
                "{file}: --step-per {step_per} has no effect: a {format} trace has no messages, each of its records is a step"
            ),
            Notice::Reader { file, text, .. } => write!(f, "{file}: {text}"),
            Notice::NoTextOrLabels { file, fields } => {
                let fields = if fields.is_empty() {
                    "none".to_string()
                } else {
                    snippets(fields)
                };
                write!(f, "no event of {file} had text or labels: fields seen: {fields}")
            }
            Notice::NoLabelsNoRules { file } => write!(
                f,
                "no event of {file} had labels, and no --spec has labeling rules to read its text"
            ),
            Notice::IgnoredFields { file, fields } => write!(
                f,
                "{file}: event field(s) ignored: {} (trac reads {})",
                snippets(fields),
                crate::trace::KNOWN_FIELDS.join(", ")
            ),
            Notice::PropertyNotAudited {
                file,
                id,
                propositions,
            } => write!(
                f,
                "{file}: property {id} not audited: its propositions ({}) can never hold on this trace",
                propositions.join(", ")
            ),
            Notice::NoPropositionHeld {
                file,
                spec,
                propositions,
                steps,
            } => {
                let n = propositions.len();
                let mut shown: Vec<String> =
                    propositions.iter().take(8).map(|p| format!("`{p}`")).collect();
                if n > 8 {
                    shown.push(format!("and {} more", n - 8));
                }
                write!(
                    f,
                    "{file}: no proposition of spec {spec} held at any of its {steps} step(s): \
                     it expects {} (labels of these names, or text its labeling rules match); \
                     its properties pass vacuously: is this the right spec for this input?",
                    shown.join(", ")
                )
            }
            Notice::AtomNeverLabeled { file, id, atom } => {
                write!(
                    f,
                    "atom `{}` of {id} was never labeled in {file}",
                    snippet(atom, SNIPPET_CHARS)
                )
            }
        }
    }
}

/// `items` joined by `, `, each cut to a snippet (a field name of 50 MB is not echoed whole).
fn snippets(items: &[String]) -> String {
    items
        .iter()
        .map(|i| snippet(i, SNIPPET_CHARS))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The receiver of an audit's results, one call per thing that happened, in trace order.
///
/// Per trace the calls are: [`Sink::start`] once; then [`Sink::verdicts`] (its step-0 verdicts),
/// and per step [`Sink::step`] and [`Sink::verdicts`]; then [`Sink::verdicts`] again with its
/// end-of-trace verdicts (unless it ended with an error) and [`Sink::end`] once. Traces
/// (sessions) of one file interleave as their events do. [`Sink::notice`] may come at any time.
pub trait Sink {
    /// What the sink keeps of an open trace (an outcome being built, its name).
    type Trace;

    /// A trace opens (its first event, or the file's end for a file of no event).
    fn start(&mut self, trace: &TraceStart<'_>) -> Self::Trace;

    /// The verdicts reached at one step of `trace` (possibly none), in property order.
    fn verdicts(&mut self, trace: &mut Self::Trace, records: Vec<VerdictRecord>);

    /// `event` was read as the next step of `trace` (before its verdicts). Default: nothing.
    fn step(&mut self, _trace: &mut Self::Trace, _event: &Event) {}

    /// `trace` has ended: its verdicts are final.
    fn end(&mut self, trace: Self::Trace, end: TraceEnd);

    /// A message about the file (a warning, a read failure). Default: dropped.
    fn notice(&mut self, _notice: Notice) {}

    /// `bytes` more of the input were consumed (a progress bar's advance). Default: nothing.
    fn consumed(&mut self, _bytes: usize) {}
}

/// One trace as [`Collect`] keeps it.
#[derive(Clone, Debug)]
pub struct CollectedTrace {
    /// Its name in reports.
    pub name: String,
    /// Its session id.
    pub session: Option<String>,
    /// Its verdicts, in step order.
    pub records: Vec<VerdictRecord>,
    /// How it ended (`None` while open).
    pub end: Option<TraceEnd>,
}

/// The sink that keeps everything: each trace's verdicts and end in the order the traces ended,
/// and the notices. O(verdicts) memory.
#[derive(Debug, Default)]
pub struct Collect {
    /// The traces that ended, in the order they ended.
    pub traces: Vec<CollectedTrace>,
    /// Every notice, in order.
    pub notices: Vec<Notice>,
}

impl Sink for Collect {
    type Trace = CollectedTrace;

    fn start(&mut self, trace: &TraceStart<'_>) -> CollectedTrace {
        CollectedTrace {
            name: trace.name.to_string(),
            session: trace.session.map(str::to_string),
            records: Vec::new(),
            end: None,
        }
    }

    fn verdicts(&mut self, trace: &mut CollectedTrace, records: Vec<VerdictRecord>) {
        trace.records.extend(records);
    }

    fn end(&mut self, mut trace: CollectedTrace, end: TraceEnd) {
        trace.end = Some(end);
        self.traces.push(trace);
    }

    fn notice(&mut self, notice: Notice) {
        self.notices.push(notice);
    }
}
