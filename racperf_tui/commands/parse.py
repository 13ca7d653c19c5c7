"""``racperf parse TOOL FILE...``: saved tool output -> result JSON on stdout.

A tool module with ``parse_path(path)`` reads the path itself (ORION: a run directory with its
result files, a summary file and its siblings, or captured stdout); the others get the text."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from racperf_tui.tools import load_tool, tool_modules


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool", choices=sorted(tool_modules()), help="which tool wrote the output")
    parser.add_argument("files", nargs="+", metavar="FILE", help="saved output ('-' for stdin); orion: also a run directory or a result file")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")


def run(args: argparse.Namespace) -> int:
    module = load_tool(args.tool)
    status = 0
    parse_path = getattr(module, "parse_path", None)
    for name in args.files:
        try:
            if name != "-" and callable(parse_path):
                result = parse_path(Path(name))
                print(json.dumps(result, indent=args.indent, sort_keys=False))
                continue
            text = sys.stdin.read() if name == "-" else Path(name).read_text(errors="replace")
        except OSError as exc:
            print(f"racperf parse: cannot read {name}: {exc.strerror}", file=sys.stderr)
            status = 2
            continue
        except ValueError as exc:
            print(f"racperf parse {args.tool}: {name}: {exc}", file=sys.stderr)
            status = 1
            continue
        try:
            result = module.parse_output(text)
        except ValueError as exc:
            print(f"racperf parse {args.tool}: {name}: {exc}", file=sys.stderr)
            status = 1
            continue
        print(json.dumps(result, indent=args.indent, sort_keys=False))
    return status
