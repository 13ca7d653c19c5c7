"""Every output parser is linear in its input and survives hostile values.

Work bounds rather than wall time: a linear regex scans 256 KB in milliseconds, a quadratic one
needs minutes, so a per-case alarm of a few seconds (re checks signals while it backtracks)
separates them with a margin of ~100x however loaded the machine is.
"""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from racperf_tui.tools import iperf3, netperf, oratcptest, probe
from racperf_tui.tools.figures import MAX_LINE_CHARS, OutputParseError
from racperf_tui.tools.fio import figures as fio_figures
from racperf_tui.tools.fio import formats as fio_formats
from racperf_tui.tools.fio import json_report as fio_json
from racperf_tui.tools.fio import result as fio_result
from racperf_tui.tools.fio import status_line as fio_status_line
from racperf_tui.tools.fio import stream as fio_stream
from racperf_tui.tools.fio import terse as fio_terse
from racperf_tui.tools.fio import text_report as fio_text
from tests.helpers import FIXTURES

# fio_config's regexes read what a user types (sizes, names), not output: not listed
PARSER_MODULES: tuple[ModuleType, ...] = (
    fio_figures,
    fio_json,
    fio_text,
    fio_status_line,
    fio_terse,
    fio_formats,
    fio_stream,
    iperf3,
    netperf,
    oratcptest,
    probe,
)


