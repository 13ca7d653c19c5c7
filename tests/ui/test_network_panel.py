"""The network panel: guidance arithmetic (pure), and a real probe pair on 127.0.0.1 started
from the panel with Pilot, its samples arriving in the sparklines and the verdicts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Checkbox, Input, Label, Select, Static

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.net_guidance import (
    dataguard_verdict,
    format_rate,
    interconnect_verdict,
    required_mbit_s,
    throughput_drops,
)
from racperf_tui.orchestration.pair_runs import finish_pair
from racperf_tui.tools import tool_description
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.tabs.network_panel import (
    NetworkPanel,
    pair_configs,
)
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline
from tests.helpers import FAKES

# ---------------------------------------------------------------- pure functions


@pytest.mark.parametrize("redo_mb_s", [0.0, 1.0, 7.0, 50.0, 123.4])
def test_required_mbit_s_is_redo_over_0_7_times_8(redo_mb_s: float) -> None:
    assert required_mbit_s(redo_mb_s) == redo_mb_s / 0.7 * 8


def test_required_rejects_negative_redo() -> None:
    with pytest.raises(ValueError, match="redo rate must be >= 0"):
        required_mbit_s(-1)


def test_interconnect_verdict_thresholds() -> None:
    assert (
        interconnect_verdict(9100).text
        == "measured 9.10 Gbit/s: meets 10 GbE guidance (recommended for the RAC interconnect)"
    )
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


def test_pair_configs_per_tool() -> None:
    form = {
        "host": "127.0.0.1",
        "port": 5001,
        "duration_s": 5.0,
        "interval_s": 0.5,
        "mode": "RTT",
        "length": 8192,
        "connections": 2,
        "write": True,
    }
    server, client = pair_configs("probe", form)
    assert server == {"bind": "127.0.0.1", "port": 5001, "duration_s": 5.0}
    assert client["rtt"] is True and client["mode"] == "SYNC" and "length" not in client
    assert client["write"] is True and client["num_conn"] == 2
    server, client = pair_configs("iperf3", dict(form, mode="UDP"))
    assert client["udp"] is True and client["bitrate"] == "1G" and client["parallel"] == 2
    assert client["length"] == 8192  # a size option keeps the number; iperf3 writes -l 8192
    _, client = pair_configs("oratcptest", dict(form, mode="ASYNC"))
    assert client["interval_s"] == 1 and client["length_bytes"] == 8192
    _, client = pair_configs("netperf", dict(form, mode="TCP_RR"))
    assert client["test"] == "TCP_RR" and client["duration_s"] == 5
    with pytest.raises(ValueError, match="unknown network tool"):
        pair_configs("ping", form)


# ---------------------------------------------------------------- the panel, live


class PanelApp(App[None]):
    CSS_PATH = APP_CSS_PATH  # the app's layout of its screens and panels

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
            await wait_until(pilot, lambda: panel.final_throughput_mbit_s is not None, 20, "the client to finish")
        finally:
            if panel.pair is not None:
                from racperf_tui.orchestration.pair_runs import finish_pair

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
        await wait_until(
            pilot,
            lambda: "succeeded" in str(panel.query_one("#net-server-state", Static).render()),
            10,
            "the server run to end",
        )


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
    from racperf_tui.orchestration.pair_runs import finish_pair, launch_pair

    pair = launch_pair(
        "probe",
        {"bind": "127.0.0.1", "port": 0},
        {"host": "127.0.0.1", "port": 0, "duration_s": 1.5, "interval_s": 0.25, "mode": "ASYNC"},
        data_dir=data_dir,
    )
    try:
        app = PanelApp(data_dir)
        async with app.run_test(size=(140, 40)) as pilot:
            panel = app.query_one(NetworkPanel)
            assert panel.pair == pair
            assert panel.mode_of_pair == "ASYNC"
            await wait_until(
                pilot, lambda: panel.final_throughput_mbit_s is not None, 20, "the reattached client to finish"
            )
            assert len(panel.throughput_intervals) >= 4
            assert panel.latency_values == []  # ASYNC: no latency
    finally:
        finish_pair(pair, data_dir, grace_s=5)


# ---------------------------------------------------------------- acceptance fixes (H10)


async def test_panel_fits_an_80x24_terminal_with_whole_labels(data_dir: Path) -> None:
    """A DBA's default SSH window: every label whole, the verdicts on screen (the dashboard
    gives the panel 20 rows between its tabs and footer)."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        panel = app.query_one(NetworkPanel)
        for field in panel.query(".net-field"):
            if not field.display:  # the node pickers without a cluster file
                continue
            label = field.query_one(Label)
            text = str(label.render())
            assert label.region.width >= len(text), f"label {text!r} cut to {label.region.width} columns"
        for verdict_id in ("#net-verdict-interconnect", "#net-verdict-dataguard"):
            region = panel.query_one(verdict_id, Static).region
            assert region.height >= 1 and region.bottom <= 20, f"{verdict_id} off screen: {region}"
        assert panel.query_one("#net-start").region.bottom <= 20


