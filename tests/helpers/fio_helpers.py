"""Running fio the way the supervisor does: plan, write guard, prepare, the job file written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from racperf_tui.orchestration.run_plan import JudgedRun, judge_run
from racperf_tui.tools import fio
from racperf_tui.tools.fio.config import FioConfig


def config_dict(config: Any) -> dict[str, Any]:
    return config.to_dict() if isinstance(config, FioConfig) else dict(config)


def judged(config: Any, run_dir: Path) -> JudgedRun:
    """Plan and judge ``config`` (PlanRefused / ValueError when refused), prepare, and write
    the job file into ``run_dir``, as the supervisor does before it starts fio."""
    run_dir.mkdir(parents=True, exist_ok=True)
    values = config_dict(config)
    result = judge_run(fio, "fio", values, str(run_dir))
    fio.TOOL.prepare(values, result.invocation)
    for name, text in result.invocation.files.items():
        (run_dir / name).write_text(text)
    return result


def planned_argv(config: Any, run_dir: Path) -> list[str]:
    """The argv the supervisor would run for ``config`` (its job file written in ``run_dir``)."""
    return list(judged(config, run_dir).invocation.argv)


def job_text(config: Any, run_dir: Path) -> str:
    return judged(config, run_dir).invocation.files["job.fio"]


def randread_argv(path: str, iodepth: int, seconds: int, name: str = "load") -> list[str]:
    """A plain fio (not racperf's) reading 4k at random from ``path`` with libaio, direct, for
    ``seconds``: the load of the saturation and foreign I/O tests."""
    return [
        "fio",
        f"--name={name}",
        f"--filename={path}",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=libaio",
        f"--iodepth={iodepth}",
        "--direct=1",
        "--size=64m",
        f"--runtime={seconds}",
        "--time_based",
        "--readonly",
    ]
