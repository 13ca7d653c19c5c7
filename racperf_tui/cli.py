"""The one entry point, ``racperf``: the dashboard by default, subcommands for headless use.

Subcommand modules live in ``racperf_tui.commands`` and are imported only when used, so
``racperf iostat`` never loads textual.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from racperf_tui.core.paths import use_data_dir

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "iostat": ("racperf_tui.commands.iostat", "iostat -x computed from /proc/diskstats"),
    "run": ("racperf_tui.commands.run", "run a benchmark headless, one JSON line per sample"),
    "runs": ("racperf_tui.commands.runs", "list, show and export recorded runs"),
    "report": ("racperf_tui.commands.report", "one HTML or Markdown file of recorded runs, for a vendor or a sign-off"),
    "parse": ("racperf_tui.commands.parse", "parse saved tool output into result JSON"),
    "probe": ("racperf_tui.commands.probe", "built-in network probe (server / client)"),
    "pair": ("racperf_tui.commands.pair", "both ends of a network test, here or on nodes: server, then client"),
    "nodes": ("racperf_tui.commands.nodes", "the cluster's nodes: reachable, logged into, what is installed"),
    "sweep": ("racperf_tui.commands.sweep", "walk fio's load up to the knee, or find it in fio JSON outputs"),
    "matrix": ("racperf_tui.commands.matrix", "the interconnect matrix: every node to every other, a verdict each"),
    "check-target": ("racperf_tui.commands.check_target", "would writing to this file/device destroy data?"),
}


def _replay_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="racperf replay",
        description="Play recorded runs back through their live views: pause, step, jump, speed; "
        "two runs side by side in lock-step; either end of a network pair through the Network tab's "
        "live display. Nothing runs.",
    )
    parser.add_argument(
        "run_ids", metavar="ID", type=int, nargs="*", help="one run (a pair's end: the pair), or two side by side"
    )
    parser.add_argument("--group", type=int, metavar="ID", default=None, help="a run group instead (its group view)")
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed (default 1: as recorded)")
    parser.add_argument("--data-dir", metavar="DIR", default=None, help="where runs are stored")
    return parser


def _replay(argv: list[str]) -> int:
    """``racperf replay ID [ID] [--speed N]``: the UI, so here and not in commands/."""
    parser = _replay_parser()
    args = parser.parse_args(argv)
    if len(args.run_ids) > 2 or (args.group is None) == (not args.run_ids):
        parser.error("one run, or two side by side, or --group ID")
    if args.speed <= 0:
        parser.error(f"--speed must be > 0, got {args.speed:g}")
    use_data_dir(args.data_dir)
    problem, pair = _unreplayable(args.run_ids, args.group, args.data_dir)
    if problem:
        print(f"racperf replay: {problem}", file=sys.stderr)
        return 1
    from racperf_tui.ui.replay_app import ReplayApp

    run_ids = list(pair) if pair else args.run_ids
    app = ReplayApp(run_ids, data_dir=args.data_dir, speed=args.speed, group_id=args.group, pair=bool(pair))
    app.run()
    return app.return_code or 0


def _unreplayable(run_ids: list[int], group_id: int | None, data_dir: str | None) -> tuple[str, tuple[int, ...]]:
    """Why these runs (or this group) cannot be replayed ('' if they can), said before the
    screen opens; and (server, client) when they are a network pair's: one end, or both."""
    from racperf_tui.core.paths import resolve_data_dir
    from racperf_tui.core.store import GroupNotFound, Store
    from racperf_tui.orchestration.pair_runs import recorded_pair
    from racperf_tui.ui.replay_data import read_pair_recording

    with Store.open(resolve_data_dir(data_dir)) as store:
        if group_id is not None:
            try:
                store.get_group(group_id)
            except GroupNotFound:
                return f"no run group {group_id} in the store", ()
            run_ids = [run.id for run in store.group_runs(group_id)]
            if not run_ids:
                return f"run group {group_id} has no runs: nothing to replay", ()
        else:
            try:
                ends = recorded_pair(store, run_ids[0])
            except ValueError as error:
                return str(error), ()
            if ends is not None and {run.id for run in ends} >= set(run_ids):
                # a pair's end (or both ends): the pair, through the Network tab's display
                try:
                    read_pair_recording(store, run_ids[0])
                except ValueError as error:
                    return str(error), ()
                return "", (ends[0].id, ends[1].id)
        for run_id in run_ids:
            try:
                run = store.get_run(run_id)
            except KeyError:
                return f"no run {run_id} in the store", ()
            if not run.state.finished:
                return f"run {run_id} is still {run.state.value}: watch it live in the Runs tab", ()
            if store.last_sample(run_id) is None:
                return f"run {run_id} ({run.tool}, {run.state.value}) recorded no samples: nothing to replay", ()
    return "", ()


