"""Check-in record, live location and stand-down (issue 24 §2) through python-telegram-bot
against the fake Bot API: a steward's check-in and stand-down times on their duty record, a
shared live location kept with the check-in and moved silently by its later positions, and
control standing every steward on duty down in one write."""

from __future__ import annotations

import time
from datetime import timedelta

from bot.core.dispatch import Core
from bot.core.roles import Member
from rigs.fakes.telegram_api import FakeTelegram
from tests.conftest import START
from tests.support.signoff import (  # noqa: F401 (fixtures)
    AWAY_GATE,
    SO,
    ask,
)
from tests.support.telegram import (  # noqa: F401 (fixtures)
    CONTROL,
    Feed,
    fake,
    polling,
    sends_to,
)

EAST = 300000011  # a steward in the STB upper tier


async def test_a_live_location_is_kept_with_the_check_in_and_stand_down_has_times(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    await ask(fake, AWAY_GATE, "/standdown", "You are not checked in on a post")
    clock.set(START + timedelta(minutes=10))
    await ask(fake, AWAY_GATE, "/onpost gate_b_lane_1", "On post: Gate B search lane 1 ✓ 18:10")
    shared = fake.message_update(AWAY_GATE, location=(51.5390, -0.0160), live_period=3600)
    await Feed(fake)(shared)
    await fake.wait_for(sends_to(AWAY_GATE, "position is kept with your check-in and follows"))
    await polling.drain()
    before = len(fake.calls)
    t0 = int(time.time())
    for k in (1, 2):
        await Feed(fake)(fake.location_moved(shared, 51.5390 + k / 1000, -0.0160, at=t0 + k))
    await ask(fake, AWAY_GATE, "/whoami", "Steward")  # after the moves, in order
    said = [c for c in fake.calls[before:] if c.method == "sendMessage"]
    assert len(said) == 1, fake.describe(10)  # the moves are silent
    fx = await core.active_fixture()
    rec = (await core.facades.stewarding.duty(fx.id))[f"telegram:{AWAY_GATE}"]
    assert rec.post == "gate_b_lane_1" and rec.checked_in.endswith("18:10:00+00:00")
    assert (round(rec.lat or 0, 6), rec.lon) == (51.541, -0.016) and rec.on_duty
    assert rec.position_at.startswith(time.strftime("%Y-%m-%dT", time.gmtime(t0 + 2)))
    moves = [e for e in await core.store.events(fx.id) if e.kind == "steward.position"]
    assert [round(m.data["lat"], 6) for m in moves] == [51.539, 51.54, 51.541]
    clock.set(START + timedelta(hours=4, minutes=5))
    await ask(fake, AWAY_GATE, "/standdown all", "not for your role")
    await ask(fake, AWAY_GATE, "/standdown", "Stood down 22:05 ✓ (on duty from 18:10)")
    rec = (await core.facades.stewarding.duty(fx.id))[f"telegram:{AWAY_GATE}"]
    assert rec.stood_down.endswith("22:05:00+00:00") and not rec.on_duty
    await ask(fake, SO, "/status", "🏁 Stood down: 1/1 checked in (last 22:05)")
    # a location shared when off duty is not taken as a position
    await Feed(fake)(fake.message_update(AWAY_GATE, location=(51.5, -0.01)))
    await fake.wait_for(sends_to(AWAY_GATE, "Which incident is this for?"))


async def test_control_stands_every_steward_on_duty_down_at_once(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    core.roster[f"telegram:{EAST}"] = Member("telegram", str(EAST), "steward", "Tabard 311",
                                             "stb_upper")
    await ask(fake, SO, "/standdown all", "Nobody is checked in on duty")
    await ask(fake, AWAY_GATE, "/onpost gate_b_lane_1", "On post")
    await ask(fake, EAST, "/onpost stb_250_gangway", "On post")
    clock.set(START + timedelta(hours=4))
    await ask(fake, SO, "/standdown all", "Stood down 2 stewards at 22:00; each has been told")
    for who in (AWAY_GATE, EAST):
        await fake.wait_for(sends_to(who, "Stand down at 22:00: thank you"))
    await fake.wait_for(sends_to(CONTROL, "2 stewards stood down at 22:00"))
    fx = await core.active_fixture()
    duty = await core.facades.stewarding.duty(fx.id)
    assert {w: (d.post, d.checked_in[11:16], d.stood_down[11:16]) for w, d in duty.items()} == {
        f"telegram:{AWAY_GATE}": ("gate_b_lane_1", "18:00", "22:00"),
        f"telegram:{EAST}": ("stb_250_gangway", "18:00", "22:00")}
    await ask(fake, SO, "/standdown all", "Nobody is checked in on duty")  # done once


async def test_onpost_alone_offers_the_stewards_posts_as_one_tap_buttons(
        core: Core, fake: FakeTelegram, polling) -> None:  # noqa: F811
    core.roster[f"telegram:{EAST}"] = Member("telegram", str(EAST), "steward", "Tabard 311",
                                             "stb_upper")
    await ask(fake, EAST, "/onpost", "Which post are you on?")
    [msg] = [m for (c, _), m in fake.messages.items()
             if c == EAST and "Which post are you on?" in m.get("text", "")]
    rows = msg["reply_markup"]["inline_keyboard"]
    labels = [b["text"] for row in rows for b in row]
    assert "On post: Block 250 gangway ✓" in labels and all(
        label.startswith("On post: ") for label in labels)  # the zone's posts, by name
    [data] = [b["callback_data"] for row in rows for b in row
              if b["text"] == "On post: Block 250 gangway ✓"]
    before = len(fake.calls)
    await Feed(fake)(fake.callback_update(EAST, msg, data))
    await fake.wait_for(lambda calls: [c for c in calls[before:] if c.ok and
                                       "On post: Block 250 gangway ✓" in str(c.params.get("text"))
                                       and c.method != "answerCallbackQuery"])
    fx = await core.active_fixture()
    assert f"telegram:{EAST}" in await core.facades.stewarding.duty(fx.id)
