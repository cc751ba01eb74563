//! Monitoring engines: progression, complete progression, compiled tables, and the cross-check
//! of all three ([`CrossCheckMonitor`]).
//!
//! Every engine implements [`Monitor`] with the same TRAC / TRAC_R semantics, witnesses and LTLf
//! verdict, so the audit loop can run any of them ([`EngineMonitor`]). The compiled engine needs a
//! [`TableCompiler`], complete progression a [`VerdictOracle`] (the satisfiability checker, which
//! the compiler provides, [`TableCompiler::oracle`]): `trac-runtime` does not depend on the
//! compiler (both depend on the traits and on `trac-core`'s table format), so the compiler is
//! passed in, e.g. `trac_compile::Compiler::shared()`.

use crate::labels::StepInput;
use crate::monitor::{Change, Monitor, PastCitation, ProgressionMonitor, ResetPolicy, Verdict};
use crate::parametric::Instantiate;
use crate::past::PastCiter;
use crate::table::{Table, TableMonitor};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;
use trac_core::parametric::Slicing;
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

pub use trac_spec::compiler::{TableCompiler, VerdictOracle};

/// Why a monitor of an engine could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The table compiler failed (its message; its cause is the compiler's own error).
    #[error(transparent)]
    Compile(trac_spec::compiler::CompileError),
    /// The compiled or cross-check engine was asked for without a table compiler.
    #[error("the compiled and cross-check engines need a table compiler (trac_compile::Compiler)")]
    NoCompiler,
    /// Complete progression was asked for without a [`VerdictOracle`] (a compiler whose
    /// [`TableCompiler::oracle`] gives one).
    #[error("complete progression needs a verdict oracle (trac_compile::Compiler provides one)")]
    NoOracle,
}

/// A monitor of `table` under `policy` whose parametric instances show their residuals
/// instantiated through the parser and printer ([`rename_residual`]).
pub fn table_monitor(table: Arc<Table>, policy: ResetPolicy) -> TableMonitor {
    TableMonitor::new(table, policy).with_renamer(rename_residual)
}

/// A residual formula (Spot syntax) with `var` instantiated by `value`: parsed, instantiated
/// ([`Arena::instantiate`], which normalizes) and printed; when the string does not parse,
/// every `(var)` of the text becomes `(value)`. The [`crate::table::RenameResidual`] of the
/// runtime's table monitors.
pub fn rename_residual(r: &str, var: &str, value: &str) -> String {
    let mut arena = Arena::new();
    match trac_spec::parse(&mut arena, r) {
        Ok(f) => {
            let g = arena.instantiate(f, var, value);
            trac_spec::print(&arena, g)
        }
        Err(_) => crate::table::rename_residual_text(r, var, value),
    }
}

