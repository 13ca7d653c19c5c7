"""A saved ``iostat -x`` header's columns -> racperf's column set (iostat_math.COLUMNS).

The generations (sysstat's own headers):
- 7.x-9.0: ``Device: rrqm/s wrqm/s r/s w/s rsec/s wsec/s avgrq-sz avgqu-sz await svctm %util``
  (rkB/s wkB/s with -k, rMB/s wMB/s with -m); 9.1-11.5 add r_await w_await after await;
- 11.7: ``Device r/s w/s rkB/s wkB/s rrqm/s wrqm/s %rrqm %wrqm r_await w_await aqu-sz
  rareq-sz wareq-sz svctm %util`` (sizes in kB, no await, no avgrq-sz);
- 12.x: ``r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s ... d/s dkB/s ... f/s f_await aqu-sz
  %util`` (no svctm; discards and flushes).

Conversions, the same formulas as racperf's live iostat applied to the file's rates:
rkB/s = rsec/s / 2 or rMB/s x 1024; avgrq-sz (sectors) = 2 x (rkB/s + wkB/s [+ dkB/s]) /
(r/s + w/s [+ d/s]) where the file has no avgrq-sz (the rates, not the rounded rareq-sz, so a
discard of d/s 0.00 but dkB/s 61.51 still counts, as live); await = r_await, w_await [, d_await]
weighted by r/s, w/s [, d/s] where the file has no await; where every rate rounds to 0.00,
the one nonzero size or await (sysstat 12 prints sda4 with r/s 0.00 and r_await 258.80);
avgqu-sz = aqu-sz. A figure the
file cannot give (svctm in 12.x, r_await before 9.1) is None. A column not listed here makes
the header unknown: its block is not read rather than read wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Every column some sysstat iostat -x generation prints (and racperf's own text output).
KNOWN_COLUMNS = frozenset(
    "rrqm/s wrqm/s r/s w/s rsec/s wsec/s rkB/s wkB/s rMB/s wMB/s avgrq-sz avgqu-sz aqu-sz await "
    "r_await w_await svctm %util %rrqm %wrqm rareq-sz wareq-sz d/s dsec/s dkB/s dMB/s drqm/s %drqm "
    "d_await dareq-sz f/s f_await".split()
)

Values = tuple[float | None, ...]


class UnknownHeader(ValueError):
    """A header with a column no known generation prints, or without the ones racperf needs."""


@dataclass(frozen=True)
class ColumnSet:
    """One header's columns; ``convert`` maps a device line's figures to racperf's."""

    names: tuple[str, ...]
    convert: Callable[[list[float]], Values]


def _rate(index: dict[str, int], prefix: str) -> Callable[[list[float]], float] | None:
    """kB/s of reads (r), writes (w) or discards (d), from whichever unit the file has."""
    if f"{prefix}kB/s" in index:
        i = index[f"{prefix}kB/s"]
        return lambda v: v[i]
    if f"{prefix}sec/s" in index:
        i = index[f"{prefix}sec/s"]
        return lambda v: v[i] / 2
    if f"{prefix}MB/s" in index:
        i = index[f"{prefix}MB/s"]
        return lambda v: v[i] * 1024
    return None


def _only_nonzero(figures: list[float]) -> float | None:
    """Where every rate printed as 0.00 (fewer than 0.005 I/Os a second) there is nothing to
    weigh by: the one kind of I/O with a size (or await) is the figure, none gives 0.00 as
    sysstat prints, and several cannot be weighed (None)."""
    nonzero = [f for f in figures if f]
    if not nonzero:
        return 0.0
    return nonzero[0] if len(nonzero) == 1 else None


def column_set(names: list[str]) -> ColumnSet:
    """The converter of a header (the names after ``Device``/``Device:``)."""
    unknown = [n for n in names if n not in KNOWN_COLUMNS]
    if unknown:
        raise UnknownHeader(f"unknown column(s) {' '.join(unknown)}: not an iostat -x layout racperf knows")
    index = {name: i for i, name in enumerate(names)}
    if len(index) != len(names):
        raise UnknownHeader("a column is named twice")
    for needed in ("r/s", "w/s", "%util"):
        if needed not in index:
            raise UnknownHeader(f"no {needed} column: not an iostat -x report")
    read_kb, write_kb, discard_kb = _rate(index, "r"), _rate(index, "w"), _rate(index, "d")
    if read_kb is None or write_kb is None:
        raise UnknownHeader("no read/write throughput column (rkB/s, rsec/s or rMB/s)")
    ir, iw, iutil = index["r/s"], index["w/s"], index["%util"]
    idisc = index.get("d/s")
    irrqm, iwrqm = index.get("rrqm/s"), index.get("wrqm/s")
    iavgrq, iawait, isvctm = index.get("avgrq-sz"), index.get("await"), index.get("svctm")
    iqueue = index.get("avgqu-sz", index.get("aqu-sz"))
    ir_await, iw_await, id_await = index.get("r_await"), index.get("w_await"), index.get("d_await")
    with_discards = idisc is not None and discard_kb is not None

    sizes = [i for i in (index.get("rareq-sz"), index.get("wareq-sz"), index.get("dareq-sz")) if i is not None]
    awaits = [i for i in (ir_await, iw_await, id_await) if i is not None]

    def convert(v: list[float]) -> Values:
        r_s, w_s = v[ir], v[iw]
        rkb, wkb = read_kb(v), write_kb(v)
        ios, kb = r_s + w_s, rkb + wkb
        d_s = 0.0
        if with_discards:
            d_s = v[idisc]  # type: ignore[index]
            ios += d_s
            kb += discard_kb(v)  # type: ignore[misc]
        if iavgrq is not None:
            avgrq: float | None = v[iavgrq]
        elif ios:
            avgrq = 2 * kb / ios
        else:
            size = _only_nonzero([v[i] for i in sizes])
            avgrq = None if size is None else 2 * size
        r_await = None if ir_await is None else v[ir_await]
        w_await = None if iw_await is None else v[iw_await]
        if iawait is not None:
            await_ms: float | None = v[iawait]
        elif r_await is None or w_await is None:
            await_ms = None
        elif ios:
            weighted = r_s * r_await + w_s * w_await
            if id_await is not None:
                weighted += d_s * v[id_await]
            await_ms = weighted / ios
        else:
            await_ms = _only_nonzero([v[i] for i in awaits])
        return (
            r_s,
            w_s,
            rkb,
            wkb,
            None if irrqm is None else v[irrqm],
            None if iwrqm is None else v[iwrqm],
            avgrq,
            None if iqueue is None else v[iqueue],
            await_ms,
            r_await,
            w_await,
            None if isvctm is None else v[isvctm],
            v[iutil],
        )

    return ColumnSet(tuple(names), convert)
