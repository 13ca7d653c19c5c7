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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.units import LARGER_UNIT

#: the option that says which end of a two-ended tool a config runs (ToolOption.end)
ROLE_OPTION = "role"


def is_pair_end(config: Mapping[str, Any]) -> bool:
    """Whether a run's config may be an end of a recorded pair (orchestration/pair_runs): a
    client that names its server run (``peer_run_id``), or a server (whose client names it;
    a lone server run has none)."""
    role = config.get(ROLE_OPTION)
    return role == "server" or (role == "client" and bool(config.get("peer_run_id")))


#: option kinds: how text typed by a user becomes a config value. "target" is a path the
#: tool reads or writes (a file, a directory or a device: a form suggests the devices racperf
#: sees); "path" any other path (a program, a home); "size" (256m, 8k; the tool reads the
#: unit), "count" (a whole number: disks, streams, I/Os, a port, bytes without a unit),
#: "duration" (seconds, milliseconds for a name ending _ms), "percent" (0 to 100) are checked
#: (CHECKED_KINDS); a registered tool declares one of them for every such value
#: (tests/core/contract/test_option_kinds.py walks every tool's options)
KINDS = ("str", "int", "float", "bool", "choice", "list", "path", "target", "size", "count", "duration", "percent")
#: what a tool does with the path an option names (ToolOption.access); every option naming a
#: path declares one (tests/core/contract/test_option_access.py walks every tool's options):
#: READS: only read; GUARDED: read or written as the tool's own Invocation targets say (fio's
#: target, ORION's LUNs); WRITES: created, written or truncated, judged by the write guard as
#: a write target whatever the tool plans (orchestration/run_plan.py); RUNS: a program run,
#: vetted before anything runs (core/guard/program_vetting.py); HOME: an Oracle home whose
#: bin/ and lib/ are run, vetted the same way
READS, GUARDED, WRITES, RUNS, HOME = "read", "guarded", "write", "run", "home"
ACCESSES = (READS, GUARDED, WRITES, RUNS, HOME)
_TRUE = {"1", "true", "yes", "on"}
#: the kinds whose values are checked (ToolOption.check), beyond a number's conversion
CHECKED_KINDS = frozenset({"size", "count", "duration", "percent", "path"})
#: a size: a number with an optional unit (k, m, g, t, p; KiB, MB...), or a percentage
_SIZE = re.compile(r"^\d+(\.\d+)?\s*([kmgtp]i?b?|b)?$|^\d+(\.\d+)?%$", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _number(value: Any) -> float | None:
    """A finite number from a number or its text; None otherwise."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


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
    #: False: ``--set`` only, no field in the form (fio's ``destructive``: a form overrides
    #: the write guard by the typed device name; ``custom``: set by a preset)
    in_form: bool = True
    #: what the tool does with the path this option names (ACCESSES); "" for no path; a
    #: "target" option is GUARDED unless it says otherwise
    access: str = ""
    #: what a count is of where its kind does not say (ORION's size_small: "KB"): its
    #: message names it ("not a whole number of KB")
    unit: str = ""

    def __post_init__(self) -> None:
        if self.kind == "target" and not self.access:
            object.__setattr__(self, "access", GUARDED)
        if self.access and self.access not in ACCESSES:
            raise ValueError(f"option {self.name}: access {self.access!r} is not one of {', '.join(ACCESSES)}")

    def check(self, value: Any) -> str:
        """What is wrong with ``value`` for this option's kind (sizes, counts, durations,
        percentages, paths), "" when nothing: the form flags it, a start refuses it, for every
        tool from its declared kinds."""
        if value is None or value == "" or self.kind not in CHECKED_KINDS:
            return ""
        if self.kind == "size":
            parts = str(value).replace(":", ",").split(",")
            if all(_SIZE.match(part.strip()) for part in parts if part.strip()) and any(p.strip() for p in parts):
                return ""
            return f"{self.name}: {value!r} is not a size like 256m, 8k, 1g or 10%"
        if self.kind == "path":
            text = str(value)
            return f"{self.name}: {value!r} is not a path (a control character in it)" if _CONTROL.search(text) else ""
        number = _number(value)
        unit = "milliseconds" if self.name.endswith("_ms") else "seconds"
        if number is None:
            whole = f"a whole number of {self.unit}" if self.unit else "a whole number"
            what = {"count": whole, "duration": f"a number of {unit}", "percent": "a percentage"}[self.kind]
            return f"{self.name}: {value!r} is not {what}"
        if self.kind == "count" and (number < 0 or not float(number).is_integer()):
            of = f" of {self.unit}" if self.unit else ""
            return f"{self.name}: {value!r} is not a whole number{of}, 0 or more"
        if self.kind == "duration" and number < 0:
            return f"{self.name}: {value!r} is not a duration ({unit}, 0 or more)"
        if self.kind == "percent" and not 0 <= number <= 100:
            return f"{self.name}: {value!r} is not a percentage (0 to 100)"
        return ""

    def convert(self, text: Any) -> Any:
        """A typed value from user text (or an already typed value); ValueError names the
        option and what it expects (its kind's :meth:`check` included)."""
        value = self._converted(text)
        problem = self.check(value)
        if problem:
            raise ValueError(problem)
        return value

    def _converted(self, text: Any) -> Any:
        if not isinstance(text, str):
            return text
        raw = text.strip()
        if self.kind in ("count", "duration", "percent"):
            number = _number(raw)
            if number is None:
                return raw  # check() names it
            return int(number) if float(number).is_integer() else number
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
    #: the key of the same figure in another unit (the probe's MiB/s beside its Mbit/s): no
    #: sparkline or chart of its own while that one is there
    twin_of: str = ""
    #: what the figure measures where a view compares tools: "throughput" (a rate unit),
    #: "latency" (a time unit), "transaction_rate" (per second: 1000 / it is a latency
    #: in ms where no latency is given), or "" (nothing comparable)
    quantity: str = ""
    #: which way is better where runs are compared: "higher", "lower", or "none" (a figure
    #: that is neither: elapsed time); "" derives it from ``quantity`` and ``unit``
    better: str = ""

    @property
    def direction(self) -> str:
        """ "higher", "lower" or "" (no better way): ``better`` when declared, else a rate is
        better higher and a latency lower, read from the declared quantity or unit."""
        if self.better:
            return "" if self.better == "none" else self.better
        if self.quantity in ("throughput", "transaction_rate") or self.unit in _RATE_UNITS:
            return "higher"
        if self.quantity == "latency" or self.unit in _LATENCY_UNITS:
            return "lower"
        return ""

    def shown(self, value: float) -> float:
        return value / self.divisor

    def number(self, value: Any) -> str:
        """The value in its unit without the unit (a table column names it once); text as it
        is, "-" when absent."""
        if isinstance(value, str):
            return value
        if not _is_number(value):
            return "-"
        if isinstance(value, int) and self.divisor == 1:
            return str(value)  # a count stays a count
        return f"{self.shown(value):.{self.decimals}f}"

    @property
    def heading(self) -> str:
        """A column heading: the label with its unit."""
        return f"{self.label} {self.unit}".rstrip() if self.unit and self.unit not in self.label else self.label

    def format(self, value: float | None) -> str:
        """The value as the view prints it, with its unit; "-" when unknown."""
        if not _is_number(value):
            return "-"
        number = f"{self.shown(value):,.{self.decimals}f}"  # type: ignore[arg-type]
        return f"{number} {self.unit}".rstrip()

    def compact(self, value: float | None, width: int = 11) -> str:
        """The value in at most about ``width`` cells (the runs list's figure column): a rate
        of 1000 Mbit/s and more in Gbit/s (the next unit of the declared one, never a guess
        from the key), large counts with k / M."""
        if not _is_number(value):
            return "-"
        shown, unit = self.shown(value), self.unit  # type: ignore[arg-type]
        while unit in LARGER_UNIT and abs(shown) >= LARGER_UNIT[unit][1]:
            unit, factor = LARGER_UNIT[unit]
            shown /= factor
        magnitude = abs(shown)
        if magnitude >= 10_000_000:
            scaled, suffix = shown / 1_000_000, "M"
        elif magnitude >= 10_000:
            scaled, suffix = shown / 1_000, "k"
        else:
            scaled, suffix = shown, ""
        if suffix or unit != self.unit:
            decimals = 0 if abs(scaled) >= 99.95 else 1
        else:
            decimals = 0 if magnitude >= 100 or float(shown).is_integer() else self.decimals
        text = f"{scaled:.{decimals}f}{suffix} {unit}".rstrip()
        if len(text) > width and decimals:
            text = f"{scaled:.0f}{suffix} {unit}".rstrip()
        return text


#: units of a rate (more is better where runs are compared) and of a latency (less is); a
#: plain "s" is an elapsed time, neither
_RATE_UNITS = frozenset({"IOPS", "KiB/s", "MiB/s", "GiB/s", "MB/s", "GB/s", "Mbit/s", "Gbit/s", "trans/s"})
_LATENCY_UNITS = frozenset({"ns", "µs", "us", "ms"})


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class ResultTable:
    """One table of a result view section, as the tool lays its result out.

    Each row is (its labels, one under each of ``labels``; its values, one per column);
    a column's MetricSpec gives its heading and formats its numbers (text is shown as is).
    ``tab`` is the result view tab the table goes in ("Summary", "Percentiles", "Details"...,
    in the order they first appear); ``title`` is shown above it.
    """

    title: str
    labels: tuple[str, ...]
    columns: tuple[MetricSpec, ...]
    rows: tuple[tuple[tuple[str, ...], tuple[Any, ...]], ...]
    tab: str = "Summary"
    #: a stable id for the view and tests ("summary", "latency", "percentiles"...)
    key: str = ""

    def cells(self) -> list[list[str]]:
        """Every row as text: its labels, then each value in its column's format."""
        return [
            [*labels, *(spec.number(value) for spec, value in zip(self.columns, values))]
            for labels, values in self.rows
        ]


def figure_table(rows: Sequence[tuple[str, str]], *, title: str = "Result", key: str = "summary") -> ResultTable:
    """(label, formatted value) rows as a two-column table."""
    value = MetricSpec("value", "value")
    return ResultTable(title, ("",), (value,), tuple(((label,), (text,)) for label, text in rows), key=key)


def mapping_table(title: str, figures: Mapping[str, Any], *, tab: str = "Details", key: str = "") -> ResultTable:
    """A dict of figures as a key / value table; a dict of dicts as a grid (rows x columns)."""
    nested = {k: v for k, v in figures.items() if isinstance(v, Mapping)}
    if nested:
        names = sorted({c for v in nested.values() for c in v}, key=natural_key)
        columns = tuple(MetricSpec(str(c), str(c), decimals=2) for c in names)
        rows = tuple(((str(k),), tuple(row.get(c) for c in names)) for k, row in nested.items())
        return ResultTable(title, ("",), columns, rows, tab=tab, key=key)
    rows = tuple(((str(k),), (v if isinstance(v, (int, float, str)) else str(v),)) for k, v in figures.items())
    return ResultTable(title, ("",), (MetricSpec("value", "value", decimals=2),), rows, tab=tab, key=key)


def natural_key(text: Any) -> tuple[int, float, str]:
    """Numeric keys ('1', '2', '>=64' buckets, '99.990' percentiles) in numeric order, others after."""
    cleaned = str(text).lstrip("<>=")
    try:
        return (0, float(cleaned), str(text))
    except ValueError:
        return (1, 0.0, str(text))


@dataclass(frozen=True)
class Preset:
    """A named set of option values a form offers first ("8k random read"): choosing it fills
    each field with its value here, or the option's default. ``uses`` names the only options
    the preset's runs read (fio's custom: its extra arguments and job file); the form
    disables the others. Empty: every option."""

    name: str
    label: str
    values: Mapping[str, Any] = field(default_factory=dict)
    uses: tuple[str, ...] = ()

    def applies(self, option: str) -> bool:
        return not self.uses or option in self.uses


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
    #: the figures of the tool's result (top-level keys of its result dict), most telling
    #: first: the result view's rows with their units, the runs list's figure
    results: Sequence[MetricSpec] = field(default_factory=tuple)
    #: extra widgets of the live view, by name (ui/tool_panels/live_panels.py maps a name to its widget;
    #: a name not known there is left out): e.g. ORION's progress through its load matrix
    live_panels: Sequence[str] = field(default_factory=tuple)
    #: extra panels of the result view, by name (ui/tool_panels/result_panels.py), e.g. ORION's charts
    result_panels: Sequence[str] = field(default_factory=tuple)
    #: read by nothing any more: every tool's form is generated from its description. Kept
    #: so a description that still names a form of its own (another branch, another
    #: package) loads; delete once none does
    form: str = ""
    #: the New-run form's presets, in menu order (the first is the form's start); none: the
    #: form starts from the options' defaults
    presets: Sequence[Preset] = field(default_factory=tuple)
    #: what the live view says where the tool gives no live figures at all (fio's client
    #: mode: "no live figures (fio issue 712)"), instead of empty sparklines; "" for none
    live_note: str = ""

    def option(self, name: str) -> ToolOption | None:
        return next((o for o in self.options if o.name == name), None)

    def metric(self, key: str) -> MetricSpec | None:
        return next((m for m in self.metrics if m.key == key), None)

    def preset(self, name: str) -> Preset | None:
        return next((p for p in self.presets if p.name == name), None)

    # ---- what a form asks of a tool before it plans -----------------------------------------
    def kind_problems(self, config: Mapping[str, Any]) -> list[str]:
        """Every value of ``config`` its option's kind refuses (ToolOption.check): what a start
        refuses before planning, whoever built the config (the form, --set, a stored run)."""
        found = []
        for name, value in config.items():
            option = self.option(name)
            if option is None:
                continue
            for item in value if option.repeatable and isinstance(value, (list, tuple)) else [value]:
                problem = option.check(item)
                if problem:
                    found.append(problem)
        return found

    def problems(self, config: Mapping[str, Any]) -> list[str]:
        """Every problem of ``config`` a tool can name without planning, each beginning with
        the option it is about (``"bs: '12q' is not a size like 4k"``): the form puts each
        under its field at once. By default none (planning, ``build_argv`` / ``invocation``,
        checks the config)."""
        return []

    def command_line(self, config: Mapping[str, Any]) -> str | None:
        """The command as the user reads it, shell-quoted, where the planned argv does not show
        it (fio runs a job file written from it): the form's preview. None: the planned argv."""
        return None

    def metric_or_bare(self, key: str) -> MetricSpec:
        """The declared metric, or one without a unit for a key the tool did not declare."""
        return self.metric(key) or MetricSpec(key, key.replace("_", " "), chart=key)

    # ---- what the views ask of a tool (override what differs) ------------------------------
    def live_metrics(self, seen: Sequence[str] = ()) -> list[MetricSpec]:
        """The live view's sparklines: the declared live metrics, once samples arrived only
        those they carry (iperf3's UDP figures are no TCP run's); a tool that declares none
        gets one per key its samples carry, without a unit."""
        if not self.metrics:
            return [self.metric_or_bare(key) for key in seen]
        present = [m for m in self.metrics if m.key in seen and m.twin_of not in seen]
        return present if seen and present else [m for m in self.metrics if not m.twin_of]

    def charts(self, seen: Sequence[str]) -> list[tuple[str, list[MetricSpec]]]:
        """(unit, metrics) per chart of the result view, in declaration order: metrics of one
        ``chart`` share an axis (one unit: a test holds every tool to it); only keys ``seen``
        in the samples (a twin only without its other); a key the tool did not declare gets
        a chart of its own."""
        groups: dict[str, list[MetricSpec]] = {}
        specs = [m for m in self.metrics if m.key in seen and m.twin_of not in seen]
        specs += [self.metric_or_bare(key) for key in seen if self.metric(key) is None]
        for spec in specs:
            groups.setdefault(spec.chart or spec.key, []).append(spec)
        return [(group[0].unit, group) for group in groups.values()]

    def sample_headline(self, metrics: Mapping[str, Any]) -> str:
        """A running run's figure in the runs list, from its latest sample: its first live
        metric that is not zero."""
        for spec in self.live_metrics(list(metrics)):
            value = metrics.get(spec.key)
            if _is_number(value) and value:
                return spec.compact(value)
        return ""

    def headline(self, result: Mapping[str, Any] | None) -> str:
        """A finished run's figure in the runs list: its first declared result figure that is
        not zero ('' when there is none)."""
        for spec in self.results:
            value = (result or {}).get(spec.key)
            if _is_number(value) and value:
                return spec.compact(value)
        return ""

    def result_figures(self, result: Mapping[str, Any] | None) -> dict[str, float]:
        """The declared result figures of a result, by key (what a comparison and the criteria
        read): the top-level numbers of ``results``. A tool whose result nests its figures (fio's
        jobs) computes them itself."""
        result = result or {}
        return {spec.key: float(result[spec.key]) for spec in self.results if _is_number(result.get(spec.key))}

    def result_rows(self, result: Mapping[str, Any] | None) -> list[tuple[str, str]]:
        """(label, value) rows of the result view's summary: the declared figures with their
        units, then every other plain top-level value as it is."""
        result = result or {}
        rows = [
            (spec.label, spec.format(result[spec.key])) for spec in self.results if _is_number(result.get(spec.key))
        ]
        declared = {spec.key for spec in self.results}
        for key, value in result.items():
            if key in declared or isinstance(value, bool) or not isinstance(value, (int, float, str)):
                continue
            rows.append((key, f"{value:.2f}" if isinstance(value, float) else str(value)))
        return rows

    def result_sections(self, result: Mapping[str, Any] | None) -> list[ResultTable]:
        """The result view's tables, in order (each names its tab): by default the summary of
        :meth:`result_rows`, then every top-level dict of figures under Details. A tool with
        a richer result (fio's jobs) lays it out itself."""
        if result is None:
            return []
        tables = [figure_table(self.result_rows(result))]
        for key, value in result.items():
            if isinstance(value, Mapping) and value and key not in ("tool", "samples"):
                tables.append(mapping_table(key.replace("_", " "), value, key=key))
        return tables

    def data_points(self, result: Mapping[str, Any] | None) -> tuple[tuple[str, ...], list[tuple[Any, ...]]] | None:
        """A result that is a set of measured points (ORION's matrices): (the columns, a row per
        point), what a CSV export holds besides the samples; None for a tool without them."""
        return None

    def result_notes(self, result: Mapping[str, Any] | None) -> list[str]:
        """Lines the result view says above the tables: the result's ``messages`` list."""
        messages = (result or {}).get("messages")
        return [str(m) for m in messages[:5]] if isinstance(messages, list) else []

    def end_of(self, config: Mapping[str, Any]) -> str:
        """Which end a config of a two-ended tool runs: its ``role`` option ('' for a tool
        without one)."""
        role = self.option(ROLE_OPTION)
        return str(config.get(ROLE_OPTION, role.default)) if role is not None else ""

    def applies(self, option: ToolOption, config: Mapping[str, Any]) -> bool:
        """Does ``option`` matter for this config? Not when it is the other end's."""
        end = self.end_of(config)
        return not end or option.end in ("both", end)

    def planned_duration_s(self, config: Mapping[str, Any]) -> float | None:
        """How long a run of ``config`` is planned to take (the live view's ETA and progress),
        None when unknown. By default its ``duration_s`` option (set, else its default) when
        the option applies to the config's end, in seconds."""
        option = self.option("duration_s")
        value = config.get("duration_s", option.default) if option and self.applies(option, config) else None
        try:
            seconds = float(value) if value not in (None, "") else None
        except (TypeError, ValueError):
            return None
        return seconds if seconds is not None and math.isfinite(seconds) and seconds > 0 else None

    def settings_to_config(
        self, settings: Sequence[tuple[str, Any]], run_level_keys: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
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
                raise ValueError(
                    f"{self.name} has no option {key!r}; its options: {', '.join(sorted(known))} "
                    f"(see racperf run {self.name} --help)"
                )
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


def options_from_dataclass(
    cls: Any,
    helps: Mapping[str, str],
    *,
    choices: Mapping[str, Sequence[str]] | None = None,
    ends: Mapping[str, str] | None = None,
    skip: Sequence[str] = (),
    kinds: Mapping[str, str] | None = None,
    not_in_form: Sequence[str] = (),
    access: Mapping[str, str] | None = None,
    units: Mapping[str, str] | None = None,
) -> tuple[ToolOption, ...]:
    """The options of a config dataclass: name, kind (from the field's annotation, or
    ``kinds``: "target" for the path a tool works on) and default from the field, help from
    ``helps`` (every field must have one: a test checks); ``not_in_form`` are ``--set`` only;
    ``access`` what the tool does with the path a field names (ToolOption.access); ``units``
    what a count is of (ToolOption.unit)."""
    found = []
    for item in dataclasses.fields(cls):
        if item.name in skip:
            continue
        annotation = str(item.type).replace(" ", "")
        base = annotation.split("|")[0]
        kind = "list" if base.startswith(("Sequence", "list", "tuple")) else _KIND_OF_ANNOTATION.get(base, "str")
        if choices and item.name in choices:
            kind = "choice"
        kind = (kinds or {}).get(item.name, kind)
        if item.default is not dataclasses.MISSING:
            default = item.default
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:
            default = None
        found.append(
            ToolOption(
                item.name,
                kind,
                default,
                helps.get(item.name, ""),
                tuple((choices or {}).get(item.name, ())),
                (ends or {}).get(item.name, "both"),
                in_form=item.name not in not_in_form,
                access=(access or {}).get(item.name, ""),
                unit=(units or {}).get(item.name, ""),
            )
        )
    return tuple(found)


class StreamParser(Protocol):
    """Turns a tool's output, line by line, into Samples (stateful: one per run)."""

    def feed(self, line: str) -> list[Sample]:
        """Consume one complete output line (no trailing newline); return new Samples."""
        ...

    def finish(self) -> list[Sample]:
        """End of output: return any Samples still buffered."""
        ...


class CompanionParser(StreamParser, Protocol):
    """A stream parser that also reads the output of its Invocation's companions (commands
    run every few seconds beside the benchmark: :class:`racperf_tui.core.contract.invocation.Companion`).
    Without this method a companion's output lines go to ``feed``."""

    def companion_output(self, name: str, output: str, exit_status: int) -> list[Sample]:
        """One finished run of the companion ``name``: its whole output and exit status."""
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
class PairMode:
    """One choice of the network panel's Mode field for a two-ended tool.

    ``client`` holds the client config values that make the mode (probe's RTT:
    ``{"mode": "SYNC", "rtt": True}``); ``latency_only`` modes get no throughput verdict;
    ``rate_cap`` is the target rate a mode sends at (iperf3's UDP: "1G"), so what arrives is a
    loss check, not the link's capacity; ``unused_fields`` are panel fields the mode ignores.
    """

    name: str
    client: Mapping[str, Any] = field(default_factory=dict)
    latency_only: bool = False
    rate_cap: str = ""
    unused_fields: frozenset[str] = frozenset()

    def matches(self, config: Mapping[str, Any], description: ToolDescription) -> bool:
        """Was ``config`` made by this mode? (each of its values, the option's default when unset)"""
        for key, value in self.client.items():
            option = description.option(key)
            if config.get(key, option.default if option else None) != value:
                return False
        return True


@dataclass(frozen=True)
class ProgramField:
    """A path the network panel asks for a two-ended tool (its program, the runtime it needs),
    remembered in the data dir's settings under ``setting``. ``options`` say which config
    options get it: (option, file name under the typed directory, or "" for the path itself)."""

    label: str
    placeholder: str
    setting: str
    options: tuple[tuple[str, str], ...]


#: the network panel's fields (what PairSpec.client_fields / server_fields map to options)
PAIR_FIELDS = ("host", "port", "duration_s", "interval_s", "length", "connections", "write")


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
    #: the server option (a bool, on by default) that makes it exit after one client ("":
    #: it serves until stopped, and a finished pair's server is stopped at once: waiting for
    #: an end that never comes cost every matrix pair of netperf or oratcptest 5 s)
    once_option: str = ""
    #: adapts the client config to what is installed (drops what the build cannot do), saying so
    adapt_client: ClientAdapter | None = None
    #: the network panel's form for this tool: its modes (the first is the default), which
    #: option of each end each panel field (PAIR_FIELDS) sets (a field named by neither is
    #: disabled: a value typed there would be ignored), the program and runtime paths it asks for
    modes: tuple[PairMode, ...] = ()
    client_fields: Mapping[str, str] = field(default_factory=dict)
    server_fields: Mapping[str, str] = field(default_factory=dict)
    program: ProgramField | None = None
    runtime: ProgramField | None = None

    def mode(self, name: str) -> PairMode:
        """The mode called ``name`` (ValueError naming the modes there are)."""
        for mode in self.modes:
            if mode.name == name:
                return mode
        raise ValueError(f"no mode {name!r}; the modes: {', '.join(m.name for m in self.modes)}")

    def mode_of(self, config: Mapping[str, Any], description: ToolDescription) -> str:
        """The mode a client config was made by (the one matching most values), '' for none."""
        found = [m for m in self.modes if m.matches(config, description)]
        return max(found, key=lambda m: len(m.client)).name if found else ""

    def adapted_client(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """(the client config to run, notes on what was changed and why)."""
        if self.adapt_client is None:
            return dict(config), []
        return self.adapt_client(config)


def metric_table(metrics: Sequence[MetricSpec]) -> Mapping[str, MetricSpec]:
    """key -> spec, for a view that formats samples."""
    return {m.key: m for m in metrics}


def parse_setting(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> (key, value): JSON numbers / true / false / null / lists, else the text.
    ValueError when there is no ``=`` or no key."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"--set {text!r}: expected KEY=VALUE, e.g. --set duration_s=30")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    if isinstance(value, dict):
        value = raw
    return key, value
