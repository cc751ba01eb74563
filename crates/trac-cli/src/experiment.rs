//! `trac experiment temporal`: the paper's synthetic temporal-reasoning study (§5.2, Figure 3)
//! with any model as the judge; writes `DIR/SWEEP.json` and `DIR/SWEEP.svg` and prints the
//! table. The logic is in `trac_experiments::temporal`.

use crate::llm::ModelArgs;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use trac_experiments::temporal::{self, svg, FormulaKind, Sweep, SweepConfig, SweepResult};

/// `trac experiment ...`
#[derive(clap::Args)]
pub struct ExperimentCmd {
    #[command(subcommand)]
    action: ExperimentAction,
}

#[derive(clap::Subcommand)]
enum ExperimentAction {
    /// Generated traces of observed entities and temporal constraints: the judge answers
    /// VALID / INVALID, TRAC's monitors read the generated labels; per sweep point the judge's
    /// accuracy (95% Wilson interval), TRAC's, and the samples.
    Temporal(Box<TemporalArgs>),
}

/// `--sweep` values.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum SweepFlag {
    /// Temporal elasticity: the gap between the constrained events (1 to 1000 steps).
    Gap,
    /// Constraint scalability: 1 to 20 constraints judged in one trace.
    Constraints,
    /// Proposition scalability: entities per step (the others distract).
    Propositions,
    /// Specification language: 5 Dwyer patterns and 2 trees, in 3 renderings.
    Language,
}

/// `--formula` values.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum FormulaFlag {
    /// `F(A & X F B)`.
    Simple,
    /// The tree of branching 2 and depth 2.
    Tree,
}

/// `trac experiment temporal` arguments.
#[derive(clap::Args)]
struct TemporalArgs {
    /// The sweep.
    #[arg(long, value_enum)]
    sweep: SweepFlag,
    /// The formula of the gap and propositions sweeps.
    #[arg(long, value_enum, default_value_t = FormulaFlag::Simple)]
    formula: FormulaFlag,
    /// The swept values, comma-separated [default: gap 1,2,5,10,20,50,100,200,500,1000;
    /// constraints 1,2,5,10,15,20; propositions 1,2,4,8,16].
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    values: Option<Vec<usize>>,
    /// Traces per point (the paper: 40).
    #[arg(long, value_name = "N", default_value_t = 40)]
    samples: usize,
    /// Seeds the samples are spread over (the paper: 10).
    #[arg(long, value_name = "S", default_value_t = 10)]
    seeds: usize,
    #[command(flatten)]
    model: ModelArgs,
    /// The directory written: SWEEP.json and SWEEP.svg.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Runs `trac experiment ...`: exit 0, or 2 on bad input or a file that cannot be written.
pub fn run(cmd: &ExperimentCmd) -> ExitCode {
    let ExperimentAction::Temporal(args) = &cmd.action;
    match temporal_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn temporal_inner(args: &TemporalArgs) -> Result<(), String> {
    let setup = args.model.resolve(None).map_err(|e| e.to_string())?;
    let sweep = match args.sweep {
        SweepFlag::Gap => Sweep::Gap,
        SweepFlag::Constraints => Sweep::Constraints,
        SweepFlag::Propositions => Sweep::Propositions,
        SweepFlag::Language => Sweep::Language,
    };
    let config = SweepConfig {
        formula: match args.formula {
            FormulaFlag::Simple => FormulaKind::Simple,
            FormulaFlag::Tree => FormulaKind::Tree,
        },
        values: args.values.clone(),
        samples: args.samples,
        seeds: args.seeds,
        concurrency: setup.concurrency,
        ..SweepConfig::new(sweep)
    };
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("{}: cannot create the directory: {e}", args.out.display()))?;
    let model = crate::model::open_if_needed(setup.opts.as_ref(), true)
        .map_err(|e| e.to_string())?
        .expect("a model when needed");
    let result = temporal::run_sweep(model.as_ref(), &config).map_err(|e| e.to_string())?;
    let json = args.out.join(format!("{}.json", sweep.name()));
    let plot = args.out.join(format!("{}.svg", sweep.name()));
    let doc = serde_json::to_string_pretty(&result).expect("a result serializes");
    std::fs::write(&json, doc + "\n").map_err(|e| format!("{}: {e}", json.display()))?;
    std::fs::write(&plot, svg::plot(&result)).map_err(|e| format!("{}: {e}", plot.display()))?;
    let mut out = std::io::stdout().lock();
    print_table(&mut out, &result);
    let _ = writeln!(out, "\nwrote {} and {}", json.display(), plot.display());
    for p in &result.points {
        if let Some(f) = &p.first_failure {
            eprintln!(
                "judge failures at {}: {} (first: {f})",
                p.label, p.judge_failures
            );
        }
    }
    crate::llm::report_usage(model.as_ref());
    Ok(())
}

fn print_table(out: &mut impl Write, r: &SweepResult) {
    let _ = writeln!(
        out,
        "experiment temporal --sweep {}: judge {}, {} sample(s) per point over {} seed(s)",
        r.sweep.name(),
        r.model,
        r.samples,
        r.seeds
    );
    let w = r
        .points
        .iter()
        .map(|p| p.label.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "\n{:<w$} {:>7} {:>8} {:>16} {:>8} {:>8}",
        "point", "answers", "judge", "judge 95% CI", "failures", "TRAC"
    );
    for p in &r.points {
        let (acc, ci) = match p.judge_accuracy {
            Some(a) => (
                format!("{:.3}", a.value),
                format!("[{:.3}, {:.3}]", a.low, a.high),
            ),
            None => ("-".into(), "-".into()),
        };
        let trac = p.trac_accuracy.map_or("-".into(), |a| format!("{a:.3}"));
        let _ = writeln!(
            out,
            "{:<w$} {:>7} {:>8} {:>16} {:>8} {:>8}",
            p.label, p.answers, acc, ci, p.judge_failures, trac
        );
    }
    let _ = writeln!(
        out,
        "\njudge: fraction of right VALID/INVALID answers (an answer it could not give counts as wrong; failures), Wilson 95% interval; TRAC: its monitors' LTLf verdicts on the generated labels."
    );
}
