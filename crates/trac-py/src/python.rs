//! The native module `trac._trac` (pyo3, abi3): specs, a streaming monitor, formula checks and
//! audits returning the JSON Lines records as Python dicts. The Python package `trac`
//! (`python/trac/__init__.py`) wraps it: records become objects with attributes, tables become
//! pandas / pyarrow tables.
//!
//! Errors are Python exceptions: `TracError`, and its subclasses `FormulaError` (a formula that
//! does not parse: the message is the caret rendering of the CLI), `SpecError` (a spec that does
//! not load or check: `file:line:column: message` per problem) and `TraceError` (a bad trace or
//! event: `file:line:column: message`, with attributes `file`, `line`, `column`).

use crate::session::{self, AuditFailure, AuditOutput, FileAudit};
use crate::tables::{self, ExportedTable, Recording};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyList, PySet, PyString, PyTuple};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use trac_agent::supervisor::{Check as SupCheck, Supervisor, SupervisorOptions};
use trac_compile::TableKey;
use trac_core::labels::LabelSet;
use trac_ltl::compiler::TableCompiler;
use trac_runtime::audit::{AuditOptions, AuditPlan, Auditor, VerdictRecord};
use trac_runtime::engine::Engine;
use trac_runtime::trace::{Event, TraceError as RtTraceError};
use trac_spec::spec::{CheckedSpec, Semantics, Spec};

create_exception!(
    trac,
    TracError,
    PyException,
    "Base class of every error raised by trac."
);
create_exception!(
    trac,
    FormulaError,
    TracError,
    "A formula that does not parse or cannot be monitored; the message shows the formula with a caret under the error."
);
create_exception!(
    trac,
    SpecError,
    TracError,
    "A spec that does not load or check: one `file:line:column: message` line per problem."
);
create_exception!(
    trac,
    TraceError,
    TracError,
    "A trace or event that cannot be read: `file:line:column: message` (attributes file, line, column)."
);

fn trace_err(py: Python<'_>, e: &RtTraceError) -> PyErr {
    let err = TraceError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("file", &e.file);
    let _ = v.setattr("line", e.line);
    let _ = v.setattr("column", e.column);
    err
}

fn failure_err(f: AuditFailure) -> PyErr {
    match f {
        AuditFailure::Spec(e) => SpecError::new_err(e.to_string()),
        AuditFailure::Mismatch(e) => TracError::new_err(e.to_string()),
    }
}

/// Converts a JSON value to the Python object `json.loads` would give.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_u64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

fn records_to_py<'py>(py: Python<'py>, records: &[Value]) -> PyResult<Bound<'py, PyList>> {
    let items = records
        .iter()
        .map(|r| to_py(py, r))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// The engine named `name`, with the process-wide table cache for the engines that compile.
fn engine(name: &str) -> PyResult<(Engine, Option<Arc<dyn TableCompiler>>)> {
    let cache: Arc<dyn TableCompiler> = tables::global();
    Ok(match name {
        "compiled" => (Engine::Compiled, Some(cache)),
        "progression" => (Engine::Progression, None),
        // Complete progression asks the compiler for its verdict oracle.
        "complete-progression" => (Engine::CompleteProgression, Some(cache)),
        "cross-check" => (Engine::CrossCheck, Some(cache)),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown engine `{other}`: use compiled, progression, complete-progression or cross-check"
            )))
        }
    })
}

fn options(engine_name: &str, reset: bool) -> PyResult<AuditOptions> {
    let (engine, compiler) = engine(engine_name)?;
    Ok(AuditOptions {
        reset,
        engine,
        compiler,
    })
}

/// Where a spec came from: enough to rebuild it in another process.
#[derive(Clone, Debug)]
enum Origin {
    Ron { file: String, text: String },
    Formulas(Vec<(String, String)>),
}

/// A checked spec: propositions with labeling rules, and properties (LTL formulas).
///
/// Build with `Spec.from_file(path)`, `Spec.from_str(ron, name)` or
/// `Spec.from_formulas(["G(a -> X b)", ...])` (ids `f1`, `f2`, ... as `trac audit --formula`).
/// Specs pickle with their compiled monitor tables (`Spec.compile()`), so the workers of a
/// distributed audit do not compile again.
#[pyclass(module = "trac", name = "Spec", frozen)]
pub struct PySpec {
    origin: Origin,
    checked: CheckedSpec,
    /// Tables to import into a process's cache before first use (from a pickled spec).
    tables: Vec<ExportedTable>,
    /// The tables `compile()` found this spec uses.
    compiled_keys: Mutex<Vec<TableKey>>,
    /// Unique in the process: keys the fresh auditors kept per thread ([`file_audit`]).
    uid: u64,
}

