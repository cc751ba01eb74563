//! `trac compile`, the engine options of `trac audit`, and the monitor facts of `trac check`.

use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use trac_compile::{compile_within, CompileOptions, Compiled, Minimize, Semantics};
use trac_core::table::Table;
use trac_ltl::compiler::TableCompiler;
use trac_ltl::{Arena, Formula};
use trac_runtime::engine::Engine;
use trac_spec::spec::Spec;

/// Arguments of `trac compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// The formula, in Spot syntax (a `forall VAR:` prefix is ignored: the body is compiled with
    /// the variable free). Give either this or --spec.
    #[arg(value_name = "FORMULA", required_unless_present = "spec")]
    formula: Option<String>,
    /// Compile every property of a spec file instead.
    #[arg(long, value_name = "FILE", conflicts_with = "formula")]
    spec: Option<PathBuf>,
    /// Verdicts over infinite (ltl3) or finite (ltlf) continuations. For --spec, each
    /// property's own semantics unless given.
    #[arg(long, value_enum)]
    semantics: Option<SemanticsArg>,
    /// Output: Graphviz DOT, HOA v1, or the monitor table as JSON or RON.
    #[arg(long, value_enum, default_value_t = Emit::Json)]
    emit: Emit,
    /// Which pending states merge: `language` (residuals with the same models, the default),
    /// `verdict` (the smallest table: states with the same verdicts after every continuation;
    /// residuals then show the verdict, not always the whole obligation) or `none`.
    #[arg(long, value_enum, default_value_t = MinimizeArg::Language)]
    minimize: MinimizeArg,
    /// Same as `--minimize none`.
    #[arg(long, conflicts_with = "minimize")]
    no_minimize: bool,
    /// Give up with an error once the automaton has more than N states (0: no limit). The size
    /// can be exponential in the formula (`count[w]`, `Y[n]`, conjunctions of them).
    #[arg(long, value_name = "N", default_value_t = trac_compile::DEFAULT_MAX_STATES,
          allow_negative_numbers = true, value_parser = parse_max_states)]
    max_states: usize,
    /// Write to FILE instead of standard output; to a directory (an existing one, or a path
    /// ending in `/`): one file per property, DIR/ID.dot (.hoa, .json, .ron).
    #[arg(short = 'o', long = "output", value_name = "FILE|DIR")]
    output: Option<PathBuf>,
}

/// `--minimize` values.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum MinimizeArg {
    /// Merge states whose residuals have the same models (finite and infinite).
    Language,
    /// Merge states with the same verdicts after every continuation.
    Verdict,
    /// Keep every pending state.
    None,
}

/// Verdict semantics.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum SemanticsArg {
    /// Infinite continuations (LTL3).
    Ltl3,
    /// Finite continuations (LTLf, `X` weak at the end).
    Ltlf,
}

impl From<SemanticsArg> for Semantics {
    fn from(s: SemanticsArg) -> Semantics {
        match s {
            SemanticsArg::Ltl3 => Semantics::Ltl3,
            SemanticsArg::Ltlf => Semantics::Ltlf,
        }
    }
}

/// Output formats of `trac compile`.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// Graphviz DOT: states labelled with their residual and verdict.
    Dot,
    /// HOA v1 (verdicts in state names).
    Hoa,
    /// The monitor table, JSON.
    Json,
    /// The monitor table, RON.
    Ron,
}

/// The value of `--max-states`: a number of states, `0` for no limit. A negative number is
/// given to this parser (`allow_negative_numbers`), so that `-1` gets this message rather than
/// clap's tip to write `-- -1`, which would make it a trace file.
fn parse_max_states(s: &str) -> Result<usize, String> {
    let s = s.trim();
    s.parse().map_err(|_| {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            format!("too large: at most {} states (0: no limit)", usize::MAX)
        } else {
            "expected a number of states ≥ 0 (0: no limit)".to_string()
        }
    })
}

