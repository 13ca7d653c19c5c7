"""netperf's and netserver's output -> the result. Understood:

* the classic result blocks of each test, with or without the banner and headers (``-P``),
  with CPU columns (``-c -C``);
* interim results of builds configured with ``--enable-demo`` (``-D``), as human lines
  ("Interim result: 8064.58 Trans/s over 1.275 seconds ending at 1796005365.201"), CSV lines
  (with ``-o``) and NETPERF_INTERIM_RESULT[i] keys (with ``-k``);
* omni output selectors (netperf >= 2.5): ``-o`` CSV, ``-O`` columns, ``-k`` KEY=VALUE, kept as a
  dict of selectors and mapped to the common keys (``trans_per_s``, ``throughput_mbit_s``,
  ``mean_latency_us``, ``p99_latency_us``, ``local_cpu_util_pct`` ...).

Throughput is normalised to ``throughput_mbit_s`` (10^6 bits/s, netperf's default unit).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from racperf_tui.core import units
from racperf_tui.tools.figures import MAX_LINE_CHARS, MAX_NUMBER_CHARS, OutputParseError, Warnings, check_finite
from racperf_tui.tools.netperf.config import DEFAULT_RR_SELECTORS, DEFAULT_STREAM_SELECTORS

#: Selector -> the column name netperf prints for it (the CSV header; the ``-O`` header's
#: stacked words joined with spaces).
SELECTOR_NAMES: dict[str, str] = {
    "SOCKET_TYPE": "Socket Type",
    "PROTOCOL": "Protocol",
    "DIRECTION": "Direction",
    "ELAPSED_TIME": "Elapsed Time (sec)",
    "THROUGHPUT": "Throughput",
    "THROUGHPUT_UNITS": "Throughput Units",
    "LSS_SIZE_REQ": "Local Send Socket Size Requested",
    "LSS_SIZE": "Local Send Socket Size Initial",
    "LSS_SIZE_END": "Local Send Socket Size Final",
    "LSR_SIZE_REQ": "Local Recv Socket Size Requested",
    "LSR_SIZE": "Local Recv Socket Size Initial",
    "LSR_SIZE_END": "Local Recv Socket Size Final",
    "RSS_SIZE_REQ": "Remote Send Socket Size Requested",
    "RSS_SIZE": "Remote Send Socket Size Initial",
    "RSS_SIZE_END": "Remote Send Socket Size Final",
    "RSR_SIZE_REQ": "Remote Recv Socket Size Requested",
    "RSR_SIZE": "Remote Recv Socket Size Initial",
    "RSR_SIZE_END": "Remote Recv Socket Size Final",
    "LOCAL_SEND_SIZE": "Local Send Size",
    "LOCAL_RECV_SIZE": "Local Recv Size",
    "REMOTE_SEND_SIZE": "Remote Send Size",
    "REMOTE_RECV_SIZE": "Remote Recv Size",
    "REQUEST_SIZE": "Request Size Bytes",
    "RESPONSE_SIZE": "Response Size Bytes",
    "LOCAL_CPU_UTIL": "Local CPU Util %",
    "LOCAL_CPU_PERCENT_USER": "Local CPU User %",
    "LOCAL_CPU_PERCENT_SYSTEM": "Local CPU System %",
    "LOCAL_CPU_PERCENT_IOWAIT": "Local CPU I/O %",
    "LOCAL_CPU_PERCENT_IRQ": "Local CPU IRQ %",
    "LOCAL_CPU_PERCENT_SWINTR": "Local CPU swintr %",
    "LOCAL_CPU_METHOD": "Local CPU Util Method",
    "LOCAL_SD": "Local Service Demand",
    "REMOTE_CPU_UTIL": "Remote CPU Util %",
    "REMOTE_CPU_PERCENT_USER": "Remote CPU User %",
    "REMOTE_CPU_PERCENT_SYSTEM": "Remote CPU System %",
    "REMOTE_CPU_PERCENT_IOWAIT": "Remote CPU I/O %",
    "REMOTE_CPU_PERCENT_IRQ": "Remote CPU IRQ %",
    "REMOTE_CPU_PERCENT_SWINTR": "Remote CPU swintr %",
    "REMOTE_CPU_METHOD": "Remote CPU Util Method",
    "REMOTE_SD": "Remote Service Demand",
    "SD_UNITS": "Service Demand Units",
    "CONFIDENCE_LEVEL": "Confidence Level Percent",
    "CONFIDENCE_INTERVAL": "Confidence Width Target",
    "CONFIDENCE_ITERATION": "Confidence Iterations Run",
    "THROUGHPUT_CONFID": "Throughput Confidence Width (%)",
    "LOCAL_CPU_CONFID": "Local CPU Confidence Width (%)",
    "REMOTE_CPU_CONFID": "Remote CPU Confidence Width (%)",
    "TRANSACTION_RATE": "Transaction Rate Tran/s",
    "RT_LATENCY": "Round Trip Latency usec/tran",
    "BURST_SIZE": "Initial Burst Requests",
    "LOCAL_TRANSPORT_RETRANS": "Local Transport Retransmissions",
    "REMOTE_TRANSPORT_RETRANS": "Remote Transport Retransmissions",
    "TRANSPORT_MSS": "Transport MSS bytes",
    "LOCAL_SEND_THROUGHPUT": "Local Send Throughput",
    "LOCAL_RECV_THROUGHPUT": "Local Recv Throughput",
    "REMOTE_SEND_THROUGHPUT": "Remote Send Throughput",
    "REMOTE_RECV_THROUGHPUT": "Remote Recv Throughput",
    "LOCAL_CPU_COUNT": "Local CPU Count",
    "REMOTE_CPU_COUNT": "Remote CPU Count",
    "LOCAL_BYTES_SENT": "Local Bytes Sent",
    "LOCAL_BYTES_RECVD": "Local Bytes Received",
    "REMOTE_BYTES_SENT": "Remote Bytes Sent",
    "REMOTE_BYTES_RECVD": "Remote Bytes Received",
    "RESULT_BRAND": "Result Tag",
    "UUID": "Test UUID",
    "MIN_LATENCY": "Minimum Latency Microseconds",
    "MAX_LATENCY": "Maximum Latency Microseconds",
    "P50_LATENCY": "50th Percentile Latency Microseconds",
    "P90_LATENCY": "90th Percentile Latency Microseconds",
    "P99_LATENCY": "99th Percentile Latency Microseconds",
    "MEAN_LATENCY": "Mean Latency Microseconds",
    "STDDEV_LATENCY": "Stddev Latency Microseconds",
    "COMMAND_LINE": "Command Line",
}
_NAME_TO_SELECTOR = {v.lower(): k for k, v in SELECTOR_NAMES.items()}

#: Selector -> the common result key it fills (units in the names).
COMMON_KEYS: dict[str, str] = {
    "ELAPSED_TIME": "elapsed_s",
    "TRANSACTION_RATE": "trans_per_s",
    "RT_LATENCY": "rt_latency_us",
    "MIN_LATENCY": "min_latency_us",
    "MAX_LATENCY": "max_latency_us",
    "MEAN_LATENCY": "mean_latency_us",
    "P50_LATENCY": "p50_latency_us",
    "P90_LATENCY": "p90_latency_us",
    "P99_LATENCY": "p99_latency_us",
    "STDDEV_LATENCY": "stddev_latency_us",
    "LOCAL_CPU_UTIL": "local_cpu_util_pct",
    "REMOTE_CPU_UTIL": "remote_cpu_util_pct",
    "REQUEST_SIZE": "request_bytes",
    "RESPONSE_SIZE": "response_bytes",
    "LOCAL_SEND_SIZE": "send_message_bytes",
    "REMOTE_RECV_SIZE": "recv_message_bytes",
    "LSS_SIZE_END": "local_send_socket_bytes",
    "LSR_SIZE_END": "local_recv_socket_bytes",
    "RSS_SIZE_END": "remote_send_socket_bytes",
    "RSR_SIZE_END": "remote_recv_socket_bytes",
    "LOCAL_TRANSPORT_RETRANS": "local_retransmissions",
    "REMOTE_TRANSPORT_RETRANS": "remote_retransmissions",
    "PROTOCOL": "protocol",
    "DIRECTION": "direction",
}

#: Throughput unit as netperf prints it -> factor to 10^6 bits/s.
_UNIT_TO_MBIT = {
    "10^9bits": 1000.0,
    "10^6bits": 1.0,
    "10^3bits": 0.001,
    "GBytes": units.MIB_S_TO_MBIT_S * 1024,
    "MBytes": units.MIB_S_TO_MBIT_S,
    "KBytes": units.MIB_S_TO_MBIT_S / 1024,
}

# every regex here is linear in the line: no two adjacent parts can match the same character
# (``\d+\.?\d*`` could split a digit run in n ways and was quadratic on a long one)
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_BANNER_RE = re.compile(r"^(?:MIGRATED\s+)?(?P<what>[A-Za-z/ ]+?) TEST (?:from|to) (?P<rest>.*)$")
INTERIM_HUMAN_RE = re.compile(
    rf"^Interim result:\s*(?P<value>{_NUM})\s+(?P<units>\S+)\s+over\s+(?P<interval>{_NUM})\s+seconds"
    rf"\s+ending at\s+(?P<ending>{_NUM})\s*$"
)
INTERIM_CSV_RE = re.compile(rf"^(?P<value>{_NUM}),(?P<units>[^,]*/s),(?P<interval>{_NUM}),(?P<ending>\d+\.\d+)\s*$")
#: the value is stripped by the caller (a lazy ``.*?\s*$`` is quadratic on a run of blanks)
KEYVAL_RE = re.compile(r"^(?P<key>[A-Z][A-Z0-9_]*)(?:\[(?P<index>\d+)\])?=(?P<value>.*)$")
#: a digit run this long is no figure (int() refuses > 4300 digits; float() makes it inf)
_HUGE_NUMBER_RE = re.compile(rf"\d{{{MAX_NUMBER_CHARS + 1}}}")
_NUMERIC_ROW_RE = re.compile(rf"^\s*{_NUM}(?:\s+{_NUM})*\s*$")
_CLASSIC_HEADER_RES = (
    re.compile(r"^Local /Remote"),
    re.compile(r"^Recv\s+Send\s+Send"),
    re.compile(r"^Socket\s+Message\s+Elapsed"),
    re.compile(r"^Socket Size\s+Request"),
)
_ERROR_RES = (
    re.compile(r"^establish[ _]control"),
    re.compile(r"^Netperf could not resolve"),
    re.compile(r"^(send|recv)_\w+: "),
    re.compile(r"could not establish"),
    re.compile(r"^netperf: .*(invalid|unrecognized) option"),
)
_NOTE_RES = (
    re.compile(r"^Sorry, Demo Mode not configured"),
    re.compile(r"^Please consider reconfiguring"),
    re.compile(r"^please consider reconfiguring"),
    re.compile(r"^--enable-demo=yes"),
)
_WHAT_TO_TEST = {
    "TCP REQUEST/RESPONSE": "TCP_RR",
    "TCP STREAM": "TCP_STREAM",
    "UDP REQUEST/RESPONSE": "UDP_RR",
    "UDP STREAM": "UDP_STREAM",
    "TCP MAERTS": "TCP_MAERTS",
    "TCP Connect/Request/Response": "TCP_CRR",
}


def to_mbit_s(value: float, units: str) -> float | None:
    """A throughput in netperf's printed ``units`` -> 10^6 bits/s (None for Trans/s or unknown)."""
    base = units.split("/")[0]
    factor = _UNIT_TO_MBIT.get(base)
    return None if factor is None else value * factor


