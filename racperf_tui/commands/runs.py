"""``racperf runs``: the recorded runs.

- ``racperf runs [list] [--limit N] [--json]``: a table (id, tool, host, target, state,
  started, duration), newest first.
- ``racperf runs show ID [--json]``: one run: config, command line, state, exit status,
  result summary, sample count.
- ``racperf runs export ID --format json|csv [-o FILE]``: samples and result. json:
  ``{"run": {...}, "samples": [{"seq", "t", "metrics", "extra"}], "result": {...}}``; csv: a
  ``t`` column and one column per metric (samples only; with ``-o FILE.csv`` the result goes
  to ``FILE.result.json`` beside it). A run whose result is measured points (ORION: a row
  per data point, ``small_outstanding,large_outstanding,iops,mbps,latency_us``) exports those
  instead, and with ``-o FILE.csv`` its samples go to ``FILE.samples.csv``.
- ``racperf runs compare ID ID... [--baseline ID] [--criteria FILE] [--json]``: the runs side
  by side, each declared result figure with its unit, its difference from the baseline in %,
  which way is better and whether the difference is larger than the runs' own noise, what
  sets the runs apart, and each criterion's pass or fail per run (orchestration/compare.py,
  core/criteria.py). ``--json``: ``{"baseline", "runs", "differs", "rows": [{"metric",
  "label", "unit", "values", "diff_pct", "better", "noise", "significant"}], "criteria"}``.
- ``racperf runs label ID TEXT`` / ``racperf runs note ID TEXT``: the run's label (a short
  name to find it by: ``runs list --label L``) or note ("" clears it; core/run_labels.py).
- ``racperf runs delete ID... [--yes]``: delete runs: the record, its samples and its run
  directory (orchestration/run_deletion.py); it asks first unless --yes (without a terminal to
  ask on, --yes is needed); a run still going is refused and then nothing is deleted.
- ``racperf runs stop ID [--grace S]``: stop a running run; ``gN`` stops every node's run of
  run group N at once (orchestration/run_groups.py).
- ``racperf runs list --node NAME | --ssh [user@]host[:port]``: racperf's runs on that node, as
  the node sees them (core/remote/node_runs.py): each watchdog still running there (its run, pid,
  age, command) and each run directory left in ~/.racperf/runs, with the id and state this
  store has of the runs that are its own.
- ``racperf runs stop ID --node NAME | --ssh ...``: stop run ID (this store's), through its
  supervisor here when it still has one, then on the node whatever of it still runs there,
  even when this store lost track of it (its supervisor gone, or no such run any more); ID
  may also be a name ``runs list --node`` shows (another data dir's run, or an older one's
  mark).

Every form first marks runs whose supervisor vanished as interrupted, except where the data
dir cannot be written (a read-only mount, a store copied from another node): list, show and
export then read the store read-only and show the states as recorded. They never create a
store: where there is none they say so.

Exit status: 0 done; 1 no run with that id, or no store to show or export from; 2 the store
cannot be used (the message names the file and what to do), a wrong --node/--ssh, or a
criteria file or compare request that cannot be used, a label or note that cannot be one,
``delete`` without --yes and no terminal to ask on (nothing deleted); 6 ``delete`` of a run
still going (nothing deleted); 5 ``compare --criteria``: a criterion
did not pass (failed, or a run lacks its figure); 3
``stop`` of a run that had already finished (nothing was stopped; its state is printed) or
that nothing of runs on the node; 4 the node cannot be reached (one line saying why).
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

from racperf_tui.core.criteria import CriteriaError, Criterion, load_criteria
from racperf_tui.core.disks.diskstats import printable_name
from racperf_tui.core.disks.saturation import EPISODES_STREAM, episodes_text, recorded_episodes
from racperf_tui.core.paths import resolve_data_dir, store_path
from racperf_tui.core.remote.cluster import ClusterFileError, Node, add_node_arguments, node_from_args
from racperf_tui.core.remote.node_runs import NodeRun, list_node_runs, stop_node_run
from racperf_tui.core.remote.ssh import Connection, SshError, connect, one_line
from racperf_tui.core.remote.ssh_host import remote_run_prefix
from racperf_tui.core.run_labels import LabelError, clean_label, clean_note
from racperf_tui.core.store import GroupNotFound, NoStore, RunNotFound, RunRecord, Store, StoreError
from racperf_tui.core.textio import strict_json
from racperf_tui.core.units import format_duration
from racperf_tui.orchestration.compare import CompareError, Comparison, compare_runs, unfinished
from racperf_tui.orchestration.run_deletion import DeleteRefused, delete_runs, plan_deletion
from racperf_tui.orchestration.run_groups import in_node_order, stop_group
from racperf_tui.orchestration.runs import stop_run
from racperf_tui.tools import tool_description

#: ``racperf runs stop`` of a run that had already finished
EXIT_ALREADY_FINISHED = 3
#: the node named by --node / --ssh cannot be reached
EXIT_NODE_UNREACHABLE = 4
#: ``racperf runs compare --criteria``: a criterion did not pass in every run
EXIT_CRITERIA_NOT_MET = 5
#: ``racperf runs delete`` of a run still going (nothing deleted)
EXIT_STILL_GOING = 6
#: the forms that change the store (a read-only data dir cannot do them)
WRITING_ACTIONS = ("stop", "label", "note", "delete")


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
    lst.add_argument("--label", metavar="L", default=None, help="only the runs labelled L ('racperf runs label')")
    add_node_arguments(lst, what="the runs racperf left")
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
        "FILE.result.json beside it); for ORION a row per data point "
        "(small_outstanding, large_outstanding, iops, mbps, latency_us), "
        "its samples in FILE.samples.csv beside it.",
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
    stop.add_argument(
        "run_id",
        type=_run_ref,
        metavar="ID",
        help="the run's id (first column of 'racperf runs'), or gN: every node's run of run group N; "
        "with --node/--ssh also a RUN name 'racperf runs list --node' shows",
    )
    add_node_arguments(stop, what="stop what of the run still runs")
    stop.add_argument(
        "--grace",
        type=float,
        default=15.0,
        metavar="S",
        help="seconds to wait for a clean stop before killing (default 15)",
    )
    compare = sub.add_parser(
        "compare",
        help="runs side by side: figures, differences, noise, criteria",
        description="The runs side by side, the first (or --baseline) as the baseline: each "
        "declared result figure with its unit, the difference in percent, which way is better, "
        "and whether it is larger than twice the runs' own interval-to-interval noise (*). "
        "With --criteria, each criterion's pass or fail per run (exit 5 when one does not pass).",
    )
    compare.add_argument("run_ids", type=int, nargs="+", metavar="ID", help="the runs (one with --criteria)")
    compare.add_argument("--baseline", type=int, default=None, metavar="ID", help="the baseline (default: the first)")
    compare.add_argument("--criteria", metavar="FILE", default=None, help="acceptance criteria (core/criteria.py)")
    compare.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    words = {}
    for kind, helped, described in (
        (
            "label",
            "a run's label (a short name to find it by)",
            "Set the run's label, a short name to find it by "
            "('racperf runs list --label L', the Runs tab's filter): one line, at most 40 characters; '' clears it.",
        ),
        (
            "note",
            "a note on a run",
            "Set the note on a run ('after the HBA firmware update'): one line, at most "
            "500 characters; '' clears it. 'racperf runs show' prints it.",
        ),
    ):
        words[kind] = sub.add_parser(kind, help=helped, description=described)
        words[kind].add_argument("run_id", type=int, metavar="ID", help="the run's id")
        words[kind].add_argument("text", metavar="TEXT", help=f"the {kind} ('' clears it)")
    delete = sub.add_parser(
        "delete",
        help="delete runs: record, samples, run directory",
        description="Delete runs: each one's record, samples, raw output, result and run directory. "
        "Asks first unless --yes. A run still going is refused (exit 6) and nothing is deleted.",
    )
    delete.add_argument("run_ids", type=int, nargs="+", metavar="ID", help="the runs' ids")
    delete.add_argument("--yes", action="store_true", help="do not ask (needed without a terminal)")
    for p in (lst, show, export, stop, compare, *words.values(), delete):
        p.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _run_ref(text: str) -> int | str:
    """A run id, or a run's name on a node (HOST-HASH-ID, or an older run's mark)."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    if not text or not all(ch.isalnum() or ch in "._-" for ch in text):
        raise argparse.ArgumentTypeError(f"{text!r}: a run id or a run name from 'racperf runs list --node'")
    return text


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
    if any(r.label for r in records):  # a column only once a run has a label
        header.append("LABEL")
        for row, r in zip(rows, records):
            row.append(printable_name(r.label or ""))
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
    reading = action not in WRITING_ACTIONS
    if action in WRITING_ACTIONS and action != "stop" and not store_path(data_dir).exists():
        raise NoStore(f"no run store in {data_dir} (no runs recorded there)")
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


