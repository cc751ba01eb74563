//! Macro-generated (`trac_monitor!`), xtask-generated (`trac_generated::*`) and runtime-compiled
//! (`trac_compile::compile` + `TableMonitor` / `ParamTableMonitor`) monitors agree step by step
//! (verdicts reached, current verdicts, residuals, LTLf verdicts, parametric instances), and
//! agree with the audit loop (complete progression, an independent implementation) on the
//! verdicts it reports:
//! - on every log of `../shared/data/paper-traces/` (ignored when that folder is missing
//!   outside CI: `cfg(no_shared_logs)`; a failure under `CI=true`) and on `examples/traces/`;
//! - on a data-driven verdict suite (formula, trace, expected verdict after each step), with
//!   inline `trac_monitor!` declarations.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use trac_core::generated::{ParamTableMonitor, ParamTupleMonitor};
use trac_core::labels::{LabelSet, StepInput};
use trac_core::table::{Table, TableMonitor};
use trac_runtime::audit::{AuditOptions, Auditor};
use trac_runtime::{Monitor, ResetPolicy, Verdict};
use trac_spec::spec::{CheckedSpec, Spec};

mod by_macro {
    trac_macros::trac_monitor!(pub struct Textworld from "../../examples/specs/textworld.ron");
    trac_macros::trac_monitor!(pub struct Scienceworld from "../../examples/specs/scienceworld.ron");
    trac_macros::trac_monitor!(pub struct Trucks from "../../examples/specs/trucks.ron");
    trac_macros::trac_monitor!(pub struct AgentRules from "../../examples/specs/agent-rules.ron");
    trac_macros::trac_monitor!(pub struct AgentTools from "../../examples/specs/agent-tools.ron");
}

/// What a monitor says after one step.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    /// The verdict reached by each property at this step.
    reached: Vec<Option<Verdict>>,
    /// `(property, value, verdict)` for every verdict reached.
    events: Vec<(String, Option<String>, Verdict)>,
    /// Current verdicts.
    current: Vec<Verdict>,
    /// Residual of each property (the template's for a parametric one).
    residuals: Vec<String>,
    /// LTLf verdicts.
    ltlf: Vec<Verdict>,
}