def _number(text: str) -> int | float | str:
    """A selector's value: a number when it is one (finite), else the text as printed."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def line_problem(line: str) -> str | None:
    """Why a line cannot hold a figure (too long, a number of absurd length), None when it can."""
    if len(line) > MAX_LINE_CHARS:
        return f"{len(line)} characters long, skipped (no figure line is longer than {MAX_LINE_CHARS})"
    if _HUGE_NUMBER_RE.search(line):
        return f"a number of more than {MAX_NUMBER_CHARS} digits is no figure; line skipped"
    return None


def interim_figures(value: str, interval: str, ending: str) -> tuple[float, float, float] | None:
    """An interim result's figures, None when one is impossible (negative, inf, NaN)."""
    numbers = (float(value), float(interval), float(ending))
    if not all(math.isfinite(x) and x >= 0 for x in numbers):
        return None
    return numbers


def sample_from_interim(
    value: float, units: str, interval: float, ending: float, origin: float | None
) -> tuple[dict[str, Any], float]:
    if origin is None:
        origin = ending - interval
    sample: dict[str, Any] = {
        "t": round(ending - origin, 3),
        "interval_s": interval,
        "ending_epoch": ending,
        "value": value,
        "units": units,
    }
    if units.startswith("Trans"):
        sample["trans_per_s"] = value
    else:
        mbit = to_mbit_s(value, units)
        if mbit is not None:
            sample["throughput_mbit_s"] = round(mbit, 6)
    return sample, origin


