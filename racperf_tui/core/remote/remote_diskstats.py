"""A node's disk statistics over one long-lived SSH channel, as a root directory here.

On the node a POSIX-sh loop (only ``sh`` and ``cat`` needed: :data:`SAMPLER_SH`) answers each
request line on its stdin with /proc/uptime and /proc/diskstats and, when asked (``full``), the
sysfs facts the iostat report needs: the entries of /sys/block, which have a ``stat`` file, their
partitions, queue_depth, nr_requests, scheduler, rotational and dm names, plus what sysstat's
banner shows. Sections are delimited by a random mark. The loop ends when the channel closes
(its read reaches EOF), so it never outlives the link.

Here :meth:`RemoteDiskstats.refresh` (or, from a coroutine in the SSH loop,
:class:`AsyncRemoteDiskstats`: ``request``, ``await answer``, ``lay_out``) writes what came
into a private temp root laid out as the node's (ROOT/proc/diskstats, ROOT/proc/uptime,
ROOT/sys/block/NAME/...), so the very same reader (core/disks/diskstats.py) and the iostat sampler
(core/disks/iostat_sampler.py, ``IostatSampler([root])``) turn it into reports: one code path for local,
recorded and remote statistics. A caller that samples every second (the cluster monitor) takes
the answer as :attr:`RemoteDiskstats.raw` instead (``write_proc=False``): /proc/uptime and
/proc/diskstats are not written out and read back each time; only the sysfs facts, re-read
every 30 s, are laid out.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.disks.diskstats import RawSample, parse_uptime_cs
from racperf_tui.core.remote.ssh import AsyncChannel, Channel, Connection, SshError

#: $1 the mark, $2 a root prefix on the node ("" for the live files; tests point it at a tree).
#: A sample's answer is gathered in ``a`` (the sysfs facts in ``s``) and written by one printf:
#: one SSH data packet here instead of 3 to 6 (the sysfs facts: about 15 a device), each of
#: which cost the SSH thread its decryption and dispatch and woke the node's reader
#: (2.0 -> 1.5 ms of CPU a sample; 12 -> 1.9 ms the sysfs facts of 68 devices)
SAMPLER_SH = r"""
m=$1 r=$2
while read -r req; do
  a=$(printf '%s uptime\n' "$m"; cat "$r/proc/uptime" 2>/dev/null || printf '\n%s unreadable\n' "$m"
      printf '%s diskstats\n' "$m"; cat "$r/proc/diskstats" 2>/dev/null || printf '\n%s unreadable\n' "$m")
  if [ "$req" != full ]; then printf '%s\n%s end\n' "$a" "$m"; continue; fi
  printf '%s\n' "$a"
  s=$(
    printf '%s sysfs\n' "$m"
    for d in "$r"/sys/block/*; do
      [ -d "$d" ] || continue
      n=${d##*/}
      printf 'D %s\n' "$n"
      [ -f "$d/stat" ] && printf 'S %s\n' "$n"
      for p in "$d"/*/stat; do
        [ -f "$p" ] || continue
        p=${p%/stat}
        printf 'P %s %s\n' "$n" "${p##*/}"
      done
      for f in device/queue_depth queue/nr_requests queue/scheduler queue/rotational \
               dm/name dm/uuid device/wwid wwid; do
        if [ -r "$d/$f" ] && read -r v < "$d/$f"; then printf 'F %s %s %s\n' "$n" "$f" "$v"; fi
      done
      for e in "$d"/mq/* "$d"/slaves/*; do
        [ -e "$e" ] || continue
        e=${e#"$d"/}
        printf 'L %s %s\n' "$n" "$e"
      done
    done
    printf '%s host\n' "$m"
    for f in kernel/ostype kernel/osrelease kernel/hostname; do
      v=; read -r v < "$r/proc/sys/$f" 2>/dev/null; printf '%s %s\n' "$f" "$v"
    done
    v=; read -r v < "$r/sys/devices/system/cpu/online" 2>/dev/null; printf 'cpus %s\n' "$v"
    printf 'machine %s\n' "$(uname -m 2>/dev/null)"
  )
  printf '%s\n%s end\n' "$s" "$m"
done
"""

#: seconds a sample may take to arrive before the node is declared unresponsive
SAMPLE_TIMEOUT_S = 30.0
#: the sysfs facts are re-read this often (the sampler caches them about as long)
SYSFS_REFRESH_S = 30.0
#: the most one answer may hold (diskstats of 10,000 devices is about 1.5 MB)
MAX_ANSWER_BYTES = 64 << 20
#: dm/uuid, device/wwid (SCSI) and wwid (NVMe) name a LUN the same on every node that sees it
_FACT_FILES = frozenset(
    {
        "device/queue_depth",
        "queue/nr_requests",
        "queue/scheduler",
        "queue/rotational",
        "dm/name",
        "dm/uuid",
        "device/wwid",
        "wwid",
    }
)


@dataclass
class NodeInfo:
    """What sysstat's banner shows, of the node."""

    ostype: str = ""
    osrelease: str = ""
    hostname: str = ""
    machine: str = ""
    cpus: int = 0


def count_cpus(online: str) -> int:
    """CPUs in a sysfs list such as '0-3,8,10-11'."""
    total = 0
    for part in online.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            total += int(high or low) - int(low) + 1
        except ValueError:
            return 0
    return total


def _safe(name: str) -> bool:
    return bool(name) and "/" not in name and name not in (".", "..") and "\0" not in name


class _DiskstatsAnswers:
    """What both ways of reading the channel share: the mark, the temp root, and an answer's
    bytes -> :attr:`raw`, the node's banner facts and its sysfs tree under :attr:`root`."""

    def __init__(self, connection: Connection, *, write_proc: bool) -> None:
        self.connection = connection
        self.write_proc = write_proc
        #: the last answer's /proc files as the iostat sampler takes them (IostatSampler.sample(raw))
        self.raw: RawSample | None = None
        self.mark = "racperf-" + secrets.token_hex(8)
        self.root = Path(tempfile.mkdtemp(prefix="racperf-remote-"))
        (self.root / "proc").mkdir()
        self.node = NodeInfo()
        #: seconds the last answer took (request sent -> last byte here)
        self.last_latency_s = 0.0
        self._last_full = -1e9
        self._last_sysfs: bytes | None = None
        #: the last sysfs answer's lines by device (None: no tree laid out yet)
        self._sysfs_devices: dict[str, list[tuple[str, str]]] | None = None
        self.sysfs_changed = False

    def _command(self, remote_root: str) -> str:
        return (
            f"exec sh -c {shlex.quote(SAMPLER_SH)} racperf-sampler {shlex.quote(self.mark)} "
            f"{shlex.quote(remote_root.rstrip('/'))}"
        )

    def _wants_full(self, full: bool | None) -> bool:
        return time.monotonic() - self._last_full >= SYSFS_REFRESH_S if full is None else full

    def _closed_error(self, why: str) -> SshError:
        return SshError(f"{self.connection.target.display}: the sampling channel closed" + (f": {why}" if why else ""))

    def _timeout_error(self, timeout_s: float) -> SshError:
        return SshError(f"{self.connection.target.display}: no sample within {timeout_s:g} s")

    def _too_large_error(self) -> SshError:
        return SshError(f"{self.connection.target.display}: a sample larger than {MAX_ANSWER_BYTES >> 20} MB")

    def _sections(self, answer: bytes) -> dict[str, bytes | None]:
        """Section name -> its bytes; None for a file the node could not read."""
        head = self.mark.encode() + b" "
        sections: dict[str, bytes | None] = {}
        name = None
        parts: list[bytes] = []
        for line in answer.splitlines(keepends=True):
            if line.startswith(head) and line[len(head) :].strip().isalpha():
                word = line[len(head) :].strip().decode()
                if word == "unreadable":
                    if name is not None:
                        sections[name] = None
                    name = None
                    continue
                if name is not None:
                    sections[name] = b"".join(parts)
                name = word
                parts = []
            elif name is not None:
                parts.append(line)
        if name is not None:
            sections[name] = b"".join(parts)
        return sections

    def _lay_out(self, answer: bytes, full: bool) -> None:
        sections = self._sections(answer)
        self.raw = self._raw_sample(sections)
        for name in ("uptime", "diskstats"):
            if not self.write_proc:
                break
            path = self.root / "proc" / name
            data = sections.get(name)
            if data is not None:
                tmp = path.with_suffix(".new")
                tmp.write_bytes(data)
                os.replace(tmp, path)
            elif path.exists():
                path.unlink()  # not readable there: the reader says so, as for a local file
        sysfs, host = sections.get("sysfs"), sections.get("host")
        #: the last full answer's sysfs facts differed from the one before (laid out anew)
        self.sysfs_changed = False
        if full and sysfs is not None and sysfs != self._last_sysfs:
            # the same facts as 30 s ago are most often the same files: not rewritten
            self._lay_out_sysfs(sysfs.decode("utf-8", "replace"))
            self._last_sysfs = sysfs
            self.sysfs_changed = True
        if full and host is not None:
            fields = dict(line.partition(" ")[::2] for line in host.decode("utf-8", "replace").splitlines())
            self.node = NodeInfo(
                fields.get("kernel/ostype", ""),
                fields.get("kernel/osrelease", ""),
                fields.get("kernel/hostname", ""),
                fields.get("machine", ""),
                count_cpus(fields.get("cpus", "")),
            )

    def _raw_sample(self, sections: dict[str, bytes | None]) -> RawSample:
        """The answer's /proc files as read_raw() reads local ones; errors name the node's file."""
        where = self.connection.target.display
        errors: list[str] = []
        uptime_cs = 0
        uptime = sections.get("uptime")
        if uptime is None:
            errors.append(f"{where}:/proc/uptime: cannot read")
        else:
            text = uptime.decode("ascii", errors="replace")
            try:
                uptime_cs = parse_uptime_cs(text)
            except (ValueError, IndexError):
                errors.append(f"{where}:/proc/uptime:1: not an uptime: {text.strip()[:60]!r}")
        diskstats = sections.get("diskstats")
        if diskstats is None:
            errors.append(f"{where}:/proc/diskstats: cannot read")
        return RawSample(self.root, time.time(), uptime_cs, diskstats, f"{where}:/proc/diskstats", errors)

    def _lay_out_sysfs(self, text: str) -> None:
        """The devices' sysfs entries under ROOT/sys/block. The first time the whole tree (made
        aside, then moved in); after that only the devices whose lines changed are made again
        and the vanished ones removed: a whole tree of 68 devices is about 1,000 files, 127 ms
        of CPU, and a node's devices change one or two at a time (a loop device, a new path)."""
        devices: dict[str, list[tuple[str, str]]] = {}
        for line in text.splitlines():
            kind, _, rest = line.partition(" ")
            if kind in ("D", "S", "P", "L", "F"):
                disk = rest.partition(" ")[0]
                if _safe(disk):
                    devices.setdefault(disk, []).append((kind, rest))
        block = self.root / "sys" / "block"
        before = self._sysfs_devices
        self._sysfs_devices = devices
        if before is None or not block.is_dir():
            new = self.root / "sys.new"
            shutil.rmtree(new, ignore_errors=True)
            (new / "block").mkdir(parents=True)
            for disk, lines in devices.items():
                _lay_out_device(new / "block", disk, lines)
            old = self.root / "sys"
            if old.exists():
                gone = self.root / "sys.old"
                os.replace(old, gone)
                shutil.rmtree(gone, ignore_errors=True)
            os.replace(new, old)
            return
        for disk in before.keys() - devices.keys():
            shutil.rmtree(block / disk, ignore_errors=True)
        for disk, lines in devices.items():
            if before.get(disk) != lines:
                shutil.rmtree(block / disk, ignore_errors=True)
                _lay_out_device(block, disk, lines)


class RemoteDiskstats(_DiskstatsAnswers):
    """The node's statistics under :attr:`root`, fresh after each :meth:`refresh` (any thread
    but the SSH loop's: it waits for the answer)."""

    def __init__(self, connection: Connection, *, remote_root: str = "", write_proc: bool = True) -> None:
        """``write_proc`` False: the samples' /proc files only as :attr:`raw`, not under the root."""
        super().__init__(connection, write_proc=write_proc)
        self._buffer = b""
        self._channel: Channel | None = None
        self._channel = connection.open_channel(self._command(remote_root))

    def refresh(self, *, full: bool | None = None, timeout_s: float = SAMPLE_TIMEOUT_S) -> None:
        """Ask for one sample and lay it out under :attr:`root`; SshError when the channel is
        gone or the node does not answer within ``timeout_s``. ``full`` None: sysfs every
        SYSFS_REFRESH_S."""
        assert self._channel is not None
        now = time.monotonic()
        full = self._wants_full(full)
        started = time.monotonic()
        self._channel.write(b"full\n" if full else b"sample\n")
        end = f"{self.mark} end\n".encode()
        deadline = started + timeout_s
        errors: list[bytes] = []
        while end not in self._buffer:
            if self._channel.closed and not self._channel.pending:
                raise self._closed_error(b"".join(errors).decode("utf-8", "replace").strip())
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._timeout_error(timeout_s)
            for stream, chunk in self._channel.read(min(left, 1.0)):
                if stream == "stdout":
                    self._buffer += chunk
                else:
                    errors.append(chunk)
            if len(self._buffer) > MAX_ANSWER_BYTES:
                raise self._too_large_error()
        answer, _, self._buffer = self._buffer.partition(end)
        self.last_latency_s = time.monotonic() - started
        self._lay_out(answer, full)
        if full:
            self._last_full = now

    def close(self) -> None:
        """Close the channel (the node's loop ends) and remove the temp root."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> RemoteDiskstats:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncRemoteDiskstats(_DiskstatsAnswers):
    """:class:`RemoteDiskstats` for a coroutine in the SSH loop (the cluster monitor): made with
    :meth:`open`, :meth:`request` then ``await`` :meth:`answer`, and :meth:`lay_out` the answer
    (which writes files only when the sysfs facts changed: a caller may do that in a thread)."""

    def __init__(self, connection: Connection, *, remote_root: str = "") -> None:
        super().__init__(connection, write_proc=False)
        self.remote_root = remote_root
        self._channel: AsyncChannel | None = None
        self._full = False
        self._requested = 0.0

    @classmethod
    async def open(cls, connection: Connection, *, remote_root: str = "") -> AsyncRemoteDiskstats:
        """The node's sampling loop started on a channel of its own; SshError."""
        self = cls(connection, remote_root=remote_root)
        try:
            self._channel = await connection.open_stream(self._command(remote_root))
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        return self

    def request(self, *, full: bool | None = None) -> bool:
        """Ask the node for a sample (``full``: with the sysfs facts; None: every
        SYSFS_REFRESH_S); whether it is a full one."""
        assert self._channel is not None
        self._full = self._wants_full(full)
        self._requested = time.monotonic()
        self._channel.write(b"full\n" if self._full else b"sample\n")
        return self._full

    async def answer(self, timeout_s: float = SAMPLE_TIMEOUT_S) -> bytes:
        """The requested sample's bytes; SshError when the channel is gone or the node does
        not answer within ``timeout_s``."""
        assert self._channel is not None
        try:
            answer = await self._channel.read_until(f"{self.mark} end\n".encode(), timeout_s, MAX_ANSWER_BYTES)
        except EOFError as exc:
            raise self._closed_error(str(exc)) from None
        except TimeoutError:
            raise self._timeout_error(timeout_s) from None
        except ValueError:
            raise self._too_large_error() from None
        self.last_latency_s = time.monotonic() - self._requested
        return answer

    def lay_out(self, answer: bytes) -> None:
        """The answer as :attr:`raw` (and, for a full one, the sysfs facts under :attr:`root`)."""
        self._lay_out(answer, self._full)
        if self._full:
            self._last_full = self._requested

    async def close(self) -> None:
        """Close the channel (the node's loop ends) and remove the temp root."""
        try:
            if self._channel is not None:
                await self._channel.close()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _lay_out_device(block: Path, disk: str, lines: list[tuple[str, str]]) -> None:
    """One device's entries (its D, S, P, L and F lines) as BLOCK/DISK/..."""
    base = block / disk
    base.mkdir(exist_ok=True)
    for kind, rest in lines:
        if kind == "S":
            (base / "stat").touch()
        elif kind == "P":
            part = rest.partition(" ")[2]
            if _safe(part):
                (base / part).mkdir(exist_ok=True)
                (base / part / "stat").touch()
        elif kind == "L":
            # an entry of mq/ (a hardware queue) or slaves/ (a path or member)
            where, _, name = rest.partition(" ")[2].partition("/")
            if where in ("mq", "slaves") and _safe(name):
                (base / where / name).mkdir(parents=True, exist_ok=True)
        elif kind == "F":
            fact, _, value = rest.partition(" ")[2].partition(" ")
            if fact in _FACT_FILES:
                path = base / fact
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(value + "\n")