impl PySpec {
    fn build(origin: Origin) -> PyResult<PySpec> {
        let checked = match &origin {
            Origin::Ron { file, text } => Spec::from_str(text, file)
                .and_then(|s| s.check())
                .map_err(|e| SpecError::new_err(e.to_string()))?,
            Origin::Formulas(fs) => {
                let mut arena = trac_ltl::Arena::new();
                for (id, f) in fs {
                    if let Err(e) = trac_ltl::parse_property(&mut arena, f) {
                        return Err(FormulaError::new_err(format!("{id}: {}", e.render(f))));
                    }
                }
                Spec::from_formulas("formulas", fs.iter().map(|(i, f)| (i.as_str(), f.as_str())))
                    .check()
                    .map_err(|e| SpecError::new_err(e.to_string()))?
            }
        };
        // A spec that cannot be monitored (a past-time operator over a future one, a labeling
        // rule that does not build) is refused now rather than at its first audit.
        let plain = AuditOptions {
            engine: Engine::Progression,
            ..AuditOptions::default()
        };
        Auditor::new(std::slice::from_ref(&checked), &plain)
            .map_err(|e| SpecError::new_err(e.to_string()))?;
        Ok(PySpec {
            origin,
            checked,
            tables: Vec::new(),
            compiled_keys: Mutex::new(Vec::new()),
            uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
        })
    }

    fn state(&self, tables: &[ExportedTable]) -> String {
        let origin = match &self.origin {
            Origin::Ron { file, text } => serde_json::json!({"file": file, "text": text}),
            Origin::Formulas(fs) => serde_json::json!({"formulas": fs}),
        };
        let tables: Vec<Value> = tables
            .iter()
            .map(|t| serde_json::json!({"formula": t.formula, "ltlf": t.ltlf, "table": t.json}))
            .collect();
        serde_json::json!({"version": 1, "origin": origin, "tables": tables}).to_string()
    }

    /// Imports the pickled tables into this process's cache (once per process is enough; later
    /// imports keep the tables already there).
    fn import_tables(&self) -> PyResult<()> {
        if !self.tables.is_empty() {
            tables::import(&tables::global(), &self.tables)
                .map_err(|e| SpecError::new_err(e.to_string()))?;
        }
        Ok(())
    }
}

#[pymethods]
impl PySpec {
    /// Reads and checks a spec file (RON). Raises `SpecError` (`file:line:column: message`).
    #[staticmethod]
    fn from_file(path: PathBuf) -> PyResult<PySpec> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| SpecError::new_err(format!("{file}: cannot read spec: {e}")))?;
        PySpec::build(Origin::Ron { file, text })
    }

    /// Reads and checks a spec from RON text; `name` names it in errors.
    #[staticmethod]
    #[pyo3(name = "from_str", signature = (ron, name = "<string>"))]
    fn from_ron(ron: &str, name: &str) -> PyResult<PySpec> {
        PySpec::build(Origin::Ron {
            file: name.to_string(),
            text: ron.to_string(),
        })
    }

    /// A spec of ad-hoc properties over the labels given in the trace: a list of formulas
    /// (ids `f1`, `f2`, ... as `trac audit --formula`) or a dict `{id: formula}`. Raises
    /// `FormulaError` with the caret rendering of the first formula that does not parse.
    #[staticmethod]
    fn from_formulas(formulas: &Bound<'_, PyAny>) -> PyResult<PySpec> {
        let mut fs = Vec::new();
        if let Ok(d) = formulas.cast::<PyDict>() {
            for (k, v) in d.iter() {
                fs.push((k.extract::<String>()?, v.extract::<String>()?));
            }
        } else if formulas.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "from_formulas takes a list of formulas or a dict {id: formula}, not one string",
            ));
        } else {
            for (i, f) in formulas.try_iter()?.enumerate() {
                fs.push((format!("f{}", i + 1), f?.extract::<String>()?));
            }
        }
        PySpec::build(Origin::Formulas(fs))
    }

    /// The spec's name.
    #[getter]
    fn name(&self) -> String {
        self.checked.spec.name.clone()
    }

    /// The spec's description.
    #[getter]
    fn description(&self) -> String {
        self.checked.spec.description.clone()
    }

    /// The declared atomic propositions (names; `take` for `take(item)`).
    #[getter]
    fn propositions(&self) -> Vec<String> {
        self.checked
            .spec
            .propositions
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// The properties: dicts with `id`, `description`, `formula` (normalized, Spot syntax),
    /// `english`, `semantics` (`ltl3` / `ltlf`).
    #[getter]
    fn properties<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let plain = AuditOptions {
            engine: Engine::Progression,
            ..AuditOptions::default()
        };
        let a = Auditor::new(std::slice::from_ref(&self.checked), &plain)
            .map_err(|e| SpecError::new_err(e.to_string()))?;
        let v = serde_json::to_value(a.properties()).expect("properties serialize");
        match to_py(py, &v)?.cast_into::<PyList>() {
            Ok(l) => Ok(l),
            Err(_) => Ok(PyList::empty(py)),
        }
    }

    /// Compiles every property's monitor table into this process's cache (the compiled engine
    /// otherwise compiles at first use) and returns how many tables the spec uses. Pickling a
    /// spec ships these tables along.
    fn compile(&self, py: Python<'_>) -> PyResult<usize> {
        self.import_tables()?;
        let rec = Arc::new(Recording::new(tables::global()));
        let opts = AuditOptions {
            compiler: Some(rec.clone() as Arc<dyn TableCompiler>),
            ..AuditOptions::default()
        };
        let checked = &self.checked;
        py.detach(|| Auditor::new(std::slice::from_ref(checked), &opts).map(|_| ()))
            .map_err(|e| SpecError::new_err(e.to_string()))?;
        let keys = rec.keys();
        let n = keys.len();
        *self.compiled_keys.lock().unwrap_or_else(|e| e.into_inner()) = keys;
        Ok(n)
    }

    /// Pickles as the spec's source and the compiled tables of its properties that this process
    /// holds (those of `compile()`, of audits run here, or shipped with this spec); pickling
    /// never compiles.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        self.import_tables()?;
        let mut keys: Vec<TableKey> = self
            .compiled_keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let more = self
            .checked
            .properties
            .iter()
            .map(|p| (trac_ltl::print(&p.arena, p.formula), p.decl.semantics))
            .chain(self.tables.iter().map(|t| {
                let sem = if t.ltlf {
                    Semantics::Ltlf
                } else {
                    Semantics::Ltl3
                };
                (t.formula.clone(), sem)
            }));
        for k in more {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        let tables = tables::export(&tables::global(), &keys);
        let ctor = py.get_type::<PySpec>().getattr("_from_state")?;
        Ok((ctor, (self.state(&tables),)))
    }

    /// Rebuilds a pickled spec (see `__reduce__`).
    #[staticmethod]
    fn _from_state(state: &str) -> PyResult<PySpec> {
        let v: Value = serde_json::from_str(state)
            .map_err(|e| SpecError::new_err(format!("pickled spec: {e}")))?;
        let origin = &v["origin"];
        let origin = if let Some(fs) = origin.get("formulas") {
            let fs: Vec<(String, String)> = serde_json::from_value(fs.clone())
                .map_err(|e| SpecError::new_err(format!("pickled spec: {e}")))?;
            Origin::Formulas(fs)
        } else {
            Origin::Ron {
                file: origin["file"].as_str().unwrap_or("<pickled>").to_string(),
                text: origin["text"].as_str().unwrap_or("").to_string(),
            }
        };
        let mut spec = PySpec::build(origin)?;
        if let Some(ts) = v["tables"].as_array() {
            spec.tables = ts
                .iter()
                .map(|t| ExportedTable {
                    formula: t["formula"].as_str().unwrap_or("").to_string(),
                    ltlf: t["ltlf"].as_bool().unwrap_or(false),
                    json: t["table"].as_str().unwrap_or("").to_string(),
                })
                .collect();
        }
        Ok(spec)
    }

    /// Number of compiled tables this spec carries from its pickle (0 for a spec built here).
    #[getter]
    fn shipped_tables(&self) -> usize {
        self.tables.len()
    }

    fn __repr__(&self) -> String {
        let ids: Vec<&str> = self
            .checked
            .properties
            .iter()
            .map(|p| p.decl.id.as_str())
            .collect();
        format!(
            "Spec(name={:?}, properties=[{}])",
            self.checked.spec.name,
            ids.join(", ")
        )
    }
}

