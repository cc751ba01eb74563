"""The Python API: specs, Monitor, audit, check, records, tables, errors.

Expected verdicts are derived by hand from the formulas (and quoted in docs/guide/audit.md), not copied
from an output.
"""

import pickle

import pytest

import trac
from conftest import REPO, SPECS

LOOK5 = [["look"]] * 5


def spec_of(*formulas):
    return trac.Spec.from_formulas(list(formulas))


# --- specs -----------------------------------------------------------------------------------


def test_spec_from_file_and_from_str_read_the_same_spec():
    a = trac.Spec.from_file(SPECS / "textworld.ron")
    b = trac.Spec.from_str((SPECS / "textworld.ron").read_text(), "textworld.ron")
    assert a.name == b.name == "textworld"
    assert [p["id"] for p in a.properties] == ["R1", "R2", "R3", "R4"]
    assert a.properties == b.properties
    assert "take" in a.propositions and "examine" in a.propositions
    r1 = a.properties[0]
    assert r1["formula"] == "forall item: G(take(item) -> X examine(item))"
    assert r1["semantics"] == "ltl3"


def test_spec_from_formulas_numbers_properties_like_the_cli():
    s = spec_of("G !a", "F b")
    assert [p["id"] for p in s.properties] == ["f1", "f2"]
    d = trac.Spec.from_formulas({"never_a": "G !a"})
    assert [p["id"] for p in d.properties] == ["never_a"]
    with pytest.raises(TypeError):
        trac.Spec.from_formulas("G a")


def test_a_bad_formula_raises_formula_error_with_a_caret():
    with pytest.raises(trac.FormulaError) as e:
        spec_of("G !a", "G (a & )")
    text = str(e.value)
    assert text.startswith("f2: error: expected a formula after `&`")
    lines = text.splitlines()
    # The caret sits under the end of the input, after `&`: column 8 of `G (a & )`.
    assert lines[-2].endswith("1 | G (a & )")
    assert lines[-1].index("^") - lines[-1].index("|") - 2 == len("G (a & ")
    assert isinstance(e.value, trac.TracError)


def test_a_bad_spec_raises_spec_error_with_its_position():
    with pytest.raises(trac.SpecError) as e:
        trac.Spec.from_str("(name: 1, properties: [])", "bad.ron")
    assert str(e.value).startswith("bad.ron:1:")
    src = '(name: "s", properties: [(id: "R1", formula: "G (a &")])'
    with pytest.raises(trac.SpecError) as e:
        trac.Spec.from_str(src, "f.ron")
    # The formula error is reported at its place in the file, with the caret rendering.
    assert str(e.value).startswith("f.ron:1:")
    assert "^" in str(e.value)
    with pytest.raises(trac.SpecError) as e:
        trac.Spec.from_file(REPO / "no-such-spec.ron")
    assert "cannot read spec" in str(e.value)


def test_a_spec_that_cannot_be_monitored_is_refused_at_load():
    # A past-time operator over a future-time one has no progression.
    with pytest.raises(trac.SpecError) as e:
        spec_of("O(F a)")
    assert "f1" in str(e.value)


# --- Monitor ---------------------------------------------------------------------------------


def test_monitor_counts_each_violation_with_trac_r():
    m = trac.Monitor(spec_of("G(look -> X !look)"))
    steps = [m.step(e) for e in LOOK5]
    assert [[v.step for v in vs] for vs in steps] == [[], [2], [3], [4], [5]]
    v = steps[1][0]
    assert (v.trace, v.property, v.verdict, v.value, v.residual) == (
        "<monitor>",
        "f1",
        "violated",
        None,
        "false",
    )
    # Witness: step 1 (look held, obligation !look) then step 2 (false).
    assert [(w.step, w.held, w.residual) for w in v.witness] == [
        (1, ["look"], "!look & G(look -> X!look)"),
        (2, ["look"], "false"),
    ]
    assert v.end is False
    assert m.steps == 5
    ends = m.end()
    assert len(ends) == 1 and ends[0].end is True
    assert (ends[0].violations, ends[0].steps, ends[0].error) == (4, 5, None)


