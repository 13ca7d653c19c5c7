"""fio on the run contract: its description (options, live metrics, headline), the plan
(fio's own reading of the config as one job file), the preparation and :data:`TOOL`.

How a run is driven: fio runs with ``--output-format=json+ --status-interval=1`` and writes
a complete, cumulative JSON report every interval, the final report last.
:class:`~racperf_tui.tools.fio.stream.FioStreamParser` cuts those reports out of the output
line by line and differences consecutive ones into per-interval Samples (IOPS, KiB/s and
completion-latency percentiles of that interval only). The whole output then goes to
:func:`~racperf_tui.tools.fio.result.parse_output`, which takes the last complete report.
The form's config and presets are :mod:`racperf_tui.tools.fio.config`, the scratch target
:mod:`racperf_tui.tools.fio.scratch`.

Safety: racperf never runs the user's fio command line as given. :meth:`FioTool.invocation`
has fio itself resolve it (:mod:`racperf_tui.tools.fio.plan`), refuses every option not on the
allow list (:mod:`racperf_tui.tools.fio.policy`), names every path each job reads or writes as
the Invocation's targets (which the write guard judges, outside this module), and runs fio on
one job file written from that resolved plan. Read-only plans get ``--readonly``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from racperf_tui.core import units
from racperf_tui.core.contract.invocation import Invocation, ToolNotFound
from racperf_tui.core.contract.tool import READS, MetricSpec, ResultTable, ToolDescription, options_from_dataclass
from racperf_tui.core.remote.node_vetting import NodeVetter
from racperf_tui.tools.base import on_another_node
from racperf_tui.tools.fio import result_sections as fio_result_sections
from racperf_tui.tools.fio.config import (
    DEFAULT_HARD_LIMIT_S,
    IOENGINES,
    PRESET_DESCRIPTIONS,
    PRESETS,
    RW_MODES,
    FioConfig,
    form_presets,
    hard_limit,
    validated_config,
)
from racperf_tui.tools.fio.options import FioOptionError, FioOptionTable, option_table
from racperf_tui.tools.fio.plan import FioPlan, FioPlanError, plan, private_copies_directory, verify_job_file
from racperf_tui.tools.fio.result import parse_output, succeeded
from racperf_tui.tools.fio.scratch import (
    default_scratch_dir,
    ensure_private_scratch,
    ensure_private_scratch_on,
    lay_out_read_targets,
    lay_out_read_targets_on,
    lay_out_write_targets,
    lay_out_write_targets_on,
)
from racperf_tui.tools.fio.stream import DIRECTIONS, SAMPLE_PERCENTILES, FioStreamParser

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: what to tell a user whose machine has no fio
install_hint = "apt-get install fio / dnf install fio / yum install fio"


def fio_path() -> str | None:
    """Path of the fio binary, None when fio is not installed."""
    return shutil.which("fio")


def missing_fio_message() -> str:
    """What to say when fio is not installed."""
    return f"fio is not installed; install it with: {install_hint}"


# ----------------------------------------------------------------------------------------
# building the command


JOB_FILE_NAME = "job.fio"
#: where the job file is said to be before a run has a directory (validation, previews)
_UNPLACED_RUN_DIR = "<run directory>"


def _option_s(job_options: Mapping[str, Any], key: str) -> float:
    """A job's time option in seconds (0 when unset)."""
    return units.maybe_duration_s(str(job_options.get(key) or "0")) or 0.0


def plan_hard_limit(fio_plan: FioPlan) -> float:
    """From every job's runtime + ramp_time; fio's default limit when a job has none."""
    longest = 0.0
    for job in fio_plan.jobs:
        runtime = _option_s(job.options, "runtime")
        if runtime <= 0:
            return DEFAULT_HARD_LIMIT_S
        longest = max(longest, runtime + _option_s(job.options, "ramp_time") + _option_s(job.options, "startdelay"))
    return hard_limit(longest) if longest else DEFAULT_HARD_LIMIT_S


def fio_on(host: Host | None) -> str:
    """The fio that runs on ``host`` (this machine when None or local); ToolNotFound naming
    where it is missing and how to install it."""
    remote = on_another_node(host)
    fio = host.which("fio") if remote and host is not None else fio_path()
    if fio is not None and remote and host is not None:
        # vetted there before anything asks it (its option table, --version, --showcmd): no
        # unvetted program runs, planning included (here run_briefly vets each program it runs)
        NodeVetter(host).program(fio, f"fio on {host.name}")
    if fio is not None:
        return fio
    if remote and host is not None:
        raise ToolNotFound(f"fio is not installed on {host.name}; install it there with: {install_hint}")
    raise ToolNotFound(missing_fio_message())


