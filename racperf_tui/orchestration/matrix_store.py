"""An interconnect matrix as the store has it: a ``racperf matrix`` running elsewhere (another
terminal, the UI's own start) or finished, rebuilt from its client runs' labels
(``matrix ID pair|path SOURCE->TARGET``, orchestration/interconnect_matrix.py) and judged by
the same code as the command (``judged``, ``with_path``), so the UI's matrix view says what
the command's lines say. A pair still running has its figures so far and no verdict.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from racperf_tui.core.contract.quantities import throughput_intervals
from racperf_tui.core.paths import store_path
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.orchestration.interconnect_matrix import (
    PAIR_PASS,
    PairMeasurement,
    judged,
    with_path,
    with_path_verdict,
)
from racperf_tui.tools import tool_description

_LABEL = re.compile(r"^matrix (?P<id>\S+) (?P<kind>pair|path) (?P<source>\S+)->(?P<target>\S+)$")
#: how many of the newest runs are read to find the newest matrix
RUNS_READ = 2000


@dataclass(frozen=True)
class MatrixSnapshot:
    """The newest matrix: its nodes in the order the pairs name them, each pair measured so
    far, and the pair running now (its pass: "pair" or "path")."""

    matrix_id: str
    tool: str
    nodes: tuple[str, ...]
    pairs: dict[tuple[str, str], PairMeasurement] = field(default_factory=dict)
    running: tuple[str, str, str] | None = None

    @property
    def finished(self) -> bool:
        return self.running is None


def _measured(store: Store, run: RunRecord, source: str, target: str) -> PairMeasurement:
    description = tool_description(run.tool)
    samples = [sample for _seq, sample in store.samples(run.id)]
    address = str(run.config.get("host") or "")
    base = PairMeasurement(source, target, address, client_run_id=run.id, server_run_id=run.config.get("peer_run_id"))
    if not run.state.finished:
        intervals = throughput_intervals(description, samples)
        figure = statistics.median(i.mbit_s for i in intervals) if intervals else None
        return dataclasses.replace(base, mbit_s=figure, samples=len(samples))
    return judged(base, description, run.state, run.message, run.started_at, samples, store.result(run.id))


def start_matrix(tool: str, cluster_file: str | Path, data_dir: Path) -> subprocess.Popen[str]:
    """``racperf matrix TOOL`` on the cluster file's nodes as a process of its own (a session
    of its own: the caller's end does not stop it); its lines go nowhere, its pairs into the
    store; stderr kept for a refusal (exit status 2)."""
    argv = [sys.executable, "-m", "racperf_tui", "matrix", tool, "--cluster", str(cluster_file)]
    return subprocess.Popen(
        [*argv, "--data-dir", str(data_dir)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def latest_matrix(data_dir: Path) -> MatrixSnapshot | None:
    """The newest matrix recorded in ``data_dir``'s store (None: none, or no store)."""
    if not store_path(data_dir).exists():
        return None
    with Store.open(data_dir) as store:
        runs = store.list_runs(RUNS_READ)
        labelled = [(run, _LABEL.match(str(run.config.get("label") or ""))) for run in runs]
        found = [(run, match) for run, match in labelled if match is not None]
        if not found:
            return None
        newest = found[0][1].group("id")
        mine = sorted(((r, m) for r, m in found if m.group("id") == newest), key=lambda rm: rm[0].id)
        nodes: list[str] = []
        pairs: dict[tuple[str, str], PairMeasurement] = {}
        paths: dict[tuple[str, str], PairMeasurement] = {}
        running = None
        tool = ""
        for run, match in mine:
            source, target, kind = match.group("source"), match.group("target"), match.group("kind")
            nodes += [name for name in (source, target) if name not in nodes]
            measured = _measured(store, run, source, target)
            if kind == PAIR_PASS:
                pairs[(source, target)] = measured
                tool = tool or run.tool
            else:
                paths[(source, target)] = measured
            if not run.state.finished:
                running = (source, target, kind)
    for key, measured in pairs.items():
        path = paths.get(key)
        if measured.mtu is not None:  # the pair's own UDP requests checked its path
            pairs[key] = with_path_verdict(measured)
        elif path is not None and (path.verdict is not None or path.error is not None):
            pairs[key] = with_path(measured, path)
    return MatrixSnapshot(newest, tool, tuple(nodes), pairs, running)