static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// The specs given to an audit or monitor, with the ids of their `Spec` objects.
struct Specs {
    checked: Arc<[CheckedSpec]>,
    uids: Vec<u64>,
}

/// The checked specs of a `Spec` or a sequence of them, with their shipped tables imported.
fn specs_of(spec: &Bound<'_, PyAny>) -> PyResult<Specs> {
    let mut out = Vec::new();
    let mut uids = Vec::new();
    let bad = || PyTypeError::new_err("spec must be a trac.Spec or a sequence of trac.Spec");
    let items: Vec<Bound<'_, PyAny>> = if spec.cast::<PySpec>().is_ok() {
        vec![spec.clone()]
    } else {
        spec.try_iter()
            .map_err(|_| bad())?
            .collect::<PyResult<Vec<_>>>()?
    };
    let mut files = Vec::new();
    for item in items {
        let s = item.cast::<PySpec>().map_err(|_| bad())?;
        let s = s.get();
        s.import_tables()?;
        out.push(s.checked.clone());
        uids.push(s.uid);
        files.push(match &s.origin {
            Origin::Ron { file, .. } => Some(file.clone()),
            Origin::Formulas(_) => None,
        });
    }
    // The CLI's policy for several specs: shared ids namespaced, conflicting propositions
    // refused.
    if let Err(errors) = trac_runtime::audit::specs::combine(&mut out, &files) {
        let lines: Vec<String> = errors.iter().map(|e| format!("error: {e}")).collect();
        return Err(SpecError::new_err(lines.join("\n")));
    }
    if out.iter().all(|c| c.properties.is_empty()) {
        return Err(SpecError::new_err(
            "nothing to check: no spec given declares a property",
        ));
    }
    Ok(Specs {
        checked: out.into(),
        uids,
    })
}

type FreshKey = (Vec<u64>, Engine, bool);

thread_local! {
    /// Audit plans by (spec ids, engine, reset), per thread (plans are not `Send`): an audit of
    /// many short traces clones one instead of building it (labeling-rule regexes, table
    /// look-ups) for each. Specs are immutable, so an entry never goes stale.
    static FRESH: RefCell<HashMap<FreshKey, AuditPlan>> = RefCell::new(HashMap::new());
}

