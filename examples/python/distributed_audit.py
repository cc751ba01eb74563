"""Audit many agent sessions on a Dask cluster, and check the result against one process.

    python examples/python/distributed_audit.py [--sessions 10000] [--workers 2] [--mode events|shards]
        [--scheduler tcp://HOST:8786]

Sessions are made from the real agent logs of ../shared/data/paper-traces (TextWorld by
default): session i replays log i mod 6, cut after a number of steps that depends on i, so
sessions differ. `--mode events` ships each session's events to the workers (a mapping
{session id: events}); `--mode shards` writes the sessions as JSON Lines shard files (many
sessions per file, a `session` field per event) and ships only the paths, as an audit over a log
store would (the workers must see the files: same machine, shared file system or mount).

Without --scheduler a LocalCluster with --workers worker processes (one thread each) is started;
with it, the script connects to a running cluster (`dask scheduler` + `dask worker` on each
machine). Prints the time of the single-process audit and of the distributed one, and checks
that their records are identical.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import trac
import trac.distributed

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data" / "paper-traces"


def make_sessions(domain: str, n: int) -> dict:
    logs = sorted((SHARED / domain).glob("*.txt"))
    if not logs:
        sys.exit(f"no logs in {SHARED / domain}")
    lines = [[l for l in p.read_text().splitlines() if l.strip()] for p in logs]
    sessions = {}
    for i in range(n):
        log = lines[i % len(lines)]
        keep = max(1, len(log) - (i // len(lines)) % 7)
        sessions[f"s{i:06d}"] = log[:keep]
    return sessions


def write_shards(sessions: dict, folder: Path, per_shard: int) -> list:
    paths = []
    items = list(sessions.items())
    for k in range(0, len(items), per_shard):
        p = folder / f"shard-{k // per_shard:05d}.jsonl"
        with p.open("w") as f:
            for sid, lines in items[k : k + per_shard]:
                for step, line in enumerate(lines, 1):
                    f.write(json.dumps({"session": sid, "step": step, "output": line}) + "\n")
        paths.append(str(p))
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--domain", default="textworld", choices=["textworld", "scienceworld", "trucks"])
    ap.add_argument("--mode", default="events", choices=["events", "shards"])
    ap.add_argument("--batch-size", type=int, default=250, help="sessions (or shards) per task")
    ap.add_argument("--per-shard", type=int, default=500, help="sessions per shard file (--mode shards)")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler")
    ap.add_argument(
        "--keep",
        default="all",
        choices=["all", "ends"],
        help="bring back every record, or only the end records (the workers then write every "
        "record to --out-dir, a temporary folder by default)",
    )
    ap.add_argument("--out-dir", help="folder the workers write the records to (with --keep ends)")
    args = ap.parse_args()

    from dask.distributed import Client, LocalCluster

    spec = trac.Spec.from_file(REPO / "examples" / "specs" / f"{args.domain}.ron")
    sessions = make_sessions(args.domain, args.sessions)
    steps = sum(len(v) for v in sessions.values())
    with tempfile.TemporaryDirectory() as tmp:
        if args.mode == "shards":
            units = write_shards(sessions, Path(tmp), args.per_shard)
            batch = max(1, args.batch_size // args.per_shard)
        else:
            units = sessions
            batch = args.batch_size

        out_dir = None
        if args.keep == "ends":
            out_dir = Path(args.out_dir or tmp)
        c0 = time.process_time()
        t0 = time.perf_counter()
        local = trac.distributed.audit_sessions(
            units, spec, batch_size=batch, keep=args.keep, out_dir=out_dir and out_dir / "local"
        )
        t_local = time.perf_counter() - t0
        cpu_local = time.process_time() - c0

        t0 = time.perf_counter()
        if args.scheduler:
            client = Client(args.scheduler)
            cluster = None
        else:
            cluster = LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = Client(cluster)
        t_start = time.perf_counter() - t0
        try:
            w0 = client.run(_cpu)
            c0 = time.process_time()
            t0 = time.perf_counter()
            dist = trac.distributed.audit_sessions(
                units,
                spec,
                client=client,
                batch_size=batch,
                keep=args.keep,
                out_dir=out_dir and out_dir / "dist",
            )
            t_dist = time.perf_counter() - t0
            cpu_client = time.process_time() - c0
            w1 = client.run(_cpu)
            cpu_workers = sum(w1[w] - w0[w] for w in w1 if w in w0)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

        if out_dir is not None:
            for name in sorted(os.listdir(out_dir / "local")):
                same = (out_dir / "local" / name).read_bytes() == (out_dir / "dist" / name).read_bytes()
                assert same, f"{name}: the records written differ"
    assert dist == local, "the distributed audit differs from the single-process one"
    print(f"{args.sessions} sessions, {steps} steps, {len(spec.properties)} properties, mode {args.mode}")
    print(f"records: {len(local)} ({local.violations} violations), identical in both runs")
    print(f"single process:            {t_local:7.2f} s  ({steps / t_local:,.0f} steps/s)")
    print(f"cluster start ({args.workers} workers):  {t_start:7.2f} s")
    print(f"distributed audit:         {t_dist:7.2f} s  ({steps / t_dist:,.0f} steps/s)")
    # CPU time does not depend on what else the machine runs: with a free core per worker the
    # wall time of the distributed audit tends to max(workers' CPU / workers, client CPU).
    print(f"CPU: single process {cpu_local:.2f} s; distributed: workers {cpu_workers:.2f} s in all, client {cpu_client:.2f} s")


def _cpu() -> float:
    """CPU seconds (user + system) this process has used."""
    return time.process_time()


if __name__ == "__main__":
    main()
