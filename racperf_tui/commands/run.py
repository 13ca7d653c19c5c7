"""``racperf run TOOL [--data-dir D] [--destructive] [--target T] [--set KEY=VALUE]...
[--ssh [USER@]HOST[:PORT] | --node NAME... | --nodes all|A,B] [-- FIO_ARGS...]``

``--ssh`` / ``--node`` run it on another node over SSH (docs/CLUSTER.md): recorded here, the
node's name in the store's host column, its output streamed back.

Several ``--node`` (or ``--nodes``) run it on every node at once as a run group
(orchestration/run_groups.py, docs/CLUSTER.md): first ``{"type": "group", "group_id", "runs":
{NODE: RUN_ID}, "left_out": {NODE: WHY}}``, then each node's samples as above with ``"node"``
and ``"run_id"``, per wall-clock second ``{"type": "total", "interval": N, "at": EPOCH_S,
"nodes": [...], "metrics": {...}}`` (what the nodes did in that same second: IOPS and
bandwidth summed, latency weighted by IOPS; orchestration/group_alignment.py), then one
``result`` line per node (with ``"node"``) and ``{"type": "group_result", "group_id",
"states", "start_skew_s", "total", "left_out"}`` (``total``: the nodes' results added up).
The runs are detached: a signal here stops them all; a kill -9 of this process leaves them
running (``racperf runs stop`` each).

fio takes its own options after ``--``, untouched. Every tool (fio too) takes config keys with
``--set KEY=VALUE``: the pair tools (iperf3, probe, oratcptest, netperf) are configured that
way only, e.g. ``racperf run iperf3 --set host=10.0.0.2 --set duration_s=30``.

Runs a benchmark headless, recorded in the store like any run, and prints one JSON object per
line: ``{"type": "sample", "t": ..., "interval_s": ..., "metrics": {...}}`` per sample
(``interval_s``: the time the sample covers, where the tool says; fio's last sample covers a
partial interval, so a mean of rates over a run weights by it), then
``{"type": "result", "run_id": N, "state": ..., "message": ..., "result": {...}}``.

Exit status: 0 the tool succeeded (judged by the tool, not only its exit status); 1 it failed;
2 the configuration was refused (the reason on stderr; a group: refused on any node, nothing
started); 3 the node cannot be reached or logged into (why, in one line with its name; a group:
a node left out, the others ran and succeeded, or none reached); 127 the tool is not installed (with the install
command); 130 stopped by a signal (SIGINT / SIGTERM / SIGHUP stop it cleanly).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.tool import parse_setting
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.process import set_child_subreaper
from racperf_tui.core.remote.cluster import ClusterFileError, Node, add_node_arguments, nodes_from_args
from racperf_tui.core.store import Store, StoreError
from racperf_tui.core.textio import strict_json
from racperf_tui.orchestration.remembered import remember_for_run
from racperf_tui.orchestration.run_groups import (
    GroupEvent,
    GroupFollower,
    GroupRefused,
    ended_early,
    in_node_order,
    launch_group,
    node_figures,
    result_total,
    start_skew_s,
    stop_group,
)
from racperf_tui.orchestration.runs import ToolNotFound, run_foreground
from racperf_tui.tools import tool_description, tool_modules
from racperf_tui.tools.base import RUN_LEVEL_KEYS


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="where runs are stored (default $RACPERF_DATA_DIR or ~/.local/share/racperf)",
    )
    parser.add_argument(
        "--destructive", action="store_true", help="allow a write workload on a device that carries data"
    )
    parser.add_argument(
        "--target",
        metavar="T",
        default=None,
        help="the file, directory or device the benchmark works on (fio: its "
        "--filename / --directory are taken when this is not given)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="settings",
        help="an option of the tool (repeatable); 'racperf run TOOL --help' lists them with their kinds and defaults",
    )
    add_node_arguments(parser, several=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options, TOOL, then everything after the first '--' is the tool's, untouched."""
    _add_options(parser)
    parser.add_argument("tool", help=f"the benchmark tool: {', '.join(sorted(tool_modules()))}")
    parser.add_argument(
        "tool_args",
        nargs="*",
        metavar="-- FIO_ARGS",
        help="fio's own options, after '--' (passed on untouched; fio only)",
    )
    parser.epilog = (
        "examples: racperf run fio -- --name=oltp --filename=/u02/fio.dat --size=1g "
        "--rw=randrw --bs=8k --runtime=60 --time_based;  racperf run iperf3 --set "
        "host=10.0.0.2 --set duration_s=30;  racperf run probe --set host=10.0.0.2 "
        "--set mode=ASYNC"
    )
    # argparse cannot be told that '--' ends OUR options after a positional (it errors, or
    # strips the '--' and then cannot tell the tool's '--target' from ours): split it here
    plain_parse = parser.parse_args

    def parse_args(argv: list[str] | None = None, namespace: Any = None) -> argparse.Namespace:
        argv = list(sys.argv[1:] if argv is None else argv)
        tool_args: list[str] = []
        if "--" in argv:
            tool_args = argv[argv.index("--") + 1 :]
            argv = argv[: argv.index("--")]
        named = _tool_named(argv)
        if named is not None and any(a in ("-h", "--help") for a in argv):
            parser.print_help()
            try:
                print("\n" + tool_description(named).options_help())
            except KeyError as exc:
                print(f"\n{exc.args[0] if exc.args else exc}")
            parser.exit(0)
        args = plain_parse(argv, namespace)
        args.tool_args = list(args.tool_args) + tool_args
        return args

    parser.parse_args = parse_args  # type: ignore[method-assign, assignment]


