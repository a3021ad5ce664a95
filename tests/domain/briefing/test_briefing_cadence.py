"""The briefing cadence (bot/domain/briefing/briefing_cadence.py), pure: offsets per category
from config/briefings.toml, and briefing times across the clock changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.domain.briefing.briefing_cadence import (
    BriefingConfig,
    briefing_times,
    config_for,
    parse_offset,
)
from bot.domain.fixture.fixture_model import Fixture

LONDON = ZoneInfo("Europe/London")


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


def cfg() -> BriefingConfig:
    return BriefingConfig({"C-IRD": tuple(map(parse_offset, ("T-48h", "T-3h", "T-60m"))),
                           "B": (parse_offset("T-3h"),), "X": (parse_offset("T-2d"),)}, LONDON)


def fixture(ko: datetime, cat: str = "C-IRD") -> Fixture:
    return Fixture("f", "Home", "Away", ko, "london_stadium", category=cat)


def test_config_cadence_per_category(settings):
    c = config_for(settings)
    assert [o.label for o in c.cadence["C-IRD"]] == ["T-48h", "T-3h", "T-60m"]
    assert [o.label for o in c.cadence["C"]] == ["T-24h", "T-2h"]
    assert [o.label for o in c.cadence["B"]] == ["T-3h"]
    assert c.cadence["A"] == () and c.cadence["police_free"] == ()
    assert c.summary_delay == timedelta(minutes=10)
    ko = utc(2026, 11, 28, 15)
    assert briefing_times(fixture(ko, "A"), c) == []
    assert [d for _, d in briefing_times(fixture(ko, "C"), c)] == [utc(2026, 11, 27, 15),
                                                                    utc(2026, 11, 28, 13)]
    with pytest.raises(ValueError):
        parse_offset("3 hours before")


def test_spring_clock_change():
    # Clocks go forward 01:00 GMT Sun 29 Mar 2026. Kick-off 15:00 BST = 14:00 UTC.
    ko = datetime(2026, 3, 29, 15, 0, tzinfo=LONDON)
    assert ko.astimezone(UTC) == utc(2026, 3, 29, 14)
    times = dict(briefing_times(fixture(ko), cfg()))
    assert times["T-3h"] == utc(2026, 3, 29, 11)  # 12:00 BST
    assert times["T-60m"] == utc(2026, 3, 29, 13)
    assert times["T-48h"] == utc(2026, 3, 27, 14)  # 48 real hours: Fri 14:00 GMT
    assert f"{times['T-48h'].astimezone(LONDON):%a %H:%M %Z}" == "Fri 14:00 GMT"
    # calendar days keep the wall-clock time across the change
    two_days = dict(briefing_times(fixture(ko, "X"), cfg()))["T-2d"]
    assert f"{two_days.astimezone(LONDON):%a %H:%M %Z}" == "Fri 15:00 GMT"


def test_autumn_clock_change():
    # Clocks go back 01:00 UTC Sun 25 Oct 2026. Kick-off 13:30 GMT = 13:30 UTC.
    ko = datetime(2026, 10, 25, 13, 30, tzinfo=LONDON)
    assert ko.astimezone(UTC) == utc(2026, 10, 25, 13, 30)
    times = dict(briefing_times(fixture(ko), cfg()))
    assert times["T-3h"] == utc(2026, 10, 25, 10, 30)  # 10:30 GMT
    assert f"{times['T-48h'].astimezone(LONDON):%a %H:%M %Z}" == "Fri 14:30 BST"
    two_days = dict(briefing_times(fixture(ko, "X"), cfg()))["T-2d"]
    assert f"{two_days.astimezone(LONDON):%a %H:%M %Z}" == "Fri 13:30 BST"
    # an early kick-off in the repeated hour: 01:30 happens twice; fold=0 is the BST one
    early = datetime(2026, 10, 25, 1, 30, tzinfo=LONDON)
    assert dict(briefing_times(fixture(early, "B"), cfg()))["T-3h"] == utc(2026, 10, 24, 21, 30)
