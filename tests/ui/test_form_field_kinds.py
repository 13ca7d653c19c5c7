"""Issue 21: the fio form accepted ``/dev/loop4`` in ``size`` and previewed
``--size=/dev/loop4`` unflagged. Every field is checked by its option's declared kind (sizes,
counts, durations, percentages, paths: ToolOption.check), flagged in the form and the
preview, and refused at start whoever built the config."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, Label

from racperf_tui.core.contract.tool import ToolOption
from racperf_tui.orchestration.run_plan import PlanRefused, judge_run
from racperf_tui.tools import load_tool, tool_description
from racperf_tui.ui.screens.tool_form import ToolForm
from tests.helpers.pilot_apps import ScreenApp, wait_until


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("size", ["256m", "8k", "1G", "10%", "4k,64k", "512", "1.5g", "64KiB"], ["/dev/loop4", "lots", "8q", "-1k"]),
        ("count", ["0", "4", 32], ["2.5", "-1", "four"]),
        ("duration", ["0", "1.5", 60], ["-3", "1m?", "soon"]),
        ("percent", ["0", "70", "100"], ["101", "-1", "most"]),
        ("path", ["/tmp/a b.fio", "rel/job.fio"], ["/tmp/a\nb"]),
    ],
)
def test_each_kind_takes_its_values_and_names_what_it_refuses(kind: str, good: list, bad: list) -> None:
    option = ToolOption("x", kind)
    for value in good:
        option.convert(value)
    for value in bad:
        with pytest.raises(ValueError, match=r"^x: "):
            option.convert(value)


def test_fio_declares_the_kinds_of_its_fields() -> None:
    kinds = {o.name: o.kind for o in tool_description("fio").options}
    assert kinds["size"] == kinds["bs"] == "size"
    assert kinds["runtime_s"] == kinds["ramp_time_s"] == "duration"
    assert kinds["iodepth"] == kinds["numjobs"] == "count" and kinds["rwmixread"] == "percent"


def test_a_start_refuses_a_wrong_kind_whoever_built_the_config(tmp_path: Path) -> None:
    with pytest.raises(PlanRefused, match=r"^fio: size: '/dev/loop4' is not a size"):
        judge_run(load_tool("fio"), "fio", {"target": str(tmp_path / "f"), "size": "/dev/loop4"})


async def test_the_form_flags_a_path_in_size_and_its_preview_says_so(data_dir: Path) -> None:
    app = ScreenApp(lambda: ToolForm("fio", data_dir))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the form")
        form = app.screen
        assert isinstance(form, ToolForm)
        form.query_one("#field-size", Input).value = "/dev/loop4"
        form.query_one("#field-rwmixread", Input).value = "170"
        await pilot.pause()
        assert str(form.query_one("#error-size", Label).render()).startswith("'/dev/loop4' is not a size")
        assert "not a percentage" in str(form.query_one("#error-rwmixread", Label).render())
        assert form.query_one("#field-size", Input).has_class("-invalid")
        preview = str(form.query_one("#preview").render())
        assert "--size=/dev/loop4" not in preview
        assert preview.startswith(
            "✗ size: '/dev/loop4' is not a size like 256m, 8k, 1g or 10% (not in the command below)"
        )
        assert form.query_one("#launch", Button).disabled
        form.query_one("#field-size", Input).value = "64m"
        form.query_one("#field-rwmixread", Input).value = "70"
        await wait_until(pilot, lambda: not form.errors, 10, "the fields fixed")
        assert "--size=64m" in str(form.query_one("#preview").render())
