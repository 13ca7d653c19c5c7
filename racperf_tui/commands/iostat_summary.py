"""``racperf iostat --from PATH --summary``: an archive judged (core/disks/history/summary.py),
printed per host and device, or as one JSON object with ``--json``."""

from __future__ import annotations

import argparse

from racperf_tui.core.disks.history.judgement import ARCHIVE_RULE_NOTE
from racperf_tui.core.disks.history.summary import WEIGHTING, ArchiveSummary, DeviceSummary, Interval, is_idle
from racperf_tui.core.disks.saturation import FLAGGED_LEVELS, SaturationRules


def add_summary_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary",
        action="store_true",
        help="with --from: per host and device, the busiest intervals (by IOPS and by MB/s), the "
        "saturation episodes (the live rule), await p50/p95/p99/max per I/O, and an hour-by-hour "
        "line; since-boot reports left out (docs/HISTORY.md)",
    )


def summary_dict(summary: ArchiveSummary, rules: SaturationRules) -> dict[str, object]:
    return {
        "rule": rules.describe(),
        "archive_note": ARCHIVE_RULE_NOTE,
        "await_weighting": WEIGHTING,
        "hosts": [
            {"host": host, "devices": [device.as_dict() for device in devices]}
            for host, devices in summary.hosts().items()
        ],
    }


def _ms(value: object) -> str:
    return "-" if value is None else f"{value:.2f}"


def _interval_line(interval: Interval) -> str:
    when = interval.time.isoformat(timespec="seconds") if interval.time is not None else interval.where
    util = "-" if interval.util_pct is None else f"{interval.util_pct:.0f}"
    qu = "-" if interval.avgqu_sz is None else f"{interval.avgqu_sz:.1f}"
    return (
        f"    {when:<25} IOPS {interval.iops:>10,.1f}  MB/s {interval.mb_s:>9,.2f}  "
        f"await {_ms(interval.await_ms):>8}  avgqu-sz {qu:>6}  %util {util:>3}  {interval.level}"
    )


def _device_lines(device: DeviceSummary) -> list[str]:
    span = ""
    if device.first is not None and device.last is not None:
        span = f" {device.first.isoformat(timespec='seconds')} .. {device.last.isoformat(timespec='seconds')}"
    plural = "s" if device.since_boot != 1 else ""
    left_out = f" ({device.since_boot:,} since-boot report{plural} left out)" if device.since_boot else ""
    lines = [f"{device.device}: {device.intervals:,} intervals{span}{left_out}"]
    if device.unjudged:
        lines.append(f"  {device.unjudged:,} intervals without r/s, w/s or a request size: not counted")
    figures = device.percentiles()
    lines.append(
        f"  await ms over {device.ios:,.0f} I/Os: p50 {_ms(figures['p50'])}  p95 {_ms(figures['p95'])}  "
        f"p99 {_ms(figures['p99'])}  max {_ms(figures['max'])}"
    )
    lines.append(f"  saturation episodes: {len(device.episodes) or 'none'}")
    for episode in device.episodes:
        if episode.start is not None and episode.end is not None:
            span = (
                f"{episode.start.isoformat(timespec='seconds')} .. {episode.end.isoformat(timespec='seconds')} "
                f"({(episode.end - episode.start).total_seconds():,.0f} s)"
            )
        else:
            span = f"reports {episode.start_report} .. {episode.end_report}"
        still = ", still at the archive's end" if episode.open else ""
        mark = "!" if episode.level in FLAGGED_LEVELS else " "
        lines.append(f"    {mark} {episode.level} {span}{still}: {episode.reason}")
    by_iops, by_mb_s = device.busiest(device.by_iops), device.busiest(device.by_mb_s)
    if by_iops:
        lines.append("  busiest by IOPS:")
        lines.extend(_interval_line(i) for i in by_iops)
    if by_mb_s and [i.where for i in by_mb_s] == [i.where for i in by_iops]:
        lines.append("  busiest by MB/s: the same intervals")
    elif by_mb_s:
        lines.append("  busiest by MB/s:")
        lines.extend(_interval_line(i) for i in by_mb_s)
    hours = device.hour_rows()
    if hours:
        lines.append("  hours:")
        for row in hours:
            iops = "-" if row["iops"] is None else f"{row['iops']:,.1f}"
            mb_s = "-" if row["mb_s"] is None else f"{row['mb_s']:,.2f}"
            lines.append(
                f"    {row['hour']:<22} {row['intervals']:>6} intervals  IOPS {iops:>10}  MB/s {mb_s:>9}  "
                f"await {_ms(row['await_ms']):>8}  worst {row['worst']}"
            )
    return lines


def format_summary_text(summary: ArchiveSummary, rules: SaturationRules) -> str:
    """The summary as text: the rule and the weighting stated once, then host by host."""
    lines = [
        f"saturation rule: {rules.describe()}; {ARCHIVE_RULE_NOTE}",
        f"await percentiles: {WEIGHTING}",
    ]
    for host, devices in summary.hosts().items():
        lines += ["", f"== {host or '(host unknown)'} =="]
        idle = [d.device for d in devices if is_idle(d)]
        for device in devices:
            if not is_idle(device):
                lines.extend(_device_lines(device))
        if idle:
            lines.append(f"idle in every interval: {' '.join(idle)}")
    return "\n".join(lines) + "\n"
