"""Issue 21's focus traps, in the whole dashboard: after a network test was started, ``2``
(meant for the Runs tab) was typed into the Redo field (50 -> 502) and the Data Guard verdict
changed unseen. The focus stays on a button while the pair starts, so a tab key switches the
tab; alt+N / fN switch tabs from inside a text field and type nothing into it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

from textual.app import App
from textual.screen import ModalScreen
from textual.widgets import Input, TabbedContent

import racperf_tui.ui
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import finish_pair
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.screens.help import HelpScreen
from racperf_tui.ui.screens.matrix_view import MatrixView
from racperf_tui.ui.tabs.network_panel import NetworkPanel
from tests.helpers.pilot_apps import wait_until


async def test_tab_keys_never_type_into_a_field(data_dir: Path) -> None:
    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=(140, 40)) as pilot:
        tabs = app.query_one(TabbedContent)
        await pilot.press("3")
        await wait_until(pilot, lambda: bool(app.query(NetworkPanel)), 10, "the Network panel")
        panel = app.query_one(NetworkPanel)
        redo = panel.query_one("#net-redo", Input)
        panel.query_one("#net-duration", Input).value = "2"
        panel.query_one("#net-interval", Input).value = "0.25"
        redo.value = "50"
        panel.query_one("#net-start").focus()
        await pilot.pause()
        await pilot.press("ctrl+l")
        try:
            # at once, while the pair starts, and once it runs: the focus is on a button
            for _ in range(3):
                assert not isinstance(app.focused, Input), app.focused
                await pilot.pause(0.05)
            await wait_until(pilot, lambda: panel.pair is not None, 20, "the pair running")
            assert not isinstance(app.focused, Input), app.focused
            await pilot.press("2")
            assert tabs.active == "runs" and redo.value == "50"
            # from inside a text field: alt+3 / f2 switch, nothing is typed
            await pilot.press("alt+3")
            assert tabs.active == "network"
            redo.focus()
            await pilot.pause()
            await pilot.press("f2")
            assert tabs.active == "runs" and redo.value == "50"
            await pilot.press("f3")
            await pilot.pause()
            redo.focus()
            await pilot.pause()
            assert tabs.active == "network" and app.focused is redo
            await pilot.press("alt+2")
            assert tabs.active == "runs" and redo.value == "50"
        finally:
            await wait_until(pilot, lambda: panel.pair is not None, 20, "the pair running")
            finish_pair(panel.pair, data_dir, grace_s=5)


async def test_help_on_the_network_tab_is_the_network_tabs(data_dir: Path) -> None:
    """At 200x60 ? on the Network tab showed the Disks tab's note (or nothing)."""
    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("3")
        await wait_until(pilot, lambda: bool(app.query(NetworkPanel)), 10, "the Network panel")
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), 5, "the help")
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "Network" in shown and "Start the server / client pair" in shown
        note = str(app.screen.query_one("#help-tab-note").render())
        assert note.strip().startswith("Network: a pair runs its server") and "Disks: " not in note
        await pilot.press("escape")
        await pilot.press("2", "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), 5, "the help")
        assert str(app.screen.query_one("#help-tab-note").render()).strip().startswith("Disks: ")


async def test_ctrl_l_from_a_text_field_leaves_it_so_digits_switch_tabs(data_dir: Path) -> None:
    """tmux, 200x60: the Redo field at 50, ctrl+l pressed in it (the footer's Start key), then
    ``223`` typed (meant for the tabs): the field read 50223 and the Data Guard verdict said
    "short by 572923.8 Mbit/s". Starting from a field takes the focus out of it."""
    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=(140, 40)) as pilot:
        tabs = app.query_one(TabbedContent)
        await pilot.press("3")
        await wait_until(pilot, lambda: bool(app.query(NetworkPanel)), 10, "the Network panel")
        panel = app.query_one(NetworkPanel)
        redo, duration = panel.query_one("#net-redo", Input), panel.query_one("#net-duration", Input)
        duration.value, redo.value = "2", "50"
        panel.query_one("#net-interval", Input).value = "0.25"
        redo.focus()
        await pilot.pause()
        await pilot.press("ctrl+l")
        try:
            assert not isinstance(app.focused, Input), app.focused
            await wait_until(pilot, lambda: panel.pair is not None, 20, "the pair running")
            await pilot.press("2")
            assert tabs.active == "runs"
            assert (redo.value, duration.value) == ("50", "2")
        finally:
            await wait_until(pilot, lambda: panel.pair is not None, 20, "the pair running")
            finish_pair(panel.pair, data_dir, grace_s=5)


async def test_the_stop_button_stops_the_pair_and_opens_nothing(data_dir: Path) -> None:
    """tmux, 200x60: enter on the focused Stop button opened the matrix view and the pair
    (209 s) went on: Button.Pressed of #net-stop was bound to the matrix action."""
    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("3")
        await wait_until(pilot, lambda: bool(app.query(NetworkPanel)), 10, "the Network panel")
        panel = app.query_one(NetworkPanel)
        panel.query_one("#net-duration", Input).value = "60"
        panel.query_one("#net-start").focus()
        await pilot.pause()
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: panel.pair is not None, 20, "the pair running")
        pair = panel.pair
        stop = panel.query_one("#net-stop")
        try:
            await wait_until(pilot, lambda: app.focused is stop, 5, "the focus on Stop")
            await pilot.press("enter")
            await pilot.pause()
            assert not isinstance(app.screen, MatrixView)

            def both_ended() -> bool:
                with Store.open(data_dir, read_only=True) as store:
                    runs = [store.get_run(pair.server_run_id), store.get_run(pair.client_run_id)]
                return all(run.state.finished for run in runs)

            await wait_until(pilot, both_ended, 20, "both ends stopped")
            with Store.open(data_dir, read_only=True) as store:
                client = store.get_run(pair.client_run_id)
            assert client.state.value == "stopped"
            assert client.duration_s < 30, client.duration_s
        finally:
            finish_pair(pair, data_dir, grace_s=5)


async def test_help_names_each_place_as_the_dbas_see_it(data_dir: Path, tmp_path: Path) -> None:
    """tmux, 200x60: ? on the Cluster tab headed its keys "ClusterPanel" (a class name)."""
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('[[node]]\nname = "n1"\nhost = "127.0.0.1"\nport = 1\n')  # refused at once
    app = RacperfApp(data_dir=str(data_dir), clock=False, cluster=str(cluster))
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), 5, "the help")
        shown = "\n".join(line.text for line in app.screen._compositor.render_strips())
        assert "│ Cluster " in shown and "ClusterPanel" not in shown, shown
        assert "The interconnect matrix of every node" in shown


def test_every_class_with_keys_names_them_for_the_help() -> None:
    """The help lists the keys of the screen and the focused widget's chain, under each
    class's HELP_TITLE (a modal screen cuts the app's keys off, ? too: no help there)."""
    unnamed = []
    for module_info in pkgutil.walk_packages(racperf_tui.ui.__path__, "racperf_tui.ui."):
        module = importlib.import_module(module_info.name)
        for name, cls in vars(module).items():
            if not inspect.isclass(cls) or cls.__module__ != module.__name__ or not cls.__dict__.get("BINDINGS"):
                continue
            if not issubclass(cls, (App, ModalScreen)) and not getattr(cls, "HELP_TITLE", None):
                unnamed.append(name)
    assert unnamed == []
