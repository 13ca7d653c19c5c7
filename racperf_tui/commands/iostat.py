"""``racperf iostat``: sysstat's ``iostat -x``, computed by racperf, in the older column set.

racperf iostat [-x] [-k|-m] [-p [DEV[,DEV]|ALL]] [-y] [-z] [-N] [--json] [--saturation]
               [--root DIR]... [DEVICE...] [interval [count]]
racperf iostat --ssh [user@]host[:port] [--identity FILE] [--known-hosts FILE] ... (a node's)
racperf iostat [-x] [-m] [--json] [DEVICE...] --from PATH...      (saved outputs, archives)
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import socket
import sys
import time
from pathlib import Path

from racperf_tui.commands.iostat_history import COLUMN_WIDTHS, add_from_argument, run_from_history
from racperf_tui.commands.iostat_summary import add_summary_argument
from racperf_tui.core.disks.diskstats import printable_name
from racperf_tui.core.disks.iostat_math import COLUMNS, IostatReport
from racperf_tui.core.disks.iostat_model import IostatModel
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from racperf_tui.core.disks.saturation import OK, SaturationRules
from racperf_tui.core.remote.remote_diskstats import NodeInfo, RemoteDiskstats
from racperf_tui.core.remote.ssh import SshTarget, connect
from racperf_tui.core.textio import strict_json
from racperf_tui.core.textio.bounded_read import BoundedReadError, read_regular_bytes_bounded


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options as sysstat's iostat (extended statistics are always on)."""
    parser.description = (
        "iostat -x computed from /proc/diskstats and /proc/uptime, with the figures of "
        "sysstat 12.6 in the older column set: r/s w/s rkB/s wkB/s rrqm/s wrqm/s avgrq-sz "
        "(512-byte sectors) avgqu-sz await r_await w_await svctm (ms) %util. The first report "
        "covers the time since boot."
    )
    parser.add_argument("-x", action="store_true", help="extended statistics (always on)")
    parser.add_argument("-d", action="store_true", help="device report only (always so)")
    unit = parser.add_mutually_exclusive_group()
    unit.add_argument("-k", action="store_true", help="kilobytes per second (default)")
    unit.add_argument(
        "-m",
        action="store_true",
        help="megabytes per second in the text output (rMB/s wMB/s); --json keys and values stay rkB/s wkB/s in kB/s",
    )
    parser.add_argument(
        "-p",
        nargs="?",
        const="ALL",
        default=None,
        metavar="DEV[,DEV]|ALL",
        help="partitions too: of these disks, or of every device (ALL, the default)",
    )
    parser.add_argument(
        "-y", action="store_true", help="omit the first report (statistics since boot) when an interval is given"
    )
    parser.add_argument("-z", action="store_true", help="omit devices idle during the interval")
    parser.add_argument(
        "-N",
        action="store_true",
        help="device-mapper names (e.g. test1 for dm-3) from sys/block/dm-N/dm/name or /dev/mapper",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per report per line: {"time", "interval_s", '
        '"devices": [{"device", "r/s", ..., "%%util"}]}; avgrq-sz in sectors, '
        "times in ms, rkB/s wkB/s always in kB/s",
    )
    parser.add_argument(
        "--saturation",
        action="store_true",
        help="each device judged by the Disks tab's saturation rule (ok, busy, queueing, saturated): "
        'a "saturation" column and a line per device not ok with its reason in text; '
        '{"saturation": {"level", "reason", "since"}} per device in --json (since: ISO time the level '
        "began, null when ok). Tuned by RACPERF_SATURATION (see racperf help). The first report "
        "(since boot) is judged as ok: it is no sample of now. With --from: the archive's reports judged in "
        "turn, since in the archive's own time (docs/HISTORY.md)",
    )
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        type=Path,
        default=None,
        help="read DIR/proc/diskstats, DIR/proc/uptime, DIR/sys instead of the live "
        "files; repeat for the next samples (sysstat's tests/rootN layout); the last "
        "one is re-read when they run out",
    )
    parser.add_argument(
        "--ssh",
        metavar="[USER@]HOST[:PORT]",
        default=None,
        help="the statistics of another node, read over SSH (one channel; only sh and "
        "cat needed there); its host key must be in racperf's known_hosts (DATA_DIR/"
        "known_hosts) or ~/.ssh/known_hosts; ~/.ssh/config and the agent are honoured",
    )
    parser.add_argument("--identity", metavar="FILE", default=None, help="with --ssh: a private key file")
    parser.add_argument(
        "--known-hosts",
        metavar="FILE",
        action="append",
        default=None,
        help="with --ssh: verify the host key against FILE (repeatable) instead of racperf's and ~/.ssh/known_hosts",
    )
    parser.add_argument(
        "--data-dir", metavar="DIR", default=None, help="with --ssh: the data dir whose known_hosts is racperf's own"
    )
    add_from_argument(parser)
    add_summary_argument(parser)
    # tests: the node's files under this prefix there (a tree laid out as /proc and /sys)
    parser.add_argument("--ssh-root", default="", help=argparse.SUPPRESS)
    parser.add_argument(
        "args", nargs="*", metavar="DEVICE|interval|count", help="device names (or ALL), then [interval [count]]"
    )
    # iostat accepts options after device names ('iostat sda -x 1'): argparse needs the
    # intermixed parser for that, and cli.py calls parse_args.
    parser.parse_args = parser.parse_intermixed_args  # type: ignore[method-assign]