def fio_option_table(fio: str, host: Host | None) -> FioOptionTable:
    """That fio's option table (read on ``host``), its failure as a plan refusal."""
    try:
        return option_table(fio, host)
    except FioOptionError as exc:
        raise FioPlanError([str(exc)]) from None


def verify_planned_job(fio: str, fio_plan: FioPlan, host: Host | None) -> None:
    """fio reads back the job file racperf will run and must find exactly the judged plan."""
    # a private directory (never one another user's $TMPDIR lets them empty and refill): fio's
    # parser reads this file, and an engine named in a swapped one would load as root
    with private_copies_directory() as check_dir:
        check_path = os.path.join(check_dir, JOB_FILE_NAME)
        with open(check_path, "w", encoding="utf-8") as handle:
            handle.write(fio_plan.job_file_text)
        verify_job_file(fio, check_path, fio_plan.jobs, host=host)


def invocation(
    config: Mapping[str, Any] | FioConfig, run_dir: str | None = None, host: Host | None = None
) -> Invocation:
    """The run: fio's own reading of the config, judged option by option, as one job file.

    ``host``: where fio will run (this machine when None). The fio there reads the job: its
    version decides the option table (cached per node, path, version and checksum) and its
    parse trace the plan, so nothing of this machine's fio decides what runs on a node.
    ValueError (FioPlanError) names every refused option and why; ToolNotFound when fio is
    missing (there). The Invocation's targets are every path of every job; the caller's write
    guard judges them. Before returning, fio reads racperf's job file back and must find
    exactly the plan that was judged.
    """
    cfg = validated_config(config)
    fio = fio_on(host)
    fio_plan = plan(fio, fio_option_table(fio, host), cfg.fio_args(), log_dir=run_dir, host=host)
    verify_planned_job(fio, fio_plan, host)
    place = run_dir or _UNPLACED_RUN_DIR
    argv = [fio, "--output-format=json+"]
    user_interval = next((a.value for a in fio_plan.top_level if a.name == "status-interval"), None)
    argv.append(f"--status-interval={user_interval or cfg.status_interval_text()}")
    passed_on = {"warnings-fatal", "alloc-size", "max-jobs"}
    argv += [
        f"--{a.name}" if a.value is None else f"--{a.name}={a.value}" for a in fio_plan.top_level if a.name in passed_on
    ]
    notes = []
    if not fio_plan.writes:
        argv.append("--readonly")
        notes.append("read-only: fio runs with --readonly")
    argv.append(f"--aux-path={place}")
    argv.append(os.path.join(place, JOB_FILE_NAME))
    return Invocation(
        argv=argv,
        files={JOB_FILE_NAME: fio_plan.job_file_text, **fio_plan.input_files},
        targets=tuple(fio_plan.targets),
        hard_limit_s=plan_hard_limit(fio_plan),
        notes=tuple(notes),
        detail=fio_plan,
        # on a node fio runs in the run's directory: what its working directory holds decides
        # a job's file (a job name that is not a regular file there), and there racperf knows it
        cwd="." if on_another_node(host) else None,
    )


def prepare(config: Mapping[str, Any] | FioConfig, planned: Invocation, host: Host | None = None) -> None:
    """Side effects before the run, once the guard cleared it, on the host where fio runs
    (this machine when None): racperf's private scratch directory, the files a read-only
    plan reads laid out, and the files a writing plan writes laid out as fio would (the
    jail binds them writable, not their directories: fio must not need to unlink them).
    ValueError says what is wrong (and on which node)."""
    validated_config(config)  # the plan holds everything else
    local = not on_another_node(host)
    scratch = os.path.abspath(default_scratch_dir())
    for target in planned.targets:
        if os.path.dirname(target.path) == scratch:
            if local:
                ensure_private_scratch(scratch, target.path)
            else:
                assert host is not None
                ensure_private_scratch_on(host, scratch, target.path)
    if isinstance(planned.detail, FioPlan):
        if local:
            lay_out_read_targets(planned.detail)
            lay_out_write_targets(planned.detail)
        else:
            assert host is not None
            lay_out_read_targets_on(host, planned.detail)
            lay_out_write_targets_on(host, planned.detail)


def build_argv(config: Mapping[str, Any] | FioConfig) -> list[str]:
    """The argv of :func:`invocation` (its job file not yet placed): for callers that only
    want to know whether the config is refused, and what would run."""
    return invocation(config).argv


