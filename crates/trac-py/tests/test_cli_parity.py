"""The same audit through the CLI (`trac audit --format jsonl`) and through Python gives the same
records, object for object and byte for byte, on the shared agent logs and on sessions, errors
and empty traces."""

import json

import pytest

import trac
from conftest import DOMAINS, REPO, SPECS, logs, run_cli


def cli_records(cli, *args):
    p = run_cli(cli, "audit", "--format", "jsonl", *args)
    assert p.returncode in (0, 1, 2), p.stderr
    return p.returncode, p.stdout


def py_records(paths, spec, **kw):
    out = trac.Records()
    for p in paths:
        out.extend(trac.audit(p, spec, on_error="record", **kw))
    return out


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize(
    "engine,reset",
    [("compiled", True), ("compiled", False), ("progression", True), ("complete-progression", True)],
)
def test_shared_logs_cli_and_python_give_identical_records(
    cli, shared, domain, engine, reset, monkeypatch
):
    # The logs are named relative to the repository, where the CLI runs: so does Python.
    monkeypatch.chdir(REPO)
    paths = logs(shared, domain)
    spec_path = str(SPECS / f"{domain}.ron")
    args = ["--spec", spec_path]
    if engine == "complete-progression":
        args += ["--engine", "progression", "--complete"]
    else:
        args += ["--engine", engine]
    if not reset:
        args.append("--no-reset")
    code, out = cli_records(cli, *args, *paths)
    recs = py_records(paths, trac.Spec.from_file(spec_path), engine=engine, reset=reset)
    assert [json.loads(l) for l in out.splitlines()] == recs.to_dicts()
    # Byte for byte: the same JSON Lines text, from the records and serialized in Rust.
    assert out == recs.to_jsonl()
    spec = trac.Spec.from_file(spec_path)
    assert out == "".join(
        trac.audit_jsonl(p, spec, engine=engine, reset=reset, on_error="record") for p in paths
    )
    assert code == (1 if recs.violations else 0)
    assert len(recs.ends) == len(paths) * len(trac.Spec.from_file(spec_path).properties)


def test_sessions_in_one_jsonl_file(cli, shared, tmp_path):
    # Two textworld logs interleaved as sessions of one JSON Lines file.
    a, b = [(REPO / p).read_text().splitlines() for p in logs(shared, "textworld")[:2]]
    lines = []
    for i in range(max(len(a), len(b))):
        for sid, log in (("a", a), ("b", b)):
            if i < len(log) and log[i].strip():
                lines.append(json.dumps({"session": sid, "step": i + 1, "output": log[i]}))
    f = tmp_path / "sessions.jsonl"
    f.write_text("\n".join(lines) + "\n")
    spec = str(SPECS / "textworld.ron")
    _, out = cli_records(cli, "--spec", spec, str(f))
    recs = trac.audit(str(f), trac.Spec.from_file(spec), on_error="record")
    assert out == recs.to_jsonl()
    assert {r.trace for r in recs} == {f"{f}#a", f"{f}#b"}


def test_malformed_line_empty_trace_and_missing_file(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"labels": ["look"]}\n{"labels": ["look"]}\n{"labels": "look"}\n{"labels": []}\n')
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    missing = tmp_path / "missing.jsonl"
    spec = trac.Spec.from_formulas(["G(look -> X !look)", "F done"])
    for path in (bad, empty, missing):
        code, out = cli_records(cli, "--formula", "G(look -> X !look)", "--formula", "F done", str(path))
        assert code == 2
        recs = trac.audit(str(path), spec, on_error="record")
        assert out == recs.to_jsonl(), path
        assert all(e.error for e in recs.ends)
        with pytest.raises(trac.TraceError) as e:
            trac.audit(str(path), spec)
        assert e.value.records == recs
    # The malformed line keeps the verdict before it (step 2) and names its position.
    recs = trac.audit(str(bad), spec, on_error="record")
    assert [v.step for v in recs.verdicts] == [2]
    assert recs.ends[0].error.startswith(f"{bad}:3:")


