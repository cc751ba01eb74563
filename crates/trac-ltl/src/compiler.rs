//! The interface between the engines and the monitor compiler: `trac-runtime` runs tables that
//! `trac-compile` builds ([`TableCompiler`]) and asks `trac-compile`'s satisfiability checker for
//! complete verdicts ([`VerdictOracle`]); neither depends on the other (the proc macro's build
//! needs the compiler without the runtime's trace readers).

use crate::formula::{Arena, Formula};
use std::fmt;
use std::sync::Arc;
use trac_core::table::Table;
use trac_core::Semantics;

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

    /// The decision procedure for complete verdicts that comes with this compiler, if any (the
    /// engines use it for complete progression; `trac_compile::Compiler` returns its
    /// satisfiability checker).
    fn oracle(&self) -> Option<&dyn VerdictOracle> {
        None
    }
}

/// The decision procedure behind complete verdicts (implemented by `trac_compile::SatOracle`,
/// the satisfiability checker; `trac-runtime`'s complete progression calls it).
///
/// A monitor's state is a residual formula with the bits of the property's past-time
/// subformulas ([`crate::progress::PastState::bits`]); the oracle decides whether every
/// continuation, some, or none satisfies it (LTL3, Bauer, Leucker & Schallhart, TOSEM 2011; or
/// LTLf over finite continuations, De Giacomo & Vardi, IJCAI 2013).
pub trait VerdictOracle: Send + Sync + fmt::Debug {
    /// A session deciding the residuals of `property` (a handle in `arena`, which fixes the
    /// past-time subformulas and so the meaning of the bits). Answers are memoized per session.
    fn session(&self, arena: &Arena, property: Formula) -> Box<dyn VerdictSession>;
}

/// The verdicts of one property's residuals (see [`VerdictOracle`]); memoized, so keep one per
/// property. Worst case exponential in the residual (LTL satisfiability is PSPACE-complete).
pub trait VerdictSession: fmt::Debug {
    /// The past-time bits before the first step (one per past node of the property).
    fn initial_bits(&self) -> Box<[bool]>;

    /// The LTL3 verdict of the state (`f`, `bits`): `Some(false)` iff no infinite continuation
    /// satisfies `f`, `Some(true)` iff every one does, `None` otherwise.
    fn ltl3(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> Option<bool>;

    /// The LTLf verdict of the state (`f`, `bits`), `accepted` telling whether the trace read
    /// so far satisfies the property: `Some(false)` iff neither the trace nor any finite
    /// extension does, `Some(true)` iff the trace and every finite extension do.
    fn ltlf(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        accepted: bool,
    ) -> Option<bool>;

    /// A fresh session for another property (e.g. a parametric instance), from the same oracle.
    fn fresh(&self, arena: &Arena, property: Formula) -> Box<dyn VerdictSession>;

    /// A copy of this session, memo included.
    fn clone_session(&self) -> Box<dyn VerdictSession>;
}

impl Clone for Box<dyn VerdictSession> {
    fn clone(&self) -> Self {
        self.clone_session()
    }
}
