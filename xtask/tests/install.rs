//! `cargo install --path .` installs every program the README's examples call (issue 21 §1):
//! each command the shell examples of README.md and of the pages under `docs/` start (a line's
//! first word, or a `cmd:PROGRAM` command model) whose name starts with `trac` is a binary of the
//! root package `trac`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The programs named `trac*` that the shell blocks of one markdown page run.
fn readme_programs(readme: &str) -> BTreeSet<String> {
    let mut programs = BTreeSet::new();
    let mut in_shell = false;
    for line in readme.lines() {
        let t = line.trim();
        if let Some(lang) = t.strip_prefix("```") {
            in_shell = !in_shell && matches!(lang, "sh" | "bash" | "shell" | "console");
            continue;
        }
        if !in_shell {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        // The command word: after `$ `, `VAR=value` assignments and `|`.
        let mut starts = vec![0];
        starts.extend(
            words
                .iter()
                .enumerate()
                .filter(|(_, w)| **w == "|")
                .map(|(i, _)| i + 1),
        );
        for s in starts {
            let first = words[s.min(words.len())..]
                .iter()
                .find(|w| **w != "$" && !w.contains('='));
            if let Some(w) = first {
                programs.insert(w.to_string());
            }
        }
        for w in &words {
            if let Some(i) = w.find("cmd:") {
                let p = w[i + 4..].trim_matches(|c| c == '"' || c == '\'');
                programs.insert(p.to_string());
            }
        }
    }
    programs.retain(|p| p.starts_with("trac"));
    programs
}

/// The markdown pages under `dir`, recursively, in name order.
fn markdown_pages(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut pages = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            pages.extend(markdown_pages(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

#[test]
fn cargo_install_installs_every_program_the_readme_calls() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut called = readme_programs(&readme);
    // The reader sees the README's examples: `trac audit ...` and the scripted agent.
    assert!(
        called.contains("trac") && called.contains("trac-scripted-agent"),
        "{called:?}"
    );
    // The guide and reference call them too (`trac run ... --model "cmd:trac-scripted-agent"`).
    let pages = markdown_pages(&root.join("docs"));
    assert!(!pages.is_empty(), "docs/ has no markdown page");
    for page in pages {
        called.extend(readme_programs(&std::fs::read_to_string(page).unwrap()));
    }
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let root_bins: BTreeSet<String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "trac")
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let missing: Vec<&String> = called.difference(&root_bins).collect();
    assert!(
        missing.is_empty(),
        "README.md or docs/ calls {missing:?}, which `cargo install --path .` does not install (bins of \
         the root package: {root_bins:?})"
    );
}

#[test]
fn the_reader_finds_commands_models_and_pipes() {
    let md = "```sh\ntrac audit x\nFOO=1 trac-x y | trac-y\ntrac run --model \"cmd:trac-z 0.3\"\ncargo run -p trac-cli\n```\n`trac-not-shell`\n";
    let got: Vec<String> = readme_programs(md).into_iter().collect();
    assert_eq!(got, ["trac", "trac-x", "trac-y", "trac-z"]);
}
