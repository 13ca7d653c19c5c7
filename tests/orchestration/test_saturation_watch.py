"""A run's saturation episodes kept with it: real fio under the real supervisor on a loop
device with a real ceiling and a full queue; ``racperf runs show`` lists what was seen."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.disks.saturation import EPISODES_STREAM, episodes_text, recorded_episodes
from racperf_tui.core.remote.cluster import LOCAL
from racperf_tui.core.store import Store
from racperf_tui.orchestration.saturation_watch import load_of
from racperf_tui.orchestration.sweep import SweepPlan, plan_record
from racperf_tui.orchestration.sweep_point import sweep_point_of
from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.loopdev import needs_blkio_throttle, throttled_loop


def test_the_load_is_said_from_the_config_and_the_last_sample() -> None:
    sample = Sample(t=3.0, metrics={"read_iops": 1500.4, "write_iops": 499.6, "read_bw_kib_s": 8000.0})
    assert load_of({"iodepth": 32, "numjobs": 2}, sample) == "iodepth 32 x 2 jobs, 2,000 IOPS"
    assert load_of({"iodepth": 8}, None) == "iodepth 8 x 1 job"
    assert load_of({}, Sample(t=1.0, metrics={"read_iops": None})) == ""


def test_the_load_names_orion_s_data_point_and_the_sweep_s_point() -> None:
    """Issue 18: an episode says at what load it began: which ORION data point (as its LUNs'
    load measured it: the companion's sample), which point of a sweep."""
    orion = Sample(
        t=40.0,
        metrics={"lun_iops": 17529.0},
        extra={"data_point": 3, "data_points": 8, "small": 4, "large": 0},
    )
    assert load_of({}, orion) == "ORION data point 3 of 8: small 4, large 0, 17,529 IOPS"
    assert load_of({}, Sample(t=1.0, metrics={}, extra={"data_point": 0})) == ""  # before its first point
    assert load_of({"iodepth": 4}, None, "sweep g7 point 3 of 8") == "sweep g7 point 3 of 8, iodepth 4 x 1 job"


def test_a_sweep_s_runs_are_named_by_their_point(data_dir: Path) -> None:
    plan = SweepPlan(config={"target": "/dev/sdz"}, iodepths=(1, 2, 4), nodes=(LOCAL,), target="/dev/sdz")
    with Store.open(data_dir) as store:
        sweep = store.create_group("fio", plan_record(plan), ["local"])
        runs = [store.create_run("fio", "local", "/dev/sdz", {}, ["fio"], None, sweep) for _ in range(2)]
        plain = store.create_group("fio", {"target": "/dev/sdz"}, ["rac1"])
        other = store.create_run("fio", "rac1", "/dev/sdz", {}, ["fio"], None, plain)
        alone = store.create_run("fio", "local", "/dev/sdz", {}, ["fio"], None)
        said = [sweep_point_of(store, store.get_run(run)) for run in (*runs, other, alone)]
    assert said == [f"sweep g{sweep} point 1 of 3", f"sweep g{sweep} point 2 of 3", "", ""]


def test_the_last_record_holds_every_episode_and_bad_records_are_none() -> None:
    first = [{"device": "loop3", "level": "queueing", "reason": "r1", "since": 0.0, "until": 2.0, "load": ""}]
    both = first + [
        {"device": "loop3", "level": "saturated", "reason": "r2", "since": 2.0, "until": 9.0, "load": "iodepth 64"}
    ]
    text = json.dumps(first) + "\n" + json.dumps(both) + "\n"
    assert recorded_episodes(text) == both
    lines = episodes_text(both)
    assert lines[1].startswith("loop3 saturated from ") and lines[1].endswith(" for 7 s at iodepth 64: r2")
    assert recorded_episodes("") == [] and recorded_episodes("[not json\n") == [] and recorded_episodes("{}") == []


def _on_a_full_queue(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """racperf ARGS (fio's 4k random reads on the target) in the cgroup that caps a loop
    device at 2000 IOPS, its queue cut to 16 requests: deep enough loads fill it. What it
    did, and the loop device's name."""
    with throttled_loop(tmp_path / "disk.img", iops=2000) as ceiling:
        (Path("/sys/block") / ceiling.device.name / "queue" / "nr_requests").write_text("16")
        done = subprocess.run(
            [
                *racperf_cmd(),
                *args,
                "--target",
                ceiling.device.path,
                *("--set", "rw=randread", "--set", "bs=4k", "--set", "ioengine=libaio", "--set", "size=64m"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=ceiling.join,
        )
        return done, ceiling.device.name


@needs_fio
@needs_blkio_throttle
def test_a_run_that_fills_the_queue_keeps_its_episode(tmp_path: Path) -> None:
    data = tmp_path / "data"
    run, device = _on_a_full_queue(
        tmp_path, "run", "fio", "--data-dir", str(data), "--set", "iodepth=64", "--set", "runtime_s=8"
    )
    assert run.returncode == 0, run.stderr[-2000:]
    with Store.open(data) as store:
        [record] = store.list_runs()
        episodes = recorded_episodes(store.raw_output(record.id, EPISODES_STREAM))
    assert episodes, run.stderr[-2000:]
    full = [e for e in episodes if e["level"] == "saturated"]
    assert full and full[0]["device"] == device, episodes
    assert (
        full[0]["reason"].startswith("queue full: avgqu-sz ") and "of its limit 16 (nr_requests)" in full[0]["reason"]
    )
    assert full[0]["load"].startswith("iodepth 64 x 1 job"), full
    assert full[0]["until"] - full[0]["since"] >= 3, full
    shown = subprocess.run(
        [*racperf_cmd(), "runs", "show", str(record.id), "--data-dir", str(data)], capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    at = lines.index("saturation:")
    assert lines[at + 1].startswith(f"  {device} saturated from ") and "queue full" in lines[at + 1]
    as_json = subprocess.run(
        [*racperf_cmd(), "runs", "show", str(record.id), "--json", "--data-dir", str(data)],
        capture_output=True,
        text=True,
    )
    assert json.loads(as_json.stdout)["saturation"] == episodes


@needs_fio
@needs_blkio_throttle
def test_an_episode_during_a_sweep_names_its_point(tmp_path: Path) -> None:
    """A sweep's deep point fills the capped loop device's queue (nr_requests 16): the
    episode kept with that point's run says which point of which sweep, at which depth."""
    data = tmp_path / "data"
    sweep, _device = _on_a_full_queue(
        tmp_path, "sweep", "fio", "--data-dir", str(data), "--json", "--iodepth", "2,64", "--point-seconds", "6"
    )
    assert sweep.returncode == 0, sweep.stderr[-2000:]
    group = json.loads(sweep.stdout.splitlines()[-1])["group_id"]
    with Store.open(data) as store:
        shallow, deep = store.group_runs(group)
        episodes = recorded_episodes(store.raw_output(deep.id, EPISODES_STREAM))
    full = [e for e in episodes if e["level"] == "saturated"]
    assert full and full[0]["load"].startswith(f"sweep g{group} point 2 of 2, iodepth 64 x 1 job"), episodes
