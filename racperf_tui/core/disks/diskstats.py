"""Reads /proc/diskstats, /proc/uptime and sysfs queue facts under a root directory.

Everything takes ``root`` so recorded snapshots (sysstat's tests/rootN layout) replay exactly.
Counters are kept raw and cumulative, as the kernel prints them; rates are iostat_math.py's job.

Speed matters here (a 2,000-device host is sampled every second). Two parsers:

- ``parse_diskstats_columns``: the whole file at once with numpy, into one int64 column per
  counter (no Python object per line or number). It takes only files whose every line is a
  well-formed 14-, 18- or 20-field line of printable ASCII (what kernels write), and
  returns None for anything else;
- ``parse_diskstats`` / ``read_snapshot``: line by line into ``DeviceCounters`` (a NamedTuple,
  several times cheaper to build than a dataclass), reusing the counters of every line whose
  text did not change; it takes any input and names what is wrong with a bad line.
"""

from __future__ import annotations

import operator
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, cast

import numpy as np

# The sysfs walk lives in core/disks/block_devices.py (one for iostat, the write guard and the runs
# list); its iostat names stay importable from here.
from racperf_tui.core.disks.block_devices import (  # noqa: F401
    QueueFacts,
    block_devices,
    classify_partitions,
    dm_names,
    list_dir,
    partitions_of,
    read_queue_facts,
    sysfs_name,
    whole_devices_with_stats,
)
from racperf_tui.core.textio.bounded_read import BoundedReadError, read_regular_bytes_bounded

#: Kernel tick counters (rd_ticks, wr_ticks, io_ticks, time_in_queue, ...) are printed as
#: 32-bit unsigned ints and wrap; sysstat subtracts them as ``unsigned int``.
TICKS_MODULO = 1 << 32
#: No kernel counter exceeds an unsigned 64-bit int: a bigger number is not a counter
COUNTER_MAX = (1 << 64) - 1


