"""An archive's report (``racperf report --from PATH``) written as one file, HTML or Markdown,
by the same means as a runs' report (render.py): its checks, templates and whole-file write.

Every table is made here, its cells as text (figures in full, two decimals as the summary's
JSON rounds them, the unit in the heading); the templates only lay them out.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from racperf_tui.core.disks.history.judgement import ARCHIVE_RULE_NOTE
from racperf_tui.core.disks.history.summary import WEIGHTING, DeviceSummary, Interval, is_idle
from racperf_tui.reporting.archive_contents import ArchiveReport
from racperf_tui.reporting.charts import series_svg
from racperf_tui.reporting.contents import Series
from racperf_tui.reporting.render import (
    CSP,
    check_writable,
    clock_text,
    make_chart_folder,
    report_kind,
    template_environment,
    tidy_markdown,
    write_chart,
    write_whole,
)

INTERVAL_HEADINGS = ("time", "report (file:line)", "IOPS", "MB/s", "await ms", "avgqu-sz", "%util", "level")
HOUR_HEADINGS = ("hour", "intervals", "IOPS", "MB/s", "await ms (per I/O)", "worst level")
EPISODE_HEADINGS = ("level", "from", "to", "duration s", "still at the end", "why")


@dataclass(frozen=True)
class Table:
    headings: tuple[str, ...]
    rows: list[list[str]]


@dataclass
class DeviceSection:
    host: str
    device: str
    anchor: str
    facts: list[tuple[str, str]]
    episodes: Table
    by_iops: Table
    by_mb_s: Table | None  # None: the same intervals as by IOPS
    hours: Table
    charts: list[Any]  # SVG markup (HTML) or chart file paths (Markdown)


def default_archive_report_name(kind: str = "html") -> str:
    return f"racperf-archive-report.{'html' if kind == 'html' else 'md'}"


def write_archive_report(report: ArchiveReport, output: Path) -> None:
    """The report to ``output`` (HTML or Markdown by its suffix), whole or not at all."""
    kind = report_kind(output)
    check_writable(output)
    if kind == "html":
        charts = {key: [Markup(series_svg(s)) for s in series] for key, series in _busy_charts(report).items()}
        html = template_environment(autoescape=True).get_template("archive.html.j2")
        write_whole(output, html.render(**_context(report, charts), csp=CSP))
        return
    folder = output.with_name(output.stem + "-charts")
    made = not folder.exists()
    try:
        paths = _write_charts(report, folder)
        md = template_environment(autoescape=False).get_template("archive.md.j2")
        write_whole(output, tidy_markdown(md.render(**_context(report, paths))))
    except BaseException:
        if made:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _write_charts(report: ArchiveReport, folder: Path) -> dict[tuple[str, str], list[str]]:
    make_chart_folder(folder)
    return {
        (host, device): [
            f"{folder.name}/{write_chart(folder, f'{_anchor(host, device)}-{n}.svg', one)}"
            for n, one in enumerate(series, 1)
        ]
        for (host, device), series in _busy_charts(report).items()
    }


def _busy_charts(report: ArchiveReport) -> dict[tuple[str, str], list[Series]]:
    """The charts of the devices shown (an idle device is named only: its charts are flat)."""
    devices = report.summary.devices
    return {key: series for key, series in report.charts.items() if key in devices and not is_idle(devices[key])}


def _anchor(host: str, device: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in f"{host or 'host'}-{device}")


def _two(value: object) -> str:
    return f"{value:,.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def _interval_row(interval: Interval) -> list[str]:
    when = interval.time.isoformat(timespec="seconds") if interval.time is not None else "-"
    return [
        when,
        interval.where,
        _two(interval.iops),
        _two(interval.mb_s),
        _two(interval.await_ms),
        _two(interval.avgqu_sz),
        _two(interval.util_pct),
        interval.level,
    ]


def device_section(device: DeviceSummary, charts: list[Any]) -> DeviceSection:
    """One device's tables, from the summary's own objects."""
    figures = device.percentiles()
    span = "-"
    if device.first is not None and device.last is not None:
        span = f"{device.first.isoformat(timespec='seconds')} .. {device.last.isoformat(timespec='seconds')}"
    facts = [
        ("intervals judged", f"{device.intervals:,}"),
        ("first .. last", span),
        ("since-boot reports left out", f"{device.since_boot:,}"),
        ("intervals without r/s, w/s or a request size (not counted)", f"{device.unjudged:,}"),
        ("I/Os the await percentiles weigh", _two(figures["ios"])),
    ]
    facts += [(f"await {name} (ms, per I/O)", _two(figures[name])) for name in ("p50", "p95", "p99", "max")]
    episodes = []
    for e in device.episodes:
        start = e.start.isoformat(timespec="seconds") if e.start else f"report {e.start_report}"
        end = e.end.isoformat(timespec="seconds") if e.end else f"report {e.end_report}"
        duration = _two((e.end - e.start).total_seconds()) if e.start and e.end else "-"
        episodes.append([e.level, start, end, duration, "yes" if e.open else "no", e.reason])
    by_iops, by_mb_s = device.busiest(device.by_iops), device.busiest(device.by_mb_s)
    same = [i.where for i in by_iops] == [i.where for i in by_mb_s]
    hours = [
        [str(h["hour"]), f"{h['intervals']:,}", _two(h["iops"]), _two(h["mb_s"]), _two(h["await_ms"]), str(h["worst"])]
        for h in device.hour_rows()
    ]
    return DeviceSection(
        device.host,
        device.device,
        _anchor(device.host, device.device),
        facts,
        Table(EPISODE_HEADINGS, episodes),
        Table(INTERVAL_HEADINGS, [_interval_row(i) for i in by_iops]),
        None if same else Table(INTERVAL_HEADINGS, [_interval_row(i) for i in by_mb_s]),
        Table(HOUR_HEADINGS, hours),
        charts,
    )


def _context(report: ArchiveReport, charts: dict[tuple[str, str], list[Any]]) -> dict[str, Any]:
    hosts = []
    for host, devices in report.summary.hosts().items():
        busy = [device_section(d, charts.get((host, d.device), [])) for d in devices if not is_idle(d)]
        idle = [d.device for d in devices if is_idle(d)]
        hosts.append({"host": host or "(host unknown)", "devices": busy, "idle": idle})
    verdicts = Table(
        ("host", "device", "worst level", "when (its first episode)", "why"),
        [[v.host or "(host unknown)", v.device, v.level, v.when, v.reason] for v in report.verdicts()],
    )
    files = Table(
        ("file", "size bytes", "sha256"),
        [[f.path, f"{f.size_bytes:,}" if f.size_bytes >= 0 else "-", f.sha256] for f in report.files],
    )
    sources = Table(
        ("file read", "read as", "host", "reports", "since-boot reports left out", "first", "last"),
        [
            [
                s.name,
                s.format,
                ", ".join(sorted(h or "(unknown)" for h in s.hosts)),
                f"{s.reports:,}",
                f"{s.since_boot:,}",
                s.first.isoformat(timespec="seconds") if s.first else "-",
                s.last.isoformat(timespec="seconds") if s.last else "-",
            ]
            for s in report.sources
        ],
    )
    return {
        "report": report,
        "title": f"racperf report: iostat archive {' '.join(report.paths)}",
        "generated": clock_text(report.generated_at),
        "rule": f"{report.rules.describe()}; {ARCHIVE_RULE_NOTE}",
        "weighting": WEIGHTING,
        "verdicts": verdicts,
        "hosts": hosts,
        "files": files,
        "sources": sources,
        "problems": [str(p) for p in report.problems],
    }
