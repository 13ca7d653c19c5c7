"""``racperf iostat --from`` in a subprocess: JSON as live, text in racperf's layout, problems."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import FIXTURES, racperf_cmd

HISTORY = FIXTURES / "iostat_history"
LIVE_HEADER = (
    "Device             r/s      w/s      rkB/s      wkB/s   rrqm/s   wrqm/s  avgrq-sz"
    "  avgqu-sz    await  r_await  w_await   svctm   %util"
)


def racperf_iostat(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*racperf_cmd(), "iostat", *map(str, args)], capture_output=True, text=True, timeout=60)


def test_json_reports_with_their_own_times() -> None:
    proc = racperf_iostat("--json", "sda", "--from", HISTORY / "sysstat-9.0-xk-t-ampm.txt")
    assert proc.returncode == 0 and proc.stderr == ""
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert list(first) == ["time", "host", "interval_s", "since_boot", "devices"]
    assert (first["time"], first["host"], first["interval_s"], first["since_boot"]) == (
        "2012-06-01T11:59:59",
        "dbnode2",
        None,
        True,
    )
    assert (second["time"], second["interval_s"], second["since_boot"]) == ("2012-06-01T12:00:04", 5.0, False)
    assert [d["device"] for d in second["devices"]] == ["sda"]
    assert second["devices"][0] == {
        "device": "sda",
        "r/s": 100.0,
        "w/s": 50.0,
        "rkB/s": 6400.0,
        "wkB/s": 3200.0,
        "rrqm/s": 0.0,
        "wrqm/s": 0.0,
        "avgrq-sz": 128.0,
        "avgqu-sz": 1.5,
        "await": 10.0,
        "r_await": 8.0,
        "w_await": 14.0,
        "svctm": 6.0,
        "%util": 90.0,
    }


def test_text_in_the_live_layout_figures_absent_as_dash() -> None:
    proc = racperf_iostat("-x", "--from", HISTORY / "sysstat-7.0-x-sectors.txt", HISTORY / "real-12.6-xk-t.txt")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "dbnode1  (no time in the file)  since boot"
    assert lines[1] == LIVE_HEADER
    assert lines[2].split() == [
        "sda",
        "1.00",
        "3.00",
        "8.00",
        "44.00",
        "0.10",
        "2.50",
        "26.00",
        "0.02",
        "5.00",
        "-",
        "-",
        "2.00",
        "0.80",
    ]
    assert "vm  2026-12-02T03:41:04  since boot" in lines
    megabytes = racperf_iostat("-m", "--from", HISTORY / "sysstat-7.0-x-sectors.txt").stdout.splitlines()
    assert megabytes[1].split()[3:5] == ["rMB/s", "wMB/s"]
    assert megabytes[3].split()[3] == "0.31"  # sdb: 640 rsec/s = 320 kB/s


def test_problems_named_on_stderr_exit_1_reports_kept(tmp_path: Path) -> None:
    cut = tmp_path / "cut.txt"
    text = (HISTORY / "sysstat-7.0-x-sectors.txt").read_text()
    cut.write_text(text.replace("sdb               0.00     0.00 10.00", "sdb  garbage", 1))
    bad_line = "sdb  garbage  0.00   640.00     0.00    64.00     0.10   10.00   5.00   5.00"
    proc = racperf_iostat("--json", "--from", cut, tmp_path / "missing")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"racperf iostat: {tmp_path / 'missing'}: no such file or directory",
        f"racperf iostat: {cut}:8: malformed device line: {bad_line!r}",
    ]
    assert len(proc.stdout.splitlines()) == 2


def test_an_interval_is_a_usage_error() -> None:
    proc = racperf_iostat("1", "2", "--from", HISTORY / "sysstat-7.0-x-sectors.txt")
    assert proc.returncode == 2 and "no interval or count" in proc.stderr