/// At most this many plans are kept per thread.
const MAX_FRESH: usize = 32;

/// The audit plan of `specs` under `opts`, cloned from the thread's cache. Needs no GIL (so it
/// can run in `Python::detach`, on the same thread).
fn plan_of(
    checked: &Arc<[CheckedSpec]>,
    uids: &[u64],
    opts: &AuditOptions,
) -> Result<AuditPlan, AuditFailure> {
    let key = (uids.to_vec(), opts.engine, opts.reset);
    if let Some(p) = FRESH.with(|f| f.borrow().get(&key).cloned()) {
        return Ok(p);
    }
    let p = AuditPlan::new(checked, opts)?;
    FRESH.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() >= MAX_FRESH {
            f.clear();
        }
        f.insert(key, p.clone());
    });
    Ok(p)
}

/// A file audit of `file` against `specs`, its plan cloned from the thread's cache.
fn file_audit(
    checked: &Arc<[CheckedSpec]>,
    uids: &[u64],
    opts: &AuditOptions,
    file: &str,
) -> Result<FileAudit, AuditFailure> {
    let plan = plan_of(checked, uids, opts)?;
    Ok(FileAudit::from_plan(plan, Arc::clone(checked), file))
}

/// One Python event as a trace event: a dict (a JSON Lines event, read by the JSON Lines
/// reader), a str (one line of a plain-text action log) or a list / tuple / set of label strings.
/// Also returns the dict fields that were ignored.
fn event_of(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    name: &str,
    index: usize,
) -> PyResult<Result<(Event, Vec<String>), RtTraceError>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(session::event_from_text(&s.to_cow()?, name, index).map(|e| (e, Vec::new())));
    }
    if obj.cast::<PyDict>().is_ok() {
        let json = py.import("json")?;
        let kwargs = PyDict::new(py);
        // Sets of labels become sorted lists.
        kwargs.set_item("default", py.import("builtins")?.getattr("sorted")?)?;
        kwargs.set_item("ensure_ascii", false)?;
        let text = match json.call_method("dumps", (obj,), Some(&kwargs)) {
            Ok(t) => t.extract::<String>()?,
            Err(e) => {
                return Ok(Err(RtTraceError {
                    file: name.to_string(),
                    line: index,
                    column: 0,
                    message: format!("event is not JSON: {}", e.value(py)),
                    session: None,
                }))
            }
        };
        return Ok(session::event_from_json(&text, name, index));
    }
    if obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>()
    {
        let mut labels = Vec::new();
        for l in obj.try_iter()? {
            let l = l?;
            match l.extract::<String>() {
                Ok(s) => {
                    // A malformed label would never hold: an error, as in a JSON Lines trace.
                    // Each value in its one written form (`take("knife")` is `take(knife)`).
                    match trac_core::names::canonical_label(&s) {
                        Ok(c) => labels.push(c.into_owned()),
                        Err(e) => {
                            return Ok(Err(RtTraceError {
                                file: name.to_string(),
                                line: index,
                                column: 0,
                                message: e.message,
                                session: None,
                            }))
                        }
                    }
                }
                Err(_) => {
                    return Ok(Err(RtTraceError {
                        file: name.to_string(),
                        line: index,
                        column: 0,
                        message: format!("a label must be a string, not {}", l.get_type().name()?),
                        session: None,
                    }))
                }
            }
        }
        if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
            labels.sort();
        }
        return Ok(Ok((session::event_from_labels(labels, index), Vec::new())));
    }
    Err(PyTypeError::new_err(format!(
        "an event is a dict (a JSON Lines event), a str (a line of an action log) or a list/set of labels, not {}",
        obj.get_type().name()?
    )))
}

/// The audit's outcome as a dict; `records` as a list of dicts, or with `jsonl` as the JSON Lines
/// text (one compact object a line, as the CLI writes it: cheaper to pickle and ship).
fn output_to_py<'py>(
    py: Python<'py>,
    out: &AuditOutput,
    jsonl: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if jsonl {
        let mut text = String::new();
        for r in &out.records {
            text.push_str(&r.to_string());
            text.push('\n');
        }
        d.set_item("records", text)?;
    } else {
        d.set_item("records", records_to_py(py, &out.records)?)?;
    }
    match &out.error {
        Some(e) => d.set_item(
            "error",
            (e.to_string(), e.file.clone(), e.line, e.column).into_pyobject(py)?,
        )?,
        None => d.set_item("error", py.None())?,
    }
    d.set_item("not_audited", out.not_audited.clone())?;
    d.set_item("violations", out.violations)?;
    d.set_item("unknown_fields", out.unknown_fields.clone())?;
    Ok(d)
}

