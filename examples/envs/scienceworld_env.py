#!/usr/bin/env python3
"""ScienceWorld (PyPI `scienceworld`, tested with 1.2.3; needs Java) for `trac run`.

Environment (`trac run --env-cmd`):

    python examples/envs/scienceworld_env.py env [--task use-thermometer] [--variation V]

serves a ScienceWorld task over trac's environment protocol. The default task is the paper's
("measure the temperature of unknown substance B", `use-thermometer`; the rules are
examples/specs/scienceworld.ron). The variation is `--variation V`, else the reset's seed modulo
the task's number of variations; the task text names it (`variation 12`). The observation is
ScienceWorld's, the reward the change of score (0-100), `done` when the task is completed or
failed; `noop` is `inventory`. No labels are sent: the spec's labeling rules label the actions.

Scripted agent (a command model, `--model "cmd:..."`), for tests and demos:

    python examples/envs/scienceworld_env.py agent [--task use-thermometer] [--p 0.3]

follows the task's gold action sequence (for the variation its prompt names, else the one last
named), skipping the gold
actions already in its history; with probability P it answers instead a detour from the task's
rooms: `look around`, `go to art studio` or `open door to bedroom`. When the prompt carries the
inject intervention's warning or is the switch intervention's, it never detours and looks around
right after a `go` (the spec's rule R2), as a compliant agent would.
"""

import argparse
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trac_protocol  # noqa: E402

INSTRUCTIONS = """You are an agent in ScienceWorld, a text-based science laboratory. At each step you send one action and read the environment's answer.
Actions: look around, look at OBJ, inventory, open/close OBJ (e.g. open door to kitchen), go to LOCATION, pick up OBJ, put down OBJ, move OBJ to OBJ, focus on OBJ, use OBJ on OBJ (e.g. use thermometer on unknown substance B), activate/deactivate OBJ, wait, wait1."""

DETOURS = ["look around", "go to art studio", "open door to bedroom"]


def start(task, variation, gold):
    from scienceworld import ScienceWorldEnv

    env = ScienceWorldEnv("", envStepLimit=1000)
    env.load(task, variation, "", generateGoldPath=gold)
    return env


class ScienceWorldAdapter:
    def __init__(self, task, variation):
        self.task = task
        self.variation = variation
        self.env = None
        self.loaded = None
        self.score = 0

    def reset(self, seed):
        from scienceworld import ScienceWorldEnv

        if self.env is None:
            self.env = ScienceWorldEnv("", envStepLimit=1000)
        v = self.variation
        if v is None:
            v = seed % self.env.get_max_variations(self.task)
        self.env.load(self.task, v, "")
        obs, _info = self.env.reset()
        self.score = 0
        return {
            "observation": obs.strip(),
            "instructions": INSTRUCTIONS,
            "task": f"{self.env.get_task_description()} (ScienceWorld {self.task}, variation {v})",
            "noop": "inventory",
        }

    def step(self, action):
        obs, _reward, done, info = self.env.step(action)
        score = max(int(info.get("score", 0)), 0)
        reward = float(score - self.score)
        self.score = score
        failed = int(info.get("score", 0)) < 0
        return {"observation": obs.strip(), "reward": reward, "done": bool(done or failed)}


class Agent:
    """The scripted agent (see the module docs): one gold sequence per variation, loaded once."""

    def __init__(self, task, p):
        self.task = task
        self.p = p
        self.env = None
        self.gold = {}
        self.variation = 0

    def gold_for(self, variation):
        if variation not in self.gold:
            if self.env is None:
                self.env = start(self.task, variation, True)
            else:
                self.env.load(self.task, variation, "", generateGoldPath=True)
            self.gold[variation] = self.env.get_gold_action_sequence()
        return self.gold[variation]

    def act(self, system, user, actions, comply, seed):
        # The task text names the variation; the switch intervention's prompt has no task: the
        # variation last named is kept.
        m = re.search(r"variation (\d+)\)", user)
        if m:
            self.variation = int(m.group(1))
        gold = self.gold_for(self.variation)
        # The gold actions already done, in order (detours in between are skipped).
        i = 0
        for a in actions:
            if i < len(gold) and a == gold[i]:
                i += 1
        rng = random.Random(seed if seed is not None else len(actions))
        last = actions[-1] if actions else ""
        if comply:
            if last.startswith("go ") and (i >= len(gold) or gold[i] != "look around"):
                return "look around"
            if last == "look around" and i < len(gold) and gold[i] == "look around":
                i += 1
        elif rng.random() < self.p:
            return rng.choice(DETOURS)
        return gold[i] if i < len(gold) else "inventory"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["env", "agent"])
    ap.add_argument("--task", default="use-thermometer", help="a ScienceWorld task name")
    ap.add_argument("--variation", type=int, help="env: the variation (default: seed modulo their number)")
    ap.add_argument("--p", type=float, default=0.3, help="agent: probability of a detour")
    a = ap.parse_args()
    if a.mode == "env":
        trac_protocol.serve_env(ScienceWorldAdapter(a.task, a.variation))
    else:
        agent = Agent(a.task, a.p)
        trac_protocol.serve_model(f"scripted-scienceworld(p={a.p})", agent.act)


if __name__ == "__main__":
    main()
