//! `trac`: audit agent traces against LTL rules, and check formulas.
//!
//! The command line as a library: [`main`] parses the process's arguments and runs the command.
//! The `trac-cli` binary of this crate and the `trac` binary of the root package (installed by
//! `cargo install --path .`) both call it.
//!
//! Exit codes: 0 no violation, 1 violations found, 2 bad input or usage, or a trace not audited
//! (empty, or no event understood).
#![deny(missing_docs)]

/// `eprintln!` that ignores write errors: a closed or full standard error (`2>&-` of a pipe
/// whose reader left, `2>/dev/full`) must not turn an exit code into a panic (101), as for
/// standard output. Shadows the standard macro in every module of this crate (declared before
/// them).
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that ignores write errors (a closed pipe), as `eprintln!` here.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod audit;
mod compile;
mod experiment;
mod gateway;
mod judge;
mod llm;
mod model;
mod report;
mod run;
pub mod scripted_agent;

use clap::{Parser, Subcommand, ValueEnum};
use report::progress::Progress;
use report::Printer;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use trac_runtime::audit::{AuditOptions, AuditPlan};
use trac_runtime::trace;
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
    /// The embedded model (run in process, no server): `trac model fetch` gets it.
    Model(model::ModelCmd),
    /// Ask an LLM to judge the traces against the spec's rules (the paper's zero-shot,
    /// few-shot and few-shot-with-labels baselines) and score it against TRAC_R: per method,
    /// the F1 of the violations found, mean over runs with a 95% interval.
    Judge(Box<judge::JudgeArgs>),
    /// The paper's experiments on generated traces: `trac experiment temporal` (how an LLM
    /// judge degrades with temporal distance, constraints, propositions and wording, beside
    /// TRAC).
    Experiment(experiment::ExperimentCmd),
    /// Run an LLM agent in an environment under the monitors (TRAC_P+I): predict violations
    /// within k steps and intervene (resample, inject, switch, shield); summaries per run and
    /// over runs, and a JSON Lines log that `trac audit` re-audits.
    Run(Box<run::RunArgs>),
    /// Serve the OpenAI Chat Completions API and Anthropic's Messages API in front of an
    /// upstream server, monitoring every conversation against the specs (and, with
    /// `--intervene shield`, blocking the responses that would break a rule): point an agent's
    /// base URL at it.
    Gateway(Box<gateway::GatewayArgs>),
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
    /// One line per trace and property: verdict, violation count, first violation step (text
    /// format only).
    #[arg(long)]
    summary: bool,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    engine: compile::EngineArgs,
    #[command(flatten)]
    llm: llm::LlmArgs,
    /// Trace format: detected from the first non-empty line (`auto`), or one of JSON Lines
    /// events, plain text, OpenAI chat messages, Anthropic messages, OTLP JSON GenAI spans.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    input_format: InputFormat,
    /// What a step of a chat trace is: each message, each turn (a user message and what
    /// follows up to the next one), or each tool call (an assistant message with calls is one
    /// step per call, in order, then one for its text).
    #[arg(long, value_enum, default_value_t = StepPerArg::Message)]
    step_per: StepPerArg,
    /// The longest trace line, and the longest message or document of a JSON array or
    /// pretty-printed file, in bytes: a longer one is an error at its line, and the file is
    /// not read further (an input without newline would otherwise fill memory).
    #[arg(long, value_name = "BYTES", default_value_t = trace::DEFAULT_MAX_LINE_BYTES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_line_bytes: usize,
    /// Audit up to N trace files at once (1 to 256; default: the number of cores). The report, messages
    /// and exit code are the same as with `-j 1`: each file's output is written in argument
    /// order. Standard input, pipes and LLM labeling are audited one file at a time. With one
    /// trace file and `-j N` given, its sessions are audited on N threads (same output, byte
    /// for byte, in every format); a file of fewer than 4096 events or whose first 4096 events
    /// are one session stays on one thread.
    #[arg(short = 'j', long = "jobs", value_name = "N", allow_negative_numbers = true, value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// Trace files: JSON Lines events, plain-text action logs, chat logs (OpenAI, Anthropic) or
    /// OTLP JSON spans; `-` reads standard input. Pipes are read as events arrive.
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<PathBuf>,
}

