"""A scripted OpenAI-compatible upstream for the gateway's Python tests: a real HTTP server
(http.server's ThreadingHTTPServer on 127.0.0.1, an OS-chosen port, in a thread).

It is the model of the Rust tests (crates/trac-gateway/tests/support/mod.rs): the model's turn
is the number of assistant messages in the request; turn 0 looks the user up, turns 1 and 2
update the reservation (the last word of the first user message) without asking for a
confirmation, turn 3 answers in text. With ``"stream": true`` it answers Server-Sent Events as
OpenAI sends them (``chat.completion.chunk`` objects, one per event, in chunked transfer
encoding, ending ``data: [DONE]``). A last user message saying ``FAIL500`` gets a 500,
``FAIL429`` a 429 with ``Retry-After: 7``. ``POST /v1/messages`` answers the same script in
Anthropic's Messages API shape (anthropic_script.py). Every request is recorded (path,
Authorization header, body, and every header).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic_script

FAIL_BODY = {"error": {"message": "scripted failure", "type": "server_error"}}
RATE_BODY = {"error": {"message": "slow down", "type": "rate_limit_error"}}
CREATED = 1_700_000_000


@dataclass
class Seen:
    """One request the upstream was sent."""

    method: str
    path: str
    authorization: str | None
    body: Any
    #: Every header, names in lower case.
    headers: dict | None = None


def scripted_message(turn: int, rid: str) -> dict:
    """The scripted model's assistant message at ``turn`` (as in the Rust tests)."""

    def call(name: str, args: dict) -> dict:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{turn}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            ],
        }

    if turn == 0:
        return call("get_user_details", {"user_id": "mia_li_3668"})
    if turn == 1:
        return call(
            "update_reservation_flights",
            {"reservation_id": rid, "flights": [{"flight_number": "HAT045"}]},
        )
    if turn == 2:
        return call("update_reservation_baggages", {"reservation_id": rid, "total_baggages": 1})
    return {"role": "assistant", "content": "All done: your flight is changed and a bag is added."}


def completion(turn: int, model: str, message: dict) -> dict:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def sse_events(turn: int, model: str, message: dict) -> list[str]:
    """The stream of ``message``: a role chunk, the text word by word or each tool call's
    arguments in two pieces, a finish chunk, ``[DONE]``."""

    def chunk(delta: dict, finish: str | None) -> str:
        c = {
            "id": f"chatcmpl-{turn}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(c)}\n\n"

    out = []
    calls = message.get("tool_calls")
    if calls:
        for i, c in enumerate(calls):
            args = c["function"]["arguments"]
            half = len(args) // 2
            out.append(
                chunk(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "index": i,
                                "id": c["id"],
                                "type": "function",
                                "function": {"name": c["function"]["name"], "arguments": ""},
                            }
                        ],
                    },
                    None,
                )
            )
            for piece in (args[:half], args[half:]):
                out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}, None))
        out.append(chunk({}, "tool_calls"))
    else:
        out.append(chunk({"role": "assistant", "content": ""}, None))
        words = message["content"].split(" ")
        for j, w in enumerate(words):
            out.append(chunk({"content": w + (" " if j + 1 < len(words) else "")}, None))
        out.append(chunk({}, "stop"))
    out.append("data: [DONE]\n\n")
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format, *args):  # noqa: A002 - quiet: pytest shows failures
        pass

    def _record(self, body: Any) -> None:
        with self.server.lock:
            self.server.seen.append(
                Seen(
                    self.command,
                    self.path,
                    self.headers.get("Authorization"),
                    body,
                    {k.lower(): v for k, v in self.headers.items()},
                )
            )

    def _json(self, status: int, obj: Any, extra: dict | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        self._record(None)
        if self.path.endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "no such path", "type": "not_found"}})

    def do_POST(self):  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        self._record(body)
        if self.path.endswith("/messages") and isinstance(body, dict):
            self._messages(body)
            return
        if not self.path.endswith("/chat/completions") or not isinstance(body, dict):
            self._json(404, {"error": {"message": "no such path", "type": "not_found"}})
            return
        messages = body.get("messages") or []
        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        last_user = users[-1] if users else ""
        if "FAIL500" in last_user:
            self._json(500, FAIL_BODY)
            return
        if "FAIL429" in last_user:
            self._json(429, RATE_BODY, {"Retry-After": "7"})
            return
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        words = (users[0] if users else "").split()
        rid = words[-1] if words else "NONE"
        model = body.get("model") or "scripted"
        message = scripted_message(turn, rid)
        if body.get("stream") is True:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in sse_events(turn, model, message):
                data = event.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        else:
            self._json(200, completion(turn, model, message))

    def _events(self, events: list[str]) -> None:
        """A 200 of server-sent ``events``, each flushed in its own chunk."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            data = event.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _messages(self, body: dict) -> None:
        """``POST /v1/messages``: the script in Anthropic's shape."""
        status, out, extra = anthropic_script.answer(body)
        if isinstance(out, list):
            self._events(out)
        else:
            self._json(status, out, extra)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[Seen] = []
        self.lock = threading.Lock()


class Upstream:
    """The scripted upstream, started on 127.0.0.1 and an OS-chosen port."""

    def __init__(self):
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        #: ``http://127.0.0.1:PORT/v1``
        self.base = f"http://{host}:{port}/v1"

    @property
    def seen(self) -> list[Seen]:
        """Every request so far, in order."""
        with self._server.lock:
            return list(self._server.seen)

    def messages(self) -> list[Seen]:
        """The Messages API requests so far."""
        return [s for s in self.seen if s.path.endswith("/messages")]

    def completions(self) -> list[Seen]:
        """The chat-completion requests so far."""
        return [s for s in self.seen if s.path.endswith("/chat/completions")]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
