"""trac.Supervisor: TRAC_P+I in a Python agent loop (check a candidate, commit, look-ahead,
residuals in English), over trac-agent's Supervisor.

Expected verdicts are derived by hand from the formulas, not copied from an output.
"""

import pytest

import trac
from conftest import SPECS

# A booking rule with labeling rules on the action text and descriptions for English.
BOOKING = r"""
(
  name: "booking",
  description: "Confirm before booking; pay after booking.",
  propositions: [
    (name: "book", description: "the agent books a flight", rule: Some(Output(Regex(r"^book\b")))),
    (name: "confirm", description: "the user confirms", rule: Some(Output(Regex(r"^confirm\b")))),
    (name: "pay", description: "the agent takes the payment", rule: Some(Output(Regex(r"^pay\b")))),
  ],
  properties: [
    (id: "confirm-first", description: "no booking before a confirmation", formula: "G(book -> O confirm)"),
    (id: "pay-after", description: "every booking is paid", formula: "G(book -> F pay)"),
  ],
)
"""


def booking():
    return trac.Spec.from_str(BOOKING, "booking.ron")


def test_check_of_a_violating_action_commits_nothing():
    sup = trac.Supervisor(booking())
    assert sup.initial() == []
    assert sup.label("book flight UA12") == ["book"]
    c = sup.check("book flight UA12")
    assert not c.compliant and not c
    assert c.violated == [("confirm-first", None)]
    assert [(r.property, r.step, r.verdict) for r in c.records] == [("confirm-first", 1, "violated")]
    # Nothing was committed: no step, and the monitors did not move.
    assert sup.steps == 0
    assert sup.residual("confirm-first") == sup.residual(0)
    # A compliant step after the refused one gives no violation.
    assert sup.check("confirm the booking").compliant
    recs = sup.commit("confirm the booking", input="please book UA12")
    # Once confirmed, `O confirm` holds for ever: confirm-first is satisfied, nothing violated.
    assert [(r.property, r.step, r.verdict) for r in recs] == [("confirm-first", 1, "satisfied")]
    assert sup.steps == 1
    # Now booking is compliant for confirm-first (O confirm holds from now on).
    c = sup.check("book flight UA12")
    assert c.compliant and c.violated == [] and c.records == []
    assert sup.commit("book flight UA12") == []
    assert sup.steps == 2


def test_labels_given_add_to_the_rules():
    sup = trac.Supervisor(trac.Spec.from_formulas(["G(book -> O confirm)"]))
    assert sup.label("anything", ["book"]) == ["book"]
    assert not sup.check("anything", labels=["book"]).compliant
    assert sup.check("anything", labels=["confirm", "book"]).compliant
    assert sup.steps == 0
    recs = sup.commit("anything", labels=["book"])
    assert [(r.property, r.step, r.verdict, r.value) for r in recs] == [("f1", 1, "violated", None)]
    assert recs[0].restarted_with is not None  # TRAC_R restarts the property


def test_commit_records_equal_trac_audit_of_the_same_events():
    spec = booking()
    steps = [
        ("book flight UA12", "hi", None),
        ("confirm the booking", None, None),
        ("book flight UA12", None, None),
        ("search flights", None, ["extra"]),
        ("pay 300 USD", None, None),
        ("book flight LH4", None, None),
    ]
    sup = trac.Supervisor(spec, name="run.jsonl")
    got = sup.initial()
    events = []
    for i, (action, input, given) in enumerate(steps, start=1):
        labels = sup.label(action, given)
        got += sup.commit(action, input=input, labels=given)
        ev = {"step": i, "output": action, "labels": labels}
        if input is not None:
            ev["input"] = input
        events.append(ev)
    got += sup.end_of_run()
    want = trac.audit(events, spec, name="run.jsonl").verdicts
    assert [r.to_dict() for r in got] == [r.to_dict() for r in want]
    # By hand: step 1 books before any confirmation (violated, restarted); the confirmation of
    # step 2 satisfies it for ever; pay-after stays pending (G(book -> F pay) never decides).
    assert [(r.property, r.step, r.verdict) for r in got] == [
        ("confirm-first", 1, "violated"),
        ("confirm-first", 2, "satisfied"),
    ]


