"""``racperf --from``: the Disks tab on an archive written by the real sysstat here, with its
timeline: at each step the table shows the report of that moment (r/s, await) and the
saturation level the live tab's rule gives over the reports up to it; step back and jump
give the same; the hosts of an OSWatcher directory side by side as the Cluster tab's cards."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from textual.widgets import Input, TabbedContent

from racperf_tui.core.disks.history.playback import ArchivePlayback
from racperf_tui.ui.archive_app import ArchiveApp
from racperf_tui.ui.dialogs.jump_dialog import JumpDialog
from racperf_tui.ui.tabs.archive_panel import ArchiveDisksPanel
from racperf_tui.ui.widgets.cluster_node_card import NodeCard
from tests.helpers import needs_root
from tests.helpers.iostat_binary import STAT_NAMES, Device, Sample, run_iostat_on_samples
from tests.helpers.pilot_apps import wait_until

pytestmark = needs_root

#: (reads, await ms, avgqu-sz, %util) of sdb in each interval: three at low load, then four
#: queueing (20 ms, 20x its low-load await, 20 outstanding); sdc reads a little throughout
LOADS = [(200, 1.0, 0.2, 20.0)] * 3 + [(1000, 20.0, 20.0, 100.0)] * 4


def _samples() -> list[Sample]:
    index = {name: i for i, name in enumerate(STAT_NAMES)}
    sdb = [0] * 17
    sdc = [0] * 17
    for stats in (sdb, sdc):
        for name, value in (("rd_ios", 1000), ("rd_sectors", 8000), ("rd_ticks", 1000), ("tot_ticks", 1000)):
            stats[index[name]] = value
        stats[index["rq_ticks"]] = 1000
    uptime = 100_000
    samples = [Sample(uptime, [Device("sdb", 8, 16, list(sdb)), Device("sdc", 8, 32, list(sdc))])]
    for reads, await_ms, queue, util in LOADS:
        uptime += 100
        sdb[index["rd_ios"]] += reads
        sdb[index["rd_sectors"]] += reads * 8
        sdb[index["rd_ticks"]] += int(reads * await_ms)
        sdb[index["rq_ticks"]] += int(queue * 1000)
        sdb[index["tot_ticks"]] += int(util * 10)
        sdc[index["rd_ios"]] += 10
        sdc[index["rd_sectors"]] += 80
        sdc[index["rd_ticks"]] += 10
        sdc[index["rq_ticks"]] += 10
        sdc[index["tot_ticks"]] += 10
        samples.append(Sample(uptime, [Device("sdb", 8, 16, list(sdb)), Device("sdc", 8, 32, list(sdc))]))
    return samples


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An OSWatcher-style directory of two hosts, each hour's file the real iostat's -x -k -t
    output over the samples above."""
    work = tmp_path_factory.mktemp("archive")
    text = run_iostat_on_samples(_samples(), ["-x", "-k", "-t"], work)
    assert text.count("Device") == len(LOADS) + 1, text
    directory = work / "oswbb" / "archive" / "oswiostat"
    directory.mkdir(parents=True)
    banner, rest = text.split("\n", 1)
    for host in ("rac1", "rac2"):
        # each node's iostat names its own host in the banner, as OSWatcher's files do
        named = re.sub(r"\(\S+\)", f"({host})", banner, count=1)
        (directory / f"{host}_iostat_26.12.02.0300.dat").write_text(f"{named}\n{rest}")
    return work / "oswbb"


def _panel(app: ArchiveApp) -> ArchiveDisksPanel:
    return app.query_one(ArchiveDisksPanel)


def _line(panel: ArchiveDisksPanel, device: str) -> dict[str, str]:
    """The device's line as drawn: its name (with the flag) and each figure column by heading
    (the sparkline between them may hold spaces; figures never do)."""
    words = panel.table._strips[[s.name for s in panel.table.states].index(device)].text.split()
    headers = panel.table.visible_headers
    return {"device": words[0], **dict(zip(headers, words[-len(headers) :]))}