/// The state budget `--max-states N` gives (`0`: none).
pub fn max_states(n: usize) -> usize {
    if n == 0 {
        usize::MAX
    } else {
        n
    }
}

/// The engine options of `trac audit`.
#[derive(clap::Args)]
pub struct EngineArgs {
    /// The monitoring engine: compiled monitor tables (complete verdicts), formula progression,
    /// or both side by side, stopping with an error at the first step where they differ.
    #[arg(long, value_enum, default_value_t = EngineArg::Compiled)]
    engine: EngineArg,
    /// With --engine progression: complete verdicts (violated as soon as no continuation can
    /// satisfy the property, satisfied as soon as none can violate it), as the compiled engine.
    #[arg(long)]
    complete: bool,
    /// The compiled engine's state budget: a property whose monitor automaton has more states
    /// (the size can be exponential in the formula: `count[w]`, `Y[n]`, conjunctions of them)
    /// is monitored by complete progression instead, with the same verdicts, and a note on
    /// stderr. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = trac_compile::DEFAULT_MAX_STATES,
          allow_negative_numbers = true, value_parser = parse_max_states)]
    max_states: usize,
}

/// Engines selectable on the command line.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// Compiled monitor tables.
    Compiled,
    /// Formula progression (add --complete for complete verdicts).
    Progression,
    /// Compiled, complete progression and plain progression side by side.
    CrossCheck,
}

/// `--complete` with an engine whose verdicts are complete already.
#[derive(Debug, thiserror::Error)]
#[error(
    "--complete applies to --engine progression only; the {engine} engine's verdicts are complete already (drop --complete, or add --engine progression)"
)]
pub struct CompleteWithoutProgression {
    /// The engine asked for.
    pub engine: &'static str,
}

impl EngineArgs {
    /// [`EngineArgs::engine`], refusing `--complete` with an engine it does not apply to (the
    /// compiled and cross-check engines are complete already): never silently ignored.
    ///
    /// # Errors
    /// [`CompleteWithoutProgression`] for `--complete` without `--engine progression`.
    #[allow(clippy::type_complexity)]
    pub fn engine_checked(
        &self,
    ) -> Result<(Engine, Option<Arc<dyn TableCompiler>>), CompleteWithoutProgression> {
        if self.complete && self.engine != EngineArg::Progression {
            let engine = match self.engine {
                EngineArg::Compiled => "compiled",
                _ => "cross-check",
            };
            return Err(CompleteWithoutProgression { engine });
        }
        Ok(self.engine())
    }

    /// The engine and, when it needs one, the table compiler (which also gives complete
    /// progression its verdict oracle).
    pub fn engine(&self) -> (Engine, Option<Arc<dyn TableCompiler>>) {
        let compiler = || -> Option<Arc<dyn TableCompiler>> {
            Some(Arc::new(trac_compile::Compiler::with_max_states(
                max_states(self.max_states),
            )))
        };
        match (self.engine, self.complete) {
            (EngineArg::Compiled, _) => (Engine::Compiled, compiler()),
            (EngineArg::Progression, false) => (Engine::Progression, None),
            (EngineArg::Progression, true) => (Engine::CompleteProgression, compiler()),
            (EngineArg::CrossCheck, _) => (Engine::CrossCheck, compiler()),
        }
    }
}

/// Lines for `trac check`: the initial verdict, the number of states and the monitorability
/// class of the (LTL3) monitor of `formula`.
pub fn check_lines(arena: &mut Arena, formula: Formula) -> Vec<String> {
    let opts = CompileOptions::default();
    let c = match compile_within(arena, formula, &opts, trac_compile::DEFAULT_MAX_STATES) {
        Ok(c) => c,
        Err(e @ trac_compile::CompileError::TooLarge { .. }) => {
            return over_budget_lines(arena, formula, &e)
        }
        Err(e) => return vec![format!("monitor:      cannot compile: {e}")],
    };
    let t = &c.table;
    // Bounded like the compilation: a large tableau gives up rather than search for minutes.
    let budget = trac_compile::DEFAULT_MAX_STATES;
    let class = trac_compile::monitorability_text(arena, formula, t, budget);
    vec![
        format!(
            "initial:      {}",
            Table::<Vec<u32>, String>::verdict(t.initial())
        ),
        format!(
            "monitor:      {} states ({} pending), {} decision nodes",
            t.state_count(),
            t.state_count() - 2,
            t.node_count()
        ),
        format!("class:        {class}"),
    ]
}

