//! Audits of the real agent logs of the TRAC paper (`../shared/data/paper-traces/`, see
//! `../shared/README.md`) with the bundled specs `examples/specs/{textworld,scienceworld,trucks}.ron`.
//!
//! The expected violations below were derived BY HAND from the natural-language rules
//! (`rules/*.txt`) and the logs, not by running the tool; the reasoning is next to each one.
//! Conventions:
//! - steps are numbered 1.. over the non-empty lines of the file, whatever the log writes;
//! - TRAC_R (the default): after a violation at step t the property restarts from its formula at
//!   step t itself, so an obligation created at t is kept (`take` at t then `take` at t+1 of the
//!   same item: violations at t+1 and t+2), but every other pending obligation is dropped; at most
//!   one violation per step per property (per value for `forall` properties);
//! - obligations still pending at the end of the log are not violations.
//!
//! When `../shared/` is missing the tests that need it are ignored (`cfg(no_shared_logs)`, set by
//! build/needs.rs), except on CI (`CI=true`) where they fail.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use trac::runtime::audit::{audit_path, AuditOptions, TraceReport};
use trac::spec::spec::{CheckedSpec, Spec};

// ---------------------------------------------------------------------------------------------
// Helpers

/// The shared paper traces (always `Some`).
///
/// # Panics
/// When the directory is missing (its tests are ignored then, outside CI).
fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/paper-traces"
    ));
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

fn spec_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/specs")
        .join(format!("{name}.ron"))
}

fn load_spec(name: &str) -> CheckedSpec {
    let path = spec_path(name);
    let spec = Spec::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    spec.check()
        .unwrap_or_else(|e| panic!("{} does not check:\n{e}", path.display()))
}

