"""Issue 21 for every registered tool, not only fio: a value its option's declared kind
refuses is one clear line and exit status 2 from ``racperf run TOOL --set``, refused by
``judge_run`` whoever built the config, and flagged under its field in the New run form (the
launch disabled, the preview naming it), from the kinds the tools declare
(tests/core/contract/test_option_kinds.py holds every tool to declaring them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, Label

from racperf_tui.cli import main
from racperf_tui.orchestration.run_plan import PlanRefused, judge_run
from racperf_tui.tools import load_tool
from racperf_tui.ui.screens.tool_form import ToolForm
from tests.helpers.pilot_apps import ScreenApp, wait_until

#: (tool, option, a wrong value, what the one line says) for `racperf run TOOL --set`
HEADLESS = [
    ("orion", "size_small", "/dev/loop4", "size_small: '/dev/loop4' is not a whole number of KB"),
    ("calibrate_io", "num_physical_disks", "two", "num_physical_disks: 'two' is not a whole number"),
    ("iperf3", "window", "/dev/loop4", "window: '/dev/loop4' is not a size like 256m, 8k, 1g or 10%"),
    ("probe", "length", "lots", "length: 'lots' is not a size like 256m, 8k, 1g or 10%"),
    ("oratcptest", "length_bytes", "/dev/loop4", "length_bytes: '/dev/loop4' is not a size like 256m, 8k, 1g or 10%"),
    ("netperf", "send_size_bytes", "64K", "send_size_bytes: '64K' is not a whole number of bytes"),
    ("fio_cs", "size", "/dev/loop4", "size: '/dev/loop4' is not a size like 256m, 8k, 1g or 10%"),
]

#: (tool, field, a wrong value typed in the form, how its message under the field begins: a
#: number is said as the number it was read as)
IN_THE_FORM = [
    ("orion", "write", "150", "150 is not a percentage (0 to 100)"),
    ("calibrate_io", "duration_estimate_s", "-5", "-5 is not a duration (seconds, 0 or more)"),
    ("iperf3", "parallel", "2.5", "2.5 is not a whole number, 0 or more"),
    ("probe", "delay_ms", "soon", "'soon' is not a number of milliseconds"),
    ("oratcptest", "sockbuf_bytes", "/dev/loop4", "'/dev/loop4' is not a size like 256m"),
    ("netperf", "interim_s", "-1", "-1 is not a duration (seconds, 0 or more)"),
]


@pytest.mark.parametrize(("tool", "option", "value", "said"), HEADLESS, ids=[c[0] for c in HEADLESS])
def test_racperf_run_refuses_a_wrong_kind_in_one_line(
    tool: str, option: str, value: str, said: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["run", tool, "--data-dir", str(data_dir), "--set", f"{option}={value}"])
    out, err = capsys.readouterr()
    assert status == 2
    assert err.splitlines() == [f"racperf run {tool}: {said}"]
    assert "Traceback" not in out + err


@pytest.mark.parametrize(("tool", "option", "value", "said"), HEADLESS, ids=[c[0] for c in HEADLESS])
def test_a_start_refuses_it_whoever_built_the_config(tool: str, option: str, value: str, said: str) -> None:
    with pytest.raises(PlanRefused, match=f"^{tool}: {said}"):
        judge_run(load_tool(tool), tool, {option: value})


@pytest.mark.parametrize(("tool", "field", "value", "said"), IN_THE_FORM, ids=[c[0] for c in IN_THE_FORM])
async def test_the_form_flags_a_wrong_kind_under_its_field(
    tool: str, field: str, value: str, said: str, data_dir: Path
) -> None:
    app = ScreenApp(lambda: ToolForm(tool, data_dir))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the form")
        form = app.screen
        assert isinstance(form, ToolForm)
        form.query_one(f"#field-{field}", Input).value = value
        await wait_until(pilot, lambda: field in form.errors, 10, f"{field} flagged")
        assert str(form.query_one(f"#error-{field}", Label).render()).startswith(said)
        assert form.query_one(f"#field-{field}", Input).has_class("-invalid")
        assert str(form.query_one("#preview").render()).startswith(f"✗ {field}: {said}")
        assert form.query_one("#launch", Button).disabled