/// [`check_lines`] of a formula whose monitor is over the state budget (`e`): the initial
/// verdict as the audit's fallback gives it (complete progression with one bounded check:
/// `trac_compile::BoundedSatOracle`), the compile error, and the class when the syntax tells it
/// ([`trac_compile::syntactic_fragments`]), else unknown.
fn over_budget_lines(
    arena: &mut Arena,
    formula: Formula,
    e: &trac_compile::CompileError,
) -> Vec<String> {
    let mut sat = trac_compile::sat::SatChecker::new(arena, formula)
        .with_check_budget(trac_compile::DEFAULT_CHECK_BUDGET);
    let bits = sat.initial_bits();
    let initial = match sat.verdict(arena, formula, &bits) {
        Some(true) => "satisfied".to_string(),
        Some(false) => "violated".to_string(),
        None if sat.gave_up() => {
            "pending (a bounded satisfiability check could not decide it)".to_string()
        }
        None => "pending".to_string(),
    };
    let budget = "the monitor is over the state budget";
    let class = match trac_compile::syntactic_fragments(arena, formula) {
        (true, true) => "safety and co-safety (syntactic fragments)".to_string(),
        (true, false) => {
            format!("safety (syntactic safety fragment; whether also co-safety: unknown, {budget})")
        }
        (false, true) => format!(
            "co-safety (syntactic co-safety fragment; whether also safety: unknown, {budget})"
        ),
        (false, false) => format!("unknown ({budget})"),
    };
    vec![
        format!("initial:      {initial}"),
        format!("monitor:      cannot compile: {e}"),
        format!("class:        {class}"),
    ]
}

fn emit(table: &Table, how: Emit) -> String {
    match how {
        Emit::Dot => trac_compile::export::dot(table),
        Emit::Hoa => trac_compile::export::hoa(table),
        Emit::Json => table.to_json(),
        Emit::Ron => table.to_ron(),
    }
}

