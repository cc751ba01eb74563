//! Monitoring engines: progression, complete progression, compiled tables, and the cross-check
//! of the last two.
//!
//! Every engine implements [`Monitor`] with the same TRAC / TRAC_R semantics, witnesses and LTLf
//! verdict, so the audit loop can run any of them ([`EngineMonitor`]). The compiled engine needs a
//! [`TableCompiler`]: `trac-runtime` does not depend on the compiler (`trac-compile` depends on
//! this crate for the table format), so the compiler is passed in, e.g.
//! `trac_compile::Compiler::shared()`.

use crate::labels::StepInput;
use crate::monitor::{Change, Monitor, ProgressionMonitor, ResetPolicy, Verdict};
use crate::parametric::Instantiate;
use crate::table::{Table, TableMonitor};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;
use trac_spec::formula::{Arena, Formula};
use trac_spec::spec::Semantics;

/// Which monitor runs a property.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// Compiled tables ([`TableMonitor`]): complete verdicts, one table lookup per step.
    #[default]
    Compiled,
    /// Formula progression ([`ProgressionMonitor::new`]): sound, verdicts only when the residual
    /// folds to `true` / `false`.
    Progression,
    /// Progression with complete verdicts ([`ProgressionMonitor::with_semantics`]).
    CompleteProgression,
    /// The compiled and the complete progression monitors side by side ([`CrossCheckMonitor`]),
    /// stopping at the first difference.
    CrossCheck,
}

impl Engine {
    /// `compiled`, `progression`, `complete-progression`, `cross-check`.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Compiled => "compiled",
            Engine::Progression => "progression",
            Engine::CompleteProgression => "complete-progression",
            Engine::CrossCheck => "cross-check",
        }
    }
}

/// Compiles a property into a [`Table`] (implemented by `trac_compile::Compiler`).
pub trait TableCompiler: Send + Sync + fmt::Debug {
    /// The table of `formula` (a handle in `arena`) with verdicts of `semantics`.
    ///
    /// # Errors
    /// A message if the formula cannot be compiled.
    fn compile(
        &self,
        arena: &Arena,
        formula: Formula,
        semantics: Semantics,
    ) -> Result<Arc<Table>, String>;
}

/// A monitor of any engine.
// The table monitor is the hot path: kept inline, the other (slower) engines are boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum EngineMonitor {
    /// Progression, plain or complete.
    Progression(Box<ProgressionMonitor>),
    /// A compiled table.
    Table(TableMonitor),
    /// Compiled and complete progression, cross-checked.
    CrossCheck(Box<CrossCheckMonitor>),
}

impl EngineMonitor {
    /// A monitor of `formula` (a handle in `arena`) run by `engine`. Without a compiler the
    /// compiled engine falls back to complete progression, whose verdicts are the same (that is
    /// what the cross-check engine checks).
    ///
    /// # Errors
    /// The compiler's error, or the cross-check engine without a compiler.
    pub fn new(
        engine: Engine,
        arena: &Arena,
        formula: Formula,
        policy: ResetPolicy,
        semantics: Semantics,
        compiler: Option<&dyn TableCompiler>,
    ) -> Result<EngineMonitor, String> {
        let complete =
            || ProgressionMonitor::with_semantics(arena.clone(), formula, policy, true, semantics);
        Ok(match (engine, compiler) {
            (Engine::Progression, _) => EngineMonitor::Progression(Box::new(
                ProgressionMonitor::new(arena.clone(), formula, policy),
            )),
            (Engine::CompleteProgression, _) | (Engine::Compiled, None) => {
                EngineMonitor::Progression(Box::new(complete()))
            }
            (Engine::Compiled, Some(c)) => {
                let table = c.compile(arena, formula, semantics)?;
                EngineMonitor::Table(TableMonitor::new(table, policy))
            }
            (Engine::CrossCheck, Some(c)) => {
                let table = c.compile(arena, formula, semantics)?;
                EngineMonitor::CrossCheck(Box::new(CrossCheckMonitor::new(
                    TableMonitor::new(table, policy),
                    complete(),
                )))
            }
            (Engine::CrossCheck, None) => {
                return Err("the cross-check engine needs a table compiler".into())
            }
        })
    }

