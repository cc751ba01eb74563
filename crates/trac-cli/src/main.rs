//! `trac`: audit agent traces against LTL rules, and check formulas.
//!
//! Exit codes: 0 no violation, 1 violations found, 2 bad input or usage, or a trace not audited
//! (empty, or no event understood).

mod compile;
mod llm;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use trac_runtime::audit::{AuditOptions, Auditor, Coverage, PropertyEnd, VerdictRecord};
use trac_runtime::trace;
use trac_runtime::Verdict;
use trac_spec::spec::{CheckedSpec, PropertyDecl, Spec};

#[derive(Parser)]
#[command(
    name = "trac",
    version,
    about = "Runtime verification of AI agents against temporal rules (LTL).",
    long_about = "Runtime verification of AI agents against temporal rules (LTL).\n\nExit codes: 0 no violation, 1 violations found, 2 bad input or usage, or a trace not audited (empty, or no event understood)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Audit one or more traces: per property and step, violated / satisfied / pending, with witnesses.
    Audit(AuditArgs),
    /// Compile a formula (or every property of a spec) into a monitor automaton with complete
    /// verdicts: a table (JSON / RON), or a drawing (DOT) or HOA automaton.
    Compile(compile::CompileArgs),
    /// Parse a formula: print it normalized, in English, its atomic propositions, and its
    /// monitor's initial verdict, size and monitorability class.
    Check {
        /// The formula, in Spot syntax, optionally prefixed by `forall VAR:`.
        formula: String,
    },
    /// Score a labeler (an LLM, or the rules) against reference labels: per-proposition
    /// accuracy, precision and recall, and per property the F1 of the audit's violations and
    /// satisfactions.
    LabelEval(llm::LabelEvalArgs),
}

#[derive(clap::Args)]
struct AuditArgs {
    /// A spec file (RON) with propositions, labeling rules and properties. Repeatable.
    #[arg(long = "spec", value_name = "FILE")]
    specs: Vec<PathBuf>,
    /// An ad-hoc property over the labels (ids f1, f2, ...). Repeatable.
    #[arg(long = "formula", value_name = "FORMULA")]
    formulas: Vec<String>,
    /// Plain TRAC: do not restart a property after a violation (count at most one per property).
    #[arg(long)]
    no_reset: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    engine: compile::EngineArgs,
    #[command(flatten)]
    llm: llm::LlmArgs,
    /// Trace files: JSON Lines (`.jsonl`, or lines starting with `{`) or plain-text action logs;
    /// `-` reads standard input. Pipes are read as events arrive.
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<PathBuf>,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    /// For people: per property its verdict, violation count and steps, and witnesses.
    Text,
    /// One JSON document: an array of trace reports.
    Json,
    /// One JSON object per verdict, then one `"end": true` object per trace and property.
    Jsonl,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(2),
            };
        }
    };
    match cli.command {
        Command::Check { formula } => check(&formula),
        Command::Audit(args) => audit(&args),
        Command::Compile(args) => compile::run(&args),
        Command::LabelEval(args) => llm::label_eval(&args),
    }
}

fn check(src: &str) -> ExitCode {
    let mut arena = trac_spec::Arena::new();
    let prop = match trac_spec::parse_property(&mut arena, src) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{}", e.render(src));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = trac_spec::progress::validate(&arena, prop.body) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let printed = trac_spec::printer::print_with_quantifier(&arena, prop.var.as_deref(), prop.body);
    let english = trac_spec::english::render(&arena, prop.body, &Default::default());
    let atoms: Vec<String> = arena
        .atoms(prop.body)
        .into_iter()
        .map(|s| arena.sym_name(s).to_string())
        .collect();
    let english = match &prop.var {
        Some(v) => format!("for every {v}, {english}"),
        None => english,
    };
    // Write errors (a closed pipe) are not failures of the check.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "formula:      {printed}");
    let _ = writeln!(out, "english:      {english}");
    let _ = writeln!(out, "propositions: {}", atoms.join(", "));
    // The monitor facts below need a compilation, which can take long on large formulas: show
    // what is known first.
    let _ = out.flush();
    for line in compile::check_lines(&mut arena, prop.body) {
        let _ = writeln!(out, "{line}");
    }
    ExitCode::SUCCESS
}

