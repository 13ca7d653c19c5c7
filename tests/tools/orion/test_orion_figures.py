"""ORION's maxima as declared result figures: two real ORION outputs (the 19c sample and the 11.2
advanced run, tests/fixtures/orion) stored as finished runs, compared by `racperf runs compare`,
the criteria judged on them, and the runs list's figure of an ORION run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from textual.message_pump import MessagePump

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.criteria import parse_criteria
from racperf_tui.core.store import Store
from racperf_tui.orchestration.compare import compare_runs
from racperf_tui.tools import orion
from racperf_tui.ui.store_watcher import RunsUpdate, RunsWatch
from tests.helpers import FIXTURES, racperf_cmd
from tests.helpers.orion_seed import sample_19c_result


def _sample_112() -> dict[str, Any]:
    return orion.parse_result((FIXTURES / "orion" / "11.2.0.4-advanced-stdout.txt").read_text())


def _stored(data_dir: Path, results: list[dict[str, Any]]) -> list[int]:
    with Store.open(data_dir) as store:
        ids = []
        for result in results:
            run_id = store.create_run("orion", "local", None, {"run": "simple"}, ["orion"], str(result.get("version")))
            store.set_result(run_id, result)
            store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
            ids.append(run_id)
    return ids


def test_two_orion_runs_compare_on_their_maxima(data_dir: Path) -> None:
    first, second = _stored(data_dir, [sample_19c_result(), _sample_112()])
    done = subprocess.run(
        [*racperf_cmd(), "runs", "compare", "--data-dir", str(data_dir), str(first), str(second), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    rows = {row["metric"]: row for row in doc["rows"]}
    assert list(rows) == ["max_small_iops", "max_large_mbps", "min_small_latency_us"]
    # the 19c summary: 48,211.25 IOPS, 1,532.417 MB/s, 81.24 µs; 11.2.0.4's: 9,583, 74.07, 208
    iops, mbps, latency = rows["max_small_iops"], rows["max_large_mbps"], rows["min_small_latency_us"]
    assert (iops["unit"], iops["better"], iops["values"]) == ("IOPS", "higher", [48211.25, 9583.0])
    assert (mbps["unit"], mbps["better"], mbps["values"]) == ("MB/s", "higher", [1532.417, 74.07])
    assert (latency["unit"], latency["better"], latency["values"]) == ("µs", "lower", [81.24, 208.0])
    # by hand: (9583 - 48211.25) / 48211.25 = -80.12 %; (74.07 - 1532.417) / 1532.417 = -95.17 %;
    # (208 - 81.24) / 81.24 = +156.03 %
    assert iops["diff_pct"] == [None, -80.12]
    assert mbps["diff_pct"] == [None, -95.17]
    assert latency["diff_pct"] == [None, 156.03]
    # ORION's samples are progress, not these figures: no noise to judge against
    assert iops["significant"] == [None, None]
    assert doc["differs"]["tool_version"] == ["RDBMS_19.3.0.0.0DBRU_LINUX.X64_190417", "11.2.0.4.0"]

    text = subprocess.run(
        [*racperf_cmd(), "runs", "compare", "--data-dir", str(data_dir), str(first), str(second)],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "9,583 -80.1% worse" in text and "208.00 +156.0% worse" in text, text


def test_the_runs_list_shows_an_orion_runs_max_small_iops(data_dir: Path) -> None:
    (run_id,) = _stored(data_dir, [sample_19c_result()])
    with Store.open(data_dir) as store:
        update = RunsWatch(MessagePump()).poll(store)  # the watcher's own read, off any app
    assert isinstance(update, RunsUpdate)
    assert update.snapshot.figures[run_id] == "48.2k IOPS"  # 48,211.25 IOPS, compact


def test_criteria_judge_orion_runs_on_their_maxima(data_dir: Path) -> None:
    first, second = _stored(data_dir, [sample_19c_result(), _sample_112()])
    criteria = parse_criteria("max_small_iops >= 40000\nmin_small_latency_us <= 100\n")
    with Store.open(data_dir, read_only=True) as store:
        comparison = compare_runs(store, [first, second], criteria=criteria)
    judged = [[(v.outcome, v.figures) for v in run] for run in comparison.verdicts]
    assert judged == [
        [("pass", {"max_small_iops": 48211.25}), ("pass", {"min_small_latency_us": 81.24})],
        [("fail", {"max_small_iops": 9583.0}), ("fail", {"min_small_latency_us": 208.0})],
    ]
