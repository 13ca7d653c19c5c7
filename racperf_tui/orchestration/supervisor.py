"""The run supervisor: owns one benchmark run from start to recorded end.

It loads the tool (``racperf_tui.tools.load_tool(name).TOOL``), records the exact command line
and the tool's version, starts the benchmark as a :class:`SupervisedProcess` (own process group,
behind a watchdog), turns its output into lines, lines into Samples (store first, then any live
consumer), keeps the raw output (batched), enforces the tool's hard limit, stops the group on
SIGTERM / SIGINT / SIGHUP, and finally stores the parsed result and the state judged by
``tool.succeeded``.

Detached use (what :func:`racperf_tui.orchestration.runs.launch_run` starts)::

    python -m racperf_tui.orchestration.supervisor --data-dir DIR --run-id N --detach

``--detach`` forks once more and the parent exits, so the supervisor is reparented away from
the launcher (which then never has a zombie to reap) and runs in its own session.

Optional tool attributes the supervisor honours (beyond the protocol in tools/base.py):
``TOOL.tool_version(argv, host) -> str | None`` (asked on the run's host), ``TOOL.prepare(config,
planned, host)`` (side effects on the run's host after the guard: None or the Invocation adapted
to the host), ``TOOL.install_hint`` (or module ``install_hint``),
``TOOL.merge_stderr`` (bool: feed stderr lines to the stream parser too) and
``TOOL.stop_grace_s`` (float: SIGTERM -> SIGKILL grace), ``TOOL.option_guard`` (str: what
guards its options, for the run's record of protections); and of the stream parser, ``tick()``
(called every loop, at most every 0.1 s, while the benchmark runs: Samples from the clock, for
a tool that prints nothing while it runs, like ORION). The Invocation's ``companions`` (commands
run every few seconds beside the benchmark: orchestration/companions.py) feed the same parser.
"""

from __future__ import annotations

import argparse
import codecs
import dataclasses
import json
import os
import signal
import stat
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.hosts import Host, LocalHost
from racperf_tui.core.contract.invocation import Invocation, ToolNotFound
from racperf_tui.core.disks.block_devices import block_devices_of
from racperf_tui.core.guard.devjail import jail_argv
from racperf_tui.core.guard.write_watch import WriteWatch
from racperf_tui.core.paths import run_dir, use_data_dir
from racperf_tui.core.process import detach, output_to, set_child_subreaper
from racperf_tui.core.remote.cluster import host_for, node_of_config
from racperf_tui.core.remote.ssh_target import SshError, one_line
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.core.textio.lines import LineSplitter
from racperf_tui.orchestration.companions import CompanionRunner
from racperf_tui.orchestration.node_iostat import NodeIostat
from racperf_tui.orchestration.run_conditions import CONDITIONS_STREAM, record_conditions
from racperf_tui.orchestration.run_plan import (
    JudgedRun,
    check_executable,
    install_hint,
    judge_laid_out_files,
    judge_run,
    local_kernel_net,
    takes_host,
)
from racperf_tui.orchestration.saturation_watch import SaturationWatch
from racperf_tui.orchestration.sweep_point import sweep_point_of
from racperf_tui.tools import load_tool

__all__ = ["Supervisor", "ToolNotFound", "check_executable", "install_hint", "main", "takes_host", "tool_version"]

#: raw output is written in batches: whichever comes first
RAW_FLUSH_INTERVAL_S = 0.2
RAW_FLUSH_BYTES = 64 * 1024
#: SIGTERM -> SIGKILL grace when the tool names none (fio needs a moment for its final report)
DEFAULT_STOP_GRACE_S = 10.0
#: poll granularity of the loop (signals and output wake it earlier)
TICK_S = 0.1

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: what a jailed benchmark says when the kernel refuses a write: EROFS (strerror), EACCES
KERNEL_REFUSALS = ("Read-only file system", "Permission denied")


