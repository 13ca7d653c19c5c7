"""A two-ended tool module whose server starts but never says it is ready
(``load_tool("tests.fakes.silent_server_tool")``): the pair's readiness timeout tests.

The server prints ``starting PID`` and sleeps; nothing it prints matches ``PAIR.ready_pattern``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.tool import PairSpec

PAIR = PairSpec(ready_pattern=re.compile(r"^never printed$", re.MULTILINE), failure_pattern=None, default_port=0)
_SERVER = "import os, time; print('starting', os.getpid(), flush=True); time.sleep(60)"


class _Parser:
    def feed(self, line: str) -> list[Sample]:
        return []

    def finish(self) -> list[Sample]:
        return []


class SilentServerTool:
    name = "silent"
    install_hint = "it is a test fake: tests/fakes/silent_server_tool.py"
    stop_grace_s = 1.0

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        if config.get("role") == "server":
            return [sys.executable, "-u", "-c", _SERVER]
        return [sys.executable, "-c", "print('the client must never start')"]

    def stream_parser(self, config: Mapping[str, Any]) -> _Parser:
        return _Parser()

    def parse_result(self, output: str) -> dict[str, Any]:
        return {"output": output}

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        return exit_status == 0, f"exit status {exit_status}"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return 120.0

    def tool_version(self, argv: list[str]) -> str:
        return "silent 1"


TOOL = SilentServerTool()
