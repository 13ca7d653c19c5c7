"""Run groups (issue 10, "benchmarks across nodes"): one tool and config on two nodes at once,
two real OpenSSH sshd on 127.0.0.1 as the nodes. Real fio on temp files there (a read-only
job, cleared by each node's write guard): the per-node figures, the total equal to their sum
per interval, one result per node and the total; ORION's emulator on both nodes; one node
unreachable (left out, said why, the other runs); a refusal on one node refuses the group;
a group stopped at once. The totals' arithmetic on its own first."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.disks.iostat_math import IostatRow
from racperf_tui.core.remote.cluster import load_cluster
from racperf_tui.core.store import Store
from racperf_tui.orchestration.calibration_watch import devices_to_watch
from racperf_tui.orchestration.cluster_monitor import NodeState
from racperf_tui.orchestration.group_alignment import NodeTimeline
from racperf_tui.orchestration.run_groups import (
    group_state,
    interval_totals,
    launch_group,
    node_figures,
    result_total,
    total_of,
)
from racperf_tui.tools import tool_description
from tests.helpers import FAKES
from tests.helpers.cluster_helpers import REPO, isolated_home, node_table, racperf, remote_runs, two_nodes  # noqa: F401
from tests.helpers.loopdev import loop_device, needs_loop
from tests.helpers.sshd_helpers import Sshd, _free_port

FIO = tool_description("fio")


def _sample(read_iops: float, p99: float, write_iops: float = 0.0, t: float = 1.0, interval_s: float = 1.0) -> Sample:
    return Sample(
        t=t,
        metrics={
            "read_iops": read_iops,
            "write_iops": write_iops,
            "read_bw_kib_s": read_iops * 4,
            "write_bw_kib_s": write_iops * 4,
            "read_clat_p99_us": p99,
        },
        extra={"interval_s": interval_s},
    )


def _timeline(started_at: float, samples: list[Sample]) -> NodeTimeline:
    timeline = NodeTimeline(started_at)
    for sample in samples:
        timeline.add(sample, node_figures(sample))
    return timeline


def test_the_total_sums_rates_and_weights_latency_by_iops() -> None:
    total = total_of(
        FIO,
        {"rac1": {"read_iops": 100.0, "read_bw_kib_s": 400.0, "read_clat_p99_us": 10.0}, "rac2": {
            "read_iops": 300.0, "read_bw_kib_s": 1200.0, "read_clat_p99_us": 30.0}},
    )  # fmt: skip
    assert total == {"read_iops": 400.0, "read_bw_kib_s": 1600.0, "read_clat_p99_us": 25.0}


def test_a_groups_state_is_running_while_a_node_may_change_else_its_worst_ending() -> None:
    S = RunState
    assert group_state([S.SUCCEEDED, S.PENDING]) is S.RUNNING
    assert group_state([S.FAILED, S.RUNNING]) is S.RUNNING
    assert group_state([S.SUCCEEDED, S.STOPPED, S.INTERRUPTED]) is S.INTERRUPTED
    assert group_state([S.STOPPED, S.FAILED, S.INTERRUPTED]) is S.FAILED
    assert group_state([S.SUCCEEDED, S.STOPPED]) is S.STOPPED
    assert group_state([S.SUCCEEDED, S.SUCCEEDED]) is S.SUCCEEDED
    assert group_state([]) is None


def test_seconds_wait_for_every_running_node_and_skip_finished_ones() -> None:
    a = _timeline(1000.0, [_sample(100, 10, t=1), _sample(200, 20, t=2)])
    b = _timeline(1000.0, [_sample(300, 30, t=1)])
    (first,) = interval_totals(FIO, {"a": a, "b": b})  # b's second second is not there yet
    assert (first.index, first.at) == (1, 1000) and first.total["read_iops"] == 400
    assert first.total["read_clat_p99_us"] == 25 and set(first.by_node) == {"a", "b"}
    both = interval_totals(FIO, {"a": a, "b": b}, finished=["b"])  # b ended after one
    assert [i.index for i in both] == [1, 2] and both[1].total["read_iops"] == 200 and list(both[1].by_node) == ["a"]
    assert interval_totals(FIO, {"a": a, "b": b}, finished=["b"], first=1002) == []
    assert interval_totals(FIO, {"a": a, "b": NodeTimeline(1000.0)}) == []  # b running, no sample yet


def test_nodes_started_two_seconds_apart_add_up_the_same_wall_clock_seconds() -> None:
    """The issue's case: starts 1.99 s apart, each node steady at its rate. The n-th intervals
    summed gave the peak of one node's ramp added to the other's; by wall-clock second the
    total is what both did in that second, and a node counts for the part of a second it ran."""
    a = _timeline(1000.0, [_sample(1000, 10, t=t) for t in range(1, 11)])  # 1000-1010
    b = _timeline(1001.99, [_sample(3000, 30, t=t) for t in range(1, 11)])  # 1002.99-1011.99
    seconds = interval_totals(FIO, {"a": a, "b": b}, finished=["a", "b"])
    by_at = {i.at: i.total["read_iops"] for i in seconds}
    assert by_at[1000] == pytest.approx(1000)  # b not running yet
    assert by_at[1001] == pytest.approx(1000 + 3000 * 0.01)  # b ran the last 0.01 s of it
    assert by_at[1005] == pytest.approx(4000)  # not 1000 + the peak of b's n-th interval
    assert by_at[1010] == pytest.approx(3000 * 1.0) and by_at[1011] == pytest.approx(3000 * 0.99)
    # every I/O counted once: the seconds add up to the nodes' totals
    assert sum(by_at.values()) == pytest.approx(1000 * 10 + 3000 * 10)
    # latency weighted by each node's IOPS in that second
    assert seconds[5].total["read_clat_p99_us"] == pytest.approx((1000 * 10 + 3000 * 30) / 4000)
    # a last partial interval (0.3 s) counts for what it covers, not as a whole second
    c = _timeline(1000.0, [_sample(1000, 10, t=1), _sample(500, 10, t=1.3, interval_s=0.3)])
    last = interval_totals(FIO, {"c": c}, finished=["c"])[-1]
    assert last.at == 1001 and last.total["read_iops"] == pytest.approx(150)


def test_result_total_of_fio_jobs_and_orion_peaks() -> None:
    job = lambda iops, mean: {"read": {"iops": iops, "bw_kib_s": iops * 4, "clat_us": {"mean": mean}}}  # noqa: E731
    total = result_total({"a": {"jobs": [job(100, 10), job(100, 30)]}, "b": {"jobs": [job(200, 40)]}, "c": None})
    assert total == {"read_iops": 400.0, "read_bw_kib_s": 1600.0, "read_clat_mean_us": 30.0}
    assert result_total({"a": {"max_small_iops": 5000, "max_large_mbps": 100.5}, "b": {"max_small_iops": 7000}}) == {
        "max_small_iops": 12000.0,
        "max_large_mbps": 100.5,
    }
    # a node lost 6 s into a 30 s group adds the I/O it did over the group's time (tmux: 22.6k
    # "total" for n1's 30 s at 15.3k and n2's 6 s at 7.3k); a start skew of 0.3 s changes nothing
    lost = {"n1": {"jobs": [job(15300, 100)]}, "n2": {"jobs": [job(7300, 100)]}}
    assert result_total(lost, {"n1": 30.0, "n2": 6.0}, ["n2"])["read_iops"] == pytest.approx(15300 + 7300 / 5)
    assert result_total(lost, {"n1": 30.0, "n2": 29.7}, ["n2"])["read_iops"] == pytest.approx(15300 + 7300)
    assert result_total(lost, {"n1": 30.0, "n2": 6.0}, ["n2"])["read_clat_mean_us"] == pytest.approx(100)
    # a node that finished its test is never scaled: a 4 s run's wall time holds its start-up
    assert result_total(lost, {"n1": 5.5, "n2": 4.2})["read_iops"] == pytest.approx(15300 + 7300)


def _lun_row(shown: str, lun: str, r_s: float, w_s: float, await_ms: float) -> dict:
    row = IostatRow(shown, r_s, w_s, r_s * 8, w_s * 8, 0, 0, 16, 1, await_ms, await_ms, await_ms, 0.1, 50)._asdict()
    return {**row, "shown": shown, "lun": lun}


def test_a_node_s_orion_load_is_its_luns_own_devices_and_adds_up() -> None:
    """ORION's live record (its diskstats companion's rows): the LUNs' own devices count, the
    paths below them carry the same I/O again and do not."""
    record = {"rows": [_lun_row("dm-3", "/dev/mapper/data1", 300, 100, 2.0), _lun_row("  sdb", "below", 300, 100, 2.0),
                       _lun_row("dm-4", "/dev/mapper/data2", 100, 0, 6.0)]}  # fmt: skip
    sample = Sample(1.0, {"progress_pct": 10.0}, {"orion_live": record})
    figures = node_figures(sample)
    assert figures["lun_iops"] == 500 and figures["lun_mbps"] == pytest.approx((400 + 100) * 8 / 1024)
    assert figures["lun_await_ms"] == pytest.approx((400 * 2.0 + 100 * 6.0) / 500)
    other = node_figures(
        Sample(1.0, {"progress_pct": 20.0}, {"orion_live": {"rows": [_lun_row("dm-5", "/x", 500, 0, 1.0)]}})
    )
    total = total_of(tool_description("orion"), {"rac1": figures, "rac2": other})
    assert total["lun_iops"] == 1000 and total["progress_pct"] == 10.0
    assert total["lun_await_ms"] == pytest.approx((500 * figures["lun_await_ms"] + 500 * 1.0) / 1000)
    assert "data_point" not in total  # a number, not a figure that adds up


# --------------------------------------------------------------------------- two real nodes


def _lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _read_target(tmp_path: Path, mib: int = 64) -> Path:
    target = tmp_path / "data.fio"
    with open(target, "wb") as f:
        f.write(os.urandom(1 << 20) * mib)
    return target


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_fio_on_two_nodes_per_node_figures_and_their_total(two_nodes: Path, tmp_path: Path) -> None:  # noqa: F811
    target = _read_target(tmp_path)
    data = tmp_path / "data"
    done = racperf(
        "run", "fio", "--node", "rac1", "--node", "rac2", "--cluster", str(two_nodes), "--data-dir", str(data),
        "--", "--name=r", f"--filename={target}", "--rw=randread", "--bs=4k", "--size=64m",
        "--runtime=4", "--time_based", "--status-interval=1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = _lines(done.stdout)
    group = lines[0]
    assert group["type"] == "group" and set(group["runs"]) == {"rac1", "rac2"} and group["left_out"] == {}
    samples = [line for line in lines if line["type"] == "sample"]
    totals = [line for line in lines if line["type"] == "total"]
    by_node: dict[str, list[dict]] = {"rac1": [], "rac2": []}
    for line in samples:
        assert line["run_id"] == group["runs"][line["node"]]
        by_node[line["node"]].append(line)
    assert all(len(series) >= 3 for series in by_node.values()), {k: len(v) for k, v in by_node.items()}
    assert all(s["metrics"]["read_iops"] > 0 for series in by_node.values() for s in series[:-1])
    # each total is one wall-clock second: every I/O the nodes' samples count is in one of
    # them, once (the seconds' IOPS add up to the samples' IOPS times their lengths)
    assert [t["interval"] for t in totals] == list(range(1, len(totals) + 1))
    assert all(t["at"] == totals[0]["at"] + t["interval"] - 1 for t in totals)
    for key in ("read_iops", "read_bw_kib_s"):
        counted = sum(s["metrics"][key] * s["interval_s"] for series in by_node.values() for s in series)
        assert sum(t["metrics"][key] for t in totals) == pytest.approx(counted, rel=1e-3)
    both = [t for t in totals if t["nodes"] == ["rac1", "rac2"]]
    assert len(both) >= 2  # seconds both nodes ran
    for total in both:  # latency between the nodes' (weighted by their IOPS in that second)
        p99s = [s["metrics"]["read_clat_p99_us"] for series in by_node.values() for s in series]
        assert min(p99s) - 1e-9 <= total["metrics"]["read_clat_p99_us"] <= max(p99s) + 1e-9
    results = {line["node"]: line for line in lines if line["type"] == "result"}
    assert list(results) == ["rac1", "rac2"] and all(r["state"] == "succeeded" for r in results.values())
    # the order they were named in, whichever run was recorded first
    assert all(total["nodes"] == [n for n in ("rac1", "rac2") if n in total["nodes"]] for total in totals)
    final = lines[-1]
    assert final["type"] == "group_result" and final["states"] == {"rac1": "succeeded", "rac2": "succeeded"}
    node_iops = [sum(job["read"]["iops"] for job in r["result"]["jobs"]) for r in results.values()]
    assert min(node_iops) > 0
    assert final["total"]["read_iops"] == pytest.approx(sum(node_iops), rel=1e-9)
    assert final["start_skew_s"] is not None and 0 <= final["start_skew_s"] < 5.0
    with Store.open(data) as store:
        record = store.get_group(group["group_id"])
        assert record.tool == "fio" and record.nodes == ["rac1", "rac2"]
        assert record.message == "started on rac1, rac2"
        runs = store.group_runs(group["group_id"])
        assert sorted((r.host, r.group_id) for r in runs) == [("rac1", record.id), ("rac2", record.id)]
        # each node's run is a normal run: its own samples, its write guard's record
        for run in runs:
            assert store.sample_count(run.id) == len(by_node[run.host])
            safety = json.loads(store.raw_output(run.id, "safety"))
            assert [(t["path"], t["access"]) for t in safety["targets"]] == [(str(target), "read")]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_an_unreachable_node_is_left_out_and_said_why(
    sshd: Sshd,
    tmp_path: Path,
    isolated_home: Path,  # noqa: F811
    remote_runs: Path,  # noqa: F811
) -> None:
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd) + node_table("rac2", sshd, port=_free_port()))
    target = _read_target(tmp_path, 8)
    done = racperf(
        "run", "fio", "--nodes", "all", "--cluster", str(cluster), "--data-dir", str(tmp_path / "data"),
        "--", "--name=r", f"--filename={target}", "--rw=read", "--size=8m",
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    (said,) = done.stderr.strip().splitlines()
    assert said.startswith("racperf run fio: node rac2: ") and "cannot connect: Connection refused" in said, said
    assert said.endswith("(not started there; the other nodes go on)")
    lines = _lines(done.stdout)
    assert lines[0]["runs"].keys() == {"rac1"} and "Connection refused" in lines[0]["left_out"]["rac2"]
    (result,) = [line for line in lines if line["type"] == "result"]
    assert result["node"] == "rac1" and result["state"] == "succeeded"
    assert sum(job["read"]["io_kib"] for job in result["result"]["jobs"]) == 8 * 1024
    with Store.open(tmp_path / "data") as store:
        (group,) = store.list_groups()
        assert group.nodes == ["rac1", "rac2"]
        assert (group.message or "").startswith("started on rac1; not started on rac2: ")
        assert "cannot connect: Connection refused" in (group.message or "")
    # no node reachable: exit 3, every node's reason, nothing recorded
    cluster.write_text(node_table("rac1", sshd, port=_free_port()) + node_table("rac2", sshd, port=_free_port()))
    done = racperf(
        "run", "fio", "--nodes", "all", "--cluster", str(cluster), "--data-dir", str(tmp_path / "none"),
        "--", "--name=r", f"--filename={target}", "--rw=read", "--size=8m",
    )  # fmt: skip
    assert done.returncode == 3 and done.stdout == "", (done.stdout, done.stderr)
    (said,) = done.stderr.strip().splitlines()
    assert said.startswith("racperf run fio: no node could be reached: rac1: ") and "; rac2: " in said, said
    with Store.open(tmp_path / "none") as store:
        assert store.list_groups() == [] and store.list_runs() == []


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_refusal_refuses_the_group(two_nodes: Path, tmp_path: Path) -> None:  # noqa: F811
    """An option fio's allow list refuses (it runs a command): judged on every node, each
    refusal named with its node, nothing recorded or started anywhere."""
    marker = tmp_path / "ran"
    done = racperf(
        "run", "fio", "--node", "rac1", "--node", "rac2", "--cluster", str(two_nodes), "--data-dir",
        str(tmp_path / "data"), "--", "--name=r", f"--filename={tmp_path / 'x.fio'}", "--rw=read", "--size=1m",
        f"--exec_prerun=touch {marker}",
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    (said,) = done.stderr.strip().splitlines()
    assert said.startswith("racperf run fio: fio refused on node rac1: ") and "; node rac2: " in said, said
    assert "exec_prerun" in said and said.endswith("(nothing was started on any node)"), said
    assert done.stdout == "" and not marker.exists()
    with Store.open(tmp_path / "data") as store:
        assert store.list_groups() == [] and store.list_runs() == []


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_group_is_stopped_at_once_by_runs_stop(two_nodes: Path, tmp_path: Path) -> None:  # noqa: F811
    target = _read_target(tmp_path, 8)
    data = tmp_path / "data"
    nodes = list(load_cluster(two_nodes).nodes)
    config = {"extra_args": ["--name=r", f"--filename={target}", "--rw=randread", "--size=8m", "--runtime=60",
                             "--time_based", "--status-interval=1"]}  # fmt: skip
    started = launch_group("fio", config, nodes, data_dir=data)
    assert set(started.runs) == {"rac1", "rac2"}
    with Store.open(data) as store:
        deadline = time.monotonic() + 60
        while not all(store.sample_count(run_id) >= 2 for run_id in started.runs.values()):
            assert time.monotonic() < deadline, "no samples from both nodes within 60 s"
            time.sleep(0.2)
    began = time.monotonic()
    done = racperf("runs", "stop", f"g{started.group_id}", "--data-dir", str(data))
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"group g{started.group_id}: rac1 stopped, rac2 stopped\n", done.stdout
    assert took < 30.0, took  # the command's start-up included (seconds on a loaded machine)
    again = racperf("runs", "stop", f"g{started.group_id}", "--data-dir", str(data))
    assert again.returncode == 3 and "had already ended (rac1 stopped, rac2 stopped)" in again.stderr
    with Store.open(data) as store:
        assert [run.state for run in store.group_runs(started.group_id)] == [RunState.STOPPED] * 2
        ended = [run.ended_at for run in store.group_runs(started.group_id)]
        assert all(e is not None for e in ended) and max(ended) - min(ended) < 5.0  # type: ignore[operator]


@pytest.fixture
def oracle_home(tmp_path: Path) -> Path:
    """An ORACLE_HOME whose bin/orion is the emulator in real time (each data point its
    -duration), so racperf's schedule of the points is the emulator's own."""
    home = tmp_path / "oracle_home"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    emulator = home / "bin" / "orion"
    shutil.copy(FAKES / "orion", emulator)
    os.chmod(emulator, 0o755)
    return home


@needs_loop
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_orion_on_two_nodes_against_the_same_lun(two_nodes: Path, tmp_path: Path, oracle_home: Path) -> None:  # noqa: F811
    """The seed's setup: ORION started on every node against the shared LUN (here one loop
    device both nodes read), each node's write guard judging it, each node's diskstats
    companion measuring the LUN's device there (one channel a node, an answer a second): live
    figures on each node at each of its three 2 s data points; one result per node and the
    total."""
    data = tmp_path / "data"
    with loop_device(tmp_path / "lun.img", 16) as lun:
        done = racperf(
            "run", "orion", "--nodes", "rac1,rac2", "--cluster", str(two_nodes), "--data-dir", str(data),
            "--set", "run=advanced", "--set", "matrix=col", "--set", "num_small=2", "--set", "duration=3",
            "--set", "cache_size=0", "--set", f"lun={lun.path}", "--set", f"oracle_home={oracle_home}",
            "--set", "hugenotneeded=true", timeout_s=200,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout[-2000:]
    lines = _lines(done.stdout)
    results = {line["node"]: line for line in lines if line["type"] == "result"}
    assert list(results) == ["rac1", "rac2"] and all(r["state"] == "succeeded" for r in results.values())
    peaks = [r["result"]["max_small_iops"] for r in results.values()]
    assert min(peaks) > 0
    final = lines[-1]
    assert final["total"]["max_small_iops"] == pytest.approx(sum(peaks))
    samples = [line for line in lines if line["type"] == "sample"]
    totals = [line for line in lines if line["type"] == "total"]
    assert totals and totals[-1]["metrics"]["progress_pct"] == 100.0
    # the seconds' LUN IOPS add up to the samples' (each held from the node's previous one)
    counted = 0.0
    for node in ("rac1", "rac2"):
        series = [s for s in samples if s["node"] == node]
        for before, sample in zip([{"t": 0.0}, *series], series):
            counted += sample["metrics"].get("lun_iops", 0.0) * (sample["t"] - before["t"])
    assert sum(t["metrics"].get("lun_iops", 0.0) for t in totals) == pytest.approx(counted, rel=1e-3)
    both = [t for t in totals if len(t["nodes"]) == 2 and t["metrics"].get("lun_iops", 0) > 0]
    assert len(both) >= 2, [t["metrics"] for t in totals]  # intervals where both nodes' live figures add up
    measured: set[int] = set()
    with Store.open(data) as store:
        for run in store.group_runs(final["group_id"]):
            recorded = [s for _, s in store.samples(run.id)]
            # the companion's answers (its start on a loaded node takes seconds): one a second
            # over one channel, each after the first (the baseline) with the LUN's figures (a
            # channel an answer gave 5 of 26 samples in a 3 s-a-point run, 4 to 5 s apart)
            answers = [s for s in recorded if s.extra.get("phase") == "running" and "orion_live" in s.extra]
            seen = [(round(s.t, 1), bool(s.extra["orion_live"]["rows"])) for s in answers]
            # (a loaded CI machine's companion started late: 4 answers, from 10.3 s on)
            assert len(answers) >= 3 and all(live for _, live in seen[1:]), (run.host, seen)
            assert (answers[-1].t - answers[0].t) / (len(answers) - 1) < 1.5, (run.host, seen)
            points = recorded[-1].extra["orion_live"]["points"]
            fields = recorded[-1].extra["orion_live"]["point_fields"]
            by_number = {p[0]: dict(zip(fields, p)) for p in points}
            # both "nodes" read one loop device on this host, so each node's diskstats carries
            # the other's load too, which no real RAC node sees (a host counts only its own I/O
            # to a shared LUN): its windows, re-anchored at the other's changes of load, may
            # shift or fall under half a point (CI once kept only point 3 of rac1). So each node
            # measured a point of its own, and the two nodes together two (docs/ORION.md); the
            # windows themselves are proven on one node in test_orion_live_runs
            assert by_number and set(by_number) <= {1, 2, 3}, (run.host, points)
            assert all(p["iops"] > 0 and p["seconds"] > 0 for p in by_number.values()), (run.host, points)
            measured |= set(by_number)
    assert len(measured) >= 2, measured


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_signal_stops_every_node(two_nodes: Path, tmp_path: Path) -> None:  # noqa: F811
    """SIGINT to ``racperf run`` of a group stops every node's run; their results are kept."""
    target = _read_target(tmp_path, 8)
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, "-m", "racperf_tui", "run", "fio", "--nodes", "all", "--cluster", str(two_nodes),
         "--data-dir", str(data), "--", "--name=r", f"--filename={target}", "--rw=randread", "--size=8m",
         "--runtime=60", "--time_based", "--status-interval=1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    assert proc.stdout is not None
    seen: set[str] = set()
    deadline = time.monotonic() + 150  # a loaded test machine takes up to a minute to start both
    while seen != {"rac1", "rac2"}:
        assert time.monotonic() < deadline, "no samples from both nodes"
        line = json.loads(proc.stdout.readline())
        if line["type"] == "sample":
            seen.add(line["node"])
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    final = json.loads(out.strip().splitlines()[-1])
    assert final["type"] == "group_result" and final["states"] == {"rac1": "stopped", "rac2": "stopped"}
    assert final["total"]["read_iops"] > 0


