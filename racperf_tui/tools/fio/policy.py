"""Which fio options a racperf benchmark may use: an allow list, not a deny list.

An option is accepted only when racperf knows it to be harmless for a benchmark; every other
option fio has (and every option a later fio adds) is refused with its name and the reason.
The refused ones fall into a few families, each with its reason: running programs or loading
code, starting servers or clients, writing files other than racperf's own output, deleting,
replaying logs, loading profiles, changing the system for every other user of a disk.
"""

from __future__ import annotations

import re

#: I/O engines a benchmark may use: plain system calls and the kernel's async interfaces
ALLOWED_ENGINES = frozenset(
    {"psync", "sync", "pvsync", "pvsync2", "vsync", "libaio", "io_uring", "posixaio", "mmap", "null"}
)

#: fio's own options racperf accepts; it sets --output-format and --status-interval itself
ALLOWED_TOP_LEVEL = frozenset(
    {"status-interval", "output-format", "readonly", "warnings-fatal", "max-jobs", "alloc-size"}
)

_RUNS = "runs a program"
#: why each refused top-level option is refused
TOP_LEVEL_REASONS: dict[str, str] = {
    "output": "writes fio's report to a file instead of racperf's stream (racperf keeps every report)",
    "latency-log": "writes log files outside the run's directory",
    "bandwidth-log": "writes log files outside the run's directory",
    "append-terse": "changes the report racperf reads",
    "minimal": "changes the report racperf reads",
    "terse-version": "changes the report racperf reads",
    "eta": "mixes progress text into the report racperf reads",
    "eta-interval": "mixes progress text into the report racperf reads",
    "eta-newline": "mixes progress text into the report racperf reads",
    "debug": "mixes debug text into the report racperf reads",
    "server": "starts a fio server that takes jobs from the network",
    "server-internal": "starts a fio server that takes jobs from the network",
    "daemonize": "detaches fio from racperf's supervision",
    "client": "sends jobs to remote fio servers",
    "remote-config": "loads a job file on a remote fio server",
    "trigger-file": f"{_RUNS} (the trigger command) when a file appears",
    "trigger-timeout": f"{_RUNS} (the trigger command) at a time",
    "trigger": _RUNS,
    "trigger-remote": f"{_RUNS} on a remote fio server",
    "profile": "loads a built-in profile whose own options racperf cannot check",
    "section": "runs only some sections of a job file; racperf runs what it checked, whole",
    "aux-path": "puts fio's state files outside the run's directory",
    "inflate-log": "is not a benchmark run",
    "cpuclock-test": "is not a benchmark run",
    "crctest": "is not a benchmark run",
    "memcpytest": "is not a benchmark run",
    "idle-prof": "is not a benchmark run",
    "parse-only": "is not a benchmark run",
    "merge-blktrace-only": "is not a benchmark run",
    "showcmd": "is not a benchmark run",
    "cmdhelp": "is not a benchmark run",
    "enghelp": "is not a benchmark run",
    "version": "is not a benchmark run",
    "help": "is not a benchmark run",
}