async def test_start_and_stop_keys_are_bound_and_shown(data_dir: Path) -> None:
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-host", Input).focus()
        await pilot.pause()
        shown = {b.binding.key: b.binding.description for b in app.screen.active_bindings.values()}
        assert shown.get("ctrl+l") == "Start pair" and shown.get("ctrl+t") == "Stop pair"
        panel.query_one("#net-host", Input).value = ""
        await pilot.press("ctrl+l")  # the key runs the same validated start as the button
        await pilot.pause()
        assert "Server address" in str(panel.query_one("#net-message", Static).render())


async def test_udp_verdict_names_the_target_rate_cap(data_dir: Path) -> None:
    """iperf3 UDP at the panel's 1 Gbit/s target cannot tell 1 from 10 GbE: no GbE verdict."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-redo", Input).value = "50"
        panel.pair_tool, panel.mode_of_pair = "iperf3", "UDP"
        panel.pair_description = tool_description("iperf3")
        panel.add_sample(Sample(1.0, {"throughput_mbit_s": 963.0}))
        await pilot.pause()
        interconnect = str(panel.query_one("#net-verdict-interconnect", Static).render())
        assert interconnect.startswith("interconnect: UDP received 963 Mbit/s at a 1Gbit/s target rate")
        assert "GbE guidance" not in interconnect
        assert "run a TCP test" in str(panel.query_one("#net-verdict-dataguard", Static).render())
        panel.mode_of_pair = "TCP"
        panel.add_sample(Sample(2.0, {"throughput_mbit_s": 963.0}))
        assert "meets 1 GbE guidance" in str(panel.query_one("#net-verdict-interconnect", Static).render())


async def test_a_stall_is_in_the_pairs_verdict_with_when_and_how_long(data_dir: Path) -> None:
    """Issue 21: a pair whose link stopped for seconds is no "ok" at its mean."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.pair_tool, panel.mode_of_pair = "iperf3", "TCP"
        panel.pair_description = tool_description("iperf3")
        for k, rate in enumerate([9400.0, 9410.0, 0.0, 0.0, 0.0, 9390.0, 9405.0]):
            panel.add_sample(Sample(k + 1.0, {"throughput_mbit_s": rate}, {"interval_start_s": float(k)}))
        await pilot.pause()
        interconnect = panel.query_one("#net-verdict-interconnect", Static)
        text = str(interconnect.render())
        # the mean meets 1 GbE guidance; the three seconds at 0 make it bad
        assert text.startswith("interconnect: measured 5.37 Gbit/s: meets 1 GbE guidance"), text
        assert "but the link STALLED for 3.0 s at 2.0-5.0 s: 3 intervals at ~0" in text, text
        assert interconnect.has_class("verdict-bad"), interconnect.classes


