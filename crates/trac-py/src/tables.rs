//! A per-process cache of compiled monitor tables, and its export / import.
//!
//! A distributed audit is a map over sessions with the compiled tables shipped as data: the
//! client compiles each property once ([`TableCache::compile`] through an
//! [`trac_runtime::audit::Auditor`]), exports the tables the spec used ([`Recording`],
//! [`TableCache::export`]) into the pickled spec, and each worker process imports them
//! ([`TableCache::import`]) instead of compiling again. Tables are checked on load
//! ([`Table::from_json`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use trac_compile::{compile, CompileOptions, Minimize};
use trac_core::table::Table;
use trac_ltl::compiler::{CompileError, TableCompiler, VerdictOracle};
use trac_ltl::formula::{Arena, Formula};
use trac_spec::spec::Semantics;

/// The key of a table: the formula printed in Spot syntax, and the verdict semantics.
pub type TableKey = (String, Semantics);

/// Compiled tables by formula text and semantics; compiles (language-minimized, as
/// `trac_compile::Compiler`) on a miss. Thread-safe.
#[derive(Debug, Default)]
pub struct TableCache {
    tables: Mutex<HashMap<TableKey, Arc<Table>>>,
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

impl TableCache {
    /// The process-wide cache, shared by every spec, monitor and audit of the Python package.
    pub fn global() -> Arc<TableCache> {
        static GLOBAL: OnceLock<Arc<TableCache>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Arc::new(TableCache::default()))
            .clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TableKey, Arc<Table>>> {
        // A panic under the lock cannot leave the map half-updated (one insert), so a poisoned
        // lock is still usable.
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of tables held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no table is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tables of `keys` that are held, as JSON (keys not held are skipped).
    pub fn export(&self, keys: &[TableKey]) -> Vec<ExportedTable> {
        let map = self.lock();
        keys.iter()
            .filter_map(|k| {
                map.get(k).map(|t| ExportedTable {
                    formula: k.0.clone(),
                    ltlf: k.1 == Semantics::Ltlf,
                    json: t.to_json(),
                })
            })
            .collect()
    }

    /// Adds exported tables (a table already held is kept). O(size of the tables).
    ///
    /// # Errors
    /// A table that does not load (`Table::from_json`), with its formula.
    pub fn import(&self, tables: &[ExportedTable]) -> Result<(), ImportError> {
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
        let mut map = self.lock();
        for (k, t) in loaded {
            map.entry(k).or_insert(t);
        }
        Ok(())
    }
}

impl TableCompiler for TableCache {
    fn compile(
        &self,
        arena: &Arena,
        formula: Formula,
        semantics: Semantics,
    ) -> Result<Arc<Table>, CompileError> {
        let key = (trac_ltl::print(arena, formula), semantics);
        if let Some(t) = self.lock().get(&key) {
            return Ok(t.clone());
        }
        // Compiled outside the lock: another thread may compile the same table meanwhile; the
        // first one inserted wins, and both are the same table.
        let mut arena = arena.clone();
        let opts = CompileOptions {
            semantics,
            minimize: Minimize::Language,
        };
        let c = compile(&mut arena, formula, &opts).map_err(CompileError::new)?;
        Ok(self.lock().entry(key).or_insert(Arc::new(c.table)).clone())
    }

    /// Complete progression's verdict oracle: the compiler's satisfiability checker.
    fn oracle(&self) -> Option<&dyn VerdictOracle> {
        Some(&trac_compile::SatOracle)
    }
}

/// A compiler that records the keys of the tables asked for (to export those a spec uses).
#[derive(Debug)]
pub struct Recording {
    inner: Arc<TableCache>,
    keys: Mutex<Vec<TableKey>>,
}

impl Recording {
    /// Records the tables asked of `inner`.
    pub fn new(inner: Arc<TableCache>) -> Recording {
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
        let cache = TableCache::default();
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, "G(a -> X b)").unwrap();
        let rec = Recording::new(Arc::new(cache));
        let t = rec.compile(&arena, f, Semantics::Ltl3).unwrap();
        let keys = rec.keys();
        assert_eq!(keys, vec![(trac_ltl::print(&arena, f), Semantics::Ltl3)]);
        let exported = rec.inner.export(&keys);
        assert_eq!(exported.len(), 1);
        let other = TableCache::default();
        other.import(&exported).unwrap();
        assert_eq!(other.len(), 1);
        // The imported table is used instead of compiling: same states and residuals.
        let u = other.compile(&arena, f, Semantics::Ltl3).unwrap();
        assert_eq!(u.state_count(), t.state_count());
        assert_eq!(u.to_json(), t.to_json());
        // An LTLf table is another key.
        assert!(other
            .export(&[(keys[0].0.clone(), Semantics::Ltlf)])
            .is_empty());
    }

    #[test]
    fn a_corrupt_table_is_an_error_naming_its_formula() {
        let cache = TableCache::default();
        let err = cache
            .import(&[ExportedTable {
                formula: "G a".into(),
                ltlf: false,
                json: "{\"version\": 999}".into(),
            }])
            .unwrap_err();
        assert!(err.to_string().contains("`G a`"), "{err}");
        assert!(cache.is_empty());
    }
}