/// Audits the trace file at `path` as `trac audit --format jsonl` does; returns a dict with
/// `records` (the JSON Lines objects), `error` (`(message, file, line, column)` or None),
/// `not_audited`, `violations`, `unknown_fields`; with `jsonl`, `records` is the JSON Lines
/// text instead. The GIL is released while auditing.
#[pyfunction]
#[pyo3(signature = (path, spec, engine = "compiled", reset = true, jsonl = false))]
fn audit_path<'py>(
    py: Python<'py>,
    path: PathBuf,
    spec: &Bound<'py, PyAny>,
    engine: &str,
    reset: bool,
    jsonl: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let specs = specs_of(spec)?;
    let opts = options(engine, reset)?;
    let (checked, uids) = (specs.checked, specs.uids);
    // The auditor is built (or cloned) and run on this thread without the GIL: auditors are
    // not `Send`, so they never leave the closure.
    let out = py
        .detach(|| {
            let plan = plan_of(&checked, &uids, &opts)?;
            session::run_path(plan, Arc::clone(&checked), &path)
        })
        .map_err(failure_err)?;
    output_to_py(py, &out, jsonl)
}

/// Audits events given in memory (an iterable of dicts, strs or label lists) as one trace named
/// `name` (split by `session` as the CLI does); returns as `audit_path`. Reading stops at the
/// first bad event, whose error is returned with the verdicts before it.
#[pyfunction]
#[pyo3(signature = (events, spec, name = "<events>", engine = "compiled", reset = true, jsonl = false))]
fn audit_events<'py>(
    py: Python<'py>,
    events: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyAny>,
    name: &str,
    engine: &str,
    reset: bool,
    jsonl: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let specs = specs_of(spec)?;
    let opts = options(engine, reset)?;
    let mut evs = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for (i, obj) in events.try_iter()?.enumerate() {
        // An item that is no event at all (a number, None) is a bad event like a malformed
        // one: the records before it are kept (`on_error="record"` returns them).
        let item = event_of(py, &obj?, name, i + 1).unwrap_or_else(|e| {
            Err(RtTraceError {
                file: name.to_string(),
                line: i + 1,
                column: 0,
                message: e.value(py).to_string(),
                session: None,
            })
        });
        match item {
            Ok((ev, fields)) => {
                for f in fields {
                    if !unknown.contains(&f) {
                        unknown.push(f);
                    }
                }
                evs.push(Ok(ev));
            }
            Err(e) => {
                // A bad event of a known session ends that session only (the driver skips
                // its later events); any other stops the trace.
                let stops = e.session.is_none();
                evs.push(Err(e));
                if stops {
                    break;
                }
            }
        }
    }
    let (checked, uids) = (specs.checked, specs.uids);
    let mut out = py
        .detach(|| {
            let audit = file_audit(&checked, &uids, &opts, name)?;
            session::run_events(audit, evs)
        })
        .map_err(failure_err)?;
    out.unknown_fields = unknown;
    output_to_py(py, &out, jsonl)
}

/// Parses and checks a formula as `trac check` does; returns a dict with `formula`
/// (normalized), `english`, `propositions`, `initial` (verdict before the first step), `states`,
/// `pending_states`, `decision_nodes` (of the minimized LTL3 monitor), `monitorability`, and
/// `compile_error` (None, or why the monitor could not be built). Raises `FormulaError`.
#[pyfunction]
fn check<'py>(py: Python<'py>, formula: &str) -> PyResult<Bound<'py, PyDict>> {
    let mut arena = trac_ltl::Arena::new();
    let prop = trac_ltl::parse_property(&mut arena, formula)
        .map_err(|e| FormulaError::new_err(e.render(formula)))?;
    trac_ltl::progress::validate(&arena, prop.body)
        .map_err(|e| FormulaError::new_err(format!("error: {e}")))?;
    trac_ltl::parser::check_vars_used(&arena, &prop, formula)
        .map_err(|e| FormulaError::new_err(e.render(formula)))?;
    let printed = trac_ltl::printer::print_with_quantifier(&arena, prop.var.as_deref(), prop.body);
    let english = trac_ltl::english::render(&arena, prop.body, &Default::default());
    let english = match &prop.var {
        Some(v) => format!("for every {v}, {english}"),
        None => english,
    };
    let atoms: Vec<String> = arena
        .atoms(prop.body)
        .into_iter()
        .map(|s| arena.sym_name(s).to_string())
        .collect();
    let d = PyDict::new(py);
    d.set_item("formula", printed)?;
    d.set_item("english", english)?;
    d.set_item("propositions", atoms)?;
    let body = prop.body;
    let compiled = py.detach(|| {
        let mut arena = arena;
        // Bounded as `trac check` is: a large formula gives up (a compile error, or an unknown
        // class) rather than holding the Python caller for minutes.
        let budget = trac_compile::DEFAULT_MAX_STATES;
        let opts = trac_compile::CompileOptions::default();
        trac_compile::compile_within(&mut arena, body, &opts, budget).map(|c| {
            let class = trac_compile::monitorability_text(&mut arena, body, &c.table, budget);
            (c, class)
        })
    });
    match compiled {
        Ok((c, class)) => {
            let t = &c.table;
            let initial = trac_core::table::Table::<Vec<u32>, String>::verdict(t.initial());
            d.set_item("initial", initial.as_str())?;
            d.set_item("states", t.state_count())?;
            d.set_item("pending_states", t.state_count() - 2)?;
            d.set_item("decision_nodes", t.node_count())?;
            d.set_item("monitorability", class)?;
            d.set_item("compile_error", py.None())?;
        }
        Err(e) => {
            for k in [
                "initial",
                "states",
                "pending_states",
                "decision_nodes",
                "monitorability",
            ] {
                d.set_item(k, py.None())?;
            }
            d.set_item("compile_error", e.to_string())?;
        }
    }
    Ok(d)
}

