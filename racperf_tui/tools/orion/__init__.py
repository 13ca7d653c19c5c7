"""ORION (ORacle IO Numbers): Oracle's storage calibration binary, ``$ORACLE_HOME/bin/orion``
(11.2 to 19c; the standalone 11.1 download too).

A run is one Invocation on the run contract (:mod:`racperf_tui.core.contract.invocation`):

- argv ``$ORACLE_HOME/bin/orion -run R -testname T [the options given]``, env ``ORACLE_HOME``
  and ``LD_LIBRARY_PATH=$ORACLE_HOME/lib``, working directory the run's directory;
- the file ``T.lun`` written there (the LUNs, one per line), the result files ``T_*`` ORION
  writes there (``T_<yyyymmdd>_<hhmm>_summary.txt``, ``_iops.csv``, ``_mbps.csv``, ``_lat.csv``,
  ``_hist.txt`` from 11.2, ``_trace.txt``) kept in the store as ``result:NAME``;
- every LUN a target: "write" when ``write`` > 0 (ORION overwrites the LUNs), else "read". The
  write guard judges them; ORION is never asked to open anything it did not clear.

The roles: :mod:`~racperf_tui.tools.orion.config` (the config and its validation),
:mod:`~racperf_tui.tools.orion.matrix` (the planned matrix and its times),
:mod:`~racperf_tui.tools.orion.oracle_home` (where ORION is), :mod:`~racperf_tui.tools.orion.plan`
(the run), :mod:`~racperf_tui.tools.orion.result` (the output formats, 11.1 to 19c),
:mod:`~racperf_tui.tools.orion.stream` (the live stream parser) and
:mod:`~racperf_tui.tools.orion.live` (the live model of the LUNs' load); here the description and
:data:`TOOL`, and the tool-level API re-exported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.contract.tool import GUARDED, HOME, MetricSpec, ResultTable, ToolDescription, ToolOption
from racperf_tui.core.contract.tool import RUNS as RUNS_PROGRAM
from racperf_tui.tools.orion.config import DEFAULT_TESTNAME, MATRICES, RUNS, SIMULATES, TYPES, OrionConfig, orion_config
from racperf_tui.tools.orion.matrix import (
    DataPoint,
    hard_limit_s,
    orion_estimate_s,
    planned_duration_s,
    planned_matrix,
    schedule,
)
from racperf_tui.tools.orion.maxima import DATA_POINT_COLUMNS, RESULTS, data_point_rows
from racperf_tui.tools.orion.oracle_home import (
    find_oracle_home,
    install_hint,
    oracle_home_candidates,
    remember_oracle_home,
)
from racperf_tui.tools.orion.plan import build_argv, invocation, tool_version
from racperf_tui.tools.orion.result import (
    OrionError,
    parse_csv,
    parse_output,
    parse_path,
    parse_result,
    parse_result_files,
    succeeded,
)
from racperf_tui.tools.orion.result_sections import result_notes, result_sections
from racperf_tui.tools.orion.stream import OrionStreamParser

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

name = "orion"

_HELP = {
    "run": "workload: simple (small, then large I/O, alone), normal (their combinations), oltp (small I/O "
    "at increasing loads: max IOPS), dss (large I/O at increasing loads: max MB/s), advanced (the "
    "options below)",
    "testname": "prefix of ORION's files (<testname>.lun, <testname>_<date>_*); without .lun",
    "lun": "a LUN ORION tests (a device or a file), one per --set lun=... (in the form: several, separated by "
    "spaces; the devices racperf sees are suggested, right arrow takes one)",
    "num_disks": "physical disks behind the LUNs: sets the range of loads (default: the number of LUNs)",
    "size_small": "small I/O size in KB (advanced; default 8)",
    "size_large": "large I/O size in KB (advanced; default 1024)",
    "type": "large I/O: rand or seq (advanced; default rand)",
    "num_streamIO": "outstanding I/Os per sequential stream (advanced, type=seq; default 4)",
    "simulate": "LUN layout for large I/O: concat or raid0 (advanced; with num_disks)",
    "write": "percent of I/Os that write (advanced; default 0). WRITES OVER EVERY LUN",
    "cache_size": "the array's cache in MB (0: no cache warming)",
    "duration": "seconds per data point (advanced; default 60)",
    "num_small": "outstanding small I/Os (advanced; matrix point, col, max)",
    "num_large": "outstanding large I/Os or streams (advanced; matrix point, row, max)",
    "matrix": "data points: basic, detailed, point, col, row, max (advanced; default basic)",
    "hugenotneeded": "run without huge pages (-hugenotneeded)",
    "verbose": "progress in ORION's trace file (-verbose)",
    "storax": "ORION's I/O layer (-storax), e.g. skgfr",
    "oracle_home": "the database or grid home holding bin/orion (remembered; default: $ORACLE_HOME, "
    "/etc/oratab, the grid home)",
    "orion": "the orion binary itself (a standalone download)",
}
#: a choice's default is ORION's own (a form shows it; an option left at it is not passed)
OPTIONS: tuple[ToolOption, ...] = (
    ToolOption("run", "choice", "simple", _HELP["run"], RUNS),
    ToolOption("testname", "str", DEFAULT_TESTNAME, _HELP["testname"]),
    ToolOption("lun", "path", None, _HELP["lun"], repeatable=True, access=GUARDED),
    ToolOption("num_disks", "count", None, _HELP["num_disks"]),
    ToolOption("size_small", "count", None, _HELP["size_small"], unit="KB"),
    ToolOption("size_large", "count", None, _HELP["size_large"], unit="KB"),
    ToolOption("type", "choice", "rand", _HELP["type"], TYPES),
    ToolOption("num_streamIO", "count", None, _HELP["num_streamIO"]),
    ToolOption("simulate", "choice", "concat", _HELP["simulate"], SIMULATES),
    ToolOption("write", "percent", None, _HELP["write"]),
    ToolOption("cache_size", "count", None, _HELP["cache_size"], unit="MB"),
    ToolOption("duration", "duration", None, _HELP["duration"]),
    ToolOption("num_small", "count", None, _HELP["num_small"]),
    ToolOption("num_large", "count", None, _HELP["num_large"]),
    ToolOption("matrix", "choice", "basic", _HELP["matrix"], MATRICES),
    ToolOption("hugenotneeded", "bool", False, _HELP["hugenotneeded"]),
    ToolOption("verbose", "bool", False, _HELP["verbose"]),
    ToolOption("storax", "str", None, _HELP["storax"]),
    ToolOption("oracle_home", "path", "", _HELP["oracle_home"], access=HOME),
    ToolOption("orion", "path", "", _HELP["orion"], access=RUNS_PROGRAM),
)
#: the LUNs' load in diskstats, each second (the live view's sparklines; the clock's
#: progress is the progress bar)
METRICS = (
    MetricSpec("lun_iops", "LUN IOPS", "IOPS", decimals=0, chart="iops", quantity="throughput"),
    MetricSpec("lun_mbps", "LUN MB/s", "MB/s", decimals=1, chart="mbps", quantity="throughput"),
    MetricSpec("lun_await_ms", "LUN await", "ms", decimals=2, chart="await", quantity="latency"),
    MetricSpec("lun_avgqu_sz", "LUN avgqu-sz", "", decimals=1, chart="queue", better="none"),
)


class OrionDescription(ToolDescription):
    """ORION's result is matrices and maxima at data points: laid out by result_sections."""

    def result_sections(self, result: Mapping[str, Any] | None) -> list[ResultTable]:
        return result_sections(result) if result is not None else []

    def result_notes(self, result: Mapping[str, Any] | None) -> list[str]:
        return result_notes(result or {})

    def data_points(self, result: Mapping[str, Any] | None) -> tuple[tuple[str, ...], list[tuple[Any, ...]]] | None:
        rows = data_point_rows(result)
        return (DATA_POINT_COLUMNS, rows) if rows else None