/// `--input-format`.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum InputFormat {
    /// Detect the format from the first non-empty line.
    Auto,
    /// One JSON event per line (`session`, `step`, `input`, `output`, `labels`).
    Jsonl,
    /// One action per line.
    Text,
    /// OpenAI chat messages: an array, JSON Lines of messages, or `{"messages": [...]}` objects.
    Openai,
    /// Anthropic messages (content blocks `text`, `tool_use`, `tool_result`).
    Anthropic,
    /// OpenTelemetry GenAI spans as OTLP JSON.
    Otlp,
}

/// `--step-per`.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum StepPerArg {
    /// One step per message.
    Message,
    /// One step per turn.
    Turn,
    /// One step per tool call.
    Call,
}

impl AuditArgs {
    fn read_options(&self) -> trace::ReadOptions {
        use trace::TraceFormat as F;
        trace::ReadOptions {
            format: match self.input_format {
                InputFormat::Auto => None,
                InputFormat::Jsonl => Some(F::Jsonl),
                InputFormat::Text => Some(F::Text),
                InputFormat::Openai => Some(F::OpenAi),
                InputFormat::Anthropic => Some(F::Anthropic),
                InputFormat::Otlp => Some(F::Otlp),
            },
            step_per: match self.step_per {
                StepPerArg::Message => trace::StepPer::Message,
                StepPerArg::Turn => trace::StepPer::Turn,
                StepPerArg::Call => trace::StepPer::Call,
            },
            max_line_bytes: self.max_line_bytes,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    /// For people: per property its verdict, violation count and steps, and witnesses.
    Text,
    /// One JSON document: an array of trace reports.
    Json,
    /// One JSON object per verdict, then one `"end": true` object per trace and property.
    Jsonl,
    /// SARIF 2.1.0 for CI systems: a result per violation, located at its step's line.
    Sarif,
    /// One self-contained HTML page: summary, timelines, witnesses, monitor drawings.
    Html,
}

/// Runs the `trac` command line on the process's arguments; returns the exit code (0 clean, 1
/// violations, 2 bad input or usage).
pub fn main() -> ExitCode {
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
        Command::Judge(args) => judge::run(&args),
        Command::Experiment(cmd) => experiment::run(&cmd),
        Command::Run(args) => run::run(&args),
        Command::Gateway(args) => gateway::run(&args),
    }
}

fn check(src: &str) -> ExitCode {
    let mut arena = trac_ltl::Arena::new();
    let prop = match trac_ltl::parse_property(&mut arena, src) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{}", e.render(src));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = trac_ltl::progress::validate(&arena, prop.body) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if let Err(e) = trac_ltl::parser::check_vars_used(&arena, &prop, src) {
        eprintln!("{}", e.render(src));
        return ExitCode::from(2);
    }
    let printed = trac_ltl::printer::print_with_quantifier(&arena, prop.var.as_deref(), prop.body);
    let english = trac_ltl::english::render(&arena, prop.body, &Default::default());
    let atoms: Vec<String> = arena
        .atoms(prop.body)
        .into_iter()
        .map(|s| {
            let name = arena.sym_name(s);
            match trac_core::names::comparison_sides(name) {
                // `a = b`, as written.
                Some(_) => trac_ltl::printer::atom_text(name),
                None => name.to_string(),
            }
        })
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
    load_spec_list(&args.specs, &args.formulas)
}

/// Warns about each property that mentions `end` in a spec under LTL3 (the default, and every
/// `--formula`): there a trace never ends, `end` never holds, and a rule such as
/// `G(end -> O saved)` passes whatever the trace (a silent "0 violations").
fn warn_end_under_ltl3(specs: &[CheckedSpec]) {
    for c in specs {
        for p in &c.properties {
            if p.decl.semantics == trac_spec::spec::Semantics::Ltl3
                && trac_ltl::sugar::mentions_end(&p.arena, p.formula)
            {
                eprintln!(
                    "warning: property `{}` ({}) uses `end`, which never holds under LTL3 (the default: a trace never ends); give it `semantics: Ltlf` in a spec file to check the trace as a whole",
                    p.decl.id, c.spec.name
                );
            }
        }
    }
}

