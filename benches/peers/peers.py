#!/usr/bin/env python3
"""The peers of the peer benchmark, each run as its own process by bench.py.

usage: peers.py PEER WORKLOAD INPUT OUT

PEER is `paper` (the paper's progression, vendor/llm_monitoring/ltl.py), `reelay` (PyPI reelay,
past-time equivalents), `json` / `orjson` (parse the lines only: the floor a Python user pays) or
`invariant` (invariant-ai's local analyzer, chat workload only). WORKLOAD names a property set
of workloads.py. Each monitor writes its verdicts to OUT as JSON: {"SESSION\\tPROPERTY":
[violations, first violation step (1-based) or null]}; a parser writes the number of lines.

Violations are counted as trac's default (TRAC_R, docs/guide/audit.md): a violated property
restarts from its formula at the violating step itself, and a failing position counts once.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import workloads  # noqa: E402


def read_events(path, loads):
    """Yields (session, set of labels) per line of a pre-labeled JSON Lines file."""
    with open(path, "rb") as f:
        for line in f:
            ev = loads(line)
            yield ev.get("session", ""), ev["labels"]


def run_paper(workload, path):
    """The paper's progression: one LTLFormula per session and property, progressed per event."""
    sys.path.insert(0, os.path.join(HERE, "vendor", "llm_monitoring"))
    from ltl import LTLFormula

    props = workloads.PROPERTIES[workload]
    initial = [p.paper(LTLFormula) for p in props]
    sessions = {}  # session -> [formulas, step, counts, firsts]
    for sid, labels in read_events(path, json.loads):
        st = sessions.get(sid)
        if st is None:
            st = sessions[sid] = [list(initial), 0, [0] * len(props), [None] * len(props)]
        st[1] += 1
        state = {a: True for a in labels}
        formulas = st[0]
        for i, f in enumerate(formulas):
            g = f.progress(state)
            if g.score() == -1:
                st[2][i] += 1
                if st[3][i] is None:
                    st[3][i] = st[1]
                # TRAC_R: restart at this step; the position that failed is counted once.
                g = initial[i].progress(state)
                if g.score() == -1:
                    g = initial[i]
            formulas[i] = g
    return {
        f"{sid}\t{p.id}": [st[2][i], st[3][i]]
        for sid, st in sessions.items()
        for i, p in enumerate(props)
    }


def run_reelay(workload, path):
    """reelay's discrete-time monitors: one per session and property, past-time equivalents."""
    import orjson
    import reelay

    props = workloads.PROPERTIES[workload]
    atoms = workloads.ATOMS
    sessions = {}
    for sid, labels in read_events(path, orjson.loads):
        st = sessions.get(sid)
        if st is None:
            mons = [reelay.discrete_timed_monitor(pattern=p.reelay, condense=False) for p in props]
            st = sessions[sid] = [mons, 0, [0] * len(props), [None] * len(props)]
        st[1] += 1
        held = set(labels)
        valuation = {a: a in held for a in atoms}
        for i, m in enumerate(st[0]):
            if not m.update(valuation)["value"]:
                st[2][i] += 1
                if st[3][i] is None:
                    st[3][i] = st[1]
    return {
        f"{sid}\t{p.id}": [st[2][i], st[3][i]]
        for sid, st in sessions.items()
        for i, p in enumerate(props)
    }


def run_parse(loads, path):
    """Parses every line and touches the fields trac reads; returns the number of lines."""
    n = 0
    with open(path, "rb") as f:
        for line in f:
            ev = loads(line)
            ev.get("session")
            ev.get("labels")
            n += 1
    return {"lines": n}


def run_invariant(path):
    """invariant-ai's local analyzer, one analysis per conversation (its evaluation limit of
    about 100 checking cycles per analysis refuses a whole 10^5-message log)."""
    from invariant.analyzer import LocalPolicy

    policy = LocalPolicy.from_string(workloads.INVARIANT_POLICY)
    conversations = {}
    with open(path, "rb") as f:
        for line in f:
            msg = json.loads(line)
            sid = msg.pop("session")
            for call in msg.get("tool_calls") or []:
                fn = call["function"]
                fn["arguments"] = json.loads(fn["arguments"])
            conversations.setdefault(sid, []).append(msg)
    out = {}
    for sid, msgs in conversations.items():
        n = len(policy.analyze(msgs).errors)
        out[f"{sid}\t{workloads.CHAT_PROPERTY}"] = [n, None]
    return out


def main():
    peer, workload, path, out = sys.argv[1:5]
    if peer == "paper":
        res = run_paper(workload, path)
    elif peer == "reelay":
        res = run_reelay(workload, path)
    elif peer == "json":
        res = run_parse(json.loads, path)
    elif peer == "orjson":
        import orjson

        res = run_parse(orjson.loads, path)
    elif peer == "invariant":
        res = run_invariant(path)
    else:
        sys.exit(f"peers.py: unknown peer {peer!r}")
    with open(out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