_OPTIONS_WITH_VALUES = frozenset(
    {"--data-dir", "--target", "--set", "--ssh", "--node", "--nodes", "--identity", "--known-hosts", "--cluster"}
)


def _tool_named(argv: list[str]) -> str | None:
    """The TOOL positional of ``racperf run`` arguments (before '--'), if any."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _OPTIONS_WITH_VALUES:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def fio_target_from_args(tool_args: list[str]) -> str | None:
    """What fio's own options name as the target (``--filename`` / ``--directory``), for the
    runs table; None when they name none."""
    for name in ("filename", "directory"):
        for index, arg in enumerate(tool_args):
            if arg.startswith(f"--{name}="):
                return arg.split("=", 1)[1] or None
            if arg == f"--{name}" and index + 1 < len(tool_args):
                return tool_args[index + 1]
    return None


#: keys the run machinery reads, whatever the tool
_RUN_LEVEL_KEYS = RUN_LEVEL_KEYS | {"destructive", "destructive_targets", "hard_limit_s"}


def tool_config(
    tool: str, tool_args: list[str], settings: list[str], destructive: bool, target: str | None
) -> dict[str, Any]:
    """The run config from the command line, each --set key checked against the tool's
    declared options; ValueError (or KeyError for an unknown tool) says what is wrong."""
    description = tool_description(tool)
    if not description.takes_raw_args and tool_args:
        raise ValueError(
            f"{tool} takes its settings as --set KEY=VALUE (e.g. racperf run {tool} "
            f"--set host=10.0.0.2 --set duration_s=30), not as options after '--' "
            f"(got {' '.join(tool_args)!r}); see 'racperf run {tool} --help'"
        )
    config: dict[str, Any] = {}
    if description.takes_raw_args:
        config = {"extra_args": list(tool_args), "destructive": bool(destructive), "target": target}
    elif destructive:
        config["destructive"] = True
    config.update(description.settings_to_config([parse_setting(text) for text in settings], _RUN_LEVEL_KEYS))
    if not description.takes_raw_args and target is not None:
        config["target"] = target
    return config


def _discard(stream: Any) -> None:
    """A stream that can no longer be written (a terminal that hung up gives EIO, a closed pipe
    EPIPE) goes to /dev/null, so what is still buffered in it does not raise again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _print_json(obj: dict[str, Any]) -> None:
    """One line to stdout. OSError when it cannot be written (stdout is then discarded): the
    supervisor takes that as the consumer gone and stops the run cleanly."""
    try:
        sys.stdout.write(strict_json.dumps(obj, separators=(", ", ": ")) + "\n")
        sys.stdout.flush()
    except OSError:
        _discard(sys.stdout)
        raise


def _say_error(text: str) -> None:
    """A line to stderr, which may be a terminal that hung up: dropped when it cannot go."""
    try:
        print(text, file=sys.stderr, flush=True)
    except OSError:
        _discard(sys.stderr)


#: the node could not be reached or logged into
EXIT_UNREACHABLE = 3


