"""The run directories on a node (``~/.racperf/runs``) kept bounded: when a new run's
directory is made there, all but the newest :data:`KEEP_RUN_DIRS` go, never one whose run is
still running (its watchdog's mark names it, core/remote/ssh_host.py) nor the new run's own.
One afternoon of runs left 49 directories on a node before (issue 21)."""

from __future__ import annotations

__all__ = ["KEEP_RUN_DIRS", "PRUNE_SH"]

#: how many run directories a node keeps (the newest by modification time)
KEEP_RUN_DIRS = 20

#: $1 the runs' base directory, $2 how many to keep, $3 the new run's directory name.
#: A running run: a process of this login whose argv has the watchdog's mark
#: ``racperf-NAME-TOKEN`` (TOKEN 12 hex digits) as a word of its own. Says "pruned NAME"
#: for each directory removed.
PRUNE_SH = r"""
base=$1 keep=$2 new=$3 me=$(id -u)
[ -d "$base" ] || exit 0
marks=
for f in $(grep -l racperf-watchdog /proc/[0-9]*/cmdline 2>/dev/null); do
  k=; a=
  while read -r k a rest; do [ "$k" = Uid: ] && break; done 2>/dev/null < "${f%/cmdline}/status"
  [ "$a" = "$me" ] || continue
  marks="$marks $(tr '\000' '\n' < "$f" 2>/dev/null | grep -x 'racperf-.*-[0-9a-f]\{12\}' | tr '\n' ' ')"
done
n=0
for d in $(ls -1t -- "$base" 2>/dev/null); do
  p=$base/$d
  [ -d "$p" ] && [ ! -L "$p" ] || continue
  n=$((n+1))
  [ "$n" -gt "$keep" ] || continue
  [ "$d" != "$new" ] || continue
  case " $marks " in *" racperf-$d-"????????????" "*) continue ;; esac
  rm -rf -- "$p" && printf 'pruned %s\n' "$d"
done
exit 0
"""