class TooSlow(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise TooSlow()


def within(seconds: float, func: Callable[[], Any]) -> Any:
    """func() or TooSlow when it runs longer than ``seconds`` (SIGALRM interrupts re too)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return func()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def module_patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    for module in PARSER_MODULES:
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                yield f"{module.__name__.rsplit('.', 1)[-1]}.{name}", value
            elif isinstance(value, tuple) and value and all(isinstance(v, re.Pattern) for v in value):
                for i, pattern in enumerate(value):
                    yield f"{module.__name__.rsplit('.', 1)[-1]}.{name}[{i}]", pattern


def fixture_lines() -> list[str]:
    """One line of each shape (digits aside) of the text fixtures; JSON goes to json.loads."""
    shapes: dict[str, str] = {}
    for path in sorted(FIXTURES.glob("[fino]*/*")):
        if path.suffix in (".sh", ".md", ".json", ".jsonl") or not path.is_file():
            continue
        for line in re.split(r"\r\n|\r|\n", path.read_text(errors="replace")):
            if line.strip():
                shapes.setdefault(re.sub(r"[\d.]+", "0", line.strip())[:24], line)
    return sorted(shapes.values())


FIXTURE_LINES = fixture_lines()


def hostile_lines(size: int, from_fixtures: bool = True) -> Iterator[tuple[str, str]]:
    """(shape name, a line of about ``size`` characters) built to make regexes backtrack."""
    for name, unit in (
        ("digits", "1"),
        ("digit-dot", "1."),
        ("digit-blank", "1 "),
        ("digit-comma", "1,"),
        ("blanks", " "),
        ("tabs", "\t"),
        ("letters", "a"),
        ("open-bracket", "["),
        ("close-bracket", "]"),
        ("open-brace", "{"),
        ("open-paren", "("),
        ("equals", "a="),
        ("colon", "a:"),
        ("percent", "1%"),
        ("slash", "1/"),
        ("dash", "1-"),
        ("dots", "."),
        ("quote", '"'),
        ("pipe", "|"),
        ("semicolon", "1;"),
        ("bracket-digit", "[1"),
        ("word-blank", "a "),
        ("k", "1k"),
        ("time", "00:00:00 "),
    ):
        yield name, unit * (size // len(unit))
    # prefixes of real lines followed by filler: what a regex sees when a figure grows absurdly
    for line in FIXTURE_LINES if from_fixtures else []:
        head = line[: len(line) // 2]
        for filler_name, filler in (("digits", "1"), ("blanks", " "), ("dots", "1.")):
            yield f"{line[:30]!r}+{filler_name}", head + filler * ((size - len(head)) // len(filler)) + "x"
        repeat = max(1, size // max(1, len(line) + 1))
        yield f"{line[:30]!r}x{repeat}", " ".join([line] * repeat)


def test_every_output_regex_is_linear() -> None:
    """Each regex of each parser on 16 KB hostile lines (search: the superset of match).

    A quadratic regex needs seconds there (the old netperf one: 1 s at 4 KB, 89 s at 32 KB),
    a linear one a fraction of a millisecond: a 0.5 s alarm is a margin of >1000x both ways.
    """
    patterns = list(module_patterns())
    assert len(patterns) > 60
    slow: list[str] = []
    for shape, line in hostile_lines(16 * 1024):
        for pattern_name, pattern in patterns:
            try:
                within(0.5, lambda pattern=pattern, line=line: (pattern.search(line), pattern.findall(line)))
            except TooSlow:
                slow.append(f"{pattern_name} on {shape}")
        assert len(slow) < 10, slow
    assert slow == []


# ---------------------------------------------------------------------------- whole parsers


def _stream(make: Callable[[], Any]) -> Callable[[str], Any]:
    def feed_all(text: str) -> Any:
        parser = make()
        for line in text.split("\n"):
            parser.feed(line)
        return parser.finish()

    return feed_all


PARSERS: dict[str, tuple[Callable[[str], Any], Path]] = {
    "fio text": (fio_result.parse_output, FIXTURES / "fio" / "fio-3.33-randrw-2jobs.txt"),
    "fio console": (fio_result.parse_output, FIXTURES / "fio" / "fio-3.33-console.log"),
    "fio terse": (fio_result.parse_output, FIXTURES / "fio" / "fio-3.33-randrw.terse-v5.txt"),
    "fio json": (fio_result.parse_output, FIXTURES / "fio" / "fio-3.33-randrw-2jobs.json"),
    "fio stream": (
        _stream(lambda: fio_stream.FioStreamParser({})),
        FIXTURES / "fio" / "fio-3.33-randrw-status.jsonplus.json",
    ),
    "iperf3 text": (iperf3.parse_output, FIXTURES / "iperf3" / "tcp_text_V.txt"),
    "iperf3 json": (iperf3.parse_output, FIXTURES / "iperf3" / "tcp.json"),
    "iperf3 stream": (_stream(iperf3.Iperf3StreamParser), FIXTURES / "iperf3" / "udp_text.txt"),
    "netperf": (netperf.parse_output, FIXTURES / "netperf" / "netperf_tcp_rr_D1.txt"),
    "netperf stream": (_stream(netperf.NetperfStreamParser), FIXTURES / "netperf" / "netperf_tcp_rr_omni_k_D1.txt"),
    "oratcptest": (oratcptest.parse_output, FIXTURES / "oratcptest" / "oratcptest-sync-client.txt"),
    "oratcptest stream": (
        _stream(oratcptest.OratcptestStreamParser),
        FIXTURES / "oratcptest" / "oratcptest-sync-client.txt",
    ),
    "probe": (probe.parse_output, FIXTURES / "oratcptest" / "oratcptest-sync-client.txt"),
    "probe stream": (_stream(probe.ProbeStreamParser), FIXTURES / "oratcptest" / "oratcptest-async-client.txt"),
}


def _run(parse: Callable[[str], Any], text: str) -> Any:
    try:
        return parse(text)
    except OutputParseError as exc:
        return exc


@pytest.mark.parametrize("name", sorted(PARSERS))
@pytest.mark.parametrize("size", [60 * 1024, 1024 * 1024])
def test_parser_is_linear_in_a_long_line(name: str, size: int) -> None:
    """A hostile line of 60 KB (under the cap: the regexes see it) or 1 MB (over it: skipped),
    in the middle of a real output, after each of its lines' prefixes: a few ms each if linear."""
    parse, fixture = PARSERS[name]
    lines = fixture.read_text().splitlines()
    middle = len(lines) // 2
    for shape, hostile in hostile_lines(size, from_fixtures=False):
        text = "\n".join(lines[:middle] + [hostile] + lines[middle:]) + "\n"
        try:
            within(5.0, lambda text=text: _run(parse, text))
        except TooSlow:
            pytest.fail(f"{name}: a {size}-character {shape} line took over 5 s")


def test_netperf_40000_digit_line_is_skipped_and_the_rest_parsed() -> None:
    """The reported case: 62 s, then "Exceeds the limit (4300 digits)" although the rest was valid."""
    valid = (FIXTURES / "netperf" / "netperf_tcp_rr_D1.txt").read_text()
    started = time.monotonic()
    result = netperf.parse_output("Interim result: " + "1" * 40_000 + "\n" + valid)
    assert time.monotonic() - started < 1.0
    assert result["trans_per_s"] == netperf.parse_output(valid)["trans_per_s"] == 16435.47
    assert result["warnings"] == ["line 1: a number of more than 40 digits is no figure; line skipped"]
    stream = netperf.NetperfStreamParser()
    assert stream.feed("Interim result: " + "1" * 40_000 + " Trans/s over 1.0 seconds ending at 1.5") == []


def test_netperf_1mb_line_is_skipped_with_a_warning() -> None:
    valid = (FIXTURES / "netperf" / "netperf_tcp_rr_D1.txt").read_text()
    result = within(2.0, lambda: netperf.parse_output("1" * (1 << 20) + "\n" + valid))
    assert result["trans_per_s"] == 16435.47
    assert result["warnings"] == [
        f"line 1: {1 << 20} characters long, skipped (no figure line is longer than {MAX_LINE_CHARS})"
    ]


# ---------------------------------------------------------------------------- impossible values

FIO_JSON = (FIXTURES / "fio" / "fio-3.33-randrw-2jobs.json").read_text()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"groupid" : 0', '"groupid" : 1e400', "jobs[0].groupid: not a finite number"),
        ('"groupid" : 0', '"groupid" : Infinity', "jobs[0].groupid: not a finite number"),
        ('"groupid" : 0', '"groupid" : null', "jobs[0].groupid: None is not a number"),
        ('"groupid" : 0', '"groupid" : {}', "jobs[0].groupid: {} is not a number"),
        ('"groupid" : 0', '"groupid" : 1' + "0" * 5000, "jobs[0].groupid: not a finite number"),
        ('"iops" : ', '"iops" : -5000.0, "x" : ', "jobs[0].read.iops: -5000.0 is negative"),
        ('"iops" : ', '"iops" : NaN, "x" : ', "jobs[0].read.iops: not a finite number"),
        ('"jobs" : [', '"jobs" : [1, ', "jobs[0] is int, not a job object"),
    ],
)
def test_fio_json_impossible_figure_names_the_field(old: str, new: str, message: str) -> None:
    assert old in FIO_JSON
    with pytest.raises(fio_figures.FioParseError) as info:
        fio_result.parse_output(FIO_JSON.replace(old, new, 1))
    assert str(info.value).startswith(message)


