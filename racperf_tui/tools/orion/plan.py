"""The run on a host: the LUNs checked there, ORION found there, the ``T.lun`` file, the argv
and environment as one Invocation with every LUN a target; and ``orion -help``'s version."""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from racperf_tui.core.contract.invocation import READ, WRITE, Invocation, Target, ToolNotFound
from racperf_tui.tools.base import on_another_node, program_output
from racperf_tui.tools.orion.config import OrionConfig, orion_config
from racperf_tui.tools.orion.matrix import hard_limit_s, planned_duration_s, planned_matrix
from racperf_tui.tools.orion.oracle_home import install_hint, olr_grid_home, oratab_homes, resolve_binary
from racperf_tui.tools.orion.result import VERSION_RE
from racperf_tui.tools.orion.stream import DISKSTATS_COMPANION

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: a node's candidate homes, read there: its login's $ORACLE_HOME, /etc/oratab, olr.loc
_NODE_HOMES_SH = r"""
printf '%s\n' "${ORACLE_HOME:-}"; echo racperf-sep
cat /etc/oratab 2>/dev/null; echo racperf-sep
cat /etc/oracle/olr.loc 2>/dev/null; true
"""
#: $@: homes; prints the first whose bin/orion is an executable file
_NODE_ORION_SH = r"""
for h in "$@"; do if [ -f "$h/bin/orion" ] && [ -x "$h/bin/orion" ]; then printf '%s\n' "$h"; exit 0; fi; done
exit 1
"""
#: $@: LUNs; prints those (not under /dev) that do not exist there
_NODE_MISSING_SH = r"""
for l in "$@"; do case $l in /dev/*) ;; *) [ -e "$l" ] || [ -L "$l" ] || printf '%s\n' "$l" ;; esac; done
"""


def _node_answer(host: Host, script: str, args: list[str]) -> tuple[int, str]:
    try:
        answer = host.run_briefly(["sh", "-c", script, "racperf-orion", *args], 30.0)
    except OSError as exc:
        raise ToolNotFound(f"orion: cannot look on {host.name}: {exc}") from None
    return answer.returncode, answer.stdout


def resolve_binary_on(host: Host, cfg: OrionConfig) -> tuple[str, str | None]:
    """:func:`~racperf_tui.tools.orion.oracle_home.resolve_binary` on another node: ``orion``
    or ``oracle_home`` as paths there, else the homes that node names (its login's
    $ORACLE_HOME, /etc/oratab, olr.loc; this machine's remembered home is this machine's).
    ToolNotFound names the node."""
    if cfg.orion or cfg.oracle_home:
        home = cfg.oracle_home.rstrip("/") if cfg.oracle_home else None
        binary = cfg.orion or f"{home}/bin/orion"
        if not binary.startswith("/"):
            raise ToolNotFound(f"orion: {binary!r}: a run on {host.name} needs the absolute path there")
        status, _ = _node_answer(host, '[ -f "$1" ] && [ -x "$1" ]', [binary])
        if status != 0:
            raise ToolNotFound(f"orion: {binary} is not an executable file on {host.name}")
        if home is None and posixpath.basename(posixpath.dirname(binary)) == "bin":
            home = posixpath.dirname(posixpath.dirname(binary))
        return binary, home
    _status, text = _node_answer(host, _NODE_HOMES_SH, [])
    env_home, _, rest = text.partition("racperf-sep\n")
    oratab, _, olr = rest.partition("racperf-sep\n")
    with tempfile.TemporaryDirectory(prefix="racperf-orion-node-") as root:
        (Path(root) / "etc" / "oracle").mkdir(parents=True)
        (Path(root) / "etc" / "oratab").write_text(oratab)
        (Path(root) / "etc" / "oracle" / "olr.loc").write_text(olr)
        databases, grids = oratab_homes(Path(root))
        grid = olr_grid_home(Path(root))
    homes = [h for h in [env_home.strip().rstrip("/"), *databases, *grids, grid or ""] if h.startswith("/")]
    homes = list(dict.fromkeys(homes))
    status, found = _node_answer(host, _NODE_ORION_SH, homes) if homes else (1, "")
    if status != 0 or not found.strip():
        tried = ", ".join(homes) or "no $ORACLE_HOME, /etc/oratab or olr.loc there"
        raise ToolNotFound(f"orion: no ORACLE_HOME with bin/orion on {host.name} (tried: {tried}); {install_hint}")
    home = found.strip()
    return f"{home}/bin/orion", home


def invocation(
    config: Mapping[str, Any] | OrionConfig, run_dir: str | None = None, host: Host | None = None
) -> Invocation:
    """The run on ``host`` (this machine when None; see the module docstring): the LUN files
    and ORION are looked for there. ValueError names every problem of the config;
    ToolNotFound when no ORION is found."""
    cfg = orion_config(config)
    remote = on_another_node(host)
    if remote and host is not None:
        missing = _node_answer(host, _NODE_MISSING_SH, list(cfg.lun))[1].split()
        where = f" on {host.name}"
    else:
        missing = [lun for lun in cfg.lun if not lun.startswith("/dev/") and not os.path.lexists(lun)]
        where = ""
    if missing:
        raise ValueError(
            f"orion: LUN {', '.join(missing)} does not exist{where} "
            "(ORION opens each LUN; create the file or name a device)"
        )
    binary, home = resolve_binary_on(host, cfg) if remote and host is not None else resolve_binary(cfg)
    env: dict[str, str] = {}
    if home:
        env = {"ORACLE_HOME": home, "LD_LIBRARY_PATH": os.path.join(home, "lib")}
    access = WRITE if cfg.writes else READ
    origin = f"lun (-write {cfg.write})" if cfg.writes else "lun"
    targets = tuple(Target(lun, access, origin) for lun in cfg.lun)
    planned = planned_duration_s(cfg)
    notes = list(cfg.corrections)
    notes.append(f"planned: {len(planned_matrix(cfg))} data points, about {planned / 60:.0f} minutes")
    if cfg.writes:
        notes.append(f"-write {cfg.write}: ORION overwrites every LUN")
    return Invocation(
        argv=[binary, *cfg.orion_args()],
        env=env,
        cwd=".",
        files={f"{cfg.testname}.lun": "".join(f"{lun}\n" for lun in cfg.lun)},
        result_files=(f"{cfg.testname}_*",),
        targets=targets,
        hard_limit_s=hard_limit_s(cfg),
        notes=tuple(notes),
        companions=(DISKSTATS_COMPANION,),
        detail=cfg,
    )


def build_argv(config: Mapping[str, Any] | OrionConfig) -> list[str]:
    """The argv of :func:`invocation`."""
    return invocation(config).argv


def tool_version(argv: list[str], host: Host | None = None) -> str | None:
    """The version line of ``orion -help`` on the run's host (run with its ORACLE_HOME's
    libraries)."""
    binary = argv[0]
    env: dict[str, str] = {}
    if os.path.basename(os.path.dirname(binary)) == "bin":
        home = os.path.dirname(os.path.dirname(binary))
        # here, the ORACLE_HOME set wins; a node's environment is not ours to read
        local = not on_another_node(host)
        env["ORACLE_HOME"] = os.environ.get("ORACLE_HOME", home) if local else home
        env["LD_LIBRARY_PATH"] = os.path.join(env["ORACLE_HOME"], "lib")
    match = VERSION_RE.search(program_output([binary, "-help"], 10.0, host, env) or "")
    return f"ORION {match[1]}" if match else None
