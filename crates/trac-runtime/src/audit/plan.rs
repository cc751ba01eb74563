//! What an audit builds once per set of specs ([`AuditPlan`]): options, validation, compiled
//! monitors and labeling rules.

use crate::audit::auditor::{Auditor, Interned, Prop, Runner, Violations};
use crate::audit::coverage::Coverage;
use crate::audit::records::PropertyInfo;
use crate::engine::monitor::{Monitor, ResetPolicy};
use crate::engine::parametric::ParametricMonitor;
use crate::engine::{Engine, EngineMonitor};
use crate::label::derived::DerivedAtoms;
use crate::label::derived::QuantifierError;
use crate::label::labeler::{LabelerError, RuleLabeler};
use crate::trace::TraceError;
use std::sync::Arc;
use trac_ltl::compiler::TableCompiler;
use trac_spec::spec::{CheckedSpec, Semantics};

/// Options of an audit.
#[derive(Clone, Debug)]
pub struct AuditOptions {
    /// TRAC_R: restart a property after each violation to count violations (default `true`).
    /// `false` is plain TRAC: a violated property stays violated.
    pub reset: bool,
    /// The monitoring engine (default [`Engine::Compiled`]).
    pub engine: Engine,
    /// The compiler of the compiled and cross-check engines (`trac_compile::Compiler::shared()`),
    /// whose [`TableCompiler::oracle`] also decides complete progression's verdicts. Every engine
    /// but plain progression needs one.
    pub compiler: Option<Arc<dyn TableCompiler>>,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            reset: true,
            engine: Engine::default(),
            compiler: None,
        }
    }
}

