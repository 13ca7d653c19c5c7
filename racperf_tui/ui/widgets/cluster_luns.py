"""The shared LUNs of the cluster view: each LUN seen from two or more nodes, one row per node
and the cluster total, so a LUN saturated by all nodes together shows as such even when no
node alone looks saturated.

A group is flagged when its total is saturated (judged by an :class:`IostatModel` of the totals,
by the Disks tab's rules, against the members' queue limits summed) or when one of its members
is (that node's own model).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from racperf_tui.core.disks.iostat_model import DeviceState
from racperf_tui.core.disks.iostat_sampler import IostatRow
from racperf_tui.orchestration.cluster_monitor import SharedLun
from racperf_tui.ui.shown import plain
from racperf_tui.ui.widgets.cluster_node_card import COLUMNS, device_line


@dataclass(frozen=True)
class LunView:
    """A group as shown: the LUN, its total's judgement, its saturated members."""

    lun: SharedLun
    total: DeviceState | None
    saturated_members: tuple[tuple[str, str], ...]  # (node, reason)

    @property
    def saturated(self) -> bool:
        return bool((self.total is not None and self.total.flagged) or self.saturated_members)

    @property
    def reason(self) -> str:
        if self.total is not None and self.total.flagged:
            return f"all nodes together: {self.total.saturation_reason}"
        if self.saturated_members:
            node, why = self.saturated_members[0]
            return f"from {node}: {why}"
        return ""


def _figures(lun_row: IostatRow) -> tuple[float, ...]:
    r = lun_row
    return (r.r_s + r.w_s, (r.rkb_s + r.wkb_s) / 1024.0, r.await_ms, r.avgqu_sz, r.util_pct)


class SharedLunTable(Widget):
    """Every shared LUN: its members, then its TOTAL line; :meth:`show` sets them."""

    DEFAULT_CSS = """
    SharedLunTable {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.groups: list[LunView] = []
        self._height_shown = 1
        self.empty_text = "No LUN seen from two or more nodes yet (same WWID, dm uuid or dm name)."

    def show(self, groups: list[LunView]) -> None:
        height = self._height(groups)
        self.groups = groups
        # re-laid out only when its height changes (a layout of the tab costs far more than a paint)
        self.refresh(layout=height != self._height_shown)
        self._height_shown = height

    @staticmethod
    def _height(groups: list[LunView]) -> int:
        if not groups:
            return 1
        return 1 + sum(2 + len(g.lun.members) + (1 if g.reason else 0) for g in groups)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._height(self.groups)

    def render(self) -> Text:
        width = self.content_size.width or 76
        lines = self._lines(width)
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        return Text("\n", no_wrap=True).join(lines)

    def _lines(self, width: int) -> list[Text]:
        if not self.groups:
            return [Text(self.empty_text, style="dim")]
        fixed = sum(w + 1 for _h, w, _d in COLUMNS)
        name_width = max(4, width - 1 - fixed)
        lines = [
            Text(
                " " + "LUN / node device".ljust(name_width) + "".join(" " + h.rjust(w) for h, w, _d in COLUMNS),
                style="dim",
            )
        ]
        for group in self.groups:
            lun = group.lun
            key = lun.key.partition(":")[2]
            title = Text.assemble(
                ("!" if group.saturated else " ", "bold red"),
                (plain(lun.label), "bold"),
                (f"  {len(lun.members)} nodes", "dim"),
            )
            if key != lun.label and len(title) + 2 + len(key) <= width:
                title.append("  " + plain(key), style="dim")
            lines.append(title)
            for member in lun.members:
                flagged = any(node == member.node for node, _ in group.saturated_members)
                lines.append(
                    device_line(
                        flagged, f" {plain(member.node)} {plain(member.row.device)}", _figures(member.row), width
                    )
                )
            total = device_line(group.total is not None and group.total.flagged, " TOTAL", _figures(lun.total), width)
            total.stylize("bold")
            lines.append(total)
            if group.reason:
                lines.append(Text(("! " + plain(group.reason))[: 2 * width], style="bold red"))
        return lines
