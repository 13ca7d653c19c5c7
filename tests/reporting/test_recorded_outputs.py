"""Reports of runs whose tools cannot run here, from their real outputs (tests/fixtures): where
ORION reached each maximum with the latency there, and an interconnect run's verdict."""

from __future__ import annotations

from pathlib import Path

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.net_guidance import interconnect_verdict
from racperf_tui.core.store import Store
from racperf_tui.reporting.render import write_report
from racperf_tui.tools import iperf3, orion
from tests.helpers import FIXTURES


def _finished_run(store: Store, tool: str, result: dict[str, object], config: dict[str, object]) -> int:
    run_id = store.create_run(tool, "local", None, config, [tool], "recorded")
    store.set_result(run_id, result)
    store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    return run_id


def test_orion_maxima_are_said_with_their_point_and_latency(data_dir: Path, tmp_path: Path) -> None:
    folder = FIXTURES / "orion" / "reconstructed-19c"
    files = {p.name: p.read_text() for p in folder.glob("o19_*")}
    result = orion.parse_result_files((folder / "o19-stdout.txt").read_text(), files)
    with Store.open(data_dir) as store:
        run_id = _finished_run(store, "orion", result, {"run": "basic"})
        store.set_label(run_id, "array-B | fw 4.2")
        store.set_note(run_id, "after the firmware update")
        write_report(store, [run_id], tmp_path / "orion.md")
    text = (tmp_path / "orion.md").read_text()
    # the headline figures: ORION's declared results (its summary's maxima), in full with their units
    assert "| highest small-I/O IOPS | 48,211 IOPS |\n| highest large-I/O MB/s | 1,532.4 MB/s |\n" in text
    assert "| lowest small-I/O latency | 81.24 µs |\n" in text
    # 48,211.25 IOPS at 5 small / 0 large outstanding I/Os, where lat.csv says 103.67 µs
    assert "| highest small-I/O IOPS | 48,211 IOPS | 5 | 0 | 103.7 µs | 48,211 IOPS | - |" in text
    assert "| highest large-I/O MB/s | 1,532.4 MB/s | 0 | 2 | - | - | 1,532.4 MB/s |" in text
    assert "| lowest small-I/O latency | 81.24 µs | 1 | 0 | 81.2 µs | 12,310 IOPS | - |" in text
    assert "No iostat of its devices was recorded with this run" in text
    # the matrices as matrices (ORION's lat.csv: a row per large load, a column per small one)
    assert "| large \\\\ small outstanding I/Os | 1 | 2 | 3 | 4 | 5 |" in text
    assert "| 0 | 12,310 | 23,551 | 34,012 | 42,988 | 48,211 |" in text
    assert "| 0 | 81.2 | 84.9 | 88.2 | 93.0 | 103.7 |" in text
    assert "[[" not in text and "small_loads" not in text
    assert f"## Run {run_id} (array-B \\| fw 4.2): orion on local" in text  # the label, its | escaped
    assert "Note: after the firmware update" in text


def test_an_interconnect_run_gets_its_verdict(data_dir: Path, tmp_path: Path) -> None:
    result = iperf3.parse_output((FIXTURES / "iperf3" / "parallel.json").read_text())
    with Store.open(data_dir) as store:
        run_id = _finished_run(store, "iperf3", result, {"role": "client", "host": "127.0.0.1"})
        write_report(store, [run_id], tmp_path / "net.html")
    html = (tmp_path / "net.html").read_text()
    verdict = interconnect_verdict(float(result["received_mbit_s"]))  # type: ignore[arg-type]
    assert verdict.level == "good" and f"(interconnect): {verdict.text}" in html
    assert 'data-key="received_mbit_s">24,912.8 Mbit/s<' in html


def test_a_sweeps_knee_is_in_the_verdict(data_dir: Path, tmp_path: Path) -> None:
    """A run of a sweep's run group: the group's knee (orchestration/sweep.py's result) said first."""
    result = iperf3.parse_output((FIXTURES / "iperf3" / "parallel.json").read_text())
    knee = {"rw": "randread", "bs": "8k", "iodepth": 16, "numjobs": 2, "iops": 41234.5, "lat_p99_us": 1850.0}
    with Store.open(data_dir) as store:
        group = store.create_group("fio", {"rw": "randread"}, ["local"])
        store.set_group_result(group, {"knee": knee, "knee_lat_mean_us": 775.25, "knee_lat_p99_us": 1850.0})
        run_id = store.create_run("fio", "local", None, {}, ["fio"], "fio-3.33", group_id=group)
        store.set_result(run_id, result)  # any result: the knee is the group's
        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
        write_report(store, [run_id], tmp_path / "sweep.md")
    text = (tmp_path / "sweep.md").read_text()
    said = f"Sweep g{group}: the knee at 41,234 IOPS (iodepth 16 x 2 jobs), mean latency 775.2 µs, p99 1,850.0 µs."
    assert said in text and text.index(said) < text.index("## Run")
