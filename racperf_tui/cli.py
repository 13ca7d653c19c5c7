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


def _dashboard_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="racperf",
        description="Live storage and interconnect benchmarking for Oracle RAC / database nodes. "
        "Without a subcommand, starts the dashboard.",
        epilog="subcommands: "
        + "; ".join(f"{k}: {v[1]}" for k, v in SUBCOMMANDS.items())
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
    use_data_dir(args.data_dir)
    from racperf_tui.ui.app import RacperfApp

    app = RacperfApp(roots=args.root, interval_s=args.interval, data_dir=args.data_dir, cluster=args.cluster)
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
