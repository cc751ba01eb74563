//! Audit reports: one [`Printer`] interface (a sink fed as the audit runs, in the manner of
//! ripgrep's `grep-printer`) and one printer per output format:
//!
//! | format | printer | written |
//! | --- | --- | --- |
//! | `text` | [`text::Text`] | per trace, at its end (verdicts as reached for a streamed input) |
//! | `text --summary` | [`summary::Summary`] | one line per trace and property, at the end |
//! | `json` / `jsonl` | [`json::Json`] | at the end / per verdict and per trace end |
//! | `sarif` | [`sarif::Sarif`] | one SARIF 2.1.0 log at the end |
//! | `html` | [`html::Html`] | one self-contained page at the end |
//!
//! The audit loop (`crate::audit`) calls [`Printer::verdicts`] for the verdicts of each step,
//! [`Printer::trace_end`] once per trace (session) when its end verdicts are known, and
//! [`Printer::finish`] once after the last trace. Write errors (a closed pipe) are ignored by the
//! streaming calls and returned by `finish`.

pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod progress;
pub(crate) mod sarif;
pub(crate) mod summary;
pub(crate) mod text;

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;
use trac_ltl::compiler::TableCompiler;
use trac_ltl::{Arena, Formula};
use trac_runtime::audit::{PropertyEnd, PropertyInfo, VerdictRecord};
use trac_runtime::Verdict;
use trac_spec::spec::{CheckedSpec, Semantics};

/// What the audit of one trace (one session of a file) produced.
pub(crate) struct TraceOutcome {
    /// The trace's name in reports: the file as given (`<stdin>` for standard input), with
    /// `#SESSION` for a session of a JSON Lines file.
    pub name: String,
    /// The file the trace was read from, as given (`<stdin>` for standard input); shared by
    /// the file's sessions.
    pub file: Arc<str>,
    /// The input was standard input or a pipe (no file to point at).
    pub stream: bool,
    /// Steps read.
    pub steps: usize,
    /// The 1-based line of each step in `file` ([`StepLines::push`] once per step).
    pub lines: StepLines,
    /// The verdicts reached that the printer keeps ([`Printer::retain`]; all of them by
    /// default), in step order.
    pub records: Vec<VerdictRecord>,
    /// Per property id, every verdict reached counted over the steps (HTML only, whose
    /// `retain` keeps a bounded number of `records`).
    pub timelines: Vec<(String, html::Timeline)>,
    /// `(property, step, value)` of each property's first violation, the property as its
    /// index in the report's order (`--summary` only, whose `retain` keeps no record).
    pub first_violations: Vec<(usize, usize, Option<String>)>,
    /// Per property, its state at the end of the trace.
    pub ends: Vec<PropertyEnd>,
    /// The trace error that ended the audit early, or why the trace was not audited.
    pub error: Option<String>,
    /// The line of `error` in `file`, when it has one (SARIF notifications point at it).
    pub error_line: Option<usize>,
    /// The trace was read but nothing in it was understood (or it was empty).
    pub not_audited: bool,
    /// Verdicts were printed as they were reached (text output of a streamed input).
    pub streamed: bool,
}

impl TraceOutcome {
    /// An outcome with nothing recorded yet.
    pub fn new(name: String, file: Arc<str>, stream: bool, streamed: bool) -> TraceOutcome {
        TraceOutcome {
            name,
            file,
            stream,
            steps: 0,
            lines: StepLines::default(),
            records: Vec::new(),
            timelines: Vec::new(),
            first_violations: Vec::new(),
            ends: Vec::new(),
            error: None,
            error_line: None,
            not_audited: false,
            streamed,
        }
    }

    /// The line of `step` in the trace file, when known (steps are 1-based; step 0 has none).
    pub fn line_of(&self, step: usize) -> Option<usize> {
        self.lines.get(step)
    }
}

/// The line of each step of a trace, run-length encoded: one `(first step, its line)` entry per
/// run of steps on consecutive lines. A file of one session without skipped lines is one run,
/// whatever its length (memory independent of trace length); interleaved sessions cost one entry
/// per change of session at worst, as a plain vector of lines would.
#[derive(Debug, Default)]
pub(crate) struct StepLines {
    /// `(step, line)` at the start of each run, in step order.
    runs: Vec<(usize, usize)>,
    /// Steps pushed.
    steps: usize,
}