    /// A template for `forall var: formula`: like [`EngineMonitor::new`], and with the compiled
    /// engines, shadows for the values that make two propositions one when instantiated (see
    /// [`TableMonitor::with_shadows`]).
    ///
    /// # Errors
    /// As [`EngineMonitor::new`].
    pub fn new_parametric(
        engine: Engine,
        arena: &Arena,
        formula: Formula,
        var: &str,
        policy: ResetPolicy,
        semantics: Semantics,
        compiler: Option<&dyn TableCompiler>,
    ) -> Result<EngineMonitor, String> {
        let mut m = EngineMonitor::new(engine, arena, formula, policy, semantics, compiler)?;
        let table = match &mut m {
            EngineMonitor::Table(t) => t,
            EngineMonitor::CrossCheck(c) => &mut c.compiled,
            EngineMonitor::Progression(_) => return Ok(m),
        };
        let Some(compiler) = compiler else {
            return Ok(m);
        };
        let atoms: Vec<_> = arena
            .atoms(formula)
            .into_iter()
            .map(|s| arena.sym_parts(s).clone())
            .collect();
        let bases: Vec<&str> = atoms
            .iter()
            .filter(|p| p.arg.as_deref() == Some(var))
            .map(|p| p.base.as_str())
            .collect();
        let mut values: Vec<String> = atoms
            .iter()
            .filter(|p| bases.contains(&p.base.as_str()))
            .filter_map(|p| p.arg.clone())
            .filter(|a| a != var)
            .collect();
        values.sort();
        values.dedup();
        let mut shadows = Vec::new();
        for v in values {
            let mut a = arena.clone();
            let f = a.instantiate(formula, var, &v);
            let t = compiler.compile(&a, f, semantics)?;
            shadows.push((v, TableMonitor::new(t, policy)));
        }
        let plain = std::mem::replace(table, TableMonitor::new(table.table().clone(), policy));
        *table = plain.with_shadows(shadows);
        Ok(m)
    }

    /// The first difference found by a cross-check monitor, if any.
    pub fn mismatch(&self) -> Option<&Mismatch> {
        match self {
            EngineMonitor::CrossCheck(c) => c.mismatch(),
            _ => None,
        }
    }

    fn inner(&self) -> &dyn Monitor {
        match self {
            EngineMonitor::Progression(m) => m.as_ref(),
            EngineMonitor::Table(m) => m,
            EngineMonitor::CrossCheck(m) => m.as_ref(),
        }
    }

    fn inner_mut(&mut self) -> &mut dyn Monitor {
        match self {
            EngineMonitor::Progression(m) => m.as_mut(),
            EngineMonitor::Table(m) => m,
            EngineMonitor::CrossCheck(m) => m.as_mut(),
        }
    }
}

impl Monitor for EngineMonitor {
    fn initial(&self) -> Option<Verdict> {
        self.inner().initial()
    }
    fn step(&mut self, input: &StepInput<'_>) -> Option<Verdict> {
        self.inner_mut().step(input)
    }
    fn verdict(&self) -> Verdict {
        self.inner().verdict()
    }
    fn residual(&self) -> String {
        self.inner().residual()
    }
    fn explanation(&self) -> &[Change] {
        self.inner().explanation()
    }
    fn witness(&self) -> &[Change] {
        self.inner().witness()
    }
    fn ltlf(&self) -> Verdict {
        self.inner().ltlf()
    }
    fn reset(&mut self) {
        self.inner_mut().reset()
    }
}

impl Instantiate for EngineMonitor {
    fn instantiate(&self, var: &str, value: &str) -> Self {
        match self {
            EngineMonitor::Progression(m) => {
                EngineMonitor::Progression(Box::new(m.instantiate(var, value)))
            }
            EngineMonitor::Table(m) => EngineMonitor::Table(m.instantiate(var, value)),
            EngineMonitor::CrossCheck(m) => {
                EngineMonitor::CrossCheck(Box::new(m.instantiate(var, value)))
            }
        }
    }

    fn unseen_verdict(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        match self {
            EngineMonitor::Progression(m) => m.verdict(),
            EngineMonitor::Table(m) => m.unseen_verdict(seen),
            EngineMonitor::CrossCheck(m) => m.compiled.unseen_verdict(seen),
        }
    }

    fn unseen_ltlf(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        match self {
            EngineMonitor::Progression(m) => m.ltlf(),
            EngineMonitor::Table(m) => m.unseen_ltlf(seen),
            EngineMonitor::CrossCheck(m) => m.compiled.unseen_ltlf(seen),
        }
    }
}

impl Instantiate for TableMonitor {
    fn instantiate(&self, var: &str, value: &str) -> Self {
        TableMonitor::instantiate(self, var, value)
    }

    fn unseen_verdict(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        TableMonitor::unseen_verdict(self, seen)
    }

    fn unseen_ltlf(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        TableMonitor::unseen_ltlf(self, seen)
    }
}

/// The first step at which the compiled and the complete progression monitors disagree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// 1-based step (0: before the first step).
    pub step: usize,
    /// What differed: `initial verdict`, `verdict reached` (the step's event), `current verdict`
    /// or `LTLf verdict`.
    pub what: &'static str,
    /// The compiled monitor's (event or verdict).
    pub compiled: Option<Verdict>,
    /// The complete progression monitor's.
    pub progression: Option<Verdict>,
    /// The compiled monitor's residual after the step.
    pub compiled_residual: String,
    /// The progression monitor's residual after the step.
    pub progression_residual: String,
    /// The compiled monitor's explanation (steps since its last restart).
    pub compiled_witness: Vec<Change>,
    /// The progression monitor's explanation.
    pub progression_witness: Vec<Change>,
}

