//! `forall` over several variables from the command line: `trac check`, `trac audit --formula`
//! (every engine, with hand-derived violation steps) and `trac compile`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn trac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run trac")
}

fn temp_file(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trac-multivar-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(content.as_bytes())
        .unwrap();
    p
}

#[test]
fn check_prints_every_variable_and_refuses_an_unused_one() {
    let o = trac(&[
        "check",
        "forall tool, rid: G(call(tool) & modify(rid) -> O confirm)",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("formula:      forall tool, rid: G((call(tool) & modify(rid)) -> O confirm)")
            || out.contains(
                "formula:      forall tool, rid: G(call(tool) & modify(rid) -> O confirm)"
            ),
        "{out}"
    );
    let o = trac(&["check", "forall tool, rid, rid: G call(tool)"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("`rid` is quantified twice"), "{e}");
    let o = trac(&["check", "forall tool, rid: G call(tool)"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("`rid` is not used"), "{e}");
}

#[test]
fn audit_formula_over_two_variables_on_every_engine() {
    // Steps: 1 allowed(upd, R1); 2 call(upd) + target(R1): allowed; 3 call(upd) + target(R2):
    // never allowed, violated for (upd, R2); 4 call(del) + target(R1): violated for (del, R1).
    let trace = temp_file(
        "two.jsonl",
        concat!(
            "{\"labels\": [\"allowed(upd, R1)\"]}\n",
            "{\"labels\": [\"call(upd)\", \"target(R1)\"]}\n",
            "{\"labels\": [\"call(upd)\", \"target(R2)\"]}\n",
            "{\"labels\": [\"call(del)\", \"target(R1)\"]}\n",
        ),
    );
    let f = "forall tool, rid: G(call(tool) & target(rid) -> O allowed(tool, rid))";
    for engine in ["compiled", "progression", "cross-check"] {
        let o = trac(&[
            "audit",
            "--formula",
            f,
            "--engine",
            engine,
            "--format",
            "jsonl",
            trace.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got: Vec<(u64, String)> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["verdict"] == "violated" && r.get("end").is_none())
            .map(|r| {
                (
                    r["step"].as_u64().unwrap(),
                    r["value"].as_str().unwrap_or("null").to_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![(3, "upd, R2".to_string()), (4, "del, R1".to_string())],
            "{engine}"
        );
    }
}

#[test]
fn compile_takes_the_body_of_a_several_variable_property() {
    let o = trac(&[
        "compile",
        "forall p, a: G(load(p, a) -> X unload(p, a))",
        "--emit",
        "hoa",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("load(p, a)"), "{out}");
}
