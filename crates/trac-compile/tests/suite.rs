//! The data-driven suite: (formula, trace, expected verdict after each step) run against every
//! engine: progression, complete progression, compiled, compiled without minimization, and the
//! JSON / RON round trips of the compiled table.

use std::sync::Arc;
use trac_compile::{compile, CompileOptions, Minimize, Semantics};
use trac_core::labels::{LabelSet, StepInput};
use trac_core::table::{Table, TableMonitor};
use trac_ltl::Arena;
use trac_runtime::engine::CrossCheckMonitor;
use trac_runtime::{Monitor, ProgressionMonitor, ResetPolicy, Verdict};

const TRAC: ResetPolicy = ResetPolicy {
    on_violation: false,
    on_satisfaction: false,
};

struct Case {
    formula: &'static str,
    semantics: Semantics,
    /// Steps separated by `;`, labels by `,`.
    trace: &'static str,
    /// Verdict after each step, step 0 first (plain TRAC): `?` pending, `F` violated, `T` satisfied.
    complete: &'static str,
    /// The same for (sound, incomplete) progression, when it differs.
    progression: Option<&'static str>,
}

const fn case(formula: &'static str, trace: &'static str, complete: &'static str) -> Case {
    Case {
        formula,
        semantics: Semantics::Ltl3,
        trace,
        complete,
        progression: None,
    }
}

const fn prog(mut c: Case, p: &'static str) -> Case {
    c.progression = Some(p);
    c
}

const fn ltlf(mut c: Case) -> Case {
    c.semantics = Semantics::Ltlf;
    c
}

const CASES: &[Case] = &[
    // The cases.
    prog(case("F p & G !p", "p", "FF"), "?F"),
    prog(case("F p & G !p", ";", "FFF"), "???"),
    prog(case("G p & F !p", "p;p", "FFF"), "???"),
    prog(case("GF p & FG !p", ";p;", "FFFF"), "????"),
    prog(case("G p <-> !F!p", "p;", "TTT"), "??T"),
    case("GF p", "p;;p;", "?????"),
    prog(case("F(a & X false)", "a;", "FFF"), "???"),
    case("(X a) <-> b", ";a", "??F"),
    case("(X a) <-> b", ";", "??T"),
    case("!p U q", "p", "?F"),
    // Classics.
    case("G(p -> X q)", "p;q;p;", "????F"),
    case("F p", ";;p;", "???TT"),
    case("p", "", "?F"),
    case("p W q", "p;p;q", "???T"),
    case("p M q", "q;q;p,q", "???T"),
    case("p R q", "q;p", "??F"),
    case("X X X p", ";;;p", "????T"),
    prog(case("X false", ";", "FFF"), "?FF"),
    prog(case("G F p -> F q", "q", "?T"), "?T"),
    case("F G p | F G !p", "p;;p", "????"),
    prog(case("F G p | G F !p", "p;;p", "TTTT"), "????"),
    prog(case("G(p -> F q) & G !q & F p", "", "FF"), "??"),
    prog(case("X(G p & F !p)", "", "FF"), "??"),
    // Past time.
    case("G(q -> Y p)", "p;q;q", "???F"),
    prog(case("G(q -> Y p) & F(q & !Y p) & G !q", "", "FF"), "??"),
    prog(case("G(p -> O q)", "q;p;p", "?TTT"), "????"),
    case("G(p -> O q)", ";p", "??F"),
    prog(case("F(p & H !q) & G q", "", "FF"), "?F"),
    prog(case("F(p & H !q) & G(p -> q)", "q;p", "FFF"), "??F"),
    case("H p", "p", "?T"),
    case("G(p -> (!r S q))", "q;p;r;p", "????F"),
    case("G(Z false -> p) & X G !p", "", "?F"),
    prog(case("G(Z false -> p) & G !p", "", "FF"), "?F"),
    // Finite traces.
    ltlf(case("X false", ";", "??F")),
    ltlf(case("G p", "p;", "??F")),
    ltlf(case("F p", ";;p", "???T")),
    ltlf(case("F(a & X false)", "a;", "???")),
    ltlf(case("G(p -> X q)", "p;q", "???")),
    ltlf(case("X[!] true", ";", "??T")),
];

fn trace(src: &str) -> Vec<LabelSet> {
    if src.is_empty() {
        return vec![LabelSet::new()];
    }
    src.split(';')
        .map(|step| step.split(',').filter(|l| !l.is_empty()).collect())
        .collect()
}

fn code(v: Verdict) -> char {
    match v {
        Verdict::Pending => '?',
        Verdict::Violated => 'F',
        Verdict::Satisfied => 'T',
    }
}

/// Verdicts after each step (step 0 first), the events of the run, and the end LTLf verdict.
type Outcome = (String, Vec<(usize, Verdict)>, Verdict);

