"""Early warning's rules (issue #23 item 10, bot/domain/early_warning.py): a zone and its
neighbours heating up warn once, before it boils over; rules generalise, and a quiet night
never warns. Warning control and command at run time: tests/schedule/test_early_warning_feed.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.domain.early_warning import Report, Rule, Rules, Watch, load_rules, matching
from bot.domain.grounds import load_ground

ROOT = Path(__file__).resolve().parents[2]
RULES = load_rules(ROOT / "config" / "early_warning.toml")
GROUND = load_ground(ROOT / "config" / "grounds" / "london_stadium.toml")
T0 = datetime(2026, 12, 2, 21, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def run(reports: list[Report]) -> list:
    watch = Watch(RULES, GROUND)
    return [w for r in reports for w in watch.feed(r)]


def test_missiles_both_ways_across_the_segregation_line_warn_once_before_the_breach() -> None:
    night = [Report(at(5), "seg_ne", 4, "missile", "away"),
             Report(at(6), "stb_walkway", 4, "missile", "home"),
             Report(at(12), "stb_walkway", 5, "segregation_breach", "away"),
             Report(at(14), "stb_walkway", 5, "disorder")]
    [w] = run(night)
    assert w.text == ("Early warning — NE segregation: 2 × S4 throwing missiles both ways "
                      "in 1 min, risk of breach")
    assert (at(12) - w.reports[-1].at).total_seconds() >= 300  # the lead before the S5
    assert "stb_walkway" in w.zones


def test_a_crowd_building_at_a_gate_warns() -> None:
    [w] = run([Report(at(0), "gate_c", 2, "crowd_density"),
               Report(at(2), "gate_c", 2, "crowd_density"),
               Report(at(4), "gate_c", 3, "crowd_density")])
    assert w.zone == "gate_c" and w.text.endswith("risk of crushing")


def test_trouble_at_another_stand_warns_and_joined_reports_count() -> None:
    # the same incident reported twice (the second joined it) is two reports
    [w] = run([Report(at(0), "bms_lower", 4, "disorder"),
               Report(at(1), "bms_lower", 4, "disorder")])
    assert w.zone == "bms_lower" and "2 × S4 disorder / fight" in w.text


def test_a_quiet_night_of_scattered_low_severity_reports_never_warns() -> None:
    zones = ["gate_a", "bms_upper", "ws_lower", "pudding_mill", "stb_upper", "gate_e",
             "bbs_lower", "ws_walkway"]
    night = [Report(at(7 * i), zones[i % len(zones)], 1 + i % 2, "antisocial")
             for i in range(40)]
    assert run(night) == []


def test_severity_rising_warns_and_a_warned_area_stays_quiet_for_a_while() -> None:
    rising = Rules((Rule("severity rising", 3, 4, rising=True),), 300, 1800)
    watch = Watch(rising, GROUND)
    got = [w for r in (Report(at(0), "ws_lower", 2, "antisocial"),
                       Report(at(1), "ws_lower", 3, "disorder"),
                       Report(at(2), "ws_upper", 4, "disorder"),
                       Report(at(3), "ws_lower", 4, "disorder")) for w in watch.feed(r)]
    assert len(got) == 1 and got[0].rule == "severity rising"
    assert matching(Rule("r", 3, 4, rising=True),
                    [Report(at(0), "ws", 4, "x"), Report(at(1), "ws", 4, "x"),
                     Report(at(2), "ws", 4, "x")]) == []  # flat is not rising


def test_rules_must_make_sense(tmp_path) -> None:
    bad = tmp_path / "ew.toml"
    bad.write_text("[[rule]]\nname = 'x'\nreports = 0\n")
    with pytest.raises(ValueError, match="reports >= 1"):
        load_rules(bad)
