//! `--format sarif`: a SARIF 2.1.0 log (OASIS, "Static Analysis Results Interchange Format
//! Version 2.1.0", 2020) for CI systems and code-scanning viewers.
//!
//! One run of the tool `trac`; one rule per property (its description, formula and English
//! rendering); one result per violation (`level: error`, `kind: fail`) located in the trace
//! file at the violating step's line (`region.startLine`) when the trace is a file, with the
//! witness steps as related locations. The step, the parameter value, the residual and the
//! trace name (with `#SESSION`) are in the result's property bag, so a result of standard input
//! or a step-0 verdict (no line) still says where it is. Trace errors are tool execution
//! notifications, and make `executionSuccessful` false.

use super::{shorten, Context, Kept, Printer, TraceOutcome, TEXT_WIDTH};
use serde_json::{json, Value};
use std::io::{self, Write};
use trac_runtime::Verdict;

/// The SARIF printer.
pub(crate) struct Sarif {
    rules: Vec<Value>,
    ids: Vec<String>,
}

impl Sarif {
    /// A SARIF log for the properties of `cx`.
    pub fn new(cx: &Context) -> Sarif {
        let rules = cx
            .props
            .iter()
            .map(|p| {
                let i = &p.info;
                let short = if i.description.is_empty() {
                    i.formula.clone()
                } else {
                    i.description.clone()
                };
                json!({
                    "id": i.id,
                    "shortDescription": { "text": short },
                    "fullDescription": { "text": format!("{}: {}", i.formula, i.english) },
                    "help": { "text": format!("Formula (Spot syntax): {}\nMeaning: {}", i.formula, i.english) },
                    "defaultConfiguration": { "level": "error" },
                    "properties": {
                        "formula": i.formula,
                        "semantics": i.semantics,
                        "spec": p.spec_file,
                    },
                })
            })
            .collect();
        Sarif {
            rules,
            ids: cx.props.iter().map(|p| p.info.id.clone()).collect(),
        }
    }
}

/// `path` as a SARIF URI reference (RFC 3986): `\` becomes `/` and every byte outside the
/// unreserved characters and `/` is percent-encoded.
pub(crate) fn uri_reference(path: &str) -> String {
    let mut out = String::new();
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Printer for Sarif {
    fn keep(&self, o: TraceOutcome, kept: &mut Kept) {
        kept.traces += 1;
        kept.outcomes.push(o);
    }

    fn finish(&mut self, out: &mut dyn Write, kept: Kept, _: usize) -> io::Result<()> {
        let outcomes = &kept.outcomes;
        let mut artifacts: Vec<String> = Vec::new();
        let mut results = Vec::new();
        let mut notifications = Vec::new();
        for o in outcomes {
            let artifact = if o.stream {
                None
            } else {
                let i = match artifacts.iter().position(|a| **a == *o.file) {
                    Some(i) => i,
                    None => {
                        artifacts.push(o.file.to_string());
                        artifacts.len() - 1
                    }
                };
                Some((uri_reference(&o.file), i))
            };
            let location = |line: Option<usize>| -> Option<Value> {
                let (uri, index) = artifact.as_ref()?;
                let mut phys = json!({ "artifactLocation": { "uri": uri, "index": index } });
                if let Some(l) = line {
                    phys["region"] = json!({ "startLine": l });
                }
                Some(json!({ "physicalLocation": phys }))
            };
            if let Some(e) = &o.error {
                notifications.push(json!({
                    "level": "error",
                    "message": { "text": e },
                    "locations": location(o.error_line).into_iter().collect::<Vec<_>>(),
                }));
            }
            for r in o.records.iter().filter(|r| r.verdict == Verdict::Violated) {
                let Some(rule_index) = self.ids.iter().position(|id| *id == r.property) else {
                    continue;
                };
                let value = r
                    .value
                    .as_ref()
                    .map(|v| format!(" for {v}"))
                    .unwrap_or_default();
                let witness: Vec<String> = r
                    .witness
                    .iter()
                    .map(|c| format!("step {}: {}", c.step, shorten(&c.text, TEXT_WIDTH)))
                    .collect();
                let rule = &self.rules[rule_index]["shortDescription"]["text"];
                let text = format!(
                    "{} violated at step {}{} of {}: {}{}",
                    r.property,
                    r.step,
                    value,
                    o.name,
                    rule.as_str().unwrap_or_default(),
                    if witness.is_empty() {
                        String::new()
                    } else {
                        format!(" Witness: {}.", witness.join("; "))
                    }
                );
                let related: Vec<Value> = r
                    .witness
                    .iter()
                    .enumerate()
                    .filter_map(|(k, c)| {
                        let mut l = location(o.line_of(c.step))?;
                        l["id"] = json!(k);
                        l["message"] = json!({
                            "text": format!("step {}: {} => {}", c.step, shorten(&c.text, TEXT_WIDTH), c.residual)
                        });
                        Some(l)
                    })
                    .collect();
                results.push(json!({
                    "ruleId": r.property,
                    "ruleIndex": rule_index,
                    "level": "error",
                    "kind": "fail",
                    "message": { "text": text },
                    "locations": location(o.line_of(r.step)).into_iter().collect::<Vec<_>>(),
                    "relatedLocations": related,
                    "properties": {
                        "trace": o.name,
                        "step": r.step,
                        "line": o.line_of(r.step),
                        "value": r.value,
                        "residual": r.residual,
                        "restartedWith": r.restarted_with,
                    },
                }));
                if !r.past.is_empty() {
                    // Past-time citations (properties with past-time operators), as in jsonl.
                    if let Some(res) = results.last_mut() {
                        res["properties"]["past"] = json!(r.past);
                    }
                }
            }
        }
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": { "driver": {
                    "name": "trac",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://arxiv.org/abs/2605.16198",
                    "rules": self.rules,
                } },
                "artifacts": artifacts.iter().map(|a| json!({ "location": { "uri": uri_reference(a) } })).collect::<Vec<_>>(),
                "invocations": [{
                    "executionSuccessful": notifications.is_empty(),
                    "toolExecutionNotifications": notifications,
                }],
                "results": results,
            }],
        });
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&log).expect("SARIF serializes")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::uri_reference;

    #[test]
    fn uri_references_encode_spaces_and_keep_slashes() {
        assert_eq!(uri_reference("a b/c#1.txt"), "a%20b/c%231.txt");
        assert_eq!(uri_reference("dir\\x.jsonl"), "dir/x.jsonl");
    }
}
