"""The interconnect matrix's own view: the newest matrix in a real store, recorded as ``racperf
matrix`` records it (each client run labelled ``matrix ID pair|path SOURCE->TARGET``, the
probe's output in its real format through its parsers), shown as a grid (verdict,
throughput, the 8 KiB round trip's p50/p99, LOSS and MTU!) that follows the store while a
pair runs; opened from the Network tab's ctrl+o and the Cluster tab's m."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Label, Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.orchestration.cluster_monitor import ClusterMonitor
from racperf_tui.orchestration.interconnect_matrix import run_label
from racperf_tui.orchestration.matrix_store import latest_matrix
from racperf_tui.tools.probe import ProbeStreamParser, parse_output
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.screens.matrix_view import MatrixView
from racperf_tui.ui.tabs.cluster_panel import ClusterPanel
from racperf_tui.ui.tabs.network_panel import NetworkPanel
from tests.helpers.cluster_panel import PanelApp as ClusterTabApp
from tests.helpers.pilot_apps import ScreenApp, wait_until

MATRIX = "20261202T061500-4242"


def probe_output(rows: list[str], summary: list[str], mode: str = "SYNC") -> str:
    """A probe client's output in its real format: the parameters, interval lines, summary."""
    head = [
        "[Requesting a test]",
        "        Message payload        = 8 Kbytes",
        f"        Transport mode         = {mode}",
        "        Statistics interval    = 1 seconds",
        "        Test duration          = 3 seconds",
        "",
        "(06:15:00) The server is ready.",
    ]
    tail = ["(06:15:03) Test finished.", *(f"{key:>33} = {value}" for key, value in summary)]
    return "\n".join(head + rows + tail) + "\n"


PAIR_N1_N2 = probe_output(
    ["(06:15:01)    112.000 Mbytes/s             0.070 ms", "(06:15:02)    112.100 Mbytes/s             0.070 ms",
     "(06:15:03)    111.900 Mbytes/s             0.071 ms"],
    [("Avg. throughput", "112.000 Mbytes/s"), ("Avg. latency", "0.070 ms"), ("Messages", "43008"),
     ("Bytes sent", "352321536 bytes"), ("Elapsed", "3.000 seconds")],
)  # fmt: skip
PATH_N1_N2 = probe_output(
    ["(06:15:05)      0.000 Mbytes/s    100.00 % lost", "(06:15:06)      0.000 Mbytes/s    100.00 % lost"],
    [("Avg. throughput", "0.000 Mbytes/s"), ("Datagrams sent", "8"), ("Datagrams lost", "8"), ("Loss", "100.000 %"),
     ("MTU here", "9000 bytes"), ("MTU at the server", "1500 bytes"), ("Path MTU probe", "8972 bytes LOST"),
     ("MTU check", "a 8972-byte don't-fragment datagram (MTU 9000) was never answered in 3 tries: the path drops "
      "9000-byte frames; MTU MISMATCH: 9000 here, 1500 at the server"),
     ("Messages", "0"), ("Bytes sent", "0 bytes"), ("Elapsed", "2.000 seconds")],
    mode="UDP",
)  # fmt: skip


def record(store: Store, kind: str, source: str, target: str, text: str, state: RunState) -> int:
    """A client run as the matrix records it: labelled, its samples and (once ended) result."""
    config = {"role": "client", "host": f"192.168.0.{target[-1]}", "label": run_label(MATRIX, kind, source, target)}
    run = store.create_run("probe", source, None, config, ["python3", "probe_client.py"], None)
    parser = ProbeStreamParser(1.0)
    for line in text.splitlines():
        for sample in parser.feed(line):
            store.add_sample(run, sample)
    if state.finished:
        store.set_result(run, parse_output(text))
    store.set_state(run, state, exit_status=0 if state.finished else None)
    return run


