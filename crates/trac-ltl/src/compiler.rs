//! The interface between the engines and the monitor compiler: `trac-runtime` runs tables that
//! `trac-compile` builds ([`TableCompiler`]) and asks `trac-compile`'s satisfiability checker for
//! complete verdicts ([`VerdictOracle`]); neither depends on the other (the proc macro's build
//! needs the compiler without the runtime's trace readers).

use crate::formula::{Arena, Formula};
use std::error::Error;
use std::fmt;
use std::sync::Arc;
use trac_core::table::Table;
use trac_core::Semantics;

/// Compiles a property into a [`Table`] (implemented by `trac_compile::Compiler`).
pub trait TableCompiler: Send + Sync + fmt::Debug {
    /// The table of `formula` (a handle in `arena`) with verdicts of `semantics`.
    ///
    /// # Errors
    /// [`CompileError`], the implementation's own error as its cause, if the formula cannot be
    /// compiled.
    fn compile(
        &self,
        arena: &Arena,
        formula: Formula,
        semantics: Semantics,
    ) -> Result<Arc<Table>, CompileError>;

    /// The decision procedure for complete verdicts that comes with this compiler, if any (the
    /// engines use it for complete progression; `trac_compile::Compiler` returns its
    /// satisfiability checker).
    fn oracle(&self) -> Option<&dyn VerdictOracle> {
        None
    }

    /// The decision procedure for the properties the compiled engine runs by progression
    /// because their table is over the compiler's budget ([`CompileError::is_too_large`]);
    /// by default [`TableCompiler::oracle`]. `trac_compile::Compiler` bounds each check, since
    /// such a property's satisfiability checks can be as large as its table.
    fn fallback_oracle(&self) -> Option<&dyn VerdictOracle> {
        self.oracle()
    }
}

/// Why [`TableCompiler::compile`] failed: the implementation's own error (for
/// `trac_compile::Compiler`, a `trac_compile::CompileError`), kept as the cause.
///
/// It reads as its cause, like thiserror's `#[error(transparent)]`: [`fmt::Display`] is the
/// cause's message and [`Error::source`] the cause's source, so a chain of causes prints each
/// message once. [`CompileError::cause`] and [`CompileError::downcast_ref`] give the cause back.
/// Two errors are equal when their messages are.
#[derive(Clone, Debug)]
pub struct CompileError(Arc<dyn Error + Send + Sync + 'static>, bool);

impl CompileError {
    /// A compile error caused by `cause`.
    pub fn new<E: Error + Send + Sync + 'static>(cause: E) -> CompileError {
        CompileError(Arc::new(cause), false)
    }

    /// A compile error caused by `cause`, the table being larger than the compiler's budget:
    /// the engines then run the property by complete progression instead (same verdicts; see
    /// [`CompileError::is_too_large`]).
    pub fn too_large<E: Error + Send + Sync + 'static>(cause: E) -> CompileError {
        CompileError(Arc::new(cause), true)
    }

    /// Whether the table was refused for its size only (the formula is fine): built with
    /// [`CompileError::too_large`].
    pub fn is_too_large(&self) -> bool {
        self.1
    }

    /// The implementation's error.
    pub fn cause(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.0
    }

    /// The implementation's error as an `E`, if it is one.
    pub fn downcast_ref<E: Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl Error for CompileError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for CompileError {
    fn eq(&self, other: &CompileError) -> bool {
        self.1 == other.1
            && (Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string())
    }
}

impl Eq for CompileError {}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Inner;

    impl fmt::Display for Inner {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("inner")
        }
    }

    impl Error for Inner {}

    #[test]
    fn a_compile_error_reads_as_its_cause() {
        let e = CompileError::new(Inner);
        assert_eq!(e.to_string(), "inner");
        assert_eq!(e.downcast_ref::<Inner>(), Some(&Inner));
        assert!(e.source().is_none());
        assert_eq!(e.cause().to_string(), "inner");
        assert_eq!(e, CompileError::new(Inner));
    }
}
