"""One validation style across the tools: a bad option is ``TOOL: OPTION must be ..., got
VALUE`` (tools/base.py's checks), so the form puts it under that option's field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from racperf_tui.tools import iperf3, probe
from racperf_tui.tools.base import check_choice, check_range, option_number, option_whole_number
from racperf_tui.tools.netperf import NetperfConfig
from racperf_tui.tools.oratcptest import OratcptestConfig


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("", None), ("  ", None), (5, 5), ("5", 5), (5.0, 5), (" 12 ", 12), ("1e3", 1000)],
)
def test_whole_number_reads_what_a_form_or_set_gives(value: Any, expected: int | None) -> None:
    assert option_whole_number("demo", "ops", value) == expected


@pytest.mark.parametrize("value", [2.5, "2.5", "ten", True, False, float("inf"), "nan", [1], "1e400"])
def test_whole_number_refuses_with_the_option_named(value: Any) -> None:
    with pytest.raises(ValueError) as info:
        option_whole_number("demo", "ops", value)
    assert str(info.value) == f"demo: ops must be a whole number, got {value!r}"


@pytest.mark.parametrize("value", ["fast", True, float("-inf"), {}])
def test_number_refuses_with_the_option_named(value: Any) -> None:
    with pytest.raises(ValueError) as info:
        option_number("demo", "rate", value)
    assert str(info.value) == f"demo: rate must be a number, got {value!r}"


def test_number_reads_fractions() -> None:
    assert option_number("demo", "rate", "0.25") == 0.25
    assert option_number("demo", "rate", None) is None


def test_range_and_choice_messages() -> None:
    check_range("demo", "interval_s", 0.1, 0.1, 10, "s")
    check_range("demo", "interval_s", 10, 0.1, 10, "s")
    with pytest.raises(ValueError) as info:
        check_range("demo", "interval_s", 0.05, 0.1, 10, "s")
    assert str(info.value) == "demo: interval_s must be 0.1 to 10 s, got 0.05"
    with pytest.raises(ValueError) as info:
        check_range("demo", "port", 70000, 1, 65535)
    assert str(info.value) == "demo: port must be 1 to 65535, got 70000"
    check_choice("demo", "mode", "SYNC", ("SYNC", "ASYNC"))
    with pytest.raises(ValueError) as info:
        check_choice("demo", "mode", "FAST", ("SYNC", "ASYNC"))
    assert str(info.value) == "demo: mode must be one of SYNC, ASYNC, got 'FAST'"


def _iperf3(config: dict[str, Any]) -> Any:
    return iperf3.TOOL.build_argv({"host": "h", **config})


def _probe(config: dict[str, Any]) -> Any:
    return probe.TOOL.build_argv({"host": "h", **config})


def _netperf(config: dict[str, Any]) -> Any:
    return NetperfConfig.from_mapping({"host": "h", **config})


def _oratcptest(config: dict[str, Any]) -> Any:
    return OratcptestConfig.from_mapping({"host": "h", "duration_s": 10, **config})


#: the same three mistakes given to every tool with ports, connections and roles
CASES: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("iperf3", _iperf3, "parallel"),
    ("probe", _probe, "num_conn"),
    ("netperf", _netperf, "duration_s"),
    ("oratcptest", _oratcptest, "num_conn"),
]


@pytest.mark.parametrize(("tool", "build", "count_option"), CASES)
def test_every_tool_words_a_bad_option_one_way(
    tool: str, build: Callable[[dict[str, Any]], Any], count_option: str
) -> None:
    with pytest.raises(ValueError) as info:
        build({"port": 70000})
    assert str(info.value) == f"{tool}: port must be 1 to 65535, got 70000"
    with pytest.raises(ValueError) as info:
        build({count_option: "two"})
    assert str(info.value) == f"{tool}: {count_option} must be a whole number, got 'two'"
    with pytest.raises(ValueError) as info:
        build({"role": "relay"})
    assert str(info.value) == f"{tool}: role must be one of client, server, got 'relay'"