def _omni_to_common(omni: Mapping[str, Any], result: dict[str, Any]) -> None:
    """Fill the common keys from a selector dict."""
    for selector, key in COMMON_KEYS.items():
        if selector not in omni:
            continue
        value = omni[selector]
        if key.endswith("_cpu_util_pct") and isinstance(value, (int, float)) and value < 0:
            continue  # netperf prints -1 when CPU was not measured
        result.setdefault(key, value)
    units = str(omni.get("THROUGHPUT_UNITS", ""))
    tput = omni.get("THROUGHPUT")
    if isinstance(tput, (int, float)):
        if units.startswith("Trans"):
            result.setdefault("trans_per_s", tput)
        else:
            mbit = to_mbit_s(float(tput), units or "10^6bits/s")
            if mbit is not None:
                result.setdefault("throughput_mbit_s", round(mbit, 6))
    remote = omni.get("REMOTE_RECV_THROUGHPUT")
    if isinstance(remote, (int, float)) and units and not units.startswith("Trans"):
        mbit = to_mbit_s(float(remote), units)
        if mbit is not None:
            result.setdefault("remote_throughput_mbit_s", round(mbit, 6))
    if "test" not in result or result["test"] is None:
        proto, direction = str(omni.get("PROTOCOL", "")).upper(), str(omni.get("DIRECTION", ""))
        if proto in ("TCP", "UDP") and direction:
            kind = {"Send|Recv": "RR", "Send": "STREAM", "Recv": "MAERTS"}.get(direction)
            if kind:
                result["test"] = f"{proto}_{kind}"