DESCRIPTION = OrionDescription(
    name=name,
    summary="Oracle's storage calibration (ORION): IOPS, MB/s and latency over a matrix of small and large I/O loads",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
    live_panels=("orion_points",),
    result_panels=("orion_matrix",),
)


class OrionTool:
    """The ORION :class:`racperf_tui.tools.base.Tool`, on the run contract."""

    name = "orion"
    description = DESCRIPTION
    install_hint = install_hint
    config_class = OrionConfig
    #: ORION prints its failures on stdout, libraries' on stderr: both are read
    merge_stderr = True
    stop_grace_s = 5.0
    #: the run's record of protections (core.supervisor)
    option_guard = "options: ORION's own, each validated by racperf (no free-form arguments)"

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
        return invocation(config, run_dir, host)

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        return build_argv(config)

    def validate(self, config: Mapping[str, Any]) -> list[str]:
        try:
            return orion_config(config).problems()
        except ValueError as exc:
            return [str(exc)]

    def planned_duration_s(self, config: Mapping[str, Any]) -> float:
        return planned_duration_s(config)

    def stream_parser(self, config: Mapping[str, Any]) -> OrionStreamParser:
        return OrionStreamParser(config)

    def parse_result(self, output: str) -> dict[str, Any]:
        return parse_result(output)

    def parse_result_files(self, output: str, files: dict[str, str]) -> dict[str, Any]:
        return parse_result_files(output, files)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        return succeeded(result, exit_status)

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return hard_limit_s(config)

    def tool_version(self, argv: list[str], host: Host | None = None) -> str | None:
        return tool_version(argv, host)


TOOL = OrionTool()

__all__ = [
    "TOOL",
    "install_hint",
    "OrionConfig",
    "OrionError",
    "OrionStreamParser",
    "DataPoint",
    "find_oracle_home",
    "hard_limit_s",
    "invocation",
    "oracle_home_candidates",
    "orion_estimate_s",
    "parse_csv",
    "parse_output",
    "parse_path",
    "parse_result_files",
    "planned_duration_s",
    "planned_matrix",
    "remember_oracle_home",
    "schedule",
    "succeeded",
]