async def test_each_step_shows_that_reports_figures_and_the_live_rules_level(archive: Path) -> None:
    playback = ArchivePlayback.read([archive])
    assert playback.problems == [] and list(playback.hosts) == ["rac1", "rac2"]
    assert len(playback.frames) == len(LOADS) + 1
    app = ArchiveApp(playback, str(archive))
    async with app.run_test(size=(200, 50)) as pilot:
        panel = _panel(app)
        await wait_until(pilot, lambda: panel.series.fed == 1, 5, "the first report")
        assert app.sub_title == f"read-only archive (no benchmark, nothing started, no /proc read): {archive}"

        async def at_step(step: int) -> tuple[dict[str, str], str]:
            await pilot.pause()
            assert panel.series.fed == step + 1
            state = panel.model.devices["sdb"]
            return _line(panel, "sdb"), state.level

        line, level = await at_step(0)  # since boot: averages, no judgement
        assert "averages since boot" in panel._texts[".iostat-status"]
        for step in range(1, 6):
            await pilot.press("full_stop")
            line, level = await at_step(step)
            reads, await_ms, _queue, _util = LOADS[step - 1]
            # the columns of the live tab: r/s first, await ninth
            assert (float(line["r/s"]), float(line["await"])) == (reads, await_ms), line
            assert level == "ok"  # a level begins after three intervals in a row at it
        # the third queueing interval in a row: the live rule flags it
        await pilot.press("full_stop")
        line, level = await at_step(6)
        assert level == "queueing", line
        alert = panel._texts[".iostat-alert"]
        assert alert.startswith(" ! sdb queueing"), alert
        # one back: two in a row only, not yet flagged (the judge built again from the start)
        await pilot.press("comma")
        _line_back, level = await at_step(5)
        assert level == "ok" and "no saturation" in panel._texts[".iostat-alert"]
        # a jump to a time of day: the report of 03:41:11 (the seventh interval)
        first = playback.origin
        assert first is not None
        target = (first + dt.timedelta(seconds=7)).strftime("%H:%M:%S")
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, JumpDialog), 5, "the jump question")
        for key in target:
            await pilot.press({":": "colon"}.get(key, key))
        assert app.screen.query_one(Input).value == target
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, JumpDialog), 5, "the archive again")
        line, level = await at_step(7)
        assert level == "queueing" and float(line["r/s"]) == 1000.0
        # the name filter's field takes what is typed, the timeline keys among it
        await pilot.press("slash")
        await pilot.pause()
        field = panel.query_one("#iostat-pattern", Input)
        assert field.has_focus
        await pilot.press("s", "d", "b", "full_stop", "comma", "space", "g")
        assert field.value == "sdb., g" and panel.series.fed == 8
        assert not isinstance(app.screen, JumpDialog)
        await pilot.press("escape")
        # the hosts side by side, each card the host's own model, the flag on sdb
        await pilot.press("2")
        await wait_until(pilot, lambda: app.query_one(TabbedContent).active == "hosts", 5, "the Hosts tab")
        await pilot.pause()
        cards = list(app.query(NodeCard))
        assert [card.node_name for card in cards] == ["rac1", "rac2"]
        assert cards[0].region.y == cards[1].region.y and cards[0].region.x < cards[1].region.x
        texts = [card.render().plain for card in cards]
        assert all("! sdb" in text and " 1000 " in text for text in texts), texts


def test_a_report_older_than_the_one_before_is_named_and_skipped(tmp_path: Path) -> None:
    text = (Path(__file__).parents[1] / "fixtures" / "iostat_history" / "real-12.6-xk-t.txt").read_text()
    banner, _, rest = text.partition("\n")
    first, second = rest.split("\n\n\n", 1)
    (tmp_path / "out.txt").write_text(f"{banner}\n{second}\n\n\n{first}\n")
    playback = ArchivePlayback.read([tmp_path / "out.txt"])
    assert len(playback.frames) == 1
    assert [p.message for p in playback.problems] == ["a report older than the one before: skipped"]
