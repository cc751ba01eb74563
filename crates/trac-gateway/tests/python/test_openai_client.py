"""`trac gateway` with the official `openai` Python client as the agent (issue 23, "real parts
in the tests"): the gateway is the `trac` binary run as a subprocess on 127.0.0.1, the model is
the scripted upstream of upstream.py (a real HTTP server), the agent is agent.py's tool-calling
loop, and every log is re-audited by `trac audit` of the same binary.

The scripted model books without confirming: the airline spec's `confirm-before-write`
(`forall rid: G(modify(rid) -> O confirm)`) is violated at steps 5 and 7 of the conversation
(system, user, lookup call, its result, first update (5), its result, second update (7), ...).
"""

from __future__ import annotations

import json

import openai
import pytest

from agent import ASK, client, run_agent, write_log
from harness import audit, audit_verdicts, lines

KEY = "sk-test-SECRET-py-4242"
RULE = "every update of reservation rid comes after a user confirmation"
WRITES = ["update_reservation_flights", "update_reservation_baggages"]


def violations(found: list[tuple], prop: str = "confirm-before-write") -> list[tuple]:
    return [(step, value) for (p, step, verdict, value) in found if p == prop and verdict == "violated"]


def test_without_trac_the_agent_books_twice_unconfirmed_and_trac_audit_finds_both(upstream, tmp_path):
    run = run_agent(client(upstream.base, KEY))
    assert run.ended and run.calls == 4
    assert [name for name, _ in run.executed] == ["get_user_details", *WRITES]
    assert run.messages[-1]["content"] == "All done: your flight is changed and a bag is added."
    log = tmp_path / "direct.jsonl"
    write_log(log, "direct", run.messages)

    r = audit(log)
    assert r.returncode == 1, (r.stdout, r.stderr)
    code, found = audit_verdicts(log)
    assert code == 1
    assert list(found) == ["direct"]
    assert violations(found["direct"]) == [(5, "ZFA04Y"), (7, "ZFA04Y")]
    # The other rules hold: the user was looked up first, no text beside a tool call.
    assert [v for v in found["direct"] if v[2] == "violated" and v[0] != "confirm-before-write"] == []


def test_through_the_shield_no_booking_is_made_the_loop_ends_on_the_refusal_and_the_log_audits_clean(
    upstream, gateway, tmp_path
):
    log = tmp_path / "gw.jsonl"
    gw = gateway("shield", log)
    run = run_agent(client(gw.base, KEY), session="shielded")

    # The first update never reached the agent: it ran only the lookup, and its loop ended on
    # the refusal (an assistant message without tool calls, naming the rule and the value).
    assert run.ended and run.calls == 2
    assert run.executed == [("get_user_details", {"user_id": "mia_li_3668"})]
    last = run.messages[-1]
    assert last["role"] == "assistant" and "tool_calls" not in last
    assert last["content"].startswith("I can't do that"), last
    assert RULE in last["content"] and "ZFA04Y" in last["content"], last
    # The upstream did propose the update (the gateway's second call).
    assert len(upstream.completions()) == 2

    r = audit(log)
    assert r.returncode == 0, (r.stdout, r.stderr)
    code, found = audit_verdicts(log)
    assert code == 0 and list(found) == ["shielded"]
    assert [v for v in found["shielded"] if v[2] == "violated"] == []
    # The log is the conversation the client holds, with its session.
    assert lines(log) == [{**m, "session": "shielded"} for m in run.messages]
    # The intervention is beside the log: the update it replaced, by the refusal the client got.
    iv = lines(tmp_path / "gw.interventions.jsonl")
    assert len(iv) == 1
    assert iv[0]["step"] == 5 and iv[0]["properties"][0]["property"] == "confirm-before-write"
    assert iv[0]["replaced"]["tool_calls"][0]["function"]["name"] == "update_reservation_flights"
    assert iv[0]["by"]["content"] == last["content"]
    s = gw.sessions()["sessions"]
    assert [(x["session"], x["interventions"], x["violations"]) for x in s] == [("shielded", 1, [])]


def test_monitoring_only_the_gateways_verdicts_equal_trac_audit_of_its_log(upstream, gateway, tmp_path):
    log = tmp_path / "none.jsonl"
    gw = gateway("none", log)
    run = run_agent(client(gw.base, KEY))
    # Nothing blocked: the agent ran as it does directly.
    assert run.ended and run.calls == 4
    assert [name for name, _ in run.executed] == ["get_user_details", *WRITES]

    ours = gw.verdicts()
    code, theirs = audit_verdicts(log)
    assert code == 1
    assert ours == theirs
    # One conversation, named by the hash of its first messages, with both violations.
    [(session, found)] = ours.items()
    assert session.startswith("conv-"), session
    assert violations(found) == [(5, "ZFA04Y"), (7, "ZFA04Y")]
    assert len(lines(log)) == len(run.messages) == 9
    assert lines(tmp_path / "none.interventions.jsonl") == []


