"""Deleting recorded runs: the record, its samples (and raw output and result) and its run
directory (the job file racperf wrote, the tool's logs), never a run still going.

All the runs asked for are checked before any is deleted: a request naming a running run
deletes nothing. A run whose supervisor vanished is marked interrupted first (it is no longer
going, so it can be deleted). The run directory is removed only where it is a directory of
its own under the data dir's ``runs/`` (a symlink put there is unlinked, never followed).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import RunRecord, Store


class DeleteRefused(ValueError):
    """A run that cannot be deleted now (still going); nothing was deleted."""


@dataclass(frozen=True)
class Doomed:
    """What deleting one run removes: shown before (the confirmation), said after."""

    run: RunRecord
    samples: int
    run_dir: Path | None  # None: it has none (a run of another node, or made before run dirs)

    def describe(self) -> str:
        where = f"{self.run.target or '-'} at {self.run.host}"
        kept = f", its run directory {self.run_dir}" if self.run_dir is not None else ""
        label = f" [{self.run.label}]" if self.run.label else ""
        samples = f"{self.samples} sample" + ("" if self.samples == 1 else "s")
        what = f"{self.run.tool} on {where}, {self.run.state.value}"
        return f"run {self.run.id}{label} ({what}): the record, {samples}{kept}"


def run_dir_of(data_dir: Path, run_id: int) -> Path:
    """Where the run's directory is (core/paths.run_dir), without making it."""
    return Path(data_dir) / "runs" / str(run_id)


def plan_deletion(store: Store, run_ids: Sequence[int]) -> list[Doomed]:
    """What deleting ``run_ids`` removes (RunNotFound for an unknown id; DeleteRefused, naming
    them, when some are still going)."""
    store.mark_interrupted_runs()
    runs = [store.get_run(run_id) for run_id in dict.fromkeys(run_ids)]
    going = [run for run in runs if run.state in (RunState.PENDING, RunState.RUNNING)]
    if going:
        names = ", ".join(f"{run.id} ({run.state.value})" for run in going)
        raise DeleteRefused(f"run {names} is still going: stop it first (racperf runs stop ID); nothing was deleted")
    doomed = []
    for run in runs:
        directory = run_dir_of(store.path.parent, run.id)
        present = directory.is_symlink() or directory.exists()
        doomed.append(Doomed(run, store.sample_count(run.id), directory if present else None))
    return doomed


def delete_runs(store: Store, run_ids: Sequence[int]) -> list[Doomed]:
    """Delete the runs (all checked first: plan_deletion); returns what was removed. OSError
    when a run directory cannot be removed (its record is gone by then: the message says so)."""
    doomed = plan_deletion(store, run_ids)
    for one in doomed:
        store.delete_run(one.run.id)
        if one.run_dir is not None:
            _remove_dir(one.run_dir)
    return doomed


def _remove_dir(directory: Path) -> None:
    try:
        if directory.is_symlink() or not directory.is_dir():
            os.unlink(directory)
        else:
            shutil.rmtree(directory)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OSError(f"the run's record is deleted, but not its run directory {directory}: {exc.strerror}") from exc
