"""What the views read from a tool's description: one unit per chart, figures, plans."""

from __future__ import annotations

import pytest

from racperf_tui.core.contract.tool import MetricSpec, ToolDescription
from racperf_tui.tools import tool_description, tool_modules


@pytest.mark.parametrize("name", sorted(tool_modules()))
def test_metrics_sharing_a_chart_share_one_unit(name: str) -> None:
    units: dict[str, set[str]] = {}
    description = tool_description(name)
    for spec in description.metrics:
        units.setdefault(spec.chart or spec.key, set()).add(spec.unit)
    assert all(len(u) == 1 for u in units.values()), units
    assert description.summary, "the New run picker lists the tool with its summary"


def test_compact_figures_take_the_next_declared_unit_never_a_guess() -> None:
    rate = MetricSpec("x", "rate", "Mbit/s")
    assert rate.compact(940.4) == "940 Mbit/s" and rate.compact(18200) == "18.2 Gbit/s"
    assert rate.compact(99999) == "100 Gbit/s" and rate.compact(None) == "-"
    ops = MetricSpec("ops_per_s_mib", "ops", "ops/s")  # a key ending like a unit means nothing
    assert ops.compact(12.5) == "12.5 ops/s" and ops.compact(123456) == "123k ops/s"
    assert MetricSpec("l", "lat", "ms", decimals=3).compact(0.0184) == "0.018 ms"


def test_charts_group_by_the_description_and_keep_undeclared_keys_apart() -> None:
    description = ToolDescription(
        metrics=(
            MetricSpec("a_ms", "a", "ms", chart="lat"),
            MetricSpec("b_ms", "b", "ms", chart="lat"),
            MetricSpec("c", "c", "MiB/s"),
        )
    )
    charts = description.charts(["b_ms", "c", "mystery_mib_s", "a_ms"])
    assert [(unit, [s.key for s in group]) for unit, group in charts] == [
        ("ms", ["a_ms", "b_ms"]),
        ("MiB/s", ["c"]),
        ("", ["mystery_mib_s"]),
    ]


def test_planned_duration_from_the_description() -> None:
    assert tool_description("fio").planned_duration_s({"runtime_s": 60, "ramp_time_s": "5s"}) == 65
    assert tool_description("fio").planned_duration_s({"runtime_s": 0}) is None
    assert tool_description("probe").planned_duration_s({"duration_s": 10}) == 10
    assert tool_description("probe").planned_duration_s({"host": "h"}) == 10  # the default
    assert tool_description("probe").planned_duration_s({"role": "server"}) is None  # a client option
    assert ToolDescription().planned_duration_s({"duration_s": 10}) is None  # no such option


def test_result_rows_show_declared_figures_with_units_then_the_rest() -> None:
    rows = tool_description("iperf3").result_rows(
        {"received_mbit_s": 941.25, "protocol": "TCP", "streams": 1, "intervals": [], "reverse": False}
    )
    assert rows == [("received", "941.2 Mbit/s"), ("protocol", "TCP"), ("streams", "1")]