class UsageError(ValueError):
    """A command line iostat cannot run: the message says what (exit status 2)."""


def _split_positionals(args: argparse.Namespace) -> tuple[list[str], float | None, int | None]:
    """sysstat's rule: a non-numeric argument is a device, wherever it stands ('iostat -x 1 5
    sda' restricts to sda, as sysstat does), the first number the interval, the second the
    count. '-p 2' means '-p ALL 2'."""
    positionals = list(args.args)
    if args.p is not None and args.p.replace(".", "", 1).isdigit():
        first_number = next((i for i, a in enumerate(positionals) if a.replace(".", "", 1).isdigit()), len(positionals))
        positionals.insert(first_number, args.p)
        args.p = "ALL"
    devices: list[str] = []
    numbers: list[str] = []
    for arg in positionals:
        if arg.replace(".", "", 1).isdigit():
            numbers.append(arg)
        elif arg.startswith("-"):
            # argparse hands a negative number over as a positional: no device is named so
            raise UsageError(f"{arg}: not an option, an interval (seconds > 0) or a device name")
        else:
            devices.append(arg)
    if len(numbers) > 2:
        raise UsageError(f"too many numbers: {' '.join(numbers)}")
    interval = float(numbers[0]) if numbers else None
    count = int(float(numbers[1])) if len(numbers) > 1 else None
    if interval is not None and interval <= 0:
        interval = None
    if count is not None and count < 1:
        raise UsageError("count must be >= 1")
    return devices, interval, count


def banner(report_root: Path | None = None, node: NodeInfo | None = None) -> str:
    """sysstat's first line: kernel, host, date, arch, CPUs (of the machine we run on, or of
    the node read over SSH)."""
    today = dt.datetime.now().strftime("%m/%d/%y")
    if node is not None:
        return (
            f"{node.ostype or 'Linux'} {node.osrelease} ({node.hostname}) \t{today} \t"
            f"_{node.machine or 'unknown'}_\t({node.cpus or 1} CPU)"
        )
    uname = platform.uname()
    return (
        f"{uname.system} {uname.release} ({socket.gethostname()}) \t{today} \t"
        f"_{uname.machine}_\t({os.cpu_count() or 1} CPU)"
    )


def format_text(report: IostatReport, megabytes: bool = False, model: IostatModel | None = None) -> str:
    """A report as sysstat prints it: header line, one line per device, blank line. With a
    ``model`` (--saturation): a saturation column, then a line per device not ok."""
    names = list(COLUMNS)
    scale = [1.0] * len(COLUMNS)
    if megabytes:
        names[2], names[3] = "rMB/s", "wMB/s"
        scale[2] = scale[3] = 1 / 1024
    header = "Device       " + "".join(f"{name:>{w + 1}}" for name, w in zip(names, COLUMN_WIDTHS))
    if model is not None:
        header += f" {'saturation':<10}"
    lines = [header]
    notes: list[str] = []
    for row in report.rows:
        figures = "".join(f" {value * s:{w}.2f}" for value, s, w in zip(row.values(), scale, COLUMN_WIDTHS))
        line = f"{printable_name(row.device):<13}{figures}"
        if model is not None:
            state = model.devices.get(row.device)
            level = state.level if state is not None else OK
            line += f" {level:<10}"
            if state is not None and level != OK:
                notes.append(f"{'!' if state.flagged else ' '} {state.flag_text()}")
        lines.append(line.rstrip())
    return "\n".join(lines + notes) + "\n\n"


def _iso(wall_time: float) -> str:
    return dt.datetime.fromtimestamp(wall_time).astimezone().isoformat(timespec="seconds")


def format_json(report: IostatReport, model: IostatModel | None = None) -> str:
    """A report as one JSON line (with a model: each device's saturation verdict)."""
    devices: list[dict[str, object]] = []
    for row in report.rows:
        device: dict[str, object] = dict(row.as_dict())
        if model is not None:
            state = model.devices.get(row.device)
            level, reason, since = (state.level, state.saturation_reason, state.verdict.since) if state else (OK, "", 0)
            device["saturation"] = {"level": level, "reason": reason, "since": _iso(since) if level != OK else None}
        devices.append(device)
    return strict_json.dumps(
        {"time": _iso(report.wall_time), "interval_s": round(report.interval_s, 2), "devices": devices}
    )


