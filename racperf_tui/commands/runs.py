"""``racperf runs``: the recorded runs.

- ``racperf runs [list] [--limit N] [--json]``: a table (id, tool, host, target, state,
  started, duration), newest first.
- ``racperf runs show ID [--json]``: one run: config, command line, state, exit status,
  result summary, sample count.
- ``racperf runs export ID --format json|csv [-o FILE]``: samples and result. json:
  ``{"run": {...}, "samples": [{"seq", "t", "metrics", "extra"}], "result": {...}}``; csv: a
  ``t`` column and one column per metric (samples only; with ``-o FILE.csv`` the result goes
  to ``FILE.result.json`` beside it).
- ``racperf runs stop ID [--grace S]``: stop a running run.

Every form first marks runs whose supervisor vanished as interrupted, except where the data
dir cannot be written (a read-only mount, a store copied from another node): list, show and
export then read the store read-only and show the states as recorded. They never create a
store: where there is none they say so.

Exit status: 0 done; 1 no run with that id, or no store to show or export from; 2 the store
cannot be used (the message names the file and what to do); 3 ``stop`` of a run that had
already finished (nothing was stopped; its state is printed).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from racperf_tui.core import strict_json
from racperf_tui.core.diskstats import printable_name
from racperf_tui.core.paths import resolve_data_dir, store_path
from racperf_tui.core.store import NoStore, RunNotFound, RunRecord, Store, StoreError
from racperf_tui.orchestration.runs import stop_run

#: ``racperf runs stop`` of a run that had already finished
EXIT_ALREADY_FINISHED = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="where runs are stored (default $RACPERF_DATA_DIR or ~/.local/share/racperf)",
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    lst = sub.add_parser(
        "list",
        help="the runs, newest first (the default)",
        description="The recorded runs, newest first: id, tool, host, target, state, start, duration.",
    )
    lst.add_argument("--limit", type=int, default=None, metavar="N", help="at most N runs (default: all)")
    lst.add_argument("--json", action="store_true", help="one JSON object per run instead of a table")
    show = sub.add_parser(
        "show",
        help="one run in detail",
        description="One run: state, exit status, message, target, times, tool "
        "version, command line, config, sample count, result summary.",
    )
    show.add_argument("run_id", type=int, metavar="ID", help="the run's id (first column of 'racperf runs')")
    show.add_argument("--json", action="store_true", help="the run, its result and sample count as JSON")
    export = sub.add_parser(
        "export",
        help="a run's samples and result as JSON or CSV",
        description="json: {run, samples, result}; csv: a t column and one "
        "column per metric (with -o FILE.csv the result goes to "
        "FILE.result.json beside it).",
    )
    export.add_argument("run_id", type=int, metavar="ID", help="the run's id (first column of 'racperf runs')")
    export.add_argument("--format", choices=("json", "csv"), default="json", help="default json")
    export.add_argument("-o", "--output", metavar="FILE", default=None, help="write here instead of stdout")
    stop = sub.add_parser(
        "stop",
        help="stop a running run (SIGTERM, then SIGKILL after the grace)",
        description="Stop a running run: SIGTERM (fio then writes its final "
        "report), SIGKILL after the grace. Exit status 3 when the "
        "run had already finished (nothing to stop).",
    )
    stop.add_argument("run_id", type=int, metavar="ID", help="the run's id (first column of 'racperf runs')")
    stop.add_argument(
        "--grace",
        type=float,
        default=15.0,
        metavar="S",
        help="seconds to wait for a clean stop before killing (default 15)",
    )
    for p in (lst, show, export, stop):
        p.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def format_duration(seconds: float) -> str:
    """12.3s, 4m05s, 2h03m."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_time(epoch_s: float | None) -> str:
    """Local time, to the second."""
    return "-" if epoch_s is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch_s))


def runs_table(records: list[RunRecord]) -> str:
    """The ``racperf runs`` table: fixed columns, widths fitted to the content."""
    header = ["ID", "TOOL", "HOST", "TARGET", "STATE", "STARTED", "DURATION"]
    rows = [
        [
            str(r.id),
            printable_name(r.tool),
            printable_name(r.host),
            printable_name(r.target or "-"),
            r.state.value,
            format_time(r.started_at),
            format_duration(r.duration_s),
        ]
        for r in records
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.rjust(w) if i == 0 else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines) + "\n"


