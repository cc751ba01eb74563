//! The bundled specs on small hand-written logs: every phrasing of ScienceWorld's own action
//! set (open / close / go / teleport, doors named `door to X`, `X door`, `door between X and
//! Y`, `door from X to Y`), and the Trucks area rules with per-package occupancy (a past-time
//! `exists` over the packages seen so far). Expected labels and violation steps are derived by
//! hand from the rules' text.

use std::path::Path;
use trac::runtime::audit::{audit_events, AuditOptions, TraceReport};
use trac::runtime::label::labeler::RuleLabeler;
use trac::runtime::trace::{TraceFormat, TraceReader};
use trac::spec::spec::{CheckedSpec, Spec};

fn load_spec(name: &str) -> CheckedSpec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/specs")
        .join(format!("{name}.ron"));
    Spec::from_path(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .check()
        .unwrap_or_else(|e| panic!("{} does not check:\n{e}", path.display()))
}

/// Audits a plain-text log given as lines (compiled engine, TRAC_R).
fn audit_lines(spec: &CheckedSpec, lines: &[&str]) -> TraceReport {
    let text = lines.join("\n");
    let reader = TraceReader::from_reader(text.as_bytes(), "log", TraceFormat::Text);
    #[allow(clippy::needless_update)]
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let report = audit_events(std::slice::from_ref(spec), "log", reader, &opts)
        .expect("audit")
        .remove(0);
    assert!(report.error.is_none(), "{:?}", report.error);
    report
}

