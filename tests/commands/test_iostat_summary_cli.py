"""``racperf iostat --from PATH --summary`` and ``--saturation`` with ``--from``, in a subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import racperf_cmd
from tests.helpers.saturating_log import saturating_log


def racperf_iostat(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*racperf_cmd(), "iostat", *map(str, args)], capture_output=True, text=True, timeout=60)


def test_summary_json_and_text(tmp_path: Path) -> None:
    log = tmp_path / "iostat.log"
    log.write_text(saturating_log())
    proc = racperf_iostat("--summary", "--json", "--from", log)
    assert proc.returncode == 0 and proc.stderr == ""
    (line,) = proc.stdout.splitlines()
    summary = json.loads(line)
    assert summary["await_weighting"].startswith("per I/O: each interval's await counts (r/s + w/s) x its seconds")
    (host,) = summary["hosts"]
    sda, sdb = host["devices"]
    assert (host["host"], sda["device"], sda["await_ms"]["ios"], sda["episodes"]) == ("dbnode7", "sda", 0.0, [])
    assert sdb["await_ms"] == {"p50": 2.5, "p95": 12.0, "p99": 12.0, "max": 12.0, "ios": 16560.0}
    assert sdb["episodes"][1] == {
        "device": "sdb",
        "level": "saturated",
        "reason": "no more throughput: 1,010 IOPS at avgqu-sz 8.0, 1,000 at 2.5; await 2.50 -> 8.00 ms",
        "start": "2020-06-01T11:00:02",
        "end": "2020-06-01T11:00:10",
        "duration_s": 8.0,
        "start_report": None,
        "end_report": None,
        "open": False,
    }
    assert sdb["busiest"]["mb_s"][0]["mb_s"] == 7.89  # 1,010 x 8 kB
    text = racperf_iostat("--from", log, "--summary").stdout.splitlines()
    assert "sdb: 22 intervals 2020-06-01T10:59:51 .. 2020-06-01T11:00:12 (1 since-boot report left out)" in text
    assert "  await ms over 16,560 I/Os: p50 2.50  p95 12.00  p99 12.00  max 12.00" in text
    assert any(t.startswith("    ! queueing 2020-06-01T10:59:56 .. 2020-06-01T11:00:04 (8 s): queueing:") for t in text)
    assert text[-1] == "idle in every interval: sda"
    assert "  busiest by MB/s: the same intervals" in text  # every I/O 8 kB: the same order


def test_saturation_with_from_json_and_text(tmp_path: Path) -> None:
    log = tmp_path / "iostat.log"
    log.write_text(saturating_log())
    proc = racperf_iostat("--saturation", "--json", "sdb", "--from", log)
    assert proc.returncode == 0 and proc.stderr == ""
    reports = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(reports) == 23
    assert reports[0]["devices"][0]["saturation"] == {"level": "ok", "reason": "", "since": None}
    queueing = reports[8]["devices"][0]["saturation"]
    assert (queueing["level"], queueing["since"]) == ("queueing", "2020-06-01T10:59:56")
    assert queueing["reason"] == "queueing: await 2.50 ms with avgqu-sz 2.5, 2.5x its low-load await 1.00 ms"
    text = racperf_iostat("--saturation", "sdb", "--from", log).stdout.split("\n\n")
    assert text[14].splitlines()[2].endswith(" 95.00 saturated")
    assert text[14].splitlines()[3].startswith("! sdb saturated since 2020-06-01T11:00:02: no more throughput")


def test_summary_needs_from() -> None:
    proc = racperf_iostat("--summary")
    assert proc.returncode == 2
    assert proc.stderr == "racperf iostat: --summary judges an archive: give it --from PATH\n"
