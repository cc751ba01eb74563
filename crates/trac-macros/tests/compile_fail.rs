//! Compile-fail tests of `trac_monitor!` (trybuild): the error messages and their spans are
//! pinned in `tests/ui/*.stderr`.
//!
//! The snapshots are pinned to the toolchain of the project's machines (rustc 1.95): compiler
//! output changes between versions, so under another version the test is reported as ignored
//! (`cfg(other_rustc)`, build/needs.rs); under `CI=true` it runs and fails there.
//! To update them after a deliberate change: `TRYBUILD=overwrite cargo test -p trac-macros --test
//! compile_fail`, then review the diff.

/// The rustc version the `.stderr` files were written with.
const PINNED: &str = "rustc 1.95.";

#[test]
#[cfg_attr(
    other_rustc,
    ignore = "the compile-fail snapshots pin rustc 1.95's messages"
)]
fn ui() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    assert!(
        version.starts_with(PINNED),
        "the compile-fail snapshots are for {PINNED}x, this is {version:?}: update them (see above)"
    );
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