/// The labels the spec's rules give one action, sorted.
fn labels(spec: &CheckedSpec, text: &str) -> Vec<String> {
    let mut v = RuleLabeler::new(&spec.spec).unwrap().label_text(text);
    v.sort();
    v
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

// ---------------------------------------------------------------------------------------------
// ScienceWorld: labels of each phrasing.

#[test]
fn scienceworld_open_phrasings() {
    let s = load_spec("scienceworld");
    // `door to <room>` and `<room> door` (the referents of a door seen from a room).
    for t in [
        "open door to kitchen",
        "open door to the kitchen",
        "open the door to the kitchen",
        "open kitchen door",
        "open the kitchen door",
    ] {
        assert_eq!(labels(&s, t), sorted(&["open_door(kitchen)"]), "{t}");
    }
    assert_eq!(
        labels(&s, "open living room door"),
        sorted(&["open_door(living room)"])
    );
    // The door's description names both rooms: a two-parameter proposition.
    assert_eq!(
        labels(&s, "open door between hallway and living room"),
        sorted(&["open_between(hallway, living room)"])
    );
    assert_eq!(
        labels(&s, "open the door between the kitchen and the hallway"),
        sorted(&["open_between(kitchen, hallway)"])
    );
    assert_eq!(
        labels(&s, "open door from kitchen to outside"),
        sorted(&["open_between(kitchen, outside)"])
    );
    // No door named.
    assert_eq!(labels(&s, "open door"), sorted(&["open_unnamed"]));
    assert_eq!(labels(&s, "open the door"), sorted(&["open_unnamed"]));
    // Closing is not opening.
    for t in [
        "close door to kitchen",
        "close kitchen door",
        "close door between hallway and kitchen",
        "close door",
    ] {
        assert_eq!(labels(&s, t), Vec::<String>::new(), "{t}");
    }
}

#[test]
fn scienceworld_move_phrasings() {
    let s = load_spec("scienceworld");
    let go_kitchen = sorted(&["go", "go_to(kitchen)"]);
    // Every alias of ScienceWorld's move action, with a door or a location.
    for t in [
        "go door to the kitchen",
        "go door to kitchen",
        "go to door to kitchen",
        "go through door to kitchen",
        "walk through the door to the kitchen",
        "move through door to kitchen",
        "go to kitchen",
        "go to the kitchen",
        "walk to kitchen",
        "move to kitchen",
        "go into kitchen",
        "move into the kitchen",
        "go kitchen",
        "go through kitchen door",
        "walk through the kitchen door",
        "teleport to kitchen",
        "teleport kitchen",
        "teleport into the kitchen",
    ] {
        assert_eq!(labels(&s, t), go_kitchen, "{t}");
    }
    assert_eq!(
        labels(&s, "go living room"),
        sorted(&["go", "go_to(living room)"])
    );
    // A room not in ScienceWorld's list still counts after `go to` (rule 4 must see it).
    assert_eq!(
        labels(&s, "go to the basement"),
        sorted(&["go", "go_to(basement)"])
    );
    // Through the door between two rooms: either side may be the one entered.
    for t in [
        "go through door between hallway and kitchen",
        "go door between the hallway and the kitchen",
        "walk through door from hallway to kitchen",
    ] {
        assert_eq!(
            labels(&s, t),
            sorted(&["go", "go_to(hallway)", "go_to(kitchen)"]),
            "{t}"
        );
    }
    // A move without destination, and moving an object (not the agent).
    assert_eq!(labels(&s, "go door"), sorted(&["go"]));
    assert_eq!(
        labels(&s, "move unknown substance B to purple box"),
        sorted(&["box_b"])
    );
}

// ---------------------------------------------------------------------------------------------
// ScienceWorld: rule 1 on each way of opening a door.

/// Violation steps of one property.
fn violations(r: &TraceReport, id: &str) -> Vec<usize> {
    r.property(id).violation_steps()
}

#[test]
fn scienceworld_rule1_door_between() {
    let s = load_spec("scienceworld");
    // Opened, then gone through to either side: no violation.
    for next in [
        "go to living room",
        "go to hallway",
        "go through door between hallway and living room",
        "teleport to the hallway",
    ] {
        let r = audit_lines(
            &s,
            &[
                "open door between hallway and living room",
                next,
                "look around",
            ],
        );
        assert_eq!(violations(&r, "R1_between"), Vec::<usize>::new(), "{next}");
    }
    // Opened, then something else (step 2), or a room that is not a side (step 4).
    let r = audit_lines(
        &s,
        &[
            "open door between hallway and living room",
            "look around",
            "open door between hallway and living room",
            "go to kitchen",
        ],
    );
    assert_eq!(violations(&r, "R1_between"), vec![2, 4]);
    // The same door written `from A to B`; a door to the kitchen opened earlier does not make
    // the kitchen a side of this one.
    let r = audit_lines(
        &s,
        &[
            "open door to kitchen",
            "go to kitchen",
            "look around",
            "open door from kitchen to hallway",
            "go to hallway",
            "look around",
            "open door from hallway to bedroom",
            "go to kitchen",
        ],
    );
    assert_eq!(violations(&r, "R1_between"), vec![8]);
    assert_eq!(violations(&r, "R1"), Vec::<usize>::new());
    // Rule 4 sees the bedroom through the door: no, the agent went to the kitchen.
    assert_eq!(violations(&r, "R4"), Vec::<usize>::new());
}

#[test]
fn scienceworld_rule1_named_door_phrasings() {
    let s = load_spec("scienceworld");
    // `open kitchen door` then `go to the hallway`: the door opened was the kitchen's.
    let r = audit_lines(
        &s,
        &[
            "open kitchen door",
            "go to the hallway",
            "look around",
            "open the door to the kitchen",
            "walk through the kitchen door",
            "look around",
            "open door to hallway",
            "teleport to hallway",
        ],
    );
    assert_eq!(violations(&r, "R1"), vec![2]);
    // Closing a door makes no obligation.
    let r = audit_lines(&s, &["close door to kitchen", "look around"]);
    assert_eq!(violations(&r, "R1"), Vec::<usize>::new());
    assert_eq!(violations(&r, "R1_unnamed"), Vec::<usize>::new());
    // Rule 2 counts walking and teleporting as going into a room.
    let r = audit_lines(
        &s,
        &[
            "walk to kitchen",
            "inventory",
            "teleport to hallway",
            "look around",
        ],
    );
    assert_eq!(violations(&r, "R2"), vec![2]);
}

// ---------------------------------------------------------------------------------------------
// Trucks: area occupancy per package.

#[test]
fn trucks_unload_front_free_counts_every_package() {
    let s = load_spec("trucks");
    // a1 holds package1 and package6 after step 2; step 3 takes package1 out, so a1 still holds
    // package6 when package2 is unloaded from a2 at step 4: "every area closer to the door must
    // be free" is violated there. Loading package6 into the occupied a1 (step 2) violates
    // "the target area must be free".
    let r = audit_lines(
        &s,
        &[
            "LOAD package1 into a1",
            "LOAD package6 into a1",
            "UNLOAD package1 from a1",
            "UNLOAD package2 from a2",
        ],
    );
    assert_eq!(violations(&r, "unload_front_free"), vec![4]);
    assert_eq!(violations(&r, "load_target_free"), vec![2]);
    assert_eq!(violations(&r, "load_front_free"), Vec::<usize>::new());
    // Both packages out of a1 before step 5: unloading from a2 is then allowed; loading into
    // a1 again too, and loading into a3 at step 7 finds a1 occupied by package9 (step 6).
    let r = audit_lines(
        &s,
        &[
            "LOAD package1 into a1",
            "LOAD package6 into a1",
            "UNLOAD package1 from a1",
            "UNLOAD package6 from a1",
            "UNLOAD package2 from a2",
            "LOAD package9 into a1 of truck1 at l1",
            "LOAD(truck1, package3, a3, l1)",
        ],
    );
    assert_eq!(violations(&r, "unload_front_free"), Vec::<usize>::new());
    assert_eq!(violations(&r, "load_target_free"), vec![2]);
    assert_eq!(violations(&r, "load_front_free"), vec![7]);
    // Unloading a package from another area does not free a1.
    let r = audit_lines(
        &s,
        &[
            "LOAD package1 into a1",
            "LOAD package2 into a2",
            "UNLOAD package1 from a2",
            "UNLOAD package2 from a2",
        ],
    );
    assert_eq!(violations(&r, "unload_front_free"), vec![3, 4]);
}

#[test]
fn trucks_two_parameter_labels() {
    let s = load_spec("trucks");
    assert_eq!(
        labels(&s, "LOAD package6 into a2 of truck1 at l1"),
        sorted(&["load_into(a2)", "load_pkg(package6)", "loads(package6, a2)"])
    );
    assert_eq!(
        labels(&s, "UNLOAD(truck1, package12, a3, l2)"),
        sorted(&[
            "unload",
            "unload_from(a3)",
            "unload_pkg(package12)",
            "unloads(package12, a3)"
        ])
    );
    // No area: no `unloads` (it frees nothing).
    assert_eq!(
        labels(&s, "UNLOAD package1 at l1"),
        sorted(&["unload", "unload_pkg(package1)"])
    );
}
