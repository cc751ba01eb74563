//! The synthetic temporal-reasoning study (the paper's §5.2, appendices D, E.2, F.2): a judge
//! (any [`ChatModel`]) reads a generated trace and a constraint and answers VALID or INVALID;
//! TRAC's monitors read the same trace's labels. Four sweeps ([`Sweep`]):
//!
//! - **gap** (temporal elasticity): the distance between the constrained events, 1 to 1000
//!   steps, the trace as long as the gap needs; the simple formula or the tree.
//! - **constraints** (constraint scalability): k constraints `F(A_i & X F B_i)` over different
//!   propositions in one trace, each satisfied with probability 1/2; one answer per
//!   constraint.
//! - **propositions** (proposition scalability): n entities per step; the constraint names
//!   one color and shape, the other entities distract.
//! - **language** (specification language): the five Dwyer patterns and the trees of depth 1
//!   and 2, each in informal English, precise English, and precise English with the formula.
//!
//! Half of the traces of a point satisfy their constraint (even sample indices; per
//! constraint a fair coin in the constraints sweep). Sample `i` of a point is drawn from a
//! generator seeded with (sweep, point, seed `i mod seeds`, repetition `i div seeds`), so a run
//! is deterministic. The judge's accuracy is the fraction of its answers that are right, an
//! answer it could not give (unreadable after the retries, or a model error) counting as wrong
//! and reported; its interval is Wilson's ([`crate::stats::wilson`]). TRAC's accuracy is that of
//! the finite-trace (LTLf) verdict of the compiled monitor on the generated labels.

pub mod gen;
pub mod svg;
pub mod tasks;

use crate::stats::{wilson, Interval};
use fastrand::Rng;
use gen::{draw_props, realize, simple_plan, Prop, Trace};
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;
use tasks::{Pattern, Rendering};
use trac_llm::{ChatModel, ChatRequest, Message, ModelError};
use trac_runtime::audit::{AuditError, AuditOptions, Auditor};
use trac_runtime::trace::Event;
use trac_runtime::Verdict;
use trac_spec::spec::{PropertyDecl, Semantics, Spec, SpecError};

/// A sweep of the study.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sweep {
    /// Gap between the constrained events.
    Gap,
    /// Number of constraints judged in one trace.
    Constraints,
    /// Entities per step.
    Propositions,
    /// Pattern and rendering of the constraint.
    Language,
}

impl Sweep {
    /// `gap`, `constraints`, `propositions`, `language`.
    pub fn name(self) -> &'static str {
        match self {
            Sweep::Gap => "gap",
            Sweep::Constraints => "constraints",
            Sweep::Propositions => "propositions",
            Sweep::Language => "language",
        }
    }

    /// The swept values of the paper's figure (language: none, its points are fixed).
    pub fn default_values(self) -> Vec<usize> {
        match self {
            Sweep::Gap => vec![1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
            Sweep::Constraints => vec![1, 2, 5, 10, 15, 20],
            Sweep::Propositions => vec![1, 2, 4, 8, 16],
            Sweep::Language => Vec::new(),
        }
    }
}

/// The formula of the gap and propositions sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FormulaKind {
    /// `F(A & X F B)`.
    Simple,
    /// The tree of branching 2 and depth 2.
    Tree,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    /// The sweep.
    pub sweep: Sweep,
    /// The formula (gap and propositions sweeps; the others fix theirs).
    pub formula: FormulaKind,
    /// The swept values (gap in steps, constraints, entities per step); `None`: the defaults.
    pub values: Option<Vec<usize>>,
    /// Traces per point.
    pub samples: usize,
    /// Seeds the samples are spread over.
    pub seeds: usize,
    /// Judge temperature (default 0.2, as `trac judge`).
    pub temperature: f32,
    /// Further samples asked when an answer cannot be read (default 1).
    pub answer_retries: u32,
    /// Requests in flight.
    pub concurrency: usize,
}

impl SweepConfig {
    /// Defaults for `sweep`: simple formula, default values, the paper's 40 samples over 10
    /// seeds, temperature 0.2, one retry, 4 requests in flight.
    pub fn new(sweep: Sweep) -> SweepConfig {
        SweepConfig {
            sweep,
            formula: FormulaKind::Simple,
            values: None,
            samples: 40,
            seeds: 10,
            temperature: 0.2,
            answer_retries: 1,
            concurrency: 4,
        }
    }
}

