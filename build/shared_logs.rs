//! Build script of the packages whose tests read the shared agent logs
//! (`../shared/data/paper-traces` beside the workspace; see README.md, "Testing").
//!
//! Sets `cfg(no_shared_logs)` when the logs are missing and `CI` is not `true`: the tests that
//! read them carry `#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]`,
//! so the test summary counts them as ignored, never as passed. Under `CI=true` the cfg is never
//! set: the tests run, and fail with a message naming the missing folder.
//!
//! Rerun when `CI` changes or the folder changes or disappears. A folder that appears after a
//! build is seen at the next build of the package (`touch` its Cargo.toml to force it).
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_shared_logs)");
    println!("cargo::rerun-if-env-changed=CI");
    // (Paths relative to the package; a change of this script reruns it anyway.)
    println!("cargo::rerun-if-changed=Cargo.toml");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = workspace_root(&manifest);
    let logs = root.join("../shared/data/paper-traces");
    if logs.is_dir() {
        println!("cargo::rerun-if-changed={}", logs.display());
    } else if std::env::var("CI").as_deref() != Ok("true") {
        println!("cargo::rustc-cfg=no_shared_logs");
    }
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
