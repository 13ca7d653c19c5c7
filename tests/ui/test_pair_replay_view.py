"""A network pair replayed through the Network tab's live display (screens/pair_replay_view,
replay_data.PairReplay): a real probe pair on 127.0.0.1, recorded in a real store, played
back; at each step the sparklines hold the client samples recorded up to then, the end's
verdicts are the Network tab's for that pair, ``r`` re-judges Data Guard, ``p`` on the
server end opens it, and ``racperf replay`` finds the pair from either end."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, Static

from racperf_tui.cli import _unreplayable
from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.dialogs.text_prompt import TextPrompt
from racperf_tui.ui.messages import PairUpdate
from racperf_tui.ui.replay_app import ReplayApp
from racperf_tui.ui.replay_data import PairReplay, read_pair_recording
from racperf_tui.ui.screens.pair_replay_view import PairReplayView, redo_rate_problem
from racperf_tui.ui.store_watcher import PairWatch
from racperf_tui.ui.tabs.network_panel import NetworkPanel
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline
from tests.helpers.pair_helpers import FinishedPair, run_pair_to_end
from tests.helpers.pilot_apps import RunsApp, ScreenApp, wait_until


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FinishedPair]:
    """A real probe pair of about a second (SYNC: a throughput and a latency every 0.25 s)."""
    data = tmp_path_factory.mktemp("pair-replay")
    done = run_pair_to_end(
        "probe",
        {"bind": "127.0.0.1", "port": 0},
        {"host": "127.0.0.1", "port": 0, "duration_s": 1, "interval_s": 0.25, "mode": "SYNC", "length": 65536},
        data,
    )
    assert done.client.state is RunState.SUCCEEDED and len(done.samples) >= 4, done.client.message
    assert done.server.state.finished
    return data, done


def _series(screen: object, selector: str) -> list[float]:
    return list(screen.query_one(selector, MetricSparkline).values)  # type: ignore[attr-defined]


def _text(screen: object, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())  # type: ignore[attr-defined]


def test_the_replayed_pair_is_what_the_live_watch_posted(recorded: tuple[Path, FinishedPair]) -> None:
    """At its end the replay's snapshot is the live PairWatch's from the store; before, the
    client is running with the samples recorded up to then and no result; back, fewer."""
    data, done = recorded
    with Store.open(data) as store:
        live = PairWatch(App(), 0.0, server_id=done.server.id, client_id=done.client.id).poll(store)
        from_server = read_pair_recording(store, done.server.id)
        from_client = read_pair_recording(store, done.client.id)
    assert isinstance(live, PairUpdate)
    assert from_server == from_client
    replay = PairReplay(from_server)
    frames = from_server.frames
    assert [t for t in frames if t <= done.samples[-1].t] == [s.t for s in done.samples]
    assert replay.snapshot_at(frames[-1]) == live.pair
    second = replay.snapshot_at(done.samples[1].t)
    assert second.client_samples == tuple(done.samples[:2])
    assert second.client.state is RunState.RUNNING and second.client_result is None
    assert second.server.state is RunState.RUNNING and second.server_result is None
    assert replay.snapshot_at(done.samples[0].t).client_samples == tuple(done.samples[:1])


class NetworkApp(App[None]):
    CSS_PATH = APP_CSS_PATH

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        yield NetworkPanel(data_dir=str(self.data_dir), poll_interval_s=0.1)


async def _network_tab_verdicts(data: Path) -> tuple[list[float], list[float], str, str, str]:
    """What the Network tab shows of the store's last pair: both series, the interconnect
    verdict, the Data Guard verdict without a redo rate and with 50 MB/s."""
    app = NetworkApp(data)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(NetworkPanel)
        await wait_until(pilot, lambda: panel.final_throughput_mbit_s is not None, 10, "the recorded pair")
        await pilot.pause()
        no_redo = _text(panel, "#net-verdict-dataguard")
        panel.query_one("#net-redo", Input).value = "50"
        await pilot.pause()
        return (
            _series(panel, "#net-throughput"),
            _series(panel, "#net-latency"),
            _text(panel, "#net-verdict-interconnect"),
            no_redo,
            _text(panel, "#net-verdict-dataguard"),
        )


async def test_steps_draw_the_samples_up_to_them_and_the_end_is_the_network_tabs(
    recorded: tuple[Path, FinishedPair],
) -> None:
    data, done = recorded
    throughputs = [s.metrics["throughput_mbit_s"] for s in done.samples]
    latencies = [s.metrics["latency_ms"] for s in done.samples]
    app = ScreenApp(lambda: PairReplayView(data, done.client.id, play=False))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PairReplayView), 5, "the replay")
        view = app.screen
        assert isinstance(view, PairReplayView)
        await wait_until(pilot, lambda: view.shown is not None, 10, "the first frame")
        await pilot.pause()
        assert _series(view, "#net-throughput") == throughputs[:1]
        assert _series(view, "#net-latency") == latencies[:1]
        assert _text(view, "#net-client-state") == f"client: run #{done.client.id} probe running"
        await pilot.press("full_stop", "full_stop")
        await pilot.pause()
        assert _series(view, "#net-throughput") == throughputs[:3]
        assert _series(view, "#net-latency") == latencies[:3]
        # the running verdict is the mean of the intervals so far, as live
        mean = sum(throughputs[:3]) / 3
        assert view.pair_display.measured_mbit_s() == pytest.approx(mean)
        await pilot.press("comma")
        await pilot.pause()
        assert _series(view, "#net-throughput") == throughputs[:2]
        assert _series(view, "#net-latency") == latencies[:2]
        await pilot.press("end")
        await pilot.pause()
        ended = (
            _series(view, "#net-throughput"),
            _series(view, "#net-latency"),
            _text(view, "#net-verdict-interconnect"),
            _text(view, "#net-verdict-dataguard"),
        )
        assert ended[:2] == (throughputs, latencies)
        assert _text(view, "#net-client-state").startswith(f"client: run #{done.client.id} probe succeeded")
        assert f"server: run #{done.server.id} probe {done.server.state.value}" in _text(view, "#net-server-state")
        # r: the redo rate, and the Data Guard verdict judged against it
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), 5, "the redo question")
        await pilot.press("5", "0", "enter")
        await wait_until(pilot, lambda: app.screen is view, 5, "the replay again")
        await pilot.pause()
        with_redo = _text(view, "#net-verdict-dataguard")
        # going back from the end and on again judges the end the same way
        await pilot.press("home", "end")
        await pilot.pause()
        assert _text(view, "#net-verdict-dataguard") == with_redo
    assert view.redo_mb_s == 50.0
    assert ended[3] == "Data Guard: give a redo rate (MB/s) with r"
    assert with_redo.startswith("Data Guard: redo 50 MB/s needs 571.4 Mbit/s")
    tab = await _network_tab_verdicts(data)
    assert tab[3] == "Data Guard: give a redo rate (MB/s)"
    assert (*ended[:3], with_redo) == (*tab[:3], tab[4])


async def test_p_on_the_server_end_replays_the_pair(recorded: tuple[Path, FinishedPair]) -> None:
    data, done = recorded
    app = RunsApp(data)
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: panel.selected_run_id() == done.client.id, 10, "the client highlighted")
        await pilot.press("down")
        await wait_until(pilot, lambda: panel.selected_run_id() == done.server.id, 5, "the server highlighted")
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PairReplayView), 5, "the pair's replay")
        view = app.screen
        assert isinstance(view, PairReplayView) and view.run_id == done.server.id
        await wait_until(pilot, lambda: view.shown is not None, 10, "its first frame")
        assert view.shown is not None and view.shown.client.id == done.client.id
        title = _text(view, "#pair-replay-title")
        assert f"server run #{done.server.id}" in title and f"client run #{done.client.id}" in title
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, PairReplayView), 5, "the runs list again")


def test_racperf_replay_finds_the_pair_from_either_end(recorded: tuple[Path, FinishedPair], data_dir: Path) -> None:
    data, done = recorded
    ends = (done.server.id, done.client.id)
    for run_ids in ([done.server.id], [done.client.id], list(ends)):
        assert _unreplayable(run_ids, None, str(data)) == ("", ends)
    assert ReplayApp(list(ends), str(data), pair=True).sub_title == (
        f"the pair of runs {done.server.id} and {done.client.id} as recorded: nothing runs"
    )
    # a server no client names is no pair: replayed as a run, which recorded nothing
    with Store.open(data_dir) as store:
        lone = store.create_run("probe", "local", None, {"role": "server"}, ["probe"], None)
        store.set_state(lone, RunState.STOPPED)
    said = f"run {lone} (probe, stopped) recorded no samples: nothing to replay"
    assert _unreplayable([lone], None, str(data_dir)) == (said, ())


def test_a_redo_rate_is_a_number_of_mb_s() -> None:
    assert redo_rate_problem("50") is None and redo_rate_problem(" ") is None
    assert redo_rate_problem("fast") == "redo rate: 'fast' is not a number of MB/s"
    assert redo_rate_problem("-1") == "redo rate: must be a finite number of MB/s, at least 0, not -1"
    assert redo_rate_problem("nan") is not None and redo_rate_problem("inf") is not None
