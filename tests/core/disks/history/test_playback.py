"""An archive's host played back: a moment reached going back (from a kept copy of the model)
shows what it shows reached going on, the saturation judge's state included."""

from __future__ import annotations

from racperf_tui.core.disks.history.playback import CHECKPOINT_EVERY, HostSeries, as_iostat_report
from racperf_tui.core.disks.history.report import HistoryReport, HistoryRow
from racperf_tui.core.disks.iostat_model import IostatModel


def _series(count: int) -> HostSeries:
    """sdb at low load, then queueing for a while, in waves; sdc idle but for a few reads."""
    series = HostSeries("rac1", new_model=IostatModel, model=IostatModel())
    for index in range(count):
        busy = (index // 40) % 2 == 1
        sdb = (1000.0, 0.0, 4000.0, 0.0, 0.0, 0.0, 8.0, 20.0 if busy else 0.2, 20.0 if busy else 1.0, 1.0, 0.0)
        rows = [
            HistoryRow("sdb", (*sdb, None, 100.0 if busy else 20.0)),
            HistoryRow("sdc", (10.0, 0.0, 40.0, 0.0, 0.0, 0.0, 8.0, 0.01, 1.0, 1.0, 0.0, None, 1.0)),
        ]
        report = HistoryReport("f", index, "rac1", None, 1.0, index == 0, rows)
        series.times.append(float(index))
        series.reports.append(as_iostat_report(report, 1.7e9 + index))
    return series


def _state(model: IostatModel) -> list[tuple[object, ...]]:
    return [
        (s.name, s.level, s.samples, {k: list(v) for k, v in s.history.items()}, s.row) for s in model.devices.values()
    ] + [(e.device, e.level, e.since, e.until) for e in model.episodes_so_far()]


def test_back_from_a_kept_copy_is_the_same_as_on_from_the_start() -> None:
    count = 2 * CHECKPOINT_EVERY + 100
    target = 2 * CHECKPOINT_EVERY + 45.0  # inside a busy wave: a level held by hysteresis
    onward = _series(count)
    onward.show_until(target)
    back = _series(count)
    back.show_until(count)
    assert sorted(back.checkpoints) == [CHECKPOINT_EVERY, 2 * CHECKPOINT_EVERY]
    back.model.sort_key = "name"
    back.show_until(target)
    assert back.fed == onward.fed == int(target) + 1
    assert _state(back.model) == _state(onward.model)
    assert back.model.devices["sdb"].level == "queueing"
    assert back.model.sort_key == "name"  # the view's settings stay
    # and before the first copy: from the start again
    back.show_until(10.0)
    onward = _series(count)
    onward.show_until(10.0)
    assert _state(back.model) == _state(onward.model)
