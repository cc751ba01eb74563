#!/usr/bin/env python3
"""Generates a pre-labeled JSON Lines trace for the sessions benchmark (BENCHMARKS.md).

usage: gen_sessions.py SESSIONS EVENTS_PER_SESSION > trace.jsonl

Sessions are written one after the other (session ids s0, s1, ...; no `session` field when
SESSIONS is 1); labels cycle through `p`, `q`, `r`, `p q`, nothing.
"""
import sys

def main():
    n, k = int(sys.argv[1]), int(sys.argv[2])
    labels = ['["p"]', '["q"]', '["r"]', '["p","q"]', '[]']
    out = sys.stdout
    single = n == 1
    for s in range(n):
        for i in range(k):
            sess = "" if single else f'"session":"s{s}",'
            out.write(f'{{{sess}"labels":{labels[(s + i) % 5]}}}\n')

main()
