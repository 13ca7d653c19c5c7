"""The dashboard's RegionCompositor puts on the terminal exactly what Textual's compositor
puts there, update by update, while rendering only the widgets that show a changed cell.

Each tick is rendered twice from the same changed regions: first by the RegionCompositor
(the dashboard's own update), then by Textual's Compositor.render_partial_update over the
same screen (every widget in the regions' bounding box, whole); both updates must write the
same characters in the same styles to the same cells. (Not the same bytes: Textual also
emits a bare cursor move for a chop that starts where a changed span ends, when it
rendered the widget behind it; ours did not render that widget there.)

Ticks change the table's rows, the detail and alert lines and the header clock at once
(the screen's corners apart: Textual's box is the whole screen), move the cursor, scroll
the table and change the sort.
"""

from __future__ import annotations

import inspect
import random
from pathlib import Path

import pytest
import textual
from textual._compositor import ChopsUpdate, Compositor
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.region_compositor import RegionCompositor, RepaintingCompositor, line_runs
from racperf_tui.ui.screen_base import RegionScreen
from racperf_tui.ui.tabs.iostat_panel import IostatPanel
from racperf_tui.ui.widgets.header_clock import SecondClock
from tests.helpers.dashboard_root import DiskLoad, DiskSpec, ReplayRoot
from tests.helpers.terminal_cells import written_cells

DISKS = [DiskSpec(f"sd{chr(97 + i)}", 8, 16 * i) for i in range(24)]


def random_loads(rng: random.Random) -> dict[str, DiskLoad]:
    """Every device's figures change (a few idle), the busiest device moves."""
    return {
        disk.name: DiskLoad(
            read_iops=rng.randrange(0, 3000),
            write_iops=rng.randrange(0, 1500),
            sectors_per_io=rng.choice((8, 16, 64, 256)),
            await_ms=rng.uniform(0.1, 30),
            util_pct=rng.uniform(0, 100),
            avgqu_sz=rng.uniform(0, 40),
        )
        for disk in DISKS
        if rng.random() > 0.1
    }