async def test_the_grid_follows_a_matrix_in_the_store(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        record(store, "pair", "n1", "n2", PAIR_N1_N2, RunState.SUCCEEDED)
        record(store, "path", "n1", "n2", PATH_N1_N2, RunState.SUCCEEDED)
        running = record(store, "pair", "n2", "n1", PAIR_N1_N2.split("(06:15:02)")[0], RunState.RUNNING)
    snapshot = latest_matrix(data_dir)
    assert snapshot is not None and snapshot.nodes == ("n1", "n2") and snapshot.running == ("n2", "n1", "pair")
    done = snapshot.pairs[("n1", "n2")]
    # 112 MiB/s = 939.5 Mbit/s; the path check's loss and MTU judged in the verdict
    assert done.mbit_s == 112.0 * 8.388608 and done.loss_pct == 100.0 and done.mtu is not None
    assert done.verdict is not None and done.verdict.level == "bad", done.verdict
    assert "100.00 % of UDP requests LOST" in done.verdict.text and "MTU MISMATCH" in done.verdict.text
    assert snapshot.pairs[("n2", "n1")].verdict is None  # running: its figure so far, no verdict

    app = ScreenApp(lambda: MatrixView(str(data_dir), None))
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.screen
        assert isinstance(view, MatrixView)
        await wait_until(pilot, lambda: view.snapshot is not None, 10, "the store read")
        table = view.query_one(DataTable)
        assert [str(c.label) for c in table.columns.values()] == ["from \\ to", "n1", "n2"]
        jumbo = str(table.get_cell("n1", "n2"))
        assert jumbo.splitlines()[:2] == ["BAD LOSS 100% MTU!", "940 Mbit/s"], jumbo
        assert str(table.get_cell("n2", "n1")).startswith("running\n940 Mbit/s"), table.get_cell("n2", "n1")
        status = str(view.query_one("#matrix-status", Label).render())
        # tmux, 80x24: "running, 1 pairs measured; now n1 -> n2" over "n1 -> n2 (...): not
        # measured: None" while that very pair ran
        assert f"matrix {MATRIX} (probe): running, 1 pair measured; now n2 -> n1" in status, status
        lines = str(view.query_one("#matrix-lines", Static).render())
        assert "n1 -> n2 (192.168.0.2): 940 Mbit/s" in lines
        assert "n2 -> n1 (192.168.0.1): running, 940 Mbit/s so far" in lines and "None" not in lines, lines
        # the running pair ends: the next read shows its verdict
        with Store.open(data_dir) as store:
            store.set_result(running, parse_output(PAIR_N1_N2.split("(06:15:02)")[0] + "(06:15:03) Test finished.\n"))
            store.set_state(running, RunState.SUCCEEDED, exit_status=0)
        await wait_until(pilot, lambda: view.snapshot is not None and view.snapshot.finished, 10, "the end")
        await pilot.pause(0.1)
        assert str(table.get_cell("n2", "n1")).splitlines()[:2] == ["warning", "940 Mbit/s"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, MatrixView), 5, "the view closed")


class NetworkTabApp(App[None]):
    CSS_PATH = APP_CSS_PATH

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        yield NetworkPanel(data_dir=str(self.data_dir))


async def test_opened_from_the_network_tab_on_an_empty_store(data_dir: Path) -> None:
    app = NetworkTabApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, MatrixView), 5, "the matrix view")
        view = app.screen
        status = view.query_one("#matrix-status", Label)
        await wait_until(pilot, lambda: "no matrix" in str(status.render()), 10, "the store read")
        assert str(status.render()) == "no matrix in the store yet: s starts one"
        await pilot.press("s")  # no cluster file: said, nothing started
        await wait_until(pilot, lambda: app._notifications, 5, "the notification")
        assert "no cluster file" in list(app._notifications)[-1].message and view.started is None


async def test_opened_from_the_cluster_tab_a_refused_start_says_why(data_dir: Path, tmp_path: Path) -> None:
    """``m`` on the Cluster tab; ``s`` starts ``racperf matrix probe`` on the tab's cluster file,
    which names one node only: the command's refusal (exit 2) is shown in its words."""
    alone = tmp_path / "cluster.toml"
    alone.write_text('[[node]]\nname = "n1"\nhost = "local"\n')
    panel = ClusterPanel(alone)
    panel.monitor = ClusterMonitor([], 1.0)  # nothing to sample: the tab is the way in here
    async with ClusterTabApp(panel).run_test(size=(80, 24)) as pilot:
        panel.query_one("#cluster-body").focus()
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, MatrixView), 5, "the matrix view")
        view = pilot.app.screen
        await pilot.press("s")
        status = view.query_one("#matrix-status", Label)
        await wait_until(pilot, lambda: "exited" in str(status.render()), 30, "the refusal")
        assert str(status.render()) == (
            "racperf matrix exited 2: racperf matrix: the matrix needs two nodes at least (n1 given)"
        )
