//! The interface between the engines and the monitor compiler: `trac-runtime` runs tables that
//! `trac-compile` builds, and neither depends on the other (the proc macro's build needs the
//! compiler without the runtime's trace readers).

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
}
