"""racperf's compositors: every screen's repaints what a lazily rebuilt map forgets, and the
dashboard's partial updates render only the widgets that show a changed cell.

:class:`RepaintingCompositor` (every racperf screen's, ui/screen_base.py) repaints what a
lazily rebuilt map forgets. After a scroll-only layout (``reflow_visible``), or a repaint of a
widget out of view (``update_widgets``: a sparkline scrolled away, a card in a hidden tab),
Textual rebuilds ``full_map`` from the DOM the next time something asks for it (any widget's
``region``), and the next ``reflow`` compares the new layout with *that* map: a widget removed
between (a toast at its timeout) is in neither, so the cells it covered were never repainted
("HOST KEY CHANGED" stayed over the Network tab's node pickers for minutes, until something
drew there). :meth:`RepaintingCompositor.full_map` marks the regions that differ between the
map as last composed and the rebuilt one, as ``reflow`` does.

Textual's compositor answers a partial update (a widget's ``refresh(region)``, a Static's
``update``) by rendering every visible widget that overlaps the *bounding box* of all the
changed regions, each over its whole visible area, then keeping the changed lines. On the
Disks tab a tick changes the header clock (top line), the table's rows and the detail and
alert lines (bottom): the box is the whole screen, so all 22 widgets (footer keys, tabs,
title, the containers behind the table...) were rendered every second for the 70 lines
that changed, the largest share of the dashboard's CPU on the hard case.

:class:`RegionCompositor` (the dashboard's, RacperfApp's default screen) keeps Textual's update
and only chooses what is rendered: for each changed region it takes the visible widgets front
to back, as the compositor composes them, until one covers the whole region (nothing behind it
can show there), and each chosen widget renders only the lines of the changed regions it was
chosen for, over its full visible width. The screen output is the same: in Textual's
composition the front widget's strip of a cut always wins (no blending between widgets), every
changed cell's front widget is rendered for its line, the renders are handed over in the
compositor's own front-to-back order, and the update still writes only the changed spans
(tests/ui/test_region_compositor.py compares its output with Textual's own, update by update).
Full updates (resize, layout, a new screen) are Textual's, unchanged.

Built on Textual 8 internals (the one module importing textual._compositor): it overrides
``Compositor.render_partial_update``, ``Compositor._get_renders`` and ``Compositor.full_map``,
reads ``_dirty_regions``, ``_full_map``, ``_visible_map``, ``_full_map_invalidated`` and
``visible_widgets``; ui/screen_base.py replaces ``Screen._compositor``; pyproject pins
textual < 9. tests/ui/test_region_compositor.py fails naming the point that moved when a
Textual release changes one of them. To drop RegionCompositor: RegionScreen's ``COMPOSITOR``
back to RepaintingCompositor (Textual then renders every widget in the changed regions'
bounding box: 22 widget renders a Disks tick instead of 4). To drop both: this module, its
test and ui/screen_base.py's compositor swap (toasts then stay until something draws there).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor, CompositorMap
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


def line_runs(lines: set[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as (first, count) runs of consecutive lines."""
    runs: list[tuple[int, int]] = []
    for y in sorted(lines):
        if runs and runs[-1][0] + runs[-1][1] == y:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((y, 1))
    return runs


class RepaintingCompositor(Compositor):
    """Textual's Compositor that repaints what its lazily rebuilt map forgets (a toast removed
    after a scroll-only layout or a repaint out of view): every racperf screen's."""

    @property
    def full_map(self) -> CompositorMap:
        if self.root is None or not self._full_map_invalidated:
            return super().full_map
        # what the terminal shows: the last full layout, moved by the scrolls since
        shown = {**self._full_map, **(self._visible_map or {})}
        rebuilt = super().full_map
        self._dirty_regions.update(
            region
            for region in (clip.intersection(region) for _, (region, _o, clip, *_r) in shown.items() ^ rebuilt.items())
            if region
        )
        return rebuilt


class RegionCompositor(RepaintingCompositor):
    """A RepaintingCompositor whose partial updates render only what shows a changed cell."""

    #: The changed regions of the partial update being rendered (None: render as Textual does).
    _update_regions: list[Region] | None = None
    #: Widget renders of the last partial update (tests and the benchmark read it).
    last_renders = 0

    def render_partial_update(self) -> ChopsUpdate | None:
        self._update_regions = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._update_regions = None

    def needed_lines(self, regions: Iterable[Region]) -> dict[Widget, set[int]]:
        """Per widget, the screen lines it must render for these changed regions: for each
        region, the widgets overlapping it front to back, up to the first that covers it."""
        visible = [(widget, region.intersection(clip)) for widget, (region, clip) in self.visible_widgets.items()]
        needed: dict[Widget, set[int]] = {}
        for changed in regions:
            for widget, shown in visible:
                overlap = shown.intersection(changed)
                if not overlap:
                    continue
                needed.setdefault(widget, set()).update(overlap.line_range)
                if shown.contains_region(changed):
                    break  # in front of everything behind it, over the whole region
        return needed

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        regions = self._update_regions
        if regions is None:
            yield from super()._get_renders(crop)
            return
        needed = self.needed_lines(regions)
        renders = 0
        # The compositor's order (front to back): the first strip of a cut wins.
        for widget, (region, clip) in self.visible_widgets.items():
            lines = needed.get(widget)
            if not lines:
                continue
            shown = region.intersection(clip)
            for first, count in line_runs(lines):
                # Whole visible width: the compositor cuts a render at the widgets' edges.
                part = Region(shown.x, first, shown.width, count)
                renders += 1
                yield region, part, widget.render_lines(part.translate((-region.x, -region.y)))
        self.last_renders = renders
