//! The cross-check engine: three engines of one property side by side, stopping at the first
//! difference ([`CrossCheckMonitor`]).

use crate::engine::monitor::{
    Change, Monitor, PastCitation, ProgressionMonitor, ResetPolicy, Verdict,
};
use serde::Serialize;
use std::fmt;
use trac_core::labels::StepInput;
use trac_core::table::TableMonitor;
use trac_spec::spec::Semantics;

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

impl std::error::Error for Mismatch {}

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
pub(super) struct Probe {
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
    pub(super) compiled: TableMonitor,
    pub(super) progression: ProgressionMonitor,
    /// Plain progression without restarts from position 1: the history for new runs, and the
    /// LTLf verdict of the whole trace.
    pub(super) plain: ProgressionMonitor,
    pub(super) probes: Vec<Probe>,
    /// Runs whose plain progression verdict was compared with the compiled one.
    pub(super) plain_checked: usize,
    pub(super) mismatch: Option<Mismatch>,
    pub(super) steps: usize,
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
    pub(super) fn start_probe(&mut self) {
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

    pub(super) fn instantiate(&self, var: &str, value: &str) -> Self {
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