def _node_of(args: argparse.Namespace) -> Node | None:
    """The node --node / --ssh name (None: none named); ClusterFileError."""
    if getattr(args, "node", None) is None and getattr(args, "ssh", None) is None:
        if getattr(args, "identity", None) or getattr(args, "known_hosts", None):
            node_from_args(args)  # says what is wrong
        return None
    node = node_from_args(args)
    return None if node.is_local else node


def run(args: argparse.Namespace) -> int:
    action = args.action or "list"
    try:
        node = _node_of(args) if action in ("list", "stop") else None
    except ClusterFileError as exc:
        print(f"racperf runs {action}: {exc}", file=sys.stderr)
        return 2
    if node is not None:
        return _on_node(args, action, node)
    if action == "stop" and isinstance(args.run_id, str) and args.run_id[:1] == "g" and args.run_id[1:].isdigit():
        return _stop_group(args, int(args.run_id[1:]))
    if isinstance(getattr(args, "run_id", None), str):
        print(f"racperf runs {action}: a run name ({args.run_id}) goes with --node or --ssh", file=sys.stderr)
        return 2
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
        except RunNotFound as exc:
            missing = exc.args[0] if exc.args and isinstance(exc.args[0], int) else getattr(args, "run_id", "?")
            print(f"racperf runs {action}: no run with id {missing} in {store.path.parent}", file=sys.stderr)
            return 1
        except StoreError as exc:  # damage found past the first page: named, never a traceback
            print(f"racperf runs: {exc}", file=sys.stderr)
            return 2