def tool_version(tool: Any, argv: list[str], host: Host | None = None) -> str | None:
    """The version of what runs, asked on ``host`` (this machine when None):
    ``TOOL.tool_version(argv, host)`` when the tool has one, else the first line of
    ``argv[0] --version`` there (5 s limit), else None. A tool's ``tool_version(argv)`` that
    takes no host answers for this machine only, so on another node the generic question is
    asked there instead."""
    host = host or LocalHost()
    method = getattr(tool, "tool_version", None)
    try:
        if callable(method) and takes_host(method, 2):
            return method(argv, host)
        if callable(method) and isinstance(host, LocalHost):
            return method(argv)
        text = host.run_briefly([argv[0], "--version"], 5.0).text.strip()
        return text.splitlines()[0][:200] if text else None
    except Exception:  # a version is nice to have; never fail a run for it
        return None


class Supervisor:
    """Runs one recorded run (state PENDING in ``store``) to its end. Single-threaded: one
    loop reads output, feeds the parser, writes the store, watches signals and limits."""

    def __init__(
        self,
        store: Store,
        run_id: int,
        *,
        on_sample: Callable[[Sample], None] | None = None,
        handle_signals: bool = True,
        log: Callable[[str], None] | None = None,
        write_watch: WriteWatch | None = None,
        host: Host | None = None,
    ) -> None:
        """``handle_signals``: install SIGTERM/SIGINT/SIGHUP handlers for the duration of
        :meth:`run` (only possible in the main thread; ignored elsewhere).  ``write_watch``:
        the benchmark's tree is killed (SIGKILL) the moment it holds a block device open for
        writing that the watch does not list as cleared, and the run is recorded FAILED."""
        self.store = store
        self.run_id = run_id
        self.on_sample = on_sample
        self.handle_signals = handle_signals and threading.current_thread() is threading.main_thread()
        self.log = log or (lambda msg: print(f"racperf supervisor run {run_id}: {msg}", file=sys.stderr))
        self.stop_reason: str | None = None
        self.sample_count = 0
        self._wake_r: int | None = None
        self._wake_w: int | None = None
        self.write_watch = write_watch
        #: the run's safety record while it waits for the node's protections (a remote run)
        self._safety: dict[str, Any] | None = None
        #: what the run's message says beside the tool's own verdict (foreign I/O)
        self._notes: list[str] = []
        #: None: built from the run's config (its ``host_spec``: this machine when it has none)
        self.host: Host | None = host
        #: the benchmark runs in the jail (read-only mounts, Landlock): EROFS/EACCES it reports
        #: are the kernel refusing a write the guard did not clear
        self._jailed = False

    # ---- signals ---------------------------------------------------------------------------
    def request_stop(self, reason: str = "stopped by user") -> None:
        """Ask the loop to stop the benchmark (SIGTERM, then SIGKILL after grace). Safe from
        a signal handler or another thread."""
        if self.stop_reason is None:
            self.stop_reason = reason
        if self._wake_w is not None:
            try:
                os.write(self._wake_w, b"s")
            except OSError:
                pass

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.request_stop(f"stopped by {signal.Signals(signum).name}")

    # ---- the run ---------------------------------------------------------------------------
    def run(self) -> RunRecord:
        """Execute the run; always leaves it in a finished state and returns its record."""
        previous: dict[int, Any] = {}
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        if self.handle_signals:
            for sig in _STOP_SIGNALS:
                previous[sig] = signal.signal(sig, self._on_signal)
        try:
            self._run()
        except BaseException as exc:  # record why, whatever happened, then re-raise
            self.log("crashed:\n" + traceback.format_exc())
            try:
                self.store.set_state(
                    self.run_id, RunState.FAILED, message=f"supervisor error: {type(exc).__name__}: {exc}"
                )
            except Exception:
                pass
            if not isinstance(exc, Exception):
                raise
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = None
        return self.store.get_run(self.run_id)

    def _run(self) -> None:

        record = self.store.get_run(self.run_id)
        module = load_tool(record.tool)
        tool = module.TOOL
        config = record.config
        try:
            directory = run_dir(self.store.path.parent, self.run_id)
            if self.host is None:
                self.host = host_for(node_of_config(config))
            judged = judge_run(module, record.tool, config, str(directory), self.host)
            judged = self._prepared(tool, record.tool, config, judged)
            if isinstance(self.host, LocalHost):
                judged = judge_laid_out_files(judged)
            argv, write_watch, protections = self._protections(judged, directory, tool)
            self._record_plan(judged, directory, protections)
        except SshError as exc:  # the node cannot be reached or used: which, and why
            where = self.host.name if self.host is not None else "its node"
            self.store.set_state(self.run_id, RunState.FAILED, message=f"node {where}: {one_line(exc)}")
            return
        except (ValueError, OSError) as exc:
            self.store.set_state(self.run_id, RunState.FAILED, message=str(exc))
            return
        planned = judged.invocation
        version = self._tool_version(tool, list(planned.argv))
        self.store.set_argv(self.run_id, argv, version)
        hard_limit_s = float(planned.hard_limit_s if planned.hard_limit_s is not None else tool.hard_limit_s(config))
        stop_grace_s = float(getattr(tool, "stop_grace_s", DEFAULT_STOP_GRACE_S))
        merge_stderr = bool(getattr(tool, "merge_stderr", False))
        parser = tool.stream_parser(config)
        # a tool that is silent while it runs (ORION) reports progress from the clock
        tick = getattr(parser, "tick", None)
        tick = tick if callable(tick) else None
        if self.stop_reason is not None:  # a signal before anything started
            self.store.set_state(self.run_id, RunState.STOPPED, message=self.stop_reason)
            return

        try:
            host = self._on_host()
            proc = host.start(
                planned,
                directory,
                merge_stderr=merge_stderr,
                write_watch=write_watch,
                argv=argv,
                judged=judged.guard.files,
            )
        except OSError as exc:
            self.store.set_state(self.run_id, RunState.FAILED, message=f"cannot start {argv[0]}: {exc}")
            return
        hard_limit_hit = False
        killed_for_writing = False
        companions = CompanionRunner(
            self.host,
            planned,
            directory,
            parser,
            write_watch=write_watch,
            record=lambda stream, text: self.store.add_raw(self.run_id, text, stream),
            log=self.log,
        )
        saturation = self._saturation_watch(planned, config)
        node_iostat: NodeIostat | None = None
        try:
            self.store.set_benchmark_pgid(self.run_id, proc.pgid)
            self.store.set_state(self.run_id, RunState.RUNNING)
            started = time.monotonic()
            # asked once the benchmark started, so a run group's nodes start no later for it
            conditions = self._record_conditions(planned, version)
            node_iostat = self._node_iostat(planned, directory, conditions)
            splitters = {"stdout": LineSplitter(), "stderr": LineSplitter()}
            decoders = {name: codecs.getincrementaldecoder("utf-8")(errors="replace") for name in splitters}
            raw_pending: dict[str, list[str]] = {"stdout": [], "stderr": []}
            raw_bytes = 0
            last_flush = time.monotonic()
            stderr_tail: deque[str] = deque(maxlen=5)
            kernel_refusals: list[str] = []
            parse_errors = 0

            def flush_raw() -> None:
                nonlocal raw_bytes, last_flush
                for name, parts in raw_pending.items():
                    if parts:
                        self.store.add_raw(self.run_id, "".join(parts), name)
                        parts.clear()
                raw_bytes = 0
                last_flush = time.monotonic()

            def handle_line(stream: str, text: str) -> None:
                nonlocal parse_errors
                if stream == "stderr" and text.strip():
                    stderr_tail.append(text.strip())
                # a tool whose stderr is merged (ORION) says it on stdout
                said_by_tool = stream == "stderr" or merge_stderr
                if said_by_tool and self._jailed and len(kernel_refusals) < 3:
                    if any(words in text for words in KERNEL_REFUSALS):
                        kernel_refusals.append(text.strip())
                if stream == "stderr" and not merge_stderr:
                    return
                try:
                    samples = parser.feed(text)
                except Exception:
                    parse_errors += 1
                    if parse_errors <= 3:
                        self.log(f"stream parser failed on a line:\n{traceback.format_exc()}")
                    return
                self._emit(samples)
                if saturation is not None and samples:
                    saturation.saw(samples[-1])

            while not proc.finished:
                chunks = proc.read(TICK_S, extra_fds=(self._wake_r,) if self._wake_r is not None else ())
                for stream, chunk in chunks:
                    if chunk:
                        raw_pending[stream].append(decoders[stream].decode(chunk))
                        raw_bytes += len(chunk)
                        lines = splitters[stream].feed(chunk)
                    else:
                        raw_pending[stream].append(decoders[stream].decode(b"", final=True))
                        lines = splitters[stream].finish()
                    for line in lines:
                        handle_line(stream, line.text)
                self._drain_wake()
                companion_samples = companions.poll()
                self._emit(companion_samples)
                if saturation is not None:  # ORION's data point as its LUNs' load measures it
                    saturation.heard(companion_samples)
                    saturation.poll()
                if node_iostat is not None:
                    node_iostat.poll()
                if tick is not None:
                    try:
                        self._emit(tick())
                    except Exception:
                        parse_errors += 1
                        if parse_errors <= 3:
                            self.log(f"stream parser failed on a tick:\n{traceback.format_exc()}")
                if raw_bytes >= RAW_FLUSH_BYTES or (
                    raw_bytes and time.monotonic() - last_flush >= RAW_FLUSH_INTERVAL_S
                ):
                    flush_raw()
                if self.stop_reason is not None and not proc.stop_requested:
                    self.log(f"{self.stop_reason}: SIGTERM to process group {proc.pgid}")
                    proc.stop(stop_grace_s)
                if not proc.stop_requested and time.monotonic() - started > hard_limit_s:
                    hard_limit_hit = True
                    self.log(f"hard limit {hard_limit_s:g} s reached: stopping")
                    proc.stop(stop_grace_s)
                proc.tick()
                self._record_node_protections(proc)
                if proc.violations and not killed_for_writing:
                    killed_for_writing = True
                    self.log(f"killed: {proc.violations[0]}: SIGKILL to the benchmark's tree")
            for name, splitter in splitters.items():
                raw_pending[name].append(decoders[name].decode(b"", final=True))
                for line in splitter.finish():
                    handle_line(name, line.text)
            try:
                self._emit(parser.finish())
            except Exception:
                self.log(f"stream parser failed at the end:\n{traceback.format_exc()}")
            flush_raw()
            if saturation is not None:
                saturation.flush()
            exit_status = proc.reap()
            self._record_node_protections(proc, final=True)
        finally:
            companions.close()
            if node_iostat is not None:
                node_iostat.close()
            if proc.pid is not None and proc.returncode is None:
                proc.kill()
                proc.reap()
            proc.close()

        # a lost link: the node's watchdog ends the benchmark; what was recorded stays
        lost_link = bool(getattr(proc, "link_lost", False))
        if lost_link:
            self.log(f"lost link to {host.name}")
        files = {} if lost_link else self._collect_result_files(planned, directory)
        if saturation is not None and saturation.foreign is not None and saturation.foreign.note:
            self._notes.append(saturation.foreign.note)
        self._finish(
            tool,
            exit_status,
            hard_limit_s if hard_limit_hit else None,
            list(stderr_tail),
            [str(violation) for violation in proc.violations],
            files,
            lost_link_to=host.name if lost_link else None,
            lost_link_since=_last_word(self.store.get_run(self.run_id), self.store.last_sample(self.run_id))
            if lost_link
            else "",
            kernel_refusals=kernel_refusals,
            measured_warnings=_measured_warnings(parser, self.log),
            watchdog_stop=None
            if lost_link
            else _watchdog_stop(proc, host.name, self.store.get_run(self.run_id).started_at),
        )

    def _saturation_watch(self, planned: Invocation, config: dict[str, Any]) -> SaturationWatch | None:
        """The run's block devices judged while it runs (a local run with targets): its
        queueing and saturated episodes go to its record (orchestration/saturation_watch.py)."""
        if not isinstance(self.host, LocalHost) or not planned.targets:
            return None
        reached = [block_devices_of(target.path) for target in planned.targets]
        devices = sorted({name for names in reached for name in names})
        if not devices:
            return None
        try:
            return SaturationWatch(
                devices,
                config,
                lambda stream, text: self.store.add_raw(self.run_id, text, stream),
                # the first target's own device: where the benchmark's I/O lands
                target_device=reached[0][0] if reached[0] else "",
                point=sweep_point_of(self.store, self.store.get_run(self.run_id)),
            )
        except OSError as exc:  # no /proc/diskstats to read: the run goes on without
            self.log(f"no saturation watch: {exc}")
            return None

    def _record_conditions(self, planned: Invocation, version: str | None) -> dict[str, Any]:
        """The kernel, the devices under the targets and their sysfs facts, asked of the run's
        host and kept with the run (orchestration/run_conditions.py): what a report says."""
        conditions = record_conditions(self._on_host(), [t.path for t in planned.targets], version)
        self.store.add_raw(self.run_id, json.dumps(conditions), CONDITIONS_STREAM)
        return conditions

    def _node_iostat(self, planned: Invocation, directory: Path, conditions: dict[str, Any]) -> NodeIostat | None:
        """A run on another node: its devices' iostat recorded a second at a time by a loop on
        the node (orchestration/node_iostat.py), as a local run's saturation watch records it."""
        if isinstance(self.host, LocalHost) or not planned.targets:
            return None
        devices = [str(device["name"]) for device in conditions.get("devices", []) if device.get("name")]
        if not devices:
            return None
        return NodeIostat(
            self._on_host(),
            directory,
            devices,
            lambda stream, text: self.store.add_raw(self.run_id, text, stream),
            log=self.log,
        )

    def _on_host(self) -> Host:
        assert self.host is not None, "the host is known once the run is planned"
        return self.host

    def _tool_version(self, tool: Any, argv: list[str]) -> str | None:
        """The version of what runs, asked where the run runs (:func:`tool_version`)."""
        return tool_version(tool, argv, self.host)

    def _collect_result_files(self, planned: Invocation, directory: Path) -> dict[str, str]:
        """The result files the run wrote, kept in the store (raw output ``result:NAME``)."""
        if not planned.result_files:
            return {}
        try:
            files = self._on_host().fetch_files(directory, planned)
        except OSError as exc:
            self.log(f"could not collect the result files: {exc}")
            return {}
        for name, text in files.items():
            self.store.add_raw(self.run_id, text, f"result:{name}")
        return files

    def _protections(
        self, judged: JudgedRun, directory: Path, tool: Any = None
    ) -> tuple[list[str], WriteWatch | None, list[str]]:
        """The kernel's net under the guard, for a run that touches storage (has targets):
        the jail (every mount read-only and nodev but the cleared write targets and the run's
        directory, a private /dev holding only the cleared device nodes, Landlock on top) when
        the kernel and our privileges allow it (:func:`local_kernel_net`), and the write watch
        (the tree killed the moment it holds an uncleared block device open for writing).
        Returns (argv, watch, what is active and missing, said in words for the run's record)."""
        argv = list(judged.invocation.argv)
        if not judged.invocation.targets:
            return argv, self.write_watch, []
        nodes = list(judged.guard.device_nodes)
        # what guards the tool's options is the tool's to say (fio: fio's own reading + allow list)
        option_guard = getattr(tool, "option_guard", None)
        protections = ([str(option_guard)] if option_guard else []) + [
            "every target checked by the write guard (mounts, swap, holders, open files, signatures)"
        ]
        if not isinstance(self.host, LocalHost):
            # another node: its own net (core/remote/node_net.py) jails and watches there; what it
            # reports is recorded once it runs (_record_node_protections). A watch here only
            # asks the node's host for that net; this machine's devices are not the node's
            protections.append("write watch and device jail: the node's own, as it reports them")
            return argv, self.write_watch or WriteWatch(set()), protections
        local = local_kernel_net(judged, directory)
        if local.net.jailed:
            argv = jail_argv(argv, nodes, local.writable, judged.guard.files)
            self._jailed = True
        protections += local.net.active + local.net.missing + local.net.notes
        for missing in local.net.missing:
            self.log(missing)
        cleared = set()
        for node in nodes:
            try:
                st = os.stat(node)
            except OSError:
                continue
            if stat.S_ISBLK(st.st_mode):
                cleared.add((os.major(st.st_rdev), os.minor(st.st_rdev)))
        watch = self.write_watch or WriteWatch(cleared)
        protections.append("write watch: the run is killed if it opens an uncleared block device for writing")
        return argv, watch, protections

    def _prepared(self, tool: Any, tool_name: str, config: dict[str, Any], judged: JudgedRun) -> JudgedRun:
        """After the guard: the tool's own preparation on the run's host,
        ``prepare(config, planned, host)``; it may hand back the Invocation adapted to what the
        host has (a build's options), never with other targets than the guard judged. A
        ``prepare(config, planned)`` of a tool written before hosts were passed prepares this
        machine: it runs for a local run and refuses a run on another node, saying why."""
        prepare = getattr(tool, "prepare", None)
        if not callable(prepare):
            return judged
        host = self._on_host()
        if takes_host(prepare, 3):
            adapted = prepare(config, judged.invocation, host)
        elif isinstance(host, LocalHost):
            adapted = prepare(config, judged.invocation)
        else:
            raise ValueError(
                f"{tool_name}: its prepare(config, planned) takes no host, so it would prepare this machine, "
                f"not {host.name}; the tool must take prepare(config, planned, host) to run on another node "
                "(docs/ARCHITECTURE.md, How to add a tool)"
            )
        if not isinstance(adapted, Invocation) or adapted is judged.invocation:
            return judged
        if tuple(adapted.targets) != tuple(judged.invocation.targets):
            raise ValueError(
                f"{tool_name}: its prepare changed the targets the write guard judged; refused "
                "(prepare may adapt the command to the host, never what it reads or writes)"
            )
        return dataclasses.replace(judged, invocation=adapted)

    def _record_plan(self, judged: JudgedRun, directory: Path, protections: list[str]) -> None:
        """The Invocation's files in the run's directory on its host, and the record of what
        was planned and which protections are active (on another node: recorded once the
        node's own net reports them, :meth:`_record_node_protections`)."""
        self._on_host().put_files(directory, judged.invocation.files)
        for name, text in judged.invocation.files.items():
            self.store.add_raw(self.run_id, text, f"file:{name}")
        guard = judged.guard
        self._safety = {
            "targets": [{"path": t.path, "access": t.access, "origin": t.origin} for t in judged.invocation.targets],
            "overridden": [{"path": t.path, "reasons": v.reasons} for t, v in guard.overridden],
            "device_nodes": list(guard.device_nodes),
            "protections": protections,
        }
        if not judged.invocation.targets:
            self._safety = None
        elif isinstance(self.host, LocalHost):
            self.store.add_raw(self.run_id, json.dumps(self._safety), "safety")
            self._safety = None
        for target, verdict in guard.overridden:
            self.log(f"write guard overridden for {target.path}: {'; '.join(verdict.reasons)}")

    def _record_node_protections(self, proc: Any, final: bool = False) -> None:
        """A run on another node: the protections in force there are what its net said
        (RemoteProcess.net, core/remote/node_net.py), not this machine's; recorded once they are known
        (or at the end, saying the node never reported them)."""
        net = getattr(proc, "net", None)
        reported = list(net.protections) if net is not None else []
        if any(p.startswith("read-only mounts on the node") for p in reported):
            self._jailed = True  # the node's EROFS/EACCES are the kernel refusing, as here
        if self._safety is None:
            return
        if not reported and not final:
            return
        where = getattr(self.host, "name", "the node")
        kept = [
            f"{p} on {where}" if p.startswith("every target checked") else p
            for p in self._safety["protections"]
            if not p.startswith(("device jail", "write watch", "read-only mounts", "Landlock", "execution"))
        ]
        if not reported:
            reported = [f"the node's write watch and device jail did not report from {where} (not active)"]
        self._safety["protections"] = kept + [f"{p} ({where})" for p in reported]
        self.store.add_raw(self.run_id, json.dumps(self._safety), "safety")
        self._safety = None

    def _emit(self, samples: list[Sample]) -> None:
        for sample in samples:
            self.store.add_sample(self.run_id, sample)
            self.sample_count += 1
            if self.on_sample is not None:
                try:
                    self.on_sample(sample)
                except OSError:
                    # `racperf run ... | head` (EPIPE), a terminal that hung up (EIO), a full
                    # disk: nobody can read any more; end the run cleanly, the store keeps all
                    self.on_sample = None
                    self.request_stop("stopped: the output consumer went away")
                except Exception:
                    self.log(f"live consumer failed:\n{traceback.format_exc()}")

    def _drain_wake(self) -> None:
        assert self._wake_r is not None
        try:
            while os.read(self._wake_r, 64):
                pass
        except BlockingIOError:
            pass

    def _finish(
        self,
        tool: Any,
        exit_status: int,
        hard_limit_s: float | None,
        stderr_tail: list[str],
        violations: list[str] | None = None,
        files: dict[str, str] | None = None,
        lost_link_to: str | None = None,
        lost_link_since: str = "",
        kernel_refusals: list[str] | None = None,
        measured_warnings: list[str] | None = None,
        watchdog_stop: str | None = None,
    ) -> None:
        output = self.store.raw_output(self.run_id, "stdout")
        result: dict[str, Any] | None = None
        parse_problem: str | None = None
        try:
            # a tool whose result is in files it wrote (ORION) reads them with its output
            with_files = getattr(tool, "parse_result_files", None)
            result = with_files(output, files or {}) if callable(with_files) else tool.parse_result(output)
        except Exception as exc:  # a run without a parsable result is still recorded
            parse_problem = f"no result: {exc}"
        if result is not None:
            if measured_warnings:
                result.setdefault("warnings", []).extend(measured_warnings)
            self.store.set_result(self.run_id, result)
        if violations:
            # first: a stop or a limit that came meanwhile is not why this run ended
            state, message = RunState.FAILED, "killed: " + "; ".join(dict.fromkeys(violations))
        elif lost_link_to is not None:
            # before a stop: a stop that could not reach the node did not end the run
            state, message = (
                RunState.FAILED,
                f"lost link to {lost_link_to}{lost_link_since}: its benchmark is ended there by the watchdog; "
                "the samples up to the loss are kept",
            )
            if self.stop_reason is not None:
                message = f"{self.stop_reason}; {message}"
        elif watchdog_stop is not None:
            # the link came back after the node's watchdog ended the benchmark: its signal
            # ("status -15; Terminated") is not the reason, the lost link is
            state, message = RunState.FAILED, watchdog_stop
        elif self.stop_reason is not None:
            state, message = RunState.STOPPED, self.stop_reason
        elif hard_limit_s is not None:
            state, message = RunState.FAILED, f"hard limit of {hard_limit_s:g} s reached; stopped"
        else:
            try:
                ok, message = tool.succeeded(result, exit_status)
            except Exception as exc:
                ok, message = False, f"cannot judge the result: {exc}"
            state = RunState.SUCCEEDED if ok else RunState.FAILED
            if not ok and parse_problem and parse_problem not in (message or ""):
                message = f"{message}; {parse_problem}" if message else parse_problem
        if lost_link_to is not None or watchdog_stop is not None:
            pass  # the link is why, whatever the tool said last
        elif state is RunState.FAILED and result is None and stderr_tail and not violations:
            # no report at all: the tool's own last words are the reason, so they come first
            # ("iperf3: error - unable to connect to server: Connection refused (...)")
            message = f"{stderr_tail[-1]} ({message})" if message else stderr_tail[-1]
        elif state is not RunState.SUCCEEDED and stderr_tail and not violations:
            message = f"{message}; stderr: {stderr_tail[-1]}" if message else f"stderr: {stderr_tail[-1]}"
        said = list(kernel_refusals or [])
        if self._jailed and message and any(words in message for words in KERNEL_REFUSALS):
            said.append(message)
        if said and state is not RunState.SUCCEEDED:
            # what was judged and what the benchmark did differ: say so first, the kernel's
            # words included (EROFS from the read-only mounts, EACCES from nodev or Landlock)
            refused = (
                "the kernel refused a write the write guard did not clear (read-only mounts, nodev, "
                f"Landlock): {said[0]}"
            )
            message = refused if message == said[0] else f"{refused}; {message}" if message else refused
        if self._notes:
            # what the run saw beside its own result (foreign I/O on its LUN)
            message = "; ".join([*([message] if message else []), *self._notes])
        if measured_warnings:
            # a depressed result says why in the runs list too, not only in its warnings
            warned = f"{len(measured_warnings)} warning(s) from what the disks saw: {measured_warnings[0]}"
            message = f"{message}; {warned}" if message else warned
        self.store.set_state(self.run_id, state, exit_status=exit_status, message=message)


