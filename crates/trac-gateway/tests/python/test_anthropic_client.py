"""`trac gateway` with the official `anthropic` Python client as the agent: the Messages API
(`POST /v1/messages`) through the gateway, in front of upstream.py's scripted model in
Anthropic's shape (anthropic_script.py). The client's ``base_url`` is the gateway's address
(``http://127.0.0.1:PORT``: the client adds ``/v1/messages``).

The agent keeps its conversation as Anthropic's clients do: each response's content blocks as
an assistant message, its tool results as one user message of ``tool_result`` blocks. The
gateway logs the system prompt first, then the messages; the airline spec's
`confirm-before-write` is violated at steps 5 and 7 (system, user, lookup call, its result,
first update (5), its result, second update (7)).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import pytest

from harness import audit, audit_verdicts, lines

KEY = "sk-ant-test-SECRET-py-4242"
SYSTEM = "You are an airline agent. Confirm every booking change with the user before making it."
ASK = "Please move my flight to HAT045 and add a bag, reservation ZFA04Y"
RULE = "every update of reservation rid comes after a user confirmation"
WRITES = ["update_reservation_flights", "update_reservation_baggages"]
TOOLS = [
    {"name": name, "input_schema": {"type": "object"}}
    for name in ("get_user_details", *WRITES)
]


def client(base_url: str) -> anthropic.Anthropic:
    """The official client against ``base_url`` (``http://HOST:PORT``), without retries."""
    return anthropic.Anthropic(base_url=base_url, api_key=KEY, max_retries=0, timeout=60)


def root(url: str) -> str:
    """``http://HOST:PORT/v1`` without its ``/v1``: the base URL of Anthropic's clients."""
    return url.removesuffix("/v1")


@dataclass
class Run:
    messages: list[dict]
    calls: int = 0
    ended: bool = False
    executed: list[tuple[str, dict]] = field(default_factory=list)
    #: Per streamed call, its events (``model_dump()`` of each).
    events: list[list[dict]] = field(default_factory=list)


def run_agent(c: anthropic.Anthropic, *, stream: bool = False, session: str | None = None) -> Run:
    """The tool-calling loop (at most 8 calls); a streamed call is read by the client's own
    ``messages.stream`` helper (its final message; with ``stream="events"`` its events kept)."""
    run = Run(messages=[{"role": "user", "content": ASK}])
    headers = {"X-Trac-Session": session} if session else None
    args: dict[str, Any] = dict(
        model="scripted", max_tokens=256, system=SYSTEM, tools=TOOLS, extra_headers=headers
    )
    while run.calls < 8:
        run.calls += 1
        if stream == "events":
            with c.messages.stream(messages=run.messages, **args) as s:
                run.events.append([e.model_dump() for e in s])
                m = s.get_final_message()
        elif stream:
            with c.messages.stream(messages=run.messages, **args) as s:
                m = s.get_final_message()
        else:
            m = c.messages.create(messages=run.messages, **args)
        content = [b.model_dump(exclude_none=True) for b in m.content]
        for b in content:
            b.pop("citations", None)
        run.messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            run.ended = True
            break
        results = []
        for u in uses:
            run.executed.append((u["name"], u["input"]))
            out = {"status": "updated"} if u["name"] in WRITES else {"name": "Mia Li"}
            results.append({"type": "tool_result", "tool_use_id": u["id"], "content": json.dumps(out)})
        run.messages.append({"role": "user", "content": results})
    return run


def write_log(path: Path, session: str, messages: list[dict]) -> None:
    """The conversation as the gateway logs it: the system prompt, then the messages."""
    with open(path, "a", encoding="utf-8") as f:
        for m in [{"role": "system", "content": SYSTEM}, *messages]:
            f.write(json.dumps({**m, "session": session}) + "\n")


def violations(found: list[tuple], prop: str = "confirm-before-write") -> list[tuple]:
    return [(step, value) for (p, step, verdict, value) in found if p == prop and verdict == "violated"]


def test_without_trac_the_agent_books_twice_unconfirmed_and_trac_audit_finds_both(upstream, tmp_path):
    run = run_agent(client(root(upstream.base)))
    assert run.ended and run.calls == 4
    assert [name for name, _ in run.executed] == ["get_user_details", *WRITES]
    log = tmp_path / "direct.jsonl"
    write_log(log, "direct", run.messages)
    code, found = audit_verdicts(log)
    assert code == 1
    assert violations(found["direct"]) == [(5, "ZFA04Y"), (7, "ZFA04Y")]


@pytest.mark.parametrize("stream", [False, True])
def test_through_the_shield_no_booking_is_made_and_the_log_audits_clean(upstream, gateway, tmp_path, stream):
    log = tmp_path / "gw.jsonl"
    gw = gateway("shield", log)
    run = run_agent(client(root(gw.base)), stream=stream, session="shielded")
    assert run.ended and run.calls == 2
    assert run.executed == [("get_user_details", {"user_id": "mia_li_3668"})]
    [block] = run.messages[-1]["content"]
    assert block["type"] == "text" and block["text"].startswith("I can't do that"), block
    assert RULE in block["text"] and "ZFA04Y" in block["text"]
    assert len(upstream.messages()) == 2
    r = audit(log)
    assert r.returncode == 0, (r.stdout, r.stderr)
    iv = lines(tmp_path / "gw.interventions.jsonl")
    assert len(iv) == 1 and iv[0]["step"] == 5
    assert iv[0]["replaced"]["content"][0]["name"] == "update_reservation_flights"


def test_monitoring_only_verdicts_equal_trac_audit_and_events_arrive_unchanged(upstream, gateway, tmp_path):
    direct = run_agent(client(root(upstream.base)), stream="events")
    log = tmp_path / "none.jsonl"
    gw = gateway("none", log)
    via = run_agent(client(root(gw.base)), stream="events")
    # Event by event as the upstream sent them, so the same conversation.
    assert via.events == direct.events
    # The helper's events: per tool call message_start, its block (start, two input pieces,
    # each with the helper's own `input_json` event, stop), message_delta, message_stop; the
    # text's 11 words likewise (`ping` skipped).
    assert [len(e) for e in direct.events] == [9, 9, 9, 27]
    assert via.messages == direct.messages and via.ended and via.calls == 4
    ours = gw.verdicts()
    code, theirs = audit_verdicts(log)
    assert code == 1 and ours == theirs
    [(session, found)] = ours.items()
    assert violations(found) == [(5, "ZFA04Y"), (7, "ZFA04Y")]
    # The log is the conversation, its system prompt first.
    assert lines(log)[0] == {"role": "system", "content": SYSTEM, "session": session}
    assert [{k: v for k, v in m.items() if k != "session"} for m in lines(log)[1:]] == via.messages


def test_on_block_error_is_an_anthropic_style_400(upstream, gateway, tmp_path):
    gw = gateway("shield", tmp_path / "err.jsonl", "--on-block", "error")
    with pytest.raises(anthropic.BadRequestError) as e:
        run_agent(client(root(gw.base)), session="err")
    assert e.value.status_code == 400
    body = e.value.body
    assert body["type"] == "error"
    assert body["error"]["type"] == "trac_blocked"
    assert body["error"]["code"] == "confirm-before-write"
    assert RULE in body["error"]["message"]


def test_the_api_key_and_version_reach_the_upstream_and_never_the_log(upstream, gateway, tmp_path):
    log = tmp_path / "keys.jsonl"
    gw = gateway("shield", log)
    run_agent(client(root(gw.base)))
    seen = upstream.messages()
    assert len(seen) == 2
    for s in seen:
        # The client sends its key as `x-api-key` or (version 2.x against another base URL)
        # as a bearer token: either is passed through, as are its version headers.
        assert s.headers.get("x-api-key") == KEY or s.headers.get("authorization") == f"Bearer {KEY}"
        assert s.headers["anthropic-version"]
    for f in (log, tmp_path / "keys.interventions.jsonl"):
        text = f.read_text(encoding="utf-8")
        assert text and "SECRET" not in text
    assert "SECRET" not in json.dumps(gw.sessions())


def test_upstream_errors_reach_the_client_as_typed_errors(upstream, gateway):
    gw = gateway("none")
    c = client(root(gw.base))
    with pytest.raises(anthropic.InternalServerError) as e:
        c.messages.create(model="m", max_tokens=9, messages=[{"role": "user", "content": "FAIL500"}])
    assert e.value.body["error"]["message"] == "scripted failure"
    with pytest.raises(anthropic.RateLimitError) as e:
        c.messages.create(model="m", max_tokens=9, messages=[{"role": "user", "content": "FAIL429"}])
    assert e.value.response.headers["retry-after"] == "7"
