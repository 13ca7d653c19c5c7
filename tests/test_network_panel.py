"""The network panel: guidance arithmetic (pure), and a real probe pair on 127.0.0.1 started
from the panel with Pilot, its samples arriving in the sparklines and the verdicts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, Select, Static

from racperf_tui.core.events import Sample
from racperf_tui.core.net_guidance import (
    dataguard_verdict,
    format_rate,
    interconnect_verdict,
    required_mbit_s,
)
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline
from racperf_tui.ui.widgets.network_panel import (
    NetworkPanel,
    pair_configs,
    result_throughput_mbit_s,
    sample_latency_ms,
    sample_throughput_mbit_s,
)


# ---------------------------------------------------------------- pure functions


@pytest.mark.parametrize("redo_mb_s", [0.0, 1.0, 7.0, 50.0, 123.4])
def test_required_mbit_s_is_redo_over_0_7_times_8(redo_mb_s: float) -> None:
    assert required_mbit_s(redo_mb_s) == redo_mb_s / 0.7 * 8


def test_required_rejects_negative_redo() -> None:
    with pytest.raises(ValueError, match="redo rate must be >= 0"):
        required_mbit_s(-1)


def test_interconnect_verdict_thresholds() -> None:
    assert interconnect_verdict(9100).text == "measured 9.10 Gbit/s: meets 10 GbE guidance (recommended for the RAC interconnect)"
    assert interconnect_verdict(9100).level == "good"
    assert interconnect_verdict(8999).level == "warning" and "meets 1 GbE" in interconnect_verdict(8999).text
    assert interconnect_verdict(940).level == "warning"
    assert interconnect_verdict(899).level == "bad" and "below 1 GbE" in interconnect_verdict(899).text


def test_dataguard_verdict_numbers() -> None:
    enough = dataguard_verdict(50, 941)
    assert enough.level == "good"
    assert "needs 571.4 Mbit/s" in enough.text and "measured 941 Mbit/s" in enough.text
    assert "1.6x the need" in enough.text
    short = dataguard_verdict(100, 941)  # needs 1142.9
    assert short.level == "bad" and "short by 201.9 Mbit/s" in short.text


def test_format_rate() -> None:
    assert format_rate(25000) == "25.00 Gbit/s"
    assert format_rate(812.3) == "812 Mbit/s"
    assert format_rate(1.234) == "1.23 Mbit/s"


def test_units_of_every_tool_become_mbit_s() -> None:
    assert sample_throughput_mbit_s(Sample(0, {"throughput_mib_s": 100.0})) == pytest.approx(838.8608)
    assert sample_throughput_mbit_s(Sample(0, {"throughput_mbit_s": 940.0, "throughput_mib_s": 1})) == 940.0
    assert sample_latency_ms(Sample(0, {"trans_per_s": 20000.0})) == pytest.approx(0.05)
    assert sample_latency_ms(Sample(0, {"throughput_mbit_s": 1.0})) is None
    assert result_throughput_mbit_s({"received_mbit_s": 9400.0, "sent_mbit_s": 9500.0}) == 9400.0
    assert result_throughput_mbit_s({"avg_throughput_mib_s": 10.0}) == pytest.approx(83.88608)
    assert result_throughput_mbit_s(None) is None


def test_pair_configs_per_tool() -> None:
    form = {"host": "127.0.0.1", "port": 5001, "duration_s": 5.0, "interval_s": 0.5,
            "mode": "RTT", "length": 8192, "connections": 2, "write": True}
    server, client = pair_configs("probe", form)
    assert server == {"bind": "127.0.0.1", "port": 5001, "duration_s": 5.0}
    assert client["rtt"] is True and client["mode"] == "SYNC" and "length" not in client
    assert client["write"] is True and client["num_conn"] == 2
    server, client = pair_configs("iperf3", dict(form, mode="UDP"))
    assert client["udp"] is True and client["bitrate"] == "1G" and client["parallel"] == 2
    assert client["length"] == "8192"
    _, client = pair_configs("oratcptest", dict(form, mode="ASYNC"))
    assert client["interval_s"] == 1 and client["length_bytes"] == 8192
    _, client = pair_configs("netperf", dict(form, mode="TCP_RR"))
    assert client["test"] == "TCP_RR" and client["duration_s"] == 5
    with pytest.raises(ValueError, match="unknown network tool"):
        pair_configs("ping", form)


# ---------------------------------------------------------------- the panel, live


class PanelApp(App[None]):
    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        yield NetworkPanel(data_dir=str(self.data_dir), poll_interval_s=0.1)


async def wait_until(pilot, condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.1)


async def test_probe_pair_from_the_panel_streams_into_sparklines(data_dir: Path) -> None:
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        assert panel.query_one("#net-tool", Select).value == "probe"
        panel.query_one("#net-duration", Input).value = "2"
        panel.query_one("#net-interval", Input).value = "0.25"
        panel.query_one("#net-length", Input).value = "65536"
        panel.query_one("#net-redo", Input).value = "50"
        await pilot.click("#net-start")
        try:
            throughput = panel.query_one("#net-throughput", MetricSparkline)
            latency = panel.query_one("#net-latency", MetricSparkline)
            await wait_until(pilot, lambda: len(throughput.values) >= 2, 20, "samples in the sparkline")
            assert all(v > 0 for v in throughput.values)
            assert len(latency.values) >= 2 and all(v > 0 for v in latency.values)
            server_state = str(panel.query_one("#net-server-state", Static).render())
            assert "probe running" in server_state
            await wait_until(pilot, lambda: panel.final_throughput_mbit_s is not None, 20,
                             "the client to finish")
        finally:
            if panel.pair is not None:
                from racperf_tui.core.pair_runs import finish_pair

                finish_pair(panel.pair, data_dir, grace_s=5)
        measured = panel.measured_mbit_s()
        assert measured == panel.final_throughput_mbit_s > 0
        verdict = str(panel.query_one("#net-verdict-dataguard", Static).render())
        assert f"redo 50 MB/s needs {50 / 0.7 * 8:.1f} Mbit/s" in verdict
        assert ("enough" in verdict) == (measured >= 50 / 0.7 * 8)
        interconnect = str(panel.query_one("#net-verdict-interconnect", Static).render())
        assert interconnect.startswith(f"interconnect: {interconnect_verdict(measured).text}")
        # a huge redo rate turns the verdict, numerically
        panel.query_one("#net-redo", Input).value = str(round(measured))
        await pilot.pause()
        verdict = str(panel.query_one("#net-verdict-dataguard", Static).render())
        assert "NOT enough" in verdict
        assert f"short by {round(measured) / 0.7 * 8 - measured:.1f} Mbit/s" in verdict
        await wait_until(pilot, lambda: "succeeded" in str(panel.query_one("#net-server-state", Static).render()),
                         10, "the server run to end")


async def test_bad_form_value_is_named(data_dir: Path) -> None:
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-host", Input).value = ""
        await pilot.click("#net-start")
        await pilot.pause()
        assert "Server address" in str(panel.query_one("#net-message", Static).render())
        panel.query_one("#net-host", Input).value = "127.0.0.1"
        panel.query_one("#net-connections", Input).value = "0"
        await pilot.pause(0.3)  # a button ignores clicks during its 0.2 s press effect
        await pilot.click("#net-start")
        await pilot.pause()
        assert "Connections: must be at least 1" in str(panel.query_one("#net-message", Static).render())
        assert panel.pair is None


async def test_switching_tool_changes_modes(data_dir: Path) -> None:
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-tool", Select).value = "iperf3"
        await pilot.pause()
        assert panel.query_one("#net-mode", Select).value == "TCP"


async def test_panel_reattaches_to_a_running_pair(data_dir: Path) -> None:
    from racperf_tui.core.pair_runs import finish_pair, launch_pair

    pair = launch_pair("probe", {"bind": "127.0.0.1", "port": 0},
                       {"host": "127.0.0.1", "port": 0, "duration_s": 1.5, "interval_s": 0.25,
                        "mode": "ASYNC"}, data_dir=data_dir)
    try:
        app = PanelApp(data_dir)
        async with app.run_test(size=(140, 40)) as pilot:
            panel = app.query_one(NetworkPanel)
            assert panel.pair == pair
            assert panel.mode_of_pair == "ASYNC"
            await wait_until(pilot, lambda: panel.final_throughput_mbit_s is not None, 20,
                             "the reattached client to finish")
            assert len(panel.throughput_values) >= 4
            assert panel.latency_values == []  # ASYNC: no latency
    finally:
        finish_pair(pair, data_dir, grace_s=5)