fn run(m: &mut dyn Monitor, steps: &[LabelSet]) -> Outcome {
    let mut out = String::new();
    out.push(code(m.initial().unwrap_or(Verdict::Pending)));
    let mut events = Vec::new();
    for (i, labels) in steps.iter().enumerate() {
        let input = StepInput {
            step: i + 1,
            text: "",
            labels,
        };
        if let Some(v) = m.step(&input) {
            events.push((i + 1, v));
        }
        out.push(code(m.verdict()));
    }
    (out, events, m.ltlf())
}

fn monitors(c: &Case, policy: ResetPolicy) -> Vec<(&'static str, Box<dyn Monitor>)> {
    let mut arena = Arena::new();
    let f = trac_ltl::parse(&mut arena, c.formula).unwrap();
    let mut out: Vec<(&'static str, Box<dyn Monitor>)> = Vec::new();
    out.push((
        "complete progression",
        Box::new(ProgressionMonitor::with_semantics(
            arena.clone(),
            f,
            policy,
            Some(&trac_compile::SatOracle),
            c.semantics,
        )),
    ));
    for minimize in [Minimize::Language, Minimize::Verdict, Minimize::None] {
        let mut a = arena.clone();
        let opts = CompileOptions {
            semantics: c.semantics,
            minimize,
        };
        let t = compile(&mut a, f, &opts).unwrap().table;
        if minimize == Minimize::Language {
            let json = Table::from_json(&t.to_json()).unwrap();
            assert_eq!(json, t);
            out.push((
                "json round trip",
                Box::new(TableMonitor::new(Arc::new(json), policy)),
            ));
            let ron = Table::from_ron(&t.to_ron()).unwrap();
            assert_eq!(ron, t);
            out.push((
                "ron round trip",
                Box::new(TableMonitor::new(Arc::new(ron), policy)),
            ));
            let cc = CrossCheckMonitor::new(
                TableMonitor::new(Arc::new(t.clone()), policy),
                ProgressionMonitor::with_semantics(
                    arena.clone(),
                    f,
                    policy,
                    Some(&trac_compile::SatOracle),
                    c.semantics,
                ),
            );
            out.push(("cross-check", Box::new(cc)));
        }
        let name = match minimize {
            Minimize::Language => "compiled",
            Minimize::Verdict => "compiled, verdict-minimized",
            Minimize::None => "compiled unminimized",
        };
        out.push((name, Box::new(TableMonitor::new(Arc::new(t), policy))));
    }
    out
}

#[test]
fn every_engine_passes_the_suite() {
    let mut failures = Vec::new();
    for c in CASES {
        let steps = trace(c.trace);
        assert_eq!(steps.len() + 1, c.complete.len(), "{}: bad case", c.formula);
        // Plain progression: its own expectations.
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, c.formula).unwrap();
        let mut p = ProgressionMonitor::new(arena, f, TRAC);
        let (got, _, p_ltlf) = run(&mut p, &steps);
        let want = c.progression.unwrap_or(c.complete);
        if c.semantics == Semantics::Ltl3 && got != want {
            failures.push(format!(
                "{} on {:?}: progression {got}, want {want}",
                c.formula, c.trace
            ));
        }
        for (name, mut m) in monitors(c, TRAC) {
            let (got, _, l) = run(m.as_mut(), &steps);
            if got != c.complete {
                failures.push(format!(
                    "{} on {:?}: {name} {got}, want {}",
                    c.formula, c.trace, c.complete
                ));
            }
            if l != p_ltlf {
                failures.push(format!(
                    "{} on {:?}: {name} ltlf {l:?}, progression {p_ltlf:?}",
                    c.formula, c.trace
                ));
            }
        }
        // TRAC_R: every complete engine reports the same events.
        let mut reference: Option<Outcome> = None;
        for (name, mut m) in monitors(c, ResetPolicy::default()) {
            let got = run(m.as_mut(), &steps);
            match &reference {
                None => reference = Some(got),
                Some(r) if *r != got => failures.push(format!(
                    "{} on {:?} (TRAC_R): {name} {got:?}, complete progression {r:?}",
                    c.formula, c.trace
                )),
                _ => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn trac_r_restarts_at_the_violating_step_in_every_engine() {
    let c = case("G(p -> X q)", "p;p;p;q", "");
    let steps = trace(c.trace);
    for (name, mut m) in monitors(&c, ResetPolicy::default()) {
        let (_, events, _) = run(m.as_mut(), &steps);
        let v = Verdict::Violated;
        assert_eq!(events, vec![(2, v), (3, v)], "{name}");
        let w: Vec<usize> = m.witness().iter().map(|c| c.step).collect();
        assert_eq!(w, vec![2, 3], "{name}");
        assert_eq!(m.witness().last().unwrap().residual, "false", "{name}");
    }
}

#[test]
fn a_violation_before_the_first_step_is_reported_at_step_0() {
    let c = case("F p & G !p", "", "");
    for (name, m) in monitors(&c, ResetPolicy::default()) {
        assert_eq!(m.initial(), Some(Verdict::Violated), "{name}");
    }
}
