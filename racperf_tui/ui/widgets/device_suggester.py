"""The devices racperf sees, offered as a field is typed: the last word of the field completed
to a block device path (a form's LUN field holds several, separated by spaces). /dev/mapper
names first (what a DBA names a multipath LUN by), then every device and partition sysfs
lists, as /dev/NAME. Right arrow takes the suggestion."""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester

from racperf_tui.core.disks.diskstats import list_dir
from racperf_tui.core.disks.iostat_model import natural_key


def device_paths(root: str | os.PathLike[str] = "/") -> list[str]:
    """The block device paths under ``root``: /dev/mapper/NAME, then /dev/NAME of each entry
    of sys/class/block (whole devices and partitions) whose node exists."""
    base = Path(root)
    mapper = [
        f"/dev/mapper/{name}"
        for name in sorted(list_dir(base / "dev" / "mapper") or [], key=natural_key)
        if name != "control"
    ]
    names = sorted((list_dir(base / "sys" / "class" / "block") or []), key=natural_key)
    nodes = [f"/dev/{name.replace('!', '/')}" for name in names]
    return mapper + [path for path in nodes if os.path.lexists(base / path.lstrip("/"))]


class DeviceSuggester(Suggester):
    """Completes the field's last word to a device path (read afresh: devices come and go)."""

    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.root = root

    async def get_suggestion(self, value: str) -> str | None:
        head, space, last = value.rpartition(" ")
        if not last.startswith("/"):
            return None
        taken = set(head.split())
        for path in device_paths(self.root):
            if path.startswith(last) and path != last and path not in taken:
                return head + space + path
        return None
