"""Audits of many sessions on a Dask cluster (``dask.distributed``).

Sessions are independent, so a large audit is a map over sessions: each task audits a batch of
sessions with the spec, whose compiled monitor tables travel with it as data (a pickled
:class:`trac.Spec` carries the tables compiled on the client; the workers import them instead of
compiling). The result is the same as auditing each session in one process, in input order.

Fault tolerance: a session's audit is a pure function of (spec, session id, events), so the
scheduler may run a task again -- after its worker died (the nanny restarts the worker, the
scheduler reassigns the task; ``distributed.scheduler.allowed-failures`` bounds the retries) or
when a result is lost -- and get the same records. The spec reaches the workers as the result
of a task (not scattered data), so it is made again if every worker holding it died. Results
are merged by session id, each id taken exactly once, so a retry neither loses nor
double-counts a session.

>>> from dask.distributed import Client, LocalCluster
>>> with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
...     records = trac.distributed.audit_sessions(sessions, spec, client=client)
"""

from __future__ import annotations

import hashlib
import os
import uuid
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import Event, Records, SpecLike, audit_jsonl

__all__ = ["audit_sessions", "audit_batch"]

# A unit of work: ("path", trace name, path) or ("events", session id, events).
Unit = Tuple[str, str, Any]
Sessions = Union[
    Mapping[str, Iterable[Event]],
    Iterable[Tuple[str, Iterable[Event]]],
    Iterable[Union[str, "os.PathLike[str]"]],
]


def _units(sessions: Sessions) -> List[Unit]:
    if isinstance(sessions, Mapping):
        items: Iterable[Any] = sessions.items()
    else:
        items = sessions
    units: List[Unit] = []
    seen = set()
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            key = os.fsdecode(item)
            unit: Unit = ("path", key, key)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            key = item[0]
            unit = ("events", key, item[1])
        else:
            raise TypeError(
                "sessions: a mapping {session id: events}, (session id, events) pairs, or trace paths"
            )
        if key in seen:
            raise ValueError(f"session {key!r} is given twice: session ids must be unique")
        seen.add(key)
        units.append(unit)
    return units


def _specs(specs: List[Any]) -> List[Any]:
    """The specs of an audit, as a task's result on the cluster (see :func:`audit_sessions`)."""
    return specs


def audit_batch(
    batch: Sequence[Unit],
    spec: SpecLike,
    engine: str,
    reset: bool,
    keep: str = "all",
    out: Optional[str] = None,
) -> List[Tuple[str, str]]:
    """Audits a batch of sessions: ``[(session id, JSON Lines text of its records)]``. Pure: the
    same input gives the same output, wherever and however often it runs (the task of
    :func:`audit_sessions`). Text, not objects, travels back: it pickles as one buffer.

    ``out``: also write every record of the batch to this file (JSON Lines, sessions in batch
    order), atomically (a temporary file renamed over it), so a task run twice writes the same
    file once. ``keep="ends"``: return only the end records.
    """
    results = []
    for kind, key, payload in batch:
        if kind == "path":
            text = audit_jsonl(payload, spec, engine, reset, on_error="record")
        else:
            text = audit_jsonl(payload, spec, engine, reset, name=key, on_error="record")
        results.append((key, text))
    if out is not None:
        tmp = f"{out}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            for _, text in results:
                f.write(text)
        os.replace(tmp, out)
    if keep == "ends":
        results = [
            (key, "".join(l + "\n" for l in text.splitlines() if l.startswith('{"end":true')))
            for key, text in results
        ]
    return results


def audit_sessions(
    sessions: Sessions,
    spec: SpecLike,
    *,
    client: Optional[Any] = None,
    engine: str = "compiled",
    reset: bool = True,
    batch_size: int = 100,
    keep: str = "all",
    out_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Records:
    """Audits many sessions, on a Dask cluster when ``client`` is given (else in this process).

    ``sessions``: a mapping ``{session id: events}``, ``(session id, events)`` pairs (each
    audited as ``trac.audit(events, spec, name=session_id)``), or trace paths (each audited as
    ``trac.audit(path, spec)``, its own sessions split as ``PATH#SESSION``; on a cluster the
    paths must be readable by the workers: a shared file system or object store mount).
    Session ids must be unique.

    ``client``: a ``dask.distributed.Client``. The spec is compiled here once and sent to the
    workers with its tables (as one task's result); sessions go in batches of ``batch_size``
    per task.

    Returns the records of every session, in input order (as the CLI's ``--format jsonl``
    for each trace in turn); errors of a trace are in its end records (``on_error="record"``).

    At scale, keep the records where they are made: ``out_dir`` (a folder every worker can
    write: a shared file system or mount) receives one JSON Lines file per task,
    ``batch-NNNNNN.jsonl`` in input order, each written atomically; ``keep="ends"`` brings back
    only the end records (per session and property: verdict, violations, error), a small
    summary, instead of every verdict with its witness.
    """
    from . import ENGINES, Spec

    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    if keep not in ("all", "ends"):
        raise ValueError(f"keep must be 'all' or 'ends', not {keep!r}")
    outs: List[Optional[str]] = []
    units = _units(sessions)
    batches = [units[i : i + batch_size] for i in range(0, len(units), batch_size)]
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        outs = [os.path.join(os.fspath(out_dir), f"batch-{i:06d}.jsonl") for i in range(len(batches))]
    else:
        outs = [None] * len(batches)
    if client is None:
        results = [audit_batch(b, spec, engine, reset, keep, o) for b, o in zip(batches, outs)]
    else:
        specs = [spec] if isinstance(spec, Spec) else list(spec)
        if engine in ("compiled", "cross-check"):
            for s in specs:
                s.compile()  # the tables then travel with the pickled spec
        # One future for the list of specs, made by a task, not scattered: the scheduler keeps
        # a task's definition and runs it again when every worker holding its result died,
        # whereas scattered data held only by workers that died is lost, and every task that
        # needs it is cancelled ("already forgotten": found by a test that killed a worker
        # which had been started after the scatter's broadcast).
        spec_future = client.submit(_specs, specs, key=f"trac-specs-{uuid.uuid4().hex}", pure=False)
        # Deterministic task keys: a task run twice (retry) is the same task.
        token = hashlib.sha256(
            repr((engine, reset, keep, outs, [[u[1] for u in b] for b in batches])).encode()
        ).hexdigest()[:16]
        futures = [
            client.submit(
                audit_batch,
                b,
                spec_future,
                engine,
                reset,
                keep,
                outs[i],
                key=f"trac-audit-{token}-{i}",
                pure=False,
            )
            for i, b in enumerate(batches)
        ]
        results = client.gather(futures)
    by_session: Dict[str, str] = {}
    for batch_result in results:
        for key, records in batch_result:
            if key in by_session:
                raise RuntimeError(f"session {key!r} came back twice")
            by_session[key] = records
    missing = [u[1] for u in units if u[1] not in by_session]
    if missing:
        raise RuntimeError(f"{len(missing)} session(s) came back without records: {missing[:5]}")
    return Records.from_jsonl("".join(by_session[u[1]] for u in units))
