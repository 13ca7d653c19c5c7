"""Sweeps that already exist on disk: fio JSON outputs in directories (bench-fio / fio-plot
layouts, or any other: the tree is walked and each file read for what it is) -> load points.

Each file's load comes from its own job options (:mod:`load_points`), never from its name or
its directory. A named file that is not fio JSON is said why; in a walked directory, files
that are not JSON (fio's logs, charts) are passed over and counted, a JSON file that is no fio
report is said why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from racperf_tui.core.textio.bounded_read import DEFAULT_LIMIT_BYTES, BoundedReadError, read_text_bounded
from racperf_tui.tools.figures import OutputParseError
from racperf_tui.tools.fio.formats import detect_format
from racperf_tui.tools.fio.json_report import parse_json_report
from racperf_tui.tools.fio.load_points import LoadPoint, points_of

#: a walk stops after this many files (a mistyped / does not read a whole disk)
MAX_FILES = 20_000


@dataclass
class SweepFiles:
    """What the files gave: the points, the files left out and why, how many non-JSON files
    a walk passed over."""

    points: list[LoadPoint] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    passed_over: int = 0


def _files(path: Path) -> list[tuple[Path, bool]]:
    """(file, named) pairs: a named file, or every regular file under a directory in order."""
    if not path.is_dir():
        return [(path, True)]
    found: list[tuple[Path, bool]] = []
    for root, dirs, names in os.walk(path):
        dirs.sort()
        for name in sorted(names):
            candidate = Path(root) / name
            if candidate.is_file() and not candidate.is_symlink():
                found.append((candidate, False))
                if len(found) >= MAX_FILES:
                    return found
    return found


def read_sweep(paths: list[str]) -> SweepFiles:
    """Every fio JSON report under ``paths``. FileNotFoundError names a path that is not there."""
    out = SweepFiles()
    for name in paths:
        path = Path(name)
        if not path.exists():
            raise FileNotFoundError(f"{name}: no such file or directory")
        for file, named in _files(path):
            _read_one(file, named, out)
    return out


def _read_one(file: Path, named: bool, out: SweepFiles) -> None:
    source = str(file)
    try:
        text = read_text_bounded(source, DEFAULT_LIMIT_BYTES)
    except BoundedReadError as exc:
        out.skipped.append({"source": source, "why": str(exc)})
        return
    except OSError as exc:
        out.skipped.append({"source": source, "why": f"cannot read it: {exc.strerror or exc}"})
        return
    if not text.strip() or detect_format(text) != "json":
        if named or file.suffix.lower() == ".json":
            out.skipped.append({"source": source, "why": "not fio JSON output (--output-format=json or json+)"})
        else:
            out.passed_over += 1
        return
    try:
        result = parse_json_report(text)
        points = points_of(result, source)
    except (OutputParseError, ValueError) as exc:
        out.skipped.append({"source": source, "why": str(exc)})
        return
    if not points:
        out.skipped.append({"source": source, "why": "its jobs did no I/O"})
    out.points.extend(points)
