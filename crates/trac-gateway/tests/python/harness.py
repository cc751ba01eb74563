"""What the gateway's Python tests run: ``trac gateway`` started as a subprocess of the binary
named by ``TRAC_CLI`` (.ci/gateway-python-tests builds it), and ``trac audit`` of a log, run by
the same binary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from upstream import Upstream

ROOT = Path(__file__).resolve().parents[4]
#: The spec of the Rust gateway tests: `confirm-before-write` is
#: `forall rid: G(modify(rid) -> O confirm)`.
SPEC = ROOT / "examples" / "specs" / "airline.ron"
LISTENING = re.compile(r"trac gateway: listening on (http://(\S+)/v1)")


def trac_cli() -> str:
    path = os.environ.get("TRAC_CLI")
    if not path:
        default = ROOT / "target" / "debug" / "trac-cli"
        if not default.exists():
            raise RuntimeError(
                "TRAC_CLI is not set and target/debug/trac-cli is missing: "
                "run .ci/gateway-python-tests, or `cargo build -p trac-cli` first"
            )
        path = str(default)
    return path


@dataclass
class Gateway:
    """A running `trac gateway` subprocess."""

    proc: subprocess.Popen
    #: ``http://127.0.0.1:PORT/v1``, what the agent's ``base_url`` becomes.
    base: str
    #: ``127.0.0.1:PORT``
    addr: str
    log: Path | None
    stderr: list[str] = field(default_factory=list)

    def sessions(self) -> dict:
        with urllib.request.urlopen(f"http://{self.addr}/trac/sessions", timeout=10) as r:
            assert r.status == 200
            return json.load(r)

    def verdicts(self) -> dict[str, list[tuple]]:
        """``GET /trac/sessions``: each session's verdicts, as :func:`audit_verdicts` gives them."""
        return {
            s["session"]: [(v["property"], v["step"], v["verdict"], v["value"]) for v in s["verdicts"]]
            for s in self.sessions()["sessions"]
        }


def start_gateway(upstream: Upstream, intervene: str, log: Path | None, *extra: str) -> Gateway:
    cmd = [trac_cli(), "gateway", "--spec", str(SPEC), "--upstream", upstream.base,
           "--listen", "127.0.0.1:0", "--intervene", intervene, *extra]
    if log is not None:
        cmd += ["--log", str(log)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    found: dict = {}
    ready = threading.Event()

    def read_stderr():
        # Reads to the end, so that the pipe never fills; the first line names the address.
        for line in proc.stderr:
            lines.append(line)
            m = LISTENING.search(line)
            if m and not found:
                found["base"], found["addr"] = m.group(1), m.group(2)
                ready.set()
        ready.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    gw = Gateway(proc, "", "", log, lines)
    deadline = time.monotonic() + 60
    if not ready.wait(timeout=60) or not found:
        stop_gateway(gw)
        raise RuntimeError(f"trac gateway did not report its address: {''.join(lines)}")
    gw.base, gw.addr = found["base"], found["addr"]
    # Ready when it answers: poll /trac/sessions.
    while True:
        try:
            gw.sessions()
            return gw
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop_gateway(gw)
                raise RuntimeError(f"trac gateway never answered: {''.join(lines)}")
            time.sleep(0.05)


def stop_gateway(gw: Gateway) -> int | None:
    """Stops the gateway; its exit code if it had exited by itself, else None."""
    code = gw.proc.poll()
    if code is None:
        gw.proc.terminate()
        try:
            gw.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            gw.proc.kill()
            gw.proc.wait(timeout=10)
    return code


def audit(log: Path, *flags: str) -> subprocess.CompletedProcess:
    """``trac audit --spec SPEC [FLAGS] LOG``."""
    return subprocess.run(
        [trac_cli(), "audit", "--spec", str(SPEC), *flags, str(log)],
        capture_output=True, text=True, timeout=120,
    )


def audit_verdicts(log: Path) -> tuple[int, dict[str, list[tuple]]]:
    """``trac audit --format jsonl`` of ``log``: its exit code, and per session (the part of the
    trace's name after ``#``) its verdicts ``(property, step, verdict, value)`` in order."""
    r = audit(log, "--format", "jsonl")
    assert r.returncode in (0, 1), r.stderr
    out: dict[str, list[tuple]] = defaultdict(list)
    for line in r.stdout.splitlines():
        v = json.loads(line)
        if v.get("end"):
            out.setdefault(v["trace"].partition("#")[2], [])
            continue
        out[v["trace"].partition("#")[2]].append((v["property"], v["step"], v["verdict"], v["value"]))
    return r.returncode, dict(out)


def lines(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines()]
