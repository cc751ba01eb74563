"""The scripted model of upstream.py in Anthropic's Messages API shape (``POST /v1/messages``):
the script of the Rust tests' Anthropic upstream (crates/trac-gateway/tests/support/anthropic.rs).

The model's turn is the number of assistant messages in the request; turn 0 looks the user up,
turns 1 and 2 update the reservation (the last word of the first user message) without asking
for a confirmation, turn 3 answers in text. Tool calls are ``tool_use`` blocks; a stream is the
events Anthropic documents (``message_start``, ``ping``, per block ``content_block_start``,
``content_block_delta`` (``text_delta`` word by word, ``input_json_delta`` in two pieces),
``content_block_stop``, then ``message_delta`` and ``message_stop``).
"""

from __future__ import annotations

import json
from typing import Any

FAIL_BODY = {"type": "error", "error": {"type": "api_error", "message": "scripted failure"}}
RATE_BODY = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}


def text_of(m: dict) -> str:
    """The text of a message: its string content, or its text blocks joined."""
    c = m.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(b["text"] for b in c if isinstance(b, dict) and b.get("type") == "text")
    return ""


def scripted_content(turn: int, rid: str) -> list[dict]:
    """The scripted model's content blocks at ``turn``."""

    def call(name: str, args: dict) -> list[dict]:
        return [{"type": "tool_use", "id": f"toolu_{turn}", "name": name, "input": args}]

    if turn == 0:
        return call("get_user_details", {"user_id": "mia_li_3668"})
    if turn == 1:
        return call(
            "update_reservation_flights",
            {"reservation_id": rid, "flights": [{"flight_number": "HAT045"}]},
        )
    if turn == 2:
        return call("update_reservation_baggages", {"reservation_id": rid, "total_baggages": 1})
    return [{"type": "text", "text": "All done: your flight is changed and a bag is added."}]


def _stop(content: list[dict]) -> str:
    return "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"


def response(turn: int, model: str, content: list[dict]) -> dict:
    """The non-streamed Messages response of ``content``."""
    return {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": model,
        "stop_reason": _stop(content),
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def sse_events(turn: int, model: str, content: list[dict]) -> list[str]:
    """The stream of ``content``, one server-sent event per string."""

    def ev(data: dict) -> str:
        return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"

    start = {**response(turn, model, []), "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    out = [ev({"type": "message_start", "message": start}), ev({"type": "ping"})]
    for i, b in enumerate(content):
        deltas: list[dict[str, Any]]
        if b["type"] == "tool_use":
            head = {**b, "input": {}}
            s = json.dumps(b["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in (s[: len(s) // 2], s[len(s) // 2 :])]
        else:
            head = {**b, "text": ""}
            words = b["text"].split(" ")
            deltas = [
                {"type": "text_delta", "text": w + (" " if j + 1 < len(words) else "")} for j, w in enumerate(words)
            ]
        out.append(ev({"type": "content_block_start", "index": i, "content_block": head}))
        out += [ev({"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
        out.append(ev({"type": "content_block_stop", "index": i}))
    out.append(
        ev(
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop(content), "stop_sequence": None},
                "usage": {"output_tokens": 5},
            }
        )
    )
    out.append(ev({"type": "message_stop"}))
    return out


def answer(body: dict) -> tuple[int, Any, dict]:
    """What the upstream answers a Messages request: ``(status, JSON body or SSE events,
    extra headers)``."""
    messages = body.get("messages") or []
    users = [text_of(m) for m in messages if m.get("role") == "user"]
    last_user = users[-1] if users else ""
    if "FAIL500" in last_user:
        return 500, FAIL_BODY, {}
    if "FAIL429" in last_user:
        return 429, RATE_BODY, {"retry-after": "7"}
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    words = (users[0] if users else "").split()
    rid = words[-1] if words else "NONE"
    model = body.get("model") or "scripted"
    content = scripted_content(turn, rid)
    if body.get("stream") is True:
        return 200, sse_events(turn, model, content), {}
    return 200, response(turn, model, content), {}