/// Bad settings, or a constraint trac cannot monitor (a bug: the formulas are generated).
#[derive(Debug, thiserror::Error)]
pub enum TemporalError {
    /// A setting out of range.
    #[error("{0}")]
    Setting(String),
    /// A generated constraint is not a valid spec.
    #[error("generated constraint: {0}")]
    Spec(#[from] SpecError),
    /// A generated constraint cannot be monitored.
    #[error("generated constraint: {0}")]
    Audit(#[from] AuditError),
}

/// One constraint of a sample, with the truth it was generated to have.
#[derive(Clone, Debug)]
pub struct Constraint {
    /// Spot syntax, over the propositions' atoms.
    pub formula: String,
    /// As told to the judge.
    pub text: String,
    /// Whether the trace satisfies it.
    pub truth: bool,
}

/// One generated trace and its constraints.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The trace.
    pub trace: Trace,
    /// Its propositions.
    pub props: Vec<Prop>,
    /// The constraints judged on it (one, but k in the constraints sweep).
    pub constraints: Vec<Constraint>,
}

/// One point of a sweep: the swept value and how the constraints are built.
#[derive(Clone, Copy, Debug)]
struct PointSpec {
    value: usize,
    pattern: Pattern,
    rendering: Rendering,
}

/// The points of `config`'s sweep, with the x value and label of each.
fn points(config: &SweepConfig) -> Result<Vec<(f64, String, PointSpec)>, TemporalError> {
    let base = match config.formula {
        FormulaKind::Simple => Pattern::Simple,
        FormulaKind::Tree => Pattern::Tree(2),
    };
    let spec = |value, pattern| PointSpec {
        value,
        pattern,
        rendering: Rendering::Precise,
    };
    if config.sweep == Sweep::Language {
        if config.values.is_some() {
            return Err(TemporalError::Setting(
                "--values: the language sweep's points are fixed (7 patterns x 3 renderings)"
                    .into(),
            ));
        }
        let mut out = Vec::new();
        for p in Pattern::LANGUAGE {
            for r in Rendering::ALL {
                let label = format!("{}/{}", p.name(), r.name());
                let ps = PointSpec {
                    value: 3,
                    pattern: p,
                    rendering: r,
                };
                out.push((out.len() as f64, label, ps));
            }
        }
        return Ok(out);
    }
    if config.sweep == Sweep::Constraints && config.formula == FormulaKind::Tree {
        return Err(TemporalError::Setting(
            "--formula tree: the constraints sweep uses the simple formula (20 trees would need more propositions than there are colors and shapes)".into(),
        ));
    }
    let values = config
        .values
        .clone()
        .unwrap_or_else(|| config.sweep.default_values());
    let (lo, hi) = match config.sweep {
        Sweep::Gap => (1, 100_000),
        Sweep::Constraints => (1, 32),
        _ => (1, 64),
    };
    if let Some(v) = values.iter().find(|v| !(lo..=hi).contains(*v)) {
        return Err(TemporalError::Setting(format!(
            "--values: {v} is out of range for the {} sweep ({lo} to {hi})",
            config.sweep.name()
        )));
    }
    Ok(values
        .into_iter()
        .map(|v| (v as f64, v.to_string(), spec(v, base)))
        .collect())
}

/// Sample `i` of point `point`: the generator's seed mixes the sweep, the point, the seed
/// `i mod seeds` and the repetition `i div seeds`.
fn sample(config: &SweepConfig, point: usize, ps: PointSpec, i: usize) -> Sample {
    let (seed, rep) = (i % config.seeds.max(1), i / config.seeds.max(1));
    let mix = [config.sweep as u64, point as u64, seed as u64, rep as u64]
        .iter()
        .fold(0x9e37_79b9_7f4a_7c15u64, |h, &x| {
            (h ^ x).wrapping_mul(0x0000_0100_0000_01b3)
        });
    let mut rng = Rng::with_seed(mix);
    let satisfy = i % 2 == 0;
    match config.sweep {
        Sweep::Constraints => constraints_sample(&mut rng, ps.value),
        Sweep::Gap => one_constraint(&mut rng, ps.pattern, ps.rendering, ps.value, 1, satisfy),
        Sweep::Propositions => {
            one_constraint(&mut rng, ps.pattern, ps.rendering, 3, ps.value, satisfy)
        }
        Sweep::Language => one_constraint(&mut rng, ps.pattern, ps.rendering, 3, 1, satisfy),
    }
}

fn one_constraint(
    rng: &mut Rng,
    pattern: Pattern,
    rendering: Rendering,
    gap: usize,
    entities: usize,
    satisfy: bool,
) -> Sample {
    let props = draw_props(rng, pattern.props());
    let plan = pattern.plan(rng, gap, satisfy);
    let names: Vec<String> = props.iter().map(Prop::name).collect();
    Sample {
        trace: realize(rng, &plan, &props, entities),
        constraints: vec![Constraint {
            formula: pattern.formula(&names),
            text: pattern.render(rendering, &props),
            truth: satisfy,
        }],
        props,
    }
}

/// `k` simple constraints over propositions `2c`, `2c + 1`, each satisfied with probability
/// 1/2, their episodes (gap 1 to 5) in random order with 0 to 2 steps between them.
fn constraints_sample(rng: &mut Rng, k: usize) -> Sample {
    let props = draw_props(rng, 2 * k);
    let mut episodes: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut constraints = Vec::new();
    for c in 0..k {
        let truth = rng.bool();
        let gap = rng.usize(1..=5);
        let ep: Vec<Vec<usize>> = simple_plan(rng, gap, truth)
            .into_iter()
            .map(|s| s.into_iter().map(|p| 2 * c + p).collect())
            .collect();
        episodes.push(ep);
        let pair = [props[2 * c], props[2 * c + 1]];
        let names: Vec<String> = pair.iter().map(Prop::name).collect();
        constraints.push(Constraint {
            formula: Pattern::Simple.formula(&names),
            text: Pattern::Simple.render(Rendering::Precise, &pair),
            truth,
        });
    }
    rng.shuffle(&mut episodes);
    let mut plan = Vec::new();
    for ep in episodes {
        plan.extend(ep);
        plan.extend(std::iter::repeat_n(Vec::new(), rng.usize(0..=2)));
    }
    Sample {
        trace: realize(rng, &plan, &props, 1),
        props,
        constraints,
    }
}

/// TRAC's answer: whether the monitor of `formula` (LTLf, compiled) finds the labels `labels`
/// valid, i.e. reports no violation up to and at the end of the trace.
///
/// Errors: the formula is not a valid property.
pub fn trac_valid(formula: &str, labels: &[Vec<String>]) -> Result<bool, TemporalError> {
    let spec = Spec {
        name: "temporal".into(),
        properties: vec![PropertyDecl {
            id: "C".into(),
            formula: formula.into(),
            semantics: Semantics::Ltlf,
            ..PropertyDecl::default()
        }],
        ..Spec::default()
    }
    .check()?;
    let opts = AuditOptions {
        reset: false,
        engine: trac_runtime::engine::Engine::Compiled,
        compiler: Some(trac_compile::Compiler::shared()),
    };
    let mut a = Auditor::new(&[spec], &opts)?;
    let mut recs = a.initial();
    for (i, l) in labels.iter().enumerate() {
        let e = Event {
            step: i + 1,
            ..Event::default()
        };
        recs.extend(a.step_labeled(&e, l.iter().cloned().collect()));
    }
    recs.extend(a.end_of_trace());
    Ok(!recs.iter().any(|r| r.verdict == Verdict::Violated))
}

/// The system message of the temporal judge.
pub const SYSTEM: &str = "You check a sequence of observations against temporal constraints. \
Each step of the sequence is one observation. Decide whether the whole sequence, from its first \
step to its last, satisfies each constraint. Answer VALID if it does and INVALID if it does not.";

/// The messages asking about `s`.
pub fn messages(s: &Sample) -> Vec<Message> {
    let mut u = String::new();
    if s.constraints.len() == 1 {
        u.push_str(&format!("Constraint: {}\n", s.constraints[0].text));
    } else {
        u.push_str("Constraints:\n");
        for (i, c) in s.constraints.iter().enumerate() {
            u.push_str(&format!("Constraint {}: {}\n", i + 1, c.text));
        }
    }
    u.push_str("\nObservations:\n");
    u.push_str(&s.trace.render());
    if s.constraints.len() == 1 {
        u.push_str(
            "\nDoes the sequence satisfy the constraint? Answer with one word: VALID or INVALID.",
        );
    } else {
        u.push_str(&format!(
            "\nDoes the sequence satisfy each constraint? Answer with {} lines, one per constraint: `Constraint N: VALID` or `Constraint N: INVALID`.",
            s.constraints.len()
        ));
    }
    vec![Message::system(SYSTEM), Message::user(u)]
}

static WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(in)?valid\b").expect("a valid regex"));
static NUMBERED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)constraint\s*#?\s*(\d+)").expect("a valid regex"));

