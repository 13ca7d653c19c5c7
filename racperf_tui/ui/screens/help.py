"""The help screen: racperf's keys that work where the user was, grouped by who handles them.

Generic on purpose: it lists the active bindings of the screen underneath (the app's, the
screen's and those of the focused widget and its ancestors, e.g. the focused panel), so a new
panel's keys appear here without touching this file. Only keys a racperf class declares are
listed: Textual's own (a DataTable's cursor keys, Focus Next, the palette) are the framework's,
not racperf's, and named by their class ("DataTable") they told a DBA nothing. A node sets
``HELP_TITLE`` to name its group, a binding its ``tooltip`` to say what it does in a sentence.
"""

from __future__ import annotations

import textwrap

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from racperf_tui.core.disks.saturation import SaturationRules
from racperf_tui.ui.screen_base import RacperfModalScreen


def saturation_rule_text() -> str:
    """The Disks tab's saturation rule, as the model applies it (RACPERF_SATURATION included)."""
    try:
        return SaturationRules.from_env().describe()
    except ValueError as exc:
        return f"{SaturationRules().describe()} ({exc}; the defaults apply)"


#: said under the keys: what a text field does with them, and the way out
TEXT_FIELD_NOTE = (
    "In a text field, digits and letters are typed:\n"
    "Esc leaves it, then 1 2 3 4 switch tabs and q quits;\n"
    "F1..F4 (alt+1..4) switch tabs and ctrl+q quit from anywhere."
)


def _group_title(node: object) -> str:
    title = getattr(node, "HELP_TITLE", None)
    if title:
        return str(title)
    if isinstance(node, App):
        return "Everywhere"
    return type(node).__name__


def declared_by_racperf(node: object, binding: Binding) -> bool:
    """Did a racperf class of ``node`` declare ``binding`` (not Textual, whose classes the
    node's class also inherits bindings from)?"""
    for cls in type(node).__mro__:
        if not cls.__module__.startswith("racperf_tui."):
            continue
        for declared in cls.__dict__.get("BINDINGS", ()):
            if isinstance(declared, Binding):
                keys, action = declared.key, declared.action
            else:  # ("q", "quit", "Quit") tuples
                keys, action = declared[0], declared[1]
            if action == binding.action and binding.key in {k.strip() for k in keys.split(",")}:
                return True
    return False


def bindings_text(active: dict[str, ActiveBinding], key_display) -> Text:
    """One line per action (key(s), what it does), grouped by the node that owns it.

    ``key_display(binding) -> str`` renders a key the way the footer does. Several keys bound
    to one action (``plus,equals_sign``, ``q`` and ``ctrl+q``) share one line.
    """
    groups: dict[str, dict[str, list[str]]] = {}
    for active_binding in active.values():
        binding = active_binding.binding
        if binding.system or not declared_by_racperf(active_binding.node, binding):
            continue
        # The footer needs a word; the help has room for the tooltip's sentence.
        description = binding.tooltip or binding.description or binding.action
        keys = groups.setdefault(_group_title(active_binding.node), {}).setdefault(description, [])
        key_text = key_display(binding)
        if key_text not in keys:
            keys.append(key_text)
    key_width = max((len(" ".join(k)) for g in groups.values() for k in g.values()), default=1)
    text = Text()
    for title, actions in groups.items():
        if text:
            text.append("\n")
        text.append(title + "\n", style="bold underline")
        for description, keys in actions.items():
            text.append(" ".join(keys).rjust(key_width), style="bold")
            text.append(f"  {description}\n")
    text.rstrip()
    return text


#: what the help says under the keys on each tab (the Disks and Runs tabs: the saturation rule)
TAB_NOTES = {
    "network": (
        "Network: a pair runs its server on the Server node and its client on the Client node; "
        "the server address is where the client reaches it (a node's interconnect address). "
        "Throughput is the mean of the client's intervals, latency as the tool measures it "
        "(mean or p99: said by its label); a stall (an interval at ~0) makes the verdict bad, a dip "
        "under half the median a warning. Redo MB/s judges the link for Data Guard."
    ),
    "cluster": (
        "Cluster: one card per node of the cluster file, sampled every interval over SSH; the "
        "shared LUNs first with their cluster total (await weighted by I/Os, %util the highest). "
        "A card's state says why a node is not sampled (unreachable, lost, reconnecting). "
        "CAL marks the devices of a running CALIBRATE_IO's datafiles on every node."
    ),
}


def tab_note(tab: str | None) -> str:
    """The note under the keys for the tab the help was asked on."""
    return TAB_NOTES.get(tab or "", "Disks: " + saturation_rule_text())


class HelpScreen(RacperfModalScreen[None]):
    """Lists the keys given to it; any of escape, q or ? closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close help"),
    ]

    def __init__(self, active: dict[str, ActiveBinding], tab: str | None = None) -> None:
        """``active``: the active bindings of the screen the help is about; ``tab``: the tab it
        was asked on (its own note under the keys)."""
        super().__init__()
        self.active = active
        self.tab = tab

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("Keys (escape closes)", style="bold"))
            yield Static(bindings_text(self.active, self.app.get_key_display))
            yield Static(Text("\n" + TEXT_FIELD_NOTE, style="italic"))
            yield Static(
                Text("\n" + textwrap.fill(tab_note(self.tab), 76, break_on_hyphens=False), style="italic"),
                id="help-tab-note",
            )
