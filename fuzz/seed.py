#!/usr/bin/env python3
"""Writes the seed corpora of trac's fuzz targets: seed.py REPO OUT.

Seeds come from the repository's own files, read here at run time (nothing is copied into the
repository: OUT, fuzz/corpus/ by default, is ignored by git): spec files, trace fixtures, the
string literals of the parser's and readers' tests, and ../shared/data/paper-traces when it is
beside the repository. Each seed is at most MAX_LEN bytes (a longer file is cut at a line end).
"""
import hashlib
import json
import pathlib
import re
import subprocess
import sys

MAX_LEN = 65536
repo = pathlib.Path(sys.argv[1]).resolve()
out = pathlib.Path(sys.argv[2])


def tracked(*globs):
    """The repository's tracked files matching the globs."""
    res = subprocess.run(["git", "-C", str(repo), "ls-files", "--", *globs],
                         capture_output=True, text=True, check=True)
    return [repo / p for p in res.stdout.split()]


def shared(*suffixes):
    base = repo.parent / "shared" / "data" / "paper-traces"
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in suffixes)


def cut(data: bytes) -> bytes:
    if len(data) <= MAX_LEN:
        return data
    data = data[:MAX_LEN]
    return data[: data.rfind(b"\n") + 1] or data


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    data = cut(data)
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


LIT = re.compile(r'r#"(.*?)"#|"((?:[^"\\\n]|\\.)*)"', re.S)


def literals(path):
    """String literals of a Rust file (escapes of ordinary literals decoded as JSON does)."""
    for m in LIT.finditer(path.read_text(errors="replace")):
        if m.group(1) is not None:
            yield m.group(1)
        else:
            try:
                yield json.loads('"' + m.group(2) + '"')
            except ValueError:
                yield m.group(2)


specs = tracked("*.ron")
for p in specs:
    put("spec", p.read_bytes())
    text = p.read_text()
    for m in re.finditer(r'formula:\s*"((?:[^"\\]|\\.)*)"', text):
        put("formula", json.loads('"' + m.group(1) + '"'))
    for m in re.finditer(r'formula:\s*r#?"(.*?)"#?\s*[,)]', text, re.S):
        put("formula", m.group(1))
# Specs written as literals in tests (the spec checker's and the command line's).
for p in tracked("crates/trac-spec/src/*.rs", "crates/*/tests/*.rs"):
    for lit in literals(p):
        if "propositions" in lit and lit.lstrip().startswith("("):
            put("spec", lit)
for t in ["parser_syntax.rs", "parser_errors.rs", "printer_roundtrip.rs"]:
    for lit in literals(repo / "crates/trac-ltl/tests" / t):
        if 0 < len(lit) < 400:
            put("formula", lit)

fixtures = tracked("crates/*/tests/fixtures/*", "examples/traces/*")
by_name = {
    "trace_openai": ["openai"],
    "trace_anthropic": ["anthropic"],
    "trace_otlp": ["otlp"],
}
for p in fixtures + shared(".txt", ".jsonl", ".json", ".log"):
    data = p.read_bytes()
    put("trace_sniff", data)
    for target, keys in by_name.items():
        if any(k in p.name for k in keys):
            put(target, data)
    if p.suffix == ".jsonl":
        put("trace_jsonl", data)
    if p.suffix in (".txt", ".log"):
        put("trace_text", data)

# The readers' tests write their traces as literals: JSON Lines events, chat and OTLP documents.
for p in tracked("crates/trac-runtime/tests/*.rs", "crates/trac-cli/tests/*.rs"):
    for lit in literals(p):
        s = lit.lstrip()
        if not s or len(lit) > MAX_LEN:
            continue
        if "resourceSpans" in s:
            put("trace_otlp", lit)
        elif '"tool_use"' in s or '"tool_result"' in s:
            put("trace_anthropic", lit)
        elif '"role"' in s or '"messages"' in s:
            put("trace_openai", lit)
        elif s.startswith("{"):
            put("trace_jsonl", lit)
        elif "\n" in lit:
            put("trace_text", lit)
        if s.startswith(("{", "[")) or "\n" in lit:
            put("trace_sniff", lit)
        # Labels given by traces.
        for m in re.finditer(r'"labels"\s*:\s*(\[[^\]]*\])', lit):
            try:
                for label in json.loads(m.group(1)):
                    if isinstance(label, str):
                        put("label", label)
            except ValueError:
                pass

for label in ["take(knife)", "look", "loads(package1, a1)", "take(yellow potato)",
              "package 1 loaded", "take(knife,)", "take(a(b))", " take", "p(x, y, z)",
              "update_*\nupdate_reservation", "a?c*\nabcdef", "(knife)", "take)"]:
    put("label", label)

answers = [
    '{"modify": ["ZFA04Y"], "write": true, "lookup": false, "confirm": false, '
    '"text_with_call": false, "refusal": false}',
    'Sure: ```json\n{"modify": [], "write": "yes", "lookup": "no", "confirm": 1, '
    '"text_with_call": false, "refusal": false}\n```',
    '{"drive": ["truck1, l3, l1"], "load": ["the package1, truck1"]}',
    '{"modify(rid)": ["a", "the b", "A"], "write": true}',
    '{"choices": [{"message": {"content": "{\\"write\\": true}"}, "finish_reason": "stop", '
    '"logprobs": {"content": [{"token": "true", "logprob": -0.1, "top_logprobs": '
    '[{"token": "false", "logprob": -2.5}]}]}}], "usage": {"prompt_tokens": 3, '
    '"completion_tokens": 1}}',
    '{"choices": [{"message": {"content": null}}]}',
]
for a in answers:
    put("llm_answer", a)

for target in sorted(p.name for p in out.iterdir()):
    print(f"{target}: {len(list((out / target).iterdir()))} seeds")
