"""One reading of sizes and times, whichever tool asked."""

from __future__ import annotations

import pytest

from racperf_tui.core import units


@pytest.mark.parametrize(
    "text, expected",
    [
        ("512", 512),
        ("8k", 8192),
        ("8K", 8192),
        ("1M", 1 << 20),
        ("1MiB", 1 << 20),
        ("1 Mbyte", 1 << 20),
        ("2g", 2 << 30),
        ("1.5k", 1536),
        (4096, 4096),
        ("1t", 1 << 40),
    ],
)
def test_sizes(text: object, expected: int) -> None:
    assert units.size_bytes(text) == expected


@pytest.mark.parametrize("text", ["-1", "1.1", "10%", "12 parsecs", "1e400", True, float("inf"), "9" * 40])
def test_not_sizes(text: object) -> None:
    with pytest.raises(ValueError):
        units.size_bytes(text, "length")
    assert units.maybe_size_bytes(text) is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("60", 60.0),
        ("500ms", 0.5),
        ("5s", 5.0),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("1d", 86400.0),
        ("30 seconds", 30.0),
        ("250us", 250e-6),
        (7, 7.0),
    ],
)
def test_times(text: object, expected: float) -> None:
    assert units.duration_s(text) == pytest.approx(expected)


def test_rates() -> None:
    assert units.mib_s_to_mbit_s(1.0) == pytest.approx(8.388608)
    assert units.mbit_s_to_mib_s(units.mib_s_to_mbit_s(90.17)) == pytest.approx(90.17)


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0.0s"),
        (12.34, "12.3s"),
        (59.94, "59.9s"),
        (59.96, "1m00s"),  # what would round to 60.0s reads as the minute it is
        (60, "1m00s"),
        (245.2, "4m05s"),
        (3599.4, "59m59s"),
        (3599.6, "1h00m"),
        (3725, "1h02m"),
        (90061, "25h01m"),
        (None, "-"),
        (-1.0, "-"),
        (float("nan"), "-"),
    ],
)
def test_format_duration(seconds: float | None, shown: str) -> None:
    assert units.format_duration(seconds) == shown


def test_unit_tables_agree_with_the_conversions() -> None:
    assert units.MBIT_S_PER_UNIT["MiB/s"] == units.mib_s_to_mbit_s(1.0) == 8.388608
    assert units.MBIT_S_PER_UNIT["GiB/s"] == 1024 * 8.388608
    assert units.MS_PER_UNIT["µs"] == units.MS_PER_UNIT["us"] == units.TIME_UNITS_S["us"] * 1000
    assert units.MS_PER_UNIT["s"] == 1000.0
    assert units.LARGER_UNIT["MiB/s"] == ("GiB/s", 1024.0) and units.LARGER_TIME_UNIT["µs"] == "ms"