def _archive(paths: list[str], speed: float) -> int:
    """``racperf --from PATH...``: the archive read first (its problems said on stderr), then
    its Disks tab and timeline."""
    if speed <= 0:
        print(f"racperf: --speed must be > 0, got {speed:g}", file=sys.stderr)
        return 2
    from pathlib import Path

    from racperf_tui.core.disks.history.playback import ArchivePlayback

    print(f"racperf: reading {' '.join(paths)} ...", file=sys.stderr)
    playback = ArchivePlayback.read([Path(p) for p in paths])
    for problem in playback.problems[:20]:
        print(f"racperf: {problem}", file=sys.stderr)
    if len(playback.problems) > 20:
        print(f"racperf: ... and {len(playback.problems) - 20} more problems", file=sys.stderr)
    if not playback.frames:
        print(f"racperf: no iostat report in {' '.join(paths)}", file=sys.stderr)
        return 1
    from racperf_tui.ui.archive_app import ArchiveApp

    app = ArchiveApp(playback, " ".join(paths), speed=speed)
    app.run()
    return app.return_code or 0


def _dashboard_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="racperf",
        description="Live storage and interconnect benchmarking for Oracle RAC / database nodes. "
        "Without a subcommand, starts the dashboard.",
        epilog="subcommands: "
        + "; ".join(f"{k}: {v[1]}" for k, v in SUBCOMMANDS.items())
        + "; replay: play recorded runs back through their live views"
        + ". 'racperf SUBCOMMAND --help' for each.",
    )
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        default=None,
        help="read proc/ and sys/ under DIR instead of / (kept updated by something else)",
    )
    parser.add_argument("--interval", type=float, default=1.0, help="refresh interval in seconds (default 1)")
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="where runs are stored (default $RACPERF_DATA_DIR or ~/.local/share/racperf)",
    )
    parser.add_argument(
        "--cluster",
        metavar="FILE",
        default=None,
        help="the Cluster tab's nodes (default: ~/.config/racperf/cluster.toml)",
    )
    parser.add_argument(
        "--from",
        dest="from_paths",
        metavar="PATH",
        nargs="+",
        default=None,
        help="the Disks tab on saved iostat -x / sar -d text or an OSWatcher/ExaWatcher archive, "
        "with a timeline (read only: nothing is started)",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="--from: playback speed (default 1)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a subcommand, or start the dashboard."""
    try:
        return _dispatch(argv)
    except BrokenPipeError:
        # the reader went away (`racperf run fio --help | head`): stdout to /dev/null, as
        # Python's signal docs advise, so the flush at exit does not raise a second time
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _dispatch(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "replay":
        return _replay(argv[1:])
    if argv and argv[0] in SUBCOMMANDS:
        module_name, help_text = SUBCOMMANDS[argv[0]]
        module = importlib.import_module(module_name)
        parser = argparse.ArgumentParser(prog=f"racperf {argv[0]}", description=help_text)
        module.add_arguments(parser)
        args = parser.parse_args(argv[1:])
        # racperf's known_hosts and settings, and every supervisor started, follow --data-dir
        use_data_dir(getattr(args, "data_dir", None))
        try:
            return int(module.run(args) or 0)
        except KeyboardInterrupt:
            return 130
    args = _dashboard_parser().parse_args(argv)
    if args.version:
        from racperf_tui import __version__

        print(f"racperf {__version__}")
        return 0
    if args.from_paths:
        return _archive(args.from_paths, args.speed)
    use_data_dir(args.data_dir)
    from racperf_tui.ui.app import RacperfApp

    app = RacperfApp(roots=args.root, interval_s=args.interval, data_dir=args.data_dir, cluster=args.cluster)
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