def test_ltlf_properties_and_parametric_specs_match(cli, tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text(
        "\n".join(
            json.dumps({"labels": ls})
            for ls in (["req"], [], ["take(knife)"], ["take(apple)", "examine(knife)"])
        )
        + "\n"
    )
    ron = """(
      name: "mixed",
      properties: [
        (id: "resp", formula: "G(req -> F grant)", semantics: Ltlf),
        (id: "ex", formula: "forall x: G(take(x) -> X examine(x))"),
      ],
    )"""
    sp = tmp_path / "mixed.ron"
    sp.write_text(ron)
    _, out = cli_records(cli, "--spec", str(sp), str(f))
    recs = trac.audit(str(f), trac.Spec.from_file(sp), on_error="record")
    assert out == recs.to_jsonl()
    # resp: the trace ends with req pending: violated at the last step (LTLf).
    assert [(v.property, v.step) for v in recs.verdicts if v.property == "resp"] == [("resp", 4)]


def _sessions_with_markers_and_a_bad_line(tmp_path):
    """Three interleaved sessions: `a` ends with a `session_end` marker halfway, `b` has a
    malformed line (its later events are skipped), `c` runs to the end of the file."""
    rows = []
    for i in range(4):
        for sid in ("a", "b", "c") if i < 2 else ("b", "c"):
            rows.append(json.dumps({"session": sid, "labels": ["look"] if i % 2 else ["take"]}))
        if i == 1:
            rows.append(json.dumps({"session": "a", "session_end": True}))
        if i == 2:
            rows.append('{"session": "b", "labels": "look"}')
    f = tmp_path / "markers.jsonl"
    f.write_text("\n".join(rows) + "\n")
    return f


def test_session_end_markers_and_a_bad_line_inside_one_session(cli, tmp_path):
    f = _sessions_with_markers_and_a_bad_line(tmp_path)
    formulas = ["G(take -> X look)", "F done"]
    args = [a for fm in formulas for a in ("--formula", fm)]
    code, out = cli_records(cli, *args, str(f))
    assert code == 2  # the bad line is bad input
    spec = trac.Spec.from_formulas(formulas)
    recs = trac.audit(str(f), spec, on_error="record")
    assert out == recs.to_jsonl()
    # The same events given in memory are audited alike (the bad line as its dict).
    events = [json.loads(line) for line in f.read_text().splitlines()]
    mem = trac.audit(events, spec, name=str(f), on_error="record")
    assert [v.to_dict() for v in mem.verdicts] == [v.to_dict() for v in recs.verdicts]
    # a ended at its marker (before b's error), b at its bad line, c at the end of the file:
    # end records in that order, only b's with an error.
    traces = [(e.trace, bool(e.error)) for e in recs.ends]
    assert traces == [
        (f"{f}#a", False), (f"{f}#a", False),
        (f"{f}#b", True), (f"{f}#b", True),
        (f"{f}#c", False), (f"{f}#c", False),
    ]


def test_duplicate_property_ids_across_specs_are_namespaced_alike(cli, shared, tmp_path):
    base = REPO / "examples" / "specs" / "textworld.ron"
    other = tmp_path / "textworld2.ron"
    other.write_text(base.read_text().replace('name: "textworld"', 'name: "textworld2"', 1))
    path = logs(shared, "textworld")[0]
    p = run_cli(cli, "audit", "--format", "jsonl", "--spec", str(base), "--spec", str(other), path)
    assert "is declared by several specs: reported as" in p.stderr
    specs = [trac.Spec.from_file(str(base)), trac.Spec.from_file(str(other))]
    recs = trac.audit(str(REPO / path), specs, on_error="record")
    cli_ends = [json.loads(l) for l in p.stdout.splitlines() if '"end":true' in l]
    assert sorted({e["property"] for e in cli_ends}) == sorted({e.property for e in recs.ends})
    assert any(e.property.startswith("textworld2/") for e in recs.ends)
    # Two specs of the same name sharing ids cannot be told apart: both refuse.
    p = run_cli(cli, "audit", "--spec", str(base), "--spec", str(base), path)
    assert p.returncode == 2 and "are both named `textworld`" in p.stderr
    with pytest.raises(trac.SpecError, match="are both named `textworld`"):
        trac.audit(str(REPO / path), [specs[0], trac.Spec.from_file(str(base))])
