#!/usr/bin/env python3
"""Generates a pre-labeled JSON Lines trace for the sessions benchmark (BENCHMARKS.md).

usage: gen_sessions.py SESSIONS EVENTS_PER_SESSION [--end] > trace.jsonl

Sessions are written one after the other (session ids s0, s1, ...; no `session` field when
SESSIONS is 1); labels cycle through `p`, `q`, `r`, `p q`, nothing. With `--end`, the last
event of each session carries `"session_end": true` (the session's state is freed there).
"""
import sys

def main():
    args = [a for a in sys.argv[1:] if a != "--end"]
    end = "--end" in sys.argv[1:]
    n, k = int(args[0]), int(args[1])
    labels = ['["p"]', '["q"]', '["r"]', '["p","q"]', '[]']
    out = sys.stdout
    single = n == 1
    for s in range(n):
        for i in range(k):
            sess = "" if single else f'"session":"s{s}",'
            fin = ',"session_end":true' if end and i == k - 1 else ""
            out.write(f'{{{sess}"labels":{labels[(s + i) % 5]}{fin}}}\n')

main()
