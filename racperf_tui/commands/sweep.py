"""``racperf sweep fio --target T [--set K=V]... --iodepth 1,2,4,... [--numjobs 1,2,...]
[--point-seconds S] [--stop-p99-ms MS | --stop-knee] [--node N | --nodes A,B] [--json]`` and
``racperf sweep analyze PATH... [--json]``: the finder of the knee (docs/SWEEP.md).

``sweep fio`` walks fio's load up, one recorded run per point (each planned and judged by the
write guard like any run), the points in one run group whose result is the curves and their
knee (orchestration/sweep.py). With ``--json``: one line per point as it finishes,
``{"type": "point", "group_id", "curve", "iodepth", "numjobs", "iops", "bw_kib_s",
"lat_mean_us", "lat_p99_us", "littles_law_outstanding", ...}``, then ``{"type": "sweep",
"group_id", "curves": [...], "knee", "best_under_ceiling", ...}``; else a table growing a row
per point, each curve's knee, and charts (plotext) of IOPS against load and latency against IOPS.

``sweep analyze`` reads fio JSON outputs (files, or directories walked) and prints
``{"curves": [{"rw", "bs", "varying", "fixed", "points", "knee"}], "skipped": [...]}`` (or the
same as tables and charts).

Exit status: 0 done; 1 a point failed (the sweep ended there) / no curve in the files; 2 the
sweep or its first point was refused, or a path is missing; 3 a node cannot be reached; 127
fio is not installed; 130 stopped by a signal (SIGINT / SIGTERM / SIGHUP stop the point running).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from racperf_tui.commands.run import tool_config
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import ClusterFileError, add_node_arguments, nodes_from_args
from racperf_tui.core.store import StoreError
from racperf_tui.core.textio import strict_json
from racperf_tui.orchestration.sweep import SweepOutcome, SweepPlan, SweepRefused, base_config, run_sweep
from racperf_tui.tools.fio.load_points import LoadPoint
from racperf_tui.tools.fio.sweep_charts import chart_text
from racperf_tui.tools.fio.sweep_curves import Curve, curves_of, without_repeats
from racperf_tui.tools.fio.sweep_files import read_sweep

EXIT_UNREACHABLE = 3


def _whole_numbers(text: str) -> tuple[int, ...]:
    try:
        values = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers like 1,2,4,8") from None
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: each value must be 1 or more")
    return tuple(values)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="fio|analyze")
    fio = actions.add_parser("fio", help="walk fio's load up on a target, one recorded run per point")
    fio.add_argument("--data-dir", metavar="DIR", default=None, help="where runs are stored")
    fio.add_argument("--target", metavar="T", required=True, help="the file, directory or device fio works on")
    fio.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", dest="settings", help="a fio option (repeatable)"
    )
    fio.add_argument("--destructive", action="store_true", help="allow a write workload on a device that carries data")
    fio.add_argument("--iodepth", type=_whole_numbers, default=(1,), metavar="1,2,4,...", help="the iodepths")
    fio.add_argument("--numjobs", type=_whole_numbers, default=(1,), metavar="1,2,...", help="the numjobs")
    fio.add_argument("--point-seconds", type=int, default=10, metavar="S", help="each point's runtime (default 10)")
    stop = fio.add_mutually_exclusive_group()
    stop.add_argument(
        "--stop-p99-ms",
        type=float,
        default=None,
        metavar="MS",
        help="end a curve at the first point whose p99 passes MS",
    )
    stop.add_argument(
        "--stop-knee", action="store_true", help="end a curve two points past its knee without a 10 %% gain"
    )
    fio.add_argument("--json", action="store_true", help="one JSON line per point, then the sweep")
    add_node_arguments(fio, what="run each point", several=True)
    analyze = actions.add_parser("analyze", help="curves and knees of fio JSON outputs already on disk")
    analyze.add_argument("paths", nargs="+", metavar="PATH", help="fio JSON files, or directories to walk")
    analyze.add_argument(
        "--p99-ceiling-ms", type=float, default=None, metavar="MS", help="also give each curve's best point under MS"
    )
    analyze.add_argument("--json", action="store_true", help="print the curves as JSON")


def run(args: argparse.Namespace) -> int:
    if args.action == "analyze":
        return _analyze(args)
    return _sweep(args)


# ------------------------------------------------------------------------ output helpers


def _say(text: str) -> None:
    print(text, flush=True)


def _error(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _ms(value_us: float | None) -> str:
    return "-" if value_us is None else f"{value_us / 1000:.3f}"


def _number(value: float | None, decimals: int = 1) -> str:
    return "-" if value is None else f"{value:.{decimals}f}"


_HEADER = (
    f"{'iodepth':>7} {'numjobs':>7} {'IOPS':>10} {'MiB/s':>9} {'mean ms':>9} {'p99 ms':>9} "
    f"{'in flight':>9} {'depth':>6}  {'device':<10} {'util%':>6} {'await ms':>8} {'queue':>7}"
)


def _row(point: LoadPoint) -> str:
    device = point.device
    return (
        f"{point.iodepth:>7} {point.numjobs:>7} {point.iops:>10.0f} {point.bw_kib_s / 1024:>9.2f} "
        f"{_ms(point.lat_mean_us):>9} {_ms(point.lat_p99_us):>9} {_number(point.littles_law_outstanding, 2):>9} "
        f"{point.configured_depth:>6}  {(device.name if device else '-'):<10.10} "
        f"{_number(device.util_pct if device else None):>6} {_number(device.await_ms if device else None, 3):>8} "
        f"{_number(device.queue if device else None, 2):>7}"
        + (f"  run {point.run_id}" if point.run_id is not None else "")
    )


def _describe(point: LoadPoint) -> str:
    return (
        f"iodepth {point.iodepth}, numjobs {point.numjobs}: {point.iops:.0f} IOPS, "
        f"mean {_ms(point.lat_mean_us)} ms, p99 {_ms(point.lat_p99_us)} ms"
    )


def _curve_title(curve: Curve) -> str:
    fixed = ", ".join(f"{k} {v}" for k, v in curve.fixed.items())
    return f"{curve.rw} {curve.bs}, {curve.varying} rising, {fixed}"


def _curve_summary(curve: Curve) -> list[str]:
    knee = curve.knee
    lines = [f"knee: {_describe(knee)}" if knee else "knee: none yet (the last point still gained 10 % or more)"]
    if curve.ceiling_p99_us is not None:
        best = curve.best_under_ceiling
        ceiling = f"{curve.ceiling_p99_us / 1000:g} ms"
        lines.append(
            f"highest IOPS with p99 under {ceiling}: {_describe(best)}" if best else f"no point had p99 under {ceiling}"
        )
    if curve.stopped:
        lines.append(f"stopped: {curve.stopped}")
    lines += [f"note at iodepth {p.iodepth}, numjobs {p.numjobs}: {p.note}" for p in curve.points if p.note]
    return lines


# ------------------------------------------------------------------------------- sweep fio


def _plan(args: argparse.Namespace) -> SweepPlan:
    config = tool_config("fio", [], list(args.settings), args.destructive, args.target)
    given = {setting.split("=", 1)[0].strip() for setting in args.settings}
    return SweepPlan(
        config=base_config(config, given),
        iodepths=tuple(args.iodepth),
        numjobs=tuple(args.numjobs),
        point_seconds=int(args.point_seconds),
        stop_p99_ms=args.stop_p99_ms,
        stop_knee=bool(args.stop_knee),
        nodes=tuple(nodes_from_args(args)),
        target=args.target,
    )


def _sweep(args: argparse.Namespace) -> int:
    try:
        plan = _plan(args)
        plan.check()
        data_dir = resolve_data_dir(args.data_dir)
    except (SweepRefused, ValueError, ClusterFileError, OSError) as exc:
        _error(f"racperf sweep fio: {exc}")
        return 2
    except KeyError as exc:
        _error(f"racperf sweep fio: {exc.args[0] if exc.args else exc}")
        return 2
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: stopping.set())
    group: list[int] = []
    curve_number = [0]

    def on_start(group_id: int) -> None:
        group.append(group_id)
        if not args.json:
            stop = (
                f"stop at p99 over {plan.stop_p99_ms:g} ms"
                if plan.stop_p99_ms is not None
                else "stop two points past the knee"
                if plan.stop_knee
                else "every point runs"
            )
            where = ", ".join(node.name for node in plan.nodes)
            _say(
                f"sweep g{group_id}: fio on {args.target} ({where}), iodepth "
                f"{','.join(map(str, plan.iodepths))} x numjobs {','.join(map(str, plan.numjobs))}, "
                f"{plan.point_seconds} s a point, {stop}"
            )

    def on_point(point: LoadPoint, curve: Curve) -> None:
        if args.json:
            line = {"type": "point", "group_id": group[0], "curve": curve_number[0], **point.to_json()}
            _say(strict_json.dumps(line))
            return
        if len(curve.points) == 1:
            _say(f"\n{_curve_title(curve)}\n{_HEADER}")
        _say(_row(point))

    def on_curve(curve: Curve) -> None:
        curve_number[0] += 1
        if not args.json:
            _say("\n".join(_curve_summary(curve)) + "\n" + chart_text(curve))

    try:
        outcome = run_sweep(plan, data_dir, on_start=on_start, on_point=on_point, on_curve=on_curve, stopping=stopping)
    except ToolNotFound as exc:
        _error(f"racperf sweep fio: {exc}")
        return 127
    except (SweepRefused, ValueError, StoreError) as exc:
        _error(f"racperf sweep fio: {exc}")
        return 2
    except KeyError as exc:
        _error(f"racperf sweep fio: {exc.args[0] if exc.args else exc}")
        return 2
    except OSError as exc:  # a node that cannot be reached, said why
        _error(f"racperf sweep fio: {exc}")
        return EXIT_UNREACHABLE
    return _report(outcome, args.json)


def _report(outcome: SweepOutcome, as_json: bool) -> int:
    result = outcome.result()
    if as_json:
        _say(strict_json.dumps({"type": "sweep", "group_id": outcome.group_id, **result}))
    else:
        knee = result["knee"]
        best = result["best_under_ceiling"]
        lines = [f"\nsweep g{outcome.group_id}: {sum(len(c.points) for c in outcome.curves)} points"]
        if knee is not None:
            lines.append(
                f"knee: iodepth {knee['iodepth']}, numjobs {knee['numjobs']}: {knee['iops']:.0f} IOPS, "
                f"mean {_ms(knee['lat_mean_us'])} ms, p99 {_ms(knee['lat_p99_us'])} ms"
            )
        else:
            lines.append("knee: not reached (the last point still gained 10 % or more)")
        if outcome.plan.stop_p99_ms is not None:
            lines.append(
                f"highest IOPS with p99 under {outcome.plan.stop_p99_ms:g} ms: "
                + (f"{best['iops']:.0f} at iodepth {best['iodepth']}, numjobs {best['numjobs']}" if best else "none")
            )
        if outcome.ended:
            lines.append(f"ended: {outcome.ended}")
        _say("\n".join(lines))
    if outcome.ended == "stopped":
        return 130
    if outcome.ended:
        _error(f"racperf sweep fio: {outcome.ended}")
        return 1
    return 0


# --------------------------------------------------------------------------- sweep analyze


def _analyze(args: argparse.Namespace) -> int:
    try:
        found = read_sweep(list(args.paths))
    except FileNotFoundError as exc:
        _error(f"racperf sweep analyze: {exc}")
        return 2
    ceiling = None if args.p99_ceiling_ms is None else args.p99_ceiling_ms * 1000.0
    points, repeats = without_repeats(found.points)
    curves = curves_of(points, ceiling)
    skipped = found.skipped + repeats
    if args.json:
        _say(strict_json.dumps({"curves": [c.to_json() for c in curves], "skipped": skipped}))
    else:
        _print_curves(curves)
        for entry in skipped:
            _say(f"skipped {entry['source']}: {entry['why']}")
    if not curves:
        _error(
            f"racperf sweep analyze: no curve in {', '.join(args.paths)}: {len(points)} fio load point(s) read; "
            "a curve needs two or more points of one rw and bs that differ in iodepth or numjobs"
        )
        return 1
    return 0


def _print_curves(curves: Sequence[Curve]) -> None:
    for curve in curves:
        lines = [f"\n{_curve_title(curve)}", _HEADER]
        lines += [_row(p) + (f"  {p.source}" if p.source else "") for p in curve.points]
        lines += _curve_summary(curve)
        _say("\n".join(lines) + "\n" + chart_text(curve))