/// The spec files `paths` read and checked as `trac audit` checks them (labeling rules
/// included, several specs combined by the library's policy), then the `--formula` properties
/// `formulas` as one more spec; every error rendered with its position, one per line.
pub(crate) fn load_spec_list(
    paths: &[PathBuf],
    formulas: &[String],
) -> Result<Vec<CheckedSpec>, String> {
    let mut specs = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match Spec::from_path(path).and_then(|s| trac_runtime::label::labeler::check_spec(&s)) {
            Ok(c) => specs.push(c),
            Err(e) => errors.extend(report::diagnostics(&e)),
        }
    }
    if errors.is_empty() {
        let files: Vec<Option<String>> = paths
            .iter()
            .map(|p| Some(p.display().to_string()))
            .collect();
        match trac_runtime::audit::specs::combine(&mut specs, &files) {
            Ok(renamed) => {
                for r in renamed {
                    eprintln!("note: {r}");
                }
            }
            Err(e) => errors.extend(e.iter().map(|e| format!("error: {e}"))),
        }
    }
    if !formulas.is_empty() {
        let mut properties = Vec::new();
        for (i, f) in formulas.iter().enumerate() {
            let mut arena = trac_ltl::Arena::new();
            if let Err(e) = trac_ltl::parse_property(&mut arena, f) {
                errors.push(report::with_context(
                    &e.render(f),
                    &format!("--formula f{}", i + 1),
                ));
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
            match trac_runtime::label::labeler::check_spec(&spec) {
                Ok(c) => {
                    let arity = check_formula_atoms(&specs, &c);
                    if arity.is_empty() {
                        specs.push(c)
                    } else {
                        errors.extend(arity)
                    }
                }
                Err(e) => errors.extend(report::diagnostics(&e)),
            }
        }
    }
    if specs.is_empty() && errors.is_empty() {
        errors.push(
            "error: nothing to check: give at least one --spec FILE or --formula FORMULA".into(),
        );
    }
    // A spec without properties only labels; when no spec has one, nothing would be checked and
    // every trace would pass.
    // (Without errors, `specs` holds the `--spec` files in order, then the `--formula` spec.)
    if errors.is_empty() {
        let empty: Vec<String> = paths
            .iter()
            .zip(&specs)
            .filter(|(_, c)| c.properties.is_empty())
            .map(|(p, _)| p.display().to_string())
            .collect();
        if specs.iter().all(|c| c.properties.is_empty()) {
            errors.push(format!(
                "error: nothing to check: {} declare(s) no property; give a --formula or a spec with properties",
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
        warn_end_under_ltl3(&specs);
        Ok(specs)
    } else {
        Err(errors.join("\n"))
    }
}

/// Warns (on stderr) about atoms of `--formula` properties that no `--spec` declares: they hold
/// only when the trace itself labels a step with them, which is likely a typo when specs are given.
/// Warns about `--formula` atoms that no `--spec` declares, and returns an error for each atom
/// of a declared proposition used with the wrong number of arguments (`G !take` when `take`
/// has a parameter: it would never hold, and the audit would pass silently).
fn check_formula_atoms(specs: &[CheckedSpec], adhoc: &CheckedSpec) -> Vec<String> {
    let declared: Vec<(&str, usize)> = specs
        .iter()
        .flat_map(|c| {
            c.spec.propositions.iter().map(|p| {
                let n = p.param.as_deref().map_or(0, |x| x.split(',').count());
                (p.name.as_str(), n)
            })
        })
        .collect();
    let mut errors = Vec::new();
    if declared.is_empty() {
        return errors;
    }
    for p in &adhoc.properties {
        for s in p.arena.atoms(p.formula) {
            let parts = p.arena.sym_parts(s);
            let base = &parts.base;
            let given = parts.arg.as_deref().map_or(0, |a| a.split(',').count());
            if let Some((_, n)) = declared.iter().find(|(d, _)| *d == base.as_str()) {
                if *n != given {
                    errors.push(format!(
                        "error: --formula {}: `{}` has {given} argument(s), but proposition `{base}` has {n} parameter(s)",
                        p.decl.id,
                        p.arena.sym_name(s)
                    ));
                }
                continue;
            }
            {
                eprintln!(
                    "warning: --formula {}: `{}` is not a proposition of any --spec; it holds only at steps the trace labels with it",
                    p.decl.id,
                    p.arena.sym_name(s)
                );
            }
        }
    }
    errors
}

/// The spec files given, in order, as displayed.
fn spec_files(args: &AuditArgs) -> Vec<String> {
    args.specs.iter().map(|p| p.display().to_string()).collect()
}

/// The printer for `--format` and `--summary`. Errors: `--summary` with another format than text.
fn report_printer(args: &AuditArgs, cx: report::Context) -> Result<Box<dyn Printer>, String> {
    use report::{html::Html, json::Json, sarif::Sarif, summary::Summary, text::Text};
    Ok(match (args.format, args.summary) {
        (Format::Text, true) => Box::new(Summary::new(&cx)),
        (_, true) => {
            return Err("--summary is a text format: it cannot be combined with --format".into())
        }
        (Format::Text, false) => Box::new(Text::new(&cx)),
        (Format::Json, false) => Box::new(Json::new(&cx, false)),
        (Format::Jsonl, false) => Box::new(Json::new(&cx, true)),
        (Format::Sarif, false) => Box::new(Sarif::new(&cx)),
        (Format::Html, false) => Box::new(Html::new(cx)),
    })
}

/// `-` (standard input) may be given once among the traces: a second audit of it would read
/// nothing (and report an empty trace as if it were one).
///
/// # Errors
/// The usage error, when `-` is given several times.
pub(crate) fn stdin_once(traces: &[PathBuf]) -> Result<(), String> {
    let n = traces.iter().filter(|p| p.as_os_str() == "-").count();
    if n > 1 {
        return Err(format!(
            "`-` (standard input) is given {n} times: it can be read only once"
        ));
    }
    Ok(())
}

/// `-o FILE` must not name one of the inputs (a trace or a spec): the report would truncate it
/// before it is read. Paths are compared after resolving them (`./x` and `x` are the same file).
///
/// # Errors
/// The usage error, naming the file.
pub(crate) fn output_not_an_input(
    output: Option<&PathBuf>,
    inputs: &[&PathBuf],
) -> Result<(), String> {
    let Some(out) = output else { return Ok(()) };
    let Ok(out_real) = std::fs::canonicalize(out) else {
        return Ok(()); // does not exist yet: not an input
    };
    for i in inputs {
        if i.as_os_str() != "-" && std::fs::canonicalize(i).is_ok_and(|r| r == out_real) {
            return Err(format!(
                "-o {}: the report would overwrite an input file; choose another output file",
                out.display()
            ));
        }
    }
    Ok(())
}

/// While the returned sender lives, a thread waits [`SLOW_BUILD`]; if the monitors are not
/// built by then it says on stderr that compiling takes long and what starts at once. Compiled
/// tables can be exponential in the formula (conjunctions of many `G(a -> F b)`), and a silent
/// wait looks like a hang.
fn slow_build_hint(engine: &str) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    if engine != "progression" {
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(SLOW_BUILD) {
                eprintln!(
                    "note: compiling the monitors takes long (a table can grow exponentially with the formula); `--engine progression` starts at once"
                );
            }
        });
    }
    tx
}