fn show(v: Option<Verdict>) -> &'static str {
    v.map_or("none", Verdict::as_str)
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "cross-check: the engines disagree at step {} on the {}: compiled {}, complete progression {}",
            self.step,
            self.what,
            show(self.compiled),
            show(self.progression)
        )?;
        writeln!(f, "  compiled residual:    {}", self.compiled_residual)?;
        writeln!(f, "  progression residual: {}", self.progression_residual)?;
        for (name, w) in [
            ("compiled", &self.compiled_witness),
            ("progression", &self.progression_witness),
        ] {
            writeln!(f, "  {name} witness:")?;
            for c in w {
                writeln!(
                    f,
                    "    step {:>3}: {} {{{}}} => {}",
                    c.step,
                    c.text,
                    c.held.join(", "),
                    c.residual
                )?;
            }
        }
        Ok(())
    }
}

/// Runs a compiled monitor and a complete progression monitor of the same property side by side
/// and records the first step where their events, verdicts or LTLf verdicts differ
/// ([`CrossCheckMonitor::mismatch`]). It reports the compiled monitor's results.
#[derive(Clone, Debug)]
pub struct CrossCheckMonitor {
    compiled: TableMonitor,
    progression: ProgressionMonitor,
    mismatch: Option<Mismatch>,
    steps: usize,
}

impl CrossCheckMonitor {
    /// Cross-checks `compiled` against `progression` (which should be complete, with the same
    /// semantics and reset policy).
    pub fn new(compiled: TableMonitor, progression: ProgressionMonitor) -> CrossCheckMonitor {
        let mut m = CrossCheckMonitor {
            compiled,
            progression,
            mismatch: None,
            steps: 0,
        };
        let (a, b) = (m.compiled.initial(), m.progression.initial());
        if a != b {
            m.record("initial verdict", a, b);
        }
        m
    }

    /// The first difference, if any.
    pub fn mismatch(&self) -> Option<&Mismatch> {
        self.mismatch.as_ref()
    }

    /// The compiled monitor.
    pub fn compiled(&self) -> &TableMonitor {
        &self.compiled
    }

    /// The complete progression monitor.
    pub fn progression(&self) -> &ProgressionMonitor {
        &self.progression
    }

    fn record(&mut self, what: &'static str, a: Option<Verdict>, b: Option<Verdict>) {
        if self.mismatch.is_some() {
            return;
        }
        self.mismatch = Some(Mismatch {
            step: self.steps,
            what,
            compiled: a,
            progression: b,
            compiled_residual: self.compiled.residual(),
            progression_residual: self.progression.residual(),
            compiled_witness: self.compiled.explanation().to_vec(),
            progression_witness: self.progression.explanation().to_vec(),
        });
    }

    fn instantiate(&self, var: &str, value: &str) -> Self {
        CrossCheckMonitor {
            compiled: self.compiled.instantiate(var, value),
            progression: self.progression.instantiate(var, value),
            mismatch: self.mismatch.clone(),
            steps: self.steps,
        }
    }
}

impl Monitor for CrossCheckMonitor {
    fn initial(&self) -> Option<Verdict> {
        self.compiled.initial()
    }

    fn step(&mut self, input: &StepInput<'_>) -> Option<Verdict> {
        self.steps = input.step;
        let a = self.compiled.step(input);
        let b = self.progression.step(input);
        if a != b {
            // Witnesses of the verdict step itself.
            let wa = self.compiled.witness().to_vec();
            let wb = self.progression.witness().to_vec();
            self.record("verdict reached", a, b);
            if let Some(m) = &mut self.mismatch {
                if m.step == input.step {
                    m.compiled_witness = wa;
                    m.progression_witness = wb;
                }
            }
        } else if self.compiled.verdict() != self.progression.verdict() {
            let (x, y) = (self.compiled.verdict(), self.progression.verdict());
            self.record("current verdict", Some(x), Some(y));
        } else if self.compiled.ltlf() != self.progression.ltlf() {
            let (x, y) = (self.compiled.ltlf(), self.progression.ltlf());
            self.record("LTLf verdict", Some(x), Some(y));
        }
        a
    }

    fn verdict(&self) -> Verdict {
        self.compiled.verdict()
    }

    fn residual(&self) -> String {
        self.compiled.residual()
    }

    fn explanation(&self) -> &[Change] {
        self.compiled.explanation()
    }

    fn witness(&self) -> &[Change] {
        self.compiled.witness()
    }

    fn ltlf(&self) -> Verdict {
        self.compiled.ltlf()
    }

    fn reset(&mut self) {
        self.compiled.reset();
        self.progression.reset();
        self.mismatch = None;
        self.steps = 0;
    }
}
