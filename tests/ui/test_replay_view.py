"""``racperf replay``: a real fio run, recorded, played back through the live view's own body;
what is shown at each step is what the store recorded up to then (step, jump, lock-step of
two runs), and the timeline keys never reach a text field."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Label

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.orchestration.run_groups import headline_figures, node_figures
from racperf_tui.orchestration.runs import run_foreground
from racperf_tui.ui.dialogs.jump_dialog import JumpDialog
from racperf_tui.ui.messages import GroupUpdate
from racperf_tui.ui.replay_app import ReplayApp
from racperf_tui.ui.runs_data import description_of
from racperf_tui.ui.screens.group_replay_view import GroupReplayView
from racperf_tui.ui.screens.replay_view import ReplayView
from racperf_tui.ui.screens.run_view import LiveRunBody
from racperf_tui.ui.store_watcher import GroupWatch
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from racperf_tui.ui.widgets.timeline_bar import TimelineBar
from tests.helpers import needs_fio
from tests.helpers.pair_helpers import run_pair_to_end
from tests.helpers.pilot_apps import RunsApp, ScreenApp, wait_until

pytestmark = needs_fio


def _record(data: Path, work: Path, rw: str) -> RunRecord:
    """A real fio run of about a second, a sample every 0.25 s."""
    config = {
        "target": str(work / f"{rw}.dat"),
        "size": "4M",
        "runtime_s": 1,
        "rw": rw,
        "bs": "4k",
        "status_interval_s": 0.25,
        "direct": False,
    }
    record = run_foreground("fio", config, data)
    assert record.state is RunState.SUCCEEDED, record.message
    return record


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[RunRecord]]:
    """Two real fio runs in one store: a read run and a write run."""
    work = tmp_path_factory.mktemp("replay")
    data = work / "data"
    data.mkdir()
    return data, [_record(data, work, "randread"), _record(data, work, "randwrite")]


def _samples(data: Path, run_id: int) -> list[Sample]:
    with Store.open(data) as store:
        return [sample for _seq, sample in store.samples(run_id)]


def _shown(body: LiveRunBody, key: str) -> tuple[float | None, list[float], str]:
    """A sparkline's figure, its series and its label as drawn."""
    spark = body.sparklines[key]
    return spark.current, list(spark.values), str(spark.query_one(".metric-value", Label).render())


def _expected(samples: list[Sample], count: int, key: str, body: LiveRunBody) -> tuple[float, list[float], str]:
    series = [s.metrics[key] for s in samples[:count] if s.metrics.get(key) is not None]
    spark = body.sparklines[key]
    assert spark.formatter is not None
    return series[-1], series, spark.formatter(series[-1])


async def test_each_step_shows_the_stores_samples_up_to_it(recorded: tuple[Path, list[RunRecord]]) -> None:
    data, (run, _other) = recorded
    samples = _samples(data, run.id)
    assert len(samples) >= 4, "a second of fio at 0.25 s gives several samples"
    app = ScreenApp(lambda: ReplayView(data, [run.id], play=False))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayView), 5, "the replay")
        view = app.screen
        assert isinstance(view, ReplayView)
        await wait_until(pilot, lambda: view.shown[0] is not None, 10, "the first frame")
        await pilot.pause()
        body = view.bodies[0]
        clock = view.bar.clock
        assert clock is not None and clock.frames == tuple(s.t for s in samples)

        def check(count: int) -> None:
            live = view.shown[0]
            assert live is not None and live.samples_seen == count
            assert _shown(body, "read_iops") == _expected(samples, count, "read_iops", body)
            assert live.last_sample_t == samples[count - 1].t
            assert live.elapsed_s == pytest.approx(samples[count - 1].t) or count == len(samples)

        check(1)
        status = str(body.query_one("#run-status", Label).render())
        assert status.startswith("running  elapsed") and "1 samples" in status
        await pilot.press("full_stop")
        await pilot.press("full_stop")
        await pilot.pause()
        check(3)
        await pilot.press("comma")
        await pilot.pause()
        check(2)
        # jump to the third sample's time: from the start, in seconds
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, JumpDialog), 5, "the jump question")
        for key in f"{samples[2].t:.3f}":
            await pilot.press("full_stop" if key == "." else key)
        # the typed keys went to the field, not to the timeline behind it
        assert app.screen.query_one(Input).value == f"{samples[2].t:.3f}"
        assert view.bar.clock.index == 1  # type: ignore[union-attr]
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is view, 5, "the replay again")
        await pilot.pause()
        check(3)
        # a bad time is said in the dialog, which stays
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, JumpDialog), 5, "the jump question")
        for key in "soon":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause()
        error = str(app.screen.query_one("#jump-error").render())
        assert "'soon': not a time" in error
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is view, 5, "the replay again")
        # the end: the run's own end state and every sample
        await pilot.press("end")
        await pilot.pause()
        check(len(samples))
        live = view.shown[0]
        assert live is not None and live.state is RunState.SUCCEEDED and live.progress_pct == 100.0
        assert "succeeded" in str(body.query_one("#run-status", Label).render())
        # play from the end starts again (slowly: a loaded machine takes its time over a key);
        # faster, it runs through to the end by itself
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        assert clock.speed == 0.25
        await pilot.press("space")
        assert clock.playing and clock.index <= 1
        await pilot.press(*["right_square_bracket"] * 5)
        assert clock.speed == 8.0
        await wait_until(pilot, lambda: not clock.playing, 10, "the playback's end")
        await pilot.pause()
        check(len(samples))