def command_preview(config: Mapping[str, Any] | FioConfig) -> str:
    """Shell-quoted command line of ``config`` (not validated: the form shows it as typed)."""
    cfg = config if isinstance(config, FioConfig) else FioConfig.from_dict(config)
    return cfg.command_preview()


_FIO_HELP = {
    "target": "the file, directory or block device fio works on (default: a private scratch file)",
    "size": "the size of the file / the region of the device (256m, 1g, 10%)",
    "runtime_s": "seconds to run",
    "time_based": "run for runtime_s even when size was done",
    "ramp_time_s": "seconds of warm-up not counted in the figures",
    "bs": "block size (8k, 1m; read,write as 8k,64k)",
    "rw": "the I/O pattern",
    "rwmixread": "percentage of reads in a mixed pattern",
    "ioengine": "how fio submits I/O",
    "iodepth": "I/Os in flight per job (async engines)",
    "numjobs": "parallel jobs",
    "direct": "O_DIRECT: bypass the page cache",
    "group_reporting": "one figure for all jobs",
    "extra_args": "more fio options (judged against racperf's allow list)",
    "job_file": "an fio job file instead of the fields (custom mode)",
    "status_interval_s": "seconds between live samples",
    "destructive": "allow writing a device the write guard refuses (headless --destructive)",
    "custom": "the command line is extra_args and job_file only",
    "name": "the job's name",
}

#: fio's form and --set keys, from FioConfig's fields. --set only: destructive (a form
#: overrides the write guard by the typed device name), custom (comes with its preset), the
#: interval and the job's name (the form keeps to the job's fields: 15 rows)
OPTIONS = options_from_dataclass(
    FioConfig,
    _FIO_HELP,
    choices={"rw": RW_MODES, "ioengine": IOENGINES},
    kinds={
        "target": "target",
        "job_file": "path",
        "size": "size",
        "bs": "size",
        "runtime_s": "duration",
        "ramp_time_s": "duration",
        "rwmixread": "percent",
        "iodepth": "count",
        "numjobs": "count",
        "status_interval_s": "duration",
    },
    access={"job_file": READS},
    not_in_form=("destructive", "custom", "status_interval_s", "name"),
)
#: what a live fio run shows: bandwidth stored in KiB/s, shown in MiB/s
METRICS = (
    MetricSpec("read_iops", "read IOPS", "IOPS", decimals=0, chart="iops"),
    MetricSpec("write_iops", "write IOPS", "IOPS", decimals=0, chart="iops"),
    MetricSpec("read_bw_kib_s", "read BW", "MiB/s", divisor=1024.0, chart="bw"),
    MetricSpec("write_bw_kib_s", "write BW", "MiB/s", divisor=1024.0, chart="bw"),
    *(
        MetricSpec(f"{d}_clat_{p}_us", f"{d} clat {p}", "µs", chart="lat")
        for d in DIRECTIONS
        for p in SAMPLE_PERCENTILES
    ),
)

#: the result's figures a comparison and the criteria read (result_figures): totals over jobs
RESULTS = (
    *METRICS[:4],
    *(MetricSpec(f"{d}_clat_mean_us", f"{d} clat mean", "µs") for d in DIRECTIONS),
    *(MetricSpec(f"{d}_clat_{p}_us", f"{d} clat {p}", "µs") for d in DIRECTIONS for p in SAMPLE_PERCENTILES),
)
#: SAMPLE_PERCENTILES' names -> fio's percentile keys
_PERCENTILE_KEYS = {name: f"{pct:.2f}" for name, pct in SAMPLE_PERCENTILES.items()}