def test_monitor_plain_trac_reports_one_violation():
    m = trac.Monitor(spec_of("G(look -> X !look)"), reset=False)
    assert sum(len(m.step(e)) for e in LOOK5) == 1


def test_monitor_residuals_and_reset():
    m = trac.Monitor(spec_of("G(look -> X !look)"))
    assert m.residuals() == {"f1": "G(look -> X!look)"}
    m.step(["look"])
    assert m.residuals() == {"f1": "!look & G(look -> X!look)"}
    m.reset()
    assert m.steps == 0
    assert m.residuals() == {"f1": "G(look -> X!look)"}
    # After a reset the history is gone: one look is no violation.
    assert m.step(["look"]) == []


def test_monitor_parametric_residuals_are_per_value():
    spec = trac.Spec.from_file(SPECS / "textworld.ron")
    m = trac.Monitor(spec)
    m.step("take knife")
    r = m.residuals()
    assert r["R1[knife]"].startswith("examine(knife)")
    vs = m.step("look")
    assert [(v.property, v.value, v.step) for v in vs if v.verdict == "violated"] == [("R1", "knife", 2)]


def test_monitor_events_dict_text_and_labels_agree():
    # The same trace three ways: JSON event, text line, label list.
    spec = spec_of("G(a -> X b)")
    runs = []
    for evs in (
        [{"labels": ["a"]}, {"labels": []}],
        [["a"], set()],
        [("a",), frozenset()],
    ):
        m = trac.Monitor(spec)
        runs.append([v.to_dict() for e in evs for v in m.step(e)])
    assert runs[0] == runs[1] == runs[2]
    assert [r["step"] for r in runs[0]] == [2]


def test_step_0_verdicts_come_with_the_first_step():
    # F p & G !p can never hold: violated before the first step (complete verdicts).
    m = trac.Monitor(spec_of("F p & G !p"))
    vs = m.step(["q"])
    assert [(v.step, v.verdict) for v in vs] == [(0, "violated")]
    assert m.step(["q"]) == []


def test_monitor_bad_event_raises_trace_error_and_keeps_state():
    m = trac.Monitor(spec_of("G(a -> X b)"), name="run")
    m.step(["a"])
    with pytest.raises(trac.TraceError) as e:
        m.step({"labels": 3})
    assert e.value.file == "run" and e.value.line == 2 and e.value.column > 0
    assert str(e.value).startswith("run:2:")
    assert m.steps == 1
    with pytest.raises(trac.TraceError):
        m.step({"labels": [1]})
    with pytest.raises(trac.TraceError):
        m.step(["a", 2])
    with pytest.raises(TypeError):
        m.step(42)
    # Still at step 1 with its obligation: the next step without b violates at step 2.
    assert [v.step for v in m.step([])] == [2]


def test_monitor_after_end_raises_until_reset():
    m = trac.Monitor(spec_of("G !a"))
    m.step(["a"])
    first = m.end()
    assert m.end() == first
    with pytest.raises(trac.TracError):
        m.step([])
    m.reset()
    assert m.step([]) == []


def test_monitor_engines_agree_where_both_decide():
    # G(Y a) on {a},{a},{},{a}: complete engines know at step 3 that position 4 fails and at
    # step 0 that position 1 fails (docs/guide/audit.md); plain progression reports at steps 1 and 4.
    trace = [["a"], ["a"], [], ["a"]]

    def steps(engine):
        m = trac.Monitor(spec_of("G(Y a)"), engine=engine)
        return [v.step for e in trace for v in m.step(e) if v.verdict == "violated"]

    assert steps("compiled") == [0, 3]
    assert steps("complete-progression") == [0, 3]
    assert steps("cross-check") == [0, 3]
    assert steps("progression") == [1, 4]
    with pytest.raises(ValueError):
        trac.Monitor(spec_of("G a"), engine="fast")


def test_monitor_records_equal_audit_records():
    spec = trac.Spec.from_file(SPECS / "textworld.ron")
    lines = (REPO / "examples" / "traces" / "textworld-demo.txt").read_text().splitlines()
    lines = [l for l in lines if l.strip()]
    m = trac.Monitor(spec, name="demo")
    streamed = [v for l in lines for v in m.step(l)] + list(m.end())
    assert trac.audit(lines, spec, name="demo") == streamed


