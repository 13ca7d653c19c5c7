"""Before a run that touches storage starts, the UI says which of the kernel's protections this
machine lacks (an old kernel, no unshare, not root) and asks; refused, nothing is recorded.

This machine has them all, so the test stands in for an older one by answering the one question
the UI asks of the kernel (``missing_protections``) with what such a machine answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Select, Static

from racperf_tui.core.guard import devjail
from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import wait_for_run
from racperf_tui.ui import run_actions
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.screens.tool_form import ToolForm
from tests.helpers import needs_fio
from tests.helpers.pilot_apps import RunsApp, wait_until

SIZE = (100, 30)
OLD_KERNEL = [
    "read-only mounts not active: unshare(CLONE_NEWNS) is refused here: Operation not permitted",
    "device jail not active: unshare(CLONE_NEWNS) is refused here: Operation not permitted",
    "Landlock not active: this kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)",
]


@pytest.mark.root
def test_this_machine_lacks_nothing() -> None:
    assert devjail.missing_protections() == []


async def _fio_form(pilot, app: RunsApp, target: Path) -> ToolForm:  # type: ignore[no-untyped-def]
    await pilot.press("n", "enter")  # the New run picker: fio is first
    await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
    form: ToolForm = app.screen  # type: ignore[assignment]
    await pilot.pause()
    form.query_one("#preset", Select).value = "8k-randwrite"
    await pilot.pause()
    for name, value in (("target", str(target)), ("size", "1M"), ("runtime_s", "1"), ("ramp_time_s", "0")):
        form.query_one(f"#field-{name}", Input).value = value
    await pilot.pause()
    assert not form.errors, form.errors
    return form


@needs_fio
async def test_missing_protections_are_named_and_asked_before_the_run(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_actions, "missing_protections", lambda: list(OLD_KERNEL))
    target = tmp_path / "bench.dat"
    app = RunsApp(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        form = await _fio_form(pilot, app, target)
        await pilot.click("#launch")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), 20, "the question")
        question: ConfirmDialog = app.screen  # type: ignore[assignment]
        for line in OLD_KERNEL:
            assert f"- {line}" in question.question
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is form, 10, "back to the form")
        shown = str(form.query_one("#form-general-error", Static).render())
        assert shown == "not started: the kernel's protections are missing here"
        with Store.open(data_dir) as store:
            assert store.list_runs() == []
        await pilot.pause(0.25)
        await pilot.click("#launch")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), 20, "the question again")
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 20, "the live view")
        run_id = app.screen.run_id  # type: ignore[attr-defined]
    record = wait_for_run(run_id, data_dir, 60)
    assert record.state.finished and target.exists()