/// A streaming monitor of one trace: events in, verdict records (dicts) out.
// `unsendable`: monitors hold the satisfiability checker's `Rc` caches (complete progression),
// so a monitor stays on the thread that made it (Python raises if another thread uses it).
#[pyclass(module = "trac._trac", name = "NativeMonitor", unsendable)]
pub struct PyMonitor {
    specs: Specs,
    opts: AuditOptions,
    name: String,
    audit: Option<FileAudit>,
    /// The end records, once `end` was called.
    ended: Option<Vec<Value>>,
    index: usize,
    /// Fields and labels already warned about (each once per monitor).
    warned: Vec<String>,
    /// Warnings of the last steps, not yet taken by `take_warnings`.
    warnings: Vec<String>,
}

impl PyMonitor {
    fn fresh(&self) -> PyResult<FileAudit> {
        file_audit(
            &self.specs.checked,
            &self.specs.uids,
            &self.opts,
            &self.name,
        )
        .map_err(failure_err)
    }
}

impl PyMonitor {
    /// Queues the warnings event `ev` (with ignored dict fields `fields`) gives, as `trac.audit`
    /// and the CLI give them: ignored fields, and labels that match no proposition of the specs
    /// (the coverage check's wording), each once per monitor. O(labels × propositions).
    fn note_warnings(&mut self, ev: &Event, fields: Vec<String>) {
        let new: Vec<String> = fields
            .into_iter()
            .filter(|f| !self.warned.contains(f))
            .collect();
        if !new.is_empty() {
            self.warnings.push(format!(
                "{}: event field(s) ignored: {} (trac reads {})",
                self.name,
                new.join(", "),
                trac_runtime::trace::KNOWN_FIELDS.join(", ")
            ));
            self.warned.extend(new);
        }
        let mut cov = trac_runtime::audit::Coverage {
            with_labels: 1,
            ..Default::default()
        };
        for l in ev.labels.iter().flatten() {
            let key = format!("label {l}");
            if !self.warned.contains(&key) {
                self.warned.push(key);
                cov.labels_seen.insert(l.clone());
            }
        }
        if !cov.labels_seen.is_empty() {
            self.warnings
                .extend(cov.label_warnings(&self.name, &self.specs.checked, false));
        }
    }
}

#[pymethods]
impl PyMonitor {
    #[new]
    #[pyo3(signature = (spec, engine = "compiled", reset = true, name = "<monitor>"))]
    fn new(spec: &Bound<'_, PyAny>, engine: &str, reset: bool, name: &str) -> PyResult<Self> {
        let mut m = PyMonitor {
            specs: specs_of(spec)?,
            opts: options(engine, reset)?,
            name: name.to_string(),
            audit: None,
            ended: None,
            index: 0,
            warned: Vec::new(),
            warnings: Vec::new(),
        };
        let py_audit = m.fresh()?;
        m.audit = Some(py_audit);
        Ok(m)
    }

    /// Reads one event; returns the verdict records reached at this step (the step-0 verdicts
    /// come with the first step). Raises `TraceError` for a bad event (the monitor is then
    /// unchanged), `TracError` after `end()` or at a cross-check mismatch.
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        if self.ended.is_some() {
            return Err(TracError::new_err(
                "the monitor's trace has ended (end() was called): call reset() to start a new trace",
            ));
        }
        let (mut ev, fields) = match event_of(py, event, &self.name, self.index + 1)? {
            Ok(e) => e,
            Err(e) => return Err(trace_err(py, &e)),
        };
        self.note_warnings(&ev, fields);
        // One monitor is one trace: a `session` field does not split it.
        ev.session = None;
        self.index += 1;
        let audit = self.audit.as_mut().expect("a monitor always has an audit");
        audit.step(&ev).map_err(failure_err)?;
        records_to_py(py, &audit.take_records())
    }

    /// The warnings of the steps read since the last call (ignored event fields, labels that
    /// match no proposition), each once per monitor; `Monitor.step` issues them as Python
    /// warnings.
    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The residual formula of every property now: `{id: residual}`, and for a parametric
    /// property one entry per value seen, `{"id[value]": residual}`.
    fn residuals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let audit = self.audit.as_ref().expect("a monitor always has an audit");
        for (_, id, value, residual) in audit.residuals() {
            match value {
                Some(v) => d.set_item(format!("{id}[{v}]"), residual)?,
                None => d.set_item(id, residual)?,
            }
        }
        if d.is_empty() && self.index == 0 {
            // No step yet: every property is at its formula.
            let plain = AuditOptions {
                engine: Engine::Progression,
                ..AuditOptions::default()
            };
            let a = Auditor::new(&self.specs.checked, &plain)
                .map_err(|e| SpecError::new_err(e.to_string()))?;
            for e in a.finish() {
                for i in e.instances {
                    match i.value {
                        Some(v) => d.set_item(format!("{}[{v}]", e.property), i.residual)?,
                        None => d.set_item(&e.property, i.residual)?,
                    }
                }
            }
        }
        Ok(d)
    }

    /// Ends the trace: returns the end-of-trace verdicts (`ltlf` properties) and one end record
    /// per property, as `audit` does; calling it again returns the same records.
    fn end<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.ended.is_none() {
            let mut audit = self.audit.take().expect("a monitor always has an audit");
            let mut records = audit.take_records();
            let rest = self.fresh()?;
            records.extend(audit.finish(None).records);
            self.audit = Some(rest);
            self.ended = Some(records);
        }
        records_to_py(py, self.ended.as_deref().unwrap_or(&[]))
    }

    /// Starts a new trace: every property back at its formula, step count 0.
    fn reset(&mut self) -> PyResult<()> {
        self.audit = Some(self.fresh()?);
        self.ended = None;
        self.index = 0;
        Ok(())
    }

    /// Steps read since the last reset.
    #[getter]
    fn steps(&self) -> usize {
        self.index
    }

    /// The trace name used in records.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }
}

