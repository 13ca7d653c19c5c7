#!/usr/bin/env python3
"""Start to first paint of the dashboard's table, alternated between source trees.

    python tests/bench/bench_dashboard_startup.py --runs 7
    python tests/bench/bench_dashboard_startup.py --runs 7 --tree /work/main --tree .

Each start spawns `python -m racperf_tui --root DIR` on a pseudo-terminal (80x24 unless
--size) and times it from the spawn to the first paint of the Disks table: the `%util` heading
and the first device's name in the output (bench_dashboard_cpu.py's measure, without its 60 s
CPU rounds). DIR is a synthetic root of 64 devices (bench_dashboard_cpu.synthetic_root);
--live reads this machine's /proc and /sys instead (--device names a device it shows).

Several --tree: the starts alternate between the trees (tree A, tree B, tree A, ...), each
started in TREE with PYTHONPATH=TREE so its own racperf_tui is imported, and the same interpreter and
packages: a comparison made in the same minutes, under the same load. The 1-minute load
average is printed before and after: the machine is shared, the figures move with it.
Target (issue 8): < 1 s at load ~1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench.bench_dashboard_cpu import (  # noqa: E402
    PtyProcess,
    racperf_argv,
    schedstat_cpu_s,
    synthetic_root,
)


def one_start(
    tree: Path, root: Path | None, device: str, size: tuple[int, int], env: dict[str, str]
) -> tuple[float, float]:
    """(wall seconds from spawn to the table's first paint, CPU seconds the process used by
    then), racperf_tui imported from TREE."""
    child_env = dict(env, PYTHONPATH=str(tree))
    here = os.getcwd()
    os.chdir(tree)  # `python -m` puts the working directory first on sys.path
    try:
        proc = PtyProcess(racperf_argv(root), env=child_env, size=size)
    finally:
        os.chdir(here)
    try:
        wall = proc.wait_for(b"%util", device.encode(), timeout_s=30.0)
        return wall, schedstat_cpu_s(proc.pid) or float("nan")
    finally:
        proc.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="starts per tree (default 7)")
    parser.add_argument(
        "--tree", action="append", type=Path, default=None, help="a source tree (repeatable; default: this one)"
    )
    parser.add_argument("--size", default="80x24", help="pseudo-terminal COLUMNSxLINES (default 80x24)")
    parser.add_argument(
        "--bytecode",
        choices=("compiled", "source"),
        default="compiled",
        help="compiled (default): each tree's modules byte-compiled first, as an installed racperf "
        "is; source: none written (PYTHONDONTWRITEBYTECODE), every module compiled at every start",
    )
    parser.add_argument("--live", action="store_true", help="this machine's /proc and /sys, not a synthetic root")
    parser.add_argument("--device", default=None, help="with --live: a device the table shows (default: first)")
    args = parser.parse_args()
    columns, lines = (int(v) for v in args.size.lower().split("x"))
    trees = [t.resolve() for t in (args.tree or [REPO])]
    for tree in trees:
        if not (tree / "racperf_tui" / "__init__.py").is_file():
            parser.error(f"--tree {tree}: no racperf_tui package there")
    if args.bytecode == "compiled":
        for tree in trees:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "racperf_tui")], check=True)
    workdir = Path(tempfile.mkdtemp(prefix="racperf-startup-"))
    # A private run store: the dashboard must not find (or ask about) the user's runs.
    env = dict(os.environ, RACPERF_DATA_DIR=str(workdir / "data"), XDG_CONFIG_HOME=str(workdir / "config"))
    if args.bytecode == "source":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for tree in trees:
            for cache in (tree / "racperf_tui").rglob("__pycache__"):
                shutil.rmtree(cache)
    (workdir / "data").mkdir()
    times: dict[Path, list[float]] = {tree: [] for tree in trees}
    cpu: dict[Path, list[float]] = {tree: [] for tree in trees}
    load_before = os.getloadavg()[0]
    try:
        with contextlib.ExitStack() as stack:
            root: Path | None = None
            if args.live:
                names = [args.device or sorted(os.listdir("/sys/block"))[0]]
            else:
                root = workdir / "root"
                names = stack.enter_context(synthetic_root(root, 64))
            for _ in range(args.runs):
                for tree in trees:
                    wall, cpu_s = one_start(tree, root, names[0], (columns, lines), env)
                    times[tree].append(wall)
                    cpu[tree].append(cpu_s)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"dashboard start to first table paint, pty {columns}x{lines}, "
        f"{'this machine' if args.live else '64-device synthetic root'}, {args.runs} starts per tree alternated, "
        f"racperf_tui {'byte-compiled' if args.bytecode == 'compiled' else 'from source (no .pyc)'}, "
        f"load avg (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    for tree, values in times.items():
        print(
            f"  {tree}: median {statistics.median(values):.3f} s "
            f"(min {min(values):.3f}, max {max(values):.3f}; {', '.join(f'{v:.3f}' for v in values)}); "
            f"CPU by then: median {statistics.median(cpu[tree]):.3f} s ({', '.join(f'{v:.3f}' for v in cpu[tree])})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
