"""CALIBRATE_IO's live panel in the run view: the devices under the database's data.

CALIBRATE_IO prints nothing while it runs; what a DBA watches meanwhile is the storage under
the datafiles. The stream parser (tools/calibrate_io) finds those devices on the run's host
when the calibration starts and names them in every sample (``extra["devices"]``, with the
``datafiles`` and ``asm_disks`` they were found under); this panel says which they are and
where their live figures are: the Disks tab (``b`` shows only the devices running benchmarks
touch) for a run on this machine, the Cluster tab for a run on a node. It reads nothing
itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.reactive import reactive
from textual.widgets import Static

from racperf_tui.ui.messages import LiveRunState
from racperf_tui.ui.shown import plain

#: paths listed before "and N more"
SHOWN_PATHS = 4


def devices_text(devices: Sequence[str], datafiles: Sequence[str], asm_disks: Sequence[str], node: str | None) -> str:
    """What the panel says of a calibration's devices (``node``: None for this machine)."""
    paths = [*datafiles, *asm_disks]
    if not paths:
        return "CALIBRATE_IO: the devices under the data are named once the calibration starts"
    listed = ", ".join(plain(p) for p in paths[:SHOWN_PATHS])
    if len(paths) > SHOWN_PATHS:
        listed += f" and {len(paths) - SHOWN_PATHS} more"
    under = f"under {len(datafiles)} datafile(s)" + (f" and {len(asm_disks)} ASM disk(s)" if asm_disks else "")
    where = f" on {plain(node)}" if node else ""
    if not devices:
        return (
            f"Devices {under}{where}: none found on this host for {listed} "
            "(a path this host does not have names no device)"
        )
    watch = (
        f"their live figures: the Cluster tab (racperf --cluster FILE), on {plain(node)}'s card"
        if node
        else "their live figures: the Disks tab, where b shows only the devices benchmarks touch"
    )
    return f"Devices {under}{where}: {', '.join(plain(d) for d in devices)}\n  ({listed})\n  {watch}"


class CalibrationDevicesPanel(Static):
    """The live panel of a CALIBRATE_IO run (see the module docstring)."""

    DEFAULT_CSS = """
    CalibrationDevicesPanel {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    """

    #: what the panel says (its watcher repaints only when it changes)
    said: reactive[str] = reactive("")

    def watch_said(self, said: str) -> None:
        self.update(said)

    def show_live(self, live: LiveRunState) -> None:
        """The devices the newest sample names."""
        extra = live.extra or {}
        host = live.run.host if live.run is not None else None
        node = host if host and host != "local" else None
        self.said = devices_text(
            [str(d) for d in extra.get("devices", ())],
            [str(p) for p in extra.get("datafiles", ())],
            [str(p) for p in extra.get("asm_disks", ())],
            node,
        )
