"""Programs and Oracle homes on another node vetted as on this machine (core/guard/program_vetting.py):
the same walk and the same judgement, on the node's entries, asked over SSH in POSIX sh with
nothing installed there (stat, readlink, id, command -v). Each round is one command; a walk
that meets an entry not yet asked (a symlink leading elsewhere) asks again, with the way to
every link's target met so far, at most :data:`MAX_ROUNDS` times. Trusted there: root and the
login's user.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TypeVar

from racperf_tui.core.contract.hosts import Host
from racperf_tui.core.guard.private_dirs import vet_private_directory
from racperf_tui.core.guard.program_vetting import Entry, PathFacts, UntrustedPath, Vetted, Vetter

T = TypeVar("T")

#: commands a judgement may take before it gives up: each follows every symlink met a step
#: further (a venv's python -> python3 -> /usr/bin/python3 -> python3.11 is 4), and the kernel
#: itself follows at most 40
MAX_ROUNDS = 40
_TIMEOUT_S = 30.0

#: $@: paths (lstat'ed) and which:NAME (looked up on the login's PATH); NUL-separated records
_FACTS_SH = r"""
export LC_ALL=C
printf 'u\0%s\0' "$(id -u)"
for p in "$@"; do
  case $p in
  which:*) n=${p#which:}; printf 'w\0%s\0%s\0' "$n" "$(command -v "$n" 2>/dev/null)" ;;
  *)
    if s=$(stat -c '%u %f %U' -- "$p" 2>/dev/null); then
      l=; if [ -L "$p" ]; then l=$(readlink -- "$p"); fi
      printf 'e\0%s\0%s\0%s\0' "$p" "$s" "$l"
    else
      printf 'x\0%s\0' "$p"
    fi ;;
  esac
done
"""


class _Unknown(Exception):
    """The walk needs an entry the node was not asked for yet."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _prefixes(path: str) -> list[str]:
    parts = [p for p in path.split("/") if p]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


class NodePathFacts(PathFacts):
    """A node's entries as far as asked; an entry not asked raises :class:`_Unknown`."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.where = f" on {host.name}"
        self.entries: dict[str, Entry | None] = {}
        self.links: dict[str, str] = {}
        self.names: dict[int, str] = {}
        self.found: dict[str, str] = {}
        self.login_uid: int | None = None

    def ask(self, questions: Iterable[str]) -> None:
        wanted = [q for q in dict.fromkeys(questions) if q not in self.entries and q not in self.found]
        answer = self.host.run_briefly(["sh", "-c", _FACTS_SH, "racperf-vet", "/", *wanted], _TIMEOUT_S)
        if answer.returncode != 0:
            raise UntrustedPath(
                f"could not examine programs on {self.host.name}: {(answer.stderr or '').strip()[:200]}"
            )
        fields = answer.stdout.split("\0")
        i = 0
        while i < len(fields) and fields[i]:
            kind = fields[i]
            if kind == "u":
                self.login_uid = int(fields[i + 1])
                i += 2
            elif kind == "w":
                self.found[f"which:{fields[i + 1]}"] = fields[i + 2]
                i += 3
            elif kind == "e":
                uid, mode, name = fields[i + 2].split(" ", 2)
                self.entries[fields[i + 1]] = Entry(int(uid), int(mode, 16))
                self.names[int(uid)] = name
                if fields[i + 3]:
                    self.links[fields[i + 1]] = fields[i + 3]
                i += 4
            elif kind == "x":
                self.entries[fields[i + 1]] = None
                i += 2
            else:
                raise UntrustedPath(f"could not examine programs on {self.host.name}: unexpected answer {kind!r}")

    def _link_targets(self) -> list[str]:
        """The way to every link's target known so far (asked ahead: a chain of links costs a
        round a link, not a round a component)."""
        found = []
        for link, target in self.links.items():
            joined = target if target.startswith("/") else f"{link.rsplit('/', 1)[0]}/{target}"
            found += _prefixes(os.path.normpath(joined))
        return found

    def lstat(self, path: str) -> Entry:
        if path not in self.entries:
            raise _Unknown(path)
        entry = self.entries[path]
        if entry is None:
            raise FileNotFoundError(f"{path}: no such file on {self.host.name}")
        return entry

    def readlink(self, path: str) -> str:
        return self.links[path]

    def owners(self) -> frozenset[int]:
        return frozenset({0} if self.login_uid is None else {0, self.login_uid})

    def user_name(self, uid: int) -> str:
        return self.names.get(uid, f"uid {uid}")

    def settle(self, judge: Callable[[], T], first: Iterable[str]) -> T:
        """``judge()`` once every entry it walks has been asked (each round one command)."""
        self.ask(first)
        for _ in range(MAX_ROUNDS):
            try:
                return judge()
            except _Unknown as unknown:
                self.ask(_prefixes(unknown.path) + self._link_targets())
        raise UntrustedPath(f"could not examine programs on {self.host.name}: more than {MAX_ROUNDS} rounds")


class NodeVetter(Vetter):
    """:class:`Vetter` on another node: a bare program name is looked up on the login's PATH."""

    def __init__(self, host: Host) -> None:
        self.node_facts = NodePathFacts(host)
        super().__init__(self.node_facts)

    def program(self, program: str, what: str) -> Vetted:
        facts = self.node_facts
        if "/" not in program:
            facts.ask([f"which:{program}"])
            found = facts.found.get(f"which:{program}", "")
            if not found.startswith("/"):
                raise FileNotFoundError(f"{program}: not found on PATH on {facts.host.name}")
            program = found
        path = program
        return facts.settle(lambda: Vetter.program(self, path, what), _prefixes(path))

    def tree(self, directory: str, what: str, subdirectories: Iterable[str] = ()) -> str:
        subs = list(subdirectories)
        first = _prefixes(directory) + [f"{directory.rstrip('/')}/{s}" for s in subs]
        return self.node_facts.settle(lambda: Vetter.tree(self, directory, what, subs), first)

    def path(self, path: str, what: str) -> str:
        return self.node_facts.settle(lambda: Vetter.path(self, path, what), _prefixes(path))

    def private_directory(self, path: str, what: str) -> str:
        """core/guard/private_dirs.py's judgement of a directory on the node (its run
        directories): UntrustedPath naming the path, owner and mode there."""
        return self.node_facts.settle(lambda: vet_private_directory(path, what, self.facts), _prefixes(path))
