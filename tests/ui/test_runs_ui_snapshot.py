"""Snapshots of the result view of a stored, deterministic fio run (80x24).

Regenerate after an intended change with ``pytest tests/test_runs_ui_snapshot.py --snapshot-update``
and look at the SVGs in tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.result_view_run import ResultViewApp, loaded, seed_finished_run


def test_result_view_summary_snapshot(snap_compare: Any, data_dir: Path, utc: None) -> None:
    run_id = seed_finished_run(data_dir)
    assert snap_compare(ResultViewApp(data_dir, run_id), terminal_size=(80, 24), run_before=loaded)


def test_result_view_charts_snapshot(snap_compare: Any, data_dir: Path, utc: None) -> None:
    run_id = seed_finished_run(data_dir)
    assert snap_compare(
        ResultViewApp(data_dir, run_id), press=["right", "right"], terminal_size=(80, 24), run_before=loaded
    )


def test_result_view_details_snapshot(snap_compare: Any, data_dir: Path, utc: None) -> None:
    run_id = seed_finished_run(data_dir)
    assert snap_compare(
        ResultViewApp(data_dir, run_id), press=["right", "right", "right"], terminal_size=(80, 24), run_before=loaded
    )