def test_program_fields_reach_both_ends_configs() -> None:
    form = {
        "host": "127.0.0.1",
        "port": 5001,
        "duration_s": 2.0,
        "interval_s": 1.0,
        "mode": "SYNC",
        "length": None,
        "connections": 1,
        "write": False,
        "program": "/opt/ot/oratcptest.jar",
        "runtime": "/u01/app/oracle/product/19c/jdk/bin/java",
    }
    for config in pair_configs("oratcptest", form):
        assert config["jar_path"] == "/opt/ot/oratcptest.jar"
        assert config["java"] == "/u01/app/oracle/product/19c/jdk/bin/java"
    server, client = pair_configs("netperf", dict(form, mode="TCP_RR", program="/opt/netperf/bin"))
    assert server["netserver"] == client["netserver"] == "/opt/netperf/bin/netserver"
    assert client["netperf"] == "/opt/netperf/bin/netperf"
    server, client = pair_configs("iperf3", dict(form, mode="TCP", program="/usr/local/bin/iperf3"))
    assert server["binary"] == client["binary"] == "/usr/local/bin/iperf3"
    server, client = pair_configs("probe", dict(form, program="", runtime=""))
    assert "binary" not in client and "jar_path" not in client


async def test_oratcptest_pair_with_jar_and_java_typed_in_the_panel(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The jar and java typed once run the pair (through the emulator) and are remembered in
    the panel's own data dir (--data-dir), not in $RACPERF_DATA_DIR's."""
    monkeypatch.setenv("RACPERF_FAKE_TIMESCALE", "0.1")
    panel_dir = tmp_path / "panel-data"
    jar = tmp_path / "oratcptest.jar"
    jar.write_bytes(b"PK\x03\x04")
    app = PanelApp(panel_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-tool", Select).value = "oratcptest"
        await pilot.pause()
        assert not panel.query_one("#net-runtime", Input).disabled
        panel.query_one("#net-program", Input).value = str(jar)
        panel.query_one("#net-runtime", Input).value = str(FAKES / "oratcptest")
        panel.query_one("#net-duration", Input).value = "3"
        panel.query_one("#net-interval", Input).value = "1"
        await pilot.pause()
        await pilot.press("ctrl+l")
        try:
            await wait_until(
                pilot, lambda: panel.final_throughput_mbit_s is not None, 30, "the oratcptest client to finish"
            )
            assert len(panel.throughput_intervals) >= 2 and all(i.mbit_s > 0 for i in panel.throughput_intervals)
            assert len(panel.latency_values) >= 2  # SYNC: latency too
        finally:
            if panel.pair is not None:
                from racperf_tui.orchestration.pair_runs import finish_pair

                finish_pair(panel.pair, panel_dir, grace_s=0.5)  # the jar's server never ends by itself
    import json

    remembered = json.loads((panel_dir / "settings.json").read_text())
    assert remembered == {"oratcptest.jar_path": str(jar), "oratcptest.java": str(FAKES / "oratcptest")}
    assert not (data_dir / "settings.json").exists()
    app = PanelApp(panel_dir)  # configured once: a new panel offers them again
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-tool", Select).value = "oratcptest"
        await pilot.pause()
        assert panel.query_one("#net-program", Input).value == str(jar)
        assert panel.query_one("#net-runtime", Input).value == str(FAKES / "oratcptest")
        panel.query_one("#net-tool", Select).value = "probe"
        await pilot.pause()
        assert panel.query_one("#net-program", Input).disabled
        assert panel.query_one("#net-runtime", Input).disabled


async def test_stopped_pair_is_judged_on_its_intervals_not_a_zero_result(data_dir: Path) -> None:
    """ctrl+t on a running pair: the stopped client's result said 0 Mbit/s and the panel
    called the link "below 1 GbE, too slow". Keys keep working after start / failure: the
    focus follows the enabled button."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-mode", Select).value = "ASYNC"
        panel.query_one("#net-duration", Input).value = "30"
        panel.query_one("#net-interval", Input).value = "0.25"
        panel.query_one("#net-start").focus()
        await pilot.pause()
        await pilot.press("ctrl+l")
        try:
            await wait_until(pilot, lambda: len(panel.throughput_intervals) >= 3, 20, "live intervals")
            assert app.focused is panel.query_one("#net-stop")
            await pilot.press("ctrl+t")
            await wait_until(pilot, lambda: panel._finishing, 20, "the stopped client")
        finally:
            if panel.pair is not None:
                from racperf_tui.orchestration.pair_runs import finish_pair

                finish_pair(panel.pair, data_dir, grace_s=5)
        assert panel.final_throughput_mbit_s is None
        values = [i.mbit_s for i in panel.throughput_intervals]
        mean = sum(values) / len(values)
        assert mean > 100 and panel.measured_mbit_s() == pytest.approx(mean)
        interconnect = str(panel.query_one("#net-verdict-interconnect", Static).render())
        verdict = interconnect_verdict(mean, throughput_drops(panel.throughput_intervals))
        assert interconnect == f"interconnect: {verdict.text} (stopped early: mean of {len(values)} intervals)"
        assert "0.00 Mbit/s" not in interconnect
        # ready for ctrl+l again (Textual moves the focus on its next turn)
        await wait_until(pilot, lambda: app.focused is panel.query_one("#net-start"), 2, "the focus on Start")


