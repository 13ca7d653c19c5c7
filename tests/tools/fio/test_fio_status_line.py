"""fio's console status line in every shape eta.c (display_thread_status) prints.

Grammar, from fio's eta.c (3.33 and 2.17: the same; 2.1.10: blanks between fields, "% done",
"/s" and "iops" fields, ``CR=`` limits)::

    Jobs: NR_RUNNING (f=FILES_OPEN)
          [", " MIN_RATE "-" MAX_RATE | ", " MIN_IOPS "-" MAX_IOPS " IOPS"]    (rate/iops limits)
          [": [" RUN_STR "][" PCT "]" ["[r=RATE,w=RATE,t=RATE][r=IOPS,w=IOPS,t=IOPS IOPS]"]
             "[eta " ETA "]"]                       (only while jobs run and the ETA is known)

RUN_STR is one state letter per job (P C I p R r W w M m D d F V f E / _ K X), condensed to
``m(3),_(1)`` since 2.2; PCT is ``%3.1f%%`` or ``-.-%`` (ramp, unknown); rates are num2str
figures (KiB/MiB/GiB, kB/MB with kb_base=1000, bit/s with unit_base=1), IOPS num2str counts
(``15.4k``, ``1.2M``); ETA is ``[Dd:][HHh:]MMm:SSs`` or ``--``.
"""

from __future__ import annotations

from typing import Any

import pytest

from racperf_tui.tools.fio import result as fio_result
from racperf_tui.tools.fio.status_line import JOB_STATES, STATUS_RE, parse_status_line


def status(line: str) -> dict[str, Any]:
    match = STATUS_RE.match(line)
    assert match, line
    sample = parse_status_line(match, 0)
    del sample["index"]
    return sample


def test_no_running_job_or_unknown_eta_prints_the_counts_only() -> None:
    assert status("Jobs: 1 (f=1)") == {"jobs_running": 1, "files_open": 1}
    assert status("Jobs: 0 (f=0)") == {"jobs_running": 0, "files_open": 0}


def test_rate_limits_before_the_colon() -> None:
    # num2str prints a zero minimum without a unit
    assert status("Jobs: 1 (f=1), 0-1024KiB/s: [w(1)][25.0%][w=1024KiB/s][w=256 IOPS][eta 00m:03s]") == {
        "jobs_running": 1,
        "files_open": 1,
        "rate_limit_min_kib_s": 0.0,
        "rate_limit_max_kib_s": 1024.0,
        "job_states": "w(1)",
        "jobs_by_state": {"w": 1},
        "progress_pct": 25.0,
        "write_bw_kib_s": 1024.0,
        "write_iops": 256.0,
        "eta_s": 3.0,
    }
    s = status("Jobs: 1 (f=1), 1024KiB/s-2MiB/s: [W(1)][10.0%][w=2048KiB/s][w=512 IOPS][eta 00m:09s]")
    assert (s["rate_limit_min_kib_s"], s["rate_limit_max_kib_s"]) == (1024.0, 2048.0)


def test_iops_limits_before_the_colon() -> None:
    s = status("Jobs: 1 (f=1), 0-500 IOPS: [r(1)][50.0%][r=2000KiB/s][r=500 IOPS][eta 00m:05s]")
    assert (s["iops_limit_min"], s["iops_limit_max"], s["read_iops"], s["read_bw_kib_s"]) == (0.0, 500.0, 500.0, 2000.0)


def test_fio_2_1_limits_are_cr_max_slash_min() -> None:
    s = status("Jobs: 1 (f=1), CR=1024/0 KB/s: [w] [50.0% done] [0KB/1024KB/0KB /s] [0/256/0 iops] [eta 00m:05s]")
    assert (s["rate_limit_min_kib_s"], s["rate_limit_max_kib_s"]) == (0.0, 1024.0)
    assert (s["write_bw_kib_s"], s["write_iops"], s["progress_pct"], s["eta_s"]) == (1024.0, 256.0, 50.0, 5.0)
    s = status("Jobs: 1 (f=1), CR=500/0 IOPS: [r] [50.0% done] [2000KB/0KB/0KB /s] [500/0/0 iops] [eta 00m:05s]")
    assert (s["iops_limit_min"], s["iops_limit_max"], s["read_iops"]) == (0.0, 500.0, 500.0)


def test_unknown_eta_and_ramp_give_no_progress() -> None:
    s = status("Jobs: 1 (f=1): [r(1)][-.-%][r=1MiB/s][r=256 IOPS][eta --]")
    assert "progress_pct" not in s and "eta_s" not in s
    assert s["read_bw_kib_s"] == 1024.0
    s = status("Jobs: 2 (f=2): [/(2)][-.-%][r=100MiB/s][r=25.6k IOPS][eta 00m:10s]")
    assert s["jobs_by_state"] == {"/": 2} and JOB_STATES["/"] == "ramp"
    assert (s["read_bw_kib_s"], s["read_iops"], s["eta_s"]) == (102400.0, 25600.0, 10.0)


