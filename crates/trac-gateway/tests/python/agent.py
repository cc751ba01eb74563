"""The agent of the gateway's Python tests: the official ``openai`` client in a small
tool-calling loop (call the model, run the tools it asks for locally, append their results,
repeat until the model answers without tool calls or ``max_calls`` calls were made).

Its conversation is kept as OpenAI message dicts, the shape the gateway logs (and
``trac audit`` reads) with a ``session`` field added.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

SYSTEM = "You are an airline agent. Confirm every booking change with the user before making it."
ASK = "Please move my flight to HAT045 and add a bag, reservation ZFA04Y"
MODEL = "scripted"
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("get_user_details", "update_reservation_flights", "update_reservation_baggages")
]


def client(base_url: str, api_key: str, **kw: Any) -> openai.OpenAI:
    """The official client against ``base_url``, without retries (every call is one request)."""
    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=60, **kw)


def run_tool(name: str, args: dict) -> dict:
    """The agent's tools, run locally."""
    if name == "get_user_details":
        return {"user_id": args["user_id"], "name": "Mia Li", "reservations": ["ZFA04Y"]}
    if name.startswith("update_reservation_"):
        return {"reservation_id": args["reservation_id"], "status": "updated"}
    raise ValueError(f"no tool {name}")


def message_dict(m: Any) -> dict:
    """An assistant message of the client (a ``ChatCompletionMessage``) as an OpenAI dict."""
    out: dict = {"role": "assistant", "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in m.tool_calls
        ]
    return out


def assemble(chunks: list[Any]) -> dict:
    """The assistant message that the streamed ``ChatCompletionChunk``s add up to."""
    content = None
    calls: dict[int, dict] = {}
    for ch in chunks:
        for choice in ch.choices:
            d = choice.delta
            if d.content is not None:
                content = (content or "") + d.content
            for tc in d.tool_calls or []:
                c = calls.setdefault(
                    tc.index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                )
                if tc.id:
                    c["id"] = tc.id
                if tc.function is not None:
                    c["function"]["name"] += tc.function.name or ""
                    c["function"]["arguments"] += tc.function.arguments or ""
    out: dict = {"role": "assistant", "content": content}
    if calls:
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


@dataclass
class Run:
    """How a run of the loop went."""

    messages: list[dict]
    calls: int = 0
    ended: bool = False
    #: The tools the agent ran, in order, with their arguments.
    executed: list[tuple[str, dict]] = field(default_factory=list)
    #: Per streamed call, its chunks (``model_dump()`` of each ``ChatCompletionChunk``).
    chunks: list[list[dict]] = field(default_factory=list)


def run_agent(
    c: openai.OpenAI,
    first_user: str = ASK,
    *,
    stream: bool = False,
    session: str | None = None,
    max_calls: int = 8,
) -> Run:
    """The tool-calling loop; ``session`` names the conversation (``X-Trac-Session``)."""
    run = Run(messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": first_user}])
    headers = {"X-Trac-Session": session} if session else None
    while run.calls < max_calls:
        run.calls += 1
        if stream:
            chunks = list(
                c.chat.completions.create(
                    model=MODEL, messages=run.messages, tools=TOOLS, stream=True, extra_headers=headers
                )
            )
            run.chunks.append([ch.model_dump() for ch in chunks])
            m = assemble(chunks)
        else:
            r = c.chat.completions.create(
                model=MODEL, messages=run.messages, tools=TOOLS, extra_headers=headers
            )
            m = message_dict(r.choices[0].message)
        run.messages.append(m)
        if not m.get("tool_calls"):
            run.ended = True
            break
        for call in m["tool_calls"]:
            name = call["function"]["name"]
            args = json.loads(call["function"]["arguments"])
            result = run_tool(name, args)
            run.executed.append((name, args))
            run.messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return run


def write_log(path: Path, session: str, messages: list[dict]) -> None:
    """``messages`` as the gateway logs them: one OpenAI message per line, with ``session``."""
    with open(path, "a", encoding="utf-8") as f:
        for m in messages:
            f.write(json.dumps({**m, "session": session}) + "\n")
