"""What a Dask audit costs beside one process: speedup with W workers and the cost per task.

    python benches/dask/overhead.py [--sessions 4000] [--workers 2] [--tasks 400]

Needs the Python package (trac-monitor) and dask[distributed] in the running Python, and the
shared agent logs beside the repository. Sessions are TextWorld logs written as JSON Lines
shards (as examples/python/distributed_audit.py --mode shards), audited with keep="ends":

1. one process, then a LocalCluster of W worker processes (one thread each): wall seconds and
   CPU seconds of the client and of every worker (resource.getrusage on each), records checked
   equal;
2. the cost per task: `--tasks` tasks of one one-event session each (the audit itself is
   ~nothing), and as many no-op tasks (Dask alone), wall per task on the cluster.

Prints one line per measurement and the load average (BENCHMARKS.md, "Dask at scale").
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import trac
import trac.distributed

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data" / "paper-traces" / "textworld"


def cpu() -> float:
    """CPU seconds (user + system) of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def shards(n: int, folder: Path, per_shard: int) -> tuple:
    """n sessions from the TextWorld logs as JSON Lines shards; (paths, events)."""
    logs = [[l for l in p.read_text().splitlines() if l.strip()] for p in sorted(SHARED.glob("*.txt"))]
    if not logs:
        sys.exit(f"no logs in {SHARED}")
    paths, events = [], 0
    for k in range(0, n, per_shard):
        p = folder / f"shard-{k // per_shard:05d}.jsonl"
        with p.open("w") as f:
            for i in range(k, min(k + per_shard, n)):
                log = logs[i % len(logs)]
                for line in log[: max(1, len(log) - (i // len(logs)) % 7)]:
                    f.write(json.dumps({"session": f"s{i:06d}", "output": line}) + "\n")
                    events += 1
        paths.append(str(p))
    return paths, events


def main() -> None:
    from dask.distributed import Client, LocalCluster

    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--per-shard", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=400)
    args = ap.parse_args()
    spec = trac.Spec.from_file(str(REPO / "examples" / "specs" / "textworld.ron"))
    spec.compile()
    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        paths, events = shards(args.sessions, Path(tmp), args.per_shard)
        c0, t0 = cpu(), time.perf_counter()
        single = trac.distributed.audit_sessions(paths, spec, keep="ends", batch_size=1)
        w1, c1 = time.perf_counter() - t0, cpu() - c0
        print(f"one process: {events} events, {len(paths)} shards: {w1:.2f} s wall, {c1:.2f} s CPU, "
              f"{events / c1:,.0f} events/CPU s")
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                Client(cluster) as client:
            client.run(lambda: None)
            before = client.run(cpu)
            c0, t0 = cpu(), time.perf_counter()
            dist = trac.distributed.audit_sessions(paths, spec, client=client, keep="ends", batch_size=1)
            w2, cc = time.perf_counter() - t0, cpu() - c0
            after = client.run(cpu)
            wc = sum(after[w] - before[w] for w in after)
            assert list(dist) == list(single), "the cluster's end records differ from one process's"
            print(f"{args.workers} workers: {w2:.2f} s wall (speedup {w1 / w2:.2f}), workers' CPU "
                  f"{wc:.2f} s, client CPU {cc:.2f} s; end records equal")
            t0 = time.perf_counter()
            trac.distributed.audit_sessions(
                [(f"t{i}", [["x"]]) for i in range(args.tasks)], spec, client=client, batch_size=1
            )
            wt = (time.perf_counter() - t0) / args.tasks
            t0 = time.perf_counter()
            client.gather(client.map(lambda i: i, range(args.tasks), pure=False))
            wn = (time.perf_counter() - t0) / args.tasks
            print(f"per task ({args.tasks} tasks of one 1-event session): {wt * 1e3:.2f} ms wall; "
                  f"a no-op Dask task: {wn * 1e3:.2f} ms")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
