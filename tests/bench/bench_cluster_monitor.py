#!/usr/bin/env python3
"""16 nodes monitored at 1 s from one racperf: its CPU, and how soon a node's sample shows.

    python tests/bench/bench_cluster_monitor.py --nodes 16 --seconds 60      (as root)

The nodes are network namespaces, each with its own OpenSSH sshd on port 22 of its address,
reached over a bridge in the root namespace (tests/helpers/netns_helpers.py): a real SSH connection,
key exchange and channel per node, a real POSIX-sh sampling loop on the "node". Everything
runs on this machine, so the nodes' sshd and sh loops compete with racperf for the same CPUs;
only racperf's own process is measured.

Three measurements, each its own process, for ``--seconds``:

1. ``monitor``: the ClusterMonitor alone (orchestration/cluster_monitor.py, a coroutine per node),
   headless. CPU % of one core each second from /proc/PID/task/*/schedstat (nanoseconds);
   and per sample the time from the moment the request left to the moment the computed rows
   were in the monitor's state (the node reads its /proc/diskstats in between: this bounds
   "a sample on a node reaches the monitor's state").
2. ``dashboard``: ``racperf --cluster FILE`` itself, the whole app (Disks tab sampling this
   machine too) on a pseudo-terminal of 200x60 showing the Cluster tab; CPU as above.
3. ``screen``: the app headless (Textual's run_test, 200x60), every NodeCard's paint timed:
   request sent -> the compositor takes the card's lines made with that sample (it asks for
   them when it draws the screen update). A sample that changes none of a card's lines
   (an idle node) has nothing to draw: counted apart ("unchanged").

Targets (issue 10): <= 5 % of one core (median), <= 300 ms p99. The load average of the
machine during each measurement is printed with it: the figures are the machine's, shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "bench"))

from bench_dashboard_cpu import PtyProcess, schedstat_cpu_s  # noqa: E402

from tests.helpers.netns_helpers import netns_available, start_netns_cluster  # noqa: E402


def cpu_series(pid: int, seconds: float) -> list[float]:
    """CPU % of one core, each second, of PID (all threads)."""
    out = []
    last = schedstat_cpu_s(pid)
    last_t = time.monotonic()
    deadline = last_t + seconds
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now, now_t = schedstat_cpu_s(pid), time.monotonic()
        if now is None or last is None:
            break
        out.append(100.0 * (now - last) / (now_t - last_t))
        last, last_t = now, now_t
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# ---- the children ------------------------------------------------------------------------------


def child_monitor(cluster_file: str, seconds: float, interval: float) -> None:
    from racperf_tui.core.remote.cluster import load_cluster
    from racperf_tui.orchestration.cluster_monitor import ClusterMonitor

    latencies: list[float] = []
    seen: dict[str, int] = {}
    monitor: ClusterMonitor

    def on_sample(name: str) -> None:
        state = monitor.state(name)
        if state.state == "ok" and state.seq != seen.get(name) and state.seq > 2:
            seen[name] = state.seq
            latencies.append(state.published_at - state.requested_at)

    monitor = ClusterMonitor(load_cluster(cluster_file).nodes, interval, on_sample=on_sample)
    with monitor:
        print("READY", flush=True)
        time.sleep(seconds)
        states = monitor.states()
    print(json.dumps({"latencies": latencies, "ok": sum(1 for s in states.values() if s.state == "ok")}), flush=True)


def child_screen(cluster_file: str, seconds: float, interval: float) -> None:
    from racperf_tui.ui.app import RacperfApp
    from racperf_tui.ui.tabs.cluster_panel import ClusterPanel
    from racperf_tui.ui.widgets import cluster_node_card

    painted: list[float] = []
    last: dict[str, int] = {}
    render = cluster_node_card.NodeCard.render_lines

    def timed_render(self: cluster_node_card.NodeCard, crop: object) -> object:
        result = render(self, crop)  # type: ignore[arg-type]
        state = self.state
        if state is not None and state.state == "ok" and state.seq > 2 and last.get(self.node_name) != state.seq:
            last[self.node_name] = state.seq
            painted.append(time.monotonic() - state.requested_at)
        return result

    cluster_node_card.NodeCard.render_lines = timed_render  # type: ignore[method-assign, assignment]

    async def main() -> None:
        app = RacperfApp(cluster=cluster_file, interval_s=interval, clock=True)
        async with app.run_test(size=(200, 60)) as pilot:
            print("READY", flush=True)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                await pilot.pause(0.5)
            panel = app.query_one(ClusterPanel)
            ok = sum(1 for s in panel.monitor.states().values() if s.state == "ok") if panel.monitor else 0
            cards = list(app.query(cluster_node_card.NodeCard))
            unchanged = sum(card.shows_unchanged for card in cards)
            lines = sum(card.lines_repainted for card in cards)
        print(json.dumps({"latencies": painted, "ok": ok, "unchanged": unchanged, "lines": lines}), flush=True)

    asyncio.run(main())


# ---- the parent ---------------------------------------------------------------------------------


def run_child(kind: str, cluster_file: Path, seconds: float, interval: float) -> tuple[list[float], dict, float]:
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--child",
            kind,
            "--cluster",
            str(cluster_file),
            "--seconds",
            str(seconds + 15),
            "--interval",
            str(interval),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "READY"
    time.sleep(10)  # every node connected, the first full sysfs samples done
    load_before = os.getloadavg()[0]
    cpu = cpu_series(proc.pid, seconds)
    load = (load_before + os.getloadavg()[0]) / 2
    result = json.loads(proc.stdout.readline())
    proc.wait(60)
    return cpu, result, load


def run_dashboard(cluster_file: Path, seconds: float, interval: float, home: Path) -> tuple[list[float], float]:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    argv = [
        sys.executable,
        "-m",
        "racperf_tui",
        "--cluster",
        str(cluster_file),
        "--interval",
        str(interval),
        "--data-dir",
        str(home / "data"),
    ]
    app = PtyProcess(argv, env=env, size=(200, 60))
    try:
        app.wait_for(b"Cluster", b"n16" if "n16" in cluster_file.read_text() else b"n1", timeout_s=60)
        time.sleep(10)
        load_before = os.getloadavg()[0]
        cpu = cpu_series(app.pid, seconds)
        return cpu, (load_before + os.getloadavg()[0]) / 2
    finally:
        app.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--only", choices=("monitor", "dashboard", "screen"), action="append")
    parser.add_argument("--child", choices=("monitor", "screen"), help=argparse.SUPPRESS)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "monitor":
        child_monitor(args.cluster, args.seconds, args.interval)
        return 0
    if args.child == "screen":
        child_screen(args.cluster, args.seconds, args.interval)
        return 0
    ok, why = netns_available()
    if not ok:
        print(f"cannot build the nodes: {why}", file=sys.stderr)
        return 2
    # a TERM (timeout, kill) ends through the finally below: the namespaces and their sshd go
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="racperf-bench-cluster-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["HOME"] = str(home)
        cluster = start_netns_cluster(Path(tmp) / "nodes", args.nodes)
        try:
            print(
                f"{args.nodes} nodes (namespaces with sshd), interval {args.interval:g} s, "
                f"{args.seconds:g} s each, {os.cpu_count()} CPUs",
                flush=True,
            )
            rows = []
            for kind in args.only or ("monitor", "dashboard", "screen"):
                if kind == "dashboard":
                    cpu, load = run_dashboard(cluster.cluster_file, args.seconds, args.interval, home)
                    latencies: list[float] = []
                    nodes_ok = "-"
                else:
                    cpu, result, load = run_child(kind, cluster.cluster_file, args.seconds, args.interval)
                    latencies, nodes_ok = result["latencies"], str(result["ok"])
                    if "unchanged" in result:
                        nodes_ok += (
                            f" | samples that changed no line {result['unchanged']}, lines repainted {result['lines']}"
                        )
                rows.append((kind, cpu, latencies, load, nodes_ok))
                lat = (
                    f"p50 {1000 * percentile(latencies, 50):.1f} ms, p99 {1000 * percentile(latencies, 99):.1f} ms, "
                    f"max {1000 * max(latencies):.1f} ms over {len(latencies)} samples"
                    if latencies
                    else "-"
                )
                median, mean = statistics.median(cpu), statistics.mean(cpu)
                print(
                    f"{kind:9s} CPU median {median:.2f} % of one core (mean {mean:.2f}, max {max(cpu):.2f}) "
                    f"| latency {lat} | nodes ok {nodes_ok} | load avg {load:.2f}",
                    flush=True,
                )
        finally:
            cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
