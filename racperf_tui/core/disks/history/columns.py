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
#: A block's figures by column index (only the columns the conversion reads are parsed).
Columns = dict[int, list[float]]

_UNIT_FACTORS = (("kB/s", 1.0), ("sec/s", 0.5), ("MB/s", 1024.0))


class UnknownHeader(ValueError):
    """A header with a column no known generation prints, or without the ones racperf needs."""


def _only_nonzero(figures: tuple[float, ...]) -> float | None:
    """Where every rate printed as 0.00 (fewer than 0.005 I/Os a second) there is nothing to
    weigh by: the one kind of I/O with a size (or await) is the figure, none gives 0.00 as
    sysstat prints, and several cannot be weighed (None)."""
    nonzero = [f for f in figures if f]
    if not nonzero:
        return 0.0
    return nonzero[0] if len(nonzero) == 1 else None


@dataclass(frozen=True)
class _Throughput:
    """Where a header has the kB/s of reads, writes or discards, and the factor to kB."""

    index: int
    factor: float

    def kilobytes(self, columns: Columns) -> list[float]:
        figures = columns[self.index]
        return figures if self.factor == 1.0 else [f * self.factor for f in figures]


def _throughput(index: dict[str, int], prefix: str) -> _Throughput | None:
    for unit, factor in _UNIT_FACTORS:
        if f"{prefix}{unit}" in index:
            return _Throughput(index[f"{prefix}{unit}"], factor)
    return None


@dataclass(frozen=True)
class ColumnSet:
    """One header's columns and where racperf's figures come from in them.

    ``needed`` are the column indexes the conversion reads: only those are parsed (a 12.x
    line has 22 figures, racperf uses 13), column by column for a whole block at once; the
    request sizes only where a row's rates are all 0.00 (``parse`` reads them then).
    """

    names: tuple[str, ...]
    reads: int
    writes: int
    util: int
    read_kb: _Throughput
    write_kb: _Throughput
    discards: int | None = None
    discard_kb: _Throughput | None = None
    rrqm: int | None = None
    wrqm: int | None = None
    avgrq: int | None = None
    queue: int | None = None
    await_: int | None = None
    r_await: int | None = None
    w_await: int | None = None
    d_await: int | None = None
    svctm: int | None = None
    sizes: tuple[int, ...] = ()

    @property
    def needed(self) -> tuple[int, ...]:
        indexes = {self.reads, self.writes, self.util, self.read_kb.index, self.write_kb.index}
        optional = (self.rrqm, self.wrqm, self.avgrq, self.queue, self.await_, self.r_await, self.w_await, self.svctm)
        indexes.update(i for i in optional if i is not None)
        if self.discards is not None and self.discard_kb is not None:
            indexes.update((self.discards, self.discard_kb.index))
            if self.d_await is not None:
                indexes.add(self.d_await)
        return tuple(sorted(indexes))

    def convert(self, columns: Columns, count: int, parse: Callable[[int], list[float]]) -> list[Values]:
        """The rows of a block in racperf's column set (iostat_math.COLUMNS order)."""
        absent: list[float | None] = [None] * count

        def column(index: int | None) -> list[float | None] | list[float]:
            return absent if index is None else columns[index]

        r_s, w_s = columns[self.reads], columns[self.writes]
        rkb, wkb = self.read_kb.kilobytes(columns), self.write_kb.kilobytes(columns)
        ios = [r + w for r, w in zip(r_s, w_s)]
        kb = [r + w for r, w in zip(rkb, wkb)]
        d_s: list[float] = [0.0] * count
        if self.discards is not None and self.discard_kb is not None:
            d_s = columns[self.discards]
            ios = [i + d for i, d in zip(ios, d_s)]
            kb = [k + d for k, d in zip(kb, self.discard_kb.kilobytes(columns))]
        avgrq: list[float | None] | list[float]
        if self.avgrq is not None:
            avgrq = columns[self.avgrq]
        elif all(ios):
            avgrq = [2 * k / i for k, i in zip(kb, ios)]
        else:
            sizes = list(zip(*map(parse, self.sizes))) if self.sizes else [()] * count
            avgrq = [2 * k / i if i else _doubled(_only_nonzero(sizes[n])) for n, (k, i) in enumerate(zip(kb, ios))]
        awaits: list[float | None] | list[float]
        if self.await_ is not None:
            awaits = columns[self.await_]
        elif self.r_await is None or self.w_await is None:
            awaits = absent
        else:
            ra, wa = columns[self.r_await], columns[self.w_await]
            da = columns[self.d_await] if self.d_await is not None and self.discards is not None else [0.0] * count
            awaits = [
                (r * a + w * b + d * c) / i if i else _only_nonzero((a, b, c))
                for r, w, d, a, b, c, i in zip(r_s, w_s, d_s, ra, wa, da, ios)
            ]
        return list(
            zip(
                r_s,
                w_s,
                rkb,
                wkb,
                column(self.rrqm),
                column(self.wrqm),
                avgrq,
                column(self.queue),
                awaits,
                column(self.r_await),
                column(self.w_await),
                column(self.svctm),
                columns[self.util],
            )
        )


def _doubled(kilobytes: float | None) -> float | None:
    """A request size in kB -> in 512-byte sectors."""
    return None if kilobytes is None else 2 * kilobytes


def column_set(names: list[str]) -> ColumnSet:
    """The converter of a header (the names after ``Device``/``Device:``)."""
    unknown = [n for n in names if n not in KNOWN_COLUMNS]
    if "tps" in names and "areq-sz" in names and "r/s" not in names:
        # sysstat 12's -xs: tps and kB/s of reads, writes and discards together; racperf's
        # column set splits them and nothing in this layout says how
        raise UnknownHeader(
            "iostat -xs (short) layout: tps and kB/s without the read/write split racperf's columns "
            "need; record with iostat -x (without -s)"
        )
    if unknown:
        raise UnknownHeader(f"unknown column(s) {' '.join(unknown)}: not an iostat -x layout racperf knows")
    index = {name: i for i, name in enumerate(names)}
    if len(index) != len(names):
        raise UnknownHeader("a column is named twice")
    for needed in ("r/s", "w/s", "%util"):
        if needed not in index:
            raise UnknownHeader(f"no {needed} column: not an iostat -x report")
    read_kb, write_kb = _throughput(index, "r"), _throughput(index, "w")
    if read_kb is None or write_kb is None:
        raise UnknownHeader("no read/write throughput column (rkB/s, rsec/s or rMB/s)")
    discard_kb = _throughput(index, "d")
    discards = index.get("d/s") if discard_kb is not None else None
    return ColumnSet(
        names=tuple(names),
        reads=index["r/s"],
        writes=index["w/s"],
        util=index["%util"],
        read_kb=read_kb,
        write_kb=write_kb,
        discards=discards,
        discard_kb=discard_kb if discards is not None else None,
        rrqm=index.get("rrqm/s"),
        wrqm=index.get("wrqm/s"),
        avgrq=index.get("avgrq-sz"),
        queue=index.get("avgqu-sz", index.get("aqu-sz")),
        await_=index.get("await"),
        r_await=index.get("r_await"),
        w_await=index.get("w_await"),
        d_await=index.get("d_await"),
        svctm=index.get("svctm"),
        sizes=tuple(index[n] for n in ("rareq-sz", "wareq-sz", "dareq-sz") if n in index),
    )