fn audit_file(spec: &CheckedSpec, path: &Path, reset: bool) -> TraceReport {
    // `..default()` keeps this compiling if options are added.
    #[allow(clippy::needless_update)]
    let opts = AuditOptions {
        reset,
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let report = audit_path(spec, path, &opts)
        .unwrap_or_else(|e| panic!("{}: audit failed: {e}", path.display()))
        .remove(0);
    assert!(
        report.error.is_none(),
        "{}: trace error: {}",
        path.display(),
        report.error.as_ref().unwrap()
    );
    report
}

/// Audits `<shared>/<env>/<log>` with `examples/specs/<env>.ron`; (always `Some`).
fn audit_shared(env: &str, log: &str, reset: bool) -> Option<TraceReport> {
    let dir = shared_dir()?;
    Some(audit_file(&load_spec(env), &dir.join(env).join(log), reset))
}

/// Expected violations of one property.
enum Exp {
    /// A property without `forall`: the violation steps.
    Steps(Vec<usize>),
    /// A `forall` property: `(step, value)` of each violation.
    Values(Vec<(usize, String)>),
}

fn steps(v: &[usize]) -> Exp {
    Exp::Steps(v.to_vec())
}

fn values(v: &[(usize, &str)]) -> Exp {
    Exp::Values(v.iter().map(|&(s, x)| (s, x.to_string())).collect())
}

fn none() -> Exp {
    Exp::Steps(Vec::new())
}

/// `(s, value)` for every `s` in `range`.
fn each(range: std::ops::RangeInclusive<usize>, value: &str) -> Vec<(usize, String)> {
    range.map(|s| (s, value.to_string())).collect()
}

/// Checks the report against the expectations: one per property of the spec (no property left
/// unchecked), and the number of steps read. All mismatches are reported together.
fn check(report: &TraceReport, n_steps: usize, expected: Vec<(&str, Exp)>) {
    let name = &report.trace;
    let mut problems = Vec::new();
    if report.steps != n_steps {
        problems.push(format!(
            "steps read: expected {n_steps}, got {}",
            report.steps
        ));
    }
    let ids: BTreeSet<&str> = report.properties.iter().map(|p| p.id.as_str()).collect();
    let covered: BTreeSet<&str> = expected.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids, covered,
        "{name}: the expectations must cover exactly the spec's properties"
    );
    for (id, exp) in expected {
        let p = report.property(id);
        match exp {
            Exp::Steps(want) => {
                let got = p.violation_steps();
                if got != want {
                    problems.push(format!(
                        "{id}: expected violations at {want:?}, got {got:?}"
                    ));
                }
            }
            Exp::Values(want) => {
                let want: Vec<(usize, Option<String>)> =
                    want.into_iter().map(|(s, v)| (s, Some(v))).collect();
                let got = p.violations_by_value();
                if got != want {
                    problems.push(format!("{id}: expected violations {want:?}, got {got:?}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{name}:\n  {}", problems.join("\n  "));
}

// ---------------------------------------------------------------------------------------------
// Every log of every environment audits without error.

fn logs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    v.sort();
    v
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn every_shared_log_audits_without_error() {
    let Some(dir) = shared_dir() else { return };
    let expected_counts = [("textworld", 6), ("scienceworld", 7), ("trucks", 12)];
    for (env, count) in expected_counts {
        let spec = load_spec(env);
        let files = logs(&dir.join(env));
        assert_eq!(files.len(), count, "{env}: number of logs");
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            for reset in [true, false] {
                let report = audit_file(&spec, &path, reset);
                assert_eq!(
                    report.steps,
                    lines,
                    "{}: one step per non-empty line",
                    path.display()
                );
            }
        }
    }
}

/// Every line of every Trucks log is exactly one of DRIVE / LOAD / UNLOAD / DELIVER, with its
/// arguments recognised (the labeling handles every format written by the agents).
#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn every_trucks_line_is_one_labeled_action() {
    use trac::runtime::label::labeler::RuleLabeler;
    use trac::runtime::trace;
    let Some(dir) = shared_dir() else { return };
    let spec = load_spec("trucks");
    let labeler = RuleLabeler::new(&spec.spec).expect("labeler");
    for path in logs(&dir.join("trucks")) {
        for ev in trace::open(&path).unwrap() {
            let ev = ev.unwrap();
            let labels = labeler.label_text(ev.text());
            let has = |base: &str| labels.iter().any(|l| l.starts_with(&format!("{base}(")));
            let is = |name: &str| labels.iter().any(|l| l == name);
            let verbs = [is("drive"), has("load_pkg"), is("unload"), has("deliver")];
            let at = format!("{}:{}: {:?} -> {labels:?}", path.display(), ev.line, ev.raw);
            assert_eq!(verbs.iter().filter(|&&b| b).count(), 1, "{at}");
            // One value per parametric proposition (a line is one action on one package).
            for base in [
                "drive_to",
                "load_into",
                "load_pkg",
                "unload_from",
                "unload_pkg",
                "deliver",
                "deliver_at",
            ] {
                let n = labels
                    .iter()
                    .filter(|l| l.starts_with(&format!("{base}(")))
                    .count();
                assert!(n <= 1, "{at}: several {base}");
            }
            if is("drive") {
                assert!(has("drive_to"), "{at}: no destination");
            }
            if has("load_pkg") {
                assert!(has("load_into"), "{at}: no area");
            }
            if is("unload") {
                assert!(has("unload_pkg"), "{at}: no package");
                // trucks/out12.txt writes `UNLOAD package1 at l1`, without an area.
                assert!(
                    has("unload_from") || path.ends_with("out12.txt"),
                    "{at}: no area"
                );
            }
            if has("deliver") {
                assert!(has("deliver_at"), "{at}: no location");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The bundled example (no shared data needed).

#[test]
fn bundled_textworld_demo() {
    let spec = load_spec("textworld");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/textworld-demo.txt");
    let r = audit_file(&spec, &path, true);
    check(
        &r,
        14,
        vec![
            // take red apple@2 examined@3 ok; take knife@4 examined@5 ok;
            // take yellow potato@7, step 8 is `look` -> violation at 8; take knife@10 examined@11 ok.
            ("R1", values(&[(8, "yellow potato")])),
            // knife@4: slice@6 within 5..8 ok; knife@10: steps 11..14 have no chop/slice/dice -> 14.
            ("R2", steps(&[14])),
            // drop red apple@9.
            ("R3", steps(&[9])),
            // go east@12.
            ("R4", steps(&[12])),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// TextWorld: all six logs.
// R1 forall item: G(take(item) -> X examine(item))   R2 G(take(knife) -> X(cut|X(cut|X(cut|X cut))))
// R3 G !drop                                          R4 G !go
// None of the logs drops anything: R3 is empty everywhere.

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn textworld_out1() {
    let Some(r) = audit_shared("textworld", "out1.txt", true) else {
        return;
    };
    const RHP: &str = "red hot pepper";
    const PP: &str = "purple potato";
    check(
        &r,
        43,
        vec![
            // take cookbook@1 ex@2, purple potato@3 ex@4, red hot pepper@5 ex@6, knife@7 ex@8: ok.
            // take red hot pepper@11, step 12 is `dice` -> 12; take rhp@20, 21 `dice` -> 21.
            // `TAKE purple potato: take purple potato`@28 and @29, `take purple potato`@30:
            //   28 -> 29 is a take -> 29 (restart at 29 keeps 29's take) -> 30 -> 31 (`dice`).
            // take purple potato@38, 39 `prepare meal` -> 39; take knife@40, 41 `prepare meal` -> 41.
            (
                "R1",
                values(&[
                    (12, RHP),
                    (21, RHP),
                    (29, PP),
                    (30, PP),
                    (31, PP),
                    (39, PP),
                    (41, "knife"),
                ]),
            ),
            // knife@7: chop@9 within 8..11 ok. knife@40: 41..43 have no cut, but the log ends
            // before t+4 = 44: pending, not a violation.
            ("R2", none()),
            ("R3", none()),
            // no go.
            ("R4", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn textworld_out2() {
    let Some(r) = audit_shared("textworld", "out2.txt", true) else {
        return;
    };
    check(
        &r,
        46,
        vec![
            // cookbook@2 ex@3, red hot pepper@4 ex@5, knife@6 ex@7, banana@11 ex@12,
            // green hot pepper@15 ex@16, red onion@23 ex@24 (`from <place>` is not part of the item).
            ("R1", none()),
            // knife@6: slice@8 within 7..10.
            ("R2", none()),
            ("R3", none()),
            // go west@1, then go at 25-28, 32-35, 37-42.
            (
                "R4",
                steps(&[1, 25, 26, 27, 28, 32, 33, 34, 35, 37, 38, 39, 40, 41, 42]),
            ),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn textworld_out3() {
    let Some(r) = audit_shared("textworld", "out3.txt", true) else {
        return;
    };
    check(
        &r,
        45,
        vec![
            // knife@3 ex@4 ok; rhp@5 ex@6 ok; banana@8, 9 `fry` -> 9.
            // `take the pan`@16, 17 take knife -> 17 (pan); knife@17, 18 take pan -> 18 (knife);
            // pan@18, 19 take rhp -> 19 (pan); rhp@19, 20 slice -> 20 (rhp);
            // banana@21, 22 cook -> 22; knife@23, 24 examine rhp -> 24 (knife);
            // rhp@26 ex@27 ok; banana@29/32/35, next `examine the knife` -> 30, 33, 36 (banana);
            // rhp@37, 38 take knife -> 38 (rhp); knife@38, 39 cook -> 39 (knife);
            // banana@41, 42 slice -> 42 (banana; examined only at 43).
            (
                "R1",
                values(&[
                    (9, "banana"),
                    (17, "pan"),
                    (18, "knife"),
                    (19, "pan"),
                    (20, "red hot pepper"),
                    (22, "banana"),
                    (24, "knife"),
                    (30, "banana"),
                    (33, "banana"),
                    (36, "banana"),
                    (38, "red hot pepper"),
                    (39, "knife"),
                    (42, "banana"),
                ]),
            ),
            // knife@3: slice@7 = t+4 ok. knife@17: slice@20 ok. knife@23: 24 examine, 25 cook,
            // 26 take, 27 examine: no cut by t+4 = 27 -> 27. knife@38: slice@42 = t+4 ok.
            ("R2", steps(&[27])),
            ("R3", none()),
            // go west@1.
            ("R4", steps(&[1])),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn textworld_out4() {
    let Some(r) = audit_shared("textworld", "out4.txt", true) else {
        return;
    };
    check(
        &r,
        59,
        vec![
            // pork@3 ex@4 ok; knife@5, 6 `Nothing` -> 6 (knife); red bell pepper@8 ex@9 ok;
            // pork@13, 14 look -> 14; carrot@16 ex@17 ok;
            // `take raw red tuna`@42, `examine red tuna`@43: same item (state adjective `raw`
            // dropped) -> ok; yellow bell pepper@46 ex@47 ok;
            // knife@48, 49 take knife -> 49; the restart at 49 keeps 49's take, 50 take rbp -> 50;
            // rbp@50, 51 examine fridge -> 51 (red bell pepper); yellow onion@52 ex@53 ok;
            // pork@57, 58 examine fridge -> 58; pork@59 is the last step: pending.
            (
                "R1",
                values(&[
                    (6, "knife"),
                    (14, "pork"),
                    (49, "knife"),
                    (50, "knife"),
                    (51, "red bell pepper"),
                    (58, "pork"),
                ]),
            ),
            // knife@5: chop@7 ok. knife@48: 49..52 no cut -> 52. The knife taken again @49 would
            // be due at 53, but the TRAC_R restart at 52 drops that pending obligation (52 is not
            // a knife take), and 53 is not reported.
            ("R2", steps(&[52])),
            ("R3", none()),
            // go south@1, go south@19, go north@20, go south@40, go north@41.
            ("R4", steps(&[1, 19, 20, 40, 41])),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn textworld_out5() {
    let Some(r) = audit_shared("textworld", "out5.txt", true) else {
        return;
    };
    check(
        &r,
        59,
        vec![
            // cookbook@16 ex@17, yellow bell pepper@26 ex@27, red hot pepper@35 ex@36,
            // red onion@43 ex@44, black pepper@55 ex@56: all examined next.
            ("R1", none()),
            // no knife.
            ("R2", none()),
            ("R3", none()),
            // go out@10, 18, 28, go north@29, go out@37, 45, 50, 57.
            ("R4", steps(&[10, 18, 28, 29, 37, 45, 50, 57])),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn textworld_out6() {
    let Some(r) = audit_shared("textworld", "out6.txt", true) else {
        return;
    };
    const YBP: &str = "yellow bell pepper";
    const OBP: &str = "orange bell pepper";
    // `go to fridge and take yellow bell pepper`@3, 4 look -> 4 (ybp).
    // `take chopped yellow bell pepper`@5 (same item, `chopped` dropped), 6 take obp -> 6 (ybp).
    // obp@6, 7 take red tuna -> 7 (obp); red tuna@7, 8 take knife -> 8 (red tuna);
    // knife@8, 9, 10 each followed by a take -> 9, 10, 11 (knife);
    // from 11 on every step is a take and nothing is ever examined: each step t >= 12 violates for
    // the item taken at t-1: ybp@11 -> 12, ybp@12 -> 13, obp@13 -> 14, ybp@14..41 -> 15..42,
    // ybp@42 -> 43, obp@43 -> 44, ybp@44..52 -> 45..53, ybp@53 -> 54, obp@54 -> 55,
    // ybp@55..58 -> 56..59 (ybp@59 is last: pending).
    let mut r1 = vec![
        (4, YBP.to_string()),
        (6, YBP.to_string()),
        (7, OBP.to_string()),
        (8, "red tuna".to_string()),
        (9, "knife".to_string()),
        (10, "knife".to_string()),
        (11, "knife".to_string()),
        (12, YBP.to_string()),
        (13, YBP.to_string()),
        (14, OBP.to_string()),
    ];
    r1.extend(each(15..=43, YBP));
    r1.push((44, OBP.to_string()));
    r1.extend(each(45..=54, YBP));
    r1.push((55, OBP.to_string()));
    r1.extend(each(56..=59, YBP));
    check(
        &r,
        59,
        vec![
            ("R1", Exp::Values(r1)),
            // knife@8: 9..12 are takes, no cut -> 12. The knives taken @9 and @10 (due 13, 14)
            // are dropped by the restart at 12 (12 is not a knife take): only 12.
            ("R2", steps(&[12])),
            ("R3", none()),
            // `go to fridge and take yellow bell pepper`@3 is a go.
            ("R4", steps(&[3])),
        ],
    );
}

/// Without TRAC_R (plain TRAC), a property is violated once, at its first violation.
#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn textworld_out6_without_reset() {
    let Some(r) = audit_shared("textworld", "out6.txt", false) else {
        return;
    };
    // R2: the first violation is at 12 with or without reset.
    assert_eq!(r.property("R2").violation_steps(), vec![12]);
    // R1 is parametric: one first violation per value (per instance).
    assert_eq!(
        r.property("R1").violations_by_value(),
        vec![
            (4, Some("yellow bell pepper".to_string())),
            (7, Some("orange bell pepper".to_string())),
            (8, Some("red tuna".to_string())),
            (9, Some("knife".to_string())),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// ScienceWorld (substance B task): all seven logs.
// R1 forall room: G(open_door(room) -> X go_to(room))   R1_unnamed G(open_unnamed -> X go)
// R2 G(go -> X look_around)   R3 G(look_around -> X !look_around)
// R4 forall room: G(go_to(room) -> go_to(hallway) | go_to("living room") | go_to(kitchen))
// R5 G(box_b -> Y O measure_b)
// No log goes anywhere but the hallway, the living room and the kitchen: R4 is empty everywhere.

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out1() {
    let Some(r) = audit_shared("scienceworld", "out1.txt", true) else {
        return;
    };
    check(
        &r,
        37,
        vec![
            // open door to the hallway@3, go door to the hallway@4 ok;
            // open door to the living room@6, go door to the living room@7 ok.
            ("R1", none()),
            ("R1_between", none()),
            ("R1_unnamed", none()),
            // go@2, 3 is `open door` -> 3; go@4 look@5 ok; go@7 look@8 ok.
            ("R2", steps(&[3])),
            // look around at 8-9, 16-17-18, 20-21, 24-25, 31-32-33 (`look at`/`look in` are not
            // look around) -> 9, 17, 18, 21, 25, 32, 33.
            ("R3", steps(&[9, 17, 18, 21, 25, 32, 33])),
            ("R4", none()),
            // measured @23, never boxed.
            ("R5", none()),
        ],
    );
}

/// TRAC_R vs plain TRAC on consecutive look-arounds.
#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out1_reset_vs_no_reset() {
    let Some(with) = audit_shared("scienceworld", "out1.txt", true) else {
        return;
    };
    let Some(without) = audit_shared("scienceworld", "out1.txt", false) else {
        return;
    };
    // TRAC_R: each second look-around of a run is a violation (16-17-18 gives 17 and 18).
    assert_eq!(
        with.property("R3").violation_steps(),
        vec![9, 17, 18, 21, 25, 32, 33]
    );
    // TRAC: the property is violated once, at 9, and stays violated.
    assert_eq!(without.property("R3").violation_steps(), vec![9]);
    assert_eq!(without.property("R2").violation_steps(), vec![3]);
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out2() {
    let Some(r) = audit_shared("scienceworld", "out2.txt", true) else {
        return;
    };
    check(
        &r,
        100,
        vec![
            // open door to the living room@11, 12 is look around -> 12 (living room).
            ("R1", values(&[(12, "living room")])),
            // `open door`@4, 5 is look around -> 5.
            ("R1_between", none()),
            ("R1_unnamed", steps(&[5])),
            // go@3 -> 4 (open); go@6 -> 7 (go); go@20 -> 21; 23 -> 24; 31 -> 32; 34 -> 35;
            // 40 -> 41; 56 -> 57; 68 -> 69; 81 -> 82; 95 -> 96 (each a go followed by a go);
            // every other go is followed by look around.
            ("R2", steps(&[4, 7, 21, 24, 32, 35, 41, 57, 69, 82, 96])),
            // look-around runs 18-19, 29-30, 38-39, 42-43, 62-63, 87-88, 92-93-94, 97-98.
            ("R3", steps(&[19, 30, 39, 43, 63, 88, 93, 94, 98])),
            ("R4", none()),
            ("R5", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out3() {
    let Some(r) = audit_shared("scienceworld", "out3.txt", true) else {
        return;
    };
    check(
        &r,
        30,
        vec![
            // open door to the hallway@2, 3 is `go living room` (another room) -> 3 (hallway);
            // open door to the living room@11, go@12 ok; open door to the kitchen@19, go@20 ok.
            ("R1", values(&[(3, "hallway")])),
            ("R1_between", none()),
            ("R1_unnamed", none()),
            // go@1 -> 2 (open); go@3..8 each followed by a go -> 4, 5, 6, 7, 8, 9 (the restart
            // at t keeps the obligation of the go at t); go@9 look@10 ok; go@12 look@13 ok;
            // go@14 -> 15 (go); go@15 look@16 ok; go@18 -> 19 (open); go@20 look@21 ok;
            // go@23 -> 24 (go); go@24 -> 25 (focus).
            ("R2", steps(&[2, 4, 5, 6, 7, 8, 9, 15, 19, 24, 25])),
            // look around at 10, 13, 16, 21, 28: never twice in a row.
            ("R3", none()),
            ("R4", none()),
            // use thermometer on unknown substance B@27, move it to purple box@30: measured first.
            ("R5", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out4() {
    let Some(r) = audit_shared("scienceworld", "out4.txt", true) else {
        return;
    };
    check(
        &r,
        100,
        vec![
            // open door to the hallway@2, 3 goes to the living room -> 3 (hallway);
            // open door to the living room@8, go@9 ok.
            ("R1", values(&[(3, "hallway")])),
            ("R1_between", none()),
            ("R1_unnamed", none()),
            // go@1 -> 2 (open); go@3,4,5 -> 4, 5, 6; `go door`@6 look@7 ok; go@9 look@10 ok;
            // then the agent goes hallway, living room, look: each hallway go is followed by a go:
            // 13->14, 16->17, 20->21, 23->24, 26->27, 29..34 -> 30..34, 36->37, 41->42, 46->47,
            // 49->50, 52->53, 56->57, 62->63, 67->68, 71->72, 74->75, 77->78, 80->81, 83->84,
            // 86->87, 95->96, 98->99.
            (
                "R2",
                steps(&[
                    2, 4, 5, 6, 14, 17, 21, 24, 27, 30, 31, 32, 33, 34, 37, 42, 47, 50, 53, 57, 63,
                    68, 72, 75, 78, 81, 84, 87, 96, 99,
                ]),
            ),
            // look-around runs 38-40, 54-55, 58-61, 69-70, 88-89, 91-94.
            ("R3", steps(&[39, 40, 55, 59, 60, 61, 70, 89, 92, 93, 94])),
            ("R4", none()),
            ("R5", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out5() {
    let Some(r) = audit_shared("scienceworld", "out5.txt", true) else {
        return;
    };
    check(
        &r,
        27,
        vec![
            // open door to the hallway@2, 3 `go living room` -> 3 (hallway);
            // living room@7 -> go@8 ok; kitchen@15 -> go@16 ok.
            ("R1", values(&[(3, "hallway")])),
            ("R1_between", none()),
            ("R1_unnamed", none()),
            // go@1 -> 2 (open); go@3/5/8 followed by look around; go@14 -> 15 (open);
            // go@16 look@17 ok; go@19 -> 20 (go); go@20 -> 21 (focus).
            ("R2", steps(&[2, 15, 20, 21])),
            // look around at 4, 6, 9, 11, 13, 17, 25: never twice in a row.
            ("R3", none()),
            ("R4", none()),
            // measured @24, boxed @27.
            ("R5", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out6() {
    let Some(r) = audit_shared("scienceworld", "out6.txt", true) else {
        return;
    };
    check(
        &r,
        100,
        vec![
            // open door to the kitchen@21, go door to the kitchen@22 ok.
            ("R1", none()),
            // `open door`@2, go@3 ok; `open door`@9, step 10 is `0` -> 10.
            ("R1_between", none()),
            ("R1_unnamed", steps(&[10])),
            // go@1 -> 2 (open); go@3..7 followed by go -> 4..8; go@8 -> 9 (open); go@11 look ok;
            // 19->20, 20->21 (open); 24..28 followed by go -> 25..29; 31..33 -> 32..34;
            // 40->41; 47->48; 50->51; 59->60; 62..64 -> 63..65; 68->69; 78->79; 83->84;
            // 87->88; 90->91; 96->97; go@100 is last: pending.
            (
                "R2",
                steps(&[
                    2, 4, 5, 6, 7, 8, 9, 20, 21, 25, 26, 27, 28, 29, 32, 33, 34, 41, 48, 51, 60,
                    63, 64, 65, 69, 79, 84, 88, 91, 97,
                ]),
            ),
            // look-around runs 44-46, 54-57, 66-67, 74-75, 85-86, 92-93.
            ("R3", steps(&[45, 46, 55, 56, 57, 67, 75, 86, 93])),
            ("R4", none()),
            ("R5", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn scienceworld_out7() {
    let Some(r) = audit_shared("scienceworld", "out7.txt", true) else {
        return;
    };
    check(
        &r,
        51,
        vec![
            // open door to the living room@12, go door to the living room@13 ok.
            ("R1", none()),
            // `open door`@2, go@3 ok.
            ("R1_between", none()),
            ("R1_unnamed", none()),
            // go@1 -> 2 (open); go@3..9 each followed by a go -> 4..10; `go door`@10 look@11 ok;
            // go@13 look ok; 20->21; 26..28 -> 27..29; 45->46; 48->49.
            (
                "R2",
                steps(&[2, 4, 5, 6, 7, 8, 9, 10, 21, 27, 28, 29, 46, 49]),
            ),
            // look-around run 22-25.
            ("R3", steps(&[23, 24, 25])),
            ("R4", none()),
            ("R5", none()),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Trucks. Notation in the comments: D(l) drive to l; L(p,a) load package p into area a;
// U(p,a) unload; V(p,l) deliver p at l. The truck starts at l3.
// Area a is occupied from L(_,a) until the next U(_,a). Loading/unloading front-to-back means:
// a2 needs a1 free, a3 needs a1 and a2 free, a4 needs a1, a2 and a3 free.

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out1() {
    let Some(r) = audit_shared("trucks", "out1.txt", true) else {
        return;
    };
    // Trips: D(l1) L(p1,a1) L(p6,a2) D(l2) U/V p1, U/V p6 @5-8; D(l1)@9 L p2 a1, p3 a2, p5 a3
    // @10-12, D(l2) U/V @14-19; D(l1)@20 L p4 a1, p7 a2, p8 a3 @21-23, D(l2) U/V @25-30;
    // D(l1)@31 L p9 a1, p10 a2 @32-33, D(l3) U/V @35-38; D(l1)@39 L p11 a1, p12 a2, p13 a3
    // @40-42, D(l4) U/V @44-49; D(l1)@50 L p14 a1, p15 a2 @51-52, D(l5) U/V @54-57;
    // D(l1)@58 L p16 a1, p17 a2, p18 a3 @59-61, D(l2) U/V @63-68; D(l1)@69 L p19 a1, p20 a2
    // @70-71, D(l4) U/V @73-76. The 77th line holds only spaces: not a step.
    // Every load into a2/a3 comes right after a load into a1 (and a3 after a2).
    let deeper = [3, 11, 12, 22, 23, 33, 41, 42, 52, 60, 61, 71];
    check(
        &r,
        76,
        vec![
            ("p1A", steps(&deeper)),
            // loads into a3: p5@12, p8@23, p13@42, p18@61.
            ("p1B", steps(&[12, 23, 42, 61])),
            ("p1C", none()),
            // V(p1)@6 before V(p2)@15.
            ("order_2_1", steps(&[6])),
            // V(p2)@15 before V(p3)@17.
            ("order_3_2", steps(&[15])),
            // V(p6)@8 before V(p5)@19: ok.
            ("order_6_5", none()),
            // V(p10)@38 before V(p11)@45.
            ("order_11_10", steps(&[38])),
            // V(p15)@57 before V(p16)@64.
            ("order_16_15", steps(&[57])),
            // V(p18)@68 before V(p19)@74.
            ("order_19_18", steps(&[68])),
            // V(p19)@74 before V(p20)@76.
            ("order_20_19", steps(&[74])),
            // every package loaded once.
            ("load_once", none()),
            // each area is unloaded before it is loaded again.
            ("load_target_free", none()),
            // each load into a2 (a3) happens while a1 (a1, a2) holds the package just loaded.
            ("load_front_free", steps(&deeper)),
            // unloads go a1, a2, a3 in order: the closer areas are already free.
            ("unload_front_free", none()),
            // every delivery right after the package's unload.
            ("deliver_after_unload", none()),
            // every delivery at the location of the last drive.
            ("deliver_at_truck", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out2() {
    let Some(r) = audit_shared("trucks", "out2.txt", true) else {
        return;
    };
    // `UNLOAD package1 from a1 of truck1 at l3 (DELIVER package1 at l1)` is an unload only (see
    // trucks.ron); the deliveries are the lines 57-68, made after D(l2)@54.
    // Loads: p1 a1@2, p6 a2@3; p5 a1, p2 a2, p3 a3, p7 a4 @8-11; p8 a1, p16 a2, p17 a3, p18 a4
    // @18-21; p20 a1@28; p9 a1, p10 a2 @32-33; p11 a1, p4 a2, p12 a3, p13 a4 @38-41;
    // p19 a1@48; p14 a1, p15 a2 @52-53. Unloads in the same area order right after each drive.
    // Deliveries: p1@57 l1, p6@58 l1, p9@59 l3, p10@60 l3, p11@61 l4, p4@62 l4, p12@63 l4,
    // p13@64 l4, p14@65 l5, p15@66 l5, p19@67 l4, p20@68 l2.
    let deeper = [3, 9, 10, 11, 19, 20, 21, 33, 39, 40, 41, 53];
    check(
        &r,
        68,
        vec![
            ("p1A", steps(&deeper)),
            ("p1B", steps(&[10, 11, 20, 21, 40, 41])),
            ("p1C", steps(&[11, 21, 41])),
            // V(p1)@57, package2 never delivered.
            ("order_2_1", steps(&[57])),
            // package2 never delivered.
            ("order_3_2", none()),
            // package5 never delivered.
            ("order_6_5", none()),
            // V(p10)@60 before V(p11)@61.
            ("order_11_10", steps(&[60])),
            // V(p15)@66, package16 never delivered.
            ("order_16_15", steps(&[66])),
            // package18 never delivered.
            ("order_19_18", none()),
            // V(p19)@67 before V(p20)@68.
            ("order_20_19", steps(&[67])),
            ("load_once", none()),
            ("load_target_free", none()),
            // each load into a2/a3/a4 happens while a1 holds the package loaded just before.
            ("load_front_free", steps(&deeper)),
            ("unload_front_free", none()),
            // every delivered package was unloaded earlier (5, 6, 30, 35, 36, 43-46, 50, 55, 56).
            ("deliver_after_unload", none()),
            // the truck is at l2 (D(l2)@54) for all deliveries 57-68: all but V(p20,l2)@68 are
            // elsewhere.
            (
                "deliver_at_truck",
                values(&[
                    (57, "l1"),
                    (58, "l1"),
                    (59, "l3"),
                    (60, "l3"),
                    (61, "l4"),
                    (62, "l4"),
                    (63, "l4"),
                    (64, "l4"),
                    (65, "l5"),
                    (66, "l5"),
                    (67, "l4"),
                ]),
            ),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out3() {
    let Some(r) = audit_shared("trucks", "out3.txt", true) else {
        return;
    };
    // `**LOAD**: Load package1 into area a1 of truck1 at l1.` format.
    // 1 D(l1) 2 L(p1,a1) 3 L(p6,a2) 4 D(l2) 5 U(p6,a2) 6 V(p6,l2) 7 L(p2,a1) 8 L(p3,a2)
    // 9 L(p5,a3) 10 L(p7,a4) 11 D(l1) 12 U(p1,a1) 13 V(p1,l1) 14 D(l2) 15-22 U/V p2 a1, p3 a2,
    // p5 a3, p7 a4 at l2; 23 D(l3) 24 L(p9,a1) 25 L(p10,a2) 26 D(l4) 27 U(p9,a1) 28 V(p9,l4)
    // 29 L(p4,a1) 30 L(p11,a2) 31 L(p12,a3) 32 L(p13,a4) 33 D(l3) 34 U(p10,a2) 35 V(p10,l3)
    // 36 D(l4) 37-44 U/V p4 a1, p11 a2, p12 a3, p13 a4 at l4; 45 D(l5) 46 L(p14,a1)
    // 47 L(p15,a2) 48 D(l2) 49 U(p14,a1) 50 V(p14,l2) 51 L(p16,a1) 52 L(p17,a2) 53 L(p18,a3)
    // 54 L(p20,a4) 55 D(l5) 56 U(p15,a2) 57 V(p15,l5) 58 D(l2) 59-66 U/V p16 a1, p17 a2,
    // p18 a3, p20 a4 at l2; 67 D(l4) 68 L(p19,a1) 69 D(l2) 70 U(p19,a1) 71 V(p19,l2).
    let deeper = [3, 8, 9, 10, 25, 30, 31, 32, 47, 52, 53, 54];
    check(
        &r,
        71,
        vec![
            ("p1A", steps(&deeper)),
            ("p1B", steps(&[9, 10, 31, 32, 53, 54])),
            ("p1C", steps(&[10, 32, 54])),
            // V(p1)@13 before V(p2)@16.
            ("order_2_1", steps(&[13])),
            // V(p2)@16 before V(p3)@18.
            ("order_3_2", steps(&[16])),
            // V(p6)@6 first: ok.
            ("order_6_5", none()),
            // V(p10)@35 before V(p11)@40.
            ("order_11_10", steps(&[35])),
            // V(p15)@57 before V(p16)@60.
            ("order_16_15", steps(&[57])),
            // V(p18)@64 before V(p19)@71.
            ("order_19_18", steps(&[64])),
            // V(p20)@66 before V(p19)@71: ok.
            ("order_20_19", none()),
            ("load_once", none()),
            // L(p2,a1)@7: p1 is in a1 since 2 (unloaded @12) -> 7 (a1);
            // L(p11,a2)@30: p10 in a2 since 25 (unloaded @34) -> 30 (a2);
            // L(p17,a2)@52: p15 in a2 since 47 (unloaded @56) -> 52 (a2).
            ("load_target_free", steps(&[7, 30, 52])),
            // every load into a2..a4 is made with a1 occupied (by p1, p2, p9, p4, p14, p16).
            ("load_front_free", steps(&deeper)),
            // U(p6,a2)@5 with p1 in a1; U(p10,a2)@34 with p4 in a1 (since 29);
            // U(p15,a2)@56 with p16 in a1 (since 51). Other unloads go a1, a2, a3, a4 in order.
            ("unload_front_free", steps(&[5, 34, 56])),
            ("deliver_after_unload", none()),
            // each delivery at the location of the last drive (V(p9,l4)@28 after D(l4)@26,
            // V(p14,l2)@50 after D(l2)@48, V(p19,l2)@71 after D(l2)@69: the wrong destinations
            // are not this rule's concern).
            ("deliver_at_truck", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out4_and_out8() {
    // out8.txt is the same plan as out4.txt (`**LOAD**: Load ... into area aN` format).
    for log in ["out4.txt", "out8.txt"] {
        let Some(r) = audit_shared("trucks", log, true) else {
            return;
        };
        // 1 D(l1) 2 L(p1,a1) 3 L(p6,a2) 4 D(l3) 5-8 U/V p1, p6 at l3; 9 D(l1) 10-13 L p2 a1,
        // p3 a2, p5 a3, p7 a4; 14 D(l2) 15-22 U/V at l2; 23 D(l1) 24-27 L p4 a1, p11 a2,
        // p12 a3, p13 a4; 28 D(l4) 29-36 U/V at l4; 37 D(l1) 38-41 L p8 a1, p16 a2, p17 a3,
        // p18 a4; 42 D(l2) 43-50 U/V at l2; 51 D(l1) 52-53 L p9 a1, p10 a2; 54 D(l3) 55-58 U/V;
        // 59 D(l1) 60-61 L p14 a1, p15 a2; 62 D(l5) 63-66 U/V; 67 D(l1) 68-69 L p19 a1, p20 a2;
        // 70 D(l4) 71-74 U/V.
        let deeper = [3, 11, 12, 13, 25, 26, 27, 39, 40, 41, 53, 61, 69];
        check(
            &r,
            74,
            vec![
                ("p1A", steps(&deeper)),
                ("p1B", steps(&[12, 13, 26, 27, 40, 41])),
                ("p1C", steps(&[13, 27, 41])),
                // V(p1)@6 before V(p2)@16.
                ("order_2_1", steps(&[6])),
                // V(p2)@16 before V(p3)@18.
                ("order_3_2", steps(&[16])),
                // V(p6)@8 before V(p5)@20.
                ("order_6_5", none()),
                // V(p11)@32 before V(p10)@58.
                ("order_11_10", none()),
                // V(p16)@46 before V(p15)@66.
                ("order_16_15", none()),
                // V(p18)@50 before V(p19)@72.
                ("order_19_18", steps(&[50])),
                // V(p19)@72 before V(p20)@74.
                ("order_20_19", steps(&[72])),
                ("load_once", none()),
                ("load_target_free", none()),
                ("load_front_free", steps(&deeper)),
                ("unload_front_free", none()),
                ("deliver_after_unload", none()),
                // V(p1,l3)@6 and V(p6,l3)@8 after D(l3)@4: where the truck is (the goal says l1,
                // but that is not this rule).
                ("deliver_at_truck", none()),
            ],
        );
    }
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out5() {
    let Some(r) = audit_shared("trucks", "out5.txt", true) else {
        return;
    };
    // `*LOAD package1 into truck1 area a1 at l1`, `*DRIVE truck1 from l3 to-l1 (Time: 1)`.
    // 1 D(l1) 2 L(p1,a1) 3 L(p6,a2) 4 D(l3) 5 U(p6,a2) 6 V(p6,l3) 7 U(p1,a1) 8 V(p1,l3)
    // 9 D(l1) 10-13 L p2 a1, p3 a2, p5 a3, p7 a4; 14 D(l2) 15-22 U/V in area order;
    // 23 D(l1) 24-27 L p8 a1, p16 a2, p17 a3, p18 a4; 28 D(l2) 29-36 U/V; 37 D(l1)
    // 38-41 L p4 a1, p11 a2, p12 a3, p13 a4; 42 D(l4) 43-50 U/V; 51 D(l1) 52 L(p19,a1)
    // 53 L(p20,a2) 54 D(l4) 55 U(p19,a1) 56 V(p19,l4) 57 D(l2) 58 U(p20,a2) 59 V(p20,l2)
    // 60 D(l1) 61-62 L p9 a1, p10 a2; 63 D(l3) 64-67 U/V; 68 D(l1) 69-70 L p14 a1, p15 a2;
    // 71 D(l5) 72-75 U/V.
    let deeper = [3, 11, 12, 13, 25, 26, 27, 39, 40, 41, 53, 62, 70];
    check(
        &r,
        75,
        vec![
            ("p1A", steps(&deeper)),
            ("p1B", steps(&[12, 13, 26, 27, 40, 41])),
            ("p1C", steps(&[13, 27, 41])),
            // V(p1)@8 before V(p2)@16.
            ("order_2_1", steps(&[8])),
            // V(p2)@16 before V(p3)@18.
            ("order_3_2", steps(&[16])),
            // V(p6)@6 before V(p5)@20.
            ("order_6_5", none()),
            // V(p11)@46 before V(p10)@67.
            ("order_11_10", none()),
            // V(p16)@32 before V(p15)@75.
            ("order_16_15", none()),
            // V(p18)@36 before V(p19)@56.
            ("order_19_18", steps(&[36])),
            // V(p19)@56 before V(p20)@59.
            ("order_20_19", steps(&[56])),
            ("load_once", none()),
            ("load_target_free", none()),
            ("load_front_free", steps(&deeper)),
            // U(p6,a2)@5 while p1 is still in a1 (unloaded @7); the other unloads go front to back
            // (U(p20,a2)@58 after U(p19,a1)@55).
            ("unload_front_free", steps(&[5])),
            ("deliver_after_unload", none()),
            // V(p6,l3)@6, V(p1,l3)@8 after D(l3)@4; V(p19,l4)@56 after D(l4)@54;
            // V(p20,l2)@59 after D(l2)@57; the others right after their trip's drive.
            ("deliver_at_truck", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out6() {
    let Some(r) = audit_shared("trucks", "out6.txt", true) else {
        return;
    };
    // `*LOAD package6 into a2 of truck1 at l1 (following p1B preference)`.
    // 1 D(l1) 2 L(p1,a1) 3 L(p6,a2) 4 D(l3) 5 U(p1,a1) 6 V(p1,l3) -- package6 stays in a2 and
    // is never unloaded nor delivered -- 7 D(l1) 8 L(p2,a1) 9 L(p3,a2) 10 L(p5,a3) 11 L(p7,a4)
    // 12 D(l2) 13-20 U/V p2 a1, p3 a2, p5 a3, p7 a4; 21 D(l1) 22-25 L p8 a1, p16 a2, p17 a3,
    // p18 a4; 26 D(l2) 27-34 U/V; 35 D(l1) 36 L(p20,a1) 37 L(p19,a2) 38 D(l4) 39 U(p19,a2)
    // 40 V(p19,l4) 41 D(l2) 42 U(p20,a1) 43 V(p20,l2) 44 D(l1) 45-48 L p4 a1, p11 a2, p12 a3,
    // p13 a4; 49 D(l4) 50-57 U/V; 58 D(l1) 59-60 L p9 a1, p10 a2; 61 D(l3) 62-65 U/V;
    // 66 D(l1) 67-68 L p14 a1, p15 a2; 69 D(l5) 70-73 U/V.
    let deeper = [3, 9, 10, 11, 23, 24, 25, 37, 46, 47, 48, 60, 68];
    check(
        &r,
        73,
        vec![
            ("p1A", steps(&deeper)),
            ("p1B", steps(&[10, 11, 24, 25, 47, 48])),
            ("p1C", steps(&[11, 25, 48])),
            // V(p1)@6 before V(p2)@14.
            ("order_2_1", steps(&[6])),
            // V(p2)@14 before V(p3)@16.
            ("order_3_2", steps(&[14])),
            // V(p5)@18, package6 never delivered.
            ("order_6_5", steps(&[18])),
            // V(p11)@53 before V(p10)@65.
            ("order_11_10", none()),
            // V(p16)@30 before V(p15)@73.
            ("order_16_15", none()),
            // V(p18)@34 before V(p19)@40.
            ("order_19_18", steps(&[34])),
            // V(p19)@40 before V(p20)@43.
            ("order_20_19", steps(&[40])),
            ("load_once", none()),
            // package6, loaded into a2 @3, is never unloaded (U(p3,a2)@15 takes package3 out,
            // not package6): every later load into a2 finds it occupied: 9, 23, 37, 46, 60, 68.
            ("load_target_free", steps(&[9, 23, 37, 46, 60, 68])),
            ("load_front_free", steps(&deeper)),
            // For the same reason every unload from a3 / a4 has a2 occupied: 17, 19, 31, 33,
            // 54, 56; and U(p19,a2)@39 while package20 is in a1 (loaded @36, unloaded @42).
            ("unload_front_free", steps(&[17, 19, 31, 33, 39, 54, 56])),
            ("deliver_after_unload", none()),
            // V(p1,l3)@6 after D(l3)@4, V(p19,l4)@40 after D(l4)@38, V(p20,l2)@43 after
            // D(l2)@41, the others right after their trip's drive.
            ("deliver_at_truck", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out7() {
    let Some(r) = audit_shared("trucks", "out7.txt", true) else {
        return;
    };
    // 1 D(l1) 2 L(p1,a1) 3 V(p1,l1) 4 L(p6,a1) 5 V(p6,l1) 6 L(p5,a1) 7 L(p2,a2) 8 L(p3,a3)
    // 9 L(p7,a4) 10 D(l2) 11-18 U/V p5 a1, p2 a2, p3 a3, p7 a4; 19 D(l1) 20-23 L p8 a1,
    // p16 a2, p17 a3, p20 a4; 24 D(l2) 25-32 U/V; 33 D(l1) 34 L(p18,a1) 35 L(p19,a2) 36 D(l2)
    // 37 U(p18,a1) 38 V(p18,l2) 39 D(l4) 40 U(p19,a2) 41 V(p19,l4) 42 D(l1) 43 L(p4,a1)
    // 44 L(p11,a2) 45 D(l4) 46-49 U/V; 50 D(l3) 51 L(p10,a1) 52 V(p10,l3) 53 L(p9,a1)
    // 54 V(p9,l3) 55 D(l1) 56 L(p12,a1) 57 L(p13,a2) 58 D(l4) 59-62 U/V; 63 D(l1)
    // 64 L(p14,a1) 65 L(p15,a2) 66 D(l5) 67-70 U/V.
    check(
        &r,
        70,
        vec![
            ("p1A", steps(&[7, 8, 9, 21, 22, 23, 35, 44, 57, 65])),
            ("p1B", steps(&[8, 9, 22, 23])),
            ("p1C", steps(&[9, 23])),
            // V(p1)@3 before V(p2)@14.
            ("order_2_1", steps(&[3])),
            // V(p2)@14 before V(p3)@16.
            ("order_3_2", steps(&[14])),
            // V(p6)@5 before V(p5)@12.
            ("order_6_5", none()),
            // V(p11)@49 before V(p10)@52.
            ("order_11_10", none()),
            // V(p16)@28 before V(p15)@70.
            ("order_16_15", none()),
            // V(p18)@38 before V(p19)@41.
            ("order_19_18", steps(&[38])),
            // V(p20)@32 before V(p19)@41.
            ("order_20_19", none()),
            ("load_once", none()),
            // p1 loaded into a1 @2 is delivered without an unload, so a1 stays occupied:
            // L(p6,a1)@4 and L(p5,a1)@6 -> 4, 6 (a1); U(p5,a1)@11 frees a1 ... L(p10,a1)@51 is
            // never unloaded: L(p9,a1)@53 and L(p12,a1)@56 -> 53, 56 (a1).
            // Per package: U(p5,a1)@11 takes package5 out, but package1 and package6 (delivered
            // without an unload) stay in a1 for ever, so every load into a1 after step 2 finds it
            // occupied: 4, 6, 20, 34, 43, 51, 53, 56, 64.
            (
                "load_target_free",
                steps(&[4, 6, 20, 34, 43, 51, 53, 56, 64]),
            ),
            // loads into a2..a4 made with a1 occupied (p5, p8, p18, p4, p12, p14 loaded just before).
            (
                "load_front_free",
                steps(&[7, 8, 9, 21, 22, 23, 35, 44, 57, 65]),
            ),
            // a1 is never free (package1, package6), so every unload from a2..a4 violates:
            // 13, 15, 17, 27, 29, 31, 40, 48, 61, 69.
            (
                "unload_front_free",
                steps(&[13, 15, 17, 27, 29, 31, 40, 48, 61, 69]),
            ),
            // delivered without an unload since the load: p1@3, p6@5, p10@52, p9@54.
            (
                "deliver_after_unload",
                values(&[
                    (3, "package1"),
                    (5, "package6"),
                    (52, "package10"),
                    (54, "package9"),
                ]),
            ),
            // every delivery at the location of the last drive.
            ("deliver_at_truck", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out9() {
    let Some(r) = audit_shared("trucks", "out9.txt", true) else {
        return;
    };
    // Like out4 (`*LOAD ... into aN of truck1 at lK`, `(using preference p1B)` remarks) up to 37;
    // then 37 D(l1) 38 L(p20,a1) 39 L(p19,a2) 40 D(l4) 41 U(p19,a2) 42 V(p19,l4) 43 U(p20,a1)
    // 44 D(l2) 45 V(p20,l2) 46 D(l1) 47-50 L p4 a1, p11 a2, p12 a3, p13 a4; 51 D(l4) 52-59 U/V;
    // 60 D(l1) 61-62 L p9 a1, p10 a2; 63 D(l3) 64-67 U/V; 68 D(l1) 69-70 L p14 a1, p15 a2;
    // 71 D(l5) 72-75 U/V. Before: 1 D(l1) 2-3 L p1 a1, p6 a2; 4 D(l3) 5-8 U/V at l3; 9 D(l1)
    // 10-13 L p2 a1, p3 a2, p5 a3, p7 a4; 14 D(l2) 15-22 U/V; 23 D(l1) 24-27 L p8 a1, p16 a2,
    // p17 a3, p18 a4; 28 D(l2) 29-36 U/V.
    let deeper = [3, 11, 12, 13, 25, 26, 27, 39, 48, 49, 50, 62, 70];
    check(
        &r,
        75,
        vec![
            ("p1A", steps(&deeper)),
            ("p1B", steps(&[12, 13, 26, 27, 49, 50])),
            ("p1C", steps(&[13, 27, 50])),
            // V(p1)@6 before V(p2)@16.
            ("order_2_1", steps(&[6])),
            // V(p2)@16 before V(p3)@18.
            ("order_3_2", steps(&[16])),
            ("order_6_5", none()),
            // V(p11)@55 before V(p10)@67.
            ("order_11_10", none()),
            // V(p16)@32 before V(p15)@75.
            ("order_16_15", none()),
            // V(p18)@36 before V(p19)@42.
            ("order_19_18", steps(&[36])),
            // V(p19)@42 before V(p20)@45.
            ("order_20_19", steps(&[42])),
            ("load_once", none()),
            ("load_target_free", none()),
            ("load_front_free", steps(&deeper)),
            // U(p19,a2)@41 while p20 is still in a1 (unloaded only @43).
            ("unload_front_free", steps(&[41])),
            // V(p20,l2)@45 after U(p20,a1)@43: ok.
            ("deliver_after_unload", none()),
            // V(p20,l2)@45 after D(l2)@44: ok; all others right after their trip's drive.
            ("deliver_at_truck", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out10() {
    let Some(r) = audit_shared("trucks", "out10.txt", true) else {
        return;
    };
    // `LOAD(truck1, package1, a3, l1)` format.
    // 1 D(l1) 2 L(p1,a3) 3 L(p6,a2) 4 L(p2,a1) 5 D(l2) 6 U(p2,a1) 7 V(p2,l2) 8 L(p3,a1)
    // 9 L(p5,a2) 10 L(p7,a3) 11 D(l1) 12 U(p6,a2) 13 V(p6,l1) 14 L(p8,a2) 15 L(p16,a3)
    // 16 D(l2) 17 U(p3,a1) 18 V 19 U(p5,a2) 20 V 21 U(p16,a3) 22 V(p16,l2) 23 L(p17,a1)
    // 24 L(p18,a2) 25 L(p20,a3) 26 D(l4) 27 U(p20,a3) 28 L(p4,a3) 29 L(p11,a2) 30 L(p19,a1)
    // 31 D(l3) 32 U(p19,a1) 33 V(p19,l3) 34 L(p9,a1) 35 L(p10,a2) 36 D(l4) 37 U(p11,a2)
    // 38 V(p11,l4) 39 U(p4,a3) 40 V(p4,l4) 41 L(p12,a1) 42 L(p13,a2) 43 D(l5) 44 U(p12,a1)
    // 45 V(p12,l5) 46 U(p13,a2) 47 V(p13,l5) 48 L(p14,a1) 49 L(p15,a2) 50 D(l2) 51 U(p18,a2)
    // 52 V 53 U(p17,a1) 54 V 55 U(p15,a2) 56 V(p15,l2) 57 D(l3) 58 U(p10,a2) 59 V
    // 60 U(p9,a1) 61 V(p9,l3) 62 D(l1) 63 U(p1,a3) 64 V(p1,l1) 65 U(p8,a2) 66 V
    // 67 U(p7,a3) 68 V(p7,l1) 69 D(l2) 70 U(p14,a1) 71 V(p14,l2) 72 U(p20,a3) 73 V(p20,l2).
    check(
        &r,
        73,
        vec![
            // loads into a2/a3.
            (
                "p1A",
                steps(&[2, 3, 9, 10, 14, 15, 24, 25, 28, 29, 35, 42, 49]),
            ),
            ("p1B", steps(&[2, 10, 15, 25, 28])),
            ("p1C", none()),
            // V(p2)@7 before V(p1)@64: ok.
            ("order_2_1", none()),
            // V(p2)@7 before V(p3)@18.
            ("order_3_2", steps(&[7])),
            // V(p6)@13 before V(p5)@20.
            ("order_6_5", none()),
            // V(p11)@38 before V(p10)@59.
            ("order_11_10", none()),
            // V(p16)@22 before V(p15)@56.
            ("order_16_15", none()),
            // V(p19)@33 before V(p18)@52.
            ("order_19_18", none()),
            // V(p19)@33 before V(p20)@73.
            ("order_20_19", steps(&[33])),
            // twenty distinct packages, each loaded once.
            ("load_once", none()),
            // L(p5,a2)@9: p6 in a2 since 3 (unloaded @12); L(p7,a3)@10: p1 in a3 since 2;
            // L(p16,a3)@15: a3 loaded @10, not unloaded; L(p11,a2)@29: a2 loaded @24, not
            // unloaded; L(p19,a1)@30: a1 loaded @23, not unloaded; L(p10,a2)@35: a2 loaded @29;
            // L(p12,a1)@41: a1 loaded @34, next unload from a1 only @44.
            // (L(p9,a1)@34 comes after U(p19,a1)@32: a1 counts as free.)
            // Per package, more areas stay occupied: package1 stays in a3 from @2 to U(p1,a3)@63
            // (U(p7,a3)@21.. take out other packages), package6 in a2 @3..@12, package7 in a3
            // from @10, package8 in a2 from @14 to @65: loads into a2 at 9, 14, 24, 29, 35, 42,
            // 49, into a3 at 10, 15, 25, 28, and into a1 at 30 (p17 since 23), 34 (p17), 41 (p9),
            // 48 (p17).
            (
                "load_target_free",
                steps(&[9, 10, 14, 15, 24, 25, 28, 29, 30, 34, 35, 41, 42, 48, 49]),
            ),
            // L(a3)@2 and L(a2)@3 into an empty truck: ok. With a1 occupied (by p3 since 8,
            // p17 since 23, p9 since 34, p12 since 41, p14 since 48): 9, 10, 14, 15, 24, 25, 28,
            // 29, 35, 42, 49.
            (
                "load_front_free",
                steps(&[9, 10, 14, 15, 24, 25, 28, 29, 35, 42, 49]),
            ),
            // U(p6,a2)@12 with p3 in a1; U(p20,a3)@27 with p17 in a1; U(p11,a2)@37 and
            // U(p4,a3)@39 with p9 in a1 (since 34); U(p18,a2)@51 with p14 in a1 (since 48).
            // U(p5,a2)@19 after U(p3,a1)@17, U(p16,a3)@21 after a1/a2 unloads, U(p13,a2)@46
            // after U(p12,a1)@44, 55/58 after U(p17,a1)@53, 63-72 after U(p9,a1)@60 and
            // U(p18,a2)@51: ok.
            // Per package, a1 holds package17 from @23 to @53 and package9 from @34 to @60,
            // and a2 package8 from @14 to @65: also U(p16,a3)@21 (a2: p8), U(p13,a2)@46,
            // U(p15,a2)@55, U(p10,a2)@58 (a1: p9), U(p1,a3)@63, U(p7,a3)@67 (a2: p8; a1: p14).
            (
                "unload_front_free",
                steps(&[12, 21, 27, 37, 39, 46, 51, 55, 58, 63, 65, 67]),
            ),
            // every delivery right after the package's unload (p20 @73 after U(p20,a3)@72).
            ("deliver_after_unload", none()),
            // every delivery at the location of the last drive.
            ("deliver_at_truck", none()),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out11() {
    let Some(r) = audit_shared("trucks", "out11.txt", true) else {
        return;
    };
    // `LOAD package1 into a1` (no truck, no location), no UNLOAD at all.
    // 1-5 L p1, p6, p11, p16, p20 into a1 (truck at l3); 6 D(l1) 7 V(p1,l1) 8 D(l2) 9 V(p6,l1)
    // 10 D(l2) 11 V(p16,l2) 12 D(l2) 13 V(p20,l2) 14-28 L p2, p3, p4, p5, p7, p8, p9, p10,
    // p12, p13, p14, p15, p17, p18, p19 into a1; then pairs D/V: 29 D(l2) 30 V(p2,l2)
    // 31 D(l2) 32 V(p3,l2) 33 D(l2) 34 V(p4,l2) 35 D(l2) 36 V(p5,l2) 37 D(l2) 38 V(p7,l2)
    // 39 D(l2) 40 V(p8,l2) 41 D(l2) 42 V(p9,l3) 43 D(l3) 44 V(p10,l3) 45 D(l3) 46 V(p12,l4)
    // 47 D(l4) 48 V(p13,l4) 49 D(l4) 50 V(p14,l4) 51 D(l4) 52 V(p15,l5) 53 D(l5)
    // 54 V(p17,l2) 55 D(l2) 56 V(p18,l2) 57 D(l2) 58 V(p19,l4) 59 D(l4) 60 V(p20,l2).
    let a1_full: Vec<usize> = (2..=5).chain(14..=28).collect();
    check(
        &r,
        60,
        vec![
            // a1 only.
            ("p1A", none()),
            ("p1B", none()),
            ("p1C", none()),
            // V(p1)@7 before V(p2)@30.
            ("order_2_1", steps(&[7])),
            // V(p2)@30 before V(p3)@32.
            ("order_3_2", steps(&[30])),
            // V(p6)@9 before V(p5)@36.
            ("order_6_5", none()),
            // V(p10)@44, package11 never delivered.
            ("order_11_10", steps(&[44])),
            // V(p16)@11 before V(p15)@52.
            ("order_16_15", none()),
            // V(p18)@56 before V(p19)@58.
            ("order_19_18", steps(&[56])),
            // V(p20)@13 before V(p19)@58.
            ("order_20_19", none()),
            // twenty distinct packages.
            ("load_once", none()),
            // a1 is never unloaded: every load after the first one is into an occupied a1.
            ("load_target_free", steps(&a1_full)),
            // a1 has no closer area.
            ("load_front_free", none()),
            ("unload_front_free", none()),
            // nothing is ever unloaded: every delivery (package20 twice, @13 and @60).
            (
                "deliver_after_unload",
                values(&[
                    (7, "package1"),
                    (9, "package6"),
                    (11, "package16"),
                    (13, "package20"),
                    (30, "package2"),
                    (32, "package3"),
                    (34, "package4"),
                    (36, "package5"),
                    (38, "package7"),
                    (40, "package8"),
                    (42, "package9"),
                    (44, "package10"),
                    (46, "package12"),
                    (48, "package13"),
                    (50, "package14"),
                    (52, "package15"),
                    (54, "package17"),
                    (56, "package18"),
                    (58, "package19"),
                    (60, "package20"),
                ]),
            ),
            // truck at l2 (D@8) for V(p6,l1)@9; at l2 (D@41) for V(p9,l3)@42; at l3 (D@45) for
            // V(p12,l4)@46; at l4 (D@51) for V(p15,l5)@52; at l5 (D@53) for V(p17,l2)@54;
            // at l2 (D@57) for V(p19,l4)@58; at l4 (D@59) for V(p20,l2)@60. The others match.
            (
                "deliver_at_truck",
                values(&[
                    (9, "l1"),
                    (42, "l3"),
                    (46, "l4"),
                    (52, "l5"),
                    (54, "l2"),
                    (58, "l4"),
                    (60, "l2"),
                ]),
            ),
        ],
    );
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn trucks_out12() {
    let Some(r) = audit_shared("trucks", "out12.txt", true) else {
        return;
    };
    // Lines `1.`..`20.` load package1..package20 (in that order) into a1; then the numbering
    // restarts: `1. **DRIVE from l3 to-l1**` is step 21, ..., `38. **UNLOAD package20 at l4**`
    // is step 58. The unloads name no area, so they free none; there is no DELIVER.
    // package10 loaded @10 is not package1 (loaded @1): no double load.
    check(
        &r,
        58,
        vec![
            ("p1A", none()),
            ("p1B", none()),
            ("p1C", none()),
            ("order_2_1", none()),
            ("order_3_2", none()),
            ("order_6_5", none()),
            ("order_11_10", none()),
            ("order_16_15", none()),
            ("order_19_18", none()),
            ("order_20_19", none()),
            ("load_once", none()),
            // package1 in a1 since step 1: the loads at 2..20 are into an occupied a1.
            ("load_target_free", steps(&(2..=20).collect::<Vec<_>>())),
            ("load_front_free", none()),
            ("unload_front_free", none()),
            ("deliver_after_unload", none()),
            ("deliver_at_truck", none()),
        ],
    );
}