@pytest.mark.parametrize(
    ("run_str", "counts"),
    [
        ("R(1),w(1),_(1)", {"R": 1, "w": 1, "_": 1}),
        ("m(4)", {"m": 4}),
        (
            "P(1),C(1),I(2),p(1),V(1),F(1),f(1),E(1),K(1),X(1),d(1),D(1),M(1),W(1),r(1)",
            {s: (2 if s == "I" else 1) for s in "PCIpVFfEKXdDMWr"},
        ),
        ("____m____m_m", {"_": 9, "m": 3}),  # fio before 2.2: one letter per job
    ],
)
def test_every_job_state_letter_is_counted(run_str: str, counts: dict[str, int]) -> None:
    s = status(f"Jobs: 3 (f=3): [{run_str}][40.0%][r=10.0MiB/s,w=5120KiB/s][r=2560,w=1280 IOPS][eta 00m:06s]")
    assert s["job_states"] == run_str and s["jobs_by_state"] == counts
    assert set(counts) <= set(JOB_STATES)


@pytest.mark.parametrize(
    ("rates", "kib_s"),
    [
        ("r=512KiB/s", 512.0),
        ("r=56.5MiB/s", 56.5 * 1024),
        ("r=1.5GiB/s", 1.5 * 1024**2),
        ("r=58.5MB/s", 58.5e6 / 1024),
        ("r=900kB/s", 900e3 / 1024),
        ("r=480Mibit/s", 480 * 1024 / 8),
        ("r=1000B/s", 1000 / 1024),
    ],
)
def test_rate_units(rates: str, kib_s: float) -> None:
    assert status(f"Jobs: 1 (f=1): [r(1)][5.0%][{rates}][r=1 IOPS][eta 00m:01s]")["read_bw_kib_s"] == pytest.approx(
        kib_s
    )


@pytest.mark.parametrize(("iops", "value"), [("6529", 6529.0), ("15.4k", 15400.0), ("1.2M", 1.2e6), ("999", 999.0)])
def test_iops_with_num2str_suffixes(iops: str, value: float) -> None:
    assert status(f"Jobs: 1 (f=1): [r(1)][5.0%][r=1MiB/s][r={iops} IOPS][eta 00m:01s]")["read_iops"] == value


def test_trim_direction_and_days_in_the_eta() -> None:
    s = status("Jobs: 1 (f=1): [m(1)][5.0%][r=1MiB/s,w=1MiB/s,t=512KiB/s][r=256,w=256,t=128 IOPS][eta 1d:02h:00m:00s]")
    assert (s["trim_bw_kib_s"], s["trim_iops"], s["eta_s"]) == (512.0, 128.0, 93600.0)


def test_no_rates_when_nothing_moved() -> None:
    # gen_eta_str prints no rate fields when every rate and IOPS is zero
    assert status("Jobs: 1 (f=1): [f(1)][100.0%][eta 00m:00s]") == {
        "jobs_running": 1,
        "files_open": 1,
        "job_states": "f(1)",
        "jobs_by_state": {"f": 1},
        "progress_pct": 100.0,
        "eta_s": 0.0,
    }


def test_garbage_eta_from_fios_uninitialised_buffer_is_ignored() -> None:
    # eta.c prints eta_str even when it was never set (elapsed 0): whatever was on the stack
    s = status("Jobs: 1 (f=1): [r(1)][-.-%][r=1MiB/s][r=256 IOPS][eta \x01\x7f?]")
    assert "eta_s" not in s and s["read_iops"] == 256.0


def test_a_rate_limited_console_log_yields_its_samples() -> None:
    log = (
        "\r".join(
            [
                "fio-3.33",
                "Starting 1 process",
                "Jobs: 1 (f=1), 0-1024KiB/s: [w(1)][20.0%][w=1024KiB/s][w=256 IOPS][eta 00m:04s]",
                "Jobs: 1 (f=1), 0-1024KiB/s: [w(1)][40.0%][w=1020KiB/s][w=255 IOPS][eta 00m:03s]",
                "Jobs: 1 (f=1), 0-1024KiB/s: [w(1)][60.0%][w=1024KiB/s][w=256 IOPS][eta 00m:02s]",
            ]
        )
        + "\n"
    )
    result = fio_result.parse_output(log)
    assert result["format"] == "console"
    assert [s["write_iops"] for s in result["samples"]] == [256.0, 255.0, 256.0]
    assert [s["progress_pct"] for s in result["samples"]] == [20.0, 40.0, 60.0]
    assert {s["rate_limit_max_kib_s"] for s in result["samples"]} == {1024.0}