/// The most threads `-j N` starts: more than the cores of any machine trac runs on, few enough
/// that the thread pool can always be started (`-j 99999999999` tried to start that many).
pub const MAX_JOBS: usize = 256;

/// The value of `-j N`: 1 to [`MAX_JOBS`] threads.
fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_JOBS).contains(&n) => Ok(n),
        _ => Err(format!("expected 1 to {MAX_JOBS} threads")),
    }
}

/// A note on stderr per property whose table is over the state budget (`--max-states`), so
/// the compiled engine runs it by complete progression: same verdicts, slower steps.
pub(crate) fn print_fallbacks(plan: &AuditPlan) {
    for f in plan.fallbacks() {
        eprintln!("{}", fallback_note(f));
    }
}

/// The note of [`print_fallbacks`] for one property.
pub(crate) fn fallback_note(f: &trac_runtime::audit::Fallback) -> String {
    format!(
        "note: property {}: {}; it is monitored by progression with bounded satisfiability checks instead: every verdict is sound and, unless a check runs out of its budget, the same as the table's, at the same step (`--max-states` of trac audit and trac compile raises the budget)",
        f.property, f.cause
    )
}

/// How long building the monitors may take before [`slow_build_hint`] speaks.
const SLOW_BUILD: std::time::Duration = std::time::Duration::from_secs(5);