def test_a_streamed_loop_through_the_gateway_assembles_what_it_does_directly(upstream, gateway, tmp_path):
    direct = run_agent(client(upstream.base, KEY), stream=True)
    plain = run_agent(client(upstream.base, KEY))
    # The stream assembles to the non-streamed answers (the scripted model's messages).
    assert direct.messages == plain.messages
    assert direct.ended and direct.calls == 4
    # 3 tool calls (role chunk, two argument pieces, finish chunk each), then the text's role
    # chunk, its 11 words and a finish chunk.
    assert [len(c) for c in direct.chunks] == [4, 4, 4, 13]

    log = tmp_path / "stream.jsonl"
    gw = gateway("none", log)
    via = run_agent(client(gw.base, KEY), stream=True)
    # Chunk by chunk as the upstream sent them, so the same conversation.
    assert via.chunks == direct.chunks
    assert via.messages == direct.messages
    assert via.executed == direct.executed
    # The streamed messages were assembled and monitored: the same verdicts as the audit.
    code, theirs = audit_verdicts(log)
    assert code == 1 and gw.verdicts() == theirs
    [found] = theirs.values()
    assert violations(found) == [(5, "ZFA04Y"), (7, "ZFA04Y")]


def test_a_streamed_loop_through_the_shield_ends_on_the_same_refusal_as_a_plain_one(
    upstream, gateway, tmp_path
):
    gw = gateway("shield", tmp_path / "s.jsonl")
    streamed = run_agent(client(gw.base, KEY), stream=True, session="streamed")
    plain = run_agent(client(gw.base, KEY), session="plain")
    assert streamed.ended and streamed.calls == 2
    assert [name for name, _ in streamed.executed] == ["get_user_details"]
    # The lookup (not blocked) arrived as the upstream streamed it; the update was replaced.
    assert streamed.messages == plain.messages
    assert RULE in streamed.messages[-1]["content"]
    assert "update_reservation" not in json.dumps(streamed.chunks[1])
    code, found = audit_verdicts(tmp_path / "s.jsonl")
    assert code == 0 and sorted(found) == ["plain", "streamed"]


def test_the_api_key_reaches_the_upstream_and_is_in_no_log(upstream, gateway, tmp_path):
    log = tmp_path / "key.jsonl"
    gw = gateway("shield", log)
    run_agent(client(gw.base, KEY), session="k")
    run_agent(client(gw.base, KEY), stream=True, session="k-stream")
    with pytest.raises(openai.RateLimitError):
        run_agent(client(gw.base, KEY), "FAIL429 please", session="k-429")
    calls = upstream.completions()
    assert len(calls) == 5
    assert [c.authorization for c in calls] == [f"Bearer {KEY}"] * 5
    for path in (log, tmp_path / "key.interventions.jsonl"):
        text = path.read_text(encoding="utf-8")
        assert text and KEY not in text and "Bearer" not in text, path
    assert KEY not in json.dumps(gw.sessions())
    assert KEY not in "".join(gw.stderr)


@pytest.mark.parametrize("through", ["direct", "gateway"])
@pytest.mark.parametrize(
    "trigger, error, status, message",
    [
        ("FAIL500", openai.InternalServerError, 500, "scripted failure"),
        ("FAIL429", openai.RateLimitError, 429, "slow down"),
    ],
)
def test_upstream_errors_raise_the_openai_clients_own_exceptions(
    upstream, gateway, tmp_path, through, trigger, error, status, message
):
    log = tmp_path / "err.jsonl"
    base = upstream.base if through == "direct" else gateway("shield", log).base
    with pytest.raises(error) as e:
        run_agent(client(base, KEY), f"{trigger} please", session="err")
    assert type(e.value) is error
    assert e.value.status_code == status
    assert e.value.body["message"] == message
    if status == 429:
        assert e.value.response.headers["retry-after"] == "7"
    # max_retries=0: one request upstream.
    assert len(upstream.completions()) == 1
    if through == "gateway":
        # The request's messages were committed and logged when it arrived.
        assert [m["role"] for m in lines(log)] == ["system", "user"]
        # And the gateway serves on.
        after = run_agent(client(base, KEY), session="after")
        assert after.ended and after.calls == 2
