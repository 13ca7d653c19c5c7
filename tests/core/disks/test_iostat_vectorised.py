"""The column path of the iostat sampler (numpy, whole file at once) against the line path.

The line path (DeviceCounters, compute_row) is what test_iostat_math and test_iostat_vs_sysstat
check against sysstat; here the column path must give the very same numbers: the same
counters from the same bytes, the same rows (every double bit for bit) from the same roots,
and the same figures as Debian's iostat on kernel-formatted roots it takes whole.
"""

from __future__ import annotations

import concurrent.futures
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from racperf_tui.core.disks.diskstats import (
    COLUMN_FIELDS,
    DiskstatsColumns,
    _layout_of,
    _shifted_layout,
    parse_diskstats,
    parse_diskstats_columns,
)
from racperf_tui.core.disks.iostat_math import IostatReport, IostatRow
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from tests.helpers import needs_root
from tests.helpers.iostat_binary import (
    IOSTAT,
    Device,
    Sample,
    advance,
    random_device,
    run_iostat_on_samples,
)
from tests.helpers.iostat_oracle import checked_columns, compare_report, parse_sysstat_text

NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-_/!"


def _is_sysstat_12() -> bool:
    if not shutil.which("iostat"):
        return False
    out = subprocess.run([IOSTAT, "-V"], capture_output=True, text=True)
    return "version 12." in out.stdout + out.stderr


needs_sysstat_12 = pytest.mark.skipif(not _is_sysstat_12(), reason="needs sysstat 12 (Debian package sysstat)")


def kernel_line(major: int, minor: int, name: str, stats: list[int]) -> str:
    """A line as the kernel's diskstats_show() prints it."""
    return f"{major:4d} {minor:7d} {name} {' '.join(map(str, stats))}\n"


def assert_same_counters(
    data: bytes,
    previous: DiskstatsColumns | None = None,
) -> DiskstatsColumns:
    """The column parse of ``data`` equals the line parse, counter for counter."""
    columns = parse_diskstats_columns(data, previous)
    assert columns is not None
    devices, _, errors = parse_diskstats(data.decode("ascii"))
    assert errors == []
    assert columns.names == list(devices)
    for row, field in enumerate(COLUMN_FIELDS):
        expected = [getattr(counters, field) for counters in devices.values()]
        assert columns.counters[row].tolist() == expected, field
    for index, name in enumerate(columns.names):
        assert columns.line(index).split()[2] == name
    return columns


@st.composite
def diskstats_files(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, str, list[int]]]]:
    """Kernel-formatted files: 14-, 18-, 20- (or more) field lines, numbers of 1 to 16 digits."""
    fields = draw(st.sampled_from([14, 18, 20, 20, 22]))
    names = draw(st.lists(st.text(NAME_CHARS, min_size=1, max_size=12), min_size=1, max_size=25, unique=True))
    number = st.integers(0, 10**16 - 1) | st.integers(0, 999)
    lines = [
        (
            draw(st.integers(0, 9999)),
            draw(st.integers(0, 9_999_999)),
            name,
            draw(st.lists(number, min_size=fields - 3, max_size=fields - 3)),
        )
        for name in names
    ]
    return fields, lines


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(diskstats_files(), st.randoms(use_true_random=False))
def test_column_parse_equals_line_parse(file: tuple, rng: random.Random) -> None:
    """Random kernel-formatted files, then three next samples of each: same counters."""
    _, lines = file
    first = assert_same_counters("".join(kernel_line(*line) for line in lines).encode())
    # The next sample: some counters move (most keep their digit count: the layout is
    # reused), some gain digits (new layout), names unchanged (the same list object).
    for _ in range(3):
        for _, _, _, stats in lines:
            for i in range(len(stats)):
                if rng.random() < 0.5:
                    stats[i] = min(stats[i] + rng.choice((0, 1, 7, 10 ** rng.randrange(8))), 10**16 - 1)
        data = "".join(kernel_line(*line) for line in lines).encode()
        again = assert_same_counters(data, first)
        assert again.names is first.names
        first = again


