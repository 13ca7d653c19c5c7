"""Every registered tool declares what it does with each path its options name
(ToolOption.access): read only, written (a write target the guard judges), guarded (the tool's
own targets), a program run or an Oracle home (vetted). An option that looks like a path by its
name, its kind or its help and declares none fails here, naming the tool and the option: a
new tool (or a new option) cannot write or run something the guard never heard of."""

from __future__ import annotations

import re

import pytest

from racperf_tui.core.contract.tool import ACCESSES, GUARDED, HOME, RUNS, WRITES, ToolOption
from racperf_tui.tools import tool_description, tool_modules

#: words of an option's name that say it names a path or a program
_PATH_NAME = re.compile(
    r"(^|_)(file|files|dir|directory|path|paths|output|log|logs|home|binary|bin|jar|java|python|exe|"
    r"executable|program|device|devices|dev|lun|luns|target|targets|sqlplus|orion|netperf|netserver|iperf3|fio|"
    r"script|lib|library|socket)($|_)",
    re.IGNORECASE,
)
#: words of an option's help that say the same
_PATH_HELP = re.compile(r"\b(file|files|directory|path|program|binary|executable|device|devices|home|jar)\b", re.I)
#: kinds that are paths by construction
_PATH_KINDS = ("path", "target")


#: kinds whose value is never a path (a flag, a number, one of fixed words)
_NOT_PATH_KINDS = ("bool", "int", "float", "choice")


def _looks_like_a_path(option: ToolOption) -> bool:
    if option.kind in _NOT_PATH_KINDS:
        return False
    return option.kind in _PATH_KINDS or bool(_PATH_NAME.search(option.name) or _PATH_HELP.search(option.help))


#: options whose name or help mentions a path word but whose value is no path, and why
NOT_PATHS = {
    ("fio", "size"): "a size (256m, 10%), of the file or device the target names",
    ("fio_cs", "size"): "a size (256m, 10%), of the file or device the target names",
    ("fio_cs", "servers"): "HOST[:PORT] addresses; the help names the cluster file they are looked up in",
    ("netperf", "omni_output"): "a format name (csv, human, keyval)",
    (
        "orion",
        "testname",
    ): "a file name prefix of letters, digits, '_', '.', '-' (no '/'): ORION's files in the run's directory",
}


def _every_option() -> list[tuple[str, ToolOption]]:
    return [(tool, option) for tool in tool_modules() for option in tool_description(tool).options]


@pytest.mark.parametrize(("tool", "option"), _every_option(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_a_path_option_declares_what_the_tool_does_with_it(tool: str, option: ToolOption) -> None:
    if (tool, option.name) in NOT_PATHS or not _looks_like_a_path(option):
        return
    assert option.access in ACCESSES, (
        f"{tool} option {option.name} ({option.kind}: {option.help!r}) names a path but declares no access: "
        "say whether the tool reads it (READS), writes it (WRITES: a write target), guards it as its own "
        "target (GUARDED), runs it (RUNS) or uses it as an Oracle home (HOME)"
    )


def test_the_options_that_write_run_or_guard_are_the_expected_ones() -> None:
    """The known ones, so a declaration dropped by mistake shows here as well."""
    found = {(tool, o.name): o.access for tool, o in _every_option() if o.access in (WRITES, RUNS, HOME, GUARDED)}
    expected = {
        ("probe", "write_file"): WRITES,
        ("probe", "write_dir"): WRITES,
        ("probe", "python"): RUNS,
        ("oratcptest", "output"): WRITES,
        ("oratcptest", "file"): WRITES,
        ("oratcptest", "java"): RUNS,
        ("oratcptest", "jar_path"): RUNS,
        ("iperf3", "binary"): RUNS,
        ("netperf", "netperf"): RUNS,
        ("netperf", "netserver"): RUNS,
        ("orion", "orion"): RUNS,
        ("orion", "oracle_home"): HOME,
        ("orion", "lun"): GUARDED,
        ("calibrate_io", "sqlplus"): RUNS,
        ("calibrate_io", "oracle_home"): HOME,
        ("fio", "target"): GUARDED,
        ("fio_cs", "target"): GUARDED,
    }
    assert {key: found.get(key) for key in expected} == expected


def test_an_unknown_access_is_refused() -> None:
    with pytest.raises(ValueError, match="access 'execute' is not one of"):
        ToolOption("x", "path", access="execute")