/// The judge's answers in `text` for `k` constraints: with one, the first `VALID` or `INVALID`
/// word (any case); with several, per line `Constraint N ... VALID|INVALID`. `None` when some
/// constraint has no answer.
pub fn parse_verdicts(text: &str, k: usize) -> Option<Vec<bool>> {
    let word = |s: &str| WORD.captures(s).map(|c| c.get(1).is_none());
    if k == 1 {
        return word(text).map(|v| vec![v]);
    }
    let mut out = vec![None; k];
    for line in text.lines() {
        let Some(c) = NUMBERED.captures(line) else {
            continue;
        };
        let n: usize = c[1].parse().unwrap_or(0);
        let rest = &line[c.get(0).map_or(0, |m| m.end())..];
        if (1..=k).contains(&n) && out[n - 1].is_none() {
            out[n - 1] = word(rest);
        }
    }
    out.into_iter().collect()
}

/// The judge's answers for `s` (sample `index` of its point, so that retries and runs draw
/// other samples), or why there are none.
fn judge_sample(
    model: &dyn ChatModel,
    s: &Sample,
    index: usize,
    config: &SweepConfig,
) -> Result<Vec<bool>, String> {
    let messages = messages(s);
    let attempts = config.answer_retries as usize + 1;
    let mut last = String::new();
    for attempt in 0..attempts {
        let sample = index * attempts + attempt;
        let req = ChatRequest {
            messages: messages.clone(),
            sample_offset: sample,
            temperature: config.temperature,
            seed: Some(sample as u64),
            max_tokens: Some(16 + 12 * s.constraints.len() as u32),
            tag: Some(format!("{} sample {}", config.sweep.name(), index + 1)),
            ..ChatRequest::default()
        };
        let answer = model
            .complete(&req)
            .map_err(|e: ModelError| e.to_string())?
            .choices
            .into_iter()
            .next()
            .map(|c| c.content)
            .unwrap_or_default();
        match parse_verdicts(&answer, s.constraints.len()) {
            Some(v) => return Ok(v),
            None => last = answer.chars().take(200).collect(),
        }
    }
    Err(format!("unreadable answer: {last:?}"))
}

