"""Issue 21's focus traps, in the whole dashboard: after a network test was started, ``2``
(meant for the Runs tab) was typed into the Redo field (50 -> 502) and the Data Guard verdict
changed unseen. The focus stays on a button while the pair starts, so a tab key switches the
tab; alt+N / fN switch tabs from inside a text field and type nothing into it."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TabbedContent

from racperf_tui.orchestration.pair_runs import finish_pair
from racperf_tui.ui.app import RacperfApp
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
    from racperf_tui.ui.screens.help import HelpScreen

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