/// A generated monitor, typed or through labels.
trait Generated {
    fn step_typed(&mut self, labels: &LabelSet) -> Record;
    fn step_labels(&mut self, input: &StepInput<'_>) -> Record;
}

macro_rules! generated {
    ($t:ty, $val:ty) => {
        impl Generated for $t {
            fn step_typed(&mut self, labels: &LabelSet) -> Record {
                let v = self.step(&<$val>::from_labels(labels));
                assert_eq!(v, self.last_verdicts());
                record(
                    v.to_array().to_vec(),
                    |f| self.for_each_event(f),
                    &self.verdicts(),
                    &self.residuals(),
                    &self.ltlf(),
                )
            }
            fn step_labels(&mut self, input: &StepInput<'_>) -> Record {
                let v = <$t>::step_labels(self, input);
                record(
                    v.to_array().to_vec(),
                    |f| self.for_each_event(f),
                    &self.verdicts(),
                    &self.residuals(),
                    &self.ltlf(),
                )
            }
        }
    };
}

fn record(
    reached: Vec<Option<Verdict>>,
    each: impl FnOnce(&mut dyn FnMut(&'static str, Option<&str>, Verdict)),
    current: &[Verdict],
    residuals: &[&'static str],
    ltlf: &[Verdict],
) -> Record {
    let mut events = Vec::new();
    each(&mut |id, value, v| events.push((id.to_string(), value.map(str::to_string), v)));
    Record {
        reached,
        events,
        current: current.to_vec(),
        residuals: residuals.iter().map(|s| s.to_string()).collect(),
        ltlf: ltlf.to_vec(),
    }
}

mod xt {
    pub use trac_generated::agent_rules::{AgentRules, AgentRulesValuation};
    pub use trac_generated::agent_tools::{AgentTools, AgentToolsValuation};
    pub use trac_generated::scienceworld::{Scienceworld, ScienceworldValuation};
    pub use trac_generated::textworld::{Textworld, TextworldValuation};
    pub use trac_generated::trucks::{Trucks, TrucksValuation};
}
generated!(by_macro::Textworld, by_macro::TextworldValuation);
generated!(by_macro::Scienceworld, by_macro::ScienceworldValuation);
generated!(by_macro::Trucks, by_macro::TrucksValuation);
generated!(xt::Textworld, xt::TextworldValuation);
generated!(xt::Scienceworld, xt::ScienceworldValuation);
generated!(xt::Trucks, xt::TrucksValuation);
generated!(by_macro::AgentRules, by_macro::AgentRulesValuation);
generated!(xt::AgentRules, xt::AgentRulesValuation);
generated!(by_macro::AgentTools, by_macro::AgentToolsValuation);
generated!(xt::AgentTools, xt::AgentToolsValuation);

/// The runtime-compiled monitors of a spec's properties.
#[derive(Clone)]
enum Runtime {
    Plain(String, TableMonitor),
    Param(String, ParamTableMonitor),
    /// Several variables (`forall to, u: ..`).
    Tuple(String, ParamTupleMonitor),
}

fn runtime(spec: &CheckedSpec, reset: bool) -> Vec<Runtime> {
    spec.properties
        .iter()
        .map(|p| {
            let mut arena = p.arena.clone();
            let opts = trac_compile::CompileOptions {
                semantics: p.decl.semantics,
                minimize: trac_compile::Minimize::Language,
            };
            let table: Arc<Table> = Arc::new(
                trac_compile::compile(&mut arena, p.formula, &opts)
                    .unwrap_or_else(|e| panic!("{}: {e}", p.decl.id))
                    .table,
            );
            let policy = ResetPolicy {
                on_violation: reset,
                on_satisfaction: reset && p.decl.reset_on_satisfaction,
            };
            let id = p.decl.id.clone();
            match &p.var {
                None => Runtime::Plain(id, TableMonitor::new(table, policy)),
                Some(v) if v.contains(", ") => {
                    let vars: Vec<&str> = v.split(", ").collect();
                    Runtime::Tuple(id, ParamTupleMonitor::new(table, &vars, policy))
                }
                Some(v) => {
                    let specials = trac_core::generated::special_values(table.prop_names(), v)
                        .into_iter()
                        .map(|c| {
                            let g = arena.instantiate(p.formula, v, &c);
                            let t = trac_compile::compile(&mut arena, g, &opts).unwrap().table;
                            (c, Arc::new(t))
                        })
                        .collect();
                    Runtime::Param(
                        id,
                        ParamTableMonitor::with_specials(table, v, policy, specials),
                    )
                }
            }
        })
        .collect()
}

fn step_runtime(ms: &mut [Runtime], input: &StepInput<'_>) -> Record {
    let mut r = Record {
        reached: Vec::new(),
        events: Vec::new(),
        current: Vec::new(),
        residuals: Vec::new(),
        ltlf: Vec::new(),
    };
    for m in ms {
        match m {
            Runtime::Plain(id, m) => {
                let v = m.step(input);
                r.reached.push(v);
                if let Some(v) = v {
                    r.events.push((id.clone(), None, v));
                }
                r.current.push(m.verdict());
                r.residuals.push(m.table().residual(m.state()).to_string());
                r.ltlf.push(m.ltlf());
            }
            Runtime::Param(id, m) => {
                let got = m.step(input);
                r.reached.push(m.reached());
                for (value, v) in got {
                    r.events.push((id.clone(), Some(value), v));
                }
                r.current.push(m.verdict());
                let t = m.template();
                r.residuals.push(t.table().residual(t.state()).to_string());
                r.ltlf.push(m.ltlf());
            }
            Runtime::Tuple(id, m) => {
                r.reached.push(m.step(input));
                for (value, v) in m.events() {
                    r.events.push((id.clone(), Some(value.to_string()), v));
                }
                r.current.push(m.verdict());
                let t = m.template();
                r.residuals.push(t.table().residual(t.state()).to_string());
                r.ltlf.push(m.ltlf());
            }
        }
    }
    r
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load_spec(name: &str) -> CheckedSpec {
    let path = workspace().join(format!("examples/specs/{name}.ron"));
    Spec::from_path(&path)
        .and_then(|s| s.check())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The shared paper traces (always `Some`).
///
/// # Panics
/// When the directory is missing (its tests are ignored then, outside CI).
fn shared_dir() -> Option<PathBuf> {
    let dir = workspace().join("../shared/data/paper-traces");
    if dir.is_dir() {
        return Some(dir);
    }
    // Tests calling this are ignored (`cfg(no_shared_logs)`, build/needs.rs) when the logs
    // were missing at build time outside CI: here they are missing under CI=true, or removed since.
    panic!(
        "the shared paper traces are missing at {} (under CI=true they must be beside the repository)",
        dir.display()
    )
}

/// Runs every monitor over one trace and compares them at each step; returns the number of
/// steps and verdicts seen.
#[allow(clippy::too_many_arguments)]
fn agree_on_trace(
    spec: &CheckedSpec,
    fresh: &[Runtime],
    trace: &Path,
    reset: bool,
    macro_m: &mut dyn Generated,
    macro_l: &mut dyn Generated,
    xtask_m: &mut dyn Generated,
) -> (usize, usize) {
    let mut rt = fresh.to_vec();
    #[allow(clippy::needless_update)]
    let opts = AuditOptions {
        reset,
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let mut auditor = Auditor::new(std::slice::from_ref(spec), &opts).expect("auditor");
    // Derived atoms (`exists` quantifiers, patterns) are computed from the labels before any
    // monitor reads them, as the audit does; generated monitors take them as plain fields.
    let mut derived = trac_runtime::label::derived::DerivedAtoms::new(
        spec.properties
            .iter()
            .map(|p| (&p.arena, p.formula, p.var.as_deref())),
    )
    .expect("derived atoms");
    let name = trace.display().to_string();
    let (mut steps, mut verdicts) = (0, 0);
    for event in trac_runtime::trace::open(trace).expect("trace opens") {
        let event = event.unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut labels = auditor.label(&event);
        derived.extend(&mut labels);
        let audited: Vec<(String, Option<String>, Verdict)> = auditor
            .step(&event)
            .into_iter()
            .map(|r| (r.property, r.value, r.verdict))
            .collect();
        steps += 1;
        let input = StepInput {
            step: steps,
            text: event.text(),
            labels: &labels,
        };
        let want = step_runtime(&mut rt, &input);
        let at = || {
            format!(
                "{name}, step {steps} ({:?}), labels {:?}",
                event.text(),
                labels.sorted()
            )
        };
        assert_eq!(macro_m.step_typed(&labels), want, "macro, typed: {}", at());
        assert_eq!(macro_l.step_labels(&input), want, "macro, labels: {}", at());
        assert_eq!(xtask_m.step_typed(&labels), want, "xtask, typed: {}", at());
        assert_eq!(want.events, audited, "runtime vs audit: {}", at());
        verdicts += want.events.len();
    }
    (steps, verdicts)
}

fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Every trace under TRAC_R, and the first `plain` ones under plain TRAC too.
fn agree_all(name: &str, traces: &[PathBuf], plain: usize) -> (usize, usize) {
    let mut total = (0, 0);
    let spec = load_spec(name);
    for reset in [true, false] {
        let rt = runtime(&spec, reset);
        let n = if reset { traces.len() } else { plain };
        for t in traces.iter().take(n) {
            let spec = &spec;
            let (s, v) = match name {
                "textworld" => agree_on_trace(
                    spec,
                    &rt,
                    t,
                    reset,
                    &mut by_macro::Textworld::with_reset(reset),
                    &mut by_macro::Textworld::with_reset(reset),
                    &mut xt::Textworld::with_reset(reset),
                ),
                "scienceworld" => agree_on_trace(
                    spec,
                    &rt,
                    t,
                    reset,
                    &mut by_macro::Scienceworld::with_reset(reset),
                    &mut by_macro::Scienceworld::with_reset(reset),
                    &mut xt::Scienceworld::with_reset(reset),
                ),
                "trucks" => agree_on_trace(
                    spec,
                    &rt,
                    t,
                    reset,
                    &mut by_macro::Trucks::with_reset(reset),
                    &mut by_macro::Trucks::with_reset(reset),
                    &mut xt::Trucks::with_reset(reset),
                ),
                "agent-rules" => agree_on_trace(
                    spec,
                    &rt,
                    t,
                    reset,
                    &mut by_macro::AgentRules::with_reset(reset),
                    &mut by_macro::AgentRules::with_reset(reset),
                    &mut xt::AgentRules::with_reset(reset),
                ),
                "agent-tools" => agree_on_trace(
                    spec,
                    &rt,
                    t,
                    reset,
                    &mut by_macro::AgentTools::with_reset(reset),
                    &mut by_macro::AgentTools::with_reset(reset),
                    &mut xt::AgentTools::with_reset(reset),
                ),
                other => panic!("no generated monitor for {other}"),
            };
            total.0 += s;
            total.1 += v;
        }
    }
    total
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn agree_on_the_paper_traces() {
    let Some(dir) = shared_dir() else { return };
    for spec in ["textworld", "scienceworld", "trucks"] {
        let traces = traces_in(&dir.join(spec));
        assert!(
            !traces.is_empty(),
            "no trace in {}",
            dir.join(spec).display()
        );
        let (steps, verdicts) = agree_all(spec, &traces, 1);
        assert!(
            steps > 0 && verdicts > 0,
            "{spec}: {steps} steps, {verdicts} verdicts"
        );
    }
}

#[test]
fn agree_on_the_bundled_trace() {
    let t = workspace().join("examples/traces/textworld-demo.txt");
    let (steps, verdicts) = agree_all("textworld", &[t], 1);
    assert_eq!(steps, 28);
    assert!(verdicts > 0);
}

#[test]
fn agree_on_the_agent_rules_demo() {
    // Counts, windows, bounded operators and `end` (issue 24) in generated code.
    let t = workspace().join("examples/traces/agent-rules-demo.json");
    let (steps, verdicts) = agree_all("agent-rules", &[t], 1);
    assert_eq!(steps, 42, "21 steps, under TRAC_R and plain TRAC");
    assert!(verdicts > 0);
}

#[test]
fn generated_tables_are_the_runtime_compiled_ones() {
    let check = |name: &str, tables: &[&'static trac_core::generated::StaticTable]| {
        let spec = load_spec(name);
        assert_eq!(tables.len(), spec.properties.len());
        for (t, p) in tables.iter().zip(&spec.properties) {
            let mut arena = p.arena.clone();
            let opts = trac_compile::CompileOptions {
                semantics: p.decl.semantics,
                minimize: trac_compile::Minimize::Language,
            };
            let want = trac_compile::compile(&mut arena, p.formula, &opts)
                .unwrap()
                .table;
            // Checked like a loaded table, and equal to a fresh compilation.
            let owned = t.to_owned_table();
            Table::from_parts(owned.parts().clone()).expect("a valid table");
            // The parts: generated tables do not carry the per-state LTLf acceptance that
            // `compile` adds for LTLf properties (agent-rules has two).
            assert_eq!(owned.parts(), want.parts(), "{name}: {}", p.decl.id);
        }
    };
    check("textworld", &xt::Textworld::tables());
    check("scienceworld", &xt::Scienceworld::tables());
    check("trucks", &xt::Trucks::tables());
    check("textworld", &by_macro::Textworld::tables());
    check("trucks", &by_macro::Trucks::tables());
    check("agent-rules", &xt::AgentRules::tables());
    check("agent-rules", &by_macro::AgentRules::tables());
}

// ---------------------------------------------------------------------------------------------
// The verdict suite: inline declarations, expected verdicts after each step (plain TRAC).

trac_macros::trac_monitor! {
    /// Formulas of the verdict suite over `p` and `q` (complete LTL3 verdicts).
    struct Suite {
        props { p: "p holds", q: "q holds" }
        /// Violated before any step: no infinite word satisfies it.
        unsat: "F p & G !p",
        /// Satisfied before any step.
        valid: "G p <-> !F!p",
        response: "G(p -> X q)",
        eventually: "F p",
        weak_until: "p W q",
        release: "p R q",
        next3: "X X X p",
        never_decided: "GF p",
        past_yesterday: "G(q -> Y p)",
        past_once: "G(p -> O q)",
        #[ltlf]
        finite_eventually: "F p",
        #[ltlf]
        finite_next_false: "X false",
        /// Issue 24: bounded operators, their past counterparts and counts.
        bounded_response: "G(p -> F[1:2] q)",
        bounded_past: "G(q -> O[1:2] p)",
        at_most_once: "G(count(p) <= 1)",
        window_of_two: "G(count[2](p) < 2)",
        #[ltlf]
        strong_bounded: "F[1:2!] p",
    }
}

/// `(property, trace, verdict after each step, step 0 first)`: steps separated by `;`, labels
/// by `,`; `?` pending, `F` violated, `T` satisfied.
const SUITE: &[(&str, &str, &str)] = &[
    ("unsat", "p", "FF"),
    ("valid", "p;", "TTT"),
    ("response", "p;q;p;", "????F"),
    ("eventually", ";;p;", "???TT"),
    ("weak_until", "p;p;q", "???T"),
    ("release", "q;p", "??F"),
    ("next3", ";;;p", "????T"),
    ("never_decided", "p;;p;", "?????"),
    ("past_yesterday", "p;q;q", "???F"),
    ("past_once", ";p", "??F"),
    ("finite_eventually", ";;p", "???T"),
    // `X` is weak at the end of a finite trace: one step satisfies `X false`.
    ("finite_next_false", ";", "??F"),
    // A `p` at 1 needs a `q` at 2 or 3.
    ("bounded_response", "p;;", "???F"),
    ("bounded_response", "p;;q;", "?????"),
    // A `q` at 4 needs a `p` at 2 or 3; the one at 1 is too old.
    ("bounded_past", "p;;;q", "????F"),
    ("at_most_once", "p;;p", "???F"),
    ("window_of_two", "p;;p;p", "????F"),
    ("strong_bounded", ";;", "???F"),
    ("strong_bounded", ";;p", "???T"),
];

fn letter(v: Verdict) -> char {
    match v {
        Verdict::Satisfied => 'T',
        Verdict::Violated => 'F',
        Verdict::Pending => '?',
    }
}

#[test]
fn the_verdict_suite() {
    let decl: Vec<(&str, &str)> = Suite::PROPERTIES
        .iter()
        .copied()
        .zip(Suite::FORMULAS.iter().copied())
        .collect();
    for &(id, trace, want) in SUITE {
        let k = Suite::PROPERTIES
            .iter()
            .position(|&p| p == id)
            .expect("a suite property");
        let steps: Vec<LabelSet> = if trace.is_empty() {
            Vec::new()
        } else {
            trace
                .split(';')
                .map(|s| s.split(',').filter(|l| !l.is_empty()).collect())
                .collect()
        };
        // The generated monitor, typed.
        let mut typed = Suite::with_reset(false);
        let mut got = String::from(letter(typed.verdicts()[k]));
        for l in &steps {
            typed.step(&SuiteValuation::from_labels(l));
            got.push(letter(typed.verdicts()[k]));
        }
        assert_eq!(got, want, "{id} = {} on {trace:?} (generated)", decl[k].1);
        // The property's monitor through the `Monitor` trait, and the runtime-compiled one.
        let mut m = Suite::with_reset(false);
        let mut arena = trac_ltl::Arena::new();
        let f = trac_ltl::parse(&mut arena, decl[k].1).unwrap();
        let semantics = Suite::tables()[k].semantics();
        let opts = trac_compile::CompileOptions {
            semantics,
            minimize: trac_compile::Minimize::Language,
        };
        let table = trac_compile::compile(&mut arena, f, &opts).unwrap().table;
        let mut rt = TableMonitor::new(
            Arc::new(table),
            ResetPolicy {
                on_violation: false,
                on_satisfaction: false,
            },
        );
        let mut got = String::from(letter(rt.verdict()));
        for (i, l) in steps.iter().enumerate() {
            let input = StepInput {
                step: i + 1,
                text: "",
                labels: l,
            };
            let a = m.step_labels(&input).to_array()[k];
            let b = rt.step(&input);
            assert_eq!(a, b, "{id} at step {}", i + 1);
            assert_eq!(m.residuals()[k], rt.table().residual(rt.state()));
            got.push(letter(rt.verdict()));
        }
        assert_eq!(got, want, "{id} on {trace:?} (runtime-compiled)");
    }
}

/// A chat log for `examples/specs/agent-tools.ron` (as `trac-cli`'s
/// `agent_tool_rules_compare_captured_values`, two more addresses): `send-to-given`, `forall
/// to, u: G(send(to) & O gave(u) -> to = u)`, sliced per value pair.
fn agent_tools_chat() -> PathBuf {
    let call = |id: &str, name: &str, args: &str| {
        format!(
            r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "type": "function", "function": {{"name": "{name}", "arguments": {args:?}}}}}]}}"#
        )
    };
    let msgs = [
        // 1: the user gives mia.li@x.org.
        r#"{"role": "user", "content": "Mail the report to mia.li@x.org please."}"#.to_string(),
        // 2: to the address given: (mia, mia) has `to = u`.
        call("c1", "send_email", r#"{"to": "mia.li@x.org"}"#),
        r#"{"role": "tool", "tool_call_id": "c1", "content": "sent"}"#.to_string(),
        // 4: (bob, mia) breaks the rule.
        call("c2", "send_email", r#"{"to": "bob@y.org"}"#),
        // 5: the user gives bob@y.org too: now (mia, bob) and (bob, bob) exist.
        r#"{"role": "user", "content": "Also bob@y.org."}"#.to_string(),
        // 6: to bob: (bob, bob) fine; (bob, mia) fails again: under TRAC_R a new failing
        // position (the restart keeps the past: `O gave(mia)` still holds); under plain TRAC
        // it stays violated, unreported.
        call("c3", "send_sms", r#"{"to": "bob@y.org"}"#),
        // 7: to mia: (mia, bob) breaks it (bob was given at step 5).
        call("c4", "send_sms", r#"{"to": "mia.li@x.org"}"#),
    ];
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agree-agent-tools.jsonl");
    std::fs::write(&path, msgs.join("\n") + "\n").expect("write the chat log");
    path
}

#[test]
fn agree_on_an_agent_tools_chat() {
    // Several `forall` variables in generated code (issue 27): macro, xtask, runtime-compiled
    // `ParamTupleMonitor` and the audit agree at every step.
    let (steps, verdicts) = agree_all("agent-tools", &[agent_tools_chat()], 1);
    assert_eq!(steps, 14, "7 steps, under TRAC_R and plain TRAC");
    assert!(verdicts > 0);
}

/// The violations of `send-to-given` the audit reports on [`agent_tools_chat`], derived by
/// hand: step 4 `(bob, mia)`; step 6 `(bob, mia)` again under TRAC_R only (each failing
/// position counts; plain TRAC reports a violated instance once); step 7 `(mia, bob)` (`bob`
/// given at step 5).
#[test]
fn send_to_given_violations_by_hand() {
    let spec = load_spec("agent-tools");
    for reset in [true, false] {
        let mut m = xt::AgentTools::with_reset(reset);
        #[allow(clippy::needless_update)]
        let opts = AuditOptions {
            reset,
            compiler: Some(trac_compile::Compiler::shared()),
            ..AuditOptions::default()
        };
        let mut auditor = Auditor::new(std::slice::from_ref(&spec), &opts).expect("auditor");
        let mut got = Vec::new();
        let events = trac_runtime::trace::open(&agent_tools_chat()).expect("trace opens");
        for (i, event) in events.enumerate() {
            let step = i + 1;
            let event = event.expect("event");
            let labels = auditor.label(&event);
            m.step(&xt::AgentToolsValuation::from_labels(&labels));
            m.for_each_event(|id, value, v| {
                if id == "send-to-given" {
                    got.push((step, value.map(str::to_string), v));
                }
            });
        }
        let v = |s: usize, value: &str| (s, Some(value.to_string()), Verdict::Violated);
        let mut want = vec![v(4, "bob@y.org, mia.li@x.org")];
        if reset {
            want.push(v(6, "bob@y.org, mia.li@x.org"));
        }
        want.push(v(7, "mia.li@x.org, bob@y.org"));
        assert_eq!(got, want, "reset {reset}");
        if !reset {
            assert_eq!(m.verdicts()[2], Verdict::Violated);
        }
    }
}