def _act(store: Store, action: str, args: argparse.Namespace) -> int:
    if action == "list":
        wanted = getattr(args, "label", None)
        records = store.list_runs(limit=getattr(args, "limit", None), label=wanted)
        if getattr(args, "json", False):
            for r in records:
                print(strict_json.dumps(r.to_json()))
        elif records:
            sys.stdout.write(runs_table(records))
        elif wanted is not None:
            print(f"no run labelled {printable_name(wanted)!r} in {store.path.parent}")
        else:
            print(f"no runs recorded yet in {store.path.parent}")
        return 0
    if action == "compare":
        return _compare(store, args)
    if action == "delete":
        return _delete(store, args.run_ids, args.yes)
    record = store.get_run(args.run_id)
    if action == "show":
        return _show(store, record, args.json)
    if action == "export":
        return _export(store, record, args.format, args.output)
    if action in ("label", "note"):
        return _set_words(store, record, action, args.text)
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


def _stop_group(args: argparse.Namespace, group_id: int) -> int:
    """``racperf runs stop gN``: every node's run of the group at once; 3 when all had ended."""
    data_dir = resolve_data_dir(args.data_dir, create=False)
    try:
        with Store.open(data_dir) as store:
            store.mark_interrupted_runs()
            runs = in_node_order(store.get_group(group_id), store.group_runs(group_id))
    except GroupNotFound:
        print(f"racperf runs stop: no run group g{group_id} in {data_dir}", file=sys.stderr)
        return 1
    except (OSError, StoreError) as exc:
        print(f"racperf runs: {exc}", file=sys.stderr)
        return 2
    if all(run.state.finished for run in runs):
        said = ", ".join(f"{run.host} {run.state.value}" for run in runs) or "no runs"
        print(f"racperf runs stop: group g{group_id} had already ended ({said}): nothing to stop", file=sys.stderr)
        return EXIT_ALREADY_FINISHED
    states = stop_group(group_id, data_dir, grace_s=args.grace)
    print(f"group g{group_id}: " + ", ".join(f"{node} {state.value}" for node, state in states.items()))
    return 0


