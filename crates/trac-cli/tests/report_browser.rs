//! The HTML report in a real headless browser (Debian's `chromium`, installed by
//! `.ci/install-report`): the page loads without any console message (it has no script, so any
//! message is an error: an exception, a blocked resource, a Content-Security-Policy violation),
//! and a screenshot is taken and checked to be a PNG of the window's size.
//!
//! Where chromium was missing at build time the test is reported as ignored with that reason
//! (`cfg(no_chromium)`, build/needs.rs); under `CI=true` it runs, and fails without it.
//! `TRAC_CHROMIUM` names another browser binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WIDTH: u32 = 1200;
const HEIGHT: u32 = 2400;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The browser: `$TRAC_CHROMIUM`, else `chromium` or `chromium-browser` on the `PATH`.
fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("TRAC_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
}

/// The browser; a panic naming the cause when it is missing (the test is ignored where it was
/// missing at build time).
fn browser() -> PathBuf {
    chromium().expect("chromium is missing: apt-get install chromium (CI: .ci/install-report)")
}

/// Loads `page` in headless chromium, screenshots it to `shot`; returns the console messages.
/// A generous deadline (a hung browser is killed and the test fails) is not a timing goal.
fn load(browser: &Path, page: &Path, shot: &Path) -> Vec<String> {
    let profile = std::env::temp_dir().join(format!(
        "trac-chromium-{}-{}",
        std::process::id(),
        shot.file_stem().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_file(shot);
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish loading {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = reader.join().unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    log.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// Width and height of a PNG file, after checking its signature and IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).expect("a screenshot was written");
    assert!(b.len() > 33, "an empty screenshot");
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&b[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
#[cfg_attr(
    no_chromium,
    ignore = "needs chromium (apt-get install chromium, or TRAC_CHROMIUM)"
)]
fn the_html_report_loads_in_chromium_without_console_errors() {
    let browser = browser();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // The control: a page with an exception is caught by the same scan.
    let bad = dir.join("console-error.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><head><title>x</title></head><body><script>notDefined();</script></body></html>",
    )
    .unwrap();
    let errors = load(&browser, &bad, &dir.join("console-error.png"));
    assert!(
        errors.iter().any(|e| e.contains("Uncaught ReferenceError")),
        "the console scan misses an exception: {errors:?}"
    );

    let page = dir.join("report.html");
    let o = Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(["audit", "--format", "html", "-o"])
        .arg(&page)
        .args([
            "--spec",
            "examples/specs/textworld.ron",
            "examples/traces/textworld-demo.txt",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let shot = dir.join("report.png");
    let errors = load(&browser, &page, &shot);
    assert!(errors.is_empty(), "console messages: {errors:#?}");
    assert_eq!(png_size(&shot), (WIDTH, HEIGHT));
    println!("screenshot: {}", shot.display());
}

#[test]
#[cfg_attr(
    no_chromium,
    ignore = "needs chromium (apt-get install chromium, or TRAC_CHROMIUM)"
)]
fn a_report_of_a_long_trace_with_a_wide_monitor_loads_in_chromium() {
    let browser = browser();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // 10^5 steps, `p` on every 10th: 10^4 violations of `G !p`; and a monitor drawing wider
    // than the page (a chain of 11 states).
    let trace = dir.join("long-trace.jsonl");
    let mut s = String::new();
    for i in 1..=100_000 {
        s.push_str(if i % 10 == 0 {
            "{\"labels\":[\"p\"]}\n"
        } else {
            "{\"labels\":[\"q\"]}\n"
        });
    }
    std::fs::write(&trace, s).unwrap();
    let page = dir.join("long-report.html");
    let o = Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(["audit", "--format", "html", "-o"])
        .arg(&page)
        .args(["--formula", "G !p", "--formula", "q -> X X X X X X X X p"])
        .arg(&trace)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 500_000, "{size} bytes");
    let shot = dir.join("long-report.png");
    let errors = load(&browser, &page, &shot);
    assert!(errors.is_empty(), "console messages: {errors:#?}");
    assert_eq!(png_size(&shot), (WIDTH, HEIGHT));
    println!("screenshot: {}", shot.display());
}
