"""A sweep on two nodes at once (issue 18, ``--nodes A,B``): two real OpenSSH sshd on 127.0.0.1
as the nodes, real fio reading a file on each; every point is one run per node in the sweep's
one run group, the point's IOPS the nodes' added up and its configured depth counted on both."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from racperf_tui.core.store import Store
from tests.helpers.cluster_helpers import isolated_home, racperf, remote_runs, two_nodes  # noqa: F401


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_each_point_runs_on_both_nodes_and_adds_up(two_nodes: Path, tmp_path: Path) -> None:  # noqa: F811
    target = tmp_path / "data.fio"
    target.write_bytes(os.urandom(1 << 20) * 16)
    data = tmp_path / "data"
    done = racperf(
        "sweep", "fio", "--nodes", "rac1,rac2", "--cluster", str(two_nodes), "--data-dir", str(data),
        "--target", str(target), "--set", "rw=randread", "--set", "bs=4k", "--set", "ioengine=libaio",
        "--set", "size=16m", "--iodepth", "1,2", "--point-seconds", "1", "--json",
        timeout_s=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    points = [line for line in lines if line["type"] == "point"]
    assert [(p["iodepth"], p["nodes"], p["configured_depth"]) for p in points] == [(1, 2, 2), (2, 2, 4)]
    (sweep,) = [line for line in lines if line["type"] == "sweep"]
    with Store.open(data, read_only=True) as store:
        runs = {r.id: r for r in store.group_runs(sweep["group_id"])}
        assert store.get_group(sweep["group_id"]).nodes == ["rac1", "rac2"]
        for point in points:
            hosts = sorted(runs[run_id].host for run_id in point["run_ids"])
            assert hosts == ["rac1", "rac2"]
            results = [store.result(run_id) for run_id in point["run_ids"]]
            total = sum(job["read"]["iops"] for result in results for job in result["jobs"])  # type: ignore[index]
            assert point["iops"] == pytest.approx(total, rel=1e-9) and point["iops"] > 0
        assert len(runs) == 4 and store.group_result(sweep["group_id"])["curves"] == sweep["curves"]  # type: ignore[index]