async def test_two_runs_side_by_side_in_lock_step(recorded: tuple[Path, list[RunRecord]]) -> None:
    data, (read_run, write_run) = recorded
    reads, writes = _samples(data, read_run.id), _samples(data, write_run.id)
    app = ScreenApp(lambda: ReplayView(data, [read_run.id, write_run.id], play=False))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayView), 5, "the replay")
        view = app.screen
        assert isinstance(view, ReplayView)
        await wait_until(pilot, lambda: all(view.shown), 10, "both first frames")
        clock = view.bar.clock
        assert clock is not None
        # one timeline: every moment either run recorded something
        assert clock.frames == tuple(sorted({s.t for s in reads} | {s.t for s in writes}))
        for _ in range(3):
            await pilot.press("full_stop")
        await pilot.pause()
        at = clock.at_s
        for body, live, samples, key in (
            (view.bodies[0], view.shown[0], reads, "read_iops"),
            (view.bodies[1], view.shown[1], writes, "write_iops"),
        ):
            count = sum(1 for s in samples if s.t <= at)
            assert live is not None and live.samples_seen == count
            assert _shown(body, key) == _expected(samples, count, key, body)
        titles = [str(body.query_one("#run-title", Label).render()) for body in view.bodies]
        assert titles[0].startswith(f"replay of run {read_run.id}: fio on ")
        assert titles[1].startswith(f"replay of run {write_run.id}: fio on ")
        # the bodies sit side by side
        assert view.bodies[0].region.y == view.bodies[1].region.y
        assert view.bodies[0].region.right <= view.bodies[1].region.x


async def test_a_run_that_cannot_be_replayed_says_why(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        empty = store.create_run("fio", "local", "/tmp/x", {}, ["fio"], None)
        store.set_state(empty, RunState.FAILED)
    app = ScreenApp(lambda: ReplayView(data_dir, [empty, 999]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayView), 5, "the replay")
        view = app.screen
        assert isinstance(view, ReplayView)
        await wait_until(pilot, lambda: "999" in view.error, 10, "the missing run")
        await pilot.pause()
        statuses = [str(body.query_one("#run-status", Label).render()) for body in view.bodies]
        assert statuses == [
            f"run {empty} (fio, failed) recorded no samples: nothing to replay",
            "no run 999 in the store",
        ]


async def test_p_in_the_runs_tab_replays_the_highlighted_run(recorded: tuple[Path, list[RunRecord]]) -> None:
    data, (_read_run, write_run) = recorded
    app = RunsApp(data)
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: panel.selected_run_id() == write_run.id, 10, "the newest run highlighted")
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayView), 5, "the replay")
        view = app.screen
        assert isinstance(view, ReplayView) and view.run_ids == [write_run.id]
        await wait_until(pilot, lambda: view.shown[0] is not None, 10, "its first frame")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ReplayView), 5, "the runs list again")


