"""Every path's iostat reports, in time order per host: the entry point of ``--from``.

OSWatcher and ExaWatcher write one file per host and hour; their names say which
(archive.name_facts), so the files of each host are read in their hours' order and the
reports come out host after host, each host's in time order, stitched across files. Files
whose names say nothing (an ``iostat -x -t`` log) are read first, in the order given. A file
whose first lines hold a ``sar -d`` header is read as sar's (sar_disk), any other as iostat's.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

from racperf_tui.core.disks.history.archive import Source, open_sources
from racperf_tui.core.disks.history.report import HistoryReport, Problem
from racperf_tui.core.disks.history.sar_disk import is_sar_header, read_sar_disk
from racperf_tui.core.disks.history.sysstat_text import read_iostat_text

_NO_HOUR = dt.datetime.min
#: A sar -d file shows its header within its first lines (banner, blank, header).
_SNIFF_LINES = 16


def ordered_sources(paths: list[Path]) -> Iterator[Source | Problem]:
    """The sources of the paths in reading order; what cannot be opened, as problems."""
    plain: list[Source] = []
    named: list[Source] = []
    for found in open_sources(paths):
        if isinstance(found, str):
            yield Problem(found.split(": ", 1)[0], 0, found.split(": ", 1)[-1])
        elif found.host:
            named.append(found)
        else:
            plain.append(found)
    yield from plain
    yield from sorted(named, key=lambda s: (s.host, s.hour or _NO_HOUR, s.name))


#: the kinds of text a source is read as
SAR_DISK, IOSTAT_X = "sar -d", "iostat -x"


def read_history(
    paths: list[Path],
    devices: frozenset[str] | None = None,
    opened: Callable[[Source, str], None] | None = None,
) -> Iterator[HistoryReport | Problem]:
    """Reports and problems of every path, streamed (one report held at a time); ``opened`` is
    told each source and the kind it is read as (SAR_DISK or IOSTAT_X) before its reports."""
    for source in ordered_sources(paths):
        if isinstance(source, Problem):
            yield source
            continue
        lines = source.lines()
        head = list(itertools.islice(lines, _SNIFF_LINES))
        everything = itertools.chain(head, lines)
        kind = SAR_DISK if any(is_sar_header(line) for line in head) else IOSTAT_X
        if opened is not None:
            opened(source, kind)
        if kind == SAR_DISK:
            yield from read_sar_disk(source.name, everything, host=source.host, devices=devices)
        else:
            yield from read_iostat_text(source.name, everything, host=source.host, devices=devices)
        if source.error is not None:
            yield Problem(source.name, source.lines_read, f"truncated or unreadable: {source.error}")
