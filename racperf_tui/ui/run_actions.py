"""Actions on runs that more than one view offers: stop a run (asking first), stop runs off the
event loop, ask before quitting while runs are running.

Its own module so the views that offer them (the runs list, the live view, the app) import it
and not each other: it imports no screen of the runs UI but the dialogs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.widgets import Static

from racperf_tui.core.guard.devjail import missing_protections
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import node_of_config
from racperf_tui.core.store import Store
from racperf_tui.orchestration.run_plan import PlanRefused, judge_run
from racperf_tui.orchestration.runs import launch_run, stop_run
from racperf_tui.ui.dialogs.confirm_destructive import ConfirmDestructive
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog, QuitDialog
from racperf_tui.ui.shown import markup


def confirm_and_stop(app: App[Any], data_dir: Any, run_id: Any, after: Callable[[], Any] | None = None) -> None:
    """Ask, then stop the run in a thread (a stop waits for the tool's final report)."""

    def answered(yes: bool | None) -> None:
        if yes:
            stop_in_thread(app, data_dir, [run_id], after)

    app.push_screen(
        ConfirmDialog(f"Stop run {run_id}? The tool writes its final report, then exits.", yes_label="Stop run"),
        answered,
    )


def stop_in_thread(app: App[Any], data_dir: Any, run_ids: list[Any], after: Callable[[], Any] | None = None) -> None:
    """Stop runs off the UI thread, then report each outcome as a notification."""

    def stop() -> None:
        for error in stop_runs_blocking(data_dir, run_ids):
            app.call_from_thread(app.notify, f"cannot stop {error}", severity="error")
        app.call_from_thread(app.notify, "stopped run " + ", ".join(str(r) for r in run_ids))
        if after is not None:
            app.call_from_thread(after)

    app.run_worker(stop, thread=True, group="stop-runs")


def stop_runs_blocking(data_dir: Any, run_ids: list[Any]) -> list[str]:
    """Stop each run (waits for each to finish); returns one message per failure."""
    errors = []
    for run_id in run_ids:
        try:
            stop_run(run_id, resolve_data_dir(data_dir))
        except Exception as error:
            errors.append(f"run {run_id}: {error}")
    return errors


def unfinished_run_ids(data_dir: Any) -> list[int]:
    """Ids of the runs still pending or running, read fresh from the store ([] without one)."""
    try:
        with Store.open(resolve_data_dir(data_dir), read_only=True) as store:
            return [run.id for run in store.unfinished_runs()]
    except Exception:
        return []


async def ask_before_quit(app: App[Any], data_dir: Any) -> None:
    """Quit at once when nothing runs; else ask: stop the runs, leave them running, or cancel.

    Runs left running need nothing from us: their supervisors are detached and keep
    recording; racperf started again shows them live. The store is read off the event loop.
    """
    if isinstance(app.screen, QuitDialog):
        return
    running = await asyncio.to_thread(unfinished_run_ids, data_dir)
    if not running:
        app.exit()
        return

    def chosen(choice: str | None) -> None:
        if choice == "leave":
            app.exit()
        elif choice == "stop":
            app.notify(f"stopping {len(running)} run(s)...", timeout=30)

            def stop_then_exit() -> None:
                errors = stop_runs_blocking(data_dir, running)
                if errors:
                    app.call_from_thread(app.notify, "; ".join(errors), severity="error")
                app.call_from_thread(app.exit)

            app.run_worker(stop_then_exit, thread=True, group="quit-stop")

    app.push_screen(QuitDialog([str(r) for r in running]), chosen)


async def _accept_missing_protections(app: App[Any], config: dict[str, Any]) -> bool:
    """A run on this machine that touches storage, where the kernel cannot give it the read-only
    mounts, the device jail or Landlock: the user is told which, and why, and asked before it
    starts. A run on another node is told by that node's net once it runs (``runs show``)."""
    if not node_of_config(config).is_local:
        return True
    missing = await asyncio.to_thread(missing_protections)
    if not missing:
        return True
    question = (
        "[b]This run would lack protections that keep data safe:[/b]\n"
        + "\n".join(f"- {markup(line)}" for line in missing)
        + "\nThe write guard has checked every target; without these a wrong model of the tool is not "
        "stopped by the kernel. Start anyway?"
    )
    answer: bool = await app.push_screen_wait(ConfirmDialog(question, "Run without them"))
    return answer


async def judge_then_launch(
    app: App[Any],
    module: Any,
    tool: str,
    config: dict[str, Any],
    data_dir: Any,
    status: Static,
    *,
    target: str | None = None,
    start: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """The launch every form shares: the write guard judges the run off the event loop, each
    refused device needs its name typed (ConfirmDestructive: the override names exactly those
    devices, as ``destructive_targets``), then the run starts. Returns its id, or None with
    the reason in ``status``. Call from a worker (the dialogs are awaited). ``start(config)``
    starts something else than one run once judged (a sweep, judged on its first point's
    config): off the event loop, its return value returned."""
    try:
        judged = await asyncio.to_thread(judge_run, module, tool, config)
        touches_storage = bool(judged.invocation.targets)
    except PlanRefused as refusal:
        guard = refusal.guard
        if guard is None or guard.blocked or not guard.refused:
            status.update(str(refusal))
            return None
        for _target, verdict in guard.refused:
            if not await app.push_screen_wait(ConfirmDestructive(verdict)):
                status.update("not started: the write guard's refusal stands")
                return None
        config = dict(config, destructive_targets=[t.path for t, _verdict in guard.refused])
        touches_storage = True
    except (ValueError, OSError) as error:
        status.update(str(error))
        return None
    if touches_storage and not await _accept_missing_protections(app, config):
        status.update("not started: the kernel's protections are missing here")
        return None
    try:
        if start is not None:
            return await asyncio.to_thread(start, config)
        return await asyncio.to_thread(
            launch_run, tool, config, data_dir=resolve_data_dir(data_dir), target=target or None
        )
    except Exception as error:
        status.update(f"launch failed: {error}")
        return None
