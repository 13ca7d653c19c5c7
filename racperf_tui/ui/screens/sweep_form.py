"""New run's fio sweep: the form of ``racperf sweep fio`` (target, fio's options as
``KEY=VALUE`` words, the iodepths, the numjobs, a point's seconds, the stop rule, the nodes),
each field checked as typed by the plan's own check (orchestration/sweep.py), the sweep's
points previewed, then Launch: the write guard judges the first point (an override typed per
refused device, as for a run), the sweep's group is recorded and its detached driver started
(orchestration/sweep_driver.py: the sweep goes on when the UI quits).

Dismisses with :class:`SweepLaunched` (the Runs tab opens the sweep view), or None.
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import replace
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Select, Static

from racperf_tui.core.contract.tool import parse_setting
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import LOCAL, LOCAL_NODE, Node, load_cluster, nodes_named
from racperf_tui.orchestration.sweep import SweepPlan, SweepRefused, base_config
from racperf_tui.orchestration.sweep_driver import launch_sweep
from racperf_tui.tools import load_tool, tool_description
from racperf_tui.tools.base import RUN_LEVEL_KEYS
from racperf_tui.ui.messages import SweepLaunched
from racperf_tui.ui.run_actions import judge_then_launch
from racperf_tui.ui.screen_base import RacperfModalScreen
from racperf_tui.ui.widgets.device_suggester import DeviceSuggester

#: the stop rules, as the Select offers them: (label, value)
STOP_RULES = (
    ("every point runs", "none"),
    ("first p99 over the ceiling", "p99"),
    ("two points past the knee", "knee"),
)
#: the fields: (id, label, default, placeholder)
FIELDS = (
    ("target", "target", "", "the file, directory or device fio works on"),
    (
        "options",
        "fio options",
        "rw=randread bs=8k ioengine=libaio",
        "KEY=VALUE words: rw, bs, ioengine, size, direct...",
    ),
    ("iodepth", "iodepth", "1,2,4,8,16,32,64", "the iodepths, e.g. 1,2,4,8"),
    ("numjobs", "numjobs", "1", "the numjobs, e.g. 1 or 1,2,4"),
    ("seconds", "point seconds", "10", "each point's runtime"),
    ("p99", "p99 ceiling ms", "5", "the p99 ceiling (stop rule: first p99 over it)"),
    ("nodes", "nodes", "", "blank: this machine; else cluster node names A,B or all"),
)


def whole_numbers(text: str, what: str) -> tuple[int, ...]:
    """'1,2,4' -> (1, 2, 4), sorted, each once; ValueError naming ``what``."""
    try:
        values = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"{what}: {text!r} is not a list of whole numbers like 1,2,4,8") from None
    if not values or values[0] < 1:
        raise ValueError(f"{what}: each value must be 1 or more")
    return tuple(values)


class SweepForm(RacperfModalScreen[Any]):
    """The sweep's fields, checked as typed, its points previewed, Launch (see the module doc)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", tooltip="Close the form; nothing is started"),
        Binding("ctrl+l", "launch", "Launch", tooltip="Check the first point with the write guard, then start"),
    ]

    def __init__(self, data_dir: Any = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.description = tool_description("fio")
        self.problem = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="tool-form"):
            yield Label(" [b]New fio sweep[/b]  (ctrl+l launch, esc cancel)", id="form-title")
            yield Static(
                "fio's load walked up, one recorded run per point; the curve, the knee and the stop rule "
                "as racperf sweep fio says them (docs/SWEEP.md)",
                id="form-summary",
                markup=False,
            )
            with VerticalScroll(id="form-fields"):
                for name, label, default, placeholder in FIELDS[:5]:
                    yield self._row(name, label, default, placeholder)
                with Horizontal(classes="form-row", id="row-stop"):
                    yield Label("stop rule", classes="form-label")
                    yield Select(STOP_RULES, value="none", allow_blank=False, compact=True, id="field-stop")
                for name, label, default, placeholder in FIELDS[5:]:
                    yield self._row(name, label, default, placeholder)
            yield Static("", id="form-general-error", markup=False)
            yield Static("", id="preview", markup=False)
            with Horizontal(id="form-buttons"):
                yield Button("Launch", id="launch", variant="success", compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    def _row(self, name: str, label: str, default: str, placeholder: str) -> Horizontal:
        suggester = DeviceSuggester() if name == "target" else None
        field = Input(default, placeholder=placeholder, compact=True, id=f"field-{name}", suggester=suggester)
        field.tooltip = placeholder
        return Horizontal(Label(label, classes="form-label"), field, classes="form-row", id=f"row-{name}")

    def on_mount(self) -> None:
        self.query_one("#form-fields", VerticalScroll).can_focus = False
        self.revalidate()
        self.query_one("#field-target", Input).focus()

    # ---- fields -> plan ------------------------------------------------------------------------
    def _value(self, name: str) -> str:
        return str(self.query_one(f"#field-{name}", Input).value).strip()

    def _stop(self) -> str:
        return str(self.query_one("#field-stop", Select).value)

    def plan(self, nodes: tuple[Node, ...] = (LOCAL,)) -> SweepPlan:
        """The sweep the fields describe, checked (SweepRefused / ValueError / KeyError say what
        is wrong)."""
        target = self._value("target")
        if not target:
            raise ValueError("target: the file, directory or device to sweep")
        settings = [parse_setting(word) for word in shlex.split(self._value("options"))]
        config = self.description.settings_to_config(settings, RUN_LEVEL_KEYS)
        config["target"] = target
        stop = self._stop()
        try:
            seconds = int(self._value("seconds"))
        except ValueError:
            raise ValueError(f"point seconds: {self._value('seconds')!r} is not a whole number") from None
        ceiling = None
        if stop == "p99":
            try:
                ceiling = float(self._value("p99"))
            except ValueError:
                raise ValueError(f"p99 ceiling ms: {self._value('p99')!r} is not a number") from None
        plan = SweepPlan(
            config=base_config(config, {key for key, _ in settings}),
            iodepths=whole_numbers(self._value("iodepth"), "iodepth"),
            numjobs=whole_numbers(self._value("numjobs"), "numjobs"),
            point_seconds=seconds,
            stop_p99_ms=ceiling,
            stop_knee=stop == "knee",
            nodes=nodes,
            target=target,
        )
        plan.check()
        return plan

    def revalidate(self) -> None:
        self.query_one("#row-p99").display = self._stop() == "p99"
        try:
            plan = self.plan()
        except (SweepRefused, ValueError, KeyError) as exc:
            self.problem = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
            preview = "(no preview: fix what is said above)"
        else:
            self.problem = ""
            count = len(plan.iodepths) * len(plan.numjobs)
            curves = plan.curves()
            preview = (
                f"{count} points in {len(curves)} curve(s) of {plan.varying}, at most "
                f"{count * plan.point_seconds} s of fio; first: iodepth {curves[0][0][0]}, numjobs {curves[0][0][1]}"
            )
        self.query_one("#form-general-error", Static).update(self.problem)
        self.query_one("#preview", Static).update(preview)
        self.query_one("#launch", Button).disabled = bool(self.problem)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.revalidate()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.revalidate()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "launch":
            self.action_launch()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    # ---- launch ------------------------------------------------------------------------------
    def action_launch(self) -> None:
        self.revalidate()
        if self.problem:
            self.notify("fix what the form says first", severity="error")
            return
        self.judge_and_launch(self._value("nodes"))

    @work(exclusive=True, group="launch")
    async def judge_and_launch(self, named: str) -> None:
        """The write guard judges the first point here (a refused device's override typed),
        each node's plan is judged again where it runs, then the group and its driver start."""
        status = self.query_one("#form-general-error", Static)
        launch = self.query_one("#launch", Button)
        launch.disabled = True
        status.update("checking the sweep's first point with the write guard...")
        try:
            nodes = await asyncio.to_thread(_nodes, named)
            plan = self.plan(nodes)
        except (SweepRefused, ValueError, KeyError, OSError) as exc:
            status.update(str(exc))
            launch.disabled = False
            return
        data_dir = resolve_data_dir(self.data_dir)

        def start(config: dict[str, Any]) -> int:
            given = config.get("destructive_targets")
            judged = replace(plan, config={**plan.config, **({"destructive_targets": given} if given else {})})
            return launch_sweep(judged, data_dir)

        first = plan.point_config(*plan.curves()[0][0])
        if all(node.is_local for node in plan.nodes):
            group_id = await judge_then_launch(
                self.app, load_tool("fio"), "fio", first, self.data_dir, status, start=start
            )
        else:  # judged on each node by the launch itself (an override: racperf sweep --destructive)
            try:
                group_id = await asyncio.to_thread(start, first)
            except Exception as exc:
                status.update(f"not started: {exc}")
                group_id = None
        if group_id is None:
            launch.disabled = False
            return
        self.dismiss(SweepLaunched(group_id))


def _nodes(named: str) -> tuple[Node, ...]:
    """The nodes the nodes field names: this machine when blank; ClusterFileError (a
    ValueError) naming what is wrong."""
    names = [part.strip() for part in named.split(",") if part.strip()]
    if not names or names == [LOCAL_NODE]:
        return (LOCAL,)
    cluster = load_cluster(required=True)
    if names == ["all"]:
        return tuple(cluster.nodes)
    return tuple(nodes_named(cluster, names))