def test_same_offsets_other_names_and_layout_reuse() -> None:
    stats = list(range(100, 117))
    one = "".join(kernel_line(8, 16 * i, f"sd{c}", stats) for i, c in enumerate("abc")).encode()
    first = assert_same_counters(one)
    same = assert_same_counters(one, first)
    assert same.layout is first.layout and same.names is first.names
    # sdb replaced by sdx (same length, same offsets), then a digit turns into 'x'.
    two = one.replace(b" sdb ", b" sdx ")
    other = assert_same_counters(two, first)
    assert other.names == ["sda", "sdx", "sdc"] and other.names is not first.names
    assert parse_diskstats_columns(two.replace(b" 105 ", b" 1x5 ", 1), other) is None
    # A counter gains a digit: every later offset moves.
    three = two.replace(b" 116\n", b" 1160\n", 1)
    moved = assert_same_counters(three, other)
    assert moved.layout is not other.layout and moved.names is other.names
    assert moved.counters[COLUMN_FIELDS.index("fl_ios"), 0] == 115  # fl_ticks is not kept


@pytest.mark.parametrize(
    "grown", [[0], [199], [0, 57, 199], list(range(100, 125)), list(range(100, 126)), list(range(100, 165))]
)
def test_lines_that_change_length_shift_the_layout(grown: list[int]) -> None:
    """A few lines gaining a digit (a counter crossing 10**k, ~1 a second on a big busy host):
    only those are laid out again, the others' fields are moved along (up to 8 lines, or an
    eighth of the file's, at most 64; beyond, the whole file is laid out again). Both give
    the line parser's counters."""
    rng = random.Random(len(grown))
    lines = [
        (
            8 + i // 16,
            i % 16 * 16,
            f"sd{chr(97 + i // 26)}{chr(97 + i % 26)}",
            [rng.randrange(10**5, 10**9) for _ in range(17)],
        )
        for i in range(200)
    ]
    first = assert_same_counters("".join(kernel_line(*line) for line in lines).encode())
    for index in grown:
        lines[index][3][rng.randrange(17)] *= 10
    data = "".join(kernel_line(*line) for line in lines).encode()
    b = np.frombuffer(data, np.uint8)
    shifted = _shifted_layout(data, b, b > 32, first.layout)
    assert (shifted is not None) == (len(grown) <= 200 // 8)
    moved = assert_same_counters(data, first)
    assert moved.names is first.names
    if shifted is not None:
        full = _layout_of(data, b, b > 32)
        for name in ("line_ends", "name_starts", "name_lengths", "name_at", "line_digits", "window_at", "masks"):
            assert np.array_equal(getattr(shifted, name), getattr(full, name)), name


GOOD = kernel_line(8, 0, "sda", list(range(1, 18))) + kernel_line(8, 1, "sda1", [5] * 17)


@pytest.mark.parametrize(
    "text",
    [
        GOOD.replace(" 5 5 ", " 5 -5 ", 1),  # int() takes a sign: the line parser decides
        GOOD.replace(" 5 5 ", " 5 5_0 ", 1),  # int() takes '_'
        GOOD.replace(" 10 ", " 1x ", 1),  # not a number
        GOOD.replace(" 5 5 ", " 5\t5 ", 1),  # a tab
        GOOD.replace("\n", "\r\n", 1),
        GOOD.replace("sda1", "sd\xe91"),  # not ASCII
        GOOD.replace("sda1", "sda"),  # listed twice
        GOOD + "   3       1 hda1 71 142 3 24\n",  # an old 4-statistics partition line
        GOOD + kernel_line(8, 2, "sda2", [1] * 11),  # 14 fields among 20-field lines
        GOOD.rstrip("\n"),  # no final newline
        GOOD + "\n",  # a blank line
        GOOD.replace("\n", " \n", 1),  # trailing blank
        GOOD.replace(" 1 2 ", f" {10**16} 2 ", 1),  # 17 digits
        GOOD.replace(" 10 ", " 1x0 ", 1),  # a longer line (shifted layout) with a letter
        GOOD.replace(" 5\n", " 5 5\n", 1),  # a longer line with one more field
        "",
    ],
)
def test_column_parse_declines_what_kernels_do_not_write(text: str) -> None:
    data = text.encode("latin-1")
    assert parse_diskstats_columns(data) is None
    if text:  # and after a good previous parse of the same length (layout reuse path)
        previous = parse_diskstats_columns(GOOD.encode())
        assert parse_diskstats_columns(data, previous) is None


# -- the sampler: column path == line path ------------------------------------------------


def kernel_samples(
    seed: int, n_samples: int, n_disks: int, nstat: int = 17, hotplug_at: tuple[int, ...] = ()
) -> list[Sample]:
    """Kernel-formatted samples (one field count for all lines, as a real kernel): activity,
    idle and never-used devices, tick wraps, re-registrations (iostat_binary's generator);
    at the sample indexes in ``hotplug_at`` a disk vanishes and a new one appears."""
    rng = random.Random(seed)
    uptime = rng.randrange(10_000, 10_000_000)
    known: dict[str, Device] = {}
    for i in range(n_disks):
        name = f"sd{chr(97 + i // 26)}{chr(97 + i % 26)}" if i < n_disks - 4 else f"dm-{i}"
        disk = random_device(rng, name, 8 if name.startswith("sd") else 253, i * 16)
        disk.nstat = nstat
        disk.stats[nstat:] = [0] * (17 - nstat)
        known[name] = disk
        if i % 3 == 0 and name.startswith("sd"):
            for p in (1, 2):
                part = random_device(rng, f"{name}{p}", disk.major, disk.minor + p, name)
                part.nstat = nstat
                part.stats[nstat:] = [0] * (17 - nstat)
                known[part.name] = part
    samples = [Sample(uptime, list(known.values()))]
    for k in range(1, n_samples):
        interval = rng.randrange(50, 400)
        uptime += interval
        for name, dev in list(known.items()):
            known[name] = advance(rng, dev, interval)
        if k in hotplug_at:
            gone = rng.choice([n for n, d in known.items() if d.parent is None])
            known = {n: d for n, d in known.items() if n != gone and d.parent != gone}
            new = random_device(rng, f"nvme{k}n1", 259, k)
            new.nstat = nstat
            new.stats[nstat:] = [0] * (17 - nstat)
            known[new.name] = new
        samples.append(Sample(uptime, list(known.values())))
    for sample in samples:
        sample.dm_names = {d.name: f"vg-lv{d.name[3:]}" for d in sample.devices if d.name.startswith("dm-")}
    return samples


def write_roots(samples: list[Sample], workdir: Path) -> list[Path]:
    roots = []
    for index, sample in enumerate(samples):
        sample.write_root(workdir / f"root{index}")
        roots.append(workdir / f"root{index}")
    return roots


SAMPLER_OPTIONS = [
    {"partitions": True},
    {},
    {"skip_idle": True},
    {"devices": ["ALL"], "partitions": True, "skip_idle": True},
    {"partitions_of": ["sdaa", "sdad"]},
    {"devices": ["sdab", "dm-20", "sdaa1"]},
    {"partitions": True, "dm_names": True},
]


@pytest.mark.parametrize("nstat", [17, 15, 11])
def test_column_path_rows_equal_line_path_rows(tmp_path: Path, nstat: int) -> None:
    """Bit-identical rows over samples with wraps, re-registrations, idle and never-used
    devices and two hot-plugs (the line path takes those samples, the column path the
    next ones again, from the slots the column path left), for every device selection."""
    samples = kernel_samples(7 + nstat, 12, 24, nstat, hotplug_at=(4, 8))
    roots = write_roots(samples, tmp_path)
    for options in SAMPLER_OPTIONS:
        columns = IostatSampler(roots, **options)
        lines = IostatSampler(roots, **options, use_columns=False)
        for index in range(len(samples) + 1):  # + 1: the last root again (no change)
            ours, reference = columns.sample(), lines.sample()
            assert ours.rows == reference.rows, (options, index)
            assert [type(r) for r in ours.rows] == [IostatRow] * len(ours.rows)
            assert (ours.interval_s, ours.errors, ours.since_boot) == (
                reference.interval_s,
                reference.errors,
                reference.since_boot,
            )
        # The since-boot sample and the two hot-plug samples go line by line.
        assert columns.column_samples == len(samples) + 1 - 3, options
        assert lines.column_samples == 0


def test_switching_between_paths_keeps_sysstat_semantics(tmp_path: Path) -> None:
    """A malformed line (line path, error named), a device unplugged and plugged back (sysstat
    keeps its old slot), uptime going backwards (a new since-boot report), and the column
    path in between: every report equals the line path's, errors included."""
    samples = kernel_samples(5, 14, 30)
    roots = write_roots(samples, tmp_path)
    broken = roots[3] / "proc/diskstats"
    broken.write_text(broken.read_text().replace(" sdab ", " sdab x", 1))
    for index in (6, 7):  # sdac unplugged for two samples, then back with higher counters
        path = roots[index] / "proc/diskstats"
        path.write_text("".join(line for line in path.read_text().splitlines(keepends=True) if " sdac " not in line))
    uptime = roots[10] / "proc/uptime"
    uptime.write_text("12.34 5.00\n")  # another boot
    for options in ({"partitions": True}, {}, {"skip_idle": True}):
        columns = IostatSampler(roots, **options)
        lines = IostatSampler(roots, **options, use_columns=False)
        for index in range(len(roots)):
            ours, reference = columns.sample(), lines.sample()
            assert ours.rows == reference.rows, (options, index)
            assert (ours.interval_s, ours.errors, ours.since_boot) == (
                reference.interval_s,
                reference.errors,
                reference.since_boot,
            ), index
            assert bool(ours.errors) == (index in (3, 10)), (index, ours.errors)
            assert ours.since_boot == (index in (0, 10))
        # Line by line: since-boot (0, 10), the bad file (3) and the next (4), the unplug
        # and the plug (6, 8); the column path: 1, 2, 5, 7, 9, 11, 12, 13.
        assert columns.column_samples == 8, options


def test_counters_beyond_exact_doubles_take_compute_row(tmp_path: Path) -> None:
    """Sector counters near 10**16 (> 2**53): Python's exact int division decides."""
    big = 10**16 - 10**10
    sample = [
        kernel_line(8, 0, "sda", [5, 1, big, 9, 7, 1, big - 10**7, 9] + [0] * 9),
        kernel_line(8, 16, "sdb", [5, 1, 8, 9, 7, 1, 10, 9] + [0] * 9),
    ]
    roots = []
    for k in range(3):
        root = tmp_path / f"r{k}"
        (root / "proc").mkdir(parents=True)
        (root / "proc/uptime").write_text(f"{100 + k}.00 1.00\n")
        (root / "proc/diskstats").write_text("".join(sample))
        roots.append(root)
        sample = [line.replace(f" {big} ", f" {big + 333_333_337} ") for line in sample]
        big += 333_333_337
    ours = IostatSampler(roots, partitions=True)
    reference = IostatSampler(roots, partitions=True, use_columns=False)
    for _ in roots:
        assert ours.sample().rows == reference.sample().rows
    assert ours.column_samples == 2


def test_rows_are_made_on_first_access_and_shared_while_unchanged(tmp_path: Path) -> None:
    samples = kernel_samples(3, 2, 10)
    roots = write_roots(samples, tmp_path)
    sampler = IostatSampler(roots + [roots[-1]] * 2, partitions=True)
    sampler.sample()
    busy = sampler.sample()
    idle_1, idle_2 = sampler.sample(), sampler.sample()
    assert sampler.column_samples == 3
    assert all(r.values() == (0.0,) * 13 for r in idle_1.rows)
    assert all(a is b for a, b in zip(idle_1.rows, idle_2.rows))  # unchanged: same objects
    assert any(any(r.values()) for r in busy.rows)
    assert len(busy.rows) == len(samples[1].devices)
    report = IostatReport(0.0, 1.0, [IostatRow("sda", *([1.0] * 13))], [])
    assert report.rows[0].util_pct == 1.0 and report == IostatReport(0.0, 1.0, report.rows, [])
    with pytest.raises(ValueError):
        IostatReport(0.0, 1.0, None, [])


# -- the column path against Debian's iostat -------------------------------------------------


SYSSTAT_CASES = [
    (["-d", "-x", "-p", "ALL"], {"partitions": True}),
    (["-d", "-x", "-s", "-z"], {"skip_idle": True}),
]


def _compare_with_sysstat(
    iostat_args: list[str],
    options: dict,
    workdir: Path,
) -> tuple[list[str], int, int]:
    samples = kernel_samples(42, 6, 120)
    expected = parse_sysstat_text(run_iostat_on_samples(samples, iostat_args, workdir))
    sampler = IostatSampler(write_roots(samples, workdir / "roots"), **options)
    problems: list[str] = []
    for index, expected_report in enumerate(expected):
        problems += compare_report(
            expected_report, sampler.sample().rows, frozenset(), f"{' '.join(iostat_args)} report {index + 1}"
        )
    return problems, sampler.column_samples, checked_columns(expected)


@needs_root
@needs_sysstat_12
def test_column_path_equals_real_sysstat(tmp_path: Path) -> None:
    """180 kernel-formatted devices over 6 samples (wraps, re-registrations, idle): every
    printed figure equals Debian's iostat (both runs in parallel, ~6 s), and the column
    path took every sample after the since-boot one."""
    with concurrent.futures.ThreadPoolExecutor(len(SYSSTAT_CASES)) as pool:
        futures = [
            pool.submit(_compare_with_sysstat, args, options, tmp_path / f"case{i}")
            for i, (args, options) in enumerate(SYSSTAT_CASES)
        ]
        results = [future.result() for future in futures]
    assert [p for problems, _, _ in results for p in problems] == []
    assert [column_samples for _, column_samples, _ in results] == [5, 5]
    assert sum(figures for _, _, figures in results) > 4000
