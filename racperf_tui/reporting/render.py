"""A report written as one file: HTML (self-contained: inline CSS and SVG charts, a CSP that
forbids loading anything) or Markdown (tables, the charts as SVG files in a folder beside it).

Jinja2 lays the report out (its templates in reporting/templates, autoescaped HTML: a run's
message or a device's model is text, never markup); pygal draws the charts (charts.py). The
file appears whole or not at all: written to a temporary file beside it, then renamed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from racperf_tui.core.criteria import Criterion, Verdict
from racperf_tui.core.disks.block_devices import selected_scheduler
from racperf_tui.core.store import Store
from racperf_tui.core.units import format_duration
from racperf_tui.orchestration.compare import Comparison
from racperf_tui.reporting.charts import series_svg
from racperf_tui.reporting.contents import Report, ReportRun, Series, gather_report
from racperf_tui.reporting.figures import cell, full, number

#: nothing is loaded from anywhere: no script, no image, no font, no frame, no form target;
#: inline styles only (the page's and the charts')
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
#: the suffixes that say which kind of report
HTML_SUFFIXES = (".html", ".htm")
MARKDOWN_SUFFIXES = (".md", ".markdown")
#: the headings of the devices' sysfs facts, with the facts they show
DEVICE_FACTS = (
    ("vendor", ("device/vendor",)),
    ("model", ("device/model",)),
    ("firmware", ("device/firmware_rev", "device/rev")),
    ("scheduler", ("queue/scheduler",)),
    ("nr_requests", ("queue/nr_requests",)),
    ("queue_depth", ("device/queue_depth",)),
    ("max_sectors_kb", ("queue/max_sectors_kb",)),
    ("block size (logical / physical)", ("queue/logical_block_size", "queue/physical_block_size")),
    ("rotational", ("queue/rotational",)),
    ("size", ("size",)),
    ("dm / md / loop", ("dm/name", "md/level", "loop/backing_file")),
    ("on", ("disk", "below")),
)


class ReportError(ValueError):
    """A report that cannot be written (its path); the message is one line."""


def report_kind(path: Path) -> str:
    """'html' or 'markdown' from the output's suffix; ReportError for another."""
    suffix = path.suffix.lower()
    if suffix in HTML_SUFFIXES:
        return "html"
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    raise ReportError(f"{path}: a report is FILE.html or FILE.md (got {suffix or 'no suffix'})")


def default_report_name(run_ids: Sequence[int], kind: str = "html") -> str:
    ids = "-".join(str(i) for i in run_ids[:6]) + ("-etc" if len(run_ids) > 6 else "")
    return f"racperf-report-{ids}.{'html' if kind == 'html' else 'md'}"


def write_report(store: Store, run_ids: Sequence[int], output: Path, criteria: Sequence[Criterion] = ()) -> Report:
    """Write the report of ``run_ids`` to ``output`` (its suffix says HTML or Markdown) and
    return what it says. RunNotFound, ReportRefused (a failed or empty run), ReportError (where it
    cannot be written): nothing is left behind."""
    output = Path(output)
    kind = report_kind(output)
    check_writable(output)
    report = gather_report(store, run_ids, criteria)
    if kind == "html":
        write_whole(output, render_html(report))
        return report
    charts_dir = output.with_name(output.stem + "-charts")
    made = not charts_dir.exists()
    try:
        charts = _write_charts(report, charts_dir)
        write_whole(output, render_markdown(report, charts, charts_dir.name))
    except BaseException:
        if made:  # a folder that was there (an earlier report's) is not ours to remove
            shutil.rmtree(charts_dir, ignore_errors=True)
        raise
    return report


def render_html(report: Report) -> str:
    charts = {run.record.id: [Markup(series_svg(s)) for s in run.series] for run in report.runs}
    device_charts = {run.record.id: [Markup(series_svg(s)) for s in run.iostat_series] for run in report.runs}
    template = template_environment(autoescape=True).get_template("report.html.j2")
    return template.render(**_context(report), charts=charts, device_charts=device_charts, csp=CSP)


