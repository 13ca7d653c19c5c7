"""``racperf iostat`` in a subprocess: text and JSON output, options, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from conftest import racperf_cmd
from iostat_oracle import parse_sysstat_text

FIXTURES = Path(__file__).parent / "fixtures" / "sysstat"
ROOT1, ROOT2 = FIXTURES / "root1", FIXTURES / "root2"
HEADER = ("Device             r/s      w/s      rkB/s      wkB/s   rrqm/s   wrqm/s  avgrq-sz"
          "  avgqu-sz    await  r_await  w_await   svctm   %util")


def racperf_iostat(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*racperf_cmd(), "iostat", *map(str, args)], capture_output=True,
                          text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def figures(report: list[tuple[str, dict[str, str]]]) -> dict[str, dict[str, str]]:
    return {device: cols for device, cols in report}


def test_text_reports_from_two_roots() -> None:
    proc = racperf_iostat("--root", ROOT1, "--root", ROOT2, "-x", "1", "2")
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Linux ") and "CPU)" in lines[0]
    assert lines[2] == HEADER
    first, second = parse_sysstat_text(proc.stdout)
    # sysstat 12.6 prints for these roots (expected.iostat-x / -xs): sda r/s 6.90 rkB/s
    # 222.14 r_await 12.58 w_await 9.61 aqu-sz 0.10 %util 0.46, await 12.00, areq-sz 32.51 kB
    sda = figures(first)["sda"]
    assert (sda["r/s"], sda["w/s"], sda["rkB/s"], sda["wkB/s"]) == ("6.90", "1.69", "222.14", "57.08")
    assert (sda["rrqm/s"], sda["wrqm/s"], sda["r_await"], sda["w_await"]) == (
        "0.39", "1.36", "12.58", "9.61")
    assert (sda["await"], sda["avgrq-sz"], sda["avgqu-sz"], sda["%util"]) == (
        "12.00", "65.01", "0.10", "0.46")
    assert sda["svctm"] == f"{32862 / (49601 + 12180):.2f}"
    assert [d for d, _ in first] == ["sda", "sdb", "sdq", "sdr", "sds"]
    sdr = figures(second)["sdr"]
    assert (sdr["r/s"], sdr["w/s"], sdr["await"], sdr["%util"]) == ("3.21", "1.60", "15.33", "6.42")


def test_json_lines() -> None:
    proc = racperf_iostat("--root", ROOT1, "--root", ROOT2, "--json", "-p", "ALL", "-m")
    reports = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(reports) == 2
    assert [r["interval_s"] for r in reports] == [7192.55, 31.17]
    for report in reports:
        assert set(report) == {"time", "interval_s", "devices"}
        assert datetime.fromisoformat(report["time"]).tzinfo is not None
        for device in report["devices"]:
            assert list(device) == ["device", "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s",
                                    "avgrq-sz", "avgqu-sz", "await", "r_await", "w_await",
                                    "svctm", "%util"]
    sda1 = next(d for d in reports[0]["devices"] if d["device"] == "sda1")
    assert sda1["rkB/s"] == 0.29 and sda1["r_await"] == 60.92  # kB/s even with -m
    assert sda1["avgrq-sz"] == 82.67  # sectors (sysstat 12's rareq-sz 41.33 kB)
    sdq = next(d for d in reports[1]["devices"] if d["device"] == "sdq")
    assert (sdq["r/s"], sdq["await"], sdq["avgqu-sz"], sdq["%util"]) == (6.42, 13.0, 0.01, 0.96)


def test_megabytes_in_text() -> None:
    proc = racperf_iostat("--root", ROOT1, "-m")
    assert "rMB/s" in proc.stdout and "wMB/s" in proc.stdout and "rkB/s" not in proc.stdout
    sda = figures(parse_sysstat_text(proc.stdout)[0])["sda"]
    assert sda["rMB/s"] == f"{3195498 / 719255 * 100 / 2048:.2f}" == "0.22"


def test_skip_first_partitions_and_named_devices() -> None:
    only_interval = racperf_iostat("--root", ROOT1, "--root", ROOT2, "-y", "-p", "sda")
    reports = parse_sysstat_text(only_interval.stdout)
    assert len(reports) == 1
    assert [d for d, _ in reports[0]][:3] == ["sda", "sda1", "sda10"]
    assert figures(reports[0])["sda"]["r/s"] == "0.00"
    named = racperf_iostat("--root", ROOT1, "sdr", "/dev/sda")
    assert [d for d, _ in parse_sysstat_text(named.stdout)[0]] == ["sda", "sdr"]
    options_after_names = racperf_iostat("--root", ROOT1, "sdr", "-x", "-p", "sda", "1", "1")
    assert [d for d, _ in parse_sysstat_text(options_after_names.stdout)[0]][:3] == [
        "sda", "sda1", "sda10"]
    assert "sdr" in options_after_names.stdout
    # sysstat takes device names after the interval too ('iostat -x 1 4 loop1 loop2').
    names_after_numbers = racperf_iostat("--root", ROOT1, "--root", ROOT2, "-x", "1", "2", "sdr", "sda")
    assert [[d for d, _ in report] for report in parse_sysstat_text(names_after_numbers.stdout)] == [
        ["sda", "sdr"], ["sda", "sdr"]]
    idle_hidden = racperf_iostat("--root", ROOT1, "--root", ROOT2, "-z", "-y", "1", "1")
    assert [d for d, _ in parse_sysstat_text(idle_hidden.stdout)[0]] == ["sdq", "sdr", "sds"]


def test_dm_names(tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(ROOT1, root)
    (root / "dev/mapper").mkdir(parents=True)
    (root / "dev/mapper/virtualhd").symlink_to("../dm-2")
    proc = racperf_iostat("--root", root, "-N", "-p", "ALL", "--json")
    names = [d["device"] for d in json.loads(proc.stdout)["devices"]]
    assert "virtualhd" in names and "dm-2" not in names


def test_garbage_line_names_file_and_line_and_other_devices_still_print(tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(ROOT1, root)
    diskstats = root / "proc/diskstats"
    diskstats.chmod(0o644)
    lines = diskstats.read_text().splitlines()
    lines.insert(2, "this is not a diskstats line")
    diskstats.write_text("\n".join(lines) + "\n")
    proc = racperf_iostat("--root", root, check=False)
    assert proc.returncode == 1
    assert f"{diskstats}:3: " in proc.stderr and "this is not a diskstats line" in proc.stderr
    assert [d for d, _ in parse_sysstat_text(proc.stdout)[0]] == ["sda", "sdb", "sdq", "sdr", "sds"]


def test_missing_root_and_unreadable_diskstats(tmp_path: Path) -> None:
    proc = racperf_iostat("--root", tmp_path / "nope", check=False)
    assert proc.returncode == 2 and "nope: not a directory" in proc.stderr
    proc = racperf_iostat("--root", tmp_path, check=False)
    assert proc.returncode == 1
    assert f"{tmp_path}/proc/diskstats: cannot read" in proc.stderr


def test_live_interval_and_count() -> None:
    proc = racperf_iostat("-x", "-p", "ALL", "--json", "0.2", "3")
    reports = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(reports) == 3
    assert reports[0]["interval_s"] > 1  # since boot
    for report in reports[1:]:
        assert 0.05 <= report["interval_s"] <= 2.0


def test_help_says_json_keys_stay_in_kb() -> None:
    proc = racperf_iostat("--help")
    assert "kB/s" in proc.stdout and "--json" in proc.stdout and "--root" in proc.stdout