def _measured_warnings(parser: Any, log: Callable[[str], None]) -> list[str]:
    """What a stream parser measured beside the tool's output that its result must carry
    (``result_warnings()``: ORION's foreign load on its LUNs); none for a parser without."""
    found = getattr(parser, "result_warnings", None)
    if not callable(found):
        return []
    try:
        return [str(warning) for warning in found()]
    except Exception:
        log(f"stream parser failed on its warnings:\n{traceback.format_exc()}")
        return []


def _last_word(run: RunRecord, last: tuple[int, Sample] | None) -> str:
    """When a node whose link was lost was last heard of: its newest sample's time (the loss
    is seen only once the connection's keepalives give up, up to 15 s later)."""
    if last is None:
        return " before its first sample"
    at = run.started_at + last[1].t
    return f" after {time.strftime('%H:%M:%S', time.localtime(at))} (its last sample, {last[1].t:.0f} s into the run)"


def _watchdog_stop(proc: Any, node: str, started_at: float) -> str | None:
    """Why the run ended when the node's watchdog stopped it for want of heartbeats (the link
    was lost, then came back): when, by the node's clock, and how far into the run."""
    at = getattr(proc, "watchdog_stopped_at", None)
    if at is None:
        return None
    deadline = float(getattr(proc, "watchdog_deadline_s", 0.0))
    into = at - started_at
    when = time.strftime("%H:%M:%S", time.localtime(at)) + (f", {into:.0f} s into the run" if into >= 0 else "")
    return (
        f"lost link to {node}: no heartbeat for {deadline:g} s, so the node's watchdog stopped the "
        f"benchmark at {when} (the node's clock); the samples up to then are kept"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m racperf_tui.orchestration.supervisor``."""
    parser = argparse.ArgumentParser(
        prog="python -m racperf_tui.orchestration.supervisor", description="Supervise one recorded racperf run."
    )
    parser.add_argument("--data-dir", required=True, help="the store's directory")
    parser.add_argument("--run-id", required=True, type=int, help="the PENDING run to execute")
    parser.add_argument(
        "--detach", action="store_true", help="fork into the background; print the supervisor pid on stdout"
    )
    parser.add_argument("--log", default=None, help="append diagnostics to this file (detached)")
    parser.add_argument(
        "--write-watch",
        action="store_true",
        help="kill the benchmark if it opens for writing a block device not --cleared",
    )
    parser.add_argument(
        "--cleared",
        action="append",
        default=[],
        metavar="MAJ:MIN",
        help="a block device the write guard cleared (repeatable; implies --write-watch)",
    )
    args = parser.parse_args(argv)
    # the run's data dir is this process's: its known_hosts (the key the UI accepted), settings
    use_data_dir(args.data_dir)
    cleared = []
    for text in args.cleared:
        major, _, minor = text.partition(":")
        if not (major.isdigit() and minor.isdigit()):
            parser.error(f"--cleared {text!r}: expected MAJOR:MINOR, e.g. 7:5")
        cleared.append((int(major), int(minor)))
    write_watch = WriteWatch(cleared) if args.write_watch or cleared else None
    if args.detach:
        detach()
    output_to(args.log, args.detach)
    # orphans of the benchmark come to us, die with its group and are reaped by us
    set_child_subreaper()
    with Store.open(Path(args.data_dir)) as store:
        store.set_supervisor_pid(args.run_id, os.getpid())
        record = Supervisor(store, args.run_id, write_watch=write_watch).run()
    return 0 if record.state is RunState.SUCCEEDED else 1


if __name__ == "__main__":
    raise SystemExit(main())