# ---- on a node ---------------------------------------------------------------------------


def _on_node(args: argparse.Namespace, action: str, node: Node) -> int:
    """``runs list`` / ``runs stop`` with --node / --ssh: the node's own view of the runs."""
    data_dir = resolve_data_dir(args.data_dir, create=False)
    prefix = remote_run_prefix(data_dir / "runs")
    try:
        connection = connect(node.ssh_target())
    except (SshError, OSError) as exc:
        print(f"racperf runs {action}: node {node.name}: {one_line(exc)}", file=sys.stderr)
        return EXIT_NODE_UNREACHABLE
    try:
        runs = list_node_runs(connection)
        if action == "list":
            return _list_node(node, runs, prefix, data_dir, getattr(args, "json", False))
        return _stop_on_node(args, node, connection, runs, prefix, data_dir)
    except (OSError, TimeoutError) as exc:
        print(f"racperf runs {action}: node {node.name}: {one_line(exc)}", file=sys.stderr)
        return EXIT_NODE_UNREACHABLE
    finally:
        connection.close()


def _local_records(data_dir: Path) -> dict[int, RunRecord]:
    """This store's runs by id ({} without a store: the node may know runs the store lost)."""
    if not store_path(data_dir).exists():
        return {}
    try:
        with Store.open(data_dir, read_only=True) as store:
            return {r.id: r for r in store.list_runs()}
    except (OSError, StoreError):
        return {}


def _list_node(node: Node, runs: list[NodeRun], prefix: str, data_dir: Path, as_json: bool) -> int:
    records = _local_records(data_dir)
    rows = []
    for run in runs:
        mine = run.of_store(prefix)
        record = records.get(run.run_id) if mine and run.run_id is not None else None
        rows.append((run, mine, record))
    if as_json:
        for run, mine, record in rows:
            print(
                strict_json.dumps(
                    {
                        "node": node.name,
                        "name": run.name,
                        "running": run.running,
                        "pid": run.pid,
                        "elapsed_s": None if run.elapsed_s is None else round(run.elapsed_s, 1),
                        "command": run.command or None,
                        "this_store": mine,
                        "run_id": run.run_id if mine else None,
                        "recorded_state": record.state.value if record is not None else None,
                    }
                )
            )
        return 0
    if not rows:
        print(f"no racperf runs on {printable_name(node.name)}")
        return 0
    header = ["RUN", "ON NODE", "PID", "AGE", "HERE", "COMMAND"]
    table = [
        [
            printable_name(run.name),
            "running" if run.running else "ended",
            str(run.pid or "-"),
            format_duration(run.elapsed_s) if run.elapsed_s is not None else "-",
            (f"#{run.run_id} {record.state.value}" if record else f"#{run.run_id} not in this store")
            if mine
            else "another store",
            _short_command(run.command),
        ]
        for run, mine, record in rows
    ]
    widths = [max(len(row[i]) for row in [header, *table]) for i in range(len(header))]
    for row in [header, *table]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