def result_summary(result: dict[str, Any] | None) -> list[str]:
    """A few lines about a result: per job and direction IOPS, bandwidth and completion
    latency (avg, p99, p99.9) when it looks like fio's shape; then its top-level scalars."""
    if result is None:
        return ["(none)"]
    lines: list[str] = []
    jobs = result.get("jobs")
    if isinstance(jobs, list):
        for job in jobs:
            if not isinstance(job, dict):
                continue
            parts = []
            for direction in ("read", "write"):
                d = job.get(direction)
                if isinstance(d, dict) and (d.get("iops") or d.get("bw_kib_s")):
                    parts.append(
                        f"job {job.get('name', '?')} {direction}: {_num(d.get('iops'))} IOPS "
                        f"{_num(d.get('bw_kib_s'))} KiB/s" + _clat_text(d.get("clat_us"))
                    )
            lines.extend(parts or [f"job {job.get('name', '?')}: no I/O"])
    for key, value in result.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            lines.append(f"{key}: {value}")
        elif key != "jobs":
            size = len(value) if hasattr(value, "__len__") else "?"
            lines.append(f"{key}: ({size} entries)")
    return lines or ["(empty)"]


def _clat_text(clat_us: Any) -> str:
    """`` clat avg 61.4 p99 112.1 p99.9 309.2 µs`` (what a DBA looks at first), or ''."""
    if not isinstance(clat_us, dict) or not isinstance(clat_us.get("mean"), (int, float)):
        return ""
    text = f" clat avg {_num(float(clat_us['mean']))}"
    found = clat_us.get("percentiles")
    percentiles: dict[str, Any] = found if isinstance(found, dict) else {}
    for label, key in (("p99", "99.00"), ("p99.9", "99.90")):
        value = percentiles.get(key)
        if isinstance(value, (int, float)):
            text += f" {label} {_num(float(value))}"
    return text + " µs"


def _num(value: Any) -> str:
    if isinstance(value, (int, float)) and math.isfinite(value):
        return f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"
    return "-"


def _open_store(args: argparse.Namespace, action: str) -> Store:
    """The store for ``action``. Reading never creates one (NoStore where there is none) and
    reads read-only where the data dir cannot be written; ``stop`` needs a writable store."""
    data_dir = resolve_data_dir(args.data_dir, create=action == "stop")
    reading = action != "stop"
    if reading and (not store_path(data_dir).exists() or not os.access(data_dir, os.W_OK | os.X_OK)):
        store = Store.open(data_dir, read_only=True)
        if store.unseen_wal is not None:
            print(
                f"racperf runs: note: {data_dir} is read-only, so {store.unseen_wal} was not "
                f"read (its last commits are missing); copy the data dir somewhere writable "
                f"and use --data-dir there to see them",
                file=sys.stderr,
            )
        return store
    store = Store.open(data_dir)
    try:
        store.mark_interrupted_runs()
    except BaseException:
        store.close()
        raise
    return store


def export_json(store: Store, record: RunRecord) -> str:
    """The JSON export of one run."""
    samples = [{"seq": seq, "t": s.t, "metrics": s.metrics, "extra": s.extra} for seq, s in store.samples(record.id)]
    doc = {"run": record.to_json(), "samples": samples, "result": store.result(record.id)}
    return strict_json.dumps(doc, indent=2) + "\n"


def export_csv(store: Store, record: RunRecord) -> str:
    """The CSV export of one run's samples: ``t``, ``interval_s`` (when the tool gives it), then
    every metric, in order of appearance."""
    samples = store.samples(record.id)
    columns: dict[str, None] = {}
    for _, sample in samples:
        for key in sample.metrics:
            columns.setdefault(key, None)
    # interval_s weights the rates: fio's last sample covers a partial interval
    with_interval = any(sample.interval_s is not None for _, sample in samples)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["t", *(["interval_s"] if with_interval else []), *columns])
    for _, sample in samples:
        interval = [] if not with_interval else ["" if sample.interval_s is None else sample.interval_s]
        writer.writerow(
            [
                repr(sample.t) if isinstance(sample.t, float) else sample.t,
                *interval,
                *("" if sample.metrics.get(c) is None else sample.metrics[c] for c in columns),
            ]
        )
    return out.getvalue()


