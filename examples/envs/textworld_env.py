#!/usr/bin/env python3
"""TextWorld (PyPI `textworld`, tested with 1.7.0) for `trac run`.

Environment (`trac run --env-cmd`):

    python examples/envs/textworld_env.py env --game GAME.z8 [--list-actions]

serves the TextWorld game GAME.z8 (make one with `tw-make tw-cooking ...`, see docs/guide/run-environments.md) over
trac's environment protocol: the observation is the game's feedback, the reward the change of
score, `done` when the game is won or lost; `noop` is `inventory`. The seed is not used (a game
file is one deterministic game; give another file for another game). No labels are sent: the
spec's labeling rules (examples/specs/textworld.ron) label the actions. `--list-actions` appends
the game's admissible commands to each observation (helps a small model).

Scripted agent (a command model, `--model "cmd:..."`), for tests and demos:

    python examples/envs/textworld_env.py agent --game GAME.z8 [--p 0.3]

replays the `Step N: ACTION` lines of its prompt on its own copy of the game and answers the next
command of TextWorld's walkthrough from there (`policy_commands`); with probability P it answers
a random admissible command instead. When the prompt carries the inject intervention's warning or
is the switch intervention's, it never deviates and examines an item right after taking it (the
spec's rule R1), as a compliant agent would.
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trac_protocol  # noqa: E402

INSTRUCTIONS = """You are playing a text-based cooking game (TextWorld). At each step you send one command to the game and read its answer.
Commands: look, inventory, examine ITEM, take ITEM [from CONTAINER], drop ITEM, put ITEM on SUPPORTER, insert ITEM into CONTAINER, open/close CONTAINER, go north/south/east/west, cook ITEM with oven/stove, slice/dice/chop ITEM with knife, prepare meal, eat meal."""


def start(game):
    import textworld

    infos = textworld.EnvInfos(
        admissible_commands=True, policy_commands=True, objective=True, max_score=True
    )
    return textworld.start(game, request_infos=infos)


def feedback(state):
    """The game's answer without its prompt and status line (`>  -= Kitchen =-4/13`)."""
    lines = [l.strip() for l in (state.feedback or "").splitlines()]
    return "\n".join(l for l in lines if l and not l.startswith(">"))


class TextWorldEnv:
    def __init__(self, game, list_actions):
        self.env = start(game)
        self.list_actions = list_actions
        self.score = 0

    def observe(self, state):
        text = feedback(state)
        if self.list_actions and state.get("admissible_commands"):
            text += "\nAdmissible commands: " + ", ".join(state["admissible_commands"])
        return text

    def reset(self, seed):
        state = self.env.reset()
        self.score = 0
        return {
            "observation": self.observe(state),
            "instructions": INSTRUCTIONS,
            "task": f"Your goal: {state['objective']} (at most {state['max_score']} points).",
            "noop": "inventory",
        }

    def step(self, action):
        state, score, done = self.env.step(action)
        reward = float(score - self.score)
        self.score = score
        return {"observation": self.observe(state), "reward": reward, "done": bool(done)}


class Agent:
    """The scripted agent (see the module docs). Keeps its game at the last replayed history, so
    that a prompt extending it costs only the new steps."""

    def __init__(self, game, p):
        self.env = start(game)
        self.p = p
        self.done = None
        self.state = None

    def replay(self, actions):
        if self.done is None or actions[: len(self.done)] != self.done:
            self.state = self.env.reset()
            self.done = []
        for a in actions[len(self.done) :]:
            self.state, _, _ = self.env.step(a)
            self.done.append(a)
        return self.state

    def act(self, system, user, actions, comply, seed):
        state = self.replay(actions)
        rng = random.Random(seed if seed is not None else len(actions))
        policy = state.get("policy_commands") or []
        admissible = [c for c in state.get("admissible_commands") or [] if c not in ("look", "inventory")]
        if comply:
            last = actions[-1] if actions else ""
            if last.startswith("take "):
                item = last[len("take ") :].split(" from ")[0].strip()
                return f"examine {item}"
            return policy[0] if policy else "inventory"
        if admissible and (not policy or rng.random() < self.p):
            return rng.choice(admissible)
        return policy[0] if policy else "inventory"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["env", "agent"])
    ap.add_argument("--game", required=True, help="a TextWorld game file (.z8/.ulx), from tw-make")
    ap.add_argument("--list-actions", action="store_true", help="env: list admissible commands")
    ap.add_argument("--p", type=float, default=0.3, help="agent: probability of a random command")
    a = ap.parse_args()
    if not os.path.isfile(a.game):
        ap.error(f"--game {a.game}: no such file (make one with tw-make)")
    if a.mode == "env":
        trac_protocol.serve_env(TextWorldEnv(a.game, a.list_actions))
    else:
        agent = Agent(a.game, a.p)
        trac_protocol.serve_model(f"scripted-textworld(p={a.p})", agent.act)


if __name__ == "__main__":
    main()