def _columns_from_value_row(header_rows: list[str], value_row: str) -> dict[str, str]:
    """``-O`` output: column names from the stacked header rows, aligned on the value row."""
    starts = [m.start() for m in re.finditer(r"\S+", value_row)]
    values = value_row.split()
    names = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else None
        words = [row[start:end].strip() for row in header_rows]
        names.append(" ".join(w for w in words if w))
    return dict(zip(names, values))


def _selector_for(name: str) -> str:
    return _NAME_TO_SELECTOR.get(name.strip().lower(), name.strip())


def _classic(
    test: str | None, header_rows: list[str], rows: list[list[float]], units: str, result: dict[str, Any]
) -> None:
    """The classic result block -> common keys. Shape decides when there is no banner/header."""
    first = rows[0]
    second = rows[1] if len(rows) > 1 else []
    header = " ".join(header_rows)
    if test is None:
        if "Okay Errors" in header or (len(first) == 6 and len(second) == 4):
            test = "UDP_STREAM"
        elif "Trans." in header or (len(first) in (6, 10) and len(second) == 2):
            test = "*_RR"
        elif len(first) in (5, 9):
            test = "TCP_STREAM"
        # RR shapes are the same for TCP and UDP; the STREAM shapes differ
        result["test"] = test if test in ("UDP_STREAM", "TCP_STREAM") else None
        result["test_shape"] = test
        result.setdefault("notes", []).append("no banner (-P 0): the test is inferred from the result's shape")
    if test is not None and test.endswith("_RR"):
        keys = [
            "local_send_socket_bytes",
            "local_recv_socket_bytes",
            "request_bytes",
            "response_bytes",
            "elapsed_s",
            "trans_per_s",
            "local_cpu_util_pct",
            "remote_cpu_util_pct",
            "local_service_demand_us_per_tran",
            "remote_service_demand_us_per_tran",
        ]
        result.update(zip(keys, first))
        if len(second) >= 2:
            result["remote_send_socket_bytes"], result["remote_recv_socket_bytes"] = second[:2]
        if result.get("trans_per_s"):
            result["rt_latency_us"] = round(1e6 / result["trans_per_s"], 3)
    elif test == "UDP_STREAM":
        keys = [
            "local_send_socket_bytes",
            "send_message_bytes",
            "elapsed_s",
            "messages_ok",
            "errors",
            "throughput_mbit_s",
        ]
        result.update(zip(keys, first))
        if len(second) >= 4:
            result["remote_recv_socket_bytes"] = second[0]
            result["remote_elapsed_s"] = second[1]
            result["remote_messages_ok"] = second[2]
            result["remote_throughput_mbit_s"] = second[3]
            sent, arrived = result.get("messages_ok"), second[2]
            if isinstance(sent, (int, float)) and sent > 0 and isinstance(arrived, (int, float)):
                # what the sender sent and the receiver never counted: the link's and the
                # receiving socket's drops together (netperf sends as fast as it can)
                result["loss_pct"] = round(max(0.0, 100.0 * (1.0 - arrived / sent)), 3)
        for key in ("throughput_mbit_s", "remote_throughput_mbit_s"):
            if key in result:
                result[key] = round(to_mbit_s(float(result[key]), units) or result[key], 6)
    else:  # TCP_STREAM / TCP_MAERTS
        keys = [
            "remote_recv_socket_bytes",
            "local_send_socket_bytes",
            "send_message_bytes",
            "elapsed_s",
            "throughput_mbit_s",
            "local_cpu_util_pct",
            "remote_cpu_util_pct",
            "local_service_demand_us_per_kb",
            "remote_service_demand_us_per_kb",
        ]
        result.update(zip(keys, first))
        if "throughput_mbit_s" in result:
            result["throughput_mbit_s"] = round(
                to_mbit_s(float(result["throughput_mbit_s"]), units) or result["throughput_mbit_s"], 6
            )


