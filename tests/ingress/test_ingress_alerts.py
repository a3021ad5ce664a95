"""Ingress alerts (issue 35): each kind reaches control and command once, is logged, and says
what to do; the forecast of time to full (pure model: tests at the bottom)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.dispatch import Core
from bot.domain.ingress_model import Counts, alerts, picture
from tests.support.ingress import pour
from tests.support.lifecycle import log_of

_ids = itertools.count(1)


@pytest.fixture
def sent(core: Core) -> list:
    got: list = []

    async def tap(out) -> None:
        got.append(out)
    core.notifier.taps.append(tap)
    return got


def _alerts(sent: list, title: str) -> list:
    return [o for o in sent if o.reply.title == title]


async def test_crossing_each_threshold_alerts_control_and_command_once(core, clock, sent):
    raised = await pour(core, clock, "gate_away", 180, 14.5)  # 2,610 of 3,000: 87%
    assert [(a.kind, a.level) for a in raised if a.zone == "away_upper"] == [("threshold", 85)]
    alarm = _alerts(sent, "Ingress alarm")
    assert sorted(o.audience for o in alarm) == ["command", "control"]
    assert "Away section, upper tier" in alarm[0].reply.text
    assert "past the 85% alarm" in alarm[0].reply.text
    await pour(core, clock, "gate_away", 180, 0.5)  # still 85-95%: no second alarm
    assert len(_alerts(sent, "Ingress alarm")) == 2
    [logged] = await log_of(core, "ingress.alert")
    assert (logged.data["alert"], logged.data["zone"], logged.data["level"]) == (
        "threshold", "away_upper", 85)


async def test_a_stand_at_capacity_says_close_it_naming_the_entry_points(core, clock, sent):
    raised = await pour(core, clock, "gate_away", 180, 17)  # 3,060: over 3,000
    assert [a.kind for a in raised if a.zone == "away_upper"] == ["threshold", "threshold",
                                                                   "full"]
    [full] = [o for o in _alerts(sent, "Stand full: close it") if o.audience == "control"]
    assert "AT CAPACITY (3,0" in full.reply.text
    assert "close it. Close Away turnstiles (Gate B)." in full.reply.text


async def test_a_bank_counting_nothing_while_fans_still_come_is_stalled(core, clock, sent):
    await pour(core, clock, "gate_e", 200, 5)
    raised = await pour(core, clock, "gate_e", 0, 1.9)  # batches still come, all zeros
    assert raised == []
    raised = await pour(core, clock, "gate_e", 0, 0.5)
    assert [(a.kind, a.zone) for a in raised] == [("stalled", "gate_e")]
    [o] = [o for o in _alerts(sent, "Turnstiles stalled") if o.audience == "control"]
    assert o.reply.text.startswith("Gate E turnstiles: the turnstile bank is STALLED")
    status = (await core.handle(_cmd("/status"))).reply.text
    assert "Ingress: 990/62,500 in (2%); watch bms 7% (/ingress)" in status.splitlines()


async def test_an_entry_rate_above_the_safe_rate_alerts(core, clock, sent):
    assert await pour(core, clock, "gate_c", 400, 3) == []  # safe: 440 a minute
    raised = await pour(core, clock, "gate_c", 520, 2.5)
    assert [(a.kind, a.zone) for a in raised] == [("rate", "gate_c")]
    [o] = [o for o in _alerts(sent, "Entry rate above safe") if o.audience == "control"]
    assert "above the safe 440/min" in o.reply.text


async def test_a_stand_that_cannot_be_in_by_kick_off_is_flagged(core, clock, sent):
    assert await pour(core, clock, "gate_e", 200, 2) == []  # 18:02: 103 min to kick-off
    clock.advance(timedelta(minutes=73))  # 19:15, kick-off 19:45
    raised = await pour(core, clock, "gate_e", 200, 1)  # 13,400 to come at 264/min: 51 min
    assert [(a.kind, a.zone) for a in raised] == [("late", "bms")]
    [o] = [o for o in _alerts(sent, "Not in by kick-off") if o.audience == "control"]
    assert "Bobby Moore Stand will NOT be in by kick-off" in o.reply.text
    assert "need 51 min at the planned 264/min, 30 min to kick-off" in o.reply.text


def _cmd(text: str):
    from bot.domain.messages import Command

    return Command(platform="console", chat="control", user="control", text=text,
                   dedupe_key=f"alerts:{next(_ids)}")


# ---------------------------------------------------------------- the forecast (pure)
T0 = datetime(2026, 12, 2, 19, 0, tzinfo=UTC)


def test_time_to_full_at_a_steady_rate_is_exact_and_says_whether_in_by_kick_off(core):
    plan = next(iter(core.grounds.values())).ingress
    # gate_f (West Stand, 16,000): 300 a minute for the last ten minutes, 10,000 in
    bins = {int(T0.timestamp()) - 30 * i: 150 for i in range(1, 21)}
    counts = Counts(T0, {"gate_f": 10_000}, {"gate_f": bins})
    ws = next(s for s in picture(plan, counts, T0 + timedelta(minutes=45)).stands
              if s.zone == "ws")
    assert ws.rate_per_min == pytest.approx(300, rel=0.05)
    assert abs((ws.full_at - (T0 + timedelta(minutes=20))).total_seconds()) < 90
    assert ws.in_by_kickoff is True
    late = next(s for s in picture(plan, counts, T0 + timedelta(minutes=15)).stands
                if s.zone == "ws")
    assert late.in_by_kickoff is False
    # 6,000 to come at the planned 264/min need 23 min, 15 left: flagged
    assert [a.kind for a in alerts(plan, picture(plan, counts, T0 + timedelta(minutes=15)))
            if a.zone == "ws"] == ["late"]