impl PartialEq for AuditOptions {
    fn eq(&self, other: &Self) -> bool {
        self.reset == other.reset
            && self.engine == other.engine
            && match (&self.compiler, &other.compiler) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for AuditOptions {}

/// An error that prevents an audit from starting.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The trace could not be opened.
    #[error("{0}")]
    Trace(#[from] TraceError),
    /// A spec's labeling rules cannot be built.
    #[error(transparent)]
    Labeler(#[from] LabelerError),
    /// Two specs declare the same property id (namespace them first:
    /// [`crate::audit::specs::combine`]).
    #[error("duplicate property id `{0}` across specs")]
    DuplicateId(String),
    /// A property cannot be monitored: a past-time operator over a future one, a table that
    /// does not compile, an engine without the compiler it needs.
    #[error("property {id}: {cause}")]
    Property {
        /// The property's id.
        id: String,
        /// Why.
        #[source]
        cause: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A property's `exists` quantifier cannot be evaluated.
    #[error(transparent)]
    Quantifier(#[from] QuantifierError),
}

impl AuditError {
    /// Whether a property's table is over the compiler's state budget
    /// ([`CompileError::is_too_large`](trac_ltl::compiler::CompileError::is_too_large)): an
    /// engine that needs the table (cross-check) refuses it, where the compiled engine falls
    /// back to complete progression.
    pub fn is_too_large(&self) -> bool {
        match self {
            AuditError::Property { cause, .. } => matches!(
                cause.downcast_ref::<crate::engine::EngineError>(),
                Some(crate::engine::EngineError::Compile(e)) if e.is_too_large()
            ),
            _ => false,
        }
    }
}

/// Everything an audit builds once per set of specs and options: the validated properties, their
/// compiled monitors (tables behind `Arc`s), the labeling rules' regexes. [`AuditPlan::auditor`]
/// instantiates a fresh [`Auditor`] from it in O(properties) without compiling anything, so a
/// trace file of many sessions costs what its events cost, not one compilation per session.
#[derive(Clone)]
pub struct AuditPlan {
    proto: Auditor,
    fallbacks: Vec<Fallback>,
}

/// A property the compiled engine runs by complete progression because its table is over the
/// compiler's state budget ([`crate::engine::select::too_large`]): the verdicts are the same, a
/// step costs a progression step (and a satisfiability check per new residual) instead of a
/// table lookup.
#[derive(Clone, Debug)]
pub struct Fallback {
    /// The property's id.
    pub property: String,
    /// The compiler's refusal (its message says the budget).
    pub cause: trac_ltl::compiler::CompileError,
}

impl AuditPlan {
    /// Validates and compiles every property of `specs` and their labeling rules.
    ///
    /// # Errors
    /// As [`Auditor::new`].
    pub fn new(specs: &[CheckedSpec], opts: &AuditOptions) -> Result<AuditPlan, AuditError> {
        let proto = Auditor::build(specs, opts)?;
        let fallbacks = specs
            .iter()
            .flat_map(|s| &s.properties)
            .filter_map(|p| {
                let cause = crate::engine::select::too_large(
                    opts.engine,
                    &p.arena,
                    p.formula,
                    p.decl.semantics,
                    opts.compiler.as_deref(),
                )?;
                Some(Fallback {
                    property: p.decl.id.clone(),
                    cause,
                })
            })
            .collect();
        Ok(AuditPlan { proto, fallbacks })
    }

    /// The properties run by complete progression instead of a table too large to compile,
    /// in spec order (empty unless the engine is [`Engine::Compiled`]).
    pub fn fallbacks(&self) -> &[Fallback] {
        &self.fallbacks
    }

    /// A fresh auditor (no step read), sharing the plan's tables, rules and property facts.
    /// O(properties): the monitors' initial states are copied.
    pub fn auditor(&self) -> Auditor {
        self.proto.clone()
    }

    /// Makes `auditor` (of this plan, e.g. one whose trace ended) fresh again, as
    /// [`AuditPlan::auditor`] would give it, reusing its allocations: for audits of many short
    /// traces (sessions), one allocation less per trace.
    pub fn reset(&self, auditor: &mut Auditor) {
        auditor.clone_from(&self.proto);
    }

    /// The audited properties, in spec order.
    pub fn properties(&self) -> Vec<PropertyInfo> {
        self.proto.properties()
    }

    /// Whether the auditors of this plan record witnesses (default `true`). Off, every verdict
    /// record is the same but for an empty `witness` and `past` and no `restarted_with` (the
    /// residual a restart left, which explains a witness), and
    /// the compiled monitors skip recording witness entries at every state change (most of a
    /// step's cost on traces whose properties change state often): for reports that print
    /// counts and steps only (`trac audit --summary`).
    pub fn set_witnesses(&mut self, on: bool) {
        self.proto.witnesses = on;
        for p in &mut self.proto.props {
            match &mut p.runner {
                Runner::Plain(m) => m.set_witnesses(on),
                Runner::Param(pm) => pm.for_each_monitor_mut(|m| m.set_witnesses(on)),
            }
        }
    }
}

impl Auditor {
    /// An auditor for every property of `specs`. To audit many traces (sessions) with the same
    /// specs, build an [`AuditPlan`] once and call [`AuditPlan::auditor`] per trace.
    ///
    /// # Errors
    /// A property whose past-time operator contains a future-time one, a duplicate property id
    /// across specs, or a labeling rule that cannot be built.
    pub fn new(specs: &[CheckedSpec], opts: &AuditOptions) -> Result<Auditor, AuditError> {
        Auditor::build(specs, opts)
    }

    fn build(specs: &[CheckedSpec], opts: &AuditOptions) -> Result<Auditor, AuditError> {
        let mut props = Vec::new();
        let mut labelers = Vec::new();
        let mut ids = std::collections::HashSet::new();
        for spec in specs {
            let descriptions = spec.descriptions();
            labelers.push(RuleLabeler::new(&spec.spec)?);
            for p in &spec.properties {
                if !ids.insert(p.decl.id.clone()) {
                    return Err(AuditError::DuplicateId(p.decl.id.clone()));
                }
                let property =
                    |cause: Box<dyn std::error::Error + Send + Sync>| AuditError::Property {
                        id: p.decl.id.clone(),
                        cause,
                    };
                trac_ltl::progress::validate(&p.arena, p.formula)
                    .map_err(|e| property(e.into()))?;
                let policy = ResetPolicy {
                    on_violation: opts.reset,
                    on_satisfaction: opts.reset && p.decl.reset_on_satisfaction,
                };
                let printed = trac_ltl::print(&p.arena, p.formula);
                let formula = match &p.var {
                    Some(v) => format!("forall {v}: {printed}"),
                    None => printed,
                };
                let english = trac_ltl::english::render(&p.arena, p.formula, &descriptions);
                let english = match &p.var {
                    Some(v) => format!("for every {v}, {english}"),
                    None => english,
                };
                let monitor = match &p.var {
                    Some(v) => EngineMonitor::new_parametric(
                        opts.engine,
                        &p.arena,
                        p.formula,
                        v,
                        policy,
                        p.decl.semantics,
                        opts.compiler.as_deref(),
                    ),
                    None => EngineMonitor::new(
                        opts.engine,
                        &p.arena,
                        p.formula,
                        policy,
                        p.decl.semantics,
                        opts.compiler.as_deref(),
                    ),
                }
                .map_err(|e| property(Box::new(e)))?;
                let runner = match &p.var {
                    Some(v) => Runner::Param(ParametricMonitor::with_template(
                        &p.arena, p.formula, v, monitor,
                    )),
                    None => Runner::Plain(monitor),
                };
                props.push(Prop {
                    info: Arc::new(PropertyInfo {
                        id: p.decl.id.clone(),
                        description: p.decl.description.clone(),
                        formula,
                        english,
                        semantics: match p.decl.semantics {
                            Semantics::Ltl3 => "ltl3",
                            Semantics::Ltlf => "ltlf",
                        },
                    }),
                    semantics: p.decl.semantics,
                    frozen: !p.arena.info(p.formula).has_past
                        && match &runner {
                            Runner::Plain(m) => m.initial().is_some(),
                            Runner::Param(m) => m.initial().is_some(),
                        },
                    runner,
                    violations: Violations::default(),
                    ids: None,
                });
            }
        }
        let derived = DerivedAtoms::new(specs.iter().flat_map(|s| {
            s.properties
                .iter()
                .map(|p| (&p.arena, p.formula, p.var.as_deref()))
        }))?;
        // The valuation path: each label read by a compiled monitor gets an id once, and each
        // step is looked up once per label of the step instead of once per proposition per
        // property (`TableMonitor::step_valuation`).
        let mut interned = Interned::default();
        for p in &mut props {
            let Runner::Plain(EngineMonitor::Table(m)) = &p.runner else {
                continue;
            };
            if m.labels().len() > 64 {
                continue;
            }
            let ids: Arc<[u32]> = m
                .labels()
                .iter()
                .map(|l| {
                    let next = interned.len() as u32;
                    *interned.entry(l.as_str().into()).or_insert(next)
                })
                .collect();
            p.ids = Some(ids);
        }
        let valuation = vec![0; interned.len().div_ceil(64)];
        Ok(Auditor {
            interned: Arc::new(interned),
            seen_ids: valuation.clone(),
            valuation,
            derived,
            props,
            text_rules: labelers.iter().any(|l| !l.is_empty()),
            labelers: labelers.into(),
            steps: 0,
            coverage: Coverage::default(),
            witnesses: true,
        })
    }
}