def parse_output(text: str, test: str | None = None, selectors: Sequence[str] | None = None) -> dict[str, Any]:
    """A saved netperf output -> result dict.

    ``{"tool": "netperf", "test": "TCP_RR", "elapsed_s", "trans_per_s" (RR) |
    "throughput_mbit_s" (STREAM), "remote_throughput_mbit_s", "messages_ok", "errors",
    "loss_pct" (UDP_STREAM; loss_pct = 100 x (1 - remote_messages_ok / messages_ok)),
    socket and message sizes, CPU figures (-c -C), "omni": {SELECTOR: value} and
    the common keys it maps to, "samples": [{"t", "interval_s", "ending_epoch", "value",
    "units", "trans_per_s" | "throughput_mbit_s"}]}``. ``test`` and ``selectors`` help with
    ``-P 0`` outputs, which print neither the banner nor the CSV header. An output that is only
    an error (no netserver listening) gives ``{"tool": "netperf", "error": ...}``.
    """
    result: dict[str, Any] = {"tool": "netperf", "test": test.upper() if test else None}
    listing = text.strip()
    if listing.startswith("OUTPUT_NONE,") and re.fullmatch(r"[A-Z0-9_,\s]+", listing):
        # the output of `netperf -- -o '?'`: the selectors this build knows
        return {"tool": "netperf", "selector_list": [s.strip() for s in listing.split(",") if s.strip()]}
    samples: list[dict[str, Any]] = []
    origin: float | None = None
    keyval: dict[str, Any] = {}
    interim_kv: dict[int, dict[str, str]] = {}
    csv_lines: list[list[str]] = []
    block: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    warnings = Warnings()
    for lineno, raw in enumerate(text.splitlines(), 1):
        problem = line_problem(raw)
        if problem:
            warnings.add(f"line {lineno}: {problem}")
            continue
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        banner = _BANNER_RE.match(stripped)
        if banner and not block:
            result["banner"] = stripped
            parts = [p.strip() for p in banner["rest"].split(" : ")]
            result["features"] = parts[1:]
            found = _WHAT_TO_TEST.get(banner["what"].strip())
            if found and not test:
                result["test"] = found
            continue
        interim = INTERIM_HUMAN_RE.match(stripped) or INTERIM_CSV_RE.match(stripped)
        if interim:
            figures = interim_figures(interim["value"], interim["interval"], interim["ending"])
            if figures is None:
                warnings.add(f"line {lineno}: interim result with a negative or infinite figure, skipped")
                continue
            sample, origin = sample_from_interim(figures[0], interim["units"], figures[1], figures[2], origin)
            samples.append(sample)
            continue
        if any(r.search(stripped) for r in _ERROR_RES):
            errors.append(stripped)
            continue
        if any(r.search(stripped) for r in _NOTE_RES):
            notes.append(stripped)
            continue
        kv = KEYVAL_RE.match(stripped)
        if kv:
            if kv["key"].startswith("NETPERF_") and kv["index"] is not None:
                interim_kv.setdefault(int(kv["index"]), {})[kv["key"]] = kv["value"]
            else:
                keyval[kv["key"]] = _number(kv["value"])
            continue
        if "," in stripped and not _NUMERIC_ROW_RE.match(stripped):
            csv_lines.append(stripped.split(","))
            continue
        block.append(line)
    for index in sorted(interim_kv):
        item = interim_kv[index]
        try:
            figures = interim_figures(item["NETPERF_INTERIM_RESULT"], item["NETPERF_INTERVAL"], item["NETPERF_ENDING"])
        except (KeyError, ValueError):
            continue  # an interim cut short by the end of the run
        if figures is None:
            warnings.add(f"NETPERF_INTERIM_RESULT[{index}]: a negative or infinite figure, skipped")
            continue
        sample, origin = sample_from_interim(figures[0], item.get("NETPERF_UNITS", ""), figures[1], figures[2], origin)
        samples.append(sample)
    omni: dict[str, Any] = dict(keyval)
    if csv_lines:
        values = csv_lines[-1]
        header = csv_lines[-2] if len(csv_lines) >= 2 and not _NUMERIC_ROW_RE.match(csv_lines[-2][0]) else None
        if header is not None and len(header) == len(values):
            names = [_selector_for(h) for h in header]
        elif selectors and len(selectors) == len(values):
            names = list(selectors)
        elif len(values) == len(DEFAULT_RR_SELECTORS) and values[1].startswith("Trans"):
            names = list(DEFAULT_RR_SELECTORS)
            notes.append("CSV without header (-P 0): read with racperf's default RR selector list")
        elif len(values) == len(DEFAULT_STREAM_SELECTORS) and "bits" in values[1]:
            names = list(DEFAULT_STREAM_SELECTORS)
            notes.append("CSV without header (-P 0): read with racperf's default STREAM selector list")
        else:
            names = [f"column_{i + 1}" for i in range(len(values))]
            notes.append("CSV without header (-P 0) and selectors unknown: columns are unnamed")
        omni.update({n: _number(v) for n, v in zip(names, values)})
    numeric_rows = []
    for row in block:
        if _NUMERIC_ROW_RE.match(row):
            numbers = [float(x) if any(c in x for c in ".eE") else int(x) for x in row.split()]
            if all(math.isfinite(x) for x in numbers):
                numeric_rows.append(numbers)
            else:
                warnings.add(f"result row with an infinite figure, skipped: {row.strip()[:60]!r}")
    header_rows = [row for row in block if not _NUMERIC_ROW_RE.match(row)]
    if (
        header_rows
        and not numeric_rows
        and len(header_rows) >= 2
        and not any(r.match(header_rows[0].strip()) for r in _CLASSIC_HEADER_RES)
    ):
        # -O: stacked column names, then one value row (it holds words like Trans/s, TCP)
        columns = _columns_from_value_row(header_rows[:-1], header_rows[-1])
        omni.update({_selector_for(n): _number(v) for n, v in columns.items()})
        header_rows = []
    if omni:
        result["omni"] = omni
        _omni_to_common(omni, result)
    if numeric_rows:
        header_text = " ".join(header_rows)
        unit_match = re.search(r"(10\^\d+bits|[KMG]Bytes)/s", header_text)
        units = unit_match[0] if unit_match else "10^6bits/s"
        _classic(result["test"], header_rows, numeric_rows, units, result)
    if notes:
        result.setdefault("notes", []).extend(notes)
    result["samples"] = samples
    if errors:
        result["error"] = " / ".join(errors)
    warnings.into(result)
    check_finite(result, "netperf output")
    if "elapsed_s" not in result and "trans_per_s" not in result and "throughput_mbit_s" not in result:
        if errors or samples:
            return result
        detail = f" ({warnings.items[0]})" if warnings.items else ""
        raise OutputParseError(f"not netperf output: no result block, no omni output, no interim results{detail}")
    return result


