"""``racperf parse TOOL FILE...``: saved tool output -> result JSON on stdout.

Exit status: 0 when every file gave a result, 1 when one was not the tool's output, 2 when one
could not be read (missing, a device, a file of /proc, /sys or another kernel file system, a
FIFO nobody writes to, a pipe silent for ``--wait`` seconds, larger than the cap). Warnings (lines skipped: too long,
impossible figures) go to stderr as ``racperf parse TOOL: FILE: line N: ...`` and stay in the
result's ``"warnings"``. Output is strict JSON (no NaN / Infinity).
A tool module with ``parse_path(path)`` reads the path itself (ORION: a run directory with its
result files, a summary file and its siblings, or captured stdout); the others get the text.
"""

from __future__ import annotations

import argparse
import json
import stat
import sys
from pathlib import Path

from racperf_tui.core.textio import strict_json
from racperf_tui.core.textio.bounded_read import (
    DEFAULT_LIMIT_BYTES,
    IDLE_TIMEOUT_S,
    BoundedReadError,
    read_stream_bounded,
    read_text_bounded,
    refuse_kernel_file,
)
from racperf_tui.tools import load_tool, tool_modules

_LIMIT_MIB = DEFAULT_LIMIT_BYTES // (1024 * 1024)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tool",
        type=lambda text: text.replace("-", "_"),
        choices=sorted(tool_modules()),
        help="which tool wrote the output (calibrate-io and calibrate_io alike)",
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help=f"saved output ('-' for stdin); at most {_LIMIT_MIB} MiB each, a regular "
        "file or a pipe (devices, kernel files of /proc and /sys, FIFOs nobody writes to are "
        "refused); orion: also a run directory",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=IDLE_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up on a pipe silent this long (default {IDLE_TIMEOUT_S:g})",
    )
    parser.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")


def run(args: argparse.Namespace) -> int:
    module = load_tool(args.tool)
    status = 0
    parse_path = getattr(module, "parse_path", None)
    for name in args.files:
        try:
            if name != "-" and callable(parse_path) and not stat.S_ISFIFO(refuse_kernel_file(name).st_mode):
                result = parse_path(Path(name))
                print(strict_json.dumps(result, indent=args.indent, sort_keys=False))
                continue
            if name == "-":
                data = read_stream_bounded(sys.stdin.buffer, DEFAULT_LIMIT_BYTES, "stdin", args.wait)
                text = data.decode("utf-8", "replace")
            else:
                text = read_text_bounded(name, DEFAULT_LIMIT_BYTES, idle_timeout_s=args.wait)
        except BoundedReadError as exc:  # its message names the file and the reason
            print(f"racperf parse: {exc}", file=sys.stderr)
            status = max(status, 2)
            continue
        except OSError as exc:
            print(f"racperf parse: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
            status = max(status, 2)
            continue
        except ValueError as exc:
            print(f"racperf parse {args.tool}: {name}: {exc}", file=sys.stderr)
            status = 1
            continue
        try:
            result = module.parse_output(text)
            printed = json.dumps(result, indent=args.indent, sort_keys=False, allow_nan=False)
        except ValueError as exc:  # the parsers' own errors say what and where
            print(f"racperf parse {args.tool}: {name}: {exc}", file=sys.stderr)
            status = max(status, 1)
            continue
        except Exception as exc:  # a parser bug must still not end in a traceback
            print(
                f"racperf parse {args.tool}: {name}: cannot parse ({type(exc).__name__}: {exc}); "
                "please report this with the file",
                file=sys.stderr,
            )
            status = max(status, 1)
            continue
        for warning in (result.get("warnings") or []) if isinstance(result, dict) else []:
            print(f"racperf parse {args.tool}: {name}: {warning}", file=sys.stderr)
        print(printed)
    return status