def render_markdown(report: Report, charts: dict[str, dict[int, list[str]]], folder: str) -> str:
    paths = {
        kind: {rid: [f"{folder}/{name}" for name in names] for rid, names in by_run.items()}
        for kind, by_run in charts.items()
    }
    template = template_environment(autoescape=False).get_template("report.md.j2")
    return tidy_markdown(template.render(**_context(report), charts=paths["run"], device_charts=paths["device"]))


def tidy_markdown(text: str) -> str:
    """One blank line between blocks (the template's tags leave more), never inside a fenced
    block: a job file is shown exactly as it ran."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    return "\n".join(out).strip() + "\n"


def _write_charts(report: Report, folder: Path) -> dict[str, dict[int, list[str]]]:
    """Each chart as FOLDER/runID-N.svg (its devices' as runID-device-N.svg): their names."""
    make_chart_folder(folder)
    names: dict[str, dict[int, list[str]]] = {"run": {}, "device": {}}
    for run in report.runs:
        rid = run.record.id
        for kind, series, stem in (("run", run.series, f"run{rid}"), ("device", run.iostat_series, f"run{rid}-device")):
            names[kind][rid] = [write_chart(folder, f"{stem}-{n}.svg", one) for n, one in enumerate(series, 1)]
    return names


def make_chart_folder(folder: Path) -> None:
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot write the report's charts in {folder}: {exc.strerror}") from None


def write_chart(folder: Path, name: str, series: Series) -> str:
    """The chart as FOLDER/NAME, a standalone SVG file; its name."""
    try:
        (folder / name).write_text(standalone_svg(series_svg(series)))
    except OSError as exc:
        raise ReportError(f"cannot write the report's chart {folder / name}: {exc.strerror}") from None
    return name


def standalone_svg(svg: str) -> str:
    return '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + svg + "\n"


def check_writable(output: Path) -> None:
    parent = output.parent if str(output.parent) else Path(".")
    if output.is_dir():
        raise ReportError(f"cannot write the report {output}: it is a directory")
    if not parent.is_dir():
        raise ReportError(f"cannot write the report {output}: no directory {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ReportError(f"cannot write the report {output}: {parent} is not writable")


def write_whole(output: Path, text: str) -> None:
    """``text`` to ``output``, there whole or not at all (a temporary file renamed)."""
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent or ".")
    except OSError as exc:
        raise ReportError(f"cannot write the report {output}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, output)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise ReportError(f"cannot write the report {output}: {exc.strerror}") from None


def template_environment(*, autoescape: bool) -> jinja2.Environment:
    """HTML: autoescaped, tags trimmed; Markdown: a line break after a tag kept (a table's rows
    end there), the blank lines that leaves tidied afterwards."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("racperf_tui.reporting", "templates"),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=autoescape,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["md"] = _markdown_cell
    return environment


def _markdown_cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _context(report: Report) -> dict[str, Any]:
    ids = ", ".join(str(run.record.id) for run in report.runs)
    every = [v for run in report.runs for v in run.verdicts]
    return {
        "report": report,
        "title": f"racperf report: run{'s' if len(report.runs) > 1 else ''} {ids}",
        "generated": clock_text(report.generated_at),
        "passed": sum(1 for v in every if v.outcome == "pass"),
        "judged": len(every),
        "comparison_rows": comparison_rows(report.comparison) if report.comparison else [],
        "conditions": {run.record.id: condition_rows(run) for run in report.runs},
        "devices_facts": {run.record.id: device_rows(run) for run in report.runs},
        "device_headings": [heading for heading, _keys in DEVICE_FACTS],
        "clock": clock_text,
        "duration": _duration,
        "num": number,
        "cell": cell,
        "command": _command,
        "verdict_figures": _verdict_figures,
        "outcome_class": lambda outcome: {"pass": "pass", "fail": "fail"}.get(outcome, "na"),
    }


def comparison_rows(comparison: Comparison) -> list[list[str]]:
    """Each compared figure: its label with its unit, then each run's value in full with its
    difference from the baseline (better / worse, * past the noise)."""
    rows = []
    for row in comparison.rows:
        cells = [row.spec.heading]
        for i, value in enumerate(row.values):
            text = full(row.spec, value) if value is not None else "-"
            diff = row.diff_pct[i]
            if i != comparison.baseline and diff is not None:
                text += f" ({diff:+.1f}%"
                if row.spec.direction and diff != 0:
                    text += ", better" if (diff > 0) == (row.spec.direction == "higher") else ", worse"
                text += ")" + ("*" if row.significant[i] else "")
            cells.append(text)
        rows.append(cells)
    return rows


def condition_rows(run: ReportRun) -> list[tuple[str, str]]:
    r = run.record
    recorded = run.conditions or {}
    rows = [
        ("node", r.host),
        ("host name", recorded.get("host", "-")),
        ("kernel", f"{recorded.get('kernel', '-')} {recorded.get('machine', '')}".strip()),
        ("tool", r.tool),
        ("tool version", r.tool_version or "-"),
        ("target", r.target or "-"),
        ("started", clock_text(r.started_at)),
        ("ended", clock_text(r.ended_at) if r.ended_at is not None else f"still {r.state.value}"),
        ("duration", _duration(run)),
        ("state", r.state.value + (f" (exit status {r.exit_status})" if r.exit_status is not None else "")),
        ("racperf version (the run's)", recorded.get("racperf_version", "-")),
    ]
    for target in recorded.get("targets", []):
        rows.append(("target path", f"{target.get('path')} (device {target.get('devno', '-')})"))
    if recorded.get("problem"):
        rows.append(("conditions not read", recorded["problem"]))
    if not recorded:
        rows.append(("conditions", "not recorded with this run (recorded by racperf from this version on)"))
    for target in (run.safety or {}).get("targets", []):
        rows.append((f"{target.get('access')} target", f"{target.get('path')} ({target.get('origin')})"))
    for overridden in (run.safety or {}).get("overridden", []):
        rows.append(("write guard OVERRIDDEN", f"{overridden.get('path')}: {'; '.join(overridden.get('reasons', []))}"))
    rows.append(("configuration", " ".join(f"{k}={v}" for k, v in sorted(r.config.items()) if k != "host_spec")))
    return rows


def device_rows(run: ReportRun) -> list[list[str]]:
    out = []
    for device in (run.conditions or {}).get("devices", []):
        row = [str(device.get("name", "?"))]
        for heading, keys in DEVICE_FACTS:
            values = [device.get(key) for key in keys]
            if heading == "size" and str(values[0] or "").isdigit():
                row.append(number(int(values[0]) * 512 / 2**30, 1, "GiB"))
            elif heading == "scheduler":
                row.append(selected_scheduler(str(values[0] or "")) or "-")
            elif heading == "on":
                below = ", ".join(device.get("below") or [])
                row.append(
                    " ".join(
                        part
                        for part in (device.get("disk") and f"disk {device['disk']}", below and f"over {below}")
                        if part
                    )
                    or "-"
                )
            else:
                row.append(" / ".join(str(v) for v in values if v not in (None, "")) or "-")
        out.append(row)
    return out


def _verdict_figures(run: ReportRun, verdict: Verdict) -> str:
    specs = {spec.key: spec for spec in run.description.results}
    parts = []
    for metric, value in verdict.figures.items():
        spec = specs.get(metric)
        shown = full(spec, value) if spec is not None else number(value, 1)
        parts.append(f"{metric} {shown}")
    return "; ".join(parts)


def _command(run: ReportRun) -> str:
    return shlex.join(run.record.argv) if run.record.argv else "(not started)"


def _duration(run: ReportRun) -> str:
    return format_duration(run.record.duration_s)


def clock_text(epoch_s: float | None) -> str:
    if epoch_s is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(epoch_s))
