"""What a netperf build can do: its version, interim results (``-D``, builds with
``--enable-demo``) and omni output (2.5 on), asked of it here or on a node, and a config
adapted to it."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: netperf learned omni tests and output selectors in 2.5.0.
OMNI_MIN_VERSION = (2, 5, 0)


@dataclass(frozen=True)
class NetperfCapabilities:
    """What a netperf build can do."""

    version: str | None
    demo: bool
    omni: bool
    raw: str = ""

    @property
    def version_tuple(self) -> tuple[int, ...]:
        """(2, 7, 1) for "2.7.1"; () when unknown."""
        return tuple(int(x) for x in re.findall(r"\d+", self.version or ""))[:3]


@functools.lru_cache(maxsize=16)
def _detect_cached(path: str, mtime_ns: int, env_key: str) -> NetperfCapabilities:
    try:
        proc = subprocess.run(
            [path, "-D", "1", "-V"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(f"netperf: cannot run {path!r} to check its version: {exc}") from None
    return capabilities_of(proc.stdout + proc.stderr)


def capabilities_of(out: str) -> NetperfCapabilities:
    """What ``netperf -D 1 -V`` said: its version, demo (-D) support, omni."""
    match = re.search(r"Netperf version (\S+)", out)
    version = match[1] if match else None
    demo = "Demo Mode not configured" not in out
    numbers = tuple(int(x) for x in re.findall(r"\d+", version or ""))[:3]
    return NetperfCapabilities(version=version, demo=demo, omni=bool(numbers) and numbers >= OMNI_MIN_VERSION, raw=out)


def detect_capabilities_on(host: Host, netperf: str = "netperf") -> NetperfCapabilities:
    """:func:`detect_capabilities` of the netperf on another node, asked there (``-V`` touches
    no network). ValueError names the node when it is not there or cannot run."""
    try:
        answer = host.run_briefly([netperf, "-D", "1", "-V"], 10.0)
    except FileNotFoundError:
        raise ValueError(f"netperf: {netperf!r} not found on {host.name} (install netperf there)") from None
    except OSError as exc:
        raise ValueError(f"netperf: cannot run {netperf!r} on {host.name} to check its version: {exc}") from None
    return capabilities_of(answer.text)


def detect_capabilities(netperf: str = "netperf") -> NetperfCapabilities:
    """Run ``netperf -D 1 -V`` once per binary: its version, and whether it has -D (demo) and omni.

    A build without ``--enable-demo`` prints "Sorry, Demo Mode not configured into this netperf"
    when it parses ``-D``; ``-V`` then prints "Netperf version X" and exits, touching no network.
    """
    path = shutil.which(netperf) if os.sep not in netperf else netperf
    if not path or not os.path.isfile(path):
        raise ValueError(f"netperf: {netperf!r} not found (install netperf, or set the netperf path)")
    env_key = os.environ.get("RACPERF_FAKE_NETPERF_VERSION", "") + os.environ.get("RACPERF_FAKE_NETPERF_DEMO", "")
    return _detect_cached(path, os.stat(path).st_mtime_ns, env_key)


def adapt_to_capabilities(config: Mapping[str, Any], caps: NetperfCapabilities) -> tuple[dict[str, Any], list[str]]:
    """Drop what the build cannot do (-D without demo support, omni before 2.5); say so."""
    adapted = dict(config)
    notes: list[str] = []
    if adapted.get("interim_s") and not caps.demo:
        adapted["interim_s"] = None
        notes.append(
            f"this netperf ({caps.version or 'unknown version'}) was built without --enable-demo: "
            "no interim results (-D), only the final figures"
        )
    if adapted.get("omni_output") and not caps.omni:
        adapted["omni_output"] = ""
        adapted["omni_selectors"] = ()
        notes.append(
            f"this netperf ({caps.version or 'unknown version'}) predates omni output selectors "
            "(2.5): the classic output is parsed instead (no latency percentiles)"
        )
    return adapted, notes
