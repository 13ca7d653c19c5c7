"""ORION's result view on a stored result of the 19c sample (tests/fixtures/orion/reconstructed-19c,
parsed as a run's stdout and result files are): each maximum with where it was reached and the
latency there, labels with units, the matrices as tables (no Python list, no raw key), and a
Summary taller than the screen that a shown key scrolls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.containers import VerticalScroll
from textual.widgets import DataTable, TabbedContent

from racperf_tui.ui.screens.result_view import ResultView
from tests.helpers.orion_seed import sample_19c_result, store_orion_run
from tests.helpers.result_view_run import ResultViewApp, loaded


def rows(table: DataTable[Any]) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def headings(table: DataTable[Any]) -> list[str]:
    return [str(column.label) for column in table.columns.values()]


async def test_the_maxima_say_where_they_were_reached_and_the_matrices_are_tables(tmp_path: Path) -> None:
    result = sample_19c_result()
    run_id = store_orion_run(tmp_path / "data", result)
    app = ResultViewApp(tmp_path / "data", run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        view = app.screen
        assert isinstance(view, ResultView)
        maxima = view.query_one("#table-maxima", DataTable)
        assert headings(maxima) == [
            "",
            "figure",
            "at small",
            "at large",
            "latency µs",
            "IOPS",
            "MB/s",
        ]
        iops, lat, mbps = result["iops"], result["lat"], result["mbps"]
        small, large = result["max_small_iops_at"]["small"], result["max_small_iops_at"]["large"]
        at_iops = (iops["large_loads"].index(large), iops["small_loads"].index(small))
        lowest = result["min_small_latency_at"]
        at_lowest = (lat["large_loads"].index(lowest["large"]), lat["small_loads"].index(lowest["small"]))
        best = result["max_large_mbps_at"]
        # the sample: 48,211.25 IOPS at small 5 / large 0 where lat.csv says 103.67 µs;
        # 1,532.417 MB/s at large 2 (no latency: ORION measures small I/Os' only)
        assert rows(maxima) == [
            [
                "highest small-I/O IOPS",
                f"{result['max_small_iops']:,.0f} IOPS",
                str(small),
                str(large),
                f"{lat['values'][at_iops[0]][at_iops[1]]:.1f}",
                f"{iops['values'][at_iops[0]][at_iops[1]]:.0f}",
                "-",
            ],
            [
                "highest large-I/O MB/s",
                f"{result['max_large_mbps']:,.1f} MB/s",
                str(best["small"]),
                str(best["large"]),
                "-",
                "-",
                f"{mbps['values'][mbps['large_loads'].index(best['large'])][0]:.1f}",
            ],
            [
                "lowest small-I/O latency",
                f"{result['min_small_latency_us']:,.2f} µs",
                str(lowest["small"]),
                str(lowest["large"]),
                f"{lat['values'][at_lowest[0]][at_lowest[1]]:.1f}",
                f"{iops['values'][at_lowest[0]][at_lowest[1]]:.0f}",
                "-",
            ],
        ]
        assert rows(maxima)[0][1:5] == ["48,211 IOPS", "5", "0", "103.7"]  # the sample's own figures
        latency = rows(view.query_one("#table-latency", DataTable))
        assert latency[0] == ["small read", "103.7", "41.1", "8012.6", "51.5", "5", "0"]
        settings = dict(rows(view.query_one("#table-settings", DataTable)))  # type: ignore[arg-type]
        assert settings["ORION version"] == result["version"] and settings["small I/O size (KB)"] == "8"
        assert settings["seconds per data point"] == "60" and settings["data points"] == "8"
        # Details: each matrix a table, a row per large load and a column per small load
        table = view.query_one("#table-iops", DataTable)
        assert headings(table) == ["large \\ small", *map(str, iops["small_loads"])]
        assert rows(table) == [
            [str(load), *(f"{v:.0f}" if v is not None else "-" for v in row)]
            for load, row in zip(iops["large_loads"], iops["values"])
            if any(v is not None for v in row)  # a basic matrix: no small I/O at large 1, 2
        ]
        assert rows(table) == [["0", "12310", "23551", "34012", "42988", "48211"]]
        assert rows(view.query_one("#table-mbps", DataTable)) == [["1", "1021.3"], ["2", "1532.4"]]
        assert rows(view.query_one("#table-lat", DataTable)) == [["0", "81.2", "84.9", "88.2", "93.0", "103.7"]]
        histogram = rows(view.query_one("#table-histogram", DataTable))
        shown = [r for r in result["histogram"] if r["read"]]
        assert histogram[0][:3] == [
            f"{shown[0]['low_us']} - {shown[0]['high_us']} µs",
            str(shown[0]["read"]),
            f"{shown[0]['read_cum_pct']:.2f}",
        ]
        assert len(histogram) == 7 and histogram[-1][:3] == ["2048 - 4096 µs", "200", "100.00"]
        assert rows(view.query_one("#table-luns", DataTable)) == [["/dev/mapper/data1", "100.0"]]
        every_cell = [c for t in view.query(DataTable) for c in headings(t) + sum(rows(t), [])]
        assert not [c for c in every_cell if "[" in c or "{" in c or c in result], "a Python list or raw key shown"
        assert "highest small-I/O IOPS" in every_cell and "max_small_iops" in result  # the check sees keys


async def test_a_summary_taller_than_the_screen_scrolls_with_a_shown_key(tmp_path: Path) -> None:
    run_id = store_orion_run(tmp_path / "data", sample_19c_result())
    app = ResultViewApp(tmp_path / "data", run_id)
    async with app.run_test(size=(120, 16)) as pilot:
        await loaded(pilot)
        view = app.screen
        assert isinstance(view, ResultView)
        assert view.query_one(TabbedContent).active == "tab-summary"
        shown = {b.key_display for b in (b.binding for b in view.active_bindings.values()) if b.show}
        assert "PgUp/PgDn" in shown
        page = view.query_one("#tab-summary").query_one(VerticalScroll)
        assert page.max_scroll_y > 0 and page.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert page.scroll_y > 0
        await pilot.press("pageup")
        await pilot.pause()
        assert page.scroll_y == 0