def compare_updates(app: RacperfApp) -> list[tuple[object, object, int]]:
    """From now on, every partial update of the dashboard's screen is also rendered by
    Textual's own Compositor.render_partial_update from the same changed regions, after
    ours: the list gets (the cells ours writes, Textual's, widget renders of ours) each time."""
    compositor = app.screen._compositor
    assert isinstance(compositor, RegionCompositor)
    records: list[tuple[object, object, int]] = []
    render_update = compositor.render_update

    def render_both(full: bool = False, screen_stack: list | None = None, simplify: bool = False) -> object:
        regions = set(compositor._dirty_regions)
        partial = bool(regions) and not full and compositor.size.region not in regions
        ours = render_update(full=full, screen_stack=screen_stack, simplify=simplify)
        if partial:
            renders = compositor.last_renders
            compositor._dirty_regions.update(regions)
            textuals = Compositor.render_partial_update(compositor)
            assert isinstance(ours, ChopsUpdate) and isinstance(textuals, ChopsUpdate)
            console = app.console
            records.append((written_cells(ours, console), written_cells(textuals, console), renders))
        return ours

    compositor.render_update = render_both  # type: ignore[method-assign]
    return records


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_partial_updates_write_what_textual_writes(tmp_path: Path, data_dir: Path, size: tuple[int, int]) -> None:
    root = ReplayRoot(tmp_path / "root", DISKS)
    rng = random.Random(7)
    app = RacperfApp(roots=[str(root.path)], interval_s=10)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        panel = app.query_one(IostatPanel)
        clock = app.query_one(SecondClock)
        records = compare_updates(app)
        for tick in range(12):
            root.tick(random_loads(rng))
            panel.sample_now()
            clock.refresh()
            if tick == 4:
                panel.table.move_cursor_to(3)
            if tick == 7:
                panel.action_cycle_sort()
            if tick == 9:
                panel.table.scroll_to(y=2, animate=False)
            await pilot.pause()
        assert len(records) >= 10
        for number, (ours, textuals, _renders) in enumerate(records):
            assert ours == textuals, f"update {number}"
        # The table, the detail and alert lines, the clock: not the 20-odd widgets of the
        # whole screen that Textual's bounding box takes.
        assert sorted(renders for _, _, renders in records)[len(records) // 2] <= 5


def test_line_runs() -> None:
    assert line_runs({5, 3, 4, 9, 0}) == [(0, 1), (3, 3), (9, 1)]
    assert line_runs(set()) == []


def test_a_region_is_rendered_by_its_front_widget_only() -> None:
    """needed_lines: the widgets in front of the one that covers a region, and that one."""

    class FakeCompositor(RegionCompositor):
        def __init__(self, widgets: dict[str, tuple[Region, Region]]) -> None:
            super().__init__()
            self._fake = widgets

        @property
        def visible_widgets(self):  # type: ignore[override]
            return self._fake

    screen = Region(0, 0, 80, 24)
    widgets = {
        "clock": (Region(70, 0, 10, 1), screen),
        "table": (Region(0, 2, 80, 20), screen),
        "panel": (Region(0, 2, 80, 22), screen),
        "screen": (screen, screen),
    }
    compositor = FakeCompositor(widgets)  # type: ignore[arg-type]
    needed = compositor.needed_lines([Region(72, 0, 5, 1), Region(0, 5, 80, 3), Region(0, 23, 80, 1)])
    assert needed == {"clock": {0}, "table": {5, 6, 7}, "panel": {23}}


# ---- the private Textual API region_compositor.py stands on ---------------------------------
# RegionCompositor overrides Compositor.render_partial_update and Compositor._get_renders, reads
# Compositor._dirty_regions and Compositor.visible_widgets; RepaintingCompositor overrides
# Compositor.full_map; ui/screen_base.py replaces Screen._compositor. None of it is Textual's
# public API (textual._compositor is private), so each test below names the point that moved
# when a Textual release changes it: fix ui/region_compositor.py for the new Textual, or drop it
# (see its module doc and docs/ARCHITECTURE.md).

PIN = "pyproject.toml pins textual < 9 for ui/region_compositor.py"


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_textual_is_the_major_version_region_compositor_was_written_for() -> None:
    major = int(textual.__version__.split(".")[0])
    assert major == 8, f"Textual {textual.__version__}: ui/region_compositor.py was written against 8.x ({PIN})"


def test_the_compositor_methods_it_overrides_still_have_their_signatures() -> None:
    assert _parameters(Compositor.render_partial_update) == ["self"], (
        "Compositor.render_partial_update(self) changed its signature: RegionCompositor overrides it"
    )
    assert _parameters(Compositor._get_renders) == ["self", "crop"], (
        "Compositor._get_renders(self, crop) changed its signature: RegionCompositor overrides it"
    )
    assert _parameters(Widget.render_lines) == ["self", "crop"], (
        "Widget.render_lines(self, crop) changed: RegionCompositor renders a widget's changed lines with it"
    )


def test_a_partial_update_still_goes_through_get_renders_from_the_dirty_regions() -> None:
    """RegionCompositor sees the changed regions in render_partial_update (from _dirty_regions,
    before Textual clears them) and answers _get_renders, which Textual's _render_chops must call
    for the partial update: if either moved, ours is bypassed without an error (and the
    comparison above would pass, comparing Textual with itself)."""
    partial = inspect.getsource(Compositor.render_partial_update)
    assert "self._dirty_regions" in partial, "Compositor.render_partial_update no longer reads _dirty_regions"
    assert "self._render_chops(" in partial, "Compositor.render_partial_update no longer calls _render_chops"
    chops = inspect.getsource(Compositor._render_chops)
    assert "self._get_renders(crop)" in chops, "Compositor._render_chops no longer calls self._get_renders(crop)"
    assert isinstance(Compositor().__dict__.get("_dirty_regions"), set), "Compositor._dirty_regions is no set"
    assert isinstance(inspect.getattr_static(Compositor, "visible_widgets"), property), (
        "Compositor.visible_widgets (widget -> (region, clip), front to back) is no longer a property"
    )
    assert "self._compositor.render_update(" in inspect.getsource(Screen._compositor_refresh), (
        "Screen._compositor_refresh no longer draws through self._compositor: ui/screen_base.py replaces it"
    )


class _TwoLines(App[None]):
    """A screen of two one-line Statics over a container: a change to one renders only it."""

    def get_default_screen(self) -> Screen:
        return RegionScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield Static("top", id="top")
        yield Static("bottom", id="bottom")


async def test_our_get_renders_draws_the_partial_updates_of_a_running_app() -> None:
    app = _TwoLines()
    async with app.run_test(size=(40, 6)) as pilot:
        await pilot.pause()
        compositor = app.screen._compositor
        assert type(compositor) is RegionCompositor, "Screen._compositor is not the one RegionScreen set"
        compositor.last_renders = 0
        app.query_one("#bottom", Static).update("changed")
        await pilot.pause()
        # one render: the changed Static's line, not the screen and the other Static behind the box
        assert compositor.last_renders == 1, "a partial update was not rendered by RegionCompositor._get_renders"


def test_the_lazily_rebuilt_map_it_watches_is_still_there() -> None:
    """RepaintingCompositor.full_map marks what a lazy rebuild of Textual's map forgets (a toast
    removed after a scroll-only layout or a repaint out of view): it reads _full_map,
    _visible_map and _full_map_invalidated, which Compositor.full_map and reflow_visible must
    still use."""
    assert isinstance(inspect.getattr_static(Compositor, "full_map"), property), "Compositor.full_map is no property"
    lazy = inspect.getsource(Compositor.__dict__["full_map"].fget)
    assert "self._full_map_invalidated" in lazy and "self._full_map = " in lazy, (
        "Compositor.full_map no longer rebuilds _full_map lazily: RepaintingCompositor.full_map watches it"
    )
    assert "full_map" not in RegionCompositor.__dict__, "RegionCompositor must keep RepaintingCompositor.full_map"
    assert issubclass(RegionCompositor, RepaintingCompositor)
    assert "self._visible_map = map" in inspect.getsource(Compositor.reflow_visible), (
        "Compositor.reflow_visible no longer keeps the scrolled map in _visible_map"
    )
