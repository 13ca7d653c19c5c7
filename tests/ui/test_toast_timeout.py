"""A notification leaves the terminal at its timeout (issue 21: "HOST KEY CHANGED" stayed over
the Network tab's node pickers for minutes, until something drew there), on the dashboard and
on a pushed screen (every racperf screen is composed by ui/region_compositor's
RepaintingCompositor: ui/screen_base.py).

The terminal is rebuilt from every update the screen writes (the cells each update sets, as a
terminal applies them), so the test sees what a user sees, not the DOM.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from rich.console import Console
from textual.containers import VerticalScroll
from textual.screen import Screen

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.screens.run_view import RunView
from tests.helpers import FIXTURES
from tests.helpers.cluster_panel import until
from tests.helpers.pilot_apps import ScreenApp, wait_until
from tests.helpers.terminal_cells import written_cells

FIXTURE_ROOT = FIXTURES / "sysstat" / "root1"


class Terminal:
    """The characters a screen's updates put on a terminal of this size."""

    def __init__(self, screen: Screen, console: Console) -> None:
        self.cells: dict[tuple[int, int], str] = {}
        compositor = screen._compositor
        render_update = compositor.render_update

        def written(full: bool = False, screen_stack: list | None = None, simplify: bool = False) -> object:
            update = render_update(full=full, screen_stack=screen_stack, simplify=simplify)
            if update is not None:
                self.cells.update((cell, shown[0]) for cell, shown in written_cells(update, console).items())
            return update

        compositor.render_update = written  # type: ignore[method-assign]
        screen.refresh(layout=True)  # everything written once from here

    def text(self, width: int, height: int) -> str:
        return "\n".join("".join(self.cells.get((x, y), " ") for x in range(width)) for y in range(height))


@pytest.mark.parametrize(("tab", "size"), [("3", (80, 24)), ("1", (200, 60))])
async def test_a_toast_is_gone_from_the_terminal_after_its_timeout(
    tmp_path: Path, size: tuple[int, int], tab: str
) -> None:
    # as seen: with a refused node (nothing listens on 127.0.0.1:9; its card counts down) the
    # screen goes through scroll-only layouts, after which Textual rebuilds its map lazily (what
    # the removed toast fell through); without the cluster the toast left in time already
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(
        '[[node]]\nname = "rac1"\nhost = "local"\n[[node]]\nname = "rac2"\nhost = "127.0.0.1"\nport = 9\n'
    )
    app = RacperfApp(roots=[str(FIXTURE_ROOT)], data_dir=str(tmp_path / "data"), clock=False, cluster=str(cluster))
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.pause(1.5)  # the nodes sampled, rac2 refused: its card counts down
        await pilot.press(tab)
        await pilot.pause()
        terminal = Terminal(app.screen, app.console)
        await pilot.pause()
        app.notify("node rac2: host key changed", title="HOST KEY CHANGED: refused", severity="error", timeout=1.5)
        await until(pilot, lambda: "HOST KEY CHANGED" in terminal.text(*size), 5, lambda: terminal.text(*size))
        await until(pilot, lambda: not app.screen.query("Toast"), 5, lambda: "the toast is still in the DOM")
        await pilot.pause(0.3)  # the layout after the removal, and its update
        assert "HOST KEY CHANGED" not in terminal.text(*size), terminal.text(*size)
        assert "node rac2" not in terminal.text(*size)


def read_run_sample(n: int) -> dict[str, float]:
    """A read run's figures: the read ones move, the write ones stay 0."""
    reads = {"read_iops": 2000.0 + 37 * (n % 9), "read_bw_kib_s": 8000.0 + 148 * (n % 9)}
    reads |= {f"read_clat_{p}_us": 400.0 + 11 * (n % 7) for p in ("p50", "p99", "p99.9")}
    writes = {"write_iops": 0.0, "write_bw_kib_s": 0.0} | {f"write_clat_{p}_us": 0.0 for p in ("p50", "p99", "p99.9")}
    return reads | writes


async def test_a_toast_leaves_a_pushed_screen_at_its_timeout(data_dir: Path) -> None:
    # A pushed screen (the live view of a read run) scrolled to its last sparklines: the toast
    # sits over the write latencies (0 all along) and the job line, which nothing repaints,
    # while the read IOPS sparkline, scrolled out of view above, is repainted alone every
    # 50 ms. A repaint out of view with nothing in view to render has Textual rebuild its
    # map lazily, at the next widget's region asked for: the toast's removal asks it between
    # the toast leaving the DOM and the layout that should repaint its cells (the dashboard's
    # hidden Cluster cards, counting down, did it there). On Textual's plain Compositor the
    # toast stayed on the terminal; the RepaintingCompositor repaints its cells.
    # 80x10 (a terminal split in three): five of fio's ten sparklines fit, read IOPS is wholly
    # above the screen (one only partly hidden counts as in view for Textual's map).
    size = (80, 10)
    with Store.open(data_dir) as store:
        run_id = store.create_run("fio", "local", "/dev/loop9", {"rw": "randread"}, ["fio"], None)
        store.set_state(run_id, RunState.RUNNING)
        store.add_sample(run_id, Sample(1.0, read_run_sample(1), {}))
    app = ScreenApp(lambda: RunView(data_dir, run_id, tool="fio"))
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "the run view")
        view = app.screen
        assert isinstance(view, RunView)
        await wait_until(pilot, lambda: view.live is not None and view.live.samples_seen == 1, 5, "the first sample")
        metrics = view.query_one("#run-metrics", VerticalScroll)
        metrics.scroll_end(animate=False)
        await pilot.pause()
        read_iops = view.sparklines["read_iops"]
        assert metrics.scroll_y == metrics.max_scroll_y > 0, "the sparklines fit: nothing is out of view"
        assert read_iops not in view._compositor.visible_widgets
        terminal = Terminal(view, app.console)
        await pilot.pause()
        app.notify("node rac2: host key changed", title="HOST KEY CHANGED: refused", severity="error", timeout=1.0)
        await until(pilot, lambda: "HOST KEY CHANGED" in terminal.text(*size), 5, lambda: terminal.text(*size))
        shown_at = time.monotonic()
        series = [2000.0]
        # from before the toast's timeout until well after it
        while time.monotonic() - shown_at < 1.6:
            series = [*series, 2000.0 + 37 * (len(series) % 9)]
            read_iops.set_series(series)
            await pilot.pause(0.05)
        assert not view.query("Toast"), "the toast is still in the DOM"
        await pilot.pause(0.2)
        assert "HOST KEY CHANGED" not in terminal.text(*size), terminal.text(*size)
        assert "node rac2" not in terminal.text(*size), terminal.text(*size)
        assert "write clat p99.9" in terminal.text(*size), terminal.text(*size)
