"""Directories racperf writes files into and then hands to a benchmark (the data directory, its
``runs/N``, ``logs``; ``~/.racperf/runs`` on a node): they must be racperf's own, or another
user could swap a judged file (``job.fio``) for theirs between racperf's write and the
benchmark's read, and fio would load their engine as root.

A private directory passes when it and every directory on the way to it pass the program
vetting's walk (core/guard/program_vetting.py: owned by root or the user racperf runs as, not
writable by group or others; a sticky ``/tmp`` on the way passes as there) and it is itself not
writable by group or others even when sticky: nobody else may create an entry in it. What is
missing is created 0700 by racperf, under an ancestor that passed, and then judged the same
way (so a name another user made first in a sticky directory is refused, not used).
"""

from __future__ import annotations

import os
import stat

from racperf_tui.core.guard.program_vetting import (
    LOCAL_FACTS,
    PathFacts,
    UntrustedPath,
    describe_entry,
    vet_path,
    writers,
)

#: what another user could do through a data or run directory they can write
SWAPS_FILES = "another user could swap the files racperf writes there before the benchmark reads them"


def vet_private_directory(path: str, what: str, facts: PathFacts = LOCAL_FACTS) -> str:
    """Judge an existing directory (see the module docstring); its real path, or UntrustedPath
    naming the path, its owner and mode (OSError when it is missing)."""
    real = vet_path(path, what, facts, SWAPS_FILES)
    entry = facts.lstat(real)
    if not stat.S_ISDIR(entry.mode):
        raise UntrustedPath(f"{what}: {describe_entry(real, entry, facts)} is not a directory")
    if entry.mode & 0o022:
        raise UntrustedPath(
            f"{what}: {describe_entry(real, entry, facts)} is writable by {writers(entry.mode)}: {SWAPS_FILES}"
            f" (chmod go-w {real}, or name another directory)"
        )
    return real


def make_private_directory(path: str, what: str) -> str:
    """``path`` (absolute) as a private directory of this machine: the missing part created
    0700 (whatever the umask), then the whole judged; its real path, the one to use from then
    on. UntrustedPath or OSError."""
    # as the kernel resolves it: each link before the .. after it (normpath would drop
    # "link/.." and judge a directory other than the one the kernel reaches)
    path = os.path.realpath(path)
    missing = []
    existing = path
    while not os.path.lexists(existing):
        missing.append(existing)
        existing = os.path.dirname(existing)
    if missing:
        vet_path(existing, what, risk=SWAPS_FILES)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass  # made meanwhile: judged below like any other
        else:
            os.chmod(directory, 0o700)  # a umask cannot widen it, an ACL default can: reset
    return vet_private_directory(path, what)