fn load_specs(args: &AuditArgs) -> Result<Vec<CheckedSpec>, String> {
    let mut specs = Vec::new();
    let mut errors = Vec::new();
    for path in &args.specs {
        match Spec::from_path(path).and_then(|s| s.check()) {
            Ok(c) => specs.push(c),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !args.formulas.is_empty() {
        let mut properties = Vec::new();
        for (i, f) in args.formulas.iter().enumerate() {
            let mut arena = trac_spec::Arena::new();
            if let Err(e) = trac_spec::parse_property(&mut arena, f) {
                errors.push(format!("--formula f{}: {}", i + 1, e.render(f)));
                continue;
            }
            properties.push(PropertyDecl {
                id: format!("f{}", i + 1),
                description: format!("--formula {f}"),
                formula: f.clone(),
                ..Default::default()
            });
        }
        if errors.is_empty() {
            let spec = Spec {
                name: "command line".into(),
                properties,
                ..Default::default()
            };
            match spec.check() {
                Ok(c) => {
                    warn_unknown_atoms(&specs, &c);
                    specs.push(c)
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
    }
    if specs.is_empty() && errors.is_empty() {
        errors.push("nothing to check: give at least one --spec FILE or --formula FORMULA".into());
    }
    // A spec without properties only labels; when no spec has one, nothing would be checked and
    // every trace would pass.
    // (Without errors, `specs` holds the `--spec` files in order, then the `--formula` spec.)
    if errors.is_empty() {
        let empty: Vec<String> = args
            .specs
            .iter()
            .zip(&specs)
            .filter(|(_, c)| c.properties.is_empty())
            .map(|(p, _)| p.display().to_string())
            .collect();
        if specs.iter().all(|c| c.properties.is_empty()) {
            errors.push(format!(
                "nothing to check: {} declare(s) no property; give a --formula or a spec with properties",
                empty.join(", ")
            ));
        } else {
            for p in empty {
                eprintln!(
                    "warning: {p} declares no property (its propositions still label the trace)"
                );
            }
        }
    }
    if errors.is_empty() {
        Ok(specs)
    } else {
        Err(errors.join("\n"))
    }
}

/// Warns (on stderr) about atoms of `--formula` properties that no `--spec` declares: they hold
/// only when the trace itself labels a step with them, which is likely a typo when specs are given.
fn warn_unknown_atoms(specs: &[CheckedSpec], adhoc: &CheckedSpec) {
    let declared: Vec<&str> = specs
        .iter()
        .flat_map(|c| c.spec.propositions.iter().map(|p| p.name.as_str()))
        .collect();
    if declared.is_empty() {
        return;
    }
    for p in &adhoc.properties {
        for s in p.arena.atoms(p.formula) {
            let base = &p.arena.sym_parts(s).base;
            if !declared.contains(&base.as_str()) {
                eprintln!(
                    "warning: --formula {}: `{}` is not a proposition of any --spec; it holds only at steps the trace labels with it",
                    p.decl.id,
                    p.arena.sym_name(s)
                );
            }
        }
    }
}

struct TraceOutcome {
    name: String,
    steps: usize,
    records: Vec<VerdictRecord>,
    ends: Vec<PropertyEnd>,
    /// The trace error that ended the audit early, or why the trace was not audited.
    error: Option<String>,
    /// The trace was read but nothing in it was understood (or it was empty).
    not_audited: bool,
    /// Verdicts were printed as they were reached (text output of a streamed input).
    streamed: bool,
}

impl TraceOutcome {
    fn new(name: String, streamed: bool) -> TraceOutcome {
        TraceOutcome {
            name,
            steps: 0,
            records: Vec::new(),
            ends: Vec::new(),
            error: None,
            not_audited: false,
            streamed,
        }
    }
}

/// Records verdicts; with `--format jsonl`, or text output of a streamed trace, writes each one
/// at once and flushes, so a pipe shows verdicts as its events arrive.
fn emit(out: &mut dyn Write, format: Format, recs: Vec<VerdictRecord>, o: &mut TraceOutcome) {
    if recs.is_empty() {
        return;
    }
    match format {
        Format::Jsonl => {
            for r in &recs {
                let _ = writeln!(out, "{}", jsonl_record(&o.name, r));
            }
        }
        Format::Text if o.streamed => {
            for r in &recs {
                let _ = writeln!(out, "{}: {} {}", o.name, r.property, verdict_line(r));
                print_witness(out, "", r);
            }
        }
        _ => {}
    }
    let _ = out.flush();
    o.records.extend(recs);
}

/// Why a trace that was read without error was not audited, if it was not: it is empty, or no
/// event was understood (warned about on stderr). Also warns about ignored JSON fields and
/// `--formula` atoms that never held.
fn coverage_check(
    file: &str,
    cov: &Coverage,
    fields_seen: &[String],
    unknown_fields: &[&str],
    adhoc: Option<&CheckedSpec>,
    declared: &[&str],
) -> Option<String> {
    if cov.steps == 0 {
        return trac_runtime::jsonl::not_audited(file, cov);
    }
    if cov.understood == 0 {
        if cov.with_text == 0 && cov.with_labels == 0 {
            let fields = if fields_seen.is_empty() {
                "none".to_string()
            } else {
                fields_seen.join(", ")
            };
            eprintln!("warning: no event of {file} had text or labels: fields seen: {fields}");
        } else {
            eprintln!(
                "warning: no event of {file} had labels, and no --spec has labeling rules to read its text"
            );
        }
        return trac_runtime::jsonl::not_audited(file, cov);
    }
    if !unknown_fields.is_empty() {
        eprintln!(
            "warning: {file}: event field(s) ignored: {} (trac reads {})",
            unknown_fields.join(", "),
            trace::KNOWN_FIELDS.join(", ")
        );
    }
    if let Some(adhoc) = adhoc {
        for (id, atom) in cov.never_labeled(adhoc) {
            let base = trac_spec::formula::AtomName::parse(&atom).base;
            if !declared.contains(&base.as_str()) {
                eprintln!("warning: atom `{atom}` of {id} was never labeled in {file}");
            }
        }
    }
    None
}

/// A trace reader shared between the labeling pipeline (which may read it on another thread)
/// and the audit loop (which reads the fields it met at the end).
struct SharedReader(Arc<Mutex<trace::TraceReader<trace::Input>>>);

impl Iterator for SharedReader {
    type Item = Result<trace::Event, trace::TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        // A poisoned lock means a reader call panicked on another thread: end the trace.
        self.0.lock().ok()?.next()
    }
}

fn audit(args: &AuditArgs) -> ExitCode {
    let specs = match load_specs(args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // The `--formula` properties (the last spec, built by `load_specs`) and the propositions the
    // `--spec` files declare: an undeclared atom of a `--formula` that no step labels is reported.
    let adhoc = (!args.formulas.is_empty()).then(|| specs.last()).flatten();
    let declared: Vec<&str> = specs
        .iter()
        .flat_map(|c| c.spec.propositions.iter().map(|p| p.name.as_str()))
        .collect();
    let (engine, compiler) = args.engine.engine();
    let opts = AuditOptions {
        reset: !args.no_reset,
        engine,
        compiler,
    };
    let props = match Auditor::new(&specs, &opts) {
        Ok(a) => a.properties(),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let labeling = match llm::Labeling::new(&args.llm, &specs, args.format == Format::Jsonl) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut outcomes = Vec::new();
    let mut bad_input = false;
    let mut violations = 0usize;
    for path in &args.traces {
        let mut file = path.display().to_string();
        // One audit per session: a JSON Lines file may interleave several sessions (`session`
        // field); each is a trace of its own, named `FILE#SESSION`.
        let mut sessions: Vec<(Option<String>, Auditor, TraceOutcome)> = Vec::new();
        let mut file_error: Option<String> = None;
        let mut fields_seen = Vec::new();
        let mut unknown_fields = Vec::new();
        let mut streamed = false;
        let new_session = |file: &str,
                           session: Option<String>,
                           streamed: bool|
         -> (Option<String>, Auditor, TraceOutcome) {
            // `Auditor::new` succeeded above with the same specs and options.
            let auditor = Auditor::new(&specs, &opts).expect("specs were checked");
            let name = match &session {
                Some(s) => format!("{file}#{s}"),
                None => file.to_string(),
            };
            (session, auditor, TraceOutcome::new(name, streamed))
        };
        match trace::open(path) {
            Err(e) => file_error = Some(e.to_string()),
            Ok(reader) => {
                file = reader.name().to_string();
                streamed = reader.is_stream() && args.format == Format::Text;
                // The labeling pipeline may read the trace on another thread; the reader is
                // shared so that the fields it met can be read back after the audit.
                let reader = SharedReader(Arc::new(Mutex::new(reader)));
                let shared = Arc::clone(&reader.0);
                for ev in labeling.events(&file, reader) {
                    let (ev, labels) = match ev {
                        Ok(ev) => ev,
                        Err(e) => {
                            file_error = Some(e.to_string());
                            break;
                        }
                    };
                    let i = match sessions.iter().position(|(s, _, _)| *s == ev.session) {
                        Some(i) => i,
                        None => {
                            let mut sess = new_session(&file, ev.session.clone(), streamed);
                            let recs = sess.1.initial();
                            emit(&mut out, args.format, recs, &mut sess.2);
                            sessions.push(sess);
                            sessions.len() - 1
                        }
                    };
                    let (_, auditor, outcome) = &mut sessions[i];
                    let recs = match labels {
                        Some(l) => auditor.step_labeled(&ev, l),
                        None => auditor.step(&ev),
                    };
                    emit(&mut out, args.format, recs, outcome);
                    if let Some((id, value, m)) = auditor.mismatch() {
                        let value = value.map(|v| format!(" ({v})")).unwrap_or_default();
                        eprintln!("error: {}: property {id}{value}: {m}", outcome.name);
                        let _ = out.flush();
                        return ExitCode::from(2);
                    }
                }
                // `try_lock`: after a labeling failure the pipeline's reader thread may still
                // be waiting on a stream; the field warnings are then left out.
                if let Ok(reader) = shared.try_lock() {
                    fields_seen = reader.fields_seen().to_vec();
                    unknown_fields = reader
                        .unknown_fields()
                        .into_iter()
                        .map(str::to_string)
                        .collect();
                };
            }
        }
        if sessions.is_empty() {
            // An empty or unreadable trace: still one (empty) audit, so step-0 verdicts are
            // reported.
            let mut sess = new_session(&file, None, streamed);
            if file_error.is_none() {
                let recs = sess.1.initial();
                emit(&mut out, args.format, recs, &mut sess.2);
            }
            sessions.push(sess);
        }
        let not_audited = if file_error.is_none() {
            let mut cov = Coverage::default();
            for (_, a, _) in &sessions {
                cov.merge(a.coverage());
            }
            let unknown: Vec<&str> = unknown_fields.iter().map(String::as_str).collect();
            coverage_check(&file, &cov, &fields_seen, &unknown, adhoc, &declared)
        } else {
            None
        };
        let mut file_steps = 0;
        for (_, mut auditor, mut outcome) in sessions {
            outcome.error = file_error.clone().or_else(|| not_audited.clone());
            outcome.not_audited = not_audited.is_some();
            if outcome.error.is_none() {
                let recs = auditor.end_of_trace();
                emit(&mut out, args.format, recs, &mut outcome);
            }
            outcome.steps = auditor.steps();
            file_steps += outcome.steps;
            outcome.ends = auditor.finish();
            if args.format == Format::Jsonl {
                for e in &outcome.ends {
                    let _ = writeln!(
                        out,
                        "{}",
                        jsonl_end(&outcome.name, outcome.steps, e, outcome.error.as_deref())
                    );
                }
            }
            if args.format == Format::Text {
                print_trace(&mut out, &props, &outcome);
            }
            let _ = out.flush();
            violations += outcome.ends.iter().map(|e| e.violations).sum::<usize>();
            outcomes.push(outcome);
        }
        if let Some(e) = &file_error {
            bad_input = true;
            eprintln!("error: {e}");
            if file_steps > 0 {
                eprintln!(
                    "note: the {file_steps} step(s) read before the error were audited; their verdicts are reported"
                );
            }
        } else if let Some(e) = &not_audited {
            bad_input = true;
            eprintln!("error: {e}");
        }
    }
    match args.format {
        Format::Text => {
            let _ = writeln!(
                out,
                "{} violation(s) in {} trace(s)",
                violations,
                outcomes.len()
            );
        }
        Format::Json => {
            let doc: Vec<_> = outcomes
                .iter()
                .map(|o| {
                    json!({
                        "trace": o.name,
                        "steps": o.steps,
                        "properties": props,
                        "verdicts": o.records,
                        "end": o.ends,
                        "error": o.error,
                    })
                })
                .collect();
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&doc).expect("reports serialize")
            );
        }
        Format::Jsonl => {}
    }
    let _ = out.flush();
    labeling.finish();
    if bad_input {
        ExitCode::from(2)
    } else if violations > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn jsonl_record(trace: &str, r: &VerdictRecord) -> String {
    trac_runtime::jsonl::verdict_record(trace, r).to_string()
}

fn jsonl_end(trace: &str, steps: usize, e: &PropertyEnd, error: Option<&str>) -> String {
    trac_runtime::jsonl::end_record(trace, steps, e, error).to_string()
}

/// `violated at step 3 for knife; witness:`
fn verdict_line(r: &VerdictRecord) -> String {
    let value = r
        .value
        .as_ref()
        .map(|v| format!(" for {v}"))
        .unwrap_or_default();
    format!("{} at step {}{}; witness:", r.verdict, r.step, value)
}

fn print_witness(out: &mut dyn Write, indent: &str, r: &VerdictRecord) {
    for c in &r.witness {
        let held = if c.held.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", c.held.join(", "))
        };
        let _ = writeln!(
            out,
            "{indent}   step {:>3}: {}{}  =>  {}",
            c.step, c.text, held, c.residual
        );
    }
}

/// One trace's block of the text report. Witnesses already printed as verdicts streamed are
/// not repeated.
fn print_trace(out: &mut dyn Write, props: &[trac_runtime::audit::PropertyInfo], o: &TraceOutcome) {
    let width = props.iter().map(|p| p.id.len()).max().unwrap_or(0).max(10);
    if o.steps == 0 {
        if let Some(e) = &o.error {
            // Nothing was read: the error is the whole story.
            if o.not_audited {
                // `NAME: not audited: why`
                let _ = writeln!(out, "== {e}");
            } else {
                let _ = writeln!(out, "== {}: not audited: {e}", o.name);
            }
            return;
        }
    }
    let _ = writeln!(out, "== {} ({} steps)", o.name, o.steps);
    for p in props {
        let Some(end) = o.ends.iter().find(|e| e.property == p.id) else {
            continue;
        };
        let recs: Vec<&VerdictRecord> = o.records.iter().filter(|r| r.property == p.id).collect();
        let steps: Vec<String> = recs
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .map(|r| match &r.value {
                Some(v) => format!("{} ({v})", r.step),
                None => r.step.to_string(),
            })
            .collect();
        // A property violated at least once is reported as violated even when TRAC_R
        // restarted it and it is pending again at the end.
        let status = if end.violations > 0 {
            Verdict::Violated
        } else {
            end.verdict
        };
        let _ = writeln!(
            out,
            "{:<width$} {:<9} {} violation(s){}{}  [at end: {}; ltlf: {}]",
            p.id,
            status.as_str(),
            end.violations,
            if steps.is_empty() { "" } else { " at steps " },
            steps.join(", "),
            end.verdict,
            end.ltlf
        );
        if !p.description.is_empty() {
            let _ = writeln!(out, "{:width$} rule:    {}", "", p.description);
        }
        let _ = writeln!(out, "{:width$} formula: {}", "", p.formula);
        let _ = writeln!(out, "{:width$} meaning: {}", "", p.english);
        if o.streamed {
            continue;
        }
        for r in &recs {
            let _ = writeln!(out, "{:width$} {}", "", verdict_line(r));
            print_witness(out, &" ".repeat(width), r);
        }
    }
    if let Some(e) = &o.error {
        if o.not_audited {
            let _ = writeln!(out, "{e}");
        } else {
            let _ = writeln!(out, "stopped early: {e}");
        }
    }
}