#: job options known to be harmless (fio 3.x names; aliases arrive as these names)
ALLOWED_JOB_OPTIONS = frozenset(
    """
description name wait_for filename lockfile directory filename_format unique_filename
rw bs ba bsrange bssplit bs_unaligned randrepeat randseed norandommap ignore_error rw_sequencer
ioengine iodepth iodepth_batch iodepth_batch_complete_min iodepth_batch_complete_max iodepth_low
serialize_overlap io_submit_mode size io_size filesize file_append offset offset_increment
offset_align number_ios random_generator random_distribution percentage_random allrandrepeat
nrfiles file_service_type openfiles fallocate fadvise_hint fsync fdatasync write_barrier
sync_file_range direct atomic buffered overwrite loops numjobs startdelay runtime time_based
verify_only ramp_time clocksource mem verify do_verify verify_interval verify_offset verify_pattern
verify_fatal verify_dump verify_async verify_backlog verify_backlog_batch experimental_verify
verify_state_load verify_state_save trim_percentage trim_verify_zero trim_backlog trim_backlog_batch
lockmem rwmixread rwmixwrite nice prio prioclass thinktime thinktime_spin thinktime_blocks
thinktime_blocks_type thinktime_iotime rate rate_min rate_process rate_cycle rate_ignore_thinktime
rate_iops rate_iops_min max_latency latency_target latency_window latency_percentile latency_run
invalidate sync write_hint create_serialize create_fsync create_on_open create_only allow_file_create
pre_read cpumask cpus_allowed cpus_allowed_policy numa_cpu_nodes numa_mem_policy end_fsync
fsync_on_close exitall exit_what exitall_on_error stonewall new_group thread per_job_logs
write_bw_log bwavgtime write_lat_log write_iops_log iopsavgtime log_entries log_avg_msec
log_hist_msec log_hist_coarseness write_hist_log log_max_value log_offset log_prio log_compression
log_compression_cpus log_store_compressed log_unix_epoch log_alternate_epoch
log_alternate_epoch_clock_id block_error_percentiles group_reporting stats zero_buffers
refill_buffers scramble_buffers buffer_pattern buffer_compress_percentage buffer_compress_chunk
dedupe_percentage dedupe_mode dedupe_working_set_percentage dedupe_global clat_percentiles
lat_percentiles slat_percentiles percentile_list significant_figures disk_util gtod_reduce
disable_lat disable_clat disable_slat disable_bw_measurement gtod_cpu unified_rw_reporting
continue_on_error error_dump uid gid kb_base unit_base hugepage-size flow_id flow flow_sleep
steadystate steadystate_duration steadystate_ramp_time
""".split()
)

#: engine tuning options of the allowed engines (fio --enghelp): harmless
ALLOWED_ENGINE_OPTIONS = frozenset(
    """
hipri hipri_percentage uncached nowait userspace_reap cmdprio_percentage cmdprio_class cmdprio
cmdprio_bssplit fixedbufs registerfiles sqthread_poll sqthread_poll_cpu nonvectored force_async
cmd_type thp
""".split()
)

#: options that are harmless only when switched off (a value of 0): why they are refused otherwise
OFF_ONLY_OPTIONS: dict[str, str] = {
    "unlink": "deletes the job's files",
    "unlink_each_loop": "deletes the job's files",
    "allow_mounted_write": "switches off fio's own refusal to write to a mounted device",
    "fill_device": "writes until the device or file system is full (on a database node's file "
    "system, the database stops)",
    "read_beyond_wp": "reads zoned devices beyond their write pointer",
}

#: why each refused job option is refused (options absent here and from the allow lists are
#: refused as "not known to be harmless")
JOB_REASONS: dict[str, str] = {
    "exec_prerun": f"{_RUNS} before the job",
    "exec_postrun": f"{_RUNS} after the job",
    "write_iolog": "writes an I/O log file outside the run's directory",
    "read_iolog": "replays an I/O log (its entries name the devices written)",
    "read_iolog_chunked": "replays an I/O log",
    "replay_no_stall": "replays an I/O log",
    "replay_redirect": "replays an I/O log onto a device",
    "replay_scale": "replays an I/O log",
    "replay_align": "replays an I/O log",
    "replay_time_scale": "replays an I/O log",
    "replay_skip": "replays an I/O log",
    "merge_blktrace_file": "writes a merged blktrace file",
    "merge_blktrace_scalars": "replays blktraces",
    "merge_blktrace_iters": "replays blktraces",
    "profile": "loads a built-in profile whose own options racperf cannot check",
    "opendir": "adds every file below a directory, which racperf cannot check one by one",
    "ioscheduler": "switches the disk's I/O scheduler for every user of the disk (the database too); "
    "set it yourself in /sys/block/DEV/queue/scheduler if intended",
    "cgroup": "creates and joins a cgroup (changes the system)",
    "cgroup_nodelete": "creates and joins a cgroup (changes the system)",
    "cgroup_weight": "creates and joins a cgroup (changes the system)",
    "zonemode": "zoned-device modes reset zones (destroys their data)",
    "zonesize": "zoned-device modes reset zones (destroys their data)",
    "zonecapacity": "zoned-device modes reset zones (destroys their data)",
    "zonerange": "zoned-device modes reset zones (destroys their data)",
    "zoneskip": "zoned-device modes reset zones (destroys their data)",
    "max_open_zones": "zoned-device modes reset zones (destroys their data)",
    "job_max_open_zones": "zoned-device modes reset zones (destroys their data)",
    "ignore_zone_limits": "zoned-device modes reset zones (destroys their data)",
    "zone_reset_threshold": "zoned-device modes reset zones (destroys their data)",
    "zone_reset_frequency": "zoned-device modes reset zones (destroys their data)",
    "program": f"{_RUNS} (the exec engine)",
    "arguments": f"{_RUNS} (the exec engine)",
    "device-names": "belongs to the act profile, which racperf refuses",
}

