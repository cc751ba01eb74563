//! Per-state LTLf acceptance of compiled tables (`Table::accepting`), which the TRAC_R end of an
//! LTLf audit reads (`Monitor::ltlf_since_restart`).

use std::sync::Arc;
use trac_compile::{compile, CompileOptions, Minimize, Semantics};
use trac_core::table::TableMonitor;
use trac_core::{LabelSet, Monitor, ResetPolicy, StepInput, Verdict};
use trac_ltl::formula::Arena;

fn table(src: &str, semantics: Semantics, minimize: Minimize) -> trac_core::table::Table {
    let mut a = Arena::new();
    let f = trac_ltl::parse(&mut a, src).unwrap();
    compile(
        &mut a,
        f,
        &CompileOptions {
            semantics,
            minimize,
        },
    )
    .unwrap()
    .table
}

#[test]
fn ltlf_tables_know_the_acceptance_of_each_state() {
    // `G(x -> X p)` after `{x}`: pending, and accepted (weak next at the end);
    // `G(x -> X[!] p)` after `{x}`: pending, not accepted (strong next).
    for (src, want) in [("G(x -> X p)", true), ("G(x -> X[!] p)", false)] {
        for minimize in [Minimize::Language, Minimize::None] {
            let t = table(src, Semantics::Ltlf, minimize);
            assert!(t.accepting(0).is_some(), "{src}: LTLf tables carry it");
            let mut m = TableMonitor::new(Arc::new(t), ResetPolicy::default());
            let set: LabelSet = ["x"].into_iter().collect();
            m.step(&StepInput {
                step: 1,
                text: "",
                labels: &set,
            });
            assert_eq!(m.verdict(), Verdict::Pending);
            assert_eq!(
                m.ltlf_since_restart(),
                Some(Verdict::of_bool(want)),
                "{src}"
            );
            // Never restarted: the run is the whole trace.
            assert_eq!(m.ltlf(), Verdict::of_bool(want), "{src}");
        }
    }
    // LTL3 tables do not track it (their file form is unchanged).
    let t = table("G(x -> X p)", Semantics::Ltl3, Minimize::Language);
    assert_eq!(t.accepting(2), None);
    assert_eq!(t.to_file().accepting, None);
}
