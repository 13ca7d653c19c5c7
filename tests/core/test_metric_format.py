"""The live figures' text: times in the unit that keeps them short, counts with k/M."""

from racperf_tui.ui.widgets.metric_sparkline import format_value


def test_a_latency_reads_in_the_larger_unit_from_ten_thousand_on() -> None:
    assert format_value(22_200.0, "µs") == "22.20 ms"
    assert format_value(9_999.0, "µs") == "9999 µs"
    assert format_value(807.0, "µs") == "807 µs"
    assert format_value(125_000_000.0, "µs") == "125 s"
    assert format_value(45_000.0, "ns") == "45 µs"
    assert format_value(12_500.0, "ms") == "12.50 s"


def test_counts_keep_their_suffixes() -> None:
    assert format_value(15_200.0, "IOPS") == "15.2k IOPS"
    assert format_value(25_000_000.0, "IOPS") == "25.0M IOPS"
    assert format_value(None, "µs") == "-"
