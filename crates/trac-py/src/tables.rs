//! The process's table compiler ([`global`], a `trac_compile::Compiler` and its cache), and the
//! export / import of its tables.
//!
//! A distributed audit is a map over sessions with the compiled tables shipped as data: the
//! client compiles each property once (through an audit plan), exports the tables the spec used
//! ([`Recording`], [`export`]) into the pickled spec, and each worker process imports them
//! ([`import`]) instead of compiling again. Tables are checked on load ([`Table::from_json`]).

use std::sync::{Arc, Mutex, OnceLock};
use trac_compile::{Compiler, TableKey};
use trac_core::table::Table;
use trac_ltl::compiler::{CompileError, TableCompiler, VerdictOracle};
use trac_ltl::formula::{Arena, Formula};
use trac_spec::spec::Semantics;

/// The process-wide table compiler of the Python package, shared by every spec, monitor and
/// audit (its cache is the one exported and imported here).
pub fn global() -> Arc<Compiler> {
    static GLOBAL: OnceLock<Arc<Compiler>> = OnceLock::new();
    GLOBAL.get_or_init(|| Arc::new(Compiler::new())).clone()
}

/// A shipped table that does not load.
#[derive(Debug, thiserror::Error)]
#[error("compiled table of `{formula}`: {cause}")]
pub struct ImportError {
    /// The table's formula.
    pub formula: String,
    /// Why it does not load.
    #[source]
    pub cause: trac_core::table::TableError,
}

/// One exported table: its key and its JSON form (`Table::to_json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportedTable {
    /// The formula, printed in Spot syntax.
    pub formula: String,
    /// `true` for LTLf verdicts, `false` for LTL3.
    pub ltlf: bool,
    /// The table, as `Table::to_json` writes it.
    pub json: String,
}

/// The tables of `keys` that `compiler` has cached, as JSON (keys not cached are skipped).
pub fn export(compiler: &Compiler, keys: &[TableKey]) -> Vec<ExportedTable> {
    keys.iter()
        .filter_map(|k| {
            compiler.cached(k).map(|t| ExportedTable {
                formula: k.0.clone(),
                ltlf: k.1 == Semantics::Ltlf,
                json: t.to_json(),
            })
        })
        .collect()
}

/// Adds exported tables to `compiler`'s cache (a table already cached is kept). O(size of the
/// tables); nothing is added unless every table loads.
///
/// # Errors
/// A table that does not load (`Table::from_json`), with its formula.
pub fn import(compiler: &Compiler, tables: &[ExportedTable]) -> Result<(), ImportError> {
    let mut loaded = Vec::with_capacity(tables.len());
    for t in tables {
        let table = Table::from_json(&t.json).map_err(|cause| ImportError {
            formula: t.formula.clone(),
            cause,
        })?;
        let sem = if t.ltlf {
            Semantics::Ltlf
        } else {
            Semantics::Ltl3
        };
        loaded.push(((t.formula.clone(), sem), Arc::new(table)));
    }
    for (k, t) in loaded {
        compiler.insert(k, t);
    }
    Ok(())
}

/// A compiler that records the keys of the tables asked for (to export those a spec uses).
#[derive(Debug)]
pub struct Recording {
    inner: Arc<Compiler>,
    keys: Mutex<Vec<TableKey>>,
}

impl Recording {
    /// Records the tables asked of `inner`.
    pub fn new(inner: Arc<Compiler>) -> Recording {
        Recording {
            inner,
            keys: Mutex::new(Vec::new()),
        }
    }

    /// The keys asked for, in order, each once.
    pub fn keys(&self) -> Vec<TableKey> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl TableCompiler for Recording {
    fn compile(
        &self,
        arena: &Arena,
        formula: Formula,
        semantics: Semantics,
    ) -> Result<Arc<Table>, CompileError> {
        let t = self.inner.compile(arena, formula, semantics)?;
        let key = (trac_ltl::print(arena, formula), semantics);
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if !keys.contains(&key) {
            keys.push(key);
        }
        Ok(t)
    }

    fn oracle(&self) -> Option<&dyn VerdictOracle> {
        self.inner.oracle()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_import_round_trip_gives_the_same_tables() {
        let cache = Compiler::new();
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, "G(a -> X b)").unwrap();
        let rec = Recording::new(Arc::new(cache));
        let t = rec.compile(&arena, f, Semantics::Ltl3).unwrap();
        let keys = rec.keys();
        assert_eq!(keys, vec![(trac_ltl::print(&arena, f), Semantics::Ltl3)]);
        let exported = export(&rec.inner, &keys);
        assert_eq!(exported.len(), 1);
        let other = Compiler::new();
        import(&other, &exported).unwrap();
        assert_eq!(other.len(), 1);
        // The imported table is used instead of compiling: same states and residuals.
        let u = other.compile(&arena, f, Semantics::Ltl3).unwrap();
        assert_eq!(u.state_count(), t.state_count());
        assert_eq!(u.to_json(), t.to_json());
        // An LTLf table is another key.
        assert!(export(&other, &[(keys[0].0.clone(), Semantics::Ltlf)]).is_empty());
    }

    #[test]
    fn a_corrupt_table_is_an_error_naming_its_formula() {
        let cache = Compiler::new();
        let err = import(
            &cache,
            &[ExportedTable {
                formula: "G a".into(),
                ltlf: false,
                json: "{\"version\": 999}".into(),
            }],
        )
        .unwrap_err();
        assert!(err.to_string().contains("`G a`"), "{err}");
        assert!(cache.is_empty());
    }
}