impl StepLines {
    /// Records the line of the next step (steps are 1-based and pushed in order). O(1).
    pub fn push(&mut self, line: usize) {
        self.steps += 1;
        let continues = self
            .runs
            .last()
            .is_some_and(|&(s, l)| l + (self.steps - s) == line);
        if !continues {
            self.runs.push((self.steps, line));
        }
    }

    /// The line of 1-based `step`, if it was pushed. O(log runs).
    pub fn get(&self, step: usize) -> Option<usize> {
        if step == 0 || step > self.steps {
            return None;
        }
        let i = self.runs.partition_point(|&(s, _)| s <= step) - 1;
        let (s, l) = self.runs[i];
        Some(l + (step - s))
    }
}

#[cfg(test)]
mod step_lines_tests {
    use super::StepLines;

    #[test]
    fn step_lines_give_back_every_pushed_line() {
        // Runs of consecutive lines, gaps (skipped lines), and interleaving (jumps back).
        let lines = [1, 2, 3, 7, 8, 20, 4, 5, 6, 30];
        let mut sl = StepLines::default();
        for &l in &lines {
            sl.push(l);
        }
        for (k, &l) in lines.iter().enumerate() {
            assert_eq!(sl.get(k + 1), Some(l), "step {}", k + 1);
        }
        assert_eq!(sl.get(0), None);
        assert_eq!(sl.get(lines.len() + 1), None);
        assert_eq!(sl.runs.len(), 5);
    }

    #[test]
    fn one_run_for_consecutive_lines() {
        let mut sl = StepLines::default();
        for l in 10..10_010 {
            sl.push(l);
        }
        assert_eq!(sl.runs.len(), 1);
        assert_eq!(sl.get(10_000), Some(10_009));
    }
}

/// A property as the reports need it: its facts ([`PropertyInfo`]) and where it comes from.
pub(crate) struct PropertyMeta {
    /// Id, description, formula, English rendering, semantics.
    pub info: PropertyInfo,
    /// The spec file that declares it (`None` for a `--formula`).
    pub spec_file: Option<String>,
    /// Proposition descriptions of its spec (for plain-English residuals).
    pub descriptions: HashMap<String, String>,
    /// The `forall` variable, if parametric.
    pub var: Option<String>,
    /// The property's arena and formula body (for drawing its monitor).
    pub arena: Arena,
    /// The formula body, in `arena` (with `var` free).
    pub formula: Formula,
    /// LTL3 or LTLf.
    pub semantics: Semantics,
}

/// Everything a printer knows besides the traces.
pub(crate) struct Context {
    /// The audited properties, in spec order.
    pub props: Vec<PropertyMeta>,
    /// TRAC_R (restart after a violation) is on.
    pub reset: bool,
    /// The engine's name (`compiled`, `progression`, ...).
    pub engine: &'static str,
    /// The spec files given.
    pub specs: Vec<String>,
    /// The compiler used to draw monitors (the audit's own, so tables are compiled once).
    pub compiler: Option<Arc<dyn TableCompiler>>,
}

impl Context {
    /// Builds the context from the checked specs, in the order the auditor lists properties.
    pub fn new(
        specs: &[CheckedSpec],
        spec_files: &[String],
        infos: Vec<PropertyInfo>,
        reset: bool,
        engine: &'static str,
        compiler: Option<Arc<dyn TableCompiler>>,
    ) -> Context {
        let mut props = Vec::new();
        let mut infos = infos.into_iter();
        for (i, spec) in specs.iter().enumerate() {
            let descriptions = spec.descriptions();
            for p in &spec.properties {
                let Some(info) = infos.next() else { break };
                props.push(PropertyMeta {
                    info,
                    spec_file: spec_files.get(i).cloned(),
                    descriptions: descriptions.clone(),
                    var: p.var.clone(),
                    arena: p.arena.clone(),
                    formula: p.formula,
                    semantics: p.decl.semantics,
                });
            }
        }
        Context {
            props,
            reset,
            engine,
            specs: spec_files.to_vec(),
            compiler,
        }
    }

    /// The properties' facts, in order.
    pub fn infos(&self) -> Vec<PropertyInfo> {
        self.props.iter().map(|p| p.info.clone()).collect()
    }
}

