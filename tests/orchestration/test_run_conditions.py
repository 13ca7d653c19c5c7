"""The conditions a run records, asked of the host by one sh script: against a real
partitioned loop device, sysfs read directly as the oracle."""

from __future__ import annotations

import os
from pathlib import Path

from racperf_tui.core.contract.hosts import LocalHost
from racperf_tui.orchestration.run_conditions import parse_conditions, record_conditions
from tests.helpers.loopdev import loop_device, needs_loop


@needs_loop
def test_a_partition_target_is_followed_to_its_disk_with_its_sysfs_facts(tmp_path: Path) -> None:
    with loop_device(tmp_path / "disk.img", 64, partition_table="label: dos\n,32M,83\n", partition_count=1) as loop:
        partition = loop.partition_path(1)
        conditions = record_conditions(LocalHost(), [partition, str(tmp_path / "not-yet.dat")], "fio-x")
        sysfs = Path("/sys/class/block") / loop.name
        scheduler = (sysfs / "queue" / "scheduler").read_text().strip()
        nr_requests = (sysfs / "queue" / "nr_requests").read_text().strip()
        rdev = os.stat(partition).st_rdev
    st = os.stat(tmp_path)
    assert conditions["kernel"] == f"Linux {os.uname().release}" and conditions["host"] == os.uname().nodename
    # a device: its own number; a file not made yet: its directory's file system's device
    assert conditions["targets"] == [
        {"path": partition, "devno": f"{os.major(rdev)}:{os.minor(rdev)}"},
        {"path": str(tmp_path / "not-yet.dat"), "devno": f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"},
    ]
    # the targets' devices first, then what they sit on
    by_name = {device["name"]: device for device in conditions["devices"]}
    assert [device["name"] for device in conditions["devices"]][0] == f"{loop.name}p1"
    part, disk = by_name[f"{loop.name}p1"], by_name[loop.name]
    assert part["disk"] == loop.name and part["size"] == str(32 * 2048)
    assert disk["loop/backing_file"] == str(tmp_path / "disk.img")
    assert disk["queue/scheduler"] == scheduler and disk["queue/nr_requests"] == nr_requests
    assert conditions["racperf_version"] and conditions["tool_version"] == "fio-x"


def test_the_scripts_lines_are_read_by_key() -> None:
    text = "kernel=Linux 6.1\nhost=rac1\ntarget=/dev/mapper/d1\ndevno=253:2\ndevice=dm-2\ndm/name=d1\nbelow=sdb\n"
    text += "below=sdc\ndevice=sdb\ndevice/model=ARRAY  \ndevice/rev=4.2\nnot a line\nunknown=x\n"
    assert parse_conditions(text) == {
        "kernel": "Linux 6.1",
        "host": "rac1",
        "targets": [{"path": "/dev/mapper/d1", "devno": "253:2"}],
        "devices": [
            {"name": "dm-2", "below": ["sdb", "sdc"], "dm/name": "d1"},
            {"name": "sdb", "below": [], "device/model": "ARRAY", "device/rev": "4.2"},
        ],
    }
