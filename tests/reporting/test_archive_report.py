"""`racperf report --from PATH`: an iostat log that saturates (tests/helpers/saturating_log.py)
and an OSWatcher archive (oswatcher_archive.py, gzip, one malformed line), reported as HTML and
Markdown; every figure of the report is the one `racperf iostat --from --summary --json` gives;
a real headless Chromium renders it; bad requests get one line and no file."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from racperf_tui.reporting.archive_contents import Bucketed
from racperf_tui.reporting.charts import MAX_POINTS
from tests.helpers import needs_chromium, racperf_cmd
from tests.helpers.oswatcher_archive import H10, H11, osw_hour, osw_name
from tests.helpers.report_pages import chromium_dom, outside_loads, parsed
from tests.helpers.saturating_log import saturating_log

FIXTURES = Path(__file__).parents[1] / "fixtures" / "iostat_history"


def racperf(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*racperf_cmd(), *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("archive")
    log = root / "sat.log"
    log.write_text(saturating_log("dbnode7"))
    osw = root / "oswbb" / "archive" / "oswiostat"
    osw.mkdir(parents=True)
    for hour in (H10, H11):
        text = osw_hour("racnode1", hour, snapshots=2)
        if hour == H11:
            text += "sda this line is not iostat's\n"
        (osw / (osw_name("racnode1", hour) + ".gz")).write_bytes(gzip.compress(text.encode()))
    return [log, root / "oswbb"]


class _Tables(HTMLParser):
    """Every table's rows (th and td text) by the table's id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = str(dict(attrs).get("id") or "")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table is not None and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables(html: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def two(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def interval_row(i: dict[str, object]) -> list[str]:
    return [str(i["time"]), str(i["where"])] + [
        two(i[k])  # type: ignore[arg-type]
        for k in ("iops", "mb_s", "await_ms", "avgqu-sz", "%util")
    ] + [str(i["level"])]  # fmt: skip


def compare_with_summary(html: str, summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Assert each shown device's tables say the summary JSON's figures; the summary by host
    and device. Idle devices are named, not shown."""
    found = tables(html)
    hosts = {h["host"]: {d["device"]: d for d in h["devices"]} for h in summary["hosts"]}
    compared = 0
    for host, devices in hosts.items():
        for name, device in devices.items():
            anchor = f"{host}-{name}"
            if not device["busiest"]["iops"] and not device["episodes"]:  # idle: named, not shown
                idle = [n for line in re.findall(r"Idle in every interval: ([^<]*)\.<", html) for n in line.split()]
                assert f"{anchor}-facts" not in found and name in idle
                continue
            facts = dict((row[0], row[1]) for row in found[f"{anchor}-facts"])
            assert facts["intervals judged"] == f"{device['intervals']:,}"
            assert facts["since-boot reports left out"] == f"{device['since_boot_excluded']:,}"
            assert facts["first .. last"] == f"{device['first']} .. {device['last']}"
            for p in ("p50", "p95", "p99", "max"):
                assert facts[f"await {p} (ms, per I/O)"] == two(device["await_ms"][p])
            assert found[f"{anchor}-by-iops"][1:] == [interval_row(i) for i in device["busiest"]["iops"]]
            assert [row[:5] for row in found[f"{anchor}-hours"][1:]] == [
                [h["hour"], f"{h['intervals']:,}", two(h["iops"]), two(h["mb_s"]), two(h["await_ms"])]
                for h in device["hours"]
            ]
            assert [r[-1] for r in found[f"{anchor}-hours"][1:]] == [h["worst"] for h in device["hours"]]
            episodes = found.get(f"{anchor}-episodes", [[]])[1:]
            assert [(r[0], r[1], r[2], r[5]) for r in episodes] == [
                (e["level"], e["start"], e["end"], e["reason"]) for e in device["episodes"]
            ]
            compared += 1
    assert compared >= 1
    return hosts


def test_the_html_report_says_the_summarys_figures(archive: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "a.html"
    done = racperf("report", "--from", *map(str, archive), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    assert "racnode1_iostat_20.06.01.1100.dat.gz:" in done.stderr and "skipped" in done.stderr
    summary = json.loads(racperf("iostat", "--from", *map(str, archive), "--summary", "--json").stdout)
    html = out.read_text()
    found = tables(html)
    cells = parsed(html)
    assert outside_loads(cells, html) == [] and cells.csp is not None and "default-src 'none'" in cells.csp

    hosts = compare_with_summary(html, summary)
    assert set(hosts) == {"dbnode7", "racnode1"}
    assert {t for t in found if t.endswith("-facts")} == {
        "dbnode7-sdb-facts",
        "racnode1-sda-facts",
        "racnode1-sdb-facts",
    }
    # the figures the helpers' docstrings compute by hand: sdb saturated from sample 11 on
    sdb = hosts["dbnode7"]["sdb"]
    assert (sdb["intervals"], sdb["since_boot_excluded"]) == (22, 1)
    assert [e["level"] for e in sdb["episodes"]] == ["queueing", "saturated"]
    saturated = sdb["episodes"][1]

    # verdict first: the worst level per device and when, the saturated device on top
    verdicts = found["verdicts"]
    assert html.index('id="verdicts"') < html.index('id="dbnode7-sdb-facts"')
    assert verdicts[1][:4] == ["dbnode7", "sdb", "saturated", f"{saturated['start']} .. {saturated['end']}"]
    assert {(r[0], r[1], r[2]) for r in verdicts[2:]} == {
        ("dbnode7", "sda", "ok"),
        ("racnode1", "sda", "ok"),
        ("racnode1", "sdb", "ok"),
    }
    # provenance: every file with its size and sha256; the files read; the line skipped
    files = {row[0]: row[1:] for row in found["files"][1:]}
    for path in (archive[0], *sorted(p for p in archive[1].rglob("*") if p.is_file())):
        assert files[str(path)] == [f"{path.stat().st_size:,}", hashlib.sha256(path.read_bytes()).hexdigest()]
    sources = {row[0]: row[1:] for row in found["sources"][1:]}
    assert sources[str(archive[0])] == ["iostat -x", "dbnode7", "23", "1", "2020-06-01T10:59:50", "2020-06-01T11:00:12"]
    osw = osw_name("racnode1", H10) + ".gz"
    assert [v[:4] for k, v in sources.items() if k.endswith(osw)] == [
        ["iostat -x, OSWatcher hourly file, gzip", "racnode1", "6", "2"]
    ]
    assert len(sources) == 3
    assert "racnode1_iostat_20.06.01.1100.dat.gz:" in html.split('id="problems"')[1]
    # charts over the archive's time, for the 3 busy devices (sda on dbnode7 is idle)
    assert html.count("<svg") == 3 * 4
    assert "seconds since 2020-06-01T10:59:51" in html


def test_markdown_and_bad_requests(archive: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "a.md"
    assert racperf("report", "sdb", "--from", str(archive[0]), "-o", str(out)).returncode == 0
    text = out.read_text()
    assert "| dbnode7 | sdb | saturated |" in text and "| dbnode7 | sda |" not in text
    assert sorted(p.name for p in (tmp_path / "a-charts").iterdir()) == [f"dbnode7-sdb-{n}.svg" for n in range(1, 5)]
    assert "![sdb chart 1](a-charts/dbnode7-sdb-1.svg)" in text

    junk = tmp_path / "junk.txt"
    junk.write_text("nothing iostat here\n")
    cases = [
        (["--from", str(tmp_path / "missing")], "missing: no such file or directory"),
        (["--from", str(junk)], "no iostat or sar -d report in"),
        (["--from", str(archive[0]), "-o", str(tmp_path / "nodir" / "r.html")], "no directory"),
        (["--from", str(archive[0]), "-o", str(tmp_path / "r.txt")], "a report is FILE.html or FILE.md"),
    ]
    for args, message in cases:
        done = racperf("report", *args, cwd=tmp_path)
        assert done.returncode == 2, done
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob("*.html")) and not (tmp_path / "r.txt").exists()


def test_bucket_means_stay_bounded_and_exact() -> None:
    line = Bucketed()
    for t in range(10 * MAX_POINTS):
        line.add(float(t), float(t))
    means = line.means()
    # 12,000 points: buckets of 16 (750 points; of 8 they would be 1,500, more than a chart draws)
    assert len(means) == 750 <= MAX_POINTS and line.size == 16
    # each point: the mean of its bucket's values, at its last time
    assert means[0] == (15.0, 7.5) and means[1] == (31.0, 23.5) and means[-1] == (11999.0, 11991.5)


@needs_chromium
def test_chromium_renders_the_archive_report(archive: list[Path], tmp_path: Path) -> None:
    page = tmp_path / "a.html"
    assert racperf("report", "--from", str(archive[0]), "-o", str(page)).returncode == 0
    dom = chromium_dom(page, tmp_path / "profile")
    found = tables(dom)
    assert found["verdicts"][1][:3] == ["dbnode7", "sdb", "saturated"]
    assert dom.count("<svg") == 4 and "<path" in dom
    assert outside_loads(parsed(dom), dom) == []


def test_real_sysstat_outputs(tmp_path: Path) -> None:
    # made by sysstat 12.6 here: iostat -xk -t 1 2 and sar -d (tests/fixtures/iostat_history)
    paths = [str(FIXTURES / "real-12.6-xk-t.txt"), str(FIXTURES / "real-12.6-sar-d.txt")]
    out = tmp_path / "real.html"
    assert racperf("report", "--from", *paths, "-o", str(out)).returncode == 0
    summary = json.loads(racperf("iostat", "--from", *paths, "--summary", "--json").stdout)
    hosts = compare_with_summary(out.read_text(), summary)
    vda = hosts["vm"]["vda"]
    assert vda["await_ms"]["max"] == 0.28  # sar's, as tests/core/disks/history/test_judgement.py
    assert tables(out.read_text())["sources"][1:3] == [
        [paths[0], "iostat -x", "vm", "2", "1", "2026-12-02T03:41:04", "2026-12-02T03:41:05"],
        [paths[1], "sar -d", "vm", "2", "0", "2026-12-02T03:55:58", "2026-12-02T03:55:59"],
    ]