# --- audit -----------------------------------------------------------------------------------


def test_audit_of_the_demo_log():
    spec = trac.Spec.from_file(SPECS / "textworld.ron")
    recs = trac.audit(str(REPO / "examples" / "traces" / "textworld-demo.txt"), spec)
    assert isinstance(recs, trac.Records)
    assert all(isinstance(r, (trac.Verdict, trac.End)) for r in recs)
    assert len(recs.ends) == 4
    assert recs.violations == sum(1 for v in recs.verdicts if v.verdict == "violated") > 0
    # Every record round-trips through its dict.
    for r in recs:
        assert trac.record_from_dict(r.to_dict()) == r


def test_call_index_of_a_step_per_call_record_round_trips():
    # A verdict record as `trac audit --format jsonl --step-per call` writes it.
    d = {
        "trace": "calls.jsonl",
        "property": "calls:lookup-first",
        "step": 2,
        "verdict": "violated",
        "value": None,
        "residual": "false",
        "restarted_with": None,
        "witness": [],
        "call_index": 1,
    }
    v = trac.record_from_dict(d)
    assert v.call_index == 1
    assert v.to_dict()["call_index"] == 1
    del d["call_index"]
    assert "call_index" not in trac.record_from_dict(d).to_dict()


def test_audit_sessions_split_as_in_the_cli():
    spec = spec_of("G !bad")
    evs = [
        {"session": "s1", "labels": ["bad"]},
        {"session": "s2", "labels": []},
        {"session": "s1", "labels": ["bad"]},
    ]
    recs = trac.audit(evs, spec, name="mem")
    assert [(r.trace, r.end) for r in recs] == [
        ("mem#s1", False),
        ("mem#s1", False),
        ("mem#s1", True),
        ("mem#s2", True),
    ]
    assert [r.step for r in recs.verdicts] == [1, 2]


def test_audit_errors_raise_trace_error_with_the_records():
    spec = spec_of("G !bad")
    evs = [{"labels": ["bad"]}, {"labels": "bad"}, {"labels": []}]
    with pytest.raises(trac.TraceError) as e:
        trac.audit(evs, spec, name="mem")
    assert (e.value.file, e.value.line) == ("mem", 2)
    assert [r.step for r in e.value.records.verdicts] == [1]
    assert e.value.records.ends[0].error.startswith("mem:2:")
    recs = trac.audit(evs, spec, name="mem", on_error="record")
    assert recs == e.value.records
    with pytest.raises(trac.TraceError) as e:
        trac.audit(str(REPO / "no-such-trace.jsonl"), spec)
    assert e.value.records.ends[0].steps == 0
    # Not audited: empty, or nothing understood.
    with pytest.raises(trac.TraceError) as e:
        trac.audit([], spec, name="empty")
    assert str(e.value) == "empty: not audited: the trace is empty"
    with pytest.raises(trac.TraceError):
        trac.audit(["1. look"], spec)


def test_audit_warns_about_ignored_fields():
    with pytest.warns(UserWarning, match="role"):
        trac.audit([{"labels": [], "role": "user"}], spec_of("G !a"))


def test_records_as_tables():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    spec = spec_of("G(look -> X !look)")
    recs = trac.audit(LOOK5, spec, name="t")
    t = trac.audit_table(LOOK5, spec, name="t")
    assert t.num_rows == len(recs) == 5
    df = recs.to_pandas()
    assert isinstance(df, pd.DataFrame)
    verdicts = df[~df["end"]]
    assert verdicts["step"].tolist() == [2, 3, 4, 5]
    end = df[df["end"]].iloc[0]
    assert end["violations"] == 4 and end["steps"] == 5 and pd.isna(end["step"])
    assert t.column("witness")[0].as_py()[0]["held"] == ["look"]


def test_records_to_jsonl_round_trip():
    recs = trac.audit(LOOK5, spec_of("G(look -> X !look)"), name="t")
    import json

    back = [trac.record_from_dict(json.loads(l)) for l in recs.to_jsonl().splitlines()]
    assert back == list(recs)