async def test_long_message_wraps_at_80_columns(data_dir: Path) -> None:
    """ "probe pair running on port 33857 (runs #1" was cut there at 80 columns."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(80, 20)) as pilot:
        panel = app.query_one(NetworkPanel)
        text = (
            "probe: 127.0.0.1:44979 is already in use by python (pid 11781): the benchmark server "
            'could not listen there ("Address already in use"); use another port, e.g. 5555'
        )
        panel._message(text, "bad")
        await pilot.pause()
        message = panel.query_one("#net-message", Static)
        shown = " ".join(message.render_line(y).text.strip() for y in range(message.region.height))
        assert " ".join(shown.split()) == text
        assert panel.query_one("#net-verdict-dataguard", Static).region.bottom <= 20


async def test_fields_a_tool_ignores_are_disabled_and_not_validated(data_dir: Path) -> None:
    """netperf takes no message size, connections or server write: typed there, they were
    silently dropped (or a stale bad value blocked the start)."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-length", Input).value = "12x"
        panel.query_one("#net-tool", Select).value = "iperf3"
        await pilot.pause()
        assert panel.query_one("#net-write").disabled
        assert not panel.query_one("#net-length").disabled and not panel.query_one("#net-connections").disabled
        with pytest.raises(ValueError, match="Message bytes"):
            panel.read_form()
        panel.query_one("#net-tool", Select).value = "netperf"
        await pilot.pause()
        assert all(panel.query_one(f).disabled for f in ("#net-write", "#net-length", "#net-connections"))
        form = panel.read_form()
        assert form["length"] is None and form["connections"] == 1 and form["write"] is False
        panel.query_one("#net-tool", Select).value = "probe"
        await pilot.pause()
        assert not any(panel.query_one(f).disabled for f in ("#net-write", "#net-length", "#net-connections"))


async def test_a_database_listener_port_is_said_in_the_panel(data_dir: Path) -> None:
    """launch_pair's warning ("1521 ... Oracle Net listener") was recorded but never shown."""
    import socket

    with socket.socket() as check:
        try:
            check.bind(("127.0.0.1", 1521))
        except OSError:
            pytest.skip("port 1521 is in use here")
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-port", Input).value = "1521"
        panel.query_one("#net-duration", Input).value = "1"
        panel.query_one("#net-interval", Input).value = "0.5"
        panel.query_one("#net-start").focus()
        await pilot.press("ctrl+l")
        try:
            await wait_until(pilot, lambda: panel.pair is not None, 45, "the pair")
            message = panel.query_one("#net-message", Static)
            text = " ".join(str(message.render()).split())
            assert text.startswith(f"probe pair running on port 1521 (runs #{panel.pair.server_run_id}")
            assert "the default Oracle Net listener port" in text
            assert message.has_class("verdict-warning")
        finally:
            if panel.pair is not None:
                from racperf_tui.orchestration.pair_runs import finish_pair

                finish_pair(panel.pair, data_dir, grace_s=5)


