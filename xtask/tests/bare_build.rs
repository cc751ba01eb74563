//! The default build needs only the Rust toolchain (issue 21 §1): in the default features of
//! every workspace member, the dependency graph that `cargo build` and `cargo test` compile
//! (`cargo tree -e normal,build,dev`) holds no crate whose build needs a system tool: llama.cpp's
//! binding (`llama-cpp-sys-2`, built by cmake), `bindgen` / `clang-sys` (libclang), `cmake`. They
//! come only with the opt-in feature `embed`, which the control below checks the reader sees.
//!
//! (A C compiler is not a system tool here: rustc links with `cc` on every platform it targets.)
//! Reads the default graph offline; the control with the feature may fetch its packages.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Crates whose build script needs something beyond the Rust toolchain and a C compiler.
const NEEDS_SYSTEM_TOOLS: [&str; 5] = [
    "llama-cpp-sys-2",
    "llama-cpp-2",
    "bindgen",
    "clang-sys",
    "cmake",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

fn cargo(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("cargo prints UTF-8")
}

/// The workspace's members, by name.
fn members() -> Vec<String> {
    let meta: serde_json::Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--offline",
        "--no-deps",
        "--format-version",
        "1",
    ]))
    .expect("cargo metadata prints JSON");
    meta["packages"]
        .as_array()
        .expect("a package list")
        .iter()
        .map(|p| p["name"].as_str().expect("a name").to_string())
        .collect()
}

/// The packages `cargo build` / `cargo test` of `package` compile (normal, build and dev
/// dependencies, transitively), with `features` on top of the defaults. Without features the
/// graph is read offline (the build being tested downloaded every package of it); with them,
/// cargo may fetch the packages only those features bring (a fresh machine has never
/// downloaded llama.cpp's binding), at the versions of `Cargo.lock`.
fn graph(package: &str, features: &[&str]) -> BTreeSet<String> {
    let mode = if features.is_empty() {
        "--offline"
    } else {
        "--locked"
    };
    let mut args = vec![
        "tree",
        mode,
        "-e",
        "normal,build,dev",
        "--prefix",
        "none",
        "--format",
        "{p}",
        "-p",
        package,
    ];
    let joined = features.join(",");
    if !features.is_empty() {
        args.extend(["--features", &joined]);
    }
    let names: BTreeSet<String> = cargo(&args)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    assert!(
        names.contains(package),
        "cargo tree -p {package}: {names:?}"
    );
    names
}

#[test]
fn no_member_needs_a_system_tool_in_its_default_features() {
    let members = members();
    // The reader sees the real workspace: the CLI and the crate of the embedded model are in it.
    assert!(
        members.iter().any(|m| m == "trac-cli") && members.iter().any(|m| m == "trac-embed"),
        "{members:?}"
    );
    let mut found = Vec::new();
    for m in &members {
        let g = graph(m, &[]);
        for tool in NEEDS_SYSTEM_TOOLS {
            if g.contains(tool) {
                found.push(format!("{m} -> {tool}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the default build needs a system tool (cmake, libclang): {found:?}; put it behind the \
         feature `embed` (see crates/trac-embed/Cargo.toml)"
    );
}

#[test]
fn the_feature_embed_brings_llama_cpp_and_its_build_tools() {
    // The control: with the feature, the same reader finds llama.cpp's binding and its build
    // tools, so the test above would see them if a default feature pulled them in.
    for (package, feature) in [
        ("trac-embed", "embed"),
        ("trac-cli", "embed"),
        ("trac", "embed"),
    ] {
        let g = graph(package, &[feature]);
        for tool in ["llama-cpp-sys-2", "bindgen", "cmake"] {
            assert!(
                g.contains(tool),
                "{package} --features {feature}: no {tool} in {g:?}"
            );
        }
    }
}
