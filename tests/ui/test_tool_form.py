"""The generated New-run form on what a description declares: presets (fio's), a target
field with the device suggester, extra arguments as shell words, fields wide enough at 80x24,
and a tool's headless wording (``--set lun=``) turned into the field's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Button, Input, Select, Static

from racperf_tui.core.contract.tool import ToolOption
from racperf_tui.tools import tool_description
from racperf_tui.tools.fio.config import PRESET_DESCRIPTIONS, PRESETS
from racperf_tui.ui.screens.tool_form import ToolForm, in_form_words
from racperf_tui.ui.widgets.device_suggester import DeviceSuggester
from tests.helpers import needs_fio
from tests.helpers.pilot_apps import ScreenApp, wait_until


def _text(widget: Any) -> str:
    return str(widget.render())


def test_fio_declares_its_presets_in_its_description() -> None:
    presets = tool_description("fio").presets
    assert [p.name for p in presets] == list(PRESETS)
    assert [p.label for p in presets] == [PRESET_DESCRIPTIONS[name] for name in PRESETS]
    oltp = tool_description("fio").preset("oltp")
    assert oltp is not None and dict(oltp.values) == {"numjobs": 4, "custom": False}
    throughput = tool_description("fio").preset("throughput")
    assert throughput is not None
    assert dict(throughput.values) == {
        "bs": "64k",
        "rw": "read",
        "ioengine": "libaio",
        "iodepth": 32,
        "numjobs": 16,
        "custom": False,
    }
    custom = tool_description("fio").preset("custom")
    assert custom is not None and custom.uses == ("extra_args", "job_file") and custom.values == {"custom": True}
    options = {o.name: o for o in tool_description("fio").options}
    assert options["target"].kind == "target" and options["job_file"].kind == "path"
    assert not options["destructive"].in_form and not options["custom"].in_form


def test_set_lun_becomes_the_lun_field() -> None:
    options = {o.name: o for o in tool_description("orion").options}
    assert (
        in_form_words("no LUN: give each with --set lun=/dev/mapper/NAME (repeatable)", options)
        == "no LUN: give each in the lun field, e.g. /dev/mapper/NAME (several: separated by spaces)"
    )
    # an option without a field keeps its headless words
    hidden = {"destructive": ToolOption("destructive", "bool", False, in_form=False)}
    assert in_form_words("or --set destructive=true", hidden) == "or --set destructive=true"


async def test_the_orion_form_without_a_lun_names_its_field(data_dir: Path) -> None:
    app = ScreenApp(lambda: ToolForm("orion", data_dir))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the ORION form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        await wait_until(pilot, lambda: "lun" in form.errors, 10, "the missing LUN")
        shown = _text(form.query_one("#error-lun"))
        assert shown.startswith("no LUN: give each in the lun field, e.g. /dev/mapper/NAME")
        assert "--set" not in shown
        assert form.query_one("#launch", Button).disabled


@needs_fio
async def test_fio_presets_fill_the_fields_keep_the_target_and_custom_takes_only_its_fields(
    data_dir: Path, tmp_path: Path
) -> None:
    target = str(tmp_path / "preset.dat")
    app = ScreenApp(lambda: ToolForm("fio", data_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        await pilot.pause()
        preset = form.query_one("#preset", Select)
        assert preset.value == "oltp"  # the first preset is the start
        assert form.query_one("#field-numjobs", Input).value == "4"
        assert isinstance(form.query_one("#field-target", Input).suggester, DeviceSuggester)
        assert not form.query("#field-destructive") and not form.query("#field-custom")
        form.query_one("#field-target", Input).value = target
        preset.value = "throughput"
        await pilot.pause()
        values = {n: form.query_one(f"#field-{n}").value for n in ("rw", "bs", "iodepth", "numjobs", "target")}  # type: ignore[attr-defined]
        assert values == {"rw": "read", "bs": "64k", "iodepth": "32", "numjobs": "16", "target": target}
        preview = _text(form.query_one("#preview", Static))
        assert "--rw=read" in preview and "--numjobs=16" in preview and f"--filename={target}" in preview
        # the extra arguments are shell words: one list item each
        form.query_one("#field-extra_args", Input).value = "--rate_iops=500 --description='two words'"
        await pilot.pause()
        assert form.config["extra_args"] == ["--rate_iops=500", "--description=two words"]
        assert form.config["custom"] is False and form.config["target"] == target
        # custom: only the extra arguments and the job file are read
        preset.value = "custom"
        await pilot.pause()
        assert form.query_one("#field-bs", Input).disabled and form.query_one("#field-target", Input).disabled
        assert not form.query_one("#field-extra_args", Input).disabled
        form.query_one("#field-extra_args", Input).value = f"--name=c --filename={target} --size=1m --rw=read"
        await pilot.pause()
        assert form.config == {
            "custom": True,
            "extra_args": ["--name=c", f"--filename={target}", "--size=1m", "--rw=read"],
        }
        await wait_until(pilot, lambda: not form.errors and "$ fio" in _text(form.query_one("#preview")), 10, "ok")
        assert "--bs=" not in _text(form.query_one("#preview"))


async def test_the_nodes_field_says_what_it_takes_when_focused(data_dir: Path, tmp_path: Path) -> None:
    """tmux, 200x60: with the nodes field focused the help line under the fields still said
    the target's ("target (target, default ...): the file, directory or block device...")."""
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('[[node]]\nname = "n1"\nhost = "127.0.0.1"\nport = 1\n')
    app = ScreenApp(lambda: ToolForm("fio", str(data_dir)))
    app.cluster_file = cluster  # type: ignore[attr-defined] # as the dashboard has it
    async with app.run_test(size=(200, 60)) as pilot:
        form = app.screen
        assert isinstance(form, ToolForm)
        form.query_one("#field-target", Input).focus()
        await pilot.pause()
        assert _text(form.query_one("#form-help", Static)).startswith("target (target")
        form.query_one("#form-nodes", Input).focus()
        await pilot.pause()
        help_line = _text(form.query_one("#form-help", Static))
        assert help_line.startswith("nodes: where it runs: this host, a node of the cluster file"), help_line
        assert "(names separated by commas: a run group) or all" in help_line
