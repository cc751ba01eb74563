"""The workloads of the peer benchmark: properties (as trac, reelay and the paper's progression
write them) and the generators of their inputs (seeded: the same bytes on every run)."""
import json
import random
from collections import namedtuple

ATOMS = [f"p{i}" for i in range(10)]
P_ATOM = 0.1  # each atom holds at each event with this probability, independently

# id: trac's id of the n-th --formula; trac: Spot syntax (future time); reelay: a past-time
# formula false exactly at the steps where trac's is violated; paper: builds the LTLFormula.
Prop = namedtuple("Prop", "id trac reelay paper")


def _g_imp_next(a, b, neg=False):
    """G(a -> X b) (or X !b): violated at step i+1 when a held at i and b does not (does) at i+1."""

    def build(L):
        nb = L.neg(L.atom(b)) if neg else L.atom(b)
        return L.always(L.implies(L.atom(a), L.next(nb)))

    trac = f"G({a} -> X {'!' if neg else ''}{b})"
    reelay = f"pre{{{a}}} -> {'not ' if neg else ''}{{{b}}}"
    return trac, reelay, build


def _props():
    """The ten properties; the 3-property workloads use the first three."""
    table = [
        _g_imp_next("p0", "p1"),
        (
            "G !(p2 & p3)",
            "not ({p2} and {p3})",
            lambda L: L.always(L.neg(L.and_(L.atom("p2"), L.atom("p3")))),
        ),
        _g_imp_next("p4", "p4", neg=True),
        (
            "G(p5 -> p6 | p7)",
            "{p5} -> ({p6} or {p7})",
            lambda L: L.always(L.implies(L.atom("p5"), L.or_(L.atom("p6"), L.atom("p7")))),
        ),
        (
            "G(p1 & p2 -> X p8)",
            "pre({p1} and {p2}) -> {p8}",
            lambda L: L.always(L.implies(L.and_(L.atom("p1"), L.atom("p2")), L.next(L.atom("p8")))),
        ),
        (
            "G(p9 -> X(p0 | p3))",
            "pre{p9} -> ({p0} or {p3})",
            lambda L: L.always(L.implies(L.atom("p9"), L.next(L.or_(L.atom("p0"), L.atom("p3"))))),
        ),
        (
            "G !(p6 & p8 & p9)",
            "not ({p6} and {p8} and {p9})",
            lambda L: L.always(L.neg(L.and_(L.atom("p6"), L.and_(L.atom("p8"), L.atom("p9"))))),
        ),
        _g_imp_next("p7", "p2", neg=True),
        (
            "G(p0 -> p3 | p4 | p5)",
            "{p0} -> ({p3} or {p4} or {p5})",
            lambda L: L.always(
                L.implies(L.atom("p0"), L.or_(L.atom("p3"), L.or_(L.atom("p4"), L.atom("p5"))))
            ),
        ),
        _g_imp_next("p8", "p9"),
    ]
    return [Prop(f"f{i + 1}", t, r, b) for i, (t, r, b) in enumerate(table)]


_ALL = _props()
PROPERTIES = {"events3": _ALL[:3], "events10": _ALL, "sessions": _ALL[:3]}

CHAT_PROPERTY = "no-delete"  # benches/peers/chat.ron
INVARIANT_POLICY = """
raise "deleted a file" if:
    (call: ToolCall)
    call is tool:delete_file
"""
TOOLS = ["read_file", "list_dir", "write_file", "search", "delete_file"]
P_DELETE = 0.05  # an assistant's call is delete_file with this probability


def _labels(rng):
    return json.dumps([a for a in ATOMS if rng.random() < P_ATOM])


def gen_events(path, n, seed=1):
    """n events of one session (no `session` field): `{"labels": [...]}` per line."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            f.write(f'{{"labels":{_labels(rng)}}}\n')


def gen_sessions(path, sessions, per, seed=2, concurrent=1000):
    """`sessions` sessions of `per` events, interleaved `concurrent` at a time (each block of
    sessions starts when the previous block has ended), no end markers."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for start in range(0, sessions, concurrent):
            block = list(range(start, min(start + concurrent, sessions)))
            for _ in range(per):
                rng.shuffle(block)
                for s in block:
                    f.write(f'{{"session":"s{s}","labels":{_labels(rng)}}}\n')


def gen_chat(path, conversations, seed=3):
    """OpenAI chat messages with a `session` field, 10 per conversation: a user message, four
    assistant tool calls each followed by its tool result, an assistant answer."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for c in range(conversations):
            sid = f"c{c}"
            f.write(json.dumps({"session": sid, "role": "user", "content": f"Tidy up project {c}."}) + "\n")
            for k in range(4):
                tool = "delete_file" if rng.random() < P_DELETE else rng.choice(TOOLS[:4])
                cid = f"call_{c}_{k}"
                args = json.dumps({"path": f"/work/p{c}/f{k}.txt"})
                call = {"id": cid, "type": "function", "function": {"name": tool, "arguments": args}}
                f.write(
                    json.dumps({"session": sid, "role": "assistant", "content": None, "tool_calls": [call]})
                    + "\n"
                )
                f.write(json.dumps({"session": sid, "role": "tool", "tool_call_id": cid, "content": "ok"}) + "\n")
            f.write(json.dumps({"session": sid, "role": "assistant", "content": "Done."}) + "\n")
