"""Early warning (issues #23 item 10 and #35, bot/domain/early_warning.py): a zone and its
neighbours heating up warn once, before it boils over, from every signal a Safety Officer
weighs: reports here and next door, crowd-pressure words, people counts, reports coming
faster, the turnstiles. A warning stands until it clears or control dismisses it. Warning
control at run time: tests/schedule/test_early_warning_feed.py."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.config_check import check_config
from bot.domain.crowd_signals import IngressReading
from bot.domain.early_warning import Report, Watch, load_rules, pressure_words_in
from bot.domain.grounds import load_ground

ROOT = Path(__file__).resolve().parents[2]
RULES = load_rules(ROOT / "config" / "early_warning.toml")
GROUND = load_ground(ROOT / "config" / "grounds" / "london_stadium.toml")
T0 = datetime(2026, 12, 2, 19, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def said(minutes: float, zone: str, sev: int, typ: str, text: str = "", people: int = 0,
         key: str = "") -> Report:
    """A report as the bot takes it in: its pressure words matched on its own text."""
    return Report(at(minutes), zone, sev, typ, words=pressure_words_in(text, RULES.pressure_words),
                  people=people, key=key or f"{minutes}:{zone}:{text}")


def run(reports: list[Report], watch: Watch | None = None) -> list:
    watch = watch or Watch(RULES, GROUND)
    return [w for r in reports for w in watch.feed(r)]


def gate(minutes: float, rate: float, *, stalled: bool = False, inside: int = 5000,
         capacity: int = 17000, zone: str = "gate_e") -> IngressReading:
    return IngressReading(zone, at(minutes), inside, capacity, rate, 176.0, stalled)


def test_missiles_both_ways_across_the_segregation_line_warn_once_before_the_breach() -> None:
    night = [Report(at(5), "seg_ne", 4, "missile", "away"),
             Report(at(6), "stb_walkway", 4, "missile", "home"),
             Report(at(12), "stb_walkway", 5, "segregation_breach", "away"),
             Report(at(14), "stb_walkway", 5, "disorder")]
    [w] = run(night)
    assert w.text == ("Early warning — NE segregation: 2 × S4 throwing missiles both ways "
                      "in 1 min, risk of breach")
    assert (at(12) - w.at).total_seconds() >= 300  # the lead before the S5
    assert "stb_walkway" in w.zones and w.action.startswith("Reinforce the segregation line")


def test_the_gate_build_up_of_issue_35_warns_at_the_gate_minutes_before_the_crush() -> None:
    # a steward at gate E: pressure and people climbing the barriers; the same report again
    # (redelivered: one report); two more from the concourse next to it and the turnstile bank
    first = said(0, "gate_e", 3, "crowd_density", "crowd pressure, people climbing the barriers")
    night = [first, first,
             said(1, "bms_concourse", 3, "crowd_density", "pushing towards the gate", 150),
             said(2, "gate_e", 3, "entry", "pressure on the turnstiles")]
    got = run(night)
    [w] = got  # one warning for the gate and the concourse beside it
    assert "gate_e" in w.zones and w.zone in ("gate_e", "bms_concourse")
    assert w.at <= at(2) and (at(11) - w.at).total_seconds() >= 300
    assert [r.zone for r in w.reports][:2] == ["gate_e", "bms_concourse"]  # counted once
    assert "crowd-pressure words" in w.rule and w.text.endswith("risk of crushing")


def test_neighbours_count_and_places_far_apart_do_not() -> None:
    far = [said(0, "gate_e", 3, "crowd_density", "busy"),
           said(1, "gate_a", 3, "crowd_density", "busy"),
           said(2, "ws_upper", 3, "crowd_density", "busy")]
    assert run(far) == []  # the same reports scattered round the ground
    near = [said(0, "gate_e", 3, "crowd_density", "busy"),
            said(1, "bms_concourse", 3, "crowd_density", "busy"),
            said(2, "gate_e", 3, "crowd_density", "busy")]
    [w] = run(near)
    assert w.zone == "gate_e" and "bms_concourse" in w.zones


def test_a_report_that_joined_an_incident_elsewhere_counts_where_it_was_seen() -> None:
    # both joined INC-3 in the concourse; the warning is at the gate where they were seen
    night = [dataclasses.replace(said(0, "gate_e", 3, "crowd_density", "crush at the gate"),
                                 ref="INC-3"),
             dataclasses.replace(said(1, "gate_e", 3, "entry", "can't move"), ref="INC-3")]
    [w] = run(night)
    assert w.zone == "gate_e" and {r.ref for r in w.reports} == {"INC-3"}


@pytest.mark.parametrize("signal", ["words", "people", "acceleration"])
def test_each_report_signal_tips_a_zone_over(signal: str) -> None:
    plain = [said(0, "gate_c", 3, "other", "queue"), said(2, "gate_c", 3, "other", "queue")]
    assert run(plain) == []
    if signal == "words":
        tipped = [said(0, "gate_c", 3, "other", "queue, people can't move"),
                  said(2, "gate_c", 3, "other", "pushing at the barrier")]
    elif signal == "people":
        tipped = [said(0, "gate_c", 3, "other", "queue", 300),
                  said(2, "gate_c", 3, "other", "queue", 200)]
    else:  # the same three reports, coming faster
        spread = [said(m, "gate_c", 3, "other", "queue") for m in (0, 4, 8)]
        assert run(spread) == []
        tipped = [said(m, "gate_c", 3, "other", "queue") for m in (0, 4, 4.5)]
    assert [w.zone for w in run(tipped)] == ["gate_c"], signal


def test_pressure_words_are_whole_words_of_the_reports_own_text() -> None:
    assert pressure_words_in("People CAN’T MOVE by the barrier", RULES.pressure_words) == \
        ("can't move", "barrier")
    assert pressure_words_in("gateway to the bar, no pressures", RULES.pressure_words) == ()


TWO = [said(4, "gate_e", 3, "crowd_density", "queue building"),
       said(4.5, "bms_concourse", 3, "other", "queue building")]


@pytest.mark.parametrize("kind", ["surge", "stall", "full"])
def test_turnstiles_held_out_of_line_tip_the_reports_over(kind: str) -> None:
    watch = Watch(RULES, GROUND)

    def reading(m: float) -> IngressReading:
        if kind == "surge":
            return gate(m, 176 * 1.9)
        if kind == "stall":
            return gate(m, 0, stalled=True)
        return gate(m, 120, inside=16800)
    assert run(TWO, Watch(RULES, GROUND)) == []  # the reports alone
    got = [w for m in range(4) for w in watch.ingress(reading(m))]
    assert got == []  # the turnstiles alone
    got += run(TWO, watch)
    assert [w.zone for w in got] == ["gate_e"], kind
    assert got[0].ingress and got[0].ingress[-1].zone == "gate_e"
    assert "turnstiles" in got[0].text


def test_a_turnstile_blip_is_not_held_long_enough_to_count() -> None:
    watch = Watch(RULES, GROUND)
    got = [w for w in watch.ingress(gate(3.8, 0, stalled=True))]
    assert got + run(TWO, watch) == []


def test_a_warning_stands_until_it_clears_or_control_dismisses_it() -> None:
    watch = Watch(RULES, GROUND)
    night = [said(0, "gate_e", 3, "crowd_density", "crush at the gate"),
             said(1, "gate_e", 3, "crowd_density", "pushing")]
    [w] = run(night, watch)
    assert watch.tick(at(5)) == []  # still hot
    again = said(6, "gate_e", 4, "crowd_density", "surge")
    assert watch.feed(again) == []  # one warning for the area while it stands
    [c] = watch.tick(at(6 + RULES.window_s / 60 + 1))  # its reports aged out of the window
    assert (c.zone, c.why) == ("gate_e", "cleared") and set(w.zones) == set(c.zones)
    watch2 = Watch(RULES, GROUND)
    run(night, watch2)
    d = watch2.dismiss("bms_concourse", at(2))  # a zone of its area
    assert d is not None and d.why == "dismissed" and watch2.active == {}
    # dismissed: the area stays quiet a while, however it goes on
    assert watch2.feed(said(3, "gate_e", 4, "crowd_density", "crush")) == []


def test_a_quiet_night_of_scattered_low_severity_reports_never_warns() -> None:
    zones = ["gate_a", "bms_upper", "ws_lower", "pudding_mill", "stb_upper", "gate_e",
             "bbs_lower", "ws_walkway"]
    night = [said(7 * i, zones[i % len(zones)], 1 + i % 2, "antisocial", "queue at the gate")
             for i in range(40)]
    assert run(night) == []


def test_thresholds_that_make_no_sense_are_refused_at_start_up(tmp_path) -> None:
    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    text = (ROOT / "config" / "early_warning.toml").read_text()
    (cfg / "early_warning.toml").write_text(text.replace("clear_below = ", "clear_below = 9"))
    _, problems = check_config(cfg)
    assert any("early_warning.toml" in p and "clear_below" in p for p in problems), problems
    (cfg / "early_warning.toml").write_text("threshhold = 3\n" + text)
    assert any("unknown key(s) threshhold" in p for p in check_config(cfg)[1])


KICKOFF = at(45)  # T0 is 19:00, kick-off 19:45


def test_a_place_word_alone_is_not_crowd_pressure() -> None:
    watch = Watch(RULES, GROUND)
    radio = said(0, "gate_a", 3, "other", "steward needs a radio at the gate")
    assert radio.words == ("gate",)  # found, and shown in the evidence
    assert watch.report_value(radio) == watch.report_value(said(0, "gate_a", 3, "other", "x"))
    pushing = said(0, "gate_a", 3, "other", "pushing at the gate")
    assert watch.report_value(pushing) > watch.report_value(radio)


def test_one_pressure_report_at_an_exit_at_full_time_warns_and_the_same_before_the_match_not(
) -> None:
    exit_ft = [said(45 + 112, "gate_c", 3, "other", "crowd pressure building at the front")]
    [w] = run(exit_ft, Watch(RULES, GROUND, KICKOFF))
    assert "gate_c" in w.zones and w.text.endswith("risk of crushing")
    assert "crowd on the move" in w.rule
    early = [said(-30, "gate_c", 3, "other", "crowd pressure building at the front")]
    assert run(early, Watch(RULES, GROUND, KICKOFF)) == []  # 18:30: nobody on the move
    assert run(exit_ft, Watch(RULES, GROUND)) == []  # no kick-off known: no phase


def test_a_serious_report_in_a_concourse_at_half_time_warns_a_busy_half_time_does_not() -> None:
    busy = [said(45 + 48 + i, "ws_concourse", 2, "crowd_density",
                 "busy concourse, queues at the bars", 150) for i in range(4)]
    assert run(busy, Watch(RULES, GROUND, KICKOFF)) == []
    [w] = run([said(45 + 50, "ws_concourse", 4, "disorder", "fans fighting in the queue")],
              Watch(RULES, GROUND, KICKOFF))
    assert w.zone == "ws_concourse"


def test_stewards_saying_pressure_together_warn_the_same_reports_in_other_words_do_not() -> None:
    texts = ("pushing at the gate", "fans can't move near the turnstiles", "crush at the front")
    together = [said(i * 0.5, "gate_e", 2, "other", t) for i, t in enumerate(texts)]
    [w] = run(together)
    assert w.zone == "gate_e" and w.at == at(1)
    plain = [said(i * 0.5, "gate_e", 2, "other", t) for i, t in
             enumerate(("queue is long", "fans are angry", "need more stewards"))]
    assert run(plain) == []


def test_a_bank_stalled_for_minutes_warns_a_scanner_restart_does_not() -> None:
    watch = Watch(RULES, GROUND)
    restart = [w for m in (0, 1, 2) for w in watch.ingress(gate(m, 0.0, stalled=True))]
    assert restart == [] and watch.ingress(gate(3, 170.0)) == []
    watch = Watch(RULES, GROUND)
    got = [(m, w) for m in range(6) for w in watch.ingress(gate(m, 0.0, stalled=True))]
    [(m, w)] = got
    assert m == 4 and "stalled turnstiles" in w.rule and "stalled" in w.text
