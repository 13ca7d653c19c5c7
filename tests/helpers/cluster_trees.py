"""Recorded node trees for the cluster monitor and view tests: a root with proc/diskstats,
proc/uptime and the sysfs facts of each device, read on the node through the sampler's root
prefix; a LUN seen on two nodes (its dm device and its paths)."""

from __future__ import annotations

import os
from pathlib import Path


def write_tree(root: Path, uptime: float, lines: list[str], block: dict[str, dict[str, str]]) -> None:
    (root / "proc").mkdir(parents=True, exist_ok=True)
    for name, facts in block.items():
        base = root / "sys" / "block" / name
        base.mkdir(parents=True, exist_ok=True)
        (base / "stat").touch()
        for fact, value in facts.items():
            if fact == "slaves":
                for slave in value.split():
                    (base / "slaves" / slave).mkdir(parents=True, exist_ok=True)
                continue
            (base / fact).parent.mkdir(parents=True, exist_ok=True)
            (base / fact).write_text(value + "\n")
    tmp = root / "proc" / "diskstats.new"
    tmp.write_text("".join(line + "\n" for line in lines))
    os.replace(tmp, root / "proc" / "diskstats")
    # replaced whole, never truncated in place: a node's loop reading it mid-write saw an empty
    # uptime (the two files can still be read one before and one after a write: see
    # write_until_sampled)
    tmp = root / "proc" / "uptime.new"
    tmp.write_text(f"{uptime:.2f} 100.00\n")
    os.replace(tmp, root / "proc" / "uptime")


def stat_line(
    major: int, minor: int, name: str, rd: int, rd_ms: int, wr: int, wr_ms: int, busy_ms: int, wq_ms: int
) -> str:
    # reads, merged, sectors (8 per I/O: 4 KiB), ms; writes likewise; in flight, io ms, weighted ms
    return f"{major} {minor} {name} {rd} 0 {rd * 8} {rd_ms} {wr} 0 {wr * 8} {wr_ms} 0 {busy_ms} {wq_ms}"


WWID = "36000c29abcdef0123456789abcdef012"
SHARED = {"dm/name": "data1", "dm/uuid": f"mpath-{WWID}", "slaves": "sdb sdc", "queue/nr_requests": "128"}
PATH = {"device/wwid": "naa." + WWID[1:], "device/queue_depth": "32", "queue/nr_requests": "64"}


class SharedLunTrees:
    """Node trees (n1's dm-0, n2's dm-7: the one LUN :data:`SHARED`, over paths sdb and sdc)
    whose counters :meth:`step` advances by a second of load: what the Cluster tab's shared-LUN
    test and scripts/screenshots.py replay."""

    DM = {"n1": "dm-0", "n2": "dm-7"}

    def __init__(self, directory: Path) -> None:
        self.trees = {name: directory / name for name in self.DM}
        self.counters = {name: {"reads": 0, "rd_ms": 0, "busy": 0, "wq": 0} for name in self.DM}
        self.uptime = 1000.0

    def roots(self) -> dict[str, str]:
        """Node name -> its tree: the monitor's ``remote_roots``."""
        return {name: str(tree) for name, tree in self.trees.items()}

    def step(self, load: dict[str, tuple[int, float]]) -> None:
        """One second more of ``load`` (node -> IOPS, await ms) on each node's view of the LUN,
        its paths sharing its reads, 70 % busy."""
        self.uptime += 1.0
        for name, dm in self.DM.items():
            iops, await_ms = load[name]
            c = self.counters[name]
            c["reads"] += iops
            c["rd_ms"] += int(iops * await_ms)
            c["wq"] += int(iops * await_ms)  # Little: avgqu-sz = IOPS x await
            c["busy"] += 700
            write_tree(
                self.trees[name],
                self.uptime,
                [
                    stat_line(8, 16, "sdb", c["reads"] // 2, 0, 0, 0, 0, 0),
                    stat_line(8, 32, "sdc", c["reads"] - c["reads"] // 2, 0, 0, 0, 0, 0),
                    stat_line(253, int(dm[3:]), dm, c["reads"], c["rd_ms"], 0, 0, c["busy"], c["wq"]),
                ],
                {"sdb": PATH, "sdc": PATH, dm: SHARED},
            )
