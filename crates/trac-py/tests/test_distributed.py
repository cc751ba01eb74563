"""Distributed audits on a Dask LocalCluster with several worker processes: the result equals the
single-process audit and the CLI's, and a worker killed mid-run loses and double-counts nothing.
"""

import json
import logging
import os
from pathlib import Path

import pytest

import trac
import trac.distributed
from conftest import REPO, SPECS, logs, run_cli

distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import killer  # noqa: E402

cloudpickle.register_pickle_by_value(killer)


def sessions_from(shared, n):
    """n sessions from the TextWorld logs: session i replays log i mod 6, cut by i."""
    texts = [
        [l for l in (REPO / p).read_text().splitlines() if l.strip()] for p in logs(shared, "textworld")
    ]
    out = {}
    for i in range(n):
        log = texts[i % len(texts)]
        out[f"s{i:04d}"] = log[: max(1, len(log) - (i // len(texts)) % 7)]
    return out


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.fixture(scope="module")
def spec():
    return trac.Spec.from_file(SPECS / "textworld.ron")


def test_the_cluster_has_two_worker_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2 and len(set(pids.values())) == 2
    assert os.getpid() not in pids.values()


def test_many_sessions_equal_the_single_process_audit(client, spec, shared):
    sessions = sessions_from(shared, 300)
    single = trac.Records()
    for sid, events in sessions.items():
        single.extend(trac.audit(events, spec, name=sid, on_error="record"))
    from dask.distributed import get_task_stream

    with get_task_stream(client) as ts:
        dist = trac.distributed.audit_sessions(sessions, spec, client=client, batch_size=16)
    assert dist == single
    assert [r.trace for r in dist.ends] == [sid for sid in sessions for _ in range(4)]
    assert dist.violations > 0
    # 19 tasks of 16 sessions, and both workers ran some.
    audits = [t for t in ts.data if "trac-audit" in str(t["key"])]
    assert len(audits) == 19
    assert len({t["worker"] for t in audits}) == 2


def test_trace_files_on_the_cluster_equal_the_cli(client, spec, shared, cli, tmp_path):
    sessions = sessions_from(shared, 40)
    paths = []
    for sid, events in sessions.items():
        p = tmp_path / f"{sid}.txt"
        p.write_text("\n".join(events) + "\n")
        paths.append(str(p))
    dist = trac.distributed.audit_sessions(paths, spec, client=client, batch_size=3)
    proc = run_cli(cli, "audit", "--format", "jsonl", "--spec", str(SPECS / "textworld.ron"), *paths)
    assert proc.returncode == 1, proc.stderr
    assert dist.to_jsonl() == proc.stdout


def test_a_killed_worker_loses_and_double_counts_nothing(client, spec, shared, tmp_path):
    sessions = sessions_from(shared, 120)
    marker = tmp_path / "killed"
    # The session in the middle kills the worker that first reads it.
    victim = "s0061"
    shipped = dict(sessions)
    shipped[victim] = killer.KillOnce(sessions[victim], marker)
    workers_before = set(client.run(os.getpid).values())
    dist = trac.distributed.audit_sessions(shipped, spec, client=client, batch_size=10)
    # A worker process really died: the marker holds its pid, which is gone.
    assert marker.exists()
    killed = int(marker.read_text())
    assert killed in workers_before
    with pytest.raises(ProcessLookupError):
        os.kill(killed, 0)
    single = trac.distributed.audit_sessions(sessions, spec)  # in this process
    assert dist == single
    # Each session exactly once: its end records appear once per property.
    ends = [r.trace for r in dist.ends]
    assert ends == [sid for sid in sessions for _ in range(4)]
    assert dist.violations == single.violations


def test_killed_workers_lose_nothing_at_scale_with_shards_and_ends(client, spec, shared, tmp_path):
    """The at-scale mode (JSON Lines shards shipped as paths, records written by the workers,
    end records brought back), with two worker processes killed one after the other mid-run:
    still exactly the single-process end records, and every batch file once, as one process
    writes them. The second kill may hit the only worker holding the spec (the first's
    replacement started after the spec was sent): the spec must then be made again, not lost."""
    sessions = sessions_from(shared, 90)
    items = list(sessions.items())
    shards = []
    for k in range(0, len(items), 10):
        p = tmp_path / f"shard-{k // 10}.jsonl"
        with p.open("w") as f:
            for sid, lines in items[k : k + 10]:
                for line in lines:
                    f.write(json.dumps({"session": sid, "output": line}) + "\n")
        shards.append(str(p))
    markers = [tmp_path / "killed-1", tmp_path / "killed-2"]
    # Shards, a session that kills the worker first reading it, shards, another one, shards.
    v1, v2 = sessions["s0007"], sessions["s0011"]
    units = shards[:3] + [("v1", killer.KillOnce(v1, markers[0]))] + shards[3:7]
    units += [("v2", killer.KillOnce(v2, markers[1]))] + shards[7:]
    plain = shards[:3] + [("v1", v1)] + shards[3:7] + [("v2", v2)] + shards[7:]
    ends = trac.distributed.audit_sessions(
        units, spec, client=client, batch_size=2, keep="ends", out_dir=tmp_path / "dist"
    )
    killed = [int(m.read_text()) for m in markers]
    assert killed[0] != killed[1]
    for pid in killed:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    single = trac.distributed.audit_sessions(
        plain, spec, batch_size=2, keep="ends", out_dir=tmp_path / "one"
    )
    assert list(ends) == list(single)
    # 92 traces (9 shards of 10 sessions, and the two victims), 4 end records each (4 properties).
    names = [r.trace for r in ends]
    assert len(names) == 92 * 4 and len(set(names)) == 92
    assert sum(r.violations for r in ends) > 0
    dist_files = sorted((tmp_path / "dist").iterdir())
    one_files = sorted((tmp_path / "one").iterdir())
    assert [f.name for f in dist_files] == [f"batch-{i:06d}.jsonl" for i in range(6)]
    assert [f.read_text() for f in dist_files] == [f.read_text() for f in one_files]


def test_records_written_by_the_workers_and_ends_brought_back(client, spec, shared, tmp_path):
    sessions = sessions_from(shared, 50)
    single = trac.distributed.audit_sessions(sessions, spec)
    ends = trac.distributed.audit_sessions(
        sessions, spec, client=client, batch_size=7, keep="ends", out_dir=tmp_path / "out"
    )
    assert list(ends) == single.ends
    files = sorted((tmp_path / "out").iterdir())
    assert [f.name for f in files] == [f"batch-{i:06d}.jsonl" for i in range(8)]
    assert "".join(f.read_text() for f in files) == single.to_jsonl()


def test_session_ids_must_be_unique(client, spec):
    with pytest.raises(ValueError, match="twice"):
        trac.distributed.audit_sessions([("a", [["x"]]), ("a", [["y"]])], spec, client=client)
    with pytest.raises(TypeError):
        trac.distributed.audit_sessions([42], spec)
