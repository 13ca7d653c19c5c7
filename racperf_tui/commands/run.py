"""``racperf run TOOL [--data-dir D] [--destructive] [--target T] -- TOOL_ARGS...``

Runs a benchmark headless, recorded in the store like any run, and prints one JSON object per
line: ``{"type": "sample", "t": ..., "metrics": {...}}`` per sample, then
``{"type": "result", "run_id": N, "state": ..., "message": ..., "result": {...}}``.

Exit status: 0 the tool succeeded (judged by the tool, not only its exit status); 1 it failed;
2 the configuration was refused (the reason on stderr); 127 the tool is not installed (with
the install command); 130 stopped by a signal (SIGINT / SIGTERM / SIGHUP stop it cleanly).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from racperf_tui.core.events import RunState, Sample


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", metavar="DIR", default=None,
                        help="where runs are stored (default $RACPERF_DATA_DIR or ~/.local/share/racperf)")
    parser.add_argument("--destructive", action="store_true",
                        help="allow a write workload on a device that carries data")
    parser.add_argument("--target", metavar="T", default=None,
                        help="the file, directory or device the benchmark works on")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options, TOOL, then everything after the first '--' is the tool's, untouched."""
    _add_options(parser)
    parser.add_argument("tool", help="the benchmark tool (fio, iperf3, ...)")
    parser.add_argument("tool_args", nargs="*", metavar="-- TOOL_ARGS",
                        help="arguments for the tool, after '--' (passed on untouched)")
    # argparse cannot be told that '--' ends OUR options after a positional (it errors, or
    # strips the '--' and then cannot tell the tool's '--target' from ours): split it here
    plain_parse = parser.parse_args

    def parse_args(argv: list[str] | None = None, namespace: Any = None) -> argparse.Namespace:
        argv = list(sys.argv[1:] if argv is None else argv)
        tool_args: list[str] = []
        if "--" in argv:
            tool_args = argv[argv.index("--") + 1:]
            argv = argv[:argv.index("--")]
        args = plain_parse(argv, namespace)
        args.tool_args = list(args.tool_args) + tool_args
        return args

    parser.parse_args = parse_args  # type: ignore[method-assign]


def _finite(value: Any) -> Any:
    """JSON has no NaN/Infinity: print them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _print_json(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(_finite(obj), separators=(", ", ": ")) + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    """Run the tool in the foreground under the supervisor; exit status as documented above."""
    from racperf_tui.core.paths import resolve_data_dir
    from racperf_tui.core.runs import ToolNotFound, run_foreground
    from racperf_tui.core.store import Store, StoreError

    config: dict[str, Any] = {
        "extra_args": list(args.tool_args),
        "destructive": bool(args.destructive),
        "target": args.target,
    }
    try:
        data_dir = resolve_data_dir(args.data_dir)
    except OSError as exc:
        print(f"racperf run: {exc}", file=sys.stderr)
        return 2

    def on_sample(sample: Sample) -> None:
        _print_json({"type": "sample", "t": round(sample.t, 6), "metrics": sample.metrics})

    from racperf_tui.core.process import set_child_subreaper

    set_child_subreaper()  # this short-lived process reaps the benchmark's orphans itself
    try:
        record = run_foreground(args.tool, config, data_dir, on_sample, target=args.target)
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

    with Store.open(data_dir) as store:
        result = store.result(record.id)
    _print_json({"type": "result", "run_id": record.id, "state": record.state.value,
                 "exit_status": record.exit_status, "message": record.message, "result": result})
    if record.state is RunState.SUCCEEDED:
        return 0
    if record.state is not RunState.STOPPED and record.message:
        print(f"racperf run {args.tool}: {record.state.value}: {record.message}", file=sys.stderr)
    return 130 if record.state is RunState.STOPPED else 1
