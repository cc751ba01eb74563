"""`trac gateway --intervene inject|switch` with the official `openai` Python client as the
agent: the gateway is the `trac` binary run as a subprocess, the model the scripted upstream of
upstream.py, which updates the reservation without a confirmation at turns 1 and 2 whatever it
is told (so each update is at risk: with `--predict k=1` its risk is exactly 1).
"""

from __future__ import annotations

from agent import MODEL, SYSTEM, client, run_agent
from harness import lines

KEY = "sk-test-SECRET-py-4242"
#: The residual of `confirm-before-write` before any reservation was updated, in English.
RESIDUAL = (
    "for every rid: always, if the assistant calls an update_* tool on reservation rid, "
    "then at some earlier or the current step the user confirms"
)


def test_inject_asks_again_with_the_residual_in_the_system_message(upstream, gateway, tmp_path):
    log = tmp_path / "inj.jsonl"
    gw = gateway("inject", log)
    run = run_agent(client(gw.base, KEY), session="inj")
    # The scripted model updates anyway: inject asks once per update and takes that answer.
    assert run.ended and run.calls == 4
    sent = [s.body for s in upstream.completions()]
    # Turn 0, turn 1, turn 1 asked again, turn 2, turn 2 asked again, turn 3.
    assert len(sent) == 6
    for i in (2, 4):
        system = sent[i]["messages"][0]["content"]
        assert system.startswith(SYSTEM + "\n\n"), system
        assert sent[i]["messages"][1:] == sent[i - 1]["messages"][1:]
    assert sent[2]["messages"][0]["content"].endswith(f"Make sure that {RESIDUAL}.")
    # The agent's messages are its own: the log holds no warning.
    assert lines(log)[0]["content"] == SYSTEM
    iv = lines(tmp_path / "inj.interventions.jsonl")
    assert [(r["kind"], r["step"], r["model_calls"], r["chosen"]) for r in iv] == [
        ("inject", 5, 2, 1),
        ("inject", 7, 2, 1),
    ]
    assert iv[0]["residuals"] == [RESIDUAL]


def test_switch_asks_the_substitute_model(upstream, gateway, tmp_path):
    log = tmp_path / "sw.jsonl"
    gw = gateway("switch", log, "--substitute-model", "careful-model")
    run = run_agent(client(gw.base, KEY), session="sw")
    assert run.ended and run.calls == 4
    models = [s.body["model"] for s in upstream.completions()]
    assert models == [MODEL, MODEL, "careful-model", MODEL, "careful-model", MODEL]
    iv = lines(tmp_path / "sw.interventions.jsonl")
    assert [(r["kind"], r["step"]) for r in iv] == [("switch", 5), ("switch", 7)]
    s = gw.sessions()
    assert s["intervene"] == "switch" and s["substitute_model"] == "careful-model"