/// The supervisor of TRAC_P+I for an agent loop in Python: check a candidate action (nothing
/// committed), commit the step that happened, look ahead, residuals in English. Wraps
/// `trac_agent::supervisor::Supervisor` (the one `trac run` and `trac gateway` use), whose run
/// is one session of the audit driver, so its verdicts are those `trac audit` gives the same
/// events. Records are the JSON Lines verdict objects, trace `name` (`name#session` with a
/// session).
// `unsendable`: the supervisor's auditors are not `Send`.
#[pyclass(module = "trac._trac", name = "NativeSupervisor", unsendable)]
pub struct PySupervisor {
    sup: Supervisor,
    trace: String,
    /// Whether `end_of_run` was called: the run's session is closed.
    ended: bool,
}

impl PySupervisor {
    fn records<'py>(&self, py: Python<'py>, rs: &[VerdictRecord]) -> PyResult<Bound<'py, PyList>> {
        let v: Vec<Value> = rs
            .iter()
            .map(|r| trac_runtime::audit::jsonl::verdict_record(&self.trace, r))
            .collect();
        records_to_py(py, &v)
    }

    fn check_to_py<'py>(&self, py: Python<'py>, c: &SupCheck) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("compliant", c.compliant())?;
        d.set_item("violated", c.violated.clone())?;
        d.set_item("records", self.records(py, &c.records)?)?;
        Ok(d)
    }

    /// The labels of `action`: the spec's rules on its text, plus `given` (checked as labels).
    fn labels(&self, action: &str, given: Option<Vec<String>>) -> PyResult<LabelSet> {
        let mut canonical = Vec::new();
        for l in given.iter().flatten() {
            let c = trac_core::names::canonical_label(l)
                .map_err(|e| TraceError::new_err(format!("label `{l}`: {}", e.message)))?;
            canonical.push(c.into_owned());
        }
        Ok(self.sup.label(action, given.map(|_| canonical)))
    }

    /// Property `which` (its 0-based index, or its id) as an index.
    fn index(&self, which: &Bound<'_, PyAny>) -> PyResult<usize> {
        let props = self.sup.properties();
        if let Ok(id) = which.extract::<String>() {
            return props.iter().position(|p| p.id == id).ok_or_else(|| {
                let ids: Vec<&str> = props.iter().map(|p| p.id.as_str()).collect();
                TracError::new_err(format!(
                    "no property `{id}`: the properties are {}",
                    ids.join(", ")
                ))
            });
        }
        if which.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(
                "a property is its index (int) or its id (str)",
            ));
        }
        match which.extract::<i64>() {
            Ok(i) if i >= 0 && (i as u64) < props.len() as u64 => Ok(i as usize),
            Ok(i) => Err(TracError::new_err(format!(
                "no property {i}: indices go from 0 to {} ({} properties)",
                props.len().saturating_sub(1),
                props.len()
            ))),
            Err(_) => Err(PyTypeError::new_err(
                "a property is its index (int) or its id (str)",
            )),
        }
    }

    fn event(&self, py: Python<'_>, event: &Bound<'_, PyAny>) -> PyResult<Event> {
        match event_of(py, event, &self.trace, self.sup.steps() + 1)? {
            Ok((ev, _fields)) => Ok(ev),
            Err(e) => Err(trace_err(py, &e)),
        }
    }

    /// Refuses a step or a check after the end of the run (whose monitors are gone: a check
    /// would see no verdict and call any action compliant).
    fn running(&self) -> PyResult<()> {
        if self.ended {
            return Err(TracError::new_err(
                "the run has ended (end_of_run() was called): make a new Supervisor for the next run",
            ));
        }
        Ok(())
    }

    fn failed(&self) -> PyResult<()> {
        match self.sup.failure() {
            Some(f) => Err(TracError::new_err(f.to_string())),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl PySupervisor {
    #[new]
    #[pyo3(signature = (spec, reset = true, session = None, name = "<supervisor>"))]
    fn new(
        spec: &Bound<'_, PyAny>,
        reset: bool,
        session: Option<String>,
        name: &str,
    ) -> PyResult<Self> {
        let specs = specs_of(spec)?;
        let trace = match &session {
            Some(s) => format!("{name}#{s}"),
            None => name.to_string(),
        };
        let opts = SupervisorOptions { reset, session };
        let sup = Supervisor::new(&specs.checked, &opts)
            .map_err(|e| SpecError::new_err(e.to_string()))?;
        Ok(PySupervisor {
            sup,
            trace,
            ended: false,
        })
    }

    /// The verdicts decided before the first step (once; later calls give none).
    fn initial<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rs = self.sup.initial();
        self.records(py, &rs)
    }

    /// The labels of `action` (the spec's rules on its text, plus `given`), sorted.
    #[pyo3(signature = (action, given = None))]
    fn label(&self, action: &str, given: Option<Vec<String>>) -> PyResult<Vec<String>> {
        let mut l: Vec<String> = self
            .labels(action, given)?
            .iter()
            .map(|s| s.to_string())
            .collect();
        l.sort();
        Ok(l)
    }

    /// What `action` (with the extra `labels`) would do now; nothing is committed.
    #[pyo3(signature = (action, labels = None))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        action: &str,
        labels: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.running()?;
        let labels = self.labels(action, labels)?;
        let c = self.sup.check(action, &labels);
        self.check_to_py(py, &c)
    }

    /// The step happened: returns its verdicts.
    #[pyo3(signature = (action, input = None, labels = None))]
    fn commit<'py>(
        &mut self,
        py: Python<'py>,
        action: &str,
        input: Option<&str>,
        labels: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.running()?;
        let labels = self.labels(action, labels)?;
        let rs = self.sup.commit(action, input, &labels);
        self.failed()?;
        self.records(py, &rs)
    }

    /// What trace event `event` would do now; nothing is committed.
    fn check_event<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.running()?;
        let ev = self.event(py, event)?;
        let c = self.sup.check_event(&ev);
        self.check_to_py(py, &c)
    }

    /// Trace event `event` happened: returns its verdicts.
    fn commit_event<'py>(
        &mut self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.running()?;
        let ev = self.event(py, event)?;
        let rs = self.sup.commit_event(&ev);
        self.failed()?;
        self.records(py, &rs)
    }

    /// The residual formula(s) of a property (index or id), Spot syntax.
    fn residual(&self, which: &Bound<'_, PyAny>) -> PyResult<String> {
        let i = self.index(which)?;
        Ok(self.sup.residual(i))
    }

    /// The residual obligation of a property (index or id) in plain English.
    fn residual_english(&self, which: &Bound<'_, PyAny>) -> PyResult<String> {
        let i = self.index(which)?;
        Ok(self.sup.residual_english(i))
    }

    /// The exact look-ahead of every property within `k` steps, given the next step's known
    /// labels.
    #[pyo3(signature = (k, known = None))]
    fn exact<'py>(
        &self,
        py: Python<'py>,
        k: u32,
        known: Option<HashMap<String, bool>>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.running()?;
        let known = known.unwrap_or_default();
        let out = self.sup.exact(k, &|l: &str| known.get(l).copied());
        let v = serde_json::to_value(&out)
            .map_err(|e| TracError::new_err(format!("look-ahead: {e}")))?;
        match to_py(py, &v)?.cast_into::<PyList>() {
            Ok(l) => Ok(l),
            Err(_) => Ok(PyList::empty(py)),
        }
    }

    /// The verdicts decided by the end of the run; the run's session is closed (a second call
    /// gives none).
    fn end_of_run<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.ended {
            return Ok(PyList::empty(py));
        }
        self.ended = true;
        let rs = self.sup.end_of_run();
        self.records(py, &rs)
    }

    /// The monitored properties: dicts with `id`, `description`, `english`, `var`.
    #[getter]
    fn properties<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let v = serde_json::to_value(self.sup.properties())
            .map_err(|e| TracError::new_err(format!("properties: {e}")))?;
        match to_py(py, &v)?.cast_into::<PyList>() {
            Ok(l) => Ok(l),
            Err(_) => Ok(PyList::empty(py)),
        }
    }

    /// Steps committed so far.
    #[getter]
    fn steps(&self) -> usize {
        self.sup.steps()
    }

    /// The trace name in records.
    #[getter]
    fn name(&self) -> String {
        self.trace.clone()
    }

    /// The run's session, if any.
    #[getter]
    fn session(&self) -> Option<String> {
        self.sup.session().map(str::to_string)
    }
}

/// The native module `trac._trac`.
#[pymodule]
fn _trac(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PySpec>()?;
    m.add_class::<PyMonitor>()?;
    m.add_class::<PySupervisor>()?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(audit_path, m)?)?;
    m.add_function(wrap_pyfunction!(audit_events, m)?)?;
    m.add("TracError", py.get_type::<TracError>())?;
    m.add("FormulaError", py.get_type::<FormulaError>())?;
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