def printable_name(name: str) -> str:
    """A device name fit to print on a terminal: control and other non-printable characters
    (an escape sequence in a crafted diskstats line) as \\xNN / \\uNNNN escapes."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)


class DeviceCounters(NamedTuple):
    """Raw cumulative counters of one /proc/diskstats line (fields as the kernel names them).

    ``stat_fields`` is how many statistics the line carried: 4 (old kernels' partition
    lines: rd_ios, rd_sectors, wr_ios, wr_sectors only), 11 (2.6+), 15 (4.18+, discards),
    17 (5.5+, flushes). Tick fields are milliseconds.
    """

    major: int
    minor: int
    name: str  # as in /proc/diskstats, e.g. "cciss/c0d0", "dm-3", "sda1"
    rd_ios: int
    rd_merges: int
    rd_sectors: int
    rd_ticks: int
    wr_ios: int
    wr_merges: int
    wr_sectors: int
    wr_ticks: int
    ios_pgr: int
    tot_ticks: int
    rq_ticks: int
    dc_ios: int = 0
    dc_merges: int = 0
    dc_sectors: int = 0
    dc_ticks: int = 0
    fl_ios: int = 0
    fl_ticks: int = 0
    stat_fields: int = 17


@dataclass(slots=True)
class DiskSnapshot:
    """All devices at one instant. ``uptime_s`` from /proc/uptime; ``wall_time`` is time.time().

    ``uptime_cs`` is the uptime in centiseconds parsed the way sysstat does (the interval
    between two snapshots is computed from it, so figures match sysstat's to the digit).
    ``lines`` maps each raw line to its counters so the next read can skip unchanged lines.
    """

    uptime_s: float
    wall_time: float
    devices: dict[str, DeviceCounters]
    errors: list[str] = field(default_factory=list)  # "FILE:LINE: what is wrong"
    uptime_cs: int = 0
    root: Path = Path("/")
    lines: dict[str, DeviceCounters] = field(default_factory=dict, repr=False)
    #: Names whose line differs from the previous snapshot's (None: no previous one).
    changed: set[str] | None = field(default=None, repr=False)
    #: How many old 4-statistics partition lines (iostat -x skips them, as sysstat).
    basic_lines: int = 0


def _parse_line(line: str, parts: list[str]) -> DeviceCounters | str:
    """One /proc/diskstats line -> counters, or a description of what is wrong with it."""
    n = len(parts)
    if n < 3:
        return f"too few fields: {line.strip()!r}"
    if n >= 14:
        # Like sysstat's sscanf: 14-17 fields are the 2.6 format, 18-19 add discards,
        # 20 and more add flushes (later kernels may append fields: ignored).
        if n >= 20:
            nstat, used = 17, 20
        elif n >= 18:
            nstat, used = 15, 18
        else:
            nstat, used = 11, 14
        try:
            values = [int(parts[0]), int(parts[1]), parts[2], *map(int, parts[3:used])]
        except ValueError:
            return f"not a number in {line.strip()!r}"
        for index, value in enumerate(values):
            if index != 2 and not 0 <= value <= COUNTER_MAX:  # type: ignore[operator]
                return (
                    f"device {printable_name(parts[2])!r}: {DeviceCounters._fields[index]} "
                    f"= {value} is outside 0..2^64-1 (not a kernel counter): line skipped"
                )
        if nstat < 17:
            values.extend((0,) * (17 - nstat))
        values.append(nstat)
        return DeviceCounters._make(values)
    if n == 7:
        try:
            major, minor, rd_ios, rd_sect, wr_ios, wr_sect = (
                int(parts[0]),
                int(parts[1]),
                int(parts[3]),
                int(parts[4]),
                int(parts[5]),
                int(parts[6]),
            )
        except ValueError:
            return f"not a number in {line.strip()!r}"
        for field_name, value in (
            ("major", major),
            ("minor", minor),
            ("rd_ios", rd_ios),
            ("rd_sectors", rd_sect),
            ("wr_ios", wr_ios),
            ("wr_sectors", wr_sect),
        ):
            if not 0 <= value <= COUNTER_MAX:
                return (
                    f"device {printable_name(parts[2])!r}: {field_name} = {value} is outside "
                    f"0..2^64-1 (not a kernel counter): line skipped"
                )
        return DeviceCounters(
            major, minor, parts[2], rd_ios, 0, rd_sect, 0, wr_ios, 0, wr_sect, 0, 0, 0, 0, stat_fields=4
        )
    return f"{n} fields, expected 14, 18 or 20 (or 7 for an old partition line): {line.strip()!r}"


_new_tuple = tuple.__new__
_name_of = operator.itemgetter(2)  # DeviceCounters.name, at C speed


def _parse_changed_20_field_lines(lines: list[str]) -> list[DeviceCounters] | None:
    """Bulk parse of 20-field lines (today's kernels): one split and one C-level int loop for
    all of them, the fastest way CPython offers. None when any line is not so (the caller
    then parses line by line, which names the bad line)."""
    tokens = " ".join(lines).split()
    n = len(lines)
    if len(tokens) != 20 * n:
        return None
    names = tokens[2::20]
    del tokens[2::20]
    try:
        ints = list(map(int, tokens))
    except ValueError:
        return None
    if ints and (max(ints) > COUNTER_MAX or min(ints) < 0):
        return None  # the line parser names the device and field
    out: list[DeviceCounters] = []
    append = out.append
    for k in range(n):
        b = k * 19
        append(_new_tuple(DeviceCounters, (ints[b], ints[b + 1], names[k], *ints[b + 2 : b + 19], 17)))
    return out


def parse_diskstats(
    text: str,
    path: str = "/proc/diskstats",
    previous: DiskSnapshot | None = None,
) -> tuple[dict[str, DeviceCounters], dict[str, DeviceCounters], list[str]]:
    """Parse diskstats text. Lines identical to one of ``previous``'s are not parsed again.

    Returns (devices by name, in the file's order; devices by raw line; errors
    "PATH:LINE: what").
    """
    devices, by_line, errors, _, _ = _parse(text, path, previous)
    return devices, by_line, errors


def _parse(
    text: str,
    path: str,
    previous: DiskSnapshot | None,
) -> tuple[dict[str, DeviceCounters], dict[str, DeviceCounters], list[str], set[str] | None, int]:
    """parse_diskstats, plus the names whose line changed (None: no previous to compare)
    and the number of old 4-statistics lines."""
    known = previous.lines if previous is not None else {}
    lines = text.splitlines()
    # One dict lookup of the whole line is the fast path: on a big host most devices are
    # idle, their lines do not change between samples.
    found: list[DeviceCounters | None] = list(map(known.get, lines))
    changed = [i for i, c in enumerate(found) if c is None] if None in found else []
    if changed:
        parsed = _parse_changed_20_field_lines([lines[i] for i in changed])
        if parsed is not None:
            for i, counters in zip(changed, parsed):
                found[i] = counters
    if None not in found:
        # Every line parsed: dicts built at C speed unless a name repeats.
        parsed_all = cast("list[DeviceCounters]", found)
        devices: dict[str, DeviceCounters] = dict(zip(map(_name_of, parsed_all), parsed_all))
        if len(devices) == len(parsed_all):
            changed_names = None if previous is None else {parsed_all[i].name for i in changed}
            # Cached counters can be old 4-statistics ones only if the previous file had some.
            basic = (
                sum(1 for c in parsed_all if c.stat_fields == 4) if previous is not None and previous.basic_lines else 0
            )
            return devices, dict(zip(lines, parsed_all)), [], changed_names, basic
    errors: list[str] = []
    devices = {}
    by_line: dict[str, DeviceCounters] = {}
    changed_lines = set(changed)
    names_changed: set[str] = set()
    for index, (line, known_counters) in enumerate(zip(lines, found)):
        if known_counters is None:
            parts = line.split()
            if not parts:
                continue
            result = _parse_line(line, parts)
            if isinstance(result, str):
                errors.append(f"{path}:{index + 1}: {result}")
                continue
            counters = result
        else:
            counters = known_counters
        name = counters.name
        if name in devices:
            errors.append(f"{path}:{index + 1}: device {name!r} listed twice; the first line is kept")
            continue
        devices[name] = counters
        by_line[line] = counters
        if index in changed_lines:
            names_changed.add(name)
    basic = sum(1 for c in devices.values() if c.stat_fields == 4)
    return devices, by_line, errors, None if previous is None else names_changed, basic


def parse_uptime_cs(text: str) -> int:
    """/proc/uptime's first field in centiseconds, as sysstat's ``"%lu.%lu"`` reads it."""
    first = text.split()[0]
    seconds, _, cents = first.partition(".")
    if not seconds.isdigit() or (cents and not cents.isdigit()):
        raise ValueError(f"not an uptime: {first!r}")
    return int(seconds) * 100 + (int(cents) if cents else 0)


@dataclass(slots=True)
class RawSample:
    """The files of one sample as read: /proc/diskstats' bytes (None if unreadable), the
    uptime in centiseconds (0 if unreadable) and what could not be read ("FILE:LINE: what")."""

    root: Path
    wall_time: float
    uptime_cs: int
    diskstats: bytes | None
    diskstats_path: str
    errors: list[str]


def read_raw(root: Path = Path("/")) -> RawSample:
    """Read ROOT/proc/uptime and ROOT/proc/diskstats, parsing only the uptime. Never raises."""
    root = Path(root)
    wall_time = time.time()
    errors: list[str] = []
    uptime_path = os.path.join(root, "proc/uptime")
    uptime_cs = 0
    try:
        uptime_text = read_regular_bytes_bounded(uptime_path).decode("ascii", errors="replace")
        uptime_cs = parse_uptime_cs(uptime_text)
    except BoundedReadError as exc:
        errors.append(str(exc))
    except OSError as exc:
        errors.append(f"{uptime_path}: cannot read: {exc.strerror or exc}")
    except (ValueError, IndexError):
        errors.append(f"{uptime_path}:1: not an uptime: {uptime_text.strip()[:60]!r}")
    diskstats_path = os.path.join(root, "proc/diskstats")
    data: bytes | None = None
    try:
        data = read_regular_bytes_bounded(diskstats_path)
    except BoundedReadError as exc:
        errors.append(str(exc))
    except OSError as exc:
        errors.append(f"{diskstats_path}: cannot read: {exc.strerror or exc}")
    return RawSample(root, wall_time, uptime_cs, data, diskstats_path, errors)


def snapshot_from_raw(raw: RawSample, previous: DiskSnapshot | None = None) -> DiskSnapshot:
    """Parse a RawSample line by line into a DiskSnapshot (see ``read_snapshot``)."""
    errors = list(raw.errors)
    if raw.diskstats is None:
        return DiskSnapshot(raw.uptime_cs / 100.0, raw.wall_time, {}, errors, raw.uptime_cs, raw.root, {})
    if previous is not None and previous.root != raw.root:
        previous = None
    # latin-1 decodes at memcpy speed and never fails (the file is ASCII anyway).
    text = raw.diskstats.decode("latin-1")
    devices, lines, line_errors, changed, basic = _parse(text, raw.diskstats_path, previous)
    errors.extend(line_errors)
    return DiskSnapshot(
        raw.uptime_cs / 100.0, raw.wall_time, devices, errors, raw.uptime_cs, raw.root, lines, changed, basic
    )


#: lines of a host's own notes ("racperf-TOKEN ...") skipped before a companion's uptime line
MAX_NOTE_LINES = 4


def snapshot_from_text(
    text: str, wall_time: float, source: str = "output", previous: DiskSnapshot | None = None
) -> DiskSnapshot:
    """A snapshot from ``cat /proc/uptime /proc/diskstats``'s output, read on another host or
    in another process (ORION's diskstats companion): the first line the uptime, the rest the
    diskstats. Never raises: ``errors`` says what could not be read ("SOURCE:LINE: what")."""
    # a host's own note may come first (an SSH node's write watch: "racperf-TOKEN net watch;
    # jail"): the uptime is the first line that reads as one, within the first few
    skipped = 0
    uptime_line, _, diskstats = text.partition("\n")
    while uptime_line.startswith("racperf-") and skipped < MAX_NOTE_LINES:
        skipped += 1
        uptime_line, _, diskstats = diskstats.partition("\n")
    errors: list[str] = []
    try:
        uptime_cs = parse_uptime_cs(uptime_line)
    except (ValueError, IndexError):
        uptime_cs = 0
        errors.append(f"{source}:{skipped + 1}: not an uptime: {uptime_line.strip()[:60]!r}")
    # the diskstats lines start on the line after the uptime: errors name the output's lines
    devices, lines, line_errors, changed, basic = _parse("\n" * (skipped + 1) + diskstats, source, previous)
    errors.extend(line_errors)
    return DiskSnapshot(uptime_cs / 100.0, wall_time, devices, errors, uptime_cs, Path("/"), lines, changed, basic)


def read_snapshot(root: Path = Path("/"), previous: DiskSnapshot | None = None) -> DiskSnapshot:
    """Read ROOT/proc/diskstats and ROOT/proc/uptime.

    Never raises for bad data: what cannot be read is described in ``errors`` ("FILE:LINE:
    what"), and every device that can be read is returned. ``previous`` (the last snapshot
    of the same root) lets unchanged lines skip parsing.
    """
    return snapshot_from_raw(read_raw(root), previous)


# ---------------------------------------------------------------------------------------
# The whole file at once, vectorised (the iostat sampler's steady state).

#: The counters ``parse_diskstats_columns`` extracts, in the row order of its matrix: what
#: iostat -x needs (ios_pgr, dc_merges and fl_ticks are checked to be numbers, not kept).
COLUMN_FIELDS: tuple[str, ...] = (
    "rd_ios",
    "rd_merges",
    "rd_sectors",
    "rd_ticks",
    "wr_ios",
    "wr_merges",
    "wr_sectors",
    "wr_ticks",
    "tot_ticks",
    "rq_ticks",
    "dc_ios",
    "dc_sectors",
    "dc_ticks",
    "fl_ios",
)
#: Index of each COLUMN_FIELDS counter among the 17 statistics of a 20-field line.
_COLUMN_STATS: tuple[int, ...] = tuple(DeviceCounters._fields.index(f) - 3 for f in COLUMN_FIELDS)

#: Longest number the columns parser takes: two 8-byte words; 10**16 sectors is 5 EiB.
_MAX_DIGITS = 16
_U64 = np.uint64
_ALL_ONES = (1 << 64) - 1
#: _KEEP_LAST[k]: the mask of the last (highest-addressed, so most significant in a
#: little-endian load) k bytes of a word, each byte's low nibble only: ANDed with ASCII
#: digits it leaves their values 0..9, and zero for the bytes before the token.
_KEEP_LAST = [0] + [(_ALL_ONES << (8 * (8 - k))) & 0x0F0F0F0F0F0F0F0F for k in range(1, 9)]
#: By token length L (0..16): those masks for the high and the low word of the 16 bytes
#: ending with the token, as one 16-byte item (so one take() fetches both).
_DIGIT_MASKS = (
    np.array([[_KEEP_LAST[max(n - 8, 0)], _KEEP_LAST[min(n, 8)]] for n in range(_MAX_DIGITS + 1)], _U64)
    .view("V16")
    .ravel()
)


def _stat_count(fields: int) -> int:
    """Statistics a line of that many fields carries, as sysstat's sscanf reads it (0: none)."""
    if fields >= 20:
        return 17
    if fields >= 18:
        return 15
    if fields >= 14:
        return 11
    return 0


@dataclass(slots=True, eq=False)
class _Layout:
    """Where everything is in a diskstats file. A new file reuses it as is when its fields
    are at the very same offsets (no number gained or lost a digit: the common case), or
    shifted when a few lines changed length (see ``_shifted_layout``)."""

    size: int
    fields: int  # per line
    token_bits: np.ndarray  # np.packbits of "byte is part of a field" (8x less to compare)
    line_ends: np.ndarray  # offset of each line's newline
    name_starts: np.ndarray  # offset of each line's name ...
    name_lengths: np.ndarray  # ... and its length
    name_at: np.ndarray  # offsets of every name byte, line after line
    name_bytes: np.ndarray  # their values
    line_digits: np.ndarray  # per line: digits its fields hold if every number is digits
    kept: list[int]  # the COLUMN_FIELDS rows the lines carry
    # (lines, kept), line after line so one take() reads the file once, in order:
    window_at: np.ndarray  # offset of the 16 bytes ending with each number ...
    padded: bool  # ... in the data with 16 spaces in front (a first number too early)
    masks: np.ndarray  # their _DIGIT_MASKS
    digits: int = 0  # line_digits.sum()
    #: what _parse_numbers derives from window_at and masks, made on its first parse with
    #: this layout (the common case reuses the layout for every sample)
    decoding: _Decoding | None = None

    def __post_init__(self) -> None:
        self.digits = int(self.line_digits.sum())


@dataclass(slots=True, eq=False)
class _Decoding:
    """The word indexes, shifts and masks of a layout's numbers, laid out for _parse_numbers:
    every array contiguous (a strided numpy operation costs 3x a contiguous one)."""

    first_word: np.ndarray  # index of the aligned word holding each window's first byte
    second_word: np.ndarray  # ... the next two
    third_word: np.ndarray
    shift: np.ndarray  # bits to shift right: the window's offset in its first word
    back: np.ndarray  # 64 - shift
    masks: np.ndarray  # the high words' masks, then the low words' (2 * numbers)
    padded_words: bool  # decode from a padded copy of the data (see _parse_numbers)


def _names_at(name_starts: np.ndarray, name_lengths: np.ndarray) -> np.ndarray:
    """Offsets of all name bytes: each name's start repeated, plus 0, 1, ... within it."""
    first = np.concatenate(([0], np.cumsum(name_lengths)[:-1]))
    return np.repeat(name_starts - first, name_lengths) + np.arange(int(name_lengths.sum()), dtype=name_starts.dtype)


def _layout_of(data: bytes, b: np.ndarray, is_token: np.ndarray) -> _Layout | None:
    """Find every field of the file (see parse_diskstats_columns), or None."""
    edges = np.flatnonzero(is_token[1:] != is_token[:-1])
    edges += 1
    if is_token[0]:
        edges = np.concatenate((np.zeros(1, edges.dtype), edges))
    if len(edges) & 1:
        return None
    starts, ends = edges[0::2], edges[1::2]  # tokens: [start, end)
    first_line = np.flatnonzero(b[ends[:64]] == 10)
    if not len(first_line):
        return None
    fields = int(first_line[0]) + 1
    n_lines = len(starts) // fields
    stats = _stat_count(fields)
    if not stats or n_lines * fields != len(starts):
        return None
    starts = starts.reshape(n_lines, fields)
    ends = ends.reshape(n_lines, fields)
    line_ends = ends[:, -1].copy()
    if not (b[line_ends] == 10).all():
        return None
    lengths = ends - starts
    name_starts, name_lengths = starts[:, 2].copy(), lengths[:, 2].copy()
    name_at = _names_at(name_starts, name_lengths)
    name_bytes = b[name_at]
    name_digits = np.add.reduceat(
        ((name_bytes - 48) < 10).astype(np.int64), np.concatenate(([0], np.cumsum(name_lengths)[:-1]))
    )
    line_digits = lengths.sum(axis=1) - name_lengths + name_digits
    kept = [k for k, stat in enumerate(_COLUMN_STATS) if stat < stats]
    columns = [3 + _COLUMN_STATS[k] for k in kept]
    token_ends = ends[:, columns]
    number_lengths = lengths[:, columns]
    if int(number_lengths.max()) > _MAX_DIGITS:
        return None
    window_at = token_ends - 16
    padded = bool(int(window_at.min()) < 0)
    if padded:  # a number within the first 16 bytes: windows of a padded copy
        window_at += 16
    return _Layout(
        len(data),
        fields,
        np.packbits(is_token),
        line_ends,
        name_starts,
        name_lengths,
        name_at,
        name_bytes,
        line_digits,
        kept,
        window_at,
        padded,
        np.take(_DIGIT_MASKS, number_lengths),
    )


#: At most this many lines of other length than before are laid out again on their own,
#: and beyond _FEW_SHIFTED_LINES at most 1/_MAX_SHIFTED_SHARE of the file's lines; more,
#: and the whole file is (64 devices of which 40 gained or lost a digit: the whole file
#: is 0.3 ms faster than moving 25 stretches along).
_MAX_SHIFTED_LINES = 64
_FEW_SHIFTED_LINES = 8
_MAX_SHIFTED_SHARE = 8


def _shifted_layout(data: bytes, b: np.ndarray, is_token: np.ndarray, old: _Layout) -> _Layout | None:
    """The previous layout moved along: lines of unchanged length keep their fields at the
    same offsets from their start (checked: their token bytes match the old ones, shifted),
    and only the few lines that changed length are laid out again. None: not the case."""
    line_ends = np.flatnonzero(b == 10)
    n_lines = len(old.line_ends)
    if len(line_ends) != n_lines:
        return None
    starts = np.empty_like(line_ends)
    starts[0] = 0
    starts[1:] = line_ends[:-1] + 1
    old_starts = np.empty_like(old.line_ends)
    old_starts[0] = 0
    old_starts[1:] = old.line_ends[:-1] + 1
    changed = np.flatnonzero((line_ends - starts) != (old.line_ends - old_starts))
    n_changed = len(changed)
    if not n_changed or n_changed > _MAX_SHIFTED_LINES:
        return None
    if n_changed > _FEW_SHIFTED_LINES and n_changed * _MAX_SHIFTED_SHARE > n_lines:
        return None
    # The stretches of unchanged lines between the changed ones: same tokens, shifted.
    old_is_token = np.unpackbits(old.token_bits, count=old.size).view(bool)
    first = 0
    for stop in [*changed.tolist(), n_lines]:
        if stop > first:
            new_from, new_to = int(starts[first]), int(line_ends[stop - 1]) + 1
            old_from = int(old_starts[first])
            if not np.array_equal(is_token[new_from:new_to], old_is_token[old_from : old_from + new_to - new_from]):
                return None
        first = stop + 1
    # The changed lines, all at once: their bytes one after the other, each line with its
    # newline (a separator, so no field runs into the next line's).
    line_starts, line_stops = starts[changed], line_ends[changed]
    at = _names_at(line_starts, line_stops - line_starts + 1)
    steps = np.diff(is_token[at].view(np.int8), prepend=np.int8(0))
    token_starts, token_ends = at[steps == 1], at[steps == -1]
    fields = old.fields
    if len(token_starts) != len(changed) * fields or len(token_ends) != len(token_starts):
        return None
    token_starts = token_starts.reshape(-1, fields)
    token_ends = token_ends.reshape(-1, fields)
    # Rows are lines: each row's first field after its line's start, its last at the newline.
    if not ((token_starts[:, 0] >= line_starts).all() and (token_ends[:, -1] == line_stops).all()):
        return None
    lengths = token_ends - token_starts
    columns = [3 + _COLUMN_STATS[k] for k in old.kept]
    number_lengths = lengths[:, columns]
    if int(number_lengths.max()) > _MAX_DIGITS:
        return None
    name_starts = old.name_starts + (starts - old_starts)
    name_lengths = old.name_lengths.copy()
    name_starts[changed] = token_starts[:, 2]
    name_lengths[changed] = lengths[:, 2]
    changed_names = b[_names_at(token_starts[:, 2], lengths[:, 2])]
    name_digits = np.add.reduceat(
        ((changed_names - 48) < 10).astype(np.int64), np.concatenate(([0], np.cumsum(lengths[:, 2])[:-1]))
    )
    line_digits = old.line_digits.copy()
    line_digits[changed] = lengths.sum(axis=1) - lengths[:, 2] + name_digits
    window_at = old.window_at + (starts - old_starts)[:, None]
    window_at[changed] = token_ends[:, columns] - (0 if old.padded else 16)
    if not old.padded and int(window_at.min()) < 0:
        return None
    masks = old.masks.copy()
    masks[changed] = np.take(_DIGIT_MASKS, number_lengths)
    name_at = _names_at(name_starts, name_lengths)
    return _Layout(
        len(data),
        fields,
        np.packbits(is_token),
        line_ends,
        name_starts,
        name_lengths,
        name_at,
        b[name_at],
        line_digits,
        old.kept,
        window_at,
        old.padded,
        masks,
    )


@dataclass(slots=True, eq=False)
class DiskstatsColumns:
    """A /proc/diskstats parsed into columns: ``counters[k]`` is COLUMN_FIELDS[k] of every
    device (int64, in the file's order), ``names`` the device names (the very same list
    object as the previous parse's when no name changed, so a cache can key on it)."""

    data: bytes
    names: list[str]
    counters: np.ndarray  # shape (len(COLUMN_FIELDS), len(names)), int64, C-contiguous
    fields_per_line: int
    line_ends: np.ndarray  # offset of each line's newline
    layout: _Layout = field(repr=False)

    def line(self, index: int) -> str:
        """The text of line ``index`` (0-based)."""
        start = 0 if index == 0 else int(self.line_ends[index - 1]) + 1
        return self.data[start : int(self.line_ends[index])].decode("ascii")

    def device_counters(self, index: int) -> DeviceCounters:
        """All counters of line ``index``, as the line-by-line parser reads them."""
        line = self.line(index)
        counters = _parse_line(line, line.split())
        if isinstance(counters, str):  # cannot happen: the columns parser checked the line
            raise ValueError(f"line {index + 1}: {counters}")
        return counters


def _decoding(data: bytes, layout: _Layout) -> _Decoding:
    """The layout's _Decoding for a file of ``len(data)`` bytes (the layout's own size)."""
    at = layout.window_at.reshape(-1)  # ascending: line after line
    n_words = len(data) // 8
    padded_words = layout.padded or (int(at[-1]) >> 3) + 2 >= n_words
    first = at >> 3
    shift = ((at & 7) << 3).view(_U64)
    masks = layout.masks.reshape(-1).view(_U64).reshape(-1, 2)
    return _Decoding(
        first,
        first + 1,
        first + 2,
        shift,
        _U64(64) - shift,  # a shift by 64 gives 0 in numpy (no C undefined behaviour)
        np.concatenate((masks[:, 0], masks[:, 1])),
        padded_words,
    )


def _parse_numbers(data: bytes, layout: _Layout) -> np.ndarray:
    """The numbers of the layout (all-digit tokens of at most 16 digits, each the end of the
    16 bytes at ``window_at``, its _DIGIT_MASKS in ``masks``), as int64: SWAR decoding of
    the two 8-byte words, every step one numpy operation over all tokens. Shape: (the
    layout's ``kept`` counters, lines), C-contiguous."""
    decoding = layout.decoding
    if decoding is None:
        decoding = layout.decoding = _decoding(data, layout)
    words = np.frombuffer(data, _U64, count=len(data) // 8)
    if decoding.padded_words or not words.flags.aligned:
        buf = (b" " * 16 if layout.padded else b"") + data + bytes(24)
        words = np.frombuffer(buf, _U64, count=len(buf) // 8)
    # Each 16-byte window spans three aligned words: take() of aligned words is numpy's
    # fast path (several times faster than a gather of unaligned 16-byte items).
    shift, back = decoding.shift, decoding.back
    n = len(shift)
    x = np.empty(2 * n, _U64)
    high, low = x[:n], x[n:]  # the windows' high words, then their low words
    word = np.take(words, decoding.first_word)
    np.right_shift(word, shift, out=high)
    np.take(words, decoding.second_word, out=word)
    high |= np.left_shift(word, back)
    np.right_shift(word, shift, out=low)
    np.take(words, decoding.third_word, out=word)
    word <<= back
    low |= word
    x &= decoding.masks  # digit values 0..9, zeros before the token
    # Pairs, then quads, then all eight digits (first byte most significant); in place,
    # so the working set stays one array.
    x *= _U64(2561)  # 10 << 8 | 1
    x >>= _U64(8)
    x &= _U64(0x00FF00FF00FF00FF)
    x *= _U64(6553601)  # 100 << 16 | 1
    x >>= _U64(16)
    x &= _U64(0x0000FFFF0000FFFF)
    x *= _U64(42949672960001)  # 10000 << 32 | 1
    x >>= _U64(32)
    # One row per counter, contiguous (the figures are computed row by row): the last two
    # steps read line after line and write counter after counter, no copy of their own.
    lines, kept = layout.window_at.shape
    numbers = np.empty((kept, lines), _U64)
    np.multiply(high.reshape(lines, kept).T, _U64(100_000_000), out=numbers)
    numbers += low.reshape(lines, kept).T
    return numbers.view(np.int64)


def parse_diskstats_columns(
    data: bytes,
    previous: DiskstatsColumns | None = None,
) -> DiskstatsColumns | None:
    """Parse a whole /proc/diskstats at once, or None when it is not what kernels write:
    every line with the same number of fields (14 or more), all printable ASCII, every
    field but the name a plain decimal number of at most 16 digits, names unique. Then the
    line-by-line parser, which accepts or names everything, must be used.

    ``previous``: the last parse of the same file. Where its fields are (the layout) is
    reused when the new file has them at the same offsets, moved along when a few
    lines changed length (_MAX_SHIFTED_LINES, _MAX_SHIFTED_SHARE), and its ``names`` list when the names did not
    change; all of it re-checked against the new bytes.
    """
    if not data or data[-1] != 10:
        return None
    b = np.frombuffer(data, np.uint8)
    is_token = b > 32
    layout: _Layout | None = None
    same_names = False
    if previous is not None:
        old = previous.layout
        if old.size == len(data) and np.array_equal(np.packbits(is_token), old.token_bits):
            layout = old
        else:
            layout = _shifted_layout(data, b, is_token, old)
        # Other names (a device replaced by another at the same place): the digit count of
        # the layout is no longer the file's, the names list not the previous one.
        same_names = layout is not None and np.array_equal(
            b[layout.name_at] if layout is old else layout.name_bytes, old.name_bytes
        )
    if not same_names:
        layout = _layout_of(data, b, is_token)
        if layout is None:
            return None
    assert layout is not None
    n_lines = len(layout.line_ends)
    # The lines are exactly the rows found (each ends at a newline, and there are no other
    # control or non-ASCII bytes, so str.split() would see no other blanks), and every byte
    # of the numbers is a digit (the file has as many digits as the layout's fields, and
    # none elsewhere): no sign, no '_', no '0x'.
    # (Nothing above 126: isascii and no DEL, C loops over the bytes, cheaper than a numpy
    # pass over them; the newlines the only bytes below 32.)
    if (
        not data.isascii()
        or b"\x7f" in data
        or np.count_nonzero(b < 32) != n_lines
        or not (b[layout.line_ends] == 10).all()
        or np.count_nonzero((b - 48) < 10) != layout.digits
    ):
        return None
    if same_names:
        names = previous.names  # type: ignore[union-attr]
    else:
        text = layout.name_bytes.tobytes().decode("ascii")
        splits = [0, *np.cumsum(layout.name_lengths).tolist()]
        names = [text[i:j] for i, j in zip(splits[:-1], splits[1:])]
        if len(set(names)) != n_lines:
            return None  # a device listed twice: the line parser names it
        if previous is not None and names == previous.names:
            names = previous.names
    values = _parse_numbers(data, layout)
    if len(layout.kept) == len(COLUMN_FIELDS):
        counters = values
    else:  # 14- or 18-field lines: no discard / flush counters, zero as sysstat reads them
        counters = np.zeros((len(COLUMN_FIELDS), n_lines), np.int64)
        counters[layout.kept] = values
    return DiskstatsColumns(data, names, counters, layout.fields, layout.line_ends, layout)
