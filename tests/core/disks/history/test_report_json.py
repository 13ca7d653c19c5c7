"""The reports' JSON lines, written directly for speed, say what strict_json.dumps(as_dict())
says, for every fixture and for figures that are none or not finite."""

from __future__ import annotations

import json

from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport, HistoryRow
from racperf_tui.core.disks.iostat_math import COLUMNS
from racperf_tui.core.textio import strict_json
from tests.helpers import FIXTURES


def test_every_fixture_report_as_as_dict_says() -> None:
    reports = [r for r in read_history(sorted((FIXTURES / "iostat_history").iterdir())) if isinstance(r, HistoryReport)]
    assert len(reports) > 20
    for report in reports:
        assert json.loads(report.json_text()) == json.loads(strict_json.dumps(report.as_dict()))


def test_none_and_non_finite_figures_are_null_and_extras_follow_the_figures() -> None:
    values = (1.005, None, float("inf"), float("-inf"), float("nan"), 0.0, -0.001, 1e20, 2.0, 3.0, 4.0, None, 99.999)
    row = HistoryRow('sd"a', values)
    parsed = json.loads(row.json_text(', "saturation": {"level": "ok"}'))
    assert list(parsed) == ["device", *COLUMNS, "saturation"]
    assert parsed == {**json.loads(strict_json.dumps(row.as_dict())), "saturation": {"level": "ok"}}
    assert parsed["device"] == 'sd"a' and parsed["w/s"] is None and parsed["rkB/s"] is None and parsed["%util"] == 100.0
