//! `cargo xtask bench-report [--write]`: runs the short benchmark report (issue 5) and prints
//! its markdown table; with `--write`, also replaces the table in `BENCHMARKS.md`.
//!
//! The report itself is the root package's bench target `benches/report.rs` (it shares the
//! workload code of the criterion benches in `benches/support/`), run with
//! `cargo bench --bench report` so that it is built with optimizations whatever profile the
//! xtask runs in. It takes about a minute and a half on 2 cores, plus the build.

use crate::error::{io, Error};
use std::path::Path;
use std::process::{Command, Stdio};

/// The markers around the generated table in `BENCHMARKS.md`.
pub const BEGIN: &str = "<!-- bench-report:begin -->";
/// See [`BEGIN`].
pub const END: &str = "<!-- bench-report:end -->";

/// Runs the report; with `write`, puts the table into `BENCHMARKS.md`. Returns the table.
///
/// # Errors
/// The build or run failed, or `BENCHMARKS.md` has no markers to replace between.
pub fn run(root: &Path, write: bool) -> Result<String, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["bench", "--bench", "report"])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(Error::Cargo)?;
    if !out.status.success() {
        return Err(Error::BenchFailed(out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let table = extract(&stdout).ok_or(Error::NoTable)?;
    if write {
        let path = root.join("BENCHMARKS.md");
        let doc = std::fs::read_to_string(&path).map_err(io(&path))?;
        let updated = replace(&doc, &table).ok_or_else(|| Error::NoMarkers {
            path: path.clone(),
            begin: BEGIN,
            end: END,
        })?;
        std::fs::write(&path, updated).map_err(io(&path))?;
    }
    Ok(table)
}

/// The text between the markers, markers included.
fn extract(s: &str) -> Option<String> {
    let a = s.find(BEGIN)?;
    let b = s[a..].find(END)? + a + END.len();
    Some(s[a..b].to_string())
}

/// `doc` with the marked block replaced by `table` (which carries its markers).
fn replace(doc: &str, table: &str) -> Option<String> {
    let a = doc.find(BEGIN)?;
    let b = doc[a..].find(END)? + a + END.len();
    Some(format!("{}{}{}", &doc[..a], table, &doc[b..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_marked_table() {
        let out = format!("noise\n{BEGIN}\n| new |\n{END}\nmore");
        let table = extract(&out).unwrap();
        assert_eq!(table, format!("{BEGIN}\n| new |\n{END}"));
        let doc = format!("# B\n\n{BEGIN}\n| old |\n{END}\n\ntext\n");
        assert_eq!(
            replace(&doc, &table).unwrap(),
            format!("# B\n\n{BEGIN}\n| new |\n{END}\n\ntext\n")
        );
        assert_eq!(replace("no markers", &table), None);
    }
}
