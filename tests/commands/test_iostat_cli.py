"""``racperf iostat`` in a subprocess: text and JSON output, options, bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from tests.helpers import TESTS_DIR, racperf_cmd
from tests.helpers.iostat_oracle import parse_sysstat_text

FIXTURES = TESTS_DIR / "fixtures" / "sysstat"
ROOT1, ROOT2 = FIXTURES / "root1", FIXTURES / "root2"
HEADER = (
    "Device             r/s      w/s      rkB/s      wkB/s   rrqm/s   wrqm/s  avgrq-sz"
    "  avgqu-sz    await  r_await  w_await   svctm   %util"
)


def racperf_iostat(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*racperf_cmd(), "iostat", *map(str, args)], capture_output=True, text=True, timeout=60)
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
    assert (sda["rrqm/s"], sda["wrqm/s"], sda["r_await"], sda["w_await"]) == ("0.39", "1.36", "12.58", "9.61")
    assert (sda["await"], sda["avgrq-sz"], sda["avgqu-sz"], sda["%util"]) == ("12.00", "65.01", "0.10", "0.46")
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
            assert list(device) == [
                "device",
                "r/s",
                "w/s",
                "rkB/s",
                "wkB/s",
                "rrqm/s",
                "wrqm/s",
                "avgrq-sz",
                "avgqu-sz",
                "await",
                "r_await",
                "w_await",
                "svctm",
                "%util",
            ]
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
    assert [d for d, _ in parse_sysstat_text(options_after_names.stdout)[0]][:3] == ["sda", "sda1", "sda10"]
    assert "sdr" in options_after_names.stdout
    # sysstat takes device names after the interval too ('iostat -x 1 4 loop1 loop2').
    names_after_numbers = racperf_iostat("--root", ROOT1, "--root", ROOT2, "-x", "1", "2", "sdr", "sda")
    assert [[d for d, _ in report] for report in parse_sysstat_text(names_after_numbers.stdout)] == [
        ["sda", "sdr"],
        ["sda", "sdr"],
    ]
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


# ---------------------------------------------------------------- hostile input


def _root(tmp_path: Path, name: str, diskstats: str, uptime: str = "1000.00 1900.00\n") -> Path:
    root = tmp_path / name
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "diskstats").write_text(diskstats)
    (root / "proc" / "uptime").write_text(uptime)
    return root


def test_a_negative_number_is_a_usage_error_not_a_device() -> None:
    for args in (["-1"], ["-x", "-1", "3"], ["1", "-5"]):
        proc = racperf_iostat("--root", ROOT1, *args, check=False)
        assert proc.returncode == 2 and proc.stdout == "", args
        bad = next(a for a in args if a.startswith("-") and a != "-x")
        assert proc.stderr.strip() == (
            f"racperf iostat: {bad}: not an option, an interval (seconds > 0) or a device name"
        )


def test_a_counter_beyond_2_64_is_named_and_its_device_skipped(tmp_path: Path) -> None:
    line = "   8       0 sda 100 0 800 10 50 0 400 5 0 20 15 0 0 0 0 0 0\n"
    first = _root(tmp_path, "r1", line + line.replace("sda", "sdb"))
    huge = str(2**64 + 5)
    second = _root(
        tmp_path,
        "r2",
        line.replace(" 100 ", " 200 ", 1)
        + line.replace("sdb", "sdb").replace("sda", "sdb").replace(" 100 ", f" {huge} ", 1),
        uptime="1001.00 1901.00\n",
    )
    proc = racperf_iostat("--root", first, "--root", second, "-y", "--json", check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"racperf iostat: {second}/proc/diskstats:2: device 'sdb': rd_ios = "
        f"{huge} is outside 0..2^64-1 (not a kernel counter): line skipped"
    )
    (report,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [d["device"] for d in report["devices"]] == ["sda"]
    assert report["devices"][0]["r/s"] == 100.0  # 100 more reads in one second


def test_device_names_with_escape_sequences_are_printed_escaped(tmp_path: Path) -> None:
    evil = "sd\x1b]0;pwned\x07a"
    root = _root(tmp_path, "r1", f"   8       0 {evil} 100 0 800 10 50 0 400 5 0 20 15 0 0 0 0 0 0\n")
    proc = racperf_iostat("--root", root)
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\nsd\\x1b]0;pwned\\x07a " in proc.stdout
    as_json = racperf_iostat("--root", root, "--json")
    assert "\x1b" not in as_json.stdout  # JSON escapes it itself, and keeps the real name
    assert json.loads(as_json.stdout)["devices"][0]["device"] == evil


def test_proc_files_that_are_not_proc_files_are_refused_with_a_bound(tmp_path: Path) -> None:
    zero = tmp_path / "zero"
    (zero / "proc").mkdir(parents=True)
    (zero / "proc" / "diskstats").symlink_to("/dev/zero")
    (zero / "proc" / "uptime").write_text("1000.00 1900.00\n")
    proc = racperf_iostat("--root", zero, check=False)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        f"racperf iostat: --root {zero}: {zero}/proc/diskstats is a character device, not a regular file; not read"
    )
    big = _root(tmp_path, "big", "")
    with open(big / "proc" / "diskstats", "wb") as f:
        f.truncate(17 * 1024 * 1024)  # sparse: no disk, and bigger than any diskstats
    proc = racperf_iostat("--root", big, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"racperf iostat: --root {big}: {big}/proc/diskstats is larger than 16 MiB; not read"
    fifo = _root(tmp_path, "fifo", "")
    (fifo / "proc" / "diskstats").unlink()
    os.mkfifo(fifo / "proc" / "diskstats")  # no writer: opening it would wait forever
    proc = racperf_iostat("--root", fifo, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        f"racperf iostat: --root {fifo}: {fifo}/proc/diskstats is a FIFO, not a regular file; not read"
    )
