#!/usr/bin/env python3
"""ORION on an SSH node: how often its diskstats companion answers, and how many of the run's
samples and data points carry the LUN's live figures.

    python tests/bench/bench_orion_node_live.py                       (as root: a loop device)
    python tests/bench/bench_orion_node_live.py --point-s "" --set run=advanced --set duration=3 \
        --set cache_size=0 --set matrix=basic --set num_disks=1

The node is a real OpenSSH sshd on 127.0.0.1 with throwaway keys (tests/helpers/sshd_helpers.py),
ORION the emulator (tests/fakes/orion) in a temporary ORACLE_HOME, each data point
``--point-s`` seconds (empty: the emulator in real time, each point its -duration), the LUN a
16 MiB loop device. ``racperf run orion --ssh ...`` runs it to its end; then the run's samples
are read from the store: the answers (samples carrying ``orion_live``), their spacing, the
samples whose record has the LUN's row (the first answer is the baseline: none), and the
completed points of the last record.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from racperf_tui.core.store import Store  # noqa: E402
from tests.helpers import FAKES  # noqa: E402
from tests.helpers.loopdev import loop_device  # noqa: E402
from tests.helpers.sshd_helpers import start_sshd  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--point-s", default="3", help="seconds a data point runs (empty: its -duration)")
    parser.add_argument("--set", action="append", default=[], help="ORION options (default: run=simple)")
    args = parser.parse_args()
    sets = args.set or ["run=simple"]
    tmp = Path(tempfile.mkdtemp(prefix="racperf-bench-orion-"))
    home = tmp / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    env.pop("SSH_AUTH_SOCK", None)
    oracle_home = tmp / "oracle_home"
    (oracle_home / "bin").mkdir(parents=True)
    (oracle_home / "lib").mkdir()
    emulator = oracle_home / "bin" / "orion-emulator"
    shutil.copy(FAKES / "orion", emulator)
    os.chmod(emulator, 0o755)
    point = f"RACPERF_FAKE_ORION_POINT_S={args.point_s} " if args.point_s else ""
    (oracle_home / "bin" / "orion").write_text(f'#!/bin/sh\n{point}exec {emulator} "$@"\n')
    os.chmod(oracle_home / "bin" / "orion", 0o755)
    sshd = start_sshd(tmp / "sshd")
    try:
        with loop_device(tmp / "lun.img", 16) as lun:
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "racperf_tui", "run", "orion", "--ssh", sshd.spec,
                 "--identity", str(sshd.user_key), "--known-hosts", str(sshd.known_hosts),
                 "--data-dir", str(tmp / "data"), *[w for kv in sets for w in ("--set", kv)],
                 "--set", f"lun={lun.path}", "--set", f"oracle_home={oracle_home}", "--set", "hugenotneeded=true"],
                capture_output=True, text=True, env=env, timeout=900, cwd=REPO,
            )  # fmt: skip
            took = time.monotonic() - started
    finally:
        sshd.stop()
    if done.returncode != 0:
        print(f"racperf run orion failed ({done.returncode}): {done.stderr[-2000:]}", file=sys.stderr)
        return 1
    with Store.open(tmp / "data") as store:
        run = store.list_runs()[0]
        samples = [sample for _, sample in store.samples(run.id)]
    answers = [s for s in samples if s.extra.get("orion_live") and s.extra.get("phase") == "running"]
    live = [s for s in samples if (s.extra.get("orion_live") or {}).get("rows")]
    gaps = [b.t - a.t for a, b in zip(answers, answers[1:])]
    records = [s.extra["orion_live"] for s in samples if s.extra.get("orion_live")]
    last = records[-1] if records else {}
    print(f"ORION on a node ({' '.join(sets)}, points {args.point_s or 'real time'} s): {took:.1f} s")
    print(f"  samples {len(samples)}, answers {len(answers)}, with the LUN's figures {len(live)}")
    if gaps:
        print(f"  answers apart: median {statistics.median(gaps):.2f} s, {min(gaps):.2f} to {max(gaps):.2f} s")
    print(f"  data points with figures: {len(last.get('points') or [])} of {last.get('data_points')}")
    print(f"  load average {os.getloadavg()[0]:.1f}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