def test_commit_event_equals_trac_audit_of_the_same_events():
    # Events as trac.audit takes them in memory: dicts read as JSON Lines events (labeled by
    # the spec's rules over their text, plus their own labels), strs as action-log lines.
    spec = booking()
    events = [
        {"input": "I want UA12", "output": "search flights"},
        {"output": "book flight UA12"},
        {"output": "confirm the booking"},
        {"output": "anything", "labels": ["book"]},
        "pay 300 USD",
        {"output": "book flight LH4", "labels": ["extra"]},
    ]
    sup = trac.Supervisor(spec, session="s1", name="events")
    got = sup.initial()
    got += sup.commit_event(events[0])
    # The unconfirmed booking would violate confirm-first: a check commits nothing.
    c = sup.check_event(events[1])
    assert c.violated == [("confirm-first", None)]
    assert sup.steps == 1
    assert sup.check_event(events[2]).compliant
    for ev in events[1:]:
        got += sup.commit_event(ev)
    got += sup.end_of_run()
    with_session = [dict(e, session="s1") if isinstance(e, dict) else e for e in events]
    # A str event has no session field: audit the str step as the JSON event it is read as.
    with_session[4] = {"output": "pay 300 USD", "session": "s1"}
    want = trac.audit(with_session, spec, name="events").verdicts
    assert [r.to_dict() for r in got] == [r.to_dict() for r in want]
    assert [(r.property, r.step, r.verdict) for r in got] == [
        ("confirm-first", 2, "violated"),
        ("confirm-first", 3, "satisfied"),
    ]
    assert all(r.trace == "events#s1" for r in got)


def test_residual_english_uses_the_propositions_descriptions():
    sup = trac.Supervisor(booking())
    sup.commit("confirm the booking")
    sup.commit("book flight UA12")
    # pay-after is pending on `F pay`: its English names what the agent still owes.
    text = sup.residual_english("pay-after")
    assert "the agent takes the payment" in text, text
    assert sup.residual_english(1) == text
    assert "pay" in sup.residual("pay-after")
    assert [p["id"] for p in sup.properties] == ["confirm-first", "pay-after"]
    assert sup.properties[1]["description"] == "every booking is paid"


def test_exact_gives_risk_one_for_an_action_that_must_violate_next():
    sup = trac.Supervisor(booking())
    risks = {e["property"]: e for e in sup.exact(1, {"book": True, "confirm": False, "pay": False})}
    assert risks["confirm-first"]["risk"] == 1.0
    assert risks["confirm-first"]["min_steps"] == 1
    assert risks["confirm-first"]["immediate"]
    # Not booking cannot violate confirm-first at the next step.
    risks = {e["property"]: e for e in sup.exact(1, {"book": False})}
    assert risks["confirm-first"]["risk"] != 1.0
    # Once confirmed, booking is safe for confirm-first whatever comes.
    sup.commit("confirm the booking")
    risks = {e["property"]: e for e in sup.exact(3, {"book": True, "confirm": False})}
    assert risks["confirm-first"]["risk"] == 0.0
    # Nothing known: no certainty.
    assert isinstance(sup.exact(2), list)


def test_errors_are_the_package_exceptions():
    with pytest.raises(trac.SpecError):
        trac.Supervisor(trac.Spec.from_str('(name: "empty", propositions: [], properties: [])', "e.ron"))
    with pytest.raises(trac.SpecError):
        trac.Supervisor([])
    with pytest.raises(TypeError):
        trac.Supervisor("G a")  # type: ignore[arg-type]
    sup = trac.Supervisor(booking())
    for bad in (2, -1, "no-such-property"):
        with pytest.raises(trac.TracError):
            sup.residual(bad)
        with pytest.raises(trac.TracError):
            sup.residual_english(bad)
    with pytest.raises(trac.TraceError):
        sup.commit("book", labels=["book("])
    with pytest.raises(trac.TraceError):
        sup.commit_event({"output": "x", "labels": "book"})
    assert sup.steps == 0


def test_after_the_end_of_the_run_steps_and_checks_raise():
    # An ltlf property: `F pay` over a finite run that never pays is violated at its end.
    spec = trac.Spec.from_str(BOOKING.replace('formula: "G(book -> F pay)"', 'formula: "F pay", semantics: Ltlf'), "b.ron")
    sup = trac.Supervisor(spec)
    sup.commit("search flights")
    end = sup.end_of_run()
    assert [(r.property, r.verdict) for r in end] == [("pay-after", "violated")]
    assert sup.end_of_run() == []
    for call in (
        lambda: sup.check("book"),
        lambda: sup.commit("book"),
        lambda: sup.check_event({"output": "book"}),
        lambda: sup.commit_event({"output": "book"}),
        lambda: sup.exact(1),
    ):
        with pytest.raises(trac.TracError, match="the run has ended"):
            call()
    assert sup.steps == 1