def _group_of(data: Path, runs: list[RunRecord]) -> int:
    """A run group of two nodes whose runs carry the recorded fio runs' samples and results
    (a group on real nodes needs SSH: its recording is what the replay reads)."""
    with Store.open(data) as store:
        group_id = store.create_group("fio", {}, ["rac1", "rac2"])
        for node, source in zip(("rac1", "rac2"), runs):
            run_id = store.create_run("fio", node, source.target, source.config, source.argv, None, group_id=group_id)
            store.set_state(run_id, RunState.RUNNING)
            for _seq, sample in store.samples(source.id):
                store.add_sample(run_id, sample)
            store.set_result(run_id, store.result(source.id) or {})
            store.set_state(run_id, RunState.SUCCEEDED, 0, "ok")
    return group_id


async def test_a_run_group_replayed_through_the_group_view(recorded: tuple[Path, list[RunRecord]]) -> None:
    data, runs = recorded
    group_id = _group_of(data, runs)
    with Store.open(data) as store:
        live = GroupWatch(ScreenApp(lambda: ReplayView(data, [])), 0.0, group_id=group_id).poll(store)
        members = {run.host: run for run in store.group_runs(group_id)}
        node_samples = {host: [s for _seq, s in store.samples(run.id)] for host, run in members.items()}
    assert isinstance(live, GroupUpdate)
    assert ReplayApp([], str(data), group_id=group_id).sub_title == f"run group {group_id} as recorded: nothing runs"
    app = ScreenApp(lambda: GroupReplayView(data, group_id, play=False))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, GroupReplayView), 5, "the group replay")
        view = app.screen
        assert isinstance(view, GroupReplayView)
        await wait_until(pilot, lambda: view.snapshot is not None, 10, "the first frame")
        for _ in range(3):
            await pilot.press("full_stop")
        await pilot.pause()
        recording = view.recording
        assert recording is not None and view.snapshot is not None
        description = description_of("fio")
        for host, samples in node_samples.items():
            shown = [s for s in samples if members[host].started_at + s.t <= recording.until]
            iops = [headline_figures(description, node_figures(s))["iops"] for s in shown]
            assert list(view.snapshot.node_series[host]["iops"]) == iops, host
        assert any(run.state is RunState.RUNNING for run in view.snapshot.runs)
        # at the end, the very update the live group view gets from the store (home and end
        # are the node table's here: the steps get there)
        clock = view.query_one(TimelineBar).clock
        assert clock is not None
        while not clock.at_end:
            await pilot.press("full_stop")
        await pilot.pause()
        assert view.snapshot == live.snapshot
        assert str(view.query_one("#group-status", Label).render()).startswith("2 nodes  ended")


async def test_a_pair_replayed_its_client_beside_its_server(data_dir: Path) -> None:
    """A probe pair on 127.0.0.1: the client's throughput at each step is its recorded
    samples'; the server end, which records none, says so in its place."""
    done = run_pair_to_end(
        "probe",
        {"bind": "127.0.0.1", "port": 0},
        {"host": "127.0.0.1", "port": 0, "duration_s": 1, "interval_s": 0.25, "mode": "SYNC", "length": 65536},
        data_dir,
    )
    assert done.client.state is RunState.SUCCEEDED and len(done.samples) >= 3, done.client.message
    app = ScreenApp(lambda: ReplayView(data_dir, [done.server.id, done.client.id], play=False))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayView), 5, "the replay")
        view = app.screen
        assert isinstance(view, ReplayView)
        await wait_until(pilot, lambda: view.shown[1] is not None, 10, "the client's first frame")
        await pilot.press("full_stop", "full_stop")
        await pilot.pause()
        body = view.bodies[1]
        assert _shown(body, "throughput_mbit_s") == _expected(done.samples, 3, "throughput_mbit_s", body)
        server_status = str(view.bodies[0].query_one("#run-status", Label).render())
        assert (
            server_status
            == f"run {done.server.id} (probe, {done.server.state.value}) recorded no samples: nothing to replay"
        )