def run(args: argparse.Namespace) -> int:
    if args.from_paths:
        return run_from_history(args)
    if args.summary:
        print("racperf iostat: --summary judges an archive: give it --from PATH", file=sys.stderr)
        return 2
    try:
        devices, interval, count = _split_positionals(args)
    except UsageError as exc:
        print(f"racperf iostat: {exc}", file=sys.stderr)
        return 2
    roots: list[Path] | None = args.root
    remote: RemoteDiskstats | None = None
    if args.ssh is not None:
        if roots:
            print("racperf iostat: --ssh and --root exclude each other", file=sys.stderr)
            return 2
        try:
            target = SshTarget.parse(args.ssh, identity=args.identity, known_hosts=args.known_hosts)
            remote = RemoteDiskstats(connect(target), remote_root=args.ssh_root)
            remote.refresh(full=True)
        except (ValueError, OSError) as exc:
            if remote is not None:
                remote.close()
            print(f"racperf iostat: {exc}", file=sys.stderr)
            return 2
        roots = [remote.root]
    elif args.identity or args.known_hosts:
        print("racperf iostat: --identity and --known-hosts go with --ssh", file=sys.stderr)
        return 2
    try:
        return _report(args, roots, remote, devices, interval, count)
    except OSError as exc:  # the node went away
        print(f"racperf iostat: {exc}", file=sys.stderr)
        return 1
    finally:
        if remote is not None:
            remote.close()


def _report(
    args: argparse.Namespace,
    roots: list[Path] | None,
    remote: RemoteDiskstats | None,
    devices: list[str],
    interval: float | None,
    count: int | None,
) -> int:
    partitions_all = args.p is not None and "ALL" in args.p.split(",")
    partitions_of = (
        [d for d in args.p.split(",") if d and d != "ALL"] if args.p is not None and not partitions_all else []
    )
    for root in roots if remote is None and roots else []:
        if not root.is_dir():
            print(f"racperf iostat: --root {root}: not a directory", file=sys.stderr)
            return 2
        for name in ("proc/diskstats", "proc/uptime"):
            # what is not a proc file at all (a symlink to /dev/zero) stops here, once;
            # the sampler's reads are bounded the same way every time
            try:
                read_regular_bytes_bounded(root / name)
            except BoundedReadError as exc:
                print(f"racperf iostat: --root {root}: {exc}", file=sys.stderr)
                return 2
            except OSError:
                pass  # missing or unreadable: the sampler says so per report
    sampler = IostatSampler(
        roots,
        partitions=partitions_all,
        dm_names=args.N,
        devices=devices or None,
        skip_idle=args.z,
        partitions_of=partitions_of or None,
    )
    model: IostatModel | None = None
    if args.saturation:
        try:
            rules = SaturationRules.from_env()
        except ValueError as exc:
            print(f"racperf iostat: {exc}", file=sys.stderr)
            return 2
        model = IostatModel(rules, facts_of=sampler.queue_facts)
    if remote is not None:
        roots = None  # one root kept fresh: not a replay
    if interval is None:
        # No interval: one report; with several roots, one per root (a replay).
        count = len(roots) if roots and len(roots) > 1 else 1
    skip_first = args.y and (interval is not None or (roots is not None and len(roots) > 1))
    if skip_first and interval is None:
        count = max(1, (count or 1) - 1)
    out = sys.stdout
    if not args.json:
        out.write(banner(node=remote.node if remote is not None else None) + "\n\n")
    printed = 0
    status = 0
    seen_errors: set[str] = set()
    next_deadline = time.monotonic()
    first = True
    while count is None or printed < count:
        if not first and interval is not None and not sampler.replaying:
            next_deadline += interval
            time.sleep(max(0.0, next_deadline - time.monotonic()))
        if remote is not None and not first:
            remote.refresh()  # the first sample came with the connection
        report = sampler.sample()
        errors = report.errors
        if remote is not None:  # the node's paths, not our temp copy's
            errors = [e.replace(str(remote.root), f"{remote.connection.target.display}:") for e in errors]
        for error in errors:
            status = 1
            if error not in seen_errors:
                seen_errors.add(error)
                print(f"racperf iostat: {error}", file=sys.stderr)
        if model is not None:
            model.update(report, record_history=not report.since_boot)
        if first and skip_first:
            first = False
            continue
        first = False
        out.write(format_json(report, model) + "\n" if args.json else format_text(report, args.m, model))
        out.flush()
        printed += 1
    return status
