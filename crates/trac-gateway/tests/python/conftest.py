"""Fixtures of the gateway's Python tests: the scripted upstream, and `trac gateway`
subprocesses against it, each stopped at the end of its test."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Gateway, start_gateway, stop_gateway
from upstream import Upstream


@pytest.fixture
def upstream():
    u = Upstream()
    yield u
    u.close()


@pytest.fixture
def gateway(upstream):
    """Starts `trac gateway` against the test's upstream: ``gateway(intervene, log, *flags)``.
    Each one started is stopped at the end of the test, and must have kept running till then."""
    started: list[Gateway] = []

    def start(intervene: str, log: Path | None = None, *extra: str) -> Gateway:
        gw = start_gateway(upstream, intervene, log, *extra)
        started.append(gw)
        return gw

    yield start
    exited = [(gw, stop_gateway(gw)) for gw in started]
    for gw, code in exited:
        assert code is None, f"trac gateway exited by itself ({code}): {''.join(gw.stderr)}"
