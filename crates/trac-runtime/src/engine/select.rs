//! Which engine runs a property ([`Engine`]) and a monitor of any of them ([`EngineMonitor`]).

use crate::engine::crosscheck::{CrossCheckMonitor, Mismatch};
use crate::engine::monitor::{
    Change, Monitor, PastCitation, ProgressionMonitor, ResetPolicy, Verdict,
};
use crate::engine::parametric::Instantiate;
use crate::engine::past::PastCiter;
use crate::engine::rename::rename_residual;
use std::sync::Arc;
use trac_core::labels::StepInput;
use trac_core::parametric::Slicing;
use trac_core::table::{Table, TableMonitor};
use trac_ltl::formula::{Arena, Formula};
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
    /// The compiled, complete progression and plain progression monitors side by side
    /// ([`CrossCheckMonitor`]), stopping at the first difference.
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

use trac_ltl::compiler::TableCompiler;

/// Why a monitor of an engine could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The table compiler failed (its message; its cause is the compiler's own error).
    #[error(transparent)]
    Compile(trac_ltl::compiler::CompileError),
    /// The compiled or cross-check engine was asked for without a table compiler.
    #[error("the compiled and cross-check engines need a table compiler (trac_compile::Compiler)")]
    NoCompiler,
    /// Complete progression was asked for without a [`VerdictOracle`](trac_ltl::compiler::VerdictOracle) (a compiler whose
    /// [`TableCompiler::oracle`] gives one).
    #[error("complete progression needs a verdict oracle (trac_compile::Compiler provides one)")]
    NoOracle,
}

/// A monitor of `table` under `policy` whose parametric instances show their residuals
/// instantiated through the parser and printer ([`rename_residual`]).
pub fn table_monitor(table: Arc<Table>, policy: ResetPolicy) -> TableMonitor {
    TableMonitor::new(table, policy).with_renamer(rename_residual)
}

/// `m` (a monitor of `formula`, a handle in `arena`) with a [`PastCiter`] explaining its
/// verdicts when the formula has past-time operators; unchanged otherwise (no cost).
pub fn with_past(m: TableMonitor, arena: &Arena, formula: Formula) -> TableMonitor {
    match PastCiter::new(arena, formula) {
        Some(c) => m.with_past(Box::new(c)),
        None => m,
    }
}

