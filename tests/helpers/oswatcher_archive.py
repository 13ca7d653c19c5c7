"""OSWatcher archives built to its format (docs/HISTORY.md): hourly files of snapshots, each
a ``zzz`` marker and an ``iostat -xk 1 3`` (sysstat 10.1, as on RHEL 7)."""

from __future__ import annotations

import datetime as dt

#: sysstat 10.1 (RHEL 7), as OSWatcher's `iostat -xk 1 3` prints it
HEADER = (
    "Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz"
    "   await r_await w_await  svctm  %util"
)


def device_line(device: str, r_s: float) -> str:
    return (
        f"{device:<15}   0.00     0.00 {r_s:7.2f}    0.00 {r_s * 8:8.2f}     0.00    16.00     0.01"
        "    2.00    2.00    0.00   1.00   0.50"
    )


def osw_snapshot(host: str, when: dt.datetime, first_r_s: float) -> str:
    """One OSWatcher snapshot: the zzz marker, then iostat -xk 1 3 (three reports, no -t)."""
    lines = [f"zzz ***{when:%a %b} {when.day:2d} {when:%H:%M:%S} UTC {when:%Y}"]
    lines += [f"Linux 3.10.0-1160.el7.x86_64 ({host}) \t{when:%m/%d/%Y} \t_x86_64_\t(16 CPU)", ""]
    for i in range(3):
        lines += [
            "avg-cpu:  %user   %nice %system %iowait  %steal   %idle",
            "           1.00    0.00    1.00    0.00    0.00   98.00",
            "",
        ]
        lines += [HEADER, device_line("sda", first_r_s + i), device_line("sdb", 100 + first_r_s + i), ""]
    return "\n".join(lines) + "\n"


def osw_hour(host: str, hour: dt.datetime, snapshots: int = 2) -> str:
    banner = [
        "Linux OSW v8.1.2",
        "SNAP_INTERVAL 30",
        "CPU_CORES 8 VCPUS 16",
        "OSWBB_ARCHIVE_DEST /u01/app/oracle/oswbb/archive",
    ]
    body = [osw_snapshot(host, hour + dt.timedelta(seconds=30 * n), 10 * n + hour.hour) for n in range(snapshots)]
    return "\n".join(banner) + "\n" + "".join(body)


def osw_name(host: str, hour: dt.datetime) -> str:
    return f"{host}_iostat_{hour:%y.%m.%d.%H}00.dat"


H10 = dt.datetime(2020, 6, 1, 10, 0)
H11 = dt.datetime(2020, 6, 1, 11, 0)
