"""The Disks tab's `b` filter: the devices running benchmarks touch, as the runs list's
watcher finds them: fio's target in sysfs, and the devices a run's samples name (ORION's LUN
devices from its diskstats companion, CALIBRATE_IO's datafile devices), local runs only."""

from __future__ import annotations

from pathlib import Path

from textual.message_pump import MessagePump

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.ui.messages import RunsUpdate
from racperf_tui.ui.store_watcher import RunsWatch


def test_orion_and_calibrate_io_runs_name_their_devices_for_the_b_filter(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        orion = store.create_run("orion", "local", None, {"lun": ["/dev/mapper/data1"]}, ["orion"], None)
        calibrate = store.create_run("calibrate_io", "local", None, {}, ["sqlplus"], None)
        on_node = store.create_run("orion", "rac2", None, {"lun": ["/dev/sdq"]}, ["orion"], None)
        ended = store.create_run("orion", "local", None, {"lun": ["/dev/sdz"]}, ["orion"], None)
        for run_id in (orion, calibrate, on_node, ended):
            store.set_state(run_id, RunState.RUNNING)
        store.add_sample(orion, Sample(t=1.0, metrics={}, extra={"devices": ["dm-3", "sdb", "sdc"]}))
        store.add_sample(orion, Sample(t=2.0, metrics={}, extra={"phase": "running"}))  # a tick: names none
        store.add_sample(calibrate, Sample(t=1.0, metrics={}, extra={"devices": ["nvme0n1"]}))
        store.add_sample(on_node, Sample(t=1.0, metrics={}, extra={"devices": ["sdq"]}))  # rac2's names
        store.add_sample(ended, Sample(t=1.0, metrics={}, extra={"devices": ["sdz"]}))
        store.set_state(ended, RunState.SUCCEEDED)
        watch = RunsWatch(MessagePump())  # the runs panel it posts to: poll posts nothing
        update = watch.poll(store)
        assert isinstance(update, RunsUpdate)
        assert sorted(update.snapshot.devices) == ["dm-3", "nvme0n1", "sdb", "sdc"]
        # the ORION run ends: its devices leave the filter
        store.set_state(orion, RunState.STOPPED)
        update = watch.poll(store)
        assert isinstance(update, RunsUpdate) and sorted(update.snapshot.devices) == ["nvme0n1"]