/// A sink for an audit's results. See the [module docs](self) for when each method is called.
///
/// The streaming calls take `&self` and printers are `Sync`: with `-j N`, the traces of several
/// files are audited on worker threads that share one printer, each writing into its own buffer;
/// what a printer needs at the end it keeps in a [`Kept`] (one per file, appended in argument
/// order), not in itself.
pub(crate) trait Printer: Sync {
    /// The verdicts reached at one step of trace `o` (not yet in `o.records`).
    fn verdicts(&self, _out: &mut dyn Write, _o: &TraceOutcome, _recs: &[VerdictRecord]) {}

    /// Keeps in `o.records` what this printer reads of the verdicts just reached (after
    /// [`Printer::verdicts`]): by default all of them. A printer that wrote them already keeps
    /// none, so a long trace's memory does not grow with its verdicts.
    fn retain(&self, o: &mut TraceOutcome, recs: Vec<VerdictRecord>) {
        o.records.extend(recs);
    }

    /// Whether this printer reads the line of each step ([`TraceOutcome::line_of`]; default
    /// `true`); when it does not, no step's line is recorded (an interleaved session costs 16
    /// bytes per step otherwise).
    fn step_lines(&self) -> bool {
        true
    }

    /// Whether this printer shows witnesses and past-time citations (default `true`); when it
    /// does not, the audit does not record them ([`trac_runtime::audit::AuditPlan::set_witnesses`]).
    fn witnesses(&self) -> bool {
        true
    }

    /// Trace `o` has ended: its records, end verdicts and error are final.
    fn trace_end(&self, _out: &mut dyn Write, _o: &TraceOutcome) {}

    /// Keeps of the finished trace `o` (after [`Printer::trace_end`]) what [`Printer::finish`]
    /// needs. The default keeps only the count: a printer that writes everything as traces end
    /// (text, JSON Lines) holds no memory per finished trace.
    fn keep(&self, o: TraceOutcome, kept: &mut Kept) {
        kept.traces += 1;
        kept.errors += usize::from(o.error.is_some());
        drop(o);
    }

    /// Every trace has ended; `kept` holds what [`Printer::keep`] kept of them, in order, and
    /// `violations` is their total.
    ///
    /// # Errors
    /// A write error.
    fn finish(&mut self, out: &mut dyn Write, kept: Kept, violations: usize) -> io::Result<()>;
}

/// What the printer keeps of the finished traces until [`Printer::finish`]: their number, and
/// the whole outcomes (JSON, SARIF and HTML, which write one document at the end) or the
/// summary's rows (compact, spilled to a temporary file past a few MiB). Text and JSON Lines keep
/// only the count, so their memory is bounded by the traces (sessions) open at once.
#[derive(Default)]
pub(crate) struct Kept {
    /// Traces finished.
    pub traces: usize,
    /// Traces that ended with an error (counted by the default [`Printer::keep`]).
    pub errors: usize,
    /// The outcomes, in the order the traces ended (printers that need them).
    pub outcomes: Vec<TraceOutcome>,
    /// The summary's rows and errors (`--summary`).
    pub rows: summary::Rows,
}

impl Kept {
    /// Appends `other` (the next file's) after these.
    ///
    /// # Errors
    /// A read or write error of the summary's temporary file.
    pub fn append(&mut self, other: Kept) -> io::Result<()> {
        self.traces += other.traces;
        self.errors += other.errors;
        self.outcomes.extend(other.outcomes);
        self.rows.append(other.rows)
    }
}

/// The status a report shows for a property on a trace: violated if it was violated at least once
/// (even when TRAC_R restarted it and it is pending again at the end), else its end verdict.
pub(crate) fn status(end: &PropertyEnd) -> Verdict {
    if end.violations > 0 {
        Verdict::Violated
    } else {
        end.verdict
    }
}

/// At most `max` characters of `s` (`max` ≥ 1), the last one `…` when `s` was cut; newlines and
/// tabs become spaces. O(len(s)).
pub(crate) fn shorten(s: &str, max: usize) -> String {
    let flat = |c: char| if c.is_control() { ' ' } else { c };
    if s.chars().count() <= max {
        return s.chars().map(flat).collect();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).map(flat).collect();
    out.push('…');
    out
}

