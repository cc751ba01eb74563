"""The two JSON-lines protocols of `trac run`, for the adapters in this folder.

- The environment protocol (`trac run --env-cmd CMD`, crates/trac-agent/src/env.rs): one request
  per line on stdin, `{"op": "reset", "seed": S}` or `{"op": "step", "action": "..."}`; one answer
  per line on stdout, `{"observation": ..., "reward"?, "done"?, "labels"?, "state_labels"?}` (the
  reset answer may also carry `instructions`, `task` and `noop`).
- The command-model protocol (`trac run --model "cmd:PROGRAM ARGS"`, crates/trac-llm/src/command.rs):
  one chat-completions request per line (`{"messages", "n"?, "seed"?, ...}`), one chat-completion
  object per line (`{"choices": [{"message": {"role", "content"}}], "usage"}`).

Only the standard library is used here. Anything the environment library prints goes to stderr,
so that stdout carries answers only.
"""

import json
import re
import sys
import traceback

STEP_LINE = re.compile(r"^Step (\d+): (.*)$")
# Markers of crates/trac-agent/src/agent.rs: the inject intervention's warning and the switch
# intervention's substitute-model prompt. A scripted agent complies when it sees either.
WARNING_MARKER = "Safety warning:"
SAFE_MODEL_MARKER = "You are a safe model"


def _answer_lines(handle):
    """Reads requests from stdin, writes `handle(request)` as one JSON line each.

    While `handle` runs, `sys.stdout` is stderr (libraries that print stay off the protocol). An
    exception becomes `{"error": "..."}`: trac reports it with the request that failed.
    """
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        sys.stdout = sys.stderr
        try:
            answer = handle(json.loads(line))
        except Exception as e:  # reported to trac, which stops with the request's name
            traceback.print_exc(file=sys.stderr)
            answer = {"error": f"{type(e).__name__}: {e}"}
        finally:
            sys.stdout = out
        out.write(json.dumps(answer) + "\n")
        out.flush()


def serve_env(env):
    """Serves `env` (an object with `reset(seed) -> dict` and `step(action) -> dict`)."""

    def handle(req):
        op = req.get("op")
        if op == "reset":
            return env.reset(int(req.get("seed") or 0))
        if op == "step":
            return env.step(str(req.get("action", "")))
        raise ValueError(f"unknown op {op!r}")

    _answer_lines(handle)


def history(messages):
    """The agent's past actions in a trac prompt (its `Step N: ACTION` lines), the task text
    (the user message before the memory), and whether the prompt asks it to comply."""
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    user = "\n".join(m["content"] for m in messages if m.get("role") == "user")
    actions = []
    for line in user.splitlines():
        m = STEP_LINE.match(line.strip())
        if m:
            actions.append(m.group(2).strip())
    comply = system.startswith(SAFE_MODEL_MARKER) or WARNING_MARKER in user
    return system, user, actions, comply


def serve_model(name, act):
    """Serves a scripted chat model: `act(system, user, actions, comply, seed) -> str` gives one
    action; each of the `n` choices of a request seeded `s` is drawn with seed `s + i`. A request
    for a direct prediction ("predict whether ...") is answered with an empty JSON object (no
    estimate: every risk is then 0)."""

    def handle(req):
        messages = req.get("messages") or []
        system, user, actions, comply = history(messages)
        n = max(1, int(req.get("n") or 1))
        seed = req.get("seed")
        choices = []
        for i in range(n):
            if "predict whether" in system:
                text = "{}"
            else:
                s = None if seed is None else int(seed) + i
                text = f"$ACTION: {act(system, user, actions, comply, s)}$"
            choices.append(
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            )
        words = sum(len(m.get("content", "").split()) for m in messages)
        return {
            "object": "chat.completion",
            "model": name,
            "choices": choices,
            "usage": {"prompt_tokens": words, "completion_tokens": 8 * n, "total_tokens": words + 8 * n},
        }

    _answer_lines(handle)
