"""The Network tab beside recorded runs: the last recorded pair's measurement instead of "no
measurement yet", a new pair's sparklines that start empty, latency said to be a mean, and bars
from 0 so a steady link looks steady. Real probe pairs on 127.0.0.1 in a real store."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.color import Color
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Input, Label, Static

from racperf_tui.core.contract.quantities import result_throughput_mbit_s
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import PairRuns, finish_pair, launch_pair
from racperf_tui.tools import tool_description
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.tabs.network_panel import NetworkPanel
from racperf_tui.ui.widgets.fast_sparkline import FastSparklineRenderable
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline
from tests.helpers.pilot_apps import wait_until


class PanelApp(App[None]):
    CSS_PATH = APP_CSS_PATH

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        yield NetworkPanel(data_dir=str(self.data_dir), poll_interval_s=0.1)


def _recorded_pair(data_dir: Path) -> tuple[PairRuns, float, int]:
    """A probe pair run to its end: (the pair, its client's final Mbit/s, its sample count)."""
    pair = launch_pair(
        "probe",
        {"bind": "127.0.0.1", "port": 0},
        {"host": "127.0.0.1", "port": 0, "duration_s": 1.0, "interval_s": 0.25, "mode": "ASYNC"},
        data_dir=data_dir,
    )
    deadline = time.monotonic() + 20
    with Store.open(data_dir) as store:
        while not store.get_run(pair.client_run_id).state.finished:
            assert time.monotonic() < deadline, "the recorded pair did not end"
            time.sleep(0.1)
        finish_pair(pair, data_dir, grace_s=5)
        final = result_throughput_mbit_s(tool_description("probe"), store.result(pair.client_run_id))
        count = len(store.samples(pair.client_run_id))
    assert final is not None and final > 0 and count >= 2
    return pair, final, count


def _label(sparkline: MetricSparkline) -> str:
    return str(sparkline.query_one(".metric-label", Label).render())


async def test_the_last_recorded_pair_is_shown_then_a_new_pair_starts_empty(data_dir: Path) -> None:
    pair, final, count = _recorded_pair(data_dir)
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        verdict = panel.query_one("#net-verdict-interconnect", Static)
        await wait_until(pilot, lambda: panel.final_throughput_mbit_s is not None, 10, "the recorded measurement")
        assert panel.final_throughput_mbit_s == final
        assert "no measurement yet" not in str(verdict.render())
        message = str(panel.query_one("#net-message", Static).render())
        assert f"last recorded probe pair (runs #{pair.server_run_id} and #{pair.client_run_id}" in message
        throughput = panel.query_one("#net-throughput", MetricSparkline)
        latency = panel.query_one("#net-latency", MetricSparkline)
        assert len(throughput.values) == count
        assert _label(throughput) == "Throughput, 0-max" and _label(latency) == "Lat. mean, 0-max"
        # a blank between a label and its bars (tmux: "Throughput, 0-max▁▁▁", the 17-cell
        # label ran into them)
        for spark in (throughput, latency):
            label, bars = spark.query_one(".metric-label", Label), spark.query_one("FastSparkline")
            assert bars.region.x - label.region.x >= len(_label(spark)) + 1, (label.region, bars.region)
        # a new pair (SYNC: a latency per interval): its sparklines hold its own samples only
        panel.query_one("#net-duration", Input).value = "1"
        panel.query_one("#net-interval", Input).value = "0.5"
        panel.query_one("#net-start").focus()
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: panel.pair is not None and panel.pair != pair, 20, "the new pair")
        assert len(throughput.values) <= 1 and len(latency.values) <= 1
        try:
            await wait_until(pilot, lambda: len(throughput.values) >= 1, 20, "the new pair's first sample")
            new_pair = panel.pair
            assert new_pair is not None
            with Store.open(data_dir) as store:
                recorded = len(store.samples(new_pair.client_run_id))
            assert 1 <= len(throughput.values) <= recorded
        finally:
            if panel.pair is not None:
                finish_pair(panel.pair, data_dir, grace_s=5)


def _bars(data: list[float], floor: float | None) -> str:
    console = Console(width=3, file=io.StringIO(), color_system=None)
    renderable = FastSparklineRenderable(
        data,
        width=3,
        height=1,
        min_color=Color.parse("red"),
        max_color=Color.parse("green"),
        summary_function=max,
        floor=floor,
    )
    return "".join(segment.text for segment in console.render(renderable))


def test_a_steady_link_is_drawn_steady_from_zero() -> None:
    """940, 950 and 945 Mbit/s: from their minimum the bars go bottom to top (a jumpy look);
    from 0 they stand at the same height."""
    steady = [940.0, 950.0, 945.0]
    assert _bars(steady, None) == "▁█▄"
    assert _bars(steady, 0.0) == "▇█▇"
