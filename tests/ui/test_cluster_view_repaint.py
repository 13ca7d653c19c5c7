"""What the Cluster tab costs per second: a card repaints only the lines its node's new figures
changed (none for an idle node), a burst of the nodes' samples is one message, and the
Disks tab takes no samples while another tab is in front (issue 10: 16 nodes at 1 s within
5 % of one core for the whole app)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from textual.app import App, ComposeResult
from textual.widgets import TabbedContent

from racperf_tui.core.disks.iostat_model import IostatModel
from racperf_tui.core.disks.iostat_sampler import IostatReport, IostatRow
from racperf_tui.orchestration.cluster_monitor import LOST, OK, NodeState
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.tabs.cluster_panel import SampledNodes
from racperf_tui.ui.tabs.iostat_panel import IostatPanel
from racperf_tui.ui.widgets.cluster_node_card import NodeCard
from tests.helpers import FIXTURES

FIXTURE_ROOT = FIXTURES / "sysstat" / "root1"


def row(device: str, iops: float, util: float) -> IostatRow:
    return IostatRow(device, iops, 0.0, iops * 8, 0.0, 0.0, 0.0, 16.0, iops / 1000, 1.0, 1.0, 0.0, 0.5, util)


def state_of(seq: int, rows: list[IostatRow], state: str = OK) -> NodeState:
    # sampled now: on time, so no age on the title
    return NodeState("n1", "root@10.0.0.1:22", state, "", tuple(rows), False, 1.0, time.time(), 0.0, 0.0, seq)


def fed(model: IostatModel, state: NodeState) -> IostatModel:
    model.update(IostatReport(state.sampled_at, 1.0, list(state.rows), []))
    return model


class CardApp(App[None]):
    def compose(self) -> ComposeResult:
        yield NodeCard("n1", id="card")


def painted_text(card: NodeCard) -> list[str]:
    """The card's lines as the compositor gets them (kept, partly remade)."""
    return [strip.text for strip in card.render_lines(card.region.reset_offset)]


def fresh_text(card: NodeCard) -> list[str]:
    """The card's lines made from nothing (what a full repaint would show)."""
    width = card.outer_size.width
    return [card._strip(text, width).text for text in card._texts(width)]


async def test_a_card_repaints_only_the_lines_whose_figures_changed() -> None:
    app = CardApp()
    async with app.run_test(size=(60, 10)) as pilot:
        card = app.query_one(NodeCard)
        await pilot.pause()
        assert card.lines_repainted == NodeCard.HEIGHT  # mounted, "not started": every line
        model = IostatModel()
        rows = [row("sda", 100, 10.0), row("sdb", 50, 5.0), row("sdc", 20, 2.0)]
        card.show(state_of(1, rows), fed(model, state_of(1, rows)))
        await pilot.pause()
        first = painted_text(card)
        assert first[0].startswith(" ● n1  ok") and "sda" in first[2] and "sdc" in first[4]
        # the title, the heading and three devices; the two empty lines stay as they were
        repainted = card.lines_repainted
        assert repainted == NodeCard.HEIGHT + 5

        # the same figures in the next sample: nothing to make, nothing to draw
        card.show(state_of(2, rows), fed(model, state_of(2, rows)))
        await pilot.pause()
        assert card.lines_repainted == repainted and card.shows_unchanged == 1
        assert painted_text(card) == first

        # one device's IOPS moves (same order): that line alone
        rows2 = [rows[0], row("sdb", 60, 5.0), rows[2]]
        card.show(state_of(3, rows2), fed(model, state_of(3, rows2)))
        await pilot.pause()
        assert card.lines_repainted == repainted + 1
        after = painted_text(card)
        assert [i for i, (a, b) in enumerate(zip(first, after)) if a != b] == [3]
        assert after[3].split()[:2] == ["sdb", "60"]
        assert after == fresh_text(card)  # what a full repaint shows

        # a sample on time has no age on its title; one late by 4 s has, and the clock moves it
        assert "ago" not in after[0]
        late = state_of(4, rows2)
        card.show(replace(late, sampled_at=time.time() - 4.0), fed(model, late))
        await pilot.pause()
        assert "4.0 s ago" in painted_text(card)[0] and card.is_stale(time.time())
        assert card.lines_repainted == repainted + 2  # the title alone

        # lost: another background, every line anew, and the strips say so
        card.show(state_of(3, rows2, LOST), model)
        await pilot.pause()
        assert card.has_class("-bad") and card.lines_repainted == repainted + 2 + NodeCard.HEIGHT
        assert "lost" in painted_text(card)[0]


def test_a_burst_of_samples_is_one_message_with_every_node_once() -> None:
    sampled = SampledNodes()
    posts: list[bool] = []
    names = [f"n{i}" for i in range(1, 17)]

    def publish(name: str) -> None:
        for _ in range(3):  # three newer states of the node before the UI looks
            posts.append(sampled.add(name))

    threads = [threading.Thread(target=publish, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert posts.count(True) == 1 and len(posts) == 48  # 48 states, one message
    taken = sampled.take()
    assert sorted(taken) == sorted(names) and len(taken) == 16  # each node once: its newest state is read
    assert sampled.take() == []
    assert sampled.add("n3") and not sampled.add("n1")  # the next burst: a message again
    assert sampled.take() == ["n3", "n1"]


async def test_the_disks_tab_takes_no_samples_behind_another_tab() -> None:
    app = RacperfApp(roots=[str(FIXTURE_ROOT)], interval_s=0.25, clock=False)
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        await pilot.pause(0.7)
        assert panel.samples_taken >= 2  # in front: one every 0.25 s
        app.query_one(TabbedContent).active = "runs"
        await pilot.pause(0.3)
        assert panel.hidden
        hidden_at = panel.samples_taken
        await pilot.pause(1.5)  # six intervals behind the Runs tab
        assert panel.samples_taken == hidden_at
        app.query_one(TabbedContent).active = "disks"
        await pilot.pause(0.6)  # back in front: sampling again
        assert not panel.hidden and panel.samples_taken >= hidden_at + 2
        # the user's pause stays a pause across a tab switch
        await pilot.press("space")
        app.query_one(TabbedContent).active = "runs"
        await pilot.pause(0.2)
        app.query_one(TabbedContent).active = "disks"
        paused_at = panel.samples_taken
        await pilot.pause(0.8)
        assert panel.paused and panel.samples_taken == paused_at