async def test_an_unchecked_box_is_drawn_empty(data_dir: Path) -> None:
    """ "Server fsync ▐X▌ write" was drawn unchecked too (Textual tells the states apart by the
    X's colour only): unchecked is an empty box now."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        box = app.query_one("#net-write", Checkbox)
        assert box.value is False and box.render_line(0).text.rstrip() == "▐ ▌ write"
        box.focus()
        await pilot.press("space")
        await pilot.pause()
        assert box.value is True and box.render_line(0).text.rstrip() == "▐X▌ write"
        assert app.query_one(NetworkPanel).read_form()["write"] is True


async def test_a_new_start_clears_the_last_pairs_lines_and_names_the_tool_once(data_dir: Path) -> None:
    """After a finished probe pair, a failed oratcptest start said "oratcptest: oratcptest:
    the path..." above "server: run #1 probe succeeded" and "client: run #2 probe succeeded"."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-duration", Input).value = "1"
        panel.query_one("#net-interval", Input).value = "0.5"
        panel.query_one("#net-start").focus()
        await pilot.press("ctrl+l")
        server_line = panel.query_one("#net-server-state", Static)
        client_line = panel.query_one("#net-client-state", Static)
        try:
            await wait_until(
                pilot,
                lambda: "succeeded" in str(server_line.render()) and "succeeded" in str(client_line.render()),
                20,
                "the pair to end",
            )
        finally:
            if panel.pair is not None:
                from racperf_tui.orchestration.pair_runs import finish_pair

                finish_pair(panel.pair, data_dir, grace_s=5)
        panel.query_one("#net-tool", Select).value = "oratcptest"
        await pilot.pause()
        panel.query_one("#net-program", Input).value = ""
        panel.query_one("#net-start").focus()
        await pilot.press("ctrl+l")
        message = panel.query_one("#net-message", Static)
        await wait_until(pilot, lambda: message.has_class("verdict-bad"), 10, "the refusal")
        text = " ".join(str(message.render()).split())
        assert text.startswith("oratcptest: the path of oratcptest.jar is not configured")
        assert str(server_line.render()) == "server: -" and str(client_line.render()) == "client: -"


@pytest.mark.parametrize("columns", [80, 200])
async def test_the_server_address_gets_the_room_its_row_has(data_dir: Path, columns: int) -> None:
    """Five fields of 1fr gave a host name 15 cells at 80 columns and 30 at 150: the short
    fields (port, duration, interval) now take their labels' width, the address the rest."""
    host = "racnode2-priv.example.com"
    app = PanelApp(data_dir)
    async with app.run_test(size=(columns, 24)) as pilot:
        panel = app.query_one(NetworkPanel)
        address = panel.query_one("#net-host", Input)
        address.value = host
        address.cursor_position = 0
        await pilot.pause()
        # 80: 2 padding, tool 15, port 15, duration 11, interval 11; the field's padding 1
        assert address.region.width == columns - 2 - 15 - 15 - 11 - 11 - 1
        assert address.render_line(0).text.rstrip() == host
        panel.query_one("#net-tool", Select).value = "oratcptest"
        await pilot.pause()
        program = panel.query_one("#net-program", Input)
        assert program.render_line(0).text.rstrip() == "oratcptest.jar (MOS Doc ID 2064368.1)"