#: values of mem= / iomem= that keep buffers in memory (a ":FILE" form maps a file)
_MEM_TYPES = frozenset({"malloc", "shm", "shmhuge", "mmap", "mmaphuge", "mmapshared", "cudamalloc"})
#: log options whose value is a file-name prefix: only plain names, kept in the run's directory
LOG_PREFIX_OPTIONS = frozenset({"write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log"})
_PLAIN_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_OFF_VALUES = frozenset({"0", "false", "no", "off"})


def engine_refusal(value: str | None) -> str | None:
    """Why ``ioengine=value`` is refused, None when it is allowed."""
    engine = value or ""
    if engine in ALLOWED_ENGINES:
        return None
    if engine.strip() in ALLOWED_ENGINES:
        # fio does not strip the name: "psync " is no built-in engine, and fio dlopen()s it
        # from the library path (LD_LIBRARY_PATH, e.g. a writable $ORACLE_HOME/lib)
        return (
            f"has blanks around the engine name {engine.strip()!r}: fio would load a library "
            f"named {engine!r} from the library path"
        )
    base = engine.split(":", 1)[0]
    if "/" in engine or base == "external" or engine.endswith(".so"):
        return "loads code from a library"
    if base == "exec":
        return "runs a program"
    if base == "filedelete":
        return "deletes files"
    if base in ("sg", "io_uring_cmd", "nvme", "xnvme", "spdk"):
        return (
            "sends raw commands to the device, past the kernel's block layer "
            f"(allowed engines: {', '.join(sorted(ALLOWED_ENGINES))})"
        )
    return f"is not one of the engines racperf allows ({', '.join(sorted(ALLOWED_ENGINES))})"


def top_level_refusal(name: str, value: str | None) -> str | None:
    """Why fio's own option ``--name`` is refused, None when racperf accepts it."""
    if name == "output-format":
        if (value or "") in ("json+", "json"):
            return None
        return "changes the report racperf reads (racperf always reads json+)"
    if name in ALLOWED_TOP_LEVEL:
        return None
    return TOP_LEVEL_REASONS.get(name, "is not one of fio's options racperf knows to be harmless")


def job_option_refusal(name: str, value: str | None) -> str | None:
    """Why job option ``name=value`` is refused, None when it is allowed."""
    text = (value or "").strip()
    if name == "ioengine":
        return engine_refusal(value)
    if name in OFF_ONLY_OPTIONS:
        return None if value is not None and text.lower() in _OFF_VALUES else OFF_ONLY_OPTIONS[name]
    if name == "zonemode" and text == "none":
        return None
    if name == "mem":
        return (
            None
            if text in _MEM_TYPES
            else ("maps a file for I/O buffers (mem=TYPE:FILE writes that file); use mem=malloc, shm or mmap")
        )
    if name in LOG_PREFIX_OPTIONS:
        if value is None or text == "" or _PLAIN_NAME_RE.match(text):
            return None
        return "writes log files outside the run's directory (give a plain name; it is kept with the run)"
    if (
        name in ("directory", "filename_format")
        and value is not None
        and any(part != part.strip() for part in re.split(r"(?<!\\):", value))
    ):
        return (
            "has blanks around a path: fio keeps them (a relative path where an absolute one "
            "was meant); write the path without them"
        )
    if name == "filename" and any(part.strip() == "-" for part in re.split(r"(?<!\\):", text)):
        return "filename=- reads or writes fio's standard input/output"
    if name in ALLOWED_JOB_OPTIONS or name in ALLOWED_ENGINE_OPTIONS:
        return None
    return JOB_REASONS.get(name, "is not one of fio's options racperf knows to be harmless")


def refusal_names() -> dict[str, str]:
    """Every refused name with its reason (to name them when an abbreviation is ambiguous)."""
    return {**TOP_LEVEL_REASONS, **JOB_REASONS, **OFF_ONLY_OPTIONS}
