"""The Runs tab's changes to recorded runs: a run's label and note (asked in a TextPrompt),
deleting runs (asked in a ConfirmDialog that lists what goes: records, samples, run
directories). The store is read and written in worker threads with a connection of their
own; the outcome is said in a notification and ``after`` re-reads the list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from racperf_tui.core.run_labels import LabelError, clean_label, clean_note
from racperf_tui.core.store import RunRecord
from racperf_tui.orchestration.run_deletion import DeleteRefused, delete_runs, plan_deletion
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog
from racperf_tui.ui.dialogs.text_prompt import TextPrompt
from racperf_tui.ui.runs_data import open_store
from racperf_tui.ui.shown import markup, plain

#: the two kinds of words on a run: (what the prompt asks, how the text is vetted)
_WORDS: dict[str, tuple[str, Callable[[str], str | None]]] = {
    "label": ("a short name to find it by (the filter's label:, 'racperf runs list --label')", clean_label),
    "note": ("a note on it, shown by 'racperf runs show'", clean_note),
}


def ask_words(app: App[Any], data_dir: Any, run: RunRecord, kind: str, after: Callable[[], Any]) -> None:
    """Ask for the run's ``kind`` ("label" or "note"), then store it (empty: clear it)."""
    what, clean = _WORDS[kind]

    def check(text: str) -> str | None:
        try:
            clean(text)
        except LabelError as exc:
            return str(exc)
        return None

    def answered(text: str | None) -> None:
        if text is None:
            return
        words = clean(text)

        def write() -> None:
            try:
                with open_store(data_dir) as store:
                    (store.set_label if kind == "label" else store.set_note)(run.id, words)
            except Exception as exc:  # noqa: BLE001 - said, never a traceback
                app.call_from_thread(app.notify, f"run {run.id}: {kind} not saved: {exc}", severity="error")
                return
            said = "cleared" if words is None else f"'{words}'"
            app.call_from_thread(app.notify, f"run {run.id}: {kind} {plain(said)}", timeout=3)
            app.call_from_thread(after)

        app.run_worker(write, thread=True, group="run-words")

    current = run.label if kind == "label" else run.note
    app.push_screen(TextPrompt(f"Run {run.id}'s {kind}: {what}", current or "", check=check), answered)


def confirm_and_delete(app: App[Any], data_dir: Any, run_ids: list[int], after: Callable[[list[int]], Any]) -> None:
    """Say what deleting the runs removes and ask; a run still going is refused at once (no
    question). ``after`` gets the ids deleted."""

    def plan() -> None:
        try:
            with open_store(data_dir) as store:
                doomed = plan_deletion(store, run_ids)
        except DeleteRefused as exc:
            app.call_from_thread(app.notify, f"nothing deleted: {exc}", severity="error", timeout=8)
            return
        except Exception as exc:  # noqa: BLE001 - a run gone meanwhile, a store that cannot be read
            app.call_from_thread(app.notify, f"nothing deleted: {exc}", severity="error")
            return
        listing = "\n".join(f"- {markup(one.describe())}" for one in doomed)
        count = f"{len(doomed)} runs" if len(doomed) > 1 else "this run"
        question = f"[b]Delete {count}?[/b] This cannot be undone.\n{listing}"
        app.call_from_thread(app.push_screen, ConfirmDialog(question, yes_label="Delete"), answered)

    def answered(yes: bool | None) -> None:
        if yes:
            app.run_worker(delete, thread=True, group="delete-runs")

    def delete() -> None:
        try:
            with open_store(data_dir) as store:
                deleted = delete_runs(store, run_ids)
        except Exception as exc:  # noqa: BLE001 - a run started meanwhile, a directory that cannot go
            app.call_from_thread(app.notify, f"delete: {exc}", severity="error", timeout=8)
            app.call_from_thread(after, [])
            return
        ids = [one.run.id for one in deleted]
        app.call_from_thread(app.notify, "deleted run " + ", ".join(map(str, ids)), timeout=4)
        app.call_from_thread(after, ids)

    app.run_worker(plan, thread=True, group="delete-runs")