/// `m` (a monitor of `formula`, a handle in `arena`) with a [`PastCiter`] explaining its
/// verdicts when the formula has past-time operators; unchanged otherwise (no cost).
pub fn with_past(m: TableMonitor, arena: &Arena, formula: Formula) -> TableMonitor {
    match PastCiter::new(arena, formula) {
        Some(c) => m.with_past(Box::new(c)),
        None => m,
    }
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
            (Engine::Compiled, Some(c)) => {
                let table = c
                    .compile(arena, formula, semantics)
                    .map_err(EngineError::Compile)?;
                EngineMonitor::Table(with_past(table_monitor(table, policy), arena, formula))
            }
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
    /// constant or another variable at the same argument of the same proposition), as with
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
        let names = crate::parametric::slicing_names(arena, formula);
        let slicing = Slicing::new(names.iter().map(String::as_str), var);
        let several = slicing.vars().len() > 1;
        if several && slicing.may_merge() && matches!(engine, Engine::Compiled | Engine::CrossCheck)
        {
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
            let t = compiler
                .compile(&a, f, semantics)
                .map_err(EngineError::Compile)?;
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

/// The first step at which the cross-checked engines disagree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// 1-based step (0: before the first step).
    pub step: usize,
    /// What differed: `initial verdict`, `verdict reached` (the step's event), `current verdict`
    /// or `LTLf verdict`.
    pub what: &'static str,
    /// The engine the compiled monitor disagrees with: `complete progression` or `plain
    /// progression`.
    pub against: &'static str,
    /// The compiled monitor's (event or verdict).
    pub compiled: Option<Verdict>,
    /// The other engine's.
    pub progression: Option<Verdict>,
    /// The compiled monitor's residual after the step.
    pub compiled_residual: String,
    /// The other engine's residual after the step.
    pub progression_residual: String,
    /// The compiled monitor's explanation (steps since its last restart).
    pub compiled_witness: Vec<Change>,
    /// The other engine's explanation.
    pub progression_witness: Vec<Change>,
}

fn show(v: Option<Verdict>) -> &'static str {
    v.map_or("none", Verdict::as_str)
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "cross-check: the engines disagree at step {} on the {}: compiled {}, {} {}",
            self.step,
            self.what,
            show(self.compiled),
            self.against,
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

/// The most runs of the formula checked at once against plain progression.
pub const MAX_PROBES: usize = 8;

/// One run of the formula from a given position, by plain progression and by the compiled
/// table, both without restarts.
#[derive(Clone, Debug)]
struct Probe {
    plain: ProgressionMonitor,
    compiled: TableMonitor,
}

/// Runs three engines of the same property side by side and records the first step where
/// they disagree ([`CrossCheckMonitor::mismatch`]); it reports the compiled monitor's results.
///
/// - **Compiled ≡ complete progression**: the same events, current verdicts and LTLf verdicts at
///   every step (TRAC / TRAC_R included). Both decide through the satisfiability checker, so
///   a fault there could make them agree on a wrong verdict; hence:
/// - **Plain progression** (Bacchus & Kabanza's, which shares no decision code with the
///   checker) is sound but not complete: where it decides, the compiled verdict must be the
///   same (the compiled monitor may decide earlier, never differently). Since TRAC_R restarts
///   happen where each engine decides, the runs are compared without restarts: the run of the
///   formula from position 1 (whose LTLf verdict of the trace read so far must also equal the
///   compiled one at every step), and runs from later positions, a new one starting after the
///   compiled side of the newest run is decided (at most [`MAX_PROBES`] at once, the oldest
///   dropped first; a run leaves once both sides are decided). Plain progression's verdicts
///   are LTL3 verdicts: for an LTLf property only the LTLf verdicts are compared.
///
/// Cost per step: the three monitors, plus up to [`MAX_PROBES`] plain progression and table
/// runs.
#[derive(Clone, Debug)]
pub struct CrossCheckMonitor {
    compiled: TableMonitor,
    progression: ProgressionMonitor,
    /// Plain progression without restarts from position 1: the history for new runs, and the
    /// LTLf verdict of the whole trace.
    plain: ProgressionMonitor,
    probes: Vec<Probe>,
    /// Runs whose plain progression verdict was compared with the compiled one.
    plain_checked: usize,
    mismatch: Option<Mismatch>,
    steps: usize,
}

impl CrossCheckMonitor {
    /// Cross-checks `compiled` against `progression` (which should be complete, with the same
    /// semantics and reset policy) and against plain progression of the same formula.
    pub fn new(compiled: TableMonitor, progression: ProgressionMonitor) -> CrossCheckMonitor {
        // Both sides cite past-time steps (compared at every verdict).
        let compiled = match (compiled.has_past(), progression.citer()) {
            (false, Some(c)) => compiled.with_past(Box::new(c.clone())),
            _ => compiled,
        };
        let plain = ProgressionMonitor::new(
            progression.arena().clone(),
            progression.formula(),
            ResetPolicy {
                on_violation: false,
                on_satisfaction: false,
            },
        );
        let mut m = CrossCheckMonitor {
            probes: Vec::new(),
            plain_checked: 0,
            compiled,
            progression,
            plain,
            mismatch: None,
            steps: 0,
        };
        let (a, b) = (m.compiled.initial(), m.progression.initial());
        if a != b {
            m.record("initial verdict", "complete progression", a, b);
        }
        let c = m.plain.initial();
        if c.is_some() && c != a {
            m.record("initial verdict", "plain progression", a, c);
        }
        m.start_probe();
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

    /// The plain progression monitor of the run from position 1 (no restarts).
    pub fn plain(&self) -> &ProgressionMonitor {
        &self.plain
    }

    /// How many runs of the formula had their plain progression verdict compared with the
    /// compiled one so far (runs that plain progression decided).
    pub fn plain_checked(&self) -> usize {
        self.plain_checked
    }

    /// A run of the formula from the next position. Only for LTL3 tables: a plain progression
    /// residual `false` says that no non-empty continuation satisfies the formula, while the
    /// trace read so far may satisfy it as a finite trace (`X false` after one step), so its
    /// verdicts are not LTLf verdicts.
    fn start_probe(&mut self) {
        if self.compiled.table().semantics() != Semantics::Ltl3 {
            return;
        }
        if self.probes.len() == MAX_PROBES {
            self.probes.remove(0);
        }
        self.probes.push(Probe {
            plain: self.plain.plain_run_from_here(),
            compiled: self.compiled.run_from_here(),
        });
    }

    fn record(
        &mut self,
        what: &'static str,
        against: &'static str,
        a: Option<Verdict>,
        b: Option<Verdict>,
    ) {
        if self.mismatch.is_some() {
            return;
        }
        let other = if against == "plain progression" {
            &self.plain
        } else {
            &self.progression
        };
        self.mismatch = Some(Mismatch {
            step: self.steps,
            what,
            against,
            compiled: a,
            progression: b,
            compiled_residual: self.compiled.residual(),
            progression_residual: other.residual(),
            compiled_witness: self.compiled.explanation().to_vec(),
            progression_witness: other.explanation().to_vec(),
        });
    }

    /// Steps the plain progression runs and checks them against the compiled ones.
    fn check_plain(&mut self, input: &StepInput<'_>) {
        self.plain.step(input);
        let mut found = None;
        for p in &mut self.probes {
            p.plain.step(input);
            p.compiled.step(input);
            let (x, y) = (p.compiled.verdict(), p.plain.verdict());
            if y != Verdict::Pending && x != y && found.is_none() {
                found = Some((
                    x,
                    y,
                    p.compiled.residual(),
                    p.plain.residual(),
                    p.compiled.explanation().to_vec(),
                    p.plain.explanation().to_vec(),
                ));
            }
        }
        if let Some((x, y, rc, rp, wc, wp)) = found {
            if self.mismatch.is_none() {
                self.mismatch = Some(Mismatch {
                    step: self.steps,
                    what: "current verdict",
                    against: "plain progression",
                    compiled: Some(x),
                    progression: Some(y),
                    compiled_residual: rc,
                    progression_residual: rp,
                    compiled_witness: wc,
                    progression_witness: wp,
                });
            }
        }
        let (x, y) = (self.compiled.ltlf(), self.plain.ltlf());
        if x != y {
            self.record("LTLf verdict", "plain progression", Some(x), Some(y));
        }
        let before = self.probes.len();
        self.probes.retain(|p| {
            p.compiled.verdict() == Verdict::Pending || p.plain.verdict() == Verdict::Pending
        });
        self.plain_checked += before - self.probes.len();
        let newest_pending = self
            .probes
            .last()
            .is_some_and(|p| p.compiled.verdict() == Verdict::Pending);
        if !newest_pending {
            self.start_probe();
        }
    }

    fn instantiate(&self, var: &str, value: &str) -> Self {
        let mut m = CrossCheckMonitor {
            compiled: self.compiled.instantiate(var, value),
            progression: self.progression.instantiate(var, value),
            plain: self.plain.instantiate(var, value),
            probes: Vec::new(),
            plain_checked: self.plain_checked,
            mismatch: self.mismatch.clone(),
            steps: self.steps,
        };
        // The template's runs would read renamed propositions of the template's table, not
        // the instance's (a value written in the formula has a table of its own): the
        // instance's runs start at the next position.
        m.start_probe();
        m
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
            self.record("verdict reached", "complete progression", a, b);
            if let Some(m) = &mut self.mismatch {
                if m.step == input.step {
                    m.compiled_witness = wa;
                    m.progression_witness = wb;
                }
            }
        } else if self.compiled.verdict() != self.progression.verdict() {
            let (x, y) = (self.compiled.verdict(), self.progression.verdict());
            self.record("current verdict", "complete progression", Some(x), Some(y));
        } else if self.compiled.ltlf() != self.progression.ltlf() {
            let (x, y) = (self.compiled.ltlf(), self.progression.ltlf());
            self.record("LTLf verdict", "complete progression", Some(x), Some(y));
        } else if let (Some(x), Some(y), Verdict::Pending) = (
            self.compiled.ltlf_since_restart(),
            self.progression.ltlf_since_restart(),
            self.compiled.verdict(),
        ) {
            if x != y {
                self.record(
                    "LTLf verdict since the last restart",
                    "complete progression",
                    Some(x),
                    Some(y),
                );
            }
        }
        if a.is_some()
            && a == b
            && self.compiled.past_citations() != self.progression.past_citations()
        {
            self.record("past-time citations", "complete progression", a, b);
        }
        self.check_plain(input);
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

    fn witness_owned(&self) -> Vec<Change> {
        self.compiled.witness_owned()
    }

    fn explanation_owned(&self) -> Vec<Change> {
        self.compiled.explanation_owned()
    }

    fn ltlf(&self) -> Verdict {
        self.compiled.ltlf()
    }

    fn ltlf_since_restart(&self) -> Option<Verdict> {
        self.compiled.ltlf_since_restart()
    }

    fn past_citations(&self) -> Vec<PastCitation> {
        self.compiled.past_citations()
    }

    fn reset(&mut self) {
        self.compiled.reset();
        self.progression.reset();
        self.plain.reset();
        self.probes.clear();
        self.plain_checked = 0;
        self.mismatch = None;
        self.steps = 0;
        self.start_probe();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::LabelSet;
    use crate::table::{AuxFile, TableFile, FORMAT, LEAF, VERSION};

    /// `G(p -> X q)` by hand: state 2 = G(p -> X q), 3 = q & G(p -> X q).
    #[rustfmt::skip]
    fn response() -> Arc<Table> {
        let file = TableFile {
            format: FORMAT.into(),
            version: VERSION,
            formula: "G(p -> X q)".into(),
            semantics: Semantics::Ltl3,
            minimized: true,
            props: vec!["p".into(), "q".into()],
            initial: 2,
            residuals: vec![
                "false".into(),
                "true".into(),
                "G(p -> X q)".into(),
                "q & G(p -> X q)".into(),
            ],
            roots: vec![LEAF, LEAF | 1, 0, 1],
            nodes: vec![0, LEAF | 2, LEAF | 3, 1, LEAF, 2, 0, LEAF | 2, LEAF | 3],
            // LTLf: 0 = no pending `p`, 1 = `p` at the last step, 2 = violated.
            aux: AuxFile {
                initial: 0,
                roots: vec![0, 1, LEAF | 2],
                nodes: vec![
                    0,
                    LEAF,
                    LEAF | 1,
                    0,
                    2,
                    3,
                    1,
                    LEAF | 2,
                    LEAF,
                    1,
                    LEAF | 2,
                    LEAF | 1,
                ],
                accepting: vec![true, true, false],
                restart: vec![2, 2, 2],
            },
            accepting: None,
        };
        Arc::new(Table::from_file(file).unwrap())
    }

    #[test]
    fn complete_engines_need_the_compiler_and_its_oracle() {
        let mut a = Arena::new();
        let f = trac_spec::parse(&mut a, "F p & G !p").unwrap();
        let (p, s) = (ResetPolicy::default(), Semantics::Ltl3);
        let new = |e, c| EngineMonitor::new(e, &a, f, p, s, c).map(|m| m.initial());
        assert_eq!(
            new(Engine::CompleteProgression, None),
            Err(EngineError::NoOracle)
        );
        assert_eq!(new(Engine::Compiled, None), Err(EngineError::NoCompiler));
        assert_eq!(new(Engine::CrossCheck, None), Err(EngineError::NoCompiler));
        // Plain progression needs neither, and misses the violation before any step.
        assert_eq!(new(Engine::Progression, None), Ok(None));
        // With the compiler, complete progression decides through its oracle.
        let compiler = trac_compile::Compiler::new();
        assert_eq!(
            new(Engine::CompleteProgression, Some(&compiler)),
            Ok(Some(Verdict::Violated))
        );
    }

    fn complete(src: &str, policy: ResetPolicy) -> ProgressionMonitor {
        let mut a = Arena::new();
        let f = trac_spec::parse(&mut a, src).unwrap();
        ProgressionMonitor::with_options(a, f, policy, Some(&trac_compile::SatOracle))
    }

    fn run(m: &mut CrossCheckMonitor, steps: &[&[&str]]) {
        for (i, l) in steps.iter().enumerate() {
            let set: LabelSet = l.iter().copied().collect();
            m.step(&StepInput {
                step: i + 1,
                text: "",
                labels: &set,
            });
        }
    }

    const TRACE: &[&[&str]] = &[
        &["p"],
        &["q"],
        &["p"],
        &["p"],
        &[],
        &["p", "q"],
        &["q"],
        &["p"],
        &[],
    ];

    #[test]
    fn three_engines_agree_and_plain_progression_is_compared() {
        for policy in [
            ResetPolicy::default(),
            ResetPolicy {
                on_violation: false,
                on_satisfaction: false,
            },
        ] {
            let mut m = CrossCheckMonitor::new(
                TableMonitor::new(response(), policy),
                complete("G(p -> X q)", policy),
            );
            run(&mut m, TRACE);
            assert_eq!(m.mismatch(), None);
            // Plain progression decided the runs from positions 1 and 5 (violated at steps 4
            // and 9); the run from position 5 starts once the compiled one from 1 is decided.
            assert_eq!(m.plain_checked(), 2);
        }
    }

    #[test]
    fn a_fault_shared_by_compiled_and_complete_progression_is_caught_by_plain_progression() {
        // Compiled and complete progression agree (as they would on a fault of the
        // satisfiability checker they share); plain progression, here of a formula the
        // trace violates at step 2, disagrees with both.
        let policy = ResetPolicy::default();
        let mut m = CrossCheckMonitor::new(
            TableMonitor::new(response(), policy),
            complete("G(p -> X q)", policy),
        );
        let mut a = Arena::new();
        let wrong = trac_spec::parse(&mut a, "G(p -> X !q)").unwrap();
        let no_reset = ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        };
        m.plain = ProgressionMonitor::new(a, wrong, no_reset);
        m.probes.clear();
        m.start_probe();
        run(&mut m, &TRACE[..2]);
        let x = m.mismatch().expect("plain progression disagrees");
        assert_eq!((x.step, x.against), (2, "plain progression"));
        assert_eq!(x.compiled, Some(Verdict::Pending));
        assert_eq!(x.progression, Some(Verdict::Violated));
        assert!(x.to_string().contains("plain progression violated"), "{x}");
    }
}
