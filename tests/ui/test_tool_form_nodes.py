"""The New run form's nodes field (issue 21, "Starting work on nodes from the UI"), the nodes
real OpenSSH sshd on 127.0.0.1 (rac1, rac2) and a port nothing listens on (rac3): a name not
in the cluster file is flagged and Launch is off; each node's write guard verdict is shown
before anything starts, a refusal on one node starts nothing anywhere; a node out of reach is
left out and the others run real fio as a run group (the form closes with ``gN``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Button, Input, Label, Select, Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.screens.tool_form import ToolForm
from tests.helpers.cluster_helpers import isolated_home, node_table, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.pilot_apps import wait_until
from tests.helpers.sshd_helpers import Sshd, _free_port

pytestmark = pytest.mark.usefixtures("isolated_home", "remote_runs")


class ClusterFormApp(App[None]):
    """The form over an app that has a cluster file, as the dashboard has."""

    CSS_PATH = APP_CSS_PATH

    def __init__(self, data_dir: Path, cluster_file: Path) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.cluster_file = cluster_file
        self.dismissed: list[object] = []

    def on_mount(self) -> None:
        self.push_screen(ToolForm("fio", self.data_dir), self.dismissed.append)


def _text(widget: object) -> str:
    return str(widget.render())  # type: ignore[attr-defined]


async def _type(pilot, selector: str, text: str) -> None:  # type: ignore[no-untyped-def]
    field = pilot.app.screen.query_one(selector, Input)
    field.value = text
    await pilot.pause()


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_nodes_field_verdicts_then_a_group(sshd: Sshd, tmp_path: Path, data_dir: Path) -> None:
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(
        node_table("rac1", sshd) + node_table("rac2", sshd) + node_table("rac3", sshd, port=_free_port())
    )
    target = tmp_path / "read.dat"
    target.write_bytes(b"\1" * (2 << 20))
    app = ClusterFormApp(data_dir, cluster)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the form")
        form = app.screen
        assert isinstance(form, ToolForm)
        assert form.query_one("#form-nodes", Input).value == "this host"
        form.query_one("#field-rw", Select).value = "randread"
        await _type(pilot, "#field-size", "1m")
        await _type(pilot, "#field-runtime_s", "1")
        # a name the cluster file does not have: flagged, no launch
        await _type(pilot, "#form-nodes", "rac1, rac9")
        assert "no node named 'rac9'" in _text(form.query_one("#error-nodes", Label))
        assert form.query_one("#form-nodes", Input).has_class("-invalid")
        assert form.query_one("#launch", Button).disabled
        # a target no node has: each node's verdict shown, nothing started anywhere
        await _type(pilot, "#form-nodes", "rac1,rac2")
        await _type(pilot, "#field-target", "/dev/racperf-no-such-disk")
        await wait_until(pilot, lambda: not form.query_one("#launch", Button).disabled, 10, "launch enabled")
        await pilot.press("ctrl+l")
        verdicts = form.query_one("#form-node-verdicts", Static)
        await wait_until(pilot, lambda: "rac2: REFUSED" in _text(verdicts), 90, "both verdicts")
        lines = _text(verdicts).splitlines()
        assert lines[0].startswith("rac1: REFUSED: fio: /dev/racperf-no-such-disk") and "no such device" in lines[0]
        assert lines[1].startswith("rac2: REFUSED: ")
        assert "not started: refused on rac1, rac2" in _text(form.query_one("#form-general-error", Static))
        assert app.screen is form and app.dismissed == []
        with Store.open(data_dir) as store:
            assert store.list_groups() == [] and store.list_runs() == []
        # rac3 out of reach: said, left out; rac1 and rac2 run the group
        await _type(pilot, "#field-target", str(target))
        await _type(pilot, "#form-nodes", "rac1, rac2, rac3")
        assert _text(verdicts) == ""  # the verdicts were of other nodes
        await wait_until(pilot, lambda: not form.query_one("#launch", Button).disabled, 10, "launch enabled")
        await pilot.press("ctrl+l")
        began = time.monotonic()
        general = form.query_one("#form-general-error", Static)
        await wait_until(pilot, lambda: app.dismissed, 90, f"the group: {_text(verdicts)} / {_text(general)}")
    assert time.monotonic() - began < 90
    lines = _text(verdicts).splitlines()
    assert lines[:2] == ["rac1: cleared by its write guard", "rac2: cleared by its write guard"]
    assert lines[2].startswith("rac3: not reachable: ") and "Connection refused" in lines[2], lines
    (started,) = app.dismissed
    assert isinstance(started, str) and started.startswith("g")
    deadline = time.monotonic() + 60
    with Store.open(data_dir) as store:
        group = store.get_group(int(started[1:]))
        assert group.nodes == ["rac1", "rac2", "rac3"]
        assert (group.message or "").startswith("started on rac1, rac2; not started on rac3: ")
        while not all(run.state.finished for run in store.group_runs(group.id)):
            assert time.monotonic() < deadline, [run.state for run in store.group_runs(group.id)]
            time.sleep(0.2)
        runs = store.group_runs(group.id)
        assert sorted(run.host for run in runs) == ["rac1", "rac2"]
        assert all(run.state is RunState.SUCCEEDED for run in runs), [(r.state, r.message) for r in runs]
        assert all(run.config["runtime_s"] == 1 for run in runs)
