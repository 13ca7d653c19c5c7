"""The finder's arithmetic (issue 18): the knee as stated (the lowest load point from which no
later point raises IOPS by 10 % or more; none while the last point still gains), the stop
rules, the best point under a p99 ceiling, curves both ways, Little's law and what it says
about where the queue is; and load points read from real fio reports (tests/fixtures/fio)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racperf_tui.tools.fio.json_report import parse_json_report
from racperf_tui.tools.fio.load_points import DeviceLoad, LoadPoint, points_of
from racperf_tui.tools.fio.sweep_curves import best_under, curves_of, knee_index, stop_reason, without_repeats

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def _point(iodepth: int, iops: float, p99_us: float = 100.0, numjobs: int = 1, **kw: object) -> LoadPoint:
    return LoadPoint(
        rw=str(kw.get("rw", "randread")),
        bs=str(kw.get("bs", "4k")),
        iodepth=iodepth,
        numjobs=numjobs,
        iops=iops,
        bw_kib_s=iops * 4,
        lat_mean_us=float(kw.get("mean", iodepth * numjobs / iops * 1e6)),  # type: ignore[arg-type]
        lat_p99_us=p99_us,
        source=str(kw.get("source", "")),
    )


@pytest.mark.parametrize(
    ("iops", "knee"),
    [
        ([500, 1000, 2000, 2000, 2010], 2),  # flat from the third point
        ([100, 200, 400], None),  # the last point still gains
        ([100], None),  # one point shows no knee
        ([1000, 1000], 0),
        ([1000, 2000, 1500], 1),  # a drop after the knee is no gain
        ([500, 1000, 1090, 1100], 2),  # 1000 -> 1100 is 10 %: "10 % or more" still gains
        ([1000, 1050, 1100, 1160], 2),  # small steps add up: 1050 -> 1160 is 10.5 %
    ],
)
def test_the_knee_as_stated(iops: list[float], knee: int | None) -> None:
    assert knee_index(iops) == knee


def test_stop_rules() -> None:
    rising = [_point(1, 500, 1_000), _point(2, 1000, 2_000)]
    assert stop_reason(rising, None, False) is None
    assert stop_reason(rising, 1_500.0, False) == "p99 2 ms passed the ceiling of 1.5 ms"
    assert stop_reason(rising, 2_000.0, False) is None  # at the ceiling is not past it
    flat = rising + [_point(4, 2000), _point(8, 2050)]
    assert stop_reason(flat, None, True) is None  # the knee (iodepth 4) has one point after it
    flat.append(_point(16, 2100))
    assert stop_reason(flat, None, True) == (
        "2 points past the knee (iodepth 4, numjobs 1) without a 10 % gain in IOPS"
    )
    assert stop_reason(flat, None, False) is None  # with neither rule every point runs


def test_best_under_the_ceiling_is_the_highest_iops_whose_p99_is_under_it() -> None:
    points = [_point(1, 500, 900), _point(2, 1000, 1_900), _point(4, 1900, 2_100), _point(8, 1800, 1_000)]
    assert best_under(points, 2_000.0) is points[3]
    assert best_under(points, 500.0) is None and best_under(points, None) is None


def test_curves_both_ways_one_per_fixed_value_with_two_points_or_more() -> None:
    grid = [_point(d, 1000.0 * d * j, numjobs=j) for d in (1, 2, 4) for j in (1, 2)]
    grid.append(_point(8, 9000, numjobs=1, bs="8k"))  # alone in its bs: no curve
    curves = curves_of(grid)
    shapes = [(c.bs, c.varying, c.fixed, [(p.iodepth, p.numjobs) for p in c.points]) for c in curves]
    assert shapes == [
        ("4k", "iodepth", {"numjobs": 1}, [(1, 1), (2, 1), (4, 1)]),
        ("4k", "iodepth", {"numjobs": 2}, [(1, 2), (2, 2), (4, 2)]),
        ("4k", "numjobs", {"iodepth": 1}, [(1, 1), (1, 2)]),
        ("4k", "numjobs", {"iodepth": 2}, [(2, 1), (2, 2)]),
        ("4k", "numjobs", {"iodepth": 4}, [(4, 1), (4, 2)]),
    ]
    kept, repeats = without_repeats([_point(1, 10, source="a"), _point(1, 20, source="b")])
    assert [p.source for p in kept] == ["a"] and repeats == [
        {"source": "b", "why": "the same rw, bs, iodepth and numjobs as a"}
    ]


def test_littles_law_beside_the_configured_depth_and_the_device_queue() -> None:
    kept = _point(8, 2000, mean=4000.0)  # 2000 IOPS x 4 ms = 8 in flight, as configured
    assert kept.littles_law_outstanding == pytest.approx(8.0) and kept.note is None
    sync = _point(8, 2000, mean=500.0)  # 1 in flight of 8: the engine did not keep the depth
    assert sync.note is not None and sync.note.startswith("fio kept 1.0 of the configured 8 I/Os in flight")
    device = DeviceLoad("loop3", util_pct=5.0, await_ms=0.05, queue=0.2)
    throttled = LoadPoint("randread", "4k", 8, 1, 2000, 8000, 4000.0, device=device)
    assert throttled.note == (
        "the queue is above the device: fio had 8.0 I/Os in flight, loop3 held 0.2 (host, throttle, filesystem)"
    )
    busy = LoadPoint("randread", "4k", 8, 1, 2000, 8000, 4000.0, device=DeviceLoad("sdb", 99.0, 4.0, 7.6))
    assert busy.note is None
    assert throttled.to_json()["configured_depth"] == 8 and throttled.to_json()["littles_law_outstanding"] == 8.0


def _fixture_report(name: str) -> dict[str, object]:
    return parse_json_report((FIXTURES / name).read_text())


def test_a_report_without_group_reporting_is_one_point_of_its_jobs_added_up() -> None:
    """fio-3.33-randrw-2jobs.json: numjobs=2 without group_reporting, so fio lists each clone."""
    report = _fixture_report("fio-3.33-randrw-2jobs.json")
    raw = json.loads((FIXTURES / "fio-3.33-randrw-2jobs.json").read_text())
    (point,) = points_of(report, "fixture")
    assert (point.rw, point.bs, point.iodepth, point.numjobs) == ("randrw", "8k", 1, 2)
    assert point.iops == pytest.approx(sum(job[d]["iops"] for job in raw["jobs"] for d in ("read", "write")))
    weights = [(job[d]["lat_ns"]["mean"] / 1000, job[d]["iops"]) for job in raw["jobs"] for d in ("read", "write")]
    assert point.lat_mean_us == pytest.approx(sum(v * w for v, w in weights) / sum(w for _, w in weights))
    assert point.percentiles_from == "weighted" and point.configured_depth == 2


def test_json_plus_percentiles_from_the_bins_equal_fios_own() -> None:
    report = _fixture_report("fio-3.33-randread.jsonplus.json")
    (point,) = points_of(report, "fixture")
    own = report["jobs"][0]["read"]["clat_us"]["percentiles"]  # type: ignore[index]
    assert point.percentiles_from == "bins"
    assert point.lat_p99_us == pytest.approx(own["99.00"]) and point.lat_p50_us == pytest.approx(own["50.00"])
    assert (point.rw, point.bs, point.iodepth, point.numjobs) == ("randread", "4k", 1, 1)