# --- check -----------------------------------------------------------------------------------


def test_check_reports_the_monitor():
    info = trac.check("G(a -> X b)")
    assert info.formula == "G(a -> Xb)"
    assert set(info.propositions) == {"a", "b"}
    assert info.initial == "pending"
    assert info.monitorability == "safety"
    # States: the two sinks, the formula, and `b & formula` after `a`.
    assert (info.states, info.pending_states) == (4, 2)
    assert trac.check("F p & G !p").initial == "violated"
    assert trac.check("G F p").monitorability == "non-monitorable"
    assert trac.check("forall x: G !bad(x)").formula.startswith("forall x:")


def test_check_is_bounded_by_the_state_budget():
    # Y[40] must remember the last 40 steps: its monitor is far over 4096 states (trac
    # compile refuses it the same way), so check says why instead of compiling for minutes.
    info = trac.check("G(a -> Y[40] b)")
    assert info.states is None and info.monitorability is None
    assert "4096" in info.compile_error
    assert trac.check("G(a -> Y[2] b)").states is not None


def test_check_errors():
    with pytest.raises(trac.FormulaError) as e:
        trac.check("a U")
    assert "^" in str(e.value) and "1 | a U" in str(e.value)
    with pytest.raises(trac.FormulaError):
        trac.check("O(F a)")


# --- pickling --------------------------------------------------------------------------------


def test_a_pickled_spec_carries_its_compiled_tables():
    spec = trac.Spec.from_file(SPECS / "textworld.ron")
    assert spec.compile() >= 4
    back = pickle.loads(pickle.dumps(spec))
    assert back.shipped_tables >= 4
    assert back.properties == spec.properties
    demo = str(REPO / "examples" / "traces" / "textworld-demo.txt")
    assert trac.audit(demo, back) == trac.audit(demo, spec)
    f = spec_of("G(a -> X b)")
    assert pickle.loads(pickle.dumps(f)).properties == f.properties


def test_monitor_step_warns_about_ignored_fields_and_unknown_labels_once():
    spec = trac.Spec.from_str(
        '(name: "s", propositions: [(name: "look", rule: Some(Words("look")))],'
        ' properties: [(id: "p", formula: "G !look")])'
    )
    m = trac.Monitor(spec, name="run")
    with pytest.warns(UserWarning) as w:
        m.step({"output": "go", "role": "user", "labels": ["lok"]})
    msgs = [str(x.message) for x in w]
    assert any(s.startswith("run: event field(s) ignored: role") for s in msgs), msgs
    assert any("label(s) `lok` match no proposition" in s for s in msgs), msgs
    # Once per monitor: the same field and label again warn no more.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.step({"output": "go", "role": "user", "labels": ["lok"]})


def test_audit_on_error_record_keeps_the_records_before_an_item_of_any_type():
    spec = spec_of("G !bad")
    for bad in (42, None, 3.5, object()):
        evs = [["bad"], ["ok"], bad, ["bad"]]
        recs = trac.audit(evs, spec, name="mem", on_error="record")
        assert [r.step for r in recs.verdicts] == [1]
        assert recs.ends[0].error.startswith("mem:3")
        assert recs.ends[0].steps == 2
        with pytest.raises(trac.TraceError) as e:
            trac.audit(evs, spec, name="mem")
        assert e.value.line == 3 and [r.step for r in e.value.records.verdicts] == [1]


def test_audit_of_rules_on_roles_over_a_text_log_is_not_audited_as_in_the_cli():
    spec = trac.Spec.from_file(str(SPECS / "airline.ron"))
    with pytest.raises(trac.TraceError) as e:
        trac.audit(["yes, confirm", "update the reservation"], spec, name="log")
    assert str(e.value).startswith(
        "log: not audited: the propositions of every property can never hold on it: "
        "confirm-before-write (modify, confirm)"
    )
    recs = trac.audit(["yes"], spec, name="log", on_error="record")
    assert recs.ends[0].error.startswith("log: not audited")