/// How long a step's text may be in text output and witnesses (the JSON output keeps it whole).
pub(crate) const TEXT_WIDTH: usize = 100;

/// In words, what a property's end-of-trace state means: its LTL3 verdict at the end (and why
/// it may be pending after a violation) and its LTLf verdict (the trace read as a complete run).
pub(crate) fn explain_end(end: &PropertyEnd, semantics: &str, reset: bool) -> String {
    let at_end = match end.verdict {
        Verdict::Satisfied => {
            "satisfied for good (no continuation of the trace could violate it)".to_string()
        }
        Verdict::Violated if semantics == "ltlf" => {
            "violated (the trace, read as a complete run, breaks it)".to_string()
        }
        Verdict::Violated => {
            "violated for good (no continuation of the trace could satisfy it)".to_string()
        }
        Verdict::Pending if end.violations > 0 && reset => {
            "undecided: after its last violation the rule started over, and no step since \
             decided it (a longer trace could)"
                .to_string()
        }
        Verdict::Pending => {
            "undecided: no step decided it (a longer trace could still satisfy or violate it)"
                .to_string()
        }
    };
    if semantics == "ltlf" {
        return at_end;
    }
    let ltlf = match end.ltlf {
        Verdict::Satisfied => "satisfies it",
        Verdict::Violated => "violates it",
        Verdict::Pending => "leaves it open",
    };
    format!("{at_end}; if the run ends here (LTLf), the trace as a whole {ltlf}")
}

/// The residual formula `residual` (Spot syntax, as in witnesses) in plain English, with the
/// property's proposition descriptions; the formula itself if it does not parse.
pub(crate) fn residual_english(residual: &str, descriptions: &HashMap<String, String>) -> String {
    match residual.trim() {
        "false" => return "nothing can satisfy the rule any more: violated".into(),
        "true" => return "the rule is satisfied whatever comes next".into(),
        _ => {}
    }
    let mut arena = Arena::new();
    match trac_ltl::parse(&mut arena, residual) {
        Ok(f) => format!(
            "still to hold: {}",
            trac_ltl::english::render(&arena, f, descriptions)
        ),
        Err(_) => residual.to_string(),
    }
}

/// A spec error as `error: file:line:column: message` lines, one per diagnostic (the uniform
/// prefix of the command line's messages).
pub(crate) fn diagnostics(e: &trac_spec::spec::SpecError) -> Vec<String> {
    e.diagnostics
        .iter()
        .map(|d| format!("error: {d}"))
        .collect()
}

/// A rendered error (`error: message` then a caret rendering) with `what: ` put after its
/// `error: ` prefix: `error: --formula f1: message`.
pub(crate) fn with_context(rendered: &str, what: &str) -> String {
    match rendered.strip_prefix("error: ") {
        Some(rest) => format!("error: {what}: {rest}"),
        None => format!("error: {what}: {rendered}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_keeps_short_texts_and_cuts_long_ones_at_a_char_boundary() {
        assert_eq!(shorten("take knife", 20), "take knife");
        let long = "é".repeat(50);
        let s = shorten(&long, 10);
        assert_eq!(s.chars().count(), 10);
        assert!(s.ends_with('…'));
        assert_eq!(shorten("a\nb", 10), "a b");
    }

    #[test]
    fn residuals_read_in_english_with_descriptions() {
        let mut d = HashMap::new();
        d.insert(
            "examine".to_string(),
            "the agent examines the {item}".to_string(),
        );
        let e = residual_english("examine(\"yellow potato\")", &d);
        assert!(e.contains("the agent examines the yellow potato"), "{e}");
        assert!(residual_english("false", &d).contains("violated"));
    }

    #[test]
    fn end_explanations_name_both_verdicts() {
        let end = PropertyEnd {
            property: "R1".into(),
            verdict: Verdict::Pending,
            violations: 1,
            ltlf: Verdict::Violated,
            instances: Vec::new(),
        };
        let e = explain_end(&end, "ltl3", true);
        assert!(e.contains("started over"), "{e}");
        assert!(e.contains("violates it"), "{e}");
        let e = explain_end(&end, "ltl3", false);
        assert!(!e.contains("started over"), "{e}");
    }
}
