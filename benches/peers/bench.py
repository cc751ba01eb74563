#!/usr/bin/env python3
"""The peer benchmark: trac beside the monitors and parsers a user would use instead.

usage: bench.py --trac PATH [--scale F] [--dir DIR] [--trac-runs N] [--skip PEER,...]

Generates the inputs (workloads.py), runs every peer on the same files as a child process
(peers.py; trac itself), measures each child's CPU time (user + system) and peak RSS with
os.wait4, checks that every monitor's verdicts (per session and property: violations and the
first violation's step) equal trac's `--summary`, and prints a Markdown table with the load
average. Exits 1 when a verdict differs or a peer fails. benches/peers/README.md says more.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import workloads  # noqa: E402

MONITORS = ["paper", "reelay"]
PARSERS = ["json", "orjson"]


GNU_TIME = "/usr/bin/time"


def measure(cmd, stdout_path):
    """Runs cmd; returns (exit code, wall s, CPU s, peak RSS MB, stderr text).

    CPU and peak RSS come from GNU time (`%U %S %M`: what wait4 says of its child) where it is
    installed: os.wait4 in this process would report at least this process's own peak, because
    Linux records the parent's memory high-water mark in the child's when the child is spawned
    by vfork and exec (Python's subprocess), and this process holds the parsed verdicts."""
    with open(stdout_path, "wb") as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as usage:
        timed = os.access(GNU_TIME, os.X_OK)
        full = [GNU_TIME, "-f", "%U %S %M", "-o", usage.name, *cmd] if timed else cmd
        t0 = time.perf_counter()
        proc = subprocess.Popen(full, stdout=out, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
        cpu, rss = ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024
        if timed:
            last = usage.read().strip().splitlines()[-1].split()
            cpu, rss = float(last[0]) + float(last[1]), int(last[2]) / 1024
            text = text.replace(f"Command exited with non-zero status {proc.returncode}\n", "")
    return proc.returncode, wall, cpu, rss, text


def session_of(trace):
    """trac names a session FILE#SESSION and a one-session file FILE; peers use SESSION / ""."""
    return trace.rsplit("#", 1)[1] if "#" in trace else ""


def parse_summary(text):
    """{"SESSION\\tPROPERTY": [violations, first step or None]} from trac's --summary."""
    res = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 5 or parts[4] not in ("step", "-"):
            continue
        first = int(parts[5]) if parts[4] == "step" else None
        res[f"{session_of(parts[0])}\t{parts[1]}"] = [int(parts[3]), first]
    return res


def parse_jsonl(text):
    """The same from trac's --format jsonl (end records and violated verdict records)."""
    res, firsts = {}, {}
    for line in text.splitlines():
        rec = json.loads(line)
        key = f"{session_of(rec['trace'])}\t{rec['property']}"
        if rec.get("end"):
            res[key] = [rec["violations"], None]
        elif rec.get("verdict") == "violated" and key not in firsts:
            firsts[key] = rec["step"]
    for key, v in res.items():
        v[1] = firsts.get(key)
    return res


def first_sessions(src, dst, n):
    """Copies to dst the events of sessions s0..s{n-1} of src, in order; returns their count."""
    keep = {f'"session":"s{i}",'.encode() for i in range(n)}
    count = 0
    with open(src, "rb") as f, open(dst, "wb") as out:
        for line in f:
            if line[1 : line.index(b",") + 1] in keep:
                out.write(line)
                count += 1
    return count


class Bench:
    """One run: the inputs in `dir`, the rows measured so far, the verdict failures."""

    def __init__(self, args):
        self.args = args
        self.dir = args.dir
        self.rows = []
        self.failures = []

    def run_trac(self, workload, path, fmt, props_args):
        """trac audit on `path`; the best (least CPU) of --trac-runs runs."""
        out = os.path.join(self.dir, f"trac-{workload}-{fmt}.out")
        flag = ["--summary"] if fmt == "summary" else ["--format", "jsonl"]
        cmd = [self.args.trac, "audit", *props_args, path, *flag, "-j", "1"]
        best = None
        for _ in range(self.args.trac_runs):
            load = os.getloadavg()[0]
            rc, wall, cpu, rss, err = measure(cmd, out)
            if rc not in (0, 1):
                sys.exit(f"trac failed (exit {rc}) on {workload}: {err.strip()}")
            if best is None or cpu < best[1]:
                best = (wall, cpu, rss, load)
        with open(out) as f:
            text = f.read()
        res = parse_summary(text) if fmt == "summary" else parse_jsonl(text)
        return best, res

    def run_peer(self, peer, workload, path):
        """A Python peer (peers.py) on `path`: (wall, CPU, RSS, load), its result."""
        out = os.path.join(self.dir, f"{peer}-{workload}.json")
        cmd = [self.args.python, os.path.join(HERE, "peers.py"), peer, workload, path, out]
        load = os.getloadavg()[0]
        rc, wall, cpu, rss, err = measure(cmd, os.devnull)
        if rc != 0:
            sys.exit(f"peer {peer} failed (exit {rc}) on {workload}:\n{err[-3000:]}")
        with open(out) as f:
            return (wall, cpu, rss, load), json.load(f)

    def check(self, workload, name, ref, got, counts_only=False):
        """Records a failure when `got` differs from trac's verdicts `ref`."""
        if counts_only:
            ref = {k: [v[0], None] for k, v in ref.items()}
        if got == ref:
            return "equal"
        diff = sorted(k for k in set(ref) | set(got) if ref.get(k) != got.get(k))
        sample = [(k, ref.get(k), got.get(k)) for k in diff[:5]]
        self.failures.append(f"{workload}: {name} differs from trac on {len(diff)} keys: {sample}")
        return "DIFFER"

    def row(self, workload, events, name, m, base, verdict):
        """One table row; `base` = (trac's CPU s, its events): the ratio is per event."""
        wall, cpu, rss, load = m
        # GNU time counts CPU in 10 ms ticks: a tiny run may read 0.
        ratio = f"{(cpu / events) / (base[0] / base[1]):.2f}×" if base[0] > 0 else "n/a"
        per_s = f"{events / cpu:,.0f}" if cpu > 0 else "n/a"
        self.rows.append(
            f"| {workload} | {name} | {cpu:.2f} | {wall:.2f} | {per_s} | "
            f"{rss:.1f} | {ratio} | {verdict} | {load:.1f} |"
        )
        print(self.rows[-1], flush=True)

    def workload(self, key, label, path, events, props_args, monitors, parsers, counts_only=False):
        """Every peer on one input (`key`: the property set of workloads.py, `label`: the
        table's name); trac's --summary is the reference of verdicts and time."""
        workload = label
        m, ref = self.run_trac(key, path, "summary", props_args)
        base = (m[1], events)
        if not ref:
            self.failures.append(f"{workload}: no verdict read from trac --summary")
        self.row(workload, events, "trac --summary", m, base, "reference")
        m, res = self.run_trac(key, path, "jsonl", props_args)
        self.row(workload, events, "trac --format jsonl", m, base, self.check(workload, "trac jsonl", ref, res))
        for peer in monitors:
            if peer in self.args.skip:
                continue
            p_path, p_events, p_ref, name = path, events, ref, peer
            cap = self.args.reelay_sessions
            if peer == "reelay" and key == "sessions" and events > cap * 10:
                # reelay builds a monitor in ~30 ms (its parser): 3 per session would take hours.
                p_path, name = path + ".first", f"reelay (first {cap} sessions)"
                p_events = first_sessions(path, p_path, cap)
                p_ref = {k: v for k, v in ref.items() if int(k.split("\t")[0][1:]) < cap}
            m, res = self.run_peer(peer, key, p_path)
            verdict = self.check(workload, peer, p_ref, res, counts_only)
            self.row(workload, p_events, name, m, base, verdict)
        for peer in parsers:
            if peer in self.args.skip:
                continue
            m, res = self.run_peer(peer, key, path)
            ok = "parsed all" if res["lines"] == events else f"DIFFER: {res['lines']} lines"
            if not ok.startswith("parsed"):
                self.failures.append(f"{workload}: {peer} read {res['lines']} lines, not {events}")
            self.row(workload, events, f"{peer} (parse only)", m, base, ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trac", required=True, help="the trac binary (a release build)")
    ap.add_argument("--python", default=sys.executable, help="the Python of the peers' venv")
    ap.add_argument("--scale", type=float, default=1.0, help="input sizes × F (smoke: 0.001)")
    ap.add_argument("--dir", help="where the inputs go (default: a temporary folder, removed)")
    ap.add_argument("--trac-runs", type=int, default=3, help="trac runs per line, least CPU kept")
    ap.add_argument(
        "--reelay-sessions", type=int, default=300, help="sessions reelay audits (the first ones)"
    )
    ap.add_argument("--skip", default="", help="peers to leave out, comma-separated")
    args = ap.parse_args()
    args.skip = set(filter(None, args.skip.split(",")))
    tmp = None
    if args.dir is None:
        tmp = args.dir = tempfile.mkdtemp(prefix="trac-peers-")
    os.makedirs(args.dir, exist_ok=True)
    try:
        return run(args)
    finally:
        if tmp:
            shutil.rmtree(tmp)


def run(args):
    """Generates the inputs, runs every workload, prints the table; the exit code."""
    b = Bench(args)
    n_ev = max(10, int(1_000_000 * args.scale))
    n_sess = max(10, int(100_000 * args.scale))
    n_conv = max(2, int(10_000 * args.scale))
    ev, se, ch = (os.path.join(args.dir, n) for n in ("events.jsonl", "sessions.jsonl", "chat.jsonl"))
    workloads.gen_events(ev, n_ev)
    workloads.gen_sessions(se, n_sess, 10)
    workloads.gen_chat(ch, n_conv)
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs")
    print("| workload | peer | CPU s | wall s | events/CPU s | peak RSS MB | CPU / trac | verdicts | load |")
    print("|---|---|---|---|---|---|---|---|---|")

    def formulas(w):
        return [a for p in workloads.PROPERTIES[w] for a in ("--formula", p.trac)]

    b.workload("events3", f"events3 ({n_ev} events)", ev, n_ev, formulas("events3"), MONITORS, PARSERS)
    b.workload("events10", f"events10 ({n_ev} events)", ev, n_ev, formulas("events10"), MONITORS, PARSERS)
    b.workload("sessions", f"sessions ({n_sess}×10)", se, n_sess * 10, formulas("sessions"), MONITORS, [])
    spec = ["--spec", os.path.join(HERE, "chat.ron")]
    b.workload("chat", f"chat ({n_conv * 10} messages)", ch, n_conv * 10, spec, ["invariant"], PARSERS, True)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for f in b.failures:
        print(f"error: {f}", file=sys.stderr)
    return 1 if b.failures else 0


if __name__ == "__main__":
    sys.exit(main())