def result_figures(result: Mapping[str, Any] | None) -> dict[str, float]:
    """The whole run's figures from its jobs: IOPS and bandwidth summed; the mean completion
    latency weighted by each job's I/Os; a percentile exact with one job (group_reporting),
    and with several the highest job's, an upper bound (percentiles of separate jobs do not
    combine)."""
    jobs = [job for job in (result or {}).get("jobs") or [] if isinstance(job, Mapping)]
    figures: dict[str, float] = {}
    for d in DIRECTIONS:
        sides = [job[d] for job in jobs if isinstance(job.get(d), Mapping) and _number(job[d].get("iops")) is not None]
        if not sides:
            continue
        figures[f"{d}_iops"] = sum(_number(side.get("iops")) or 0.0 for side in sides)
        figures[f"{d}_bw_kib_s"] = sum(_number(side.get("bw_kib_s")) or 0.0 for side in sides)
        clats = [side.get("clat_us") for side in sides if isinstance(side.get("clat_us"), Mapping)]
        weighted = [
            (_number(clat.get("mean")), _number(side.get("total_ios")) or _number(side.get("iops")) or 0.0)
            for side, clat in zip(sides, clats)
        ]
        total = sum(weight for mean, weight in weighted if mean is not None)
        if total > 0:
            figures[f"{d}_clat_mean_us"] = sum(mean * weight for mean, weight in weighted if mean is not None) / total
        for name, key in _PERCENTILE_KEYS.items():
            found = [_number((clat.get("percentiles") or {}).get(key)) for clat in clats]
            values = [value for value in found if value is not None]
            if values:
                figures[f"{d}_clat_{name}_us"] = max(values)
    return figures


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class FioDescription(ToolDescription):
    """fio's figure is its total IOPS (both directions, every job); its plan, runtime + ramp."""

    def sample_headline(self, metrics: Mapping[str, Any]) -> str:
        if "read_iops" not in metrics and "write_iops" not in metrics:
            return ""
        return METRICS[0].compact(float(metrics.get("read_iops") or 0) + float(metrics.get("write_iops") or 0))

    def headline(self, result: Mapping[str, Any] | None) -> str:
        jobs = [job for job in (result or {}).get("jobs") or [] if isinstance(job, Mapping)]
        if not jobs:
            return ""
        return METRICS[0].compact(
            sum(float((job.get(d) or {}).get("iops") or 0.0) for job in jobs for d in ("read", "write"))
        )

    def result_figures(self, result: Mapping[str, Any] | None) -> dict[str, float]:
        return result_figures(result)

    def result_sections(self, result: Mapping[str, Any] | None) -> list[ResultTable]:
        return fio_result_sections.result_sections(result) if result is not None else []

    def result_notes(self, result: Mapping[str, Any] | None) -> list[str]:
        return fio_result_sections.result_notes(result or {})

    def planned_duration_s(self, config: Mapping[str, Any]) -> float | None:
        # FioConfig's reading: a config holds only what differs from its defaults (a form,
        # --set), so a runtime_s left at 60 is not in it
        cfg = FioConfig.from_dict(config)
        if cfg.custom:
            return None  # fio's own options: its plan knows, the config does not
        runtime = units.maybe_duration_s(str(cfg.runtime_s or ""))
        if not runtime:
            return None
        return runtime + (units.maybe_duration_s(str(cfg.ramp_time_s or "")) or 0.0)

    def problems(self, config: Mapping[str, Any]) -> list[str]:
        try:
            return FioConfig.from_dict(config).validate()
        except TypeError as error:  # a value of the wrong type for a field
            return [str(error)]

    def command_line(self, config: Mapping[str, Any]) -> str | None:
        return FioConfig.from_dict(config).command_preview()


DESCRIPTION = FioDescription(
    name="fio",
    summary="flexible I/O tester: storage IOPS, bandwidth, latency",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
    takes_raw_args=True,
    presets=form_presets(),
)


class FioTool:
    """The fio :class:`racperf_tui.core.contract.tool.Tool`."""

    name = "fio"
    description = DESCRIPTION
    install_hint = install_hint
    presets = PRESETS
    preset_descriptions = PRESET_DESCRIPTIONS
    config_class = FioConfig
    #: the run's record of protections (core.supervisor)
    option_guard = "options resolved by fio itself and judged against racperf's allow list"

    def available(self) -> bool:
        """True when a fio binary is on PATH."""
        return fio_path() is not None

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
        """See :func:`invocation`."""
        return invocation(config, run_dir, host)

    def prepare(self, config: Mapping[str, Any], planned: Invocation, host: Host | None = None) -> None:
        """See :func:`prepare`."""
        prepare(config, planned, host)

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        """Validated command line (ValueError says what is wrong)."""
        return build_argv(config)

    def command_preview(self, config: Mapping[str, Any]) -> str:
        """Shell-quoted command line, unvalidated, for the form."""
        return command_preview(config)

    def validate(self, config: Mapping[str, Any]) -> list[str]:
        """Per-field errors of a config dict."""
        return FioConfig.from_dict(config).validate()

    def stream_parser(self, config: Mapping[str, Any]) -> FioStreamParser:
        """A fresh parser for one run's output."""
        return FioStreamParser(config)

    def parse_result(self, output: str) -> dict[str, Any]:
        """Whole output -> result dict."""
        return parse_output(output)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        """See :func:`succeeded`."""
        return succeeded(result, exit_status)

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        """runtime + ramp + 10 % + 60 s; 3600 s when the job has no runtime."""
        return FioConfig.from_dict(config).hard_limit_s()


TOOL = FioTool()