/// One point's results.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// The swept value (for the language sweep, the point's index).
    pub x: f64,
    /// The point's name (`100`, `precedence/informal`).
    pub label: String,
    /// Traces generated.
    pub samples: usize,
    /// Answers asked of the judge (one per constraint and trace).
    pub answers: usize,
    /// Right answers of the judge.
    pub judge_correct: usize,
    /// Answers the judge could not give (counted as wrong).
    pub judge_failures: usize,
    /// The judge's accuracy with its Wilson 95% interval.
    pub judge_accuracy: Option<Interval>,
    /// TRAC's accuracy (its monitors on the generated labels).
    pub trac_accuracy: Option<f64>,
    /// The first failure's message, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
}

/// A sweep's results.
#[derive(Clone, Debug, Serialize)]
pub struct SweepResult {
    /// The sweep.
    pub sweep: Sweep,
    /// The formula of the gap and propositions sweeps.
    pub formula: FormulaKind,
    /// The judge.
    pub model: String,
    /// Traces per point.
    pub samples: usize,
    /// Seeds.
    pub seeds: usize,
    /// The points, in order.
    pub points: Vec<Point>,
}

/// Runs the sweep of `config` with `model` as the judge.
///
/// Errors: settings out of range ([`TemporalError::Setting`]); a generated constraint trac
/// cannot monitor (a bug).
pub fn run_sweep(
    model: &dyn ChatModel,
    config: &SweepConfig,
) -> Result<SweepResult, TemporalError> {
    if config.samples == 0 || config.seeds == 0 {
        return Err(TemporalError::Setting(
            "--samples and --seeds must be at least 1".into(),
        ));
    }
    let pts = points(config)?;
    let mut out = Vec::new();
    for (p, (x, label, ps)) in pts.into_iter().enumerate() {
        let samples: Vec<(usize, Sample)> = (0..config.samples)
            .map(|i| (i, sample(config, p, ps, i)))
            .collect();
        let answers = crate::pool::par_map(&samples, config.concurrency, |(i, s)| {
            judge_sample(model, s, p * config.samples + i, config)
        });
        let (mut total, mut right, mut failures, mut trac_right) = (0, 0, 0, 0);
        let mut first_failure = None;
        for ((_, s), a) in samples.iter().zip(answers) {
            for (k, c) in s.constraints.iter().enumerate() {
                total += 1;
                if trac_valid(&c.formula, &s.trace.labels(&s.props))? == c.truth {
                    trac_right += 1;
                }
                match &a {
                    Ok(v) if v[k] == c.truth => right += 1,
                    Ok(_) => {}
                    Err(e) => {
                        failures += 1;
                        first_failure.get_or_insert_with(|| e.clone());
                    }
                }
            }
        }
        out.push(Point {
            x,
            label,
            samples: config.samples,
            answers: total,
            judge_correct: right,
            judge_failures: failures,
            judge_accuracy: wilson(right, total),
            trac_accuracy: (total > 0).then(|| trac_right as f64 / total as f64),
            first_failure,
        });
    }
    Ok(SweepResult {
        sweep: config.sweep,
        formula: config.formula,
        model: model.name().to_string(),
        samples: config.samples,
        seeds: config.seeds,
        points: out,
    })
}
