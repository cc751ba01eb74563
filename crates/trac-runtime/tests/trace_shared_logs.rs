//! Reads every real action log in the shared paper traces and checks that each line yields an
//! event with a non-empty action, without step numbers or markdown decoration left over.

use std::path::{Path, PathBuf};
use trac_runtime::trace::{open, TraceFormat};

const SHARED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/paper-traces"
);

/// The shared logs directory (always `Some`). Panics when it is missing: the test is ignored
/// (`cfg(no_shared_logs)`, build/needs.rs) when it was missing at build time outside CI.
fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(SHARED);
    assert!(
        dir.is_dir(),
        "the shared logs are missing at {} (CI=true, or removed since the build)",
        dir.display()
    );
    Some(dir.to_path_buf())
}

fn logs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for domain in ["trucks", "textworld", "scienceworld"] {
        let d = dir.join(domain);
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "txt") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn every_shared_log_line_gives_a_clean_action() {
    let Some(dir) = shared_dir() else { return };
    let files = logs(&dir);
    assert!(
        files.len() >= 20,
        "expected the paper's logs, found {}",
        files.len()
    );
    let mut events = 0;
    let mut odd = Vec::new();
    for path in files {
        let reader = open(&path).unwrap();
        assert_eq!(reader.format(), TraceFormat::Text, "{}", path.display());
        let text = std::fs::read_to_string(&path).unwrap();
        let nonblank = text.lines().filter(|l| !l.trim().is_empty()).count();
        let mut n = 0;
        for item in reader {
            let ev = item.unwrap_or_else(|e| panic!("{e}"));
            n += 1;
            assert_eq!(ev.step, n);
            let action = ev.output.as_deref().unwrap();
            let at = format!(
                "{}:{}: {:?} -> {:?}",
                path.display(),
                ev.line,
                ev.raw,
                action
            );
            assert!(!action.is_empty(), "{at}");
            assert_eq!(action, action.trim(), "{at}");
            assert!(!action.contains('*') && !action.contains('`'), "{at}");
            assert!(
                ev.declared_step.is_some(),
                "every line of the paper's logs is numbered: {at}"
            );
            // No step prefix left over (`Step 10: 0` is the action `0`, kept).
            let lower = action.to_ascii_lowercase();
            assert!(
                !lower.starts_with("step") && !lower.starts_with("action"),
                "{at}"
            );
            let digits = action.bytes().take_while(u8::is_ascii_digit).count();
            assert!(
                digits == 0 || !action[digits..].starts_with(['.', ')']),
                "{at}"
            );
            if action.starts_with(|c: char| !c.is_alphabetic()) {
                odd.push(at);
            }
        }
        assert_eq!(n, nonblank, "{}", path.display());
        events += n;
    }
    assert!(events > 1000, "{events}");
    // The one action in the paper's logs that does not start with a letter.
    assert_eq!(odd.len(), 1, "{odd:#?}");
    assert!(odd[0].ends_with("\" Step 10: 0\" -> \"0\""), "{odd:?}");
}
