"""A finished fio run: its whole output -> the result dict, and whether it succeeded
(judged by each job's error and the I/O it did, not only fio's exit status)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from racperf_tui.tools.fio import formats as fio_formats


def parse_output(text: str) -> dict[str, Any]:
    """Any saved fio output (JSON, json+, status dumps, text 2.x / 3.x, terse, console log)
    -> result dict (shape in :mod:`racperf_tui.tools.fio.formats`). ValueError when it is
    not fio output."""
    return fio_formats.parse_any(text)


def expected_directions(rw: str) -> tuple[str, ...]:
    """Directions a job with this rw= must have done I/O in."""
    mode = (rw or "").split(":")[0].strip().lower()
    if mode in ("read", "randread"):
        return ("read",)
    if mode in ("write", "randwrite"):
        return ("write",)
    if mode in ("trim", "randtrim"):
        return ("trim",)
    if mode == "trimwrite":
        return ("write",)
    return ()


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """Judge a finished run by each job's error and the I/O it did, not only the exit
    status: fio exits 0 when errors were ignored (continue_on_error) or no I/O happened."""
    if result is None:
        return False, f"fio produced no report (exit status {exit_status})"
    jobs = list(result.get("jobs") or [])
    problems = []
    for job in jobs:
        name = job.get("name", "?")
        error = int(job.get("error", 0) or 0)
        if error:
            # the file is named: an error the kernel gave (EROFS, EACCES) is about one file
            options = job.get("options") or {}
            files = options.get("filename") or options.get("directory")
            problems.append(f"job {name}: error {error} ({os.strerror(error)})" + (f" on {files}" if files else ""))
            continue
        wanted = expected_directions(str(job.get("rw", "")))
        done = {d: float((job.get(d) or {}).get("io_kib", 0) or 0) for d in ("read", "write", "trim")}
        if wanted:
            for d in wanted:
                if done[d] <= 0:
                    problems.append(f"job {name}: no {d} I/O done")
        elif sum(done.values()) <= 0:
            problems.append(f"job {name}: no I/O done")
    if problems:
        return False, "; ".join(problems)
    if not jobs:
        messages = result.get("messages") or []
        detail = f": {messages[-1]}" if messages else ""
        return False, f"fio reported no jobs (exit status {exit_status}){detail}"
    if exit_status != 0:
        return False, f"fio exited with status {exit_status}"
    return True, "ok"
