"""A notification leaves the terminal at its timeout (issue 21: "HOST KEY CHANGED" stayed over
the Network tab's node pickers for minutes, until something drew there).

The terminal is rebuilt from every update the dashboard's screen writes (the cells each update
sets, as a terminal applies them), so the test sees what a user sees, not the DOM.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from textual.screen import Screen

from racperf_tui.ui.app import RacperfApp
from tests.helpers import FIXTURES
from tests.helpers.cluster_panel import until
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
