"""The conditions a run ran under, recorded with it before the benchmark starts: what makes a
report credible and repeatable after the devices were changed or the node was rebuilt.

Asked of the run's host, this machine or a node over SSH alike, by one POSIX-sh script
(:data:`CONDITIONS_SH`, one short command: one channel on a node): the kernel and the host's
name, and for each target the block device under it (its own node for a device, the file
system's device for a file), the partition's disk, and the devices below it (dm and md
members, a multipath's paths) with what sysfs has of each: model, vendor, firmware, the
scheduler and the queue limits, dm's name, a loop's backing file. Kept as the run's raw stream
``conditions`` (one JSON object); what sysfs lacks is left out, never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from racperf_tui import __version__
from racperf_tui.core.contract.hosts import Host

#: the raw output stream of a run that holds its conditions (one JSON object)
CONDITIONS_STREAM = "conditions"
#: the script's time on a node (one sh, a few dozen small reads)
CONDITIONS_TIMEOUT_S = 10.0
#: the sysfs files read of each device, relative to its /sys/class/block/NAME
SYSFS_FACTS = (
    "dm/name",
    "dm/uuid",
    "md/level",
    "loop/backing_file",
    "device/vendor",
    "device/model",
    "device/rev",
    "device/firmware_rev",
    "queue/scheduler",
    "queue/nr_requests",
    "device/queue_depth",
    "queue/max_sectors_kb",
    "queue/max_hw_sectors_kb",
    "queue/logical_block_size",
    "queue/physical_block_size",
    "queue/rotational",
    "size",
)
#: devices below a target followed at most (a multipath of many paths, md over dm...)
MAX_DEVICES = 64

#: $@: the targets. Prints KEY=VALUE lines: kernel, host, then per target 'target=PATH' and
#: 'devno=MAJ:MIN', then per device 'device=NAME' followed by its facts and 'below=NAME'.
CONDITIONS_SH = r"""
echo "kernel=$(uname -sr 2>/dev/null)"
echo "machine=$(uname -m 2>/dev/null)"
echo "host=$(uname -n 2>/dev/null)"
todo=""
for p in "$@"; do
  echo "target=$p"
  q=$p
  [ -e "$q" ] || q=$(dirname "$q")
  if [ -b "$q" ]; then
    devno="$(printf '%d' "0x$(stat -L -c %t "$q")"):$(printf '%d' "0x$(stat -L -c %T "$q")")"
  else
    d=$(stat -L -c %d "$q" 2>/dev/null) || continue
    devno="$(( ((d >> 8) & 4095) | ((d >> 32) & ~4095) )):$(( (d & 255) | ((d >> 12) & ~255) ))"
  fi
  echo "devno=$devno"
  [ -e "/sys/dev/block/$devno" ] || continue
  n=$(basename "$(readlink -f "/sys/dev/block/$devno")")
  todo="$todo $n"
done
seen=" "
count=0
while [ -n "$todo" ] && [ "$count" -lt MAX_DEVICES ]; do
  set -- $todo
  n=$1; shift; todo="$*"
  case "$seen" in *" $n "*) continue ;; esac
  seen="$seen$n "
  count=$((count + 1))
  d=/sys/class/block/$n
  [ -e "$d" ] || continue
  echo "device=$n"
  for f in FACTS; do
    [ -r "$d/$f" ] && printf '%s=%s\n' "$f" "$(head -c 256 "$d/$f" 2>/dev/null | tr -d '\n')"
  done
  if [ -e "$d/partition" ]; then
    disk=$(basename "$(dirname "$(readlink -f "$d")")")
    echo "disk=$disk"
    todo="$todo $disk"
  fi
  for s in "$d"/slaves/*; do
    [ -e "$s" ] || continue
    echo "below=$(basename "$s")"
    todo="$todo $(basename "$s")"
  done
done
""".replace("MAX_DEVICES", str(MAX_DEVICES)).replace("FACTS", " ".join(SYSFS_FACTS))


def parse_conditions(text: str) -> dict[str, Any]:
    """The script's KEY=VALUE lines -> {kernel, machine, host, targets: [{path, devno}],
    devices: [{name, FACT: value, ..., disk, below: [...]}]}."""
    found: dict[str, Any] = {"targets": [], "devices": []}
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        value = value.strip()
        if key in ("kernel", "machine", "host"):
            found[key] = value
        elif key == "target":
            found["targets"].append({"path": value})
        elif key == "devno" and found["targets"]:
            found["targets"][-1]["devno"] = value
        elif key == "device":
            current = {"name": value, "below": []}
            found["devices"].append(current)
        elif current is not None and key == "below":
            current["below"].append(value)
        elif current is not None and (key in SYSFS_FACTS or key == "disk") and value:
            current[key] = value
    return found


def record_conditions(host: Host, targets: Sequence[str], tool_version: str | None) -> dict[str, Any]:
    """The run's conditions asked of ``host``: what the script found, racperf's version and
    the tool's; where the script could not run, what it said."""
    try:
        answer = host.run_briefly(["sh", "-c", CONDITIONS_SH, "racperf-conditions", *targets], CONDITIONS_TIMEOUT_S)
        conditions = parse_conditions(answer.stdout)
        if answer.returncode != 0 and not conditions["devices"]:
            conditions["problem"] = (answer.stderr.strip() or f"exit status {answer.returncode}")[:500]
    except (OSError, TimeoutError, ValueError) as exc:
        conditions = {"targets": [{"path": t} for t in targets], "devices": [], "problem": str(exc)[:500]}
    conditions["racperf_version"] = __version__
    conditions["tool_version"] = tool_version
    return conditions


def last_json_object(stream_text: str) -> dict[str, Any] | None:
    """The last JSON object of a stream rewritten as it changes (the conditions, the safety
    record); None: a run recorded before there was one, or none."""
    last = stream_text.strip().splitlines()[-1] if stream_text.strip() else ""
    try:
        found = json.loads(last)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
