"""An ``iostat -xk -t`` log (sysstat 10.1, 24-hour times) of a device that queues, then gives
no more throughput, then recovers: the figures the summary and --saturation tests compute by hand.

From 10:59:50 (the since-boot report, with figures no interval has: left out), one report a
second, sdb at each sample (1-based): 1-5 avgqu-sz 0.5, 500 IOPS, await 1 ms (its low-load
await); 6-10 avgqu-sz 2.5, 1000 IOPS, await 2.5 ms (>= 2x: queueing); 11-16 avgqu-sz 8, 1010
IOPS (no more for 3x the load), await 8 ms (12 ms at 16): saturated; 17-22 as 1-5. sda idle.
Every I/O is 8 kB (avgrq-sz 16 sectors).
"""

from __future__ import annotations

import datetime as dt

START = dt.datetime(2020, 6, 1, 10, 59, 50)
HEADER = (
    "Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz"
    "   await r_await w_await  svctm  %util"
)

#: (avgqu-sz, r/s, await, %util) of sdb at samples 1..22
SAMPLES: list[tuple[float, float, float, float]] = (
    [(0.5, 500.0, 1.0, 40.0)] * 5
    + [(2.5, 1000.0, 2.5, 80.0)] * 5
    + [(8.0, 1010.0, 8.0, 95.0)] * 5
    + [(8.0, 1010.0, 12.0, 95.0)]
    + [(0.5, 500.0, 1.0, 40.0)] * 6
)


def device_line(device: str, qu: float, r_s: float, await_ms: float, util: float) -> str:
    return (
        f"{device:<15}   0.00     0.00 {r_s:7.2f}    0.00 {r_s * 8:8.2f}     0.00    16.00 {qu:8.2f}"
        f" {await_ms:7.2f} {await_ms:7.2f}    0.00   0.80 {util:6.2f}"
    )


def saturating_log(host: str = "dbnode7") -> str:
    lines = [f"Linux 3.10.0-957.el7.x86_64 ({host}) \t06/01/20 \t_x86_64_\t(16 CPU)", ""]
    boot = (50.0, 3000.0, 99.0, 100.0)  # since boot: no interval has these
    for index, (qu, r_s, await_ms, util) in enumerate([boot, *SAMPLES]):
        when = START + dt.timedelta(seconds=index)
        lines += [
            f"{when:%m/%d/%y %H:%M:%S}",
            HEADER,
            device_line("sda", 0.0, 0.0, 0.0, 0.0),
            device_line("sdb", qu, r_s, await_ms, util),
            "",
        ]
    return "\n".join(lines) + "\n"