/// The tables of a spec's properties (`(id, table)`, in spec order) as one document: a JSON
/// object keyed by property id; one DOT `digraph` with a `subgraph cluster_*` per property
/// ([`trac_compile::export::dot_clusters`]: `dot` reads one graph per document); HOA automata
/// one after another (a HOA stream, each ended by `--END--`); RON tables each after a
/// `// property ID` comment.
fn document(tables: &[(String, Compiled)], how: Emit) -> String {
    match how {
        Emit::Json => {
            let map: serde_json::Map<String, serde_json::Value> = tables
                .iter()
                .map(|(n, c)| {
                    let v = serde_json::to_value(c.table.to_file()).expect("tables serialize");
                    (n.clone(), v)
                })
                .collect();
            serde_json::to_string_pretty(&map).expect("tables serialize")
        }
        Emit::Dot => {
            trac_compile::export::dot_clusters(tables.iter().map(|(n, c)| (n.as_str(), &c.table)))
        }
        Emit::Hoa | Emit::Ron => tables
            .iter()
            .map(|(n, c)| {
                let header = match how {
                    Emit::Ron => format!("// property {n}\n"),
                    _ => String::new(),
                };
                format!("{header}{}", emit(&c.table, how))
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The file name extension of an output format.
fn extension(how: Emit) -> &'static str {
    match how {
        Emit::Dot => "dot",
        Emit::Hoa => "hoa",
        Emit::Json => "json",
        Emit::Ron => "ron",
    }
}

/// A property id as a file name: characters other than ASCII letters, digits, `-` and `_`
/// become `_`; `monitor` for the unnamed table of a formula.
fn file_stem(id: &str) -> String {
    if id.is_empty() {
        return "monitor".into();
    }
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `-o PATH` names a directory: an existing one, or a path ending in `/` (created).
fn is_dir_arg(path: &Path) -> bool {
    path.is_dir()
        || path
            .as_os_str()
            .to_string_lossy()
            .ends_with(std::path::MAIN_SEPARATOR)
}

/// `-o DIR` (an existing directory, or one to create when the path ends in `/`): one file per
/// table, `DIR/ID.EXT` ([`file_stem`], [`extension`]), each one complete document.
///
/// # Errors
/// Two ids that give the same file name, or a directory or write error, as `PATH: message`.
fn write_per_property(dir: &Path, tables: &[(String, Compiled)], how: Emit) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = Vec::new();
    for (id, _) in tables {
        let path = dir.join(format!("{}.{}", file_stem(id), extension(how)));
        if let Some(k) = paths.iter().position(|p| *p == path) {
            return Err(format!(
                "{}: properties {} and {id} would both be written to this file",
                path.display(),
                tables[k].0
            ));
        }
        paths.push(path);
    }
    for (path, (_, c)) in paths.iter().zip(tables) {
        std::fs::write(path, emit(&c.table, how).as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs `trac compile`.
pub fn run(args: &CompileArgs) -> ExitCode {
    let minimize = match (args.no_minimize, args.minimize) {
        (true, _) | (_, MinimizeArg::None) => Minimize::None,
        (_, MinimizeArg::Verdict) => Minimize::Verdict,
        (_, MinimizeArg::Language) => Minimize::Language,
    };
    // (name, arena, formula, semantics)
    let mut jobs: Vec<(String, Arena, Formula, Semantics)> = Vec::new();
    if let Some(path) = &args.spec {
        let checked = match Spec::from_path(path)
            .and_then(|s| trac_runtime::label::labeler::check_spec(&s))
        {
            Ok(c) => c,
            Err(e) => {
                for line in crate::report::diagnostics(&e) {
                    eprintln!("{line}");
                }
                return ExitCode::from(2);
            }
        };
        for p in checked.properties {
            let sem = args.semantics.map_or(p.decl.semantics, Semantics::from);
            jobs.push((p.decl.id.clone(), p.arena, p.formula, sem));
        }
    } else if let Some(src) = &args.formula {
        let mut arena = Arena::new();
        let prop = match trac_ltl::parse_property(&mut arena, src) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}", e.render(src));
                return ExitCode::from(2);
            }
        };
        let sem = args.semantics.map_or(Semantics::Ltl3, Semantics::from);
        jobs.push((String::new(), arena, prop.body, sem));
    }
    let mut tables: Vec<(String, Compiled)> = Vec::new();
    for (name, mut arena, f, semantics) in jobs {
        let opts = CompileOptions {
            semantics,
            minimize,
        };
        match compile_within(&mut arena, f, &opts, max_states(args.max_states)) {
            Ok(c) => tables.push((name, c)),
            Err(e) => {
                let what = if name.is_empty() {
                    String::new()
                } else {
                    format!("property {name}: ")
                };
                eprintln!("error: {what}{e}");
                if matches!(e, trac_compile::CompileError::TooLarge { .. }) {
                    eprintln!("  = help: raise --max-states (0: no limit); `trac audit` monitors such a property by complete progression");
                }
                return ExitCode::from(2);
            }
        }
    }
    if let Some(dir) = args.output.as_deref().filter(|p| is_dir_arg(p)) {
        return match write_per_property(dir, &tables, args.emit) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    let text = if tables.len() == 1 && args.spec.is_none() {
        emit(&tables[0].1.table, args.emit)
    } else {
        document(&tables, args.emit)
    };
    let written = match &args.output {
        Some(path) => {
            std::fs::write(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe is not a failure.
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            Ok(())
        }
    };
    if let Err(e) = written {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