def run(args: argparse.Namespace) -> int:
    action = args.action or "list"
    try:
        store = _open_store(args, action)
    except NoStore as exc:
        if action == "list":
            print(f"no runs recorded yet in {resolve_data_dir(args.data_dir, create=False)}")
            return 0
        print(f"racperf runs {action}: {exc}", file=sys.stderr)
        return 1
    except (OSError, StoreError) as exc:
        print(f"racperf runs: {exc}", file=sys.stderr)
        return 2
    with store:
        try:
            return _act(store, action, args)
        except RunNotFound:
            print(f"racperf runs {action}: no run with id {args.run_id} in {store.path.parent}", file=sys.stderr)
            return 1
        except StoreError as exc:  # damage found past the first page: named, never a traceback
            print(f"racperf runs: {exc}", file=sys.stderr)
            return 2


def _act(store: Store, action: str, args: argparse.Namespace) -> int:
    if action == "list":
        records = store.list_runs(limit=getattr(args, "limit", None))
        if getattr(args, "json", False):
            for r in records:
                print(strict_json.dumps(r.to_json()))
        elif records:
            sys.stdout.write(runs_table(records))
        else:
            print(f"no runs recorded yet in {store.path.parent}")
        return 0
    record = store.get_run(args.run_id)
    if action == "show":
        return _show(store, record, args.json)
    if action == "export":
        return _export(store, record, args.format, args.output)
    if action == "stop":
        if record.state.finished:
            print(
                f"racperf runs stop: run {record.id} had already {record.state.value}: nothing to stop", file=sys.stderr
            )
            return EXIT_ALREADY_FINISHED
        state = stop_run(record.id, store.path.parent, grace_s=args.grace)
        print(f"run {record.id}: {state.value}")
        return 0
    return 2


def _show(store: Store, record: RunRecord, as_json: bool) -> int:
    result = store.result(record.id)
    count = store.sample_count(record.id)
    safety = _safety_record(store, record.id)
    if as_json:
        print(
            strict_json.dumps(
                {"run": record.to_json(), "sample_count": count, "result": result, "safety": safety}, indent=2
            )
        )
        return 0
    out = [
        f"run {record.id}: {record.tool} on {record.host}",
        f"state:        {record.state.value}",
        f"exit status:  {'-' if record.exit_status is None else record.exit_status}",
        f"message:      {printable_name(record.message or '-')}",
        f"target:       {printable_name(record.target or '-')}",
        f"started:      {format_time(record.started_at)}",
        f"ended:        {format_time(record.ended_at)}",
        f"duration:     {format_duration(record.duration_s)}",
        f"tool version: {record.tool_version or '-'}",
        f"command:      {printable_name(shlex.join(record.argv))}",
        f"config:       {strict_json.dumps(record.config, sort_keys=True)}",
        f"samples:      {count}",
        *_safety_lines(safety),
        "result:",
        *("  " + line for line in result_summary(result)),
    ]
    print("\n".join(out))
    return 0


def _safety_record(store: Store, run_id: int) -> dict[str, Any] | None:
    """What the supervisor recorded of the run's targets and protections (None before it ran,
    or for a tool without targets)."""
    text = store.raw_output(run_id, "safety")
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _safety_lines(safety: dict[str, Any] | None) -> list[str]:
    if not safety:
        return []
    lines = ["targets:"]
    lines += [f"  {t['access']:<5} {t['path']}  ({t['origin']})" for t in safety.get("targets", [])]
    for overridden in safety.get("overridden", []):
        lines.append(f"  OVERRIDDEN by the user: {overridden['path']}: {'; '.join(overridden['reasons'])}")
    lines.append("protections:")
    lines += [f"  - {p}" for p in safety.get("protections", [])]
    return lines


def _export(store: Store, record: RunRecord, fmt: str, output: str | None) -> int:
    text = export_json(store, record) if fmt == "json" else export_csv(store, record)
    if output is None or output == "-":
        sys.stdout.write(text)
        return 0
    path = Path(output)
    try:
        path.write_text(text)
        if fmt == "csv":
            result = store.result(record.id)
            if result is not None:
                path.with_suffix(".result.json").write_text(strict_json.dumps(result, indent=2) + "\n")
    except OSError as exc:
        print(f"racperf runs export: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0
