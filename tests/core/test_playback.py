"""The playback clock: frames, play by the wall clock times the speed, step, jump, times typed."""

from __future__ import annotations

import datetime as dt

import pytest

from racperf_tui.core.playback import SPEEDS, PlaybackClock, PositionError, frames_of, parse_position


def test_playing_moves_by_wall_time_times_speed_and_stops_at_the_end() -> None:
    clock = PlaybackClock((0.0, 1.0, 2.0, 5.0), speed=2.0, playing=True)
    assert not clock.advance(0.4)  # 0.8 s of recording: still the first frame
    assert clock.advance(0.2) and clock.index == 1  # 1.2 s
    assert clock.advance(1.0) and clock.index == 2  # 3.2 s: the frame at 2 s until the one at 5
    assert clock.advance(1.0) and clock.at_end and not clock.playing
    clock.play()  # from the end: from the start again
    assert clock.index == 0 and clock.playing
    clock.pause()
    assert not clock.advance(10.0) and clock.index == 0


def test_step_pauses_and_stays_in_bounds_jump_takes_the_frame_at_or_before() -> None:
    clock = PlaybackClock((0.0, 1.0, 2.0), playing=True)
    assert clock.step(1) and clock.index == 1 and not clock.playing
    assert clock.step(5) and clock.at_end
    assert not clock.step(1)
    assert clock.step(-1) and clock.index == 1
    assert not clock.jump_to(1.99) and clock.index == 1
    assert clock.jump_to(-3.0) and clock.at_start
    assert clock.jump_to_text("2") and clock.at_end


def test_speeds_step_through_the_table() -> None:
    clock = PlaybackClock((0.0,), speed=1.0)
    assert clock.faster() == 2.0 and clock.faster(-2) == 0.5
    assert clock.faster(100) == SPEEDS[-1] and clock.faster(-100) == SPEEDS[0]


def test_bad_recordings_are_refused() -> None:
    with pytest.raises(ValueError, match="no frames"):
        PlaybackClock(())
    with pytest.raises(ValueError, match="time order"):
        PlaybackClock((2.0, 1.0))
    with pytest.raises(ValueError, match="speed"):
        PlaybackClock((0.0,), speed=0)


def test_lock_step_frames_are_every_moment_of_either_once() -> None:
    assert frames_of([0.5, 1.0, 1.5, 1.0, 2.0, 0.5]) == (0.5, 1.0, 1.5, 2.0)


def test_times_typed_from_the_start_and_of_day() -> None:
    assert [parse_position(t) for t in ("90", "90s", "1m30s", "1:30", "1h2m", "+45", "0:01:05", "2.5")] == [
        90.0,
        90.0,
        90.0,
        90.0,
        3720.0,
        45.0,
        65.0,
        2.5,
    ]
    night = dt.datetime(2026, 12, 1, 23, 30, 0)
    assert parse_position("23:45", night) == 15 * 60
    assert parse_position("02:00", night) == 2.5 * 3600  # past midnight: the next day's
    assert parse_position("2026-12-02 00:00:30", night) == 30 * 60 + 30
    assert parse_position("10m", night) == 600.0
    with pytest.raises(PositionError, match="'soon': not a time; give a time from the start"):
        parse_position("soon")
    with pytest.raises(PositionError, match="no such time of day"):
        parse_position("25:00", night)
    with pytest.raises(PositionError, match="a time of day"):
        parse_position("tomorrow", night)