/// Why `engine` runs `formula` (a handle in `arena`) by complete progression instead of a
/// compiled table: the table is over the compiler's state budget
/// ([`CompileError::is_too_large`](trac_ltl::compiler::CompileError::is_too_large)). `None`
/// for other engines, without a compiler, or when the table compiles. The compiler caches
/// tables and refusals, so after [`EngineMonitor::new`] this costs a lookup.
pub fn too_large(
    engine: Engine,
    arena: &Arena,
    formula: Formula,
    semantics: Semantics,
    compiler: Option<&dyn TableCompiler>,
) -> Option<trac_ltl::compiler::CompileError> {
    if engine != Engine::Compiled {
        return None;
    }
    compiler?
        .compile(arena, formula, semantics)
        .err()
        .filter(|e| e.is_too_large())
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
    /// Whether a compiled monitor records witness entries ([`TableMonitor::set_witnesses`]);
    /// progression monitors always do (their witnesses are then dropped by the auditor).
    pub fn set_witnesses(&mut self, on: bool) {
        if let EngineMonitor::Table(t) = self {
            t.set_witnesses(on);
        }
    }

    /// A monitor of `formula` (a handle in `arena`) run by `engine`. Complete progression
    /// decides through the compiler's [`TableCompiler::oracle`].
    ///
    /// # Errors
    /// The compiler's error; the compiled or cross-check engine without a compiler
    /// ([`EngineError::NoCompiler`]); complete progression without an oracle
    /// ([`EngineError::NoOracle`]).
    pub fn new(
        engine: Engine,
        arena: &Arena,
        formula: Formula,
        policy: ResetPolicy,
        semantics: Semantics,
        compiler: Option<&dyn TableCompiler>,
    ) -> Result<EngineMonitor, EngineError> {
        let complete = || match compiler.and_then(|c| c.oracle()) {
            Some(o) => Ok(ProgressionMonitor::with_semantics(
                arena.clone(),
                formula,
                policy,
                Some(o),
                semantics,
            )),
            None => Err(EngineError::NoOracle),
        };
        Ok(match (engine, compiler) {
            (Engine::Progression, _) => EngineMonitor::Progression(Box::new(
                ProgressionMonitor::new(arena.clone(), formula, policy),
            )),
            (Engine::CompleteProgression, _) => EngineMonitor::Progression(Box::new(complete()?)),
            (Engine::Compiled, None) => return Err(EngineError::NoCompiler),
            (Engine::Compiled, Some(c)) => match c.compile(arena, formula, semantics) {
                Ok(table) => {
                    EngineMonitor::Table(with_past(table_monitor(table, policy), arena, formula))
                }
                // Over the compiler's state budget: the same verdicts by complete progression,
                // whose states are built as the trace visits them ([`too_large`] tells).
                Err(e) if e.is_too_large() => match c.fallback_oracle() {
                    Some(o) => {
                        EngineMonitor::Progression(Box::new(ProgressionMonitor::with_semantics(
                            arena.clone(),
                            formula,
                            policy,
                            Some(o),
                            semantics,
                        )))
                    }
                    None => return Err(EngineError::NoOracle),
                },
                Err(e) => return Err(EngineError::Compile(e)),
            },
            (Engine::CrossCheck, Some(c)) => {
                let table = c
                    .compile(arena, formula, semantics)
                    .map_err(EngineError::Compile)?;
                EngineMonitor::CrossCheck(Box::new(CrossCheckMonitor::new(
                    with_past(table_monitor(table, policy), arena, formula),
                    complete()?,
                )))
            }
            (Engine::CrossCheck, None) => return Err(EngineError::NoCompiler),
        })
    }

    /// A template for `forall var: formula`: like [`EngineMonitor::new`], and with the compiled
    /// engines, shadows for the values that make two propositions one when instantiated (see
    /// [`TableMonitor::with_shadows`]).
    ///
    /// Several variables (`var` a list `x, y`): the table is shared by every tuple when no
    /// tuple can make two propositions one ([`Slicing::may_merge`]: no variable beside a
    /// constant or another variable at the same argument of the same proposition, and at most
    /// one comparison `a = b` / `a = "x"`), as with
    /// `load(p, a)` / `unload(p, a)` or `call(tool)` / `modify(rid)`. Otherwise the compiled and
    /// cross-check engines run the property by complete progression (same verdicts: the
    /// compiled ≡ complete progression invariant; the states are built as the trace visits
    /// them), since a renamed table would be sound but not complete for the merging tuples.
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
    ) -> Result<EngineMonitor, EngineError> {
        let names = crate::engine::parametric::slicing_names(arena, formula);
        let slicing = Slicing::new(names.iter().map(String::as_str), var);
        let several = slicing.vars().len() > 1;
        // Two comparisons may become one when instantiated (`a = b` and `a = "x"` for
        // `b := "x"`), as two atoms may ([`Slicing::may_merge`]; comparisons bind nothing, so
        // the slicing does not see them).
        let comparisons = arena
            .atoms(formula)
            .into_iter()
            .filter(|&s| trac_core::names::comparison_sides(arena.sym_name(s)).is_some())
            .count();
        let may_merge = slicing.may_merge() || comparisons > 1;
        if several && may_merge && matches!(engine, Engine::Compiled | Engine::CrossCheck) {
            return EngineMonitor::new(
                Engine::CompleteProgression,
                arena,
                formula,
                policy,
                semantics,
                compiler,
            );
        }
        let mut m = EngineMonitor::new(engine, arena, formula, policy, semantics, compiler)?;
        if several {
            return Ok(m);
        }
        let table = match &mut m {
            EngineMonitor::Table(t) => t,
            EngineMonitor::CrossCheck(c) => &mut c.compiled,
            EngineMonitor::Progression(_) => return Ok(m),
        };
        let Some(compiler) = compiler else {
            return Ok(m);
        };
        let values = slicing.constants_beside(0);
        let mut shadows = Vec::new();
        for v in values {
            let mut a = arena.clone();
            let f = a.instantiate(formula, var, &v);
            let t = match compiler.compile(&a, f, semantics) {
                Ok(t) => t,
                Err(e) if e.is_too_large() && engine == Engine::Compiled => {
                    return EngineMonitor::new(
                        Engine::CompleteProgression,
                        arena,
                        formula,
                        policy,
                        semantics,
                        Some(compiler),
                    );
                }
                Err(e) => return Err(EngineError::Compile(e)),
            };
            shadows.push((v, with_past(table_monitor(t, policy), &a, f)));
        }
        let plain = std::mem::replace(table, table_monitor(table.table().clone(), policy));
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
    fn witness_owned(&self) -> Vec<Change> {
        self.inner().witness_owned()
    }
    fn explanation_owned(&self) -> Vec<Change> {
        self.inner().explanation_owned()
    }
    fn ltlf(&self) -> Verdict {
        self.inner().ltlf()
    }
    fn ltlf_since_restart(&self) -> Option<Verdict> {
        self.inner().ltlf_since_restart()
    }
    fn past_citations(&self) -> Vec<PastCitation> {
        self.inner().past_citations()
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