def _short_command(command: str, width: int = 60) -> str:
    """The command a watchdog runs, for a table column (its shell's ``exec`` left out)."""
    command = command.removeprefix("exec ")
    return printable_name(command[:width] + ("..." if len(command) > width else "")) or "-"


def _stop_on_node(
    args: argparse.Namespace, node: Node, connection: Connection, runs: list[NodeRun], prefix: str, data_dir: Path
) -> int:
    ref = args.run_id
    said = []
    if isinstance(ref, int):
        # first through its supervisor here, which records the stop (and the result)
        record = _local_records(data_dir).get(ref)
        if record is not None and record.host != node.name:
            where = f"{printable_name(record.host)}, not on {printable_name(node.name)}"
            print(f"racperf runs stop: run {ref} ran on {where}", file=sys.stderr)
            return 2
        if record is not None and not record.state.finished:
            state = stop_run(ref, data_dir, grace_s=args.grace)
            said.append(f"run {ref}: {state.value}")
            runs = list_node_runs(connection)
        name = f"{prefix}{ref}"
        mine = [run for run in runs if run.running and run.name == name]
    else:
        mine = [run for run in runs if run.running and ref in (run.name, run.mark)]
    if not mine:
        for line in said:
            print(line)
        if said:
            return 0
        what = f"run {ref}" if isinstance(ref, int) else ref
        print(f"racperf runs stop: nothing of {what} runs on {printable_name(node.name)}", file=sys.stderr)
        return EXIT_ALREADY_FINISHED
    for run in mine:
        stopped = stop_node_run(connection, run, grace_s=args.grace)
        how = f"{stopped.killed} killed after {args.grace:g} s" if stopped.killed else "ended on TERM"
        said.append(
            f"{run.name} on {node.name}: stopped (watchdog pid {run.pid}, {stopped.signalled} signalled, {how})"
        )
    for line in said:
        print(printable_name(line))
    return 0


