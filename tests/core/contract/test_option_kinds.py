"""Every registered tool declares a checked kind (ToolOption.check: size, count, duration,
percent, path) for each option whose value is a number, a size, a duration or a path, so a
wrong value (``/dev/loop4`` in a size, issue 21) is flagged in the form and refused at start
for every tool. An option that looks like one by its default, its name or its help and is
declared free text ("str", "int", "float": taken as typed) fails here, naming the tool and the
option: a new tool cannot forget."""

from __future__ import annotations

import re

import pytest

from racperf_tui.core.contract.tool import CHECKED_KINDS, KINDS, ToolOption
from racperf_tui.tools import tool_description, tool_modules

#: kinds a form takes as typed, beyond a number's conversion
FREE_TEXT = ("str", "int", "float")
#: words of an option's name that say its value is a number, a size or a time
_NUMBER_NAME = re.compile(
    r"(^|_)(s|ms|bytes|kb|mb|size|length|window|sockbuf|port|num|parallel|depth|jobs|count|disks|duration|"
    r"interval|delay|timeout|lifetime|latency|estimate|write|small|large|streamio|conn|interim|rwmixread)($|_)",
    re.IGNORECASE,
)
#: words of an option's help that say the same
_NUMBER_HELP = re.compile(
    r"\b(seconds?|percent(age)?|size|bytes|KB|MB|ms|number of|parallel|outstanding|disks|buffer|length)\b"
    r"|e\.g\. \d+(\.\d+)?[KMG]\b",
    re.IGNORECASE,
)
_PATH_HELP = re.compile(r"\b(file|directory|path|program|binary|device|home|jar)\b", re.IGNORECASE)

#: free-text options whose name or help reads like a number, size, time or path, and why
FREE_TEXT_BY_DESIGN = {
    ("iperf3", "bitrate"): "a rate (100M, 1G, with iperf3's /burst suffix) iperf3 reads itself",
    ("oratcptest", "payload"): "RANDOM, ZERO or a file: a word or a path (its access is READS)",
}


def _reads_like_a_value(option: ToolOption) -> bool:
    if isinstance(option.default, (int, float)) and not isinstance(option.default, bool):
        return True
    return bool(_NUMBER_NAME.search(option.name) or _NUMBER_HELP.search(option.help) or _PATH_HELP.search(option.help))


def _every_option() -> list[tuple[str, ToolOption]]:
    return [(tool, option) for tool in tool_modules() for option in tool_description(tool).options]


@pytest.mark.parametrize(("tool", "option"), _every_option(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_a_number_size_duration_or_path_option_declares_a_checked_kind(tool: str, option: ToolOption) -> None:
    assert option.kind in KINDS, f"{tool} option {option.name}: kind {option.kind!r} is not one of {KINDS}"
    if option.kind not in FREE_TEXT or (tool, option.name) in FREE_TEXT_BY_DESIGN:
        return
    assert not _reads_like_a_value(option), (
        f"{tool} option {option.name} ({option.kind}, default {option.default!r}: {option.help!r}) takes a "
        f"number, size, duration or path as free text: declare one of {sorted(CHECKED_KINDS)} so the form "
        "flags a wrong value and a start refuses it (or list it in FREE_TEXT_BY_DESIGN with why)"
    )


def test_the_walk_flags_the_declarations_issue_21_found() -> None:
    """The detector itself: the free-text declarations the tools had before their kinds."""
    old = [
        ToolOption("size_small", "int", None, "small I/O size in KB (advanced; default 8)"),
        ToolOption("window", "str", "", "socket buffer, e.g. 4M (-w)"),
        ToolOption("length", "str", "1M", "message length, e.g. 8K"),
        ToolOption("duration_s", "float", 10, "seconds to send"),
        ToolOption("write", "int", None, "percent of I/Os that write"),
        ToolOption("num_physical_disks", "int", 1, "approximate number of physical disks"),
    ]
    assert [o.name for o in old if not _reads_like_a_value(o)] == []
    assert not _reads_like_a_value(ToolOption("host", "str", "", "the server's address"))


def test_every_default_and_preset_value_passes_its_kind() -> None:
    for tool in tool_modules():
        description = tool_description(tool)
        for option in description.options:
            assert option.check(option.default) == "", (tool, option.name, option.default)
        for preset in description.presets:
            assert description.kind_problems(preset.values) == [], (tool, preset.name)


@pytest.mark.parametrize(
    ("tool", "option", "kind"),
    [
        ("orion", "size_small", "count"),
        ("orion", "size_large", "count"),
        ("orion", "cache_size", "count"),
        ("orion", "num_disks", "count"),
        ("orion", "num_small", "count"),
        ("orion", "write", "percent"),
        ("orion", "duration", "duration"),
        ("calibrate_io", "num_physical_disks", "count"),
        ("calibrate_io", "duration_estimate_s", "duration"),
        ("iperf3", "length", "size"),
        ("iperf3", "window", "size"),
        ("iperf3", "parallel", "count"),
        ("oratcptest", "length_bytes", "size"),
        ("oratcptest", "sockbuf_bytes", "size"),
        ("oratcptest", "num_conn", "count"),
        ("netperf", "send_size_bytes", "count"),
        ("netperf", "duration_s", "count"),
        ("netperf", "interim_s", "duration"),
        ("oratcptest", "interval_s", "count"),
        ("probe", "length", "size"),
        ("probe", "delay_ms", "duration"),
        ("fio_cs", "size", "size"),
    ],
)
def test_the_tools_declare_these_kinds(tool: str, option: str, kind: str) -> None:
    declared = tool_description(tool).option(option)
    assert declared is not None and declared.kind == kind


def test_a_duration_in_milliseconds_says_so() -> None:
    assert (
        ToolOption("delay_ms", "duration").check("-2") == "delay_ms: '-2' is not a duration (milliseconds, 0 or more)"
    )
    assert ToolOption("duration_s", "duration").check("soon") == "duration_s: 'soon' is not a number of seconds"


def test_a_count_names_what_it_counts() -> None:
    size_small = tool_description("orion").option("size_small")
    assert size_small is not None
    assert size_small.check("8k") == "size_small: '8k' is not a whole number of KB"
    assert size_small.check(-8) == "size_small: -8 is not a whole number of KB, 0 or more"
    assert ToolOption("num_disks", "count").check(2.5) == "num_disks: 2.5 is not a whole number, 0 or more"