fn audit(args: &AuditArgs) -> ExitCode {
    if let Err(e) = stdin_once(&args.traces) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let inputs: Vec<&PathBuf> = args.traces.iter().chain(&args.specs).collect();
    if let Err(e) = output_not_an_input(args.output.as_ref(), &inputs) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let specs = match load_specs(args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // The `--formula` properties (the last spec, built by `load_specs`) and the propositions the
    // `--spec` files declare: an undeclared atom of a `--formula` that no step labels is reported.
    let checks = trac_runtime::audit::Checks {
        specs: specs.clone().into(),
        model: false,
        adhoc: (!args.formulas.is_empty())
            .then(|| specs.last().cloned().map(std::sync::Arc::new))
            .flatten(),
        declared: specs
            .iter()
            .flat_map(|c| c.spec.propositions.iter().map(|p| p.name.clone()))
            .collect(),
    };
    let (engine, compiler) = match args.engine.engine_checked() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = AuditOptions {
        reset: !args.no_reset,
        engine,
        compiler,
    };
    // Monitors, tables and labeling rules are built once; every session's auditor shares them.
    let built = slow_build_hint(engine.as_str());
    let plan = AuditPlan::new(&specs, &opts);
    drop(built);
    let mut plan = match plan {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            if e.is_too_large() {
                // Only cross-check refuses it: it has no table to compare with.
                eprintln!("  = help: --engine progression monitors it without a table (or the default --engine compiled, by complete progression); or raise --max-states (0: no limit)");
            }
            return ExitCode::from(2);
        }
    };
    print_fallbacks(&plan);
    let labeling = match llm::Labeling::new(&args.llm, &specs, args.format == Format::Jsonl) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let cx = report::Context::new(
        &specs,
        &spec_files(args),
        plan.properties(),
        opts.reset,
        engine.as_str(),
        opts.compiler.clone(),
    );
    let mut printer = match report_printer(args, cx) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // Witnesses are recorded only for reports that show them.
    let witnesses = printer.witnesses();
    plan.set_witnesses(witnesses);
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => {
                eprintln!("error: {}: cannot write the report: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        // Buffered unless a person watches it, or the labeling pipeline writes `--show-labels`
        // records to stdout between the report's lines.
        None if labeling.active().is_none() && !std::io::stdout().is_terminal() => Box::new(
            std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock()),
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut progress = Progress::new(&args.traces);
    let mut kept = report::Kept::default();
    let fa = audit::FileAudit {
        plan: &plan,
        printer: &*printer,
        read_options: args.read_options(),
        checks: &checks,
        text: args.format == Format::Text && !args.summary,
    };
    // `-j N`: files on N threads when they are all regular files and no labeling pipeline runs
    // (an LLM labeler has its own concurrency); the output is the sequential run's, in order.
    let jobs = match args.jobs {
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS)),
    };
    let jobs = if audit::parallel_safe(&args.traces) {
        jobs
    } else {
        1
    };
    // One file's sessions on threads only when `-j N` is given: on a loaded 2-core machine the
    // reader, workers and merger cost more CPU than they save (BENCHMARKS.md, issue 27).
    let session_jobs = if args.jobs.is_some() { jobs } else { 1 };
    let rebuild = || {
        AuditPlan::new(&specs, &opts).ok().map(|mut p| {
            p.set_witnesses(witnesses);
            p
        })
    };
    let run = audit::audit_files(
        &fa,
        &rebuild,
        &args.traces,
        jobs,
        session_jobs,
        labeling.active(),
        &mut *out,
        &mut progress,
        &mut kept,
    );
    if run.abort {
        progress.finish();
        let _ = out.flush();
        return ExitCode::from(2);
    }
    let (violations, bad_input) = (run.violations, run.bad_input);
    progress.finish();
    let written = printer
        .finish(&mut *out, kept, violations)
        .and_then(|()| out.flush());
    if let (Err(e), Some(path)) = (written, &args.output) {
        eprintln!("error: {}: cannot write the report: {e}", path.display());
        return ExitCode::from(2);
    }
    labeling.finish();
    if bad_input {
        ExitCode::from(2)
    } else if violations > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