def run(args: argparse.Namespace) -> int:
    """Run the tool in the foreground under the supervisor; exit status as documented above."""

    try:
        config = tool_config(args.tool, list(args.tool_args), list(args.settings), args.destructive, args.target)
    except KeyError as exc:
        print(f"racperf run: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"racperf run {args.tool}: {exc}", file=sys.stderr)
        return 2
    try:
        nodes = nodes_from_args(args)
    except ClusterFileError as exc:
        print(f"racperf run: {exc}", file=sys.stderr)
        return 2
    node = nodes[0]
    target = args.target
    if target is None and args.tool == "fio":
        target = fio_target_from_args(list(args.tool_args))
    try:
        data_dir = resolve_data_dir(args.data_dir)
    except OSError as exc:
        print(f"racperf run: {exc}", file=sys.stderr)
        return 2
    if node.is_local:  # what is remembered is this machine's
        try:
            remember_for_run(args.tool, config, data_dir)
        except ValueError as exc:  # a corrupt settings file: named, not a traceback
            print(f"racperf run {args.tool}: {exc}", file=sys.stderr)
            return 2

    if len(nodes) > 1 or getattr(args, "nodes", None) is not None:
        return _run_group(args.tool, config, nodes, target, data_dir)

    def on_sample(sample: Sample) -> None:
        _print_json(sample.to_json())

    set_child_subreaper()  # this short-lived process reaps the benchmark's orphans itself
    try:
        record = run_foreground(args.tool, config, data_dir, on_sample, target=target, node=node)
    except ToolNotFound as exc:
        print(f"racperf run: {exc}", file=sys.stderr)
        return 127
    except ValueError as exc:
        print(f"racperf run {args.tool}: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"racperf run: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"racperf run: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the node cannot be reached (SshError says why, in one line)
        print(f"racperf run {args.tool}: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE

    with Store.open(data_dir) as store:
        result = store.result(record.id)
    try:
        _print_json(
            {
                "type": "result",
                "run_id": record.id,
                "state": record.state.value,
                "exit_status": record.exit_status,
                "message": record.message,
                "result": result,
            }
        )
    except OSError:
        pass  # nobody to tell (the terminal hung up): the run and its result are in the store
    if record.state is RunState.SUCCEEDED:
        return 0
    if record.state is not RunState.STOPPED and record.message:
        _say_error(f"racperf run {args.tool}: {record.state.value}: {record.message}")
    return 130 if record.state is RunState.STOPPED else 1


def _run_group(tool: str, config: dict[str, Any], nodes: list[Node], target: str | None, data_dir: Any) -> int:
    """The tool on every node at once (a run group), followed from the store until every
    node's run ended; SIGINT / SIGTERM / SIGHUP stop them all."""
    try:
        started = launch_group(tool, config, nodes, data_dir=data_dir, target=target)
    except GroupRefused as exc:
        _say_error(f"racperf run {tool}: {exc}")
        return 2
    except StoreError as exc:
        _say_error(f"racperf run: {exc}")
        return 2
    except KeyError as exc:
        _say_error(f"racperf run: {exc.args[0] if exc.args else exc}")
        return 2
    except ValueError as exc:
        _say_error(f"racperf run {tool}: {exc}")
        return 2
    except OSError as exc:  # no node could be reached: every node's reason
        _say_error(f"racperf run {tool}: {exc}")
        return EXIT_UNREACHABLE
    for name, why in started.left_out.items():
        _say_error(f"racperf run {tool}: node {name}: {why} (not started there; the other nodes go on)")
    stopping = threading.Event()

    def stop_all(signum: int, frame: Any) -> None:
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=stop_group, args=(started.group_id, data_dir), daemon=True).start()

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop_all)
    consumer_gone = False

    def say(line: dict[str, Any]) -> None:
        nonlocal consumer_gone
        if consumer_gone:
            return
        try:
            _print_json(line)
        except OSError:  # nobody reads us any more: the runs are stopped, their results kept
            consumer_gone = True
            stop_all(signal.SIGPIPE, None)

    say({"type": "group", "group_id": started.group_id, "runs": started.runs, "left_out": started.left_out})

    def on_event(event: GroupEvent) -> None:
        if event.interval is not None:
            say(event.interval.to_json())
        elif event.sample is not None:
            line = event.sample.to_json()
            line["metrics"] = node_figures(event.sample)
            say({"type": "sample", "node": event.node, "run_id": event.run_id, **line})

    with Store.open(data_dir) as store:
        follower = GroupFollower(store, started.group_id)
        follower.follow(on_event)
        runs = in_node_order(follower.group, store.group_runs(started.group_id))
        results = {run.host: store.result(run.id) for run in runs}
    for run in runs:
        say(
            {
                "type": "result",
                "node": run.host,
                "run_id": run.id,
                "state": run.state.value,
                "exit_status": run.exit_status,
                "message": run.message,
                "result": results[run.host],
            }
        )
        if run.state not in (RunState.SUCCEEDED, RunState.STOPPED) and run.message:
            _say_error(f"racperf run {tool}: node {run.host}: {run.state.value}: {run.message}")
    say(
        {
            "type": "group_result",
            "group_id": started.group_id,
            "states": {run.host: run.state.value for run in runs},
            "start_skew_s": start_skew_s(runs),
            "total": result_total(results, {run.host: run.duration_s for run in runs}, ended_early(runs)),
            "left_out": started.left_out,
        }
    )
    if stopping.is_set() or any(run.state is RunState.STOPPED for run in runs):
        return 130
    if any(run.state is not RunState.SUCCEEDED for run in runs):
        return 1
    return EXIT_UNREACHABLE if started.left_out else 0