def parse_result(output: str) -> dict[str, Any]:
    """The whole output of a finished run -> result dict: netserver's (see
    :func:`parse_server_output`) or netperf's (see :func:`parse_output`)."""
    if SERVER_READY_RE.search(output) or SERVER_FAILED_RE.search(output):
        return parse_server_output(output)
    return parse_output(output)


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """A run succeeded when netperf printed its figures and did not fail to reach netserver."""
    if not result:
        return False, f"no netperf output (exit status {exit_status})"
    if result.get("error"):
        return False, str(result["error"])
    if result.get("role") == "server":
        return (True, "server ran") if result.get("started") else (False, "netserver never said it started")
    if "trans_per_s" not in result and "throughput_mbit_s" not in result:
        return False, "netperf printed no final result"
    if exit_status not in (0, None):
        return False, f"netperf exited with status {exit_status}"
    return True, "finished"


SERVER_READY_RE = re.compile(r"Starting netserver with host")
SERVER_FAILED_RE = re.compile(r"Unable to start netserver")


def parse_server_output(text: str) -> dict[str, Any]:
    """netserver's own output -> {"tool", "role": "server", "started", "port", "error"?}."""
    result: dict[str, Any] = {"tool": "netperf", "role": "server", "started": False}
    for line in text.splitlines():
        match = re.search(r"Starting netserver with host '([^']*)' port '(\d+)' and family (\S+)", line)
        if match:
            result.update(started=True, host=match[1], port=int(match[2]), family=match[3])
        elif SERVER_FAILED_RE.search(line):
            result["error"] = line.strip()
    return result