async def test_in_a_text_field_digits_are_typed_and_esc_gives_the_tab_keys_back(data_dir: Path) -> None:
    """1 2 3 and q were swallowed by the fields, with no way to the other tabs but the mouse.
    Digits are typed there (a port, a duration); Esc leaves the field, shown in the footer."""
    from textual.widgets import Button, TabbedContent

    from racperf_tui.ui.app import RacperfApp

    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        panel = app.query_one(NetworkPanel)
        duration = panel.query_one("#net-duration", Input)
        duration.focus()
        duration.value = ""
        await pilot.press("1", "2", "q")
        await pilot.pause()
        assert duration.value == "12"  # typed; q is no part of a number: refused, and no quit
        assert app.query_one(TabbedContent).active == "network" and app.is_running
        footer_keys = {
            b.binding.key: b.binding.description
            for b in app.screen.active_bindings.values()
            if b.enabled and b.binding.show
        }
        assert footer_keys.get("escape") == "Leave field"
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is panel.query_one("#net-start", Button)
        assert "escape" not in app.screen.active_bindings  # no field to leave: not offered
        await pilot.press("1")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "disks"


async def test_the_probes_udp_mode_says_the_round_trip_the_loss_and_the_mtu(data_dir: Path) -> None:
    """UDP, 8 KiB on loopback: the verdict adds the round trip's p50/p99 once the client
    ended; no loss and a don't-fragment datagram at lo's MTU that got through say nothing
    more (a lossy path or an MTU mismatch would be named: tests/core/test_net_guidance_path)."""
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-mode", Select).value = "UDP"
        panel.query_one("#net-duration", Input).value = "1"
        panel.query_one("#net-interval", Input).value = "0.5"
        panel.query_one("#net-length", Input).value = "8192"
        await pilot.pause()
        await pilot.click("#net-start")
        await wait_until(pilot, lambda: panel.path_said, 30, "the client to finish")
        said = panel.path_said
        assert said["loss_pct"] == 0.0 and said["mtu"].arrived is True and said["mtu"].local_mtu == 65535
        assert 0 < said["latency_p50_ms"] <= said["latency_p99_ms"]
        interconnect = str(panel.query_one("#net-verdict-interconnect", Static).render())
        assert f"; round trip p50 {said['latency_p50_ms']:.3f} / p99 {said['latency_p99_ms']:.3f} ms" in interconnect
        await wait_until(
            pilot, lambda: "succeeded" in str(panel.query_one("#net-server-state", Static).render()), 10, "the server"
        )


async def test_netperfs_udp_rr_says_its_own_round_trip(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """netperf's UDP_RR (the emulators): latency only, its mean from the interim rates and, once
    the client ended, the p50/p99 netperf's omni output gave, said as netperf's own."""
    monkeypatch.setenv("RACPERF_FAKE_TIMESCALE", "0.1")
    app = PanelApp(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-tool", Select).value = "netperf"
        await pilot.pause()
        panel.query_one("#net-mode", Select).value = "UDP_RR"
        panel.query_one("#net-program", Input).value = str(FAKES)
        panel.query_one("#net-duration", Input).value = "2"
        panel.query_one("#net-interval", Input).value = "1"
        await pilot.pause()
        await pilot.click("#net-start")  # port 0: a free one
        try:
            await wait_until(pilot, lambda: panel.path_said, 30, "the client to finish")
            # tests/fakes/netperf's UDP_RR: 26217.78 Trans/s a second, P50_LATENCY=34, P99_LATENCY=135 (µs)
            assert panel.path_said["round_trip_by"] == "netperf"
            interconnect = str(panel.query_one("#net-verdict-interconnect", Static).render())
            assert interconnect == (
                "interconnect: UDP_RR measures latency, not throughput; mean latency 0.038 ms; "
                "netperf's own round trip p50 0.034 / p99 0.135 ms"
            )
        finally:
            if panel.pair is not None:
                finish_pair(panel.pair, data_dir, grace_s=0.5)  # netserver never ends by itself
