"""A tool module that uses the whole Invocation: env, a working directory in the run's
directory, standard input, an input file racperf writes, and a result file the tool writes
(the shape ORION and CALIBRATE_IO need). Its "benchmark" is a short python script."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import Invocation

SCRIPT = r"""
import json, os, sys
lun = open("input.lun").read().split()
sql = sys.stdin.read()
print("SAMPLE", json.dumps({"value": len(lun)}), flush=True)
with open("demo_summary.txt", "w") as out:
    out.write(json.dumps({"env": os.environ.get("DEMO_HOME"), "cwd": os.getcwd(), "luns": lun, "sql": sql}))
print("done")
"""


class _Parser:
    def feed(self, line: str) -> list[Sample]:
        if line.startswith("SAMPLE "):
            return [Sample(t=1.0, metrics={"value": float(json.loads(line[7:])["value"])})]
        return []

    def finish(self) -> list[Sample]:
        return []


def parse_output(text: str) -> dict[str, Any]:
    return {"lines": text.splitlines()}


class ContractTool:
    name = "contract"
    install_hint = "python"

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None) -> Invocation:
        luns = [str(x) for x in config.get("lun", [])]
        return Invocation(
            argv=[sys.executable, "-c", SCRIPT],
            env={"DEMO_HOME": str(config.get("home", ""))},
            cwd=".",
            stdin=str(config.get("sql", "")),
            files={"input.lun": "\n".join(luns) + "\n"},
            result_files=("demo_*.txt",),
            hard_limit_s=30,
        )

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        return self.invocation(config).argv

    def stream_parser(self, config: Mapping[str, Any]) -> _Parser:
        return _Parser()

    def parse_result(self, output: str) -> dict[str, Any]:
        return parse_output(output)

    def parse_result_files(self, output: str, files: dict[str, str]) -> dict[str, Any]:
        return {**parse_output(output), "summary": json.loads(files["demo_summary.txt"])}

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        return (exit_status == 0 and bool(result and "summary" in result)), f"exit {exit_status}"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return 30.0


TOOL = ContractTool()