def test_fio_json_without_sys_cpu_reads_it_as_zero() -> None:
    text = re.sub(r'"sys_cpu" : [\d.]+,', "", FIO_JSON, count=1)
    result = fio_result.parse_output(text)
    assert result["jobs"][0]["cpu"]["sys_pct"] == 0.0
    assert result["jobs"][0]["cpu"]["usr_pct"] > 0


def test_fio_json_nested_too_deeply_is_a_parse_error() -> None:
    with pytest.raises(fio_figures.FioParseError, match="nested too deeply"):
        fio_result.parse_output('{\n"fio version" : "fio-3.33",\n"jobs": ' + "[" * 100_000 + "]" * 100_000 + "\n}\n")


IPERF3_JSON = (FIXTURES / "iperf3" / "tcp.json").read_text()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"num_streams":\t1', '"num_streams":\t1e400', "start.test_start.num_streams: not a finite number"),
        ('"num_streams":\t1', '"num_streams":\t-3', "start.test_start.num_streams: -3 is negative"),
        ('"start":\t{', '"start":\t' + "[" * 100_000, "not valid JSON: nested too deeply"),
    ],
)
def test_iperf3_json_impossible_figure_names_the_field(old: str, new: str, message: str) -> None:
    assert old in IPERF3_JSON
    with pytest.raises(OutputParseError, match=re.escape(message)):
        iperf3.parse_output(IPERF3_JSON.replace(old, new, 1))


def test_oratcptest_negative_throughput_is_skipped_with_a_warning() -> None:
    text = (FIXTURES / "oratcptest" / "oratcptest-sync-client.txt").read_text()
    result = oratcptest.parse_output(
        text.replace("     90.170 Mbytes/s", "    -90.170 Mbytes/s", 1).replace(
            "Avg. throughput = 98.549", "Avg. throughput = -98.549"
        )
    )
    assert len(result["samples"]) == 14  # 15 interval lines, one impossible
    assert result["samples"][0]["throughput_mib_s"] == 81.076
    assert "avg_throughput_mib_s" not in result
    assert result["warnings"] == [
        "line 17: interval with a negative or infinite figure, skipped: '(13:53:36)    -90.170 Mbytes/s           "
        "11.090 ms'",
        "line 34: Avg. throughput = '-98.549 Mbytes/s' is no possible figure, skipped",
    ]
    ok, reason = oratcptest.succeeded(result, 0)
    assert ok is False
    stream = oratcptest.OratcptestStreamParser()
    assert stream.feed("(13:53:36)    -90.170 Mbytes/s           11.090 ms") == []


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_results_are_strict_json(name: str) -> None:
    parse, fixture = PARSERS[name]
    result = parse(fixture.read_text())
    json.dumps(result if not isinstance(result, list) else [s.metrics for s in result], allow_nan=False)


def test_racperf_parse_prints_warnings_to_stderr_and_strict_json(tmp_path: Path) -> None:
    import subprocess

    from tests.helpers import racperf_cmd

    path = tmp_path / "np.txt"
    path.write_text(
        "Interim result: " + "1" * 5000 + "\n" + (FIXTURES / "netperf" / "netperf_tcp_rr_D1.txt").read_text()
    )
    done = subprocess.run(racperf_cmd() + ["parse", "netperf", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert (
        done.stderr
        == f"racperf parse netperf: {path}: line 1: a number of more than 40 digits is no figure; line skipped\n"
    )
    assert json.loads(done.stdout)["trans_per_s"] == 16435.47
    bad = tmp_path / "bad.json"
    bad.write_text(FIO_JSON.replace('"groupid" : 0', '"groupid" : Infinity', 1))
    done = subprocess.run(racperf_cmd() + ["parse", "fio", str(bad)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith(f"racperf parse fio: {bad}: jobs[0].groupid: not a finite number")
    assert "Traceback" not in done.stderr
