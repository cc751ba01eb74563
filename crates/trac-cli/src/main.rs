//! `trac`: audit agent traces against LTL rules, and check formulas.
//!
//! Exit codes: 0 no violation, 1 violations found, 2 bad input or usage.

mod compile;
mod llm;
mod model;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use trac_runtime::audit::{AuditOptions, Auditor, PropertyEnd, VerdictRecord};
use trac_runtime::trace;
use trac_runtime::Verdict;
use trac_spec::spec::{CheckedSpec, PropertyDecl, Spec};

#[derive(Parser)]
#[command(
    name = "trac",
    version,
    about = "Runtime verification of AI agents against temporal rules (LTL).",
    long_about = "Runtime verification of AI agents against temporal rules (LTL).\n\nExit codes: 0 no violation, 1 violations found, 2 bad input or usage."
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
    /// The embedded model (run in process, no server): `trac model fetch` gets it.
    Model(model::ModelCmd),
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
    /// Trace files: JSON Lines (`.jsonl`, or lines starting with `{`) or plain-text action logs.
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
        Command::Model(cmd) => model::run(&cmd),
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
    error: Option<String>,
}

fn audit(args: &AuditArgs) -> ExitCode {
    let specs = match load_specs(args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let (engine, compiler) = args.engine.engine();
    let opts = AuditOptions {
        reset: !args.no_reset,
        engine,
        compiler,
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
    let mut props = Vec::new();
    for path in &args.traces {
        let file = path.display().to_string();
        // One audit per session: a JSON Lines file may interleave several sessions (`session`
        // field); each is a trace of its own, named `FILE#SESSION`.
        let mut sessions: Vec<(Option<String>, Auditor, TraceOutcome)> = Vec::new();
        let mut file_error: Option<String> = None;
        let new_session =
            |session: Option<String>| -> Result<(Option<String>, Auditor, TraceOutcome), String> {
                let auditor = Auditor::new(&specs, &opts).map_err(|e| e.to_string())?;
                let name = match &session {
                    Some(s) => format!("{file}#{s}"),
                    None => file.clone(),
                };
                Ok((
                    session,
                    auditor,
                    TraceOutcome {
                        name,
                        steps: 0,
                        records: Vec::new(),
                        ends: Vec::new(),
                        error: None,
                    },
                ))
            };
        let emit = |out: &mut dyn Write, recs: Vec<VerdictRecord>, o: &mut TraceOutcome| {
            if args.format == Format::Jsonl {
                for r in &recs {
                    let _ = writeln!(out, "{}", jsonl_record(&o.name, r));
                }
            }
            o.records.extend(recs);
        };
        match trace::open(path) {
            Err(e) => file_error = Some(e.to_string()),
            Ok(reader) => {
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
                            let mut sess = match new_session(ev.session.clone()) {
                                Ok(x) => x,
                                Err(e) => {
                                    eprintln!("error: {e}");
                                    return ExitCode::from(2);
                                }
                            };
                            let recs = sess.1.initial();
                            emit(&mut out, recs, &mut sess.2);
                            sessions.push(sess);
                            sessions.len() - 1
                        }
                    };
                    let (_, auditor, outcome) = &mut sessions[i];
                    let recs = match labels {
                        Some(l) => auditor.step_labeled(&ev, l),
                        None => auditor.step(&ev),
                    };
                    emit(&mut out, recs, outcome);
                    if let Some((id, value, m)) = auditor.mismatch() {
                        let value = value.map(|v| format!(" ({v})")).unwrap_or_default();
                        eprintln!("error: {}: property {id}{value}: {m}", outcome.name);
                        let _ = out.flush();
                        return ExitCode::from(2);
                    }
                }
            }
        }
        if sessions.is_empty() {
            // An empty or unreadable trace: still one (empty) audit, so step-0 verdicts and
            // end-of-trace verdicts of the empty trace are reported.
            let mut sess = match new_session(None) {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            if file_error.is_none() {
                let recs = sess.1.initial();
                emit(&mut out, recs, &mut sess.2);
            }
            sessions.push(sess);
        }
        let mut file_steps = 0;
        for (_, mut auditor, mut outcome) in sessions {
            props = auditor.properties();
            outcome.error.clone_from(&file_error);
            if outcome.error.is_none() {
                let recs = auditor.end_of_trace();
                emit(&mut out, recs, &mut outcome);
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
        }
    }
    match args.format {
        Format::Text => print_text(&mut out, &props, &outcomes),
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
    json!({
        "trace": trace,
        "property": r.property,
        "step": r.step,
        "verdict": r.verdict,
        "value": r.value,
        "residual": r.residual,
        "restarted_with": r.restarted_with,
        "witness": r.witness,
    })
    .to_string()
}

fn jsonl_end(trace: &str, steps: usize, e: &PropertyEnd, error: Option<&str>) -> String {
    json!({
        "trace": trace,
        "property": e.property,
        "end": true,
        "error": error,
        "steps": steps,
        "verdict": e.verdict,
        "violations": e.violations,
        "ltlf": e.ltlf,
        "instances": e.instances,
    })
    .to_string()
}

fn print_text(
    out: &mut dyn Write,
    props: &[trac_runtime::audit::PropertyInfo],
    outcomes: &[TraceOutcome],
) {
    let width = props.iter().map(|p| p.id.len()).max().unwrap_or(0).max(10);
    for o in outcomes {
        if o.steps == 0 {
            if let Some(e) = &o.error {
                // Nothing was read: the error is the whole story.
                let _ = writeln!(out, "== {}: not audited: {e}", o.name);
                continue;
            }
        }
        let _ = writeln!(out, "== {} ({} steps)", o.name, o.steps);
        for p in props {
            let Some(end) = o.ends.iter().find(|e| e.property == p.id) else {
                continue;
            };
            let recs: Vec<&VerdictRecord> =
                o.records.iter().filter(|r| r.property == p.id).collect();
            let viol: Vec<&&VerdictRecord> = recs
                .iter()
                .filter(|r| r.verdict == Verdict::Violated)
                .collect();
            let steps: Vec<String> = viol
                .iter()
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
            for r in &recs {
                let value = r
                    .value
                    .as_ref()
                    .map(|v| format!(" for {v}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{:width$} {} at step {}{}; witness:",
                    "", r.verdict, r.step, value
                );
                for c in &r.witness {
                    let held = if c.held.is_empty() {
                        String::new()
                    } else {
                        format!(" {{{}}}", c.held.join(", "))
                    };
                    let _ = writeln!(
                        out,
                        "{:width$}   step {:>3}: {}{}  =>  {}",
                        "", c.step, c.text, held, c.residual
                    );
                }
            }
        }
        if let Some(e) = &o.error {
            let _ = writeln!(out, "stopped early: {e}");
        }
    }
    let total: usize = outcomes
        .iter()
        .flat_map(|o| o.ends.iter())
        .map(|e| e.violations)
        .sum();
    let _ = writeln!(out, "{} violation(s) in {} trace(s)", total, outcomes.len());
}
