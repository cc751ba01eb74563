//! The crate layering of ARCHITECTURE.md, enforced (issue 8 §3): the proc macro's build pulls no
//! I/O crate, `trac-core` depends on serde alone, and no monitor crate reaches the network.
//!
//! Each check reads the normal-dependency closure of a package from `cargo tree -e normal`
//! (build and dev dependencies excluded, features resolved as when building that package alone),
//! offline, from the workspace's `Cargo.lock`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The names of the packages in the normal-dependency closure of `package` (itself included).
fn closure(package: &str) -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root");
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "-p", package])
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: BTreeSet<String> = String::from_utf8(out.stdout)
        .expect("cargo tree prints UTF-8")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    assert!(
        names.contains(package),
        "cargo tree -p {package} did not list the package itself: {names:?}"
    );
    names
}

fn assert_none_of(package: &str, closure: &BTreeSet<String>, forbidden: &[&str]) {
    let found: Vec<&&str> = forbidden.iter().filter(|f| closure.contains(**f)).collect();
    assert!(
        found.is_empty(),
        "{package} depends (normal dependencies, transitively) on {found:?}; the layering of \
         ARCHITECTURE.md forbids it. Closure: {closure:?}"
    );
}

#[test]
fn the_proc_macro_build_pulls_no_io_crate() {
    let c = closure("trac-macros");
    // The reader sees the real graph: the macro compiles monitors with trac-compile.
    assert!(
        c.contains("trac-compile") && c.contains("trac-core"),
        "{c:?}"
    );
    assert_none_of(
        "trac-macros",
        &c,
        &[
            "regex",
            "serde_json",
            "ureq",
            "trac-runtime",
            "trac-llm",
            "trac-agent",
            "trac-cli",
        ],
    );
}

#[test]
fn trac_core_depends_on_serde_alone() {
    let c = closure("trac-core");
    // serde, its derive macro and the derive's own dependencies.
    let allowed = [
        "trac-core",
        "serde",
        "serde_core",
        "serde_derive",
        "proc-macro2",
        "quote",
        "syn",
        "unicode-ident",
    ];
    let extra: Vec<&String> = c
        .iter()
        .filter(|n| !allowed.contains(&n.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "trac-core depends on {extra:?} beyond serde"
    );
    assert!(c.contains("serde"), "{c:?}");
}

#[test]
fn monitor_crates_stay_off_the_network() {
    for package in [
        "trac-core",
        "trac-ltl",
        "trac-spec",
        "trac-compile",
        "trac-runtime",
    ] {
        let c = closure(package);
        assert_none_of(
            package,
            &c,
            &[
                "trac-llm",
                "trac-agent",
                "trac-gateway",
                "ureq",
                "tiny_http",
            ],
        );
    }
    // The reader sees the real graph: the runtime's labelers use regexes, the LLM client ureq.
    assert!(closure("trac-runtime").contains("regex"));
    assert!(closure("trac-llm").contains("ureq"));
}

#[test]
fn the_gateway_sits_above_the_agent_and_below_the_cli() {
    // The HTTP proxy is its own crate: the monitoring stays in the library (trac-agent's
    // Supervisor over trac-runtime's driver), the server is tiny_http, the upstream client ureq.
    let c = closure("trac-gateway");
    for needed in ["trac-agent", "trac-runtime", "tiny_http", "ureq"] {
        assert!(c.contains(needed), "trac-gateway lacks {needed}: {c:?}");
    }
    assert_none_of("trac-gateway", &c, &["trac-cli", "trac-embed", "trac-py"]);
    assert_none_of(
        "trac-agent",
        &closure("trac-agent"),
        &["trac-gateway", "tiny_http"],
    );
    assert!(closure("trac-cli").contains("trac-gateway"));
}

#[test]
fn the_python_package_sits_above_the_agent_and_beside_the_gateway() {
    // trac-py wraps trac-agent's Supervisor (`trac.Supervisor`, TRAC_P+I for agents that run in
    // the Python process) rather than copying its check / commit / look-ahead: one supervisor,
    // so a Python agent, `trac run` and `trac gateway` get the same verdicts. trac-agent brings
    // trac-llm (and ureq) along, which the package does not call: the package reaches the
    // network only if a caller's code does. It stays off the HTTP server, the command line and
    // the embedded llama.cpp (its wheel needs no cmake nor libclang).
    let c = closure("trac-py");
    for needed in ["trac-agent", "trac-runtime", "trac-compile", "trac-spec"] {
        assert!(c.contains(needed), "trac-py lacks {needed}: {c:?}");
    }
    assert_none_of(
        "trac-py",
        &c,
        &["trac-gateway", "tiny_http", "trac-cli", "trac-embed"],
    );
    // Nothing below depends on the Python package.
    for package in ["trac-agent", "trac-gateway", "trac-cli"] {
        assert_none_of(package, &closure(package), &["trac-py", "pyo3"]);
    }
}

#[test]
fn the_experiments_sit_beside_the_agent_below_the_cli() {
    // The paper's comparisons (trac judge, trac experiment) are library code over trac-llm's
    // models and the runtime's monitors: no HTTP server, no command line, no embedded llama.cpp;
    // nothing but the CLI and the benches depend on them.
    let c = closure("trac-experiments");
    for needed in ["trac-llm", "trac-runtime", "trac-compile", "trac-spec"] {
        assert!(c.contains(needed), "trac-experiments lacks {needed}: {c:?}");
    }
    assert_none_of(
        "trac-experiments",
        &c,
        &[
            "trac-cli",
            "trac-gateway",
            "trac-agent",
            "trac-embed",
            "trac-py",
            "tiny_http",
        ],
    );
    for package in ["trac-agent", "trac-gateway", "trac-py", "trac-llm"] {
        assert_none_of(package, &closure(package), &["trac-experiments"]);
    }
    assert!(closure("trac-cli").contains("trac-experiments"));
}
