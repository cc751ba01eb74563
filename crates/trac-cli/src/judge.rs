//! `trac judge`: the paper's LLM-as-a-judge baselines (§5.1, Figure 2) over any model trac can
//! call, scored against TRAC_R with the rules; `--with-labeler` adds TRAC with the LLM labeler
//! (scored as `trac label-eval` scores it) to the same table. The logic is in
//! `trac_experiments::judge`.

use crate::llm::{labeler_audit_scores, EvalFormat, ModelArgs};
use clap::ValueEnum;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use trac_experiments::judge::{self, JudgeConfig, JudgeTrace, Method, MethodScore, RunScore};
use trac_experiments::stats::Interval;
use trac_runtime::audit::AuditOptions;
use trac_runtime::trace::{self, Event};

/// `--method` values.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum MethodFlag {
    /// The rules and the numbered action log.
    ZeroShot,
    /// Plus the rules' worked examples (the spec properties' `examples`).
    FewShot,
    /// Plus the propositions true at each step (the spec's rules as a perfect labeler).
    FewShotLabels,
    /// The three.
    All,
}

/// `trac judge` arguments.
#[derive(clap::Args)]
pub struct JudgeArgs {
    /// The spec (RON): each property's `description` is a rule shown to the judge, its
    /// `examples` the few-shot examples; its labeling rules give TRAC_R's reference verdicts.
    #[arg(long, value_name = "FILE")]
    pub spec: PathBuf,
    /// The judge baseline(s).
    #[arg(long, value_enum, default_value_t = MethodFlag::All)]
    pub method: MethodFlag,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Runs of each method (sampled at temperature 0.2, seed = run): the F1 is their mean with
    /// a 95% interval.
    #[arg(long, value_name = "R", default_value_t = 1,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub runs: usize,
    /// Add TRAC with the LLM labeler (the same model) to the table, as `trac label-eval`
    /// scores it.
    #[arg(long)]
    pub with_labeler: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = EvalFormat::Text)]
    pub format: EvalFormat,
    #[command(flatten)]
    pub engine: crate::compile::EngineArgs,
    /// Traces (plain-text action logs, JSON Lines, chat logs).
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
}

/// Runs `trac judge`: exit 0, or 2 on bad input (a judge that fails on a trace is reported, not
/// an error).
pub fn run(args: &JudgeArgs) -> ExitCode {
    match run_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        // Spec diagnostics come as `error: ...` lines already.
        Err(e) if e.starts_with("error:") => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &JudgeArgs) -> Result<(), String> {
    crate::stdin_once(&args.traces)?;
    let specs = crate::load_spec_list(std::slice::from_ref(&args.spec), &[])?;
    let spec = &specs[0];
    if spec.properties.is_empty() {
        return Err(format!(
            "{}: the spec has no property to judge",
            args.spec.display()
        ));
    }
    let setup = args.model.resolve(None).map_err(|e| e.to_string())?;
    let (engine, compiler) = args.engine.engine();
    let opts = AuditOptions {
        reset: true,
        engine,
        compiler,
    };
    let mut traces: Vec<JudgeTrace> = Vec::new();
    for path in &args.traces {
        let events: Vec<Event> = trace::open(path)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        if events.is_empty() {
            return Err(format!("{}: no event in the trace", path.display()));
        }
        let name = path.display().to_string();
        traces.extend(judge::prepare(spec, &opts, &name, &events).map_err(|e| e.to_string())?);
    }
    let model = crate::model::open_if_needed(setup.opts.as_ref(), true)
        .map_err(|e| e.to_string())?
        .expect("a model when needed");
    let methods: Vec<Method> = match args.method {
        MethodFlag::ZeroShot => vec![Method::ZeroShot],
        MethodFlag::FewShot => vec![Method::FewShot],
        MethodFlag::FewShotLabels => vec![Method::FewShotLabels],
        MethodFlag::All => Method::ALL.to_vec(),
    };
    let config = JudgeConfig {
        concurrency: setup.concurrency,
        ..JudgeConfig::default()
    };
    let mut rows = judge::evaluate(model.as_ref(), spec, &traces, &methods, args.runs, &config);
    if args.with_labeler {
        let mut runs = Vec::new();
        for r in 0..args.runs {
            let scores =
                labeler_audit_scores(&specs, model.clone(), &setup, &opts, &args.traces, r)?;
            runs.push(RunScore {
                scores,
                judged: traces.len(),
                failures: Vec::new(),
            });
        }
        rows.push(MethodScore::new(
            &spec.spec.name,
            "trac+labeler",
            runs,
            true,
        ));
    }
    for row in &rows {
        for (r, run) in row.runs.iter().enumerate() {
            for (trace, why) in &run.failures {
                eprintln!(
                    "judge failure: {} run {}: {trace}: {why}",
                    row.method,
                    r + 1
                );
            }
        }
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        EvalFormat::Json => {
            let doc = json!({
                "domain": spec.spec.name,
                "model": model.name(),
                "traces": traces.len(),
                "runs": args.runs,
                "rows": rows,
                "usage": model.usage(),
            });
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&doc).expect("a report serializes")
            );
        }
        EvalFormat::Text => print_table(&mut out, &rows, model.name(), traces.len(), args.runs),
    }
    let _ = out.flush();
    crate::llm::report_usage(model.as_ref());
    Ok(())
}

/// The Figure 2 table: per domain and method, the mean F1 with its 95% interval.
fn print_table(
    out: &mut impl Write,
    rows: &[MethodScore],
    model: &str,
    traces: usize,
    runs: usize,
) {
    let _ = writeln!(
        out,
        "judge: model {model}, {traces} trace(s), {runs} run(s); reference: TRAC_R with the rules"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<14} {:<16} {:>6} {:>16} {:>6} {:>16} {:>8}",
        "domain", "method", "V.F1", "V.F1 95% CI", "S.F1", "S.F1 95% CI", "failures"
    );
    let cell = |i: &Option<Interval>| match i {
        Some(i) => (
            format!("{:.3}", i.value),
            format!("[{:.3}, {:.3}]", i.low, i.high),
        ),
        None => ("-".to_string(), "-".to_string()),
    };
    for r in rows {
        let (v, vi) = cell(&r.violation_f1);
        let (s, si) = cell(&r.satisfaction_f1);
        let _ = writeln!(
            out,
            "{:<14} {:<16} {:>6} {:>16} {:>6} {:>16} {:>8}",
            r.domain, r.method, v, vi, s, si, r.failures
        );
    }
    let _ = writeln!(
        out,
        "\nV.F1 / S.F1: F1 of the violations / satisfactions against TRAC_R with the rules (a violation = property and step), mean over runs with its 95% interval (Student t); - when undefined. A judge reports no satisfaction. failures: traces whose answer could not be read (left out of the F1, listed on stderr)."
    );
}
