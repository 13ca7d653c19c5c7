"""Fuzz every parser over the real outputs in tests/fixtures.

Mutations: byte flips, truncation, a number replaced by a huge / negative / NaN / 1e400 /
non-number value, deep nesting, lines duplicated, dropped or made huge. Each result parser
must return a result that prints as strict JSON, or raise its own documented error
(FioParseError for fio, OutputParseError for the others: ValueError subclasses with a
message) -- never another exception. Each stream parser must never raise and never emit a
non-finite metric. Derandomized (fixed examples, no example database) so CI is reproducible;
sized to run in well under a minute on 2 cores.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from racperf_tui.tools import iperf3, netperf, oratcptest, probe
from racperf_tui.tools.figures import OutputParseError
from racperf_tui.tools.fio import result as fio_result
from racperf_tui.tools.fio import stream as fio_stream
from racperf_tui.tools.fio.figures import FioParseError
from tests.helpers import FIXTURES

#: RACPERF_FUZZ_EXAMPLES=3000 (and RACPERF_FUZZ_RANDOM=1 for new examples) searches deeper locally
FUZZ = settings(
    max_examples=int(os.environ.get("RACPERF_FUZZ_EXAMPLES", "120")),
    deadline=None,
    derandomize=not os.environ.get("RACPERF_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _fixtures(*dirs: str) -> list[Path]:
    return sorted(
        p for d in dirs for p in (FIXTURES / d).iterdir() if p.is_file() and p.suffix not in (".md", ".sh", ".status")
    )


#: parser name -> (result parser, the error it documents, fixtures, stream parser factory)
PARSERS: dict[str, tuple[Callable[[str], Any], type[Exception], list[Path], Callable[[], Any]]] = {
    "fio": (fio_result.parse_output, FioParseError, _fixtures("fio"), lambda: fio_stream.FioStreamParser({})),
    "iperf3": (iperf3.parse_output, OutputParseError, _fixtures("iperf3"), iperf3.Iperf3StreamParser),
    "netperf": (netperf.parse_result, OutputParseError, _fixtures("netperf"), netperf.NetperfStreamParser),
    "oratcptest": (
        oratcptest.parse_output,
        OutputParseError,
        _fixtures("oratcptest"),
        oratcptest.OratcptestStreamParser,
    ),
    # probe prints oratcptest's format (its own outputs are made live in test_probe)
    "probe": (probe.parse_output, OutputParseError, _fixtures("oratcptest"), probe.ProbeStreamParser),
}

_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
HOSTILE_NUMBERS = [
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "-Infinity",
    "-5000",
    "-0",
    "1" * 5000,
    "null",
    "{}",
    "[]",
    '"x"',
    "1.2.3",
    "-90.170",
    "0x10",
    "9" * 40,
    "nan",
    "inf",
]


@st.composite
def mutated(draw: st.DrawFn, fixtures: list[Path]) -> str:
    text = draw(st.sampled_from(fixtures)).read_text(errors="replace")
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["number", "number", "number", "flip", "truncate", "nest", "line"]))
        if kind == "number":
            numbers = list(_NUMBER_RE.finditer(text))
            if numbers:
                m = numbers[draw(st.integers(0, len(numbers) - 1))]
                text = text[: m.start()] + draw(st.sampled_from(HOSTILE_NUMBERS)) + text[m.end() :]
        elif kind == "flip" and text:
            pos = draw(st.integers(0, len(text) - 1))
            text = text[:pos] + chr(ord(text[pos]) ^ (1 << draw(st.integers(0, 6)))) + text[pos + 1 :]
        elif kind == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif kind == "nest":
            pos = draw(st.integers(0, len(text)))
            depth = draw(st.sampled_from([50, 2000, 100_000]))
            opener = draw(st.sampled_from(["[", "{", '{"a":', "[{"]))
            text = text[:pos] + opener * depth + text[pos:]
        else:
            lines = text.split("\n")
            i = draw(st.integers(0, max(0, len(lines) - 1)))
            action = draw(st.sampled_from(["dup", "drop", "huge", "repeat"]))
            if action == "dup":
                lines.insert(i, lines[i])
            elif action == "drop":
                del lines[i]
            elif action == "huge":
                lines[i] = lines[i] + draw(st.sampled_from(["1", " ", "[", "1."])) * 70_000
            else:
                lines[i] = " ".join([lines[i]] * 200)
            text = "\n".join(lines)
    return text


def check_result(parse: Callable[[str], Any], error: type[Exception], text: str) -> None:
    try:
        result = parse(text)
    except error as exc:
        assert str(exc), "the error must say what is wrong"
        return
    assert isinstance(result, dict)
    json.dumps(result, allow_nan=False)  # what `racperf parse` prints: strict JSON


def check_stream(make: Callable[[], Any], text: str) -> None:
    parser = make()
    samples = []
    for line in re.split(r"\r\n|\r|\n", text):
        samples.extend(parser.feed(line))
    samples.extend(parser.finish())
    for sample in samples:
        assert math.isfinite(sample.t)
        assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in sample.metrics.values()), sample


def _result_test(name: str) -> Callable[..., None]:
    parse, error, fixtures, _ = PARSERS[name]

    @FUZZ
    @given(text=mutated(fixtures))
    def test(text: str) -> None:
        check_result(parse, error, text)

    return test


def _stream_test(name: str) -> Callable[..., None]:
    _, _, fixtures, make = PARSERS[name]

    @FUZZ
    @given(text=mutated(fixtures))
    def test(text: str) -> None:
        check_stream(make, text)

    return test


test_fuzz_fio_result = _result_test("fio")
test_fuzz_iperf3_result = _result_test("iperf3")
test_fuzz_netperf_result = _result_test("netperf")
test_fuzz_oratcptest_result = _result_test("oratcptest")
test_fuzz_probe_result = _result_test("probe")
test_fuzz_fio_stream = _stream_test("fio")
test_fuzz_iperf3_stream = _stream_test("iperf3")
test_fuzz_netperf_stream = _stream_test("netperf")
test_fuzz_oratcptest_stream = _stream_test("oratcptest")
test_fuzz_probe_stream = _stream_test("probe")


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_fixture_parses_unmutated(name: str) -> None:
    """The baseline the mutations start from: each fixture gives a result or a documented error."""
    parse, error, fixtures, make = PARSERS[name]
    assert fixtures
    for path in fixtures:
        check_result(parse, error, path.read_text(errors="replace"))
        check_stream(make, path.read_text(errors="replace"))
