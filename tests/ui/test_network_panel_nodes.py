"""The Network tab across nodes (Pilot), each node a real OpenSSH sshd of its own: the pickers
list the cluster file's nodes, the seed's preset "rac2 -> rac1 over rac1's interconnect"
sets both ends and the address, an iperf3 pair runs its server on rac1 (port 0: one free
there) and its client on rac2 with both ends live; a node whose host key is unknown asks first (rejected: nothing
runs, nothing recorded); the remembered settings are read off the event loop."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, Label, Select, Static

from racperf_tui.core import settings
from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import finish_pair
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.dialogs.host_key_dialog import HostKeyDialog
from racperf_tui.ui.tabs.network_panel import NetworkPanel
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline
from tests.helpers.cluster_helpers import isolated_home, node_table, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.sshd_helpers import Sshd, sshd_available, start_sshd

pytestmark = pytest.mark.usefixtures("isolated_home", "remote_runs")


@pytest.fixture
def second_sshd(tmp_path: Path):
    ok, why = sshd_available()
    if not ok:
        pytest.skip(why)
    server = start_sshd(tmp_path / "sshd2")
    try:
        yield server
    finally:
        server.stop()


class PanelApp(App[None]):
    CSS_PATH = APP_CSS_PATH

    def __init__(self, data_dir: Path, cluster_file: Path | None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.cluster_file = cluster_file

    def compose(self) -> ComposeResult:
        yield NetworkPanel(data_dir=str(self.data_dir), poll_interval_s=0.1, cluster_file=self.cluster_file)


async def until(pilot, what, timeout_s: float, why=lambda: "") -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {why()}")
        await pilot.pause(0.1)


def text(panel: NetworkPanel, selector: str) -> str:
    return str(panel.query_one(selector, Static).render())


@pytest.mark.slow
async def test_iperf3_pair_from_the_seed_preset_runs_each_end_on_its_node(
    sshd: Sshd, second_sshd: Sshd, tmp_path: Path
) -> None:
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(
        node_table("rac1", sshd, interconnect="127.0.0.2") + node_table("rac2", second_sshd, interconnect="127.0.0.3")
    )
    data = tmp_path / "data"
    app = PanelApp(data, cluster)
    async with app.run_test(size=(200, 60)) as pilot:
        panel = app.query_one(NetworkPanel)
        preset = panel.query_one("#net-preset", Select)
        await until(pilot, lambda: panel.query_one("#net-preset-field").display, 10)
        assert [str(label) for label, _ in preset._options] == ["-", "rac2 -> rac1"]
        server_node = panel.query_one("#net-server-node", Select)
        assert [value for _, value in server_node._options] == ["local", "rac1", "rac2"]
        panel.query_one("#net-tool", Select).value = "iperf3"
        await pilot.pause()
        preset.value = "rac2 -> rac1"
        await pilot.pause()
        assert server_node.value == "rac1" and panel.query_one("#net-client-node", Select).value == "rac2"
        assert panel.query_one("#net-host", Input).value == "127.0.0.2"  # rac1's interconnect
        assert "over 127.0.0.2 (rac1's interconnect)" in text(panel, "#net-message")
        panel.query_one(
            "#net-duration", Input
        ).value = "6"  # long enough that the server is seen running under load (at 3 it had ended)
        await pilot.press("ctrl+l")
        try:
            throughput = panel.query_one("#net-throughput", MetricSparkline)
            await until(
                pilot, lambda: len(throughput.values) >= 2, 60, lambda: text(panel, "#net-message")
            )  # both ends live: the client's intervals stream in while the server runs
            assert "on rac1" in text(panel, "#net-server-state") and "running" in text(panel, "#net-server-state")
            assert "on rac2" in text(panel, "#net-client-state")
            await until(
                pilot, lambda: panel.final_throughput_mbit_s is not None, 60, lambda: text(panel, "#net-message")
            )
        finally:
            if panel.pair is not None:
                finish_pair(panel.pair, data, grace_s=5)
        assert min(throughput.values) > 100  # loopback between the two nodes: Gbit/s
        assert panel.final_throughput_mbit_s is not None and panel.final_throughput_mbit_s > 100
        pair = panel.pair
    with Store.open(data) as store:
        server, client = store.get_run(pair.server_run_id), store.get_run(pair.client_run_id)
    assert (server.host, client.host) == ("rac1", "rac2")
    assert client.config["host"] == "127.0.0.2" and client.state is RunState.SUCCEEDED
    # the port field's 0: a port free on rac1 picked there (its ephemeral range; this machine's
    # here), not iperf3's 5201, given to both ends
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert low <= pair.port <= high and server.config["port"] == client.config["port"] == pair.port


async def test_an_unknown_host_key_is_asked_before_the_pair_and_a_rejection_runs_nothing(
    sshd: Sshd, tmp_path: Path
) -> None:
    cluster = tmp_path / "cluster.toml"
    # no known_hosts of its own: racperf's file (empty) and ~/.ssh's (none)
    body = node_table("rac1", sshd).replace(f'known_hosts = "{sshd.known_hosts}"\n', "")
    cluster.write_text(body)
    data = tmp_path / "data"
    app = PanelApp(data, cluster)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(NetworkPanel)
        await until(pilot, lambda: panel.query_one("#net-server-node-field").display, 10)
        panel.query_one("#net-server-node", Select).value = "rac1"
        await pilot.pause()
        assert panel.query_one("#net-host", Input).value == sshd.host  # its interconnect
        for field in panel.query(".net-field"):  # the pickers shown: every label whole at 80 columns
            if field.display:
                label = field.query_one(Label)
                assert label.region.width >= len(str(label.render())), str(label.render())
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, HostKeyDialog), 20, lambda: text(panel, "#net-message"))
        assert sshd.host_fingerprint() in " ".join(str(w.render()) for w in app.screen.query("Static"))
        await pilot.press("r")
        await until(pilot, lambda: "rejected" in text(panel, "#net-message"), 10, lambda: text(panel, "#net-message"))
        assert sshd.host_fingerprint() in text(panel, "#net-message")
        assert panel.pair is None and not panel.query_one("#net-start").disabled
    assert not (data / "known_hosts").exists()
    if (data / "runs.sqlite3").exists():  # the panel's store watcher opens the store
        with Store.open(data) as store:
            assert store.list_runs() == []  # nothing launched, nothing recorded


async def test_the_remembered_program_is_read_off_the_event_loop(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data"
    data.mkdir()
    settings.set("iperf3.binary", "/opt/iperf3/bin/iperf3", data_dir=data)
    readers: list[str] = []
    real = settings.load_all

    def recording(data_dir=None):  # type: ignore[no-untyped-def]
        readers.append(threading.current_thread().name)
        return real(data_dir)

    monkeypatch.setattr(settings, "load_all", recording)
    app = PanelApp(data, None)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-tool", Select).value = "iperf3"
        program = panel.query_one("#net-program", Input)
        await until(pilot, lambda: program.value == "/opt/iperf3/bin/iperf3", 10)
        assert not panel.query_one("#net-server-node-field").display  # no cluster file: no pickers
    assert readers and threading.main_thread().name not in readers, readers
