"""Fixtures of the trac Python tests: paths of the repository, the shared agent logs and the CLI.

The shared logs (../shared/data/paper-traces beside the repository) and the `trac` binary are
required under CI=true (a missing one fails the test); elsewhere tests that need them are
skipped.
"""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "examples" / "specs"
SHARED = REPO.parent / "shared" / "data" / "paper-traces"
CI = os.environ.get("CI") == "true"


def _require(ok: bool, what: str) -> None:
    if not ok:
        if CI:
            pytest.fail(f"{what} is missing (required under CI=true)")
        pytest.skip(f"{what} is missing")


@pytest.fixture(scope="session")
def shared() -> Path:
    _require(SHARED.is_dir(), f"the shared agent logs ({SHARED})")
    return SHARED


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `trac` binary: $TRAC_CLI, else target/{debug,release}/trac of the repository."""
    candidates = [os.environ.get("TRAC_CLI")] if os.environ.get("TRAC_CLI") else []
    candidates += [str(REPO / "target" / "debug" / "trac"), str(REPO / "target" / "release" / "trac")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    _require(False, "the trac binary (cargo build -p trac-cli, or set TRAC_CLI)")
    raise AssertionError("unreachable")


def run_cli(cli: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [str(cli), *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


DOMAINS = ["textworld", "scienceworld", "trucks"]


def logs(shared: Path, domain: str) -> list:
    """The domain's logs as paths relative to the repository (as a user would type them)."""
    files = sorted((shared / domain).glob("*.txt"))
    assert files, f"no logs in {shared / domain}"
    return [os.path.relpath(f, REPO) for f in files]
