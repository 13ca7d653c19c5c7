"""A tool module for the supervisor tests (``load_tool("tests.fakes.faketool")``), driving
tests/fakes/fakebench.py: ``SAMPLE {json}`` lines become Samples, ``RESULT {json}`` the result.

Config: ``extra_args`` (list of fakebench options), ``hard_limit_s`` (default 30),
``stop_grace_s`` is a tool attribute, fixed low so tests are quick."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import Sample

BENCH = Path(__file__).with_name("fakebench.py")
install_hint = "it is a test fake: tests/fakes/fakebench.py"


class _Parser:
    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.lines: list[str] = []

    def feed(self, line: str) -> list[Sample]:
        self.lines.append(line[:100])
        if line.startswith("SAMPLE "):
            brace = line.rfind("}")
            data = json.loads(line[7 : brace + 1])
            return [
                Sample(
                    t=round(time.monotonic() - self.t0, 3),
                    metrics={"value": float(data["value"])},
                    extra={k: data[k] for k in ("n", "sent") if k in data},
                )
            ]
        return []

    def finish(self) -> list[Sample]:
        return []


def parse_output(text: str) -> dict[str, Any]:
    """The last ``RESULT {json}`` line of the output."""
    for line in reversed(text.replace("\r", "\n").splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise ValueError("no RESULT line in the output")


class FakeTool:
    name = "fake"
    stop_grace_s = 1.5
    install_hint = install_hint

    def __init__(self) -> None:
        self.executable = sys.executable

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        extra = [str(a) for a in config.get("extra_args", [])]
        if "--invalid" in extra:
            raise ValueError("extra_args: --invalid is not a fakebench option")
        if config.get("missing_executable") or "--missing-executable" in extra:
            return ["racperf-no-such-tool-xyz", *extra]
        return [self.executable, "-u", str(BENCH), *extra]

    def stream_parser(self, config: Mapping[str, Any]) -> _Parser:
        return _Parser()

    def parse_result(self, output: str) -> dict[str, Any]:
        return parse_output(output)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        if exit_status != 0:
            return False, f"exit status {exit_status}"
        if not result or not result.get("ok"):
            return False, "result says not ok"
        return True, "ok"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return float(config.get("hard_limit_s", 30))

    def tool_version(self, argv: list[str]) -> str:
        return "fakebench 1.0"


TOOL = FakeTool()
