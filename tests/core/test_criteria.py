"""Acceptance criteria: the file's grammar, pass / fail / n/a, and a bad line named by file:line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from racperf_tui.core.criteria import CriteriaError, load_criteria, parse_criteria


def test_a_compound_criterion_holds_only_when_every_condition_does() -> None:
    (crit,) = parse_criteria("read_iops >= 20_000 at read_clat_p99_us <= 5,000  # the array's sign-off\n")
    assert [str(c) for c in crit.conditions] == ["read_iops >= 20000", "read_clat_p99_us <= 5000"]
    assert crit.judge({"read_iops": 20000.0, "read_clat_p99_us": 4999.0}).outcome == "pass"
    assert crit.judge({"read_iops": 19999.0, "read_clat_p99_us": 100.0}).outcome == "fail"
    assert crit.judge({"read_iops": 25000.0, "read_clat_p99_us": 5000.5}).outcome == "fail"
    missing = crit.judge({"read_iops": 25000.0})
    assert missing.outcome == "n/a" and missing.figures == {"read_iops": 25000.0, "read_clat_p99_us": None}


@pytest.mark.parametrize(
    ("line", "figure", "outcome"),
    [("x > 1", 1.0, "fail"), ("x < 1", 0.5, "pass"), ("x == 2.5", 2.5, "pass"), ("x <= -1", -1.0, "pass")],
)
def test_each_operator(line: str, figure: float, outcome: str) -> None:
    (crit,) = parse_criteria(line)
    assert crit.judge({"x": figure}).outcome == outcome


def test_a_bad_line_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "signoff.txt"
    path.write_text("# comment\nread_iops >= 100\nread_iops is big\n")
    with pytest.raises(CriteriaError, match=r"signoff.txt:3: 'read_iops is big' is not a condition"):
        load_criteria(path)
    with pytest.raises(CriteriaError, match="no criterion"):
        parse_criteria("# only comments\n\n", "empty.txt")


def test_a_fifo_or_a_device_is_never_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(CriteriaError, match="cannot read the criteria"):
        load_criteria(fifo)
    with pytest.raises(CriteriaError, match="cannot read the criteria"):
        load_criteria("/dev/zero")
    with pytest.raises(CriteriaError, match="cannot read the criteria"):
        load_criteria(tmp_path / "missing.txt")


def test_a_pipe_is_read_as_a_file_is() -> None:
    """`--criteria <(...)`: the shell hands a /dev/fd path to a pipe."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"read_iops >= 1\n")
    os.close(write_end)
    try:
        (crit,) = load_criteria(f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
    assert str(crit.conditions[0]) == "read_iops >= 1"