def test_calibrate_io_s_devices_are_watched_on_every_node_by_the_lun_s_identity() -> None:
    """CALIBRATE_IO on rac1 loads dm-3 (and sdb, sdc below it) there: rac2 watches its own
    names of the same LUN (dm-7, sdf, sdg), rac3 sharing none watches nothing."""
    states = {
        "rac1": NodeState("rac1", "x", luns={"wwid:360a98": ("dm-3", "sdb", "sdc"), "wwid:360a99": ("dm-4",)}),
        "rac2": NodeState("rac2", "y", luns={"wwid:360a99": ("dm-2",), "wwid:360a98": ("dm-7", "sdf", "sdg")}),
        "rac3": NodeState("rac3", "z", luns={"wwid:ffff": ("sda",)}),
    }
    watched = devices_to_watch("rac1", ["dm-3", "sdb", "sdc"], states)
    assert watched == {"rac1": ("dm-3", "sdb", "sdc"), "rac2": ("dm-7", "sdf", "sdg"), "rac3": ()}
    assert devices_to_watch("rac1", ["nvme0n1"], states) == {"rac1": ("nvme0n1",), "rac2": (), "rac3": ()}
    assert devices_to_watch("rac9", ["dm-3"], states) == {"rac9": ("dm-3",)}


def test_runs_stop_of_an_unknown_group_is_named(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Store.open(data) as store:
        store.create_run("fio", "local", None, {}, [], None)
    done = racperf("runs", "stop", "g7", "--data-dir", str(data))
    assert done.returncode == 1 and done.stderr.strip() == f"racperf runs stop: no run group g7 in {data}"
