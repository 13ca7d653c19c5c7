"""``racperf check-target PATH...``: would a write workload on PATH destroy data?

Prints one verdict per path (text, or one JSON object per line with ``--json``) and exits 0
when every path may be written, 3 when at least one is refused.  Reads only; never writes.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from racperf_tui.core import strict_json
from racperf_tui.core.safety import check_write_target, explain

#: Exit status when at least one target is refused (2 is argparse's usage error).
REFUSED_EXIT_STATUS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or block device (any link to one)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line instead of text")
    parser.add_argument("--root", default="/", metavar="DIR", help="read proc/ and sys/ under DIR (default /)")
    parser.epilog = (
        f"Reads only, never writes. Exit status: 0 every PATH may be written; "
        f"{REFUSED_EXIT_STATUS} at least one is refused (the reasons are printed); 2 usage error."
    )


def run(args: argparse.Namespace) -> int:
    status = 0
    for path in args.paths:
        verdict = check_write_target(path, root=Path(args.root))
        if not verdict.allowed:
            status = REFUSED_EXIT_STATUS
        if args.json:
            print(strict_json.dumps(dataclasses.asdict(verdict)), flush=True)
        elif verdict.allowed:
            examined = f" (examined {', '.join(verdict.devices)})" if verdict.devices else ""
            print(f"{path}: may be written{examined}", flush=True)
        else:
            print(explain(verdict), flush=True)
    return status
