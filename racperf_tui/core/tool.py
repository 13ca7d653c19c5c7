"""How a tool describes itself: its options and its live metrics, declared once.

From a tool's :class:`ToolOption` list come ``racperf run TOOL --set KEY=VALUE`` (checked and
converted here), ``racperf run TOOL --help`` and, in the UI, the form's fields; from its
:class:`MetricSpec` list come the labels, units and formats of the live view and the charts,
never a guess from a metric's name. :class:`ToolDescription` gives every tool the defaults.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from racperf_tui.core.events import Sample

#: option kinds: how text typed by a user becomes a config value
KINDS = ("str", "int", "float", "bool", "choice", "list", "path")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class ToolOption:
    """One config key of a tool.

    ``end`` says which end of a two-ended tool reads it ("client", "server" or "both");
    ``repeatable`` options collect every ``--set KEY=VALUE`` into a list.
    """

    name: str
    kind: str = "str"
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()
    end: str = "both"
    repeatable: bool = False

    def convert(self, text: Any) -> Any:
        """A typed value from user text (or an already typed value); ValueError names the
        option and what it expects."""
        if not isinstance(text, str):
            return text
        raw = text.strip()
        if self.kind == "bool":
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            raise ValueError(f"{self.name}: {text!r} is not true or false")
        if self.kind in ("int", "float"):
            # sizes and times with units ("1M", "2m") go on as text: the tool's own
            # validation reads them and names what is wrong
            try:
                value = float(raw)
            except ValueError:
                return raw
            if not math.isfinite(value):
                raise ValueError(f"{self.name}: {text!r} is not a finite number")
            return int(value) if self.kind == "int" and value.is_integer() else value
        if self.kind == "choice":
            for choice in self.choices:
                if raw.lower() == choice.lower():
                    return choice
            raise ValueError(f"{self.name}: {text!r} is not one of {', '.join(self.choices)}")
        if self.kind == "list":
            try:
                parsed: Any = json.loads(raw)
            except ValueError:
                parsed = None
            return parsed if isinstance(parsed, list) else [raw]
        return text

    def describe(self) -> str:
        """One help entry: ``name (kind, default X; client end): help``."""
        facts = [self.kind if self.kind != "choice" else "|".join(self.choices)]
        if self.default not in (None, "", [], ()):
            facts.append(f"default {self.default}")
        if self.end != "both":
            facts.append(f"{self.end} end")
        if self.repeatable:
            facts.append("repeatable")
        return f"{self.name} ({', '.join(facts)}): {self.help}"


@dataclass(frozen=True)
class MetricSpec:
    """A live metric: stored under ``key`` in ``stored_unit``, shown as ``label`` in ``unit``
    (``value / divisor``) with ``decimals``; metrics sharing a ``chart`` are drawn on one axis,
    so only metrics of one unit may share it."""

    key: str
    label: str
    unit: str = ""
    divisor: float = 1.0
    decimals: int = 1
    chart: str = ""

    def shown(self, value: float) -> float:
        return value / self.divisor

    def format(self, value: float | None) -> str:
        """The value as the view prints it, with its unit; "-" when unknown."""
        if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
            return "-"
        number = f"{self.shown(value):,.{self.decimals}f}"
        return f"{number} {self.unit}".rstrip()


@dataclass
class ToolDescription:
    """Defaults every tool inherits; a tool overrides what it has."""

    name: str = "tool"
    summary: str = ""
    install_hint: str = ""
    options: Sequence[ToolOption] = field(default_factory=tuple)
    metrics: Sequence[MetricSpec] = field(default_factory=tuple)
    #: options after '--' are the tool's own (fio); else only --set KEY=VALUE
    takes_raw_args: bool = False

    def option(self, name: str) -> ToolOption | None:
        return next((o for o in self.options if o.name == name), None)

    def metric(self, key: str) -> MetricSpec | None:
        return next((m for m in self.metrics if m.key == key), None)

    def settings_to_config(self, settings: Sequence[tuple[str, Any]],
                           run_level_keys: frozenset[str] = frozenset()) -> dict[str, Any]:
        """``--set`` pairs -> config values, converted by each option's kind. ValueError for an
        unknown key (naming the known ones) or a value the option does not take."""
        config: dict[str, Any] = {}
        known = {o.name for o in self.options}
        for key, value in settings:
            spec = self.option(key)
            if spec is None:
                if key in run_level_keys or not self.options:
                    config[key] = value
                    continue
                raise ValueError(f"{self.name} has no option {key!r}; its options: {', '.join(sorted(known))} "
                                 f"(see racperf run {self.name} --help)")
            converted = spec.convert(value)
            if spec.repeatable:
                config.setdefault(key, [])
                config[key].extend(converted if isinstance(converted, list) else [converted])
            else:
                config[key] = converted
        return config

    def options_help(self, width: int = 100) -> str:
        """Every option, one wrapped entry each (``racperf run TOOL --help``)."""
        lines = [f"{self.name} options (--set KEY=VALUE):"]
        for spec in self.options:
            lines += textwrap.wrap(spec.describe(), width, initial_indent="  ", subsequent_indent="      ")
        return "\n".join(lines)


_KIND_OF_ANNOTATION = {"int": "int", "float": "float", "bool": "bool", "str": "str"}


def options_from_dataclass(cls: Any, helps: Mapping[str, str], *, choices: Mapping[str, Sequence[str]] | None = None,
                           ends: Mapping[str, str] | None = None, skip: Sequence[str] = ()) -> tuple[ToolOption, ...]:
    """The options of a config dataclass: name, kind (from the field's annotation) and default
    from the field, help from ``helps`` (every field must have one: a test checks)."""
    found = []
    for item in dataclasses.fields(cls):
        if item.name in skip:
            continue
        annotation = str(item.type).replace(" ", "")
        base = annotation.split("|")[0]
        kind = "list" if base.startswith(("Sequence", "list", "tuple")) else _KIND_OF_ANNOTATION.get(base, "str")
        if choices and item.name in choices:
            kind = "choice"
        if item.default is not dataclasses.MISSING:
            default = item.default
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:
            default = None
        found.append(ToolOption(item.name, kind, default, helps.get(item.name, ""),
                                tuple((choices or {}).get(item.name, ())), (ends or {}).get(item.name, "both")))
    return tuple(found)


class StreamParser(Protocol):
    """Turns a tool's output, line by line, into Samples (stateful: one per run)."""

    def feed(self, line: str) -> list[Sample]:
        """Consume one complete output line (no trailing newline); return new Samples."""
        ...

    def finish(self) -> list[Sample]:
        """End of output: return any Samples still buffered."""
        ...


class Tool(Protocol):
    """A benchmark tool: Config -> argv, a stream parser, a result parser."""

    name: str

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        """The exact command line for `config` (validated; ValueError says what is wrong)."""
        ...

    def stream_parser(self, config: Mapping[str, Any]) -> StreamParser:
        """A fresh parser for one run's output."""
        ...

    def parse_result(self, output: str) -> dict[str, Any]:
        """The whole output of a finished run -> result dict (see each tool's docs)."""
        ...

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        """Did the run succeed? (ok, reason). Judged by the result, not only the exit status."""
        ...

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        """Wall-clock limit after which the supervisor stops the run."""
        ...


# --------------------------------------------------------------------------- two-ended tools

#: (adapted client config, notes for the user) from a client config
ClientAdapter = Callable[[Mapping[str, Any]], tuple[dict[str, Any], list[str]]]


@dataclass(frozen=True)
class PairSpec:
    """What running a tool's two ends needs to know of the tool (its module's ``PAIR``).

    The server run starts first; the client run starts once a line of the server's output
    matches ``ready_pattern`` (a named group ``port`` there gives the client the port the
    server picked). A line matching ``failure_pattern`` means the server could not listen.
    """

    #: a server output line meaning "listening: the client may start"
    ready_pattern: re.Pattern[str]
    #: a server output line meaning "could not listen" (port taken, bad address)
    failure_pattern: re.Pattern[str] | None
    #: the server's port when its config names none (checked before the start)
    default_port: int
    #: how the user fixes a server that could not listen (ends the failure message)
    failure_hint: str = "use another port"
    #: how long the server may take to say it is listening (a JVM takes longer than iperf3)
    ready_timeout_s: float = 15.0
    #: what the server is called in messages ("netserver"); "" means "the TOOL server"
    server_name: str = ""
    #: adapts the client config to what is installed (drops what the build cannot do), saying so
    adapt_client: ClientAdapter | None = None

    def adapted_client(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """(the client config to run, notes on what was changed and why)."""
        if self.adapt_client is None:
            return dict(config), []
        return self.adapt_client(config)


def metric_table(metrics: Sequence[MetricSpec]) -> Mapping[str, MetricSpec]:
    """key -> spec, for a view that formats samples."""
    return {m.key: m for m in metrics}