def _show(store: Store, record: RunRecord, as_json: bool) -> int:
    result = store.result(record.id)
    count = store.sample_count(record.id)
    safety = _safety_record(store, record.id)
    episodes = recorded_episodes(store.raw_output(record.id, EPISODES_STREAM))
    if as_json:
        print(
            strict_json.dumps(
                {
                    "run": record.to_json(),
                    "sample_count": count,
                    "result": result,
                    "safety": safety,
                    "saturation": episodes,
                },
                indent=2,
            )
        )
        return 0
    out = [
        f"run {record.id}: {record.tool} on {record.host}",
        *_words_lines(record),
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
        *(["saturation:", *("  " + printable_name(line) for line in episodes_text(episodes))] if episodes else []),
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


def export_points_csv(store: Store, record: RunRecord) -> str | None:
    """The CSV of a run whose result is measured points (ORION's matrices: a row per data
    point with its loads, IOPS, MB/s and latency); None for a run without them."""
    try:
        description = tool_description(record.tool)
    except KeyError:
        return None
    points = description.data_points(store.result(record.id))
    if points is None:
        return None
    columns, rows = points
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(["" if value is None else value for value in row] for row in rows)
    return out.getvalue()


def _export(store: Store, record: RunRecord, fmt: str, output: str | None) -> int:
    points = export_points_csv(store, record) if fmt == "csv" else None
    text = export_json(store, record) if fmt == "json" else points or export_csv(store, record)
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
            if points is not None:  # the data points took the file: the samples go beside it
                path.with_suffix(".samples.csv").write_text(export_csv(store, record))
    except OSError as exc:
        print(f"racperf runs export: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


def _compare(store: Store, args: argparse.Namespace) -> int:
    criteria: list[Criterion] = []
    try:
        if args.criteria:
            criteria = load_criteria(args.criteria)
        comparison = compare_runs(store, args.run_ids, args.baseline, criteria)
    except (CriteriaError, CompareError) as exc:
        print(f"racperf runs compare: {exc}", file=sys.stderr)
        return 2
    for run in unfinished(comparison):
        print(
            f"racperf runs compare: run {run.id} is still {run.state.value}: compared as far as it went",
            file=sys.stderr,
        )
    if args.json:
        print(strict_json.dumps(comparison.to_json(), indent=2))
    else:
        sys.stdout.write(compare_table(comparison))
    met = all(v.outcome == "pass" for run_verdicts in comparison.verdicts for v in run_verdicts)
    return 0 if met else EXIT_CRITERIA_NOT_MET


def compare_table(comparison: Comparison) -> str:
    """The comparison as text: figures in full with their units, each run's difference from
    the baseline, ``better`` / ``worse`` by the figure's direction, ``*`` past the noise."""
    runs = comparison.runs
    base = comparison.baseline
    lines = [
        f"baseline: run {runs[base].id} ({printable_name(runs[base].tool)} on "
        f"{printable_name(runs[base].target or '-')} at {printable_name(runs[base].host)}, "
        f"{format_time(runs[base].started_at)})"
    ]
    for key, values in comparison.differs.items():
        shown = " | ".join(printable_name("-" if v is None else str(v)) for v in values)
        lines.append(f"differ in {printable_name(key)}: {shown}")
    header = ["FIGURE", "UNIT", *(f"#{run.id}" + (" (base)" if i == base else "") for i, run in enumerate(runs))]
    table = [header]
    for row in comparison.rows:
        table.append([row.spec.label, row.spec.unit, *(row.cell(i, base) for i in range(len(runs)))])
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines.append("")
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    if any(any(s for s in row.significant if s) for row in comparison.rows):
        lines.append("* larger than twice the runs' own interval-to-interval noise")
    if comparison.verdicts:
        lines.append("")
        lines.append("criteria:")
        for k, verdict in enumerate(comparison.verdicts[0]):
            lines.append(f"  {verdict.criterion.text}")
            for run, run_verdicts in zip(runs, comparison.verdicts):
                judged = run_verdicts[k]
                lines.append(f"    #{run.id}: {judged.outcome.upper()} ({judged.figures_text()})")
    return "\n".join(lines) + "\n"


# ---- labels, notes, deletion -------------------------------------------------------------


def _words_lines(record: RunRecord) -> list[str]:
    """``runs show``'s label and note lines (none when the run has neither)."""
    lines = [f"label:        {printable_name(record.label)}"] if record.label else []
    return lines + ([f"note:         {printable_name(record.note)}"] if record.note else [])


def _set_words(store: Store, record: RunRecord, action: str, text: str) -> int:
    try:
        words = clean_label(text) if action == "label" else clean_note(text)
    except LabelError as exc:
        print(f"racperf runs {action}: {exc}", file=sys.stderr)
        return 2
    (store.set_label if action == "label" else store.set_note)(record.id, words)
    said = "cleared" if words is None else repr(printable_name(words))
    print(f"run {record.id}: {action} {said}")
    return 0


def _delete(store: Store, run_ids: list[int], yes: bool) -> int:
    try:
        doomed = plan_deletion(store, run_ids)
    except DeleteRefused as exc:
        print(f"racperf runs delete: {exc}", file=sys.stderr)
        return EXIT_STILL_GOING
    if not yes:
        if not sys.stdin.isatty():
            print("racperf runs delete: nothing deleted: say --yes (there is no terminal to ask on)", file=sys.stderr)
            return 2
        for one in doomed:
            print(printable_name(one.describe()))
        answer = input(f"delete {'these runs' if len(doomed) > 1 else 'this run'}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 0
    try:
        deleted = delete_runs(store, [one.run.id for one in doomed])
    except DeleteRefused as exc:  # one started meanwhile
        print(f"racperf runs delete: {exc}", file=sys.stderr)
        return EXIT_STILL_GOING
    except OSError as exc:
        print(f"racperf runs delete: {exc}", file=sys.stderr)
        return 2
    for one in deleted:
        print(printable_name("deleted " + one.describe()))
    return 0
