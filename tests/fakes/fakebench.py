#!/usr/bin/env python3
"""A stand-in benchmark for the supervisor tests: prints ``SAMPLE {json}`` lines at an interval,
optionally spawns grandchildren that stay in its process group (the way fio's workers do),
and ends with ``RESULT {json}``. Options exercise the line reader (huge lines, no final newline,
invalid UTF-8, '\\r' status lines) and the stop path (a final
report on SIGTERM, or ignoring SIGTERM entirely)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

out = sys.stdout.buffer


def emit(data: bytes) -> None:
    out.write(data)
    out.flush()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=3)
    p.add_argument("--interval", type=float, default=0.05)
    p.add_argument("--grandchildren", type=int, default=0, help="sleeping python grandchildren")
    p.add_argument(
        "--escape",
        action="store_true",
        help="grandchildren start their own session, leaving our group (as fio's jobs do)",
    )
    p.add_argument("--pidfile", default=None, help="write our pid and the grandchildren's, one a line")
    p.add_argument("--ignore-term", action="store_true", help="ignore SIGTERM (grandchildren too)")
    p.add_argument("--final-on-term", action="store_true", help="on SIGTERM print FINAL + RESULT, exit 0")
    p.add_argument("--big-line", type=int, default=0, help="print one line of this many bytes first")
    p.add_argument("--no-newline", action="store_true", help="last line (the RESULT) has no newline")
    p.add_argument("--bad-utf8", action="store_true", help="print invalid UTF-8 bytes in a line")
    p.add_argument("--cr", action="store_true", help="terminate SAMPLE lines with '\\r' only")
    p.add_argument("--exit", type=int, default=0, help="exit status")
    p.add_argument("--fail-result", action="store_true", help='RESULT says {"ok": false}')
    p.add_argument("--stderr", default=None, help="print this line on stderr")
    p.add_argument("--stamp", action="store_true", help='SAMPLE carries "sent": wall-clock time')
    p.add_argument("--filler", type=int, default=0, help="this many 100-byte lines before each SAMPLE")
    p.add_argument(
        "--writer",
        default=None,
        metavar="PATH",
        help="a grandchild in its own session (as fio's workers) opens PATH O_WRONLY after "
        "0.3 s, logs the time, and writes 4 KiB of 0xAA at offset 0 only 3 s later",
    )
    p.add_argument("--writer-log", default=None, help="where the writer logs 'opened PID WALLTIME'")
    args = p.parse_args()

    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kids = []
    for _ in range(args.grandchildren):
        code = "import signal,time\n"
        if args.ignore_term:
            code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        code += "time.sleep(600)\n"
        kids.append(subprocess.Popen([sys.executable, "-c", code], start_new_session=args.escape))
    if args.writer:
        code = (
            "import os, sys, time\n"
            "time.sleep(0.3)\n"
            f"fd = os.open({args.writer!r}, os.O_WRONLY)\n"
            f"with open({args.writer_log!r}, 'w') as log:\n"
            "    log.write(f'opened {os.getpid()} {time.time()}\\n')\n"
            "time.sleep(3)\n"
            "os.pwrite(fd, b'\\xaa' * 4096, 0)\n"
            "os.fsync(fd)\n"
            "time.sleep(600)\n"
        )
        kids.append(subprocess.Popen([sys.executable, "-c", code], start_new_session=True))
    if args.pidfile:
        tmp = args.pidfile + ".tmp"
        with open(tmp, "w") as fh:
            fh.write("\n".join(str(x) for x in [os.getpid(), *(k.pid for k in kids)]) + "\n")
        os.replace(tmp, args.pidfile)

    done = {"samples": 0}

    def on_term(signum, frame):
        emit(b"FINAL report after SIGTERM\n")
        emit(b"RESULT " + json.dumps({"ok": True, "samples": done["samples"], "terminated": True}).encode() + b"\n")
        os._exit(0)

    if args.final_on_term:
        signal.signal(signal.SIGTERM, on_term)
    if args.stderr:
        sys.stderr.write(args.stderr + "\n")
        sys.stderr.flush()
    if args.big_line:
        emit(b"B" * args.big_line + b"\n")
    if args.bad_utf8:
        emit(b'SAMPLE {"value": 1.5, "note": 0}\xff\xfe bad bytes\n')
    end = b"\r" if args.cr else b"\n"
    i = 0
    while args.samples < 0 or i < args.samples:
        i += 1
        if args.filler:
            emit((b"." * 99 + b"\n") * args.filler)
        sample = {"value": float(i), "n": i}
        if args.stamp:
            sample["sent"] = time.time()
        emit(b"SAMPLE " + json.dumps(sample).encode() + end)
        done["samples"] = i
        time.sleep(args.interval)
    emit(
        b"RESULT "
        + json.dumps({"ok": not args.fail_result, "samples": i}).encode()
        + (b"" if args.no_newline else b"\n")
    )
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
