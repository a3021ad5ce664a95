"""Stewarding (issue 24) through python-telegram-bot against the fake Bot API: the scheduled
briefing's one-tap sign-off (version-stamped, a double tap counted once, a changed briefing
asks again, /signoff names who has not), the automatic roll call at kick-off - 90 min sent
once by two replicas, and the missing-person police timer at T+15 min unless found first."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

from bot.app import build_core
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.delivery.durable import OutboxReader
from bot.runtime import attach_scheduler, scheduler_for
from bot.store import Store
from bot.store.outbox import Outbox
from handlers import sweep_escalations
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
    sent_message,
)

ADMIN = 300000002
STEWARDS = -1001000000003  # channels.toml: the stewards audience's group


def staff(core: Core) -> None:
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    core.roster[f"telegram:{ADMIN}"] = Member("telegram", str(ADMIN), "admin", "Ops admin")


def briefing_in(fake: FakeTelegram, chat: int, version: str = "") -> dict:  # noqa: F811
    hits = [m for (c, _), m in fake.messages.items()
            if c == chat and f"Version {version}" in m.get("text", "")]
    assert hits, fake.describe(20)
    return hits[-1]


async def tap(fake: FakeTelegram, who: int, msg: dict, needle: str) -> None:  # noqa: F811
    [[button]] = msg["reply_markup"]["inline_keyboard"]
    before = len(fake.calls)
    await Feed(fake)(fake.callback_update(who, msg, button["callback_data"]))
    await fake.wait_for(lambda calls: [c for c in calls[before:] if c.ok and needle in str(
        c.params.get("text"))])


async def test_the_scheduled_briefing_is_signed_off_once_and_a_new_version_asks_again(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    staff(core)
    sched = attach_scheduler(core, scheduler_for(core, clock, live=False))
    await sched.start()
    await sched.run_due(START + timedelta(minutes=46))  # T-60m: 18:45 (the roll call too)
    msg = briefing_in(fake, STEWARDS, "v")
    version = msg["text"].split("Version ")[1].split()[0]
    [[button]] = msg["reply_markup"]["inline_keyboard"]
    assert button["text"] == f"✅ I have read it ({version})"
    await tap(fake, AWAY_GATE, msg, f"Briefing {version} signed off")
    await tap(fake, AWAY_GATE, msg, f"Briefing {version} signed off")  # a double tap
    fx = await core.active_fixture()
    events = [e for e in await core.store.events(fx.id) if e.kind == "briefing.acknowledged"]
    assert len(events) == 1 and events[0].by == f"telegram:{AWAY_GATE}"
    signoff = await ask(fake, SO, "/signoff", "Signed off")
    assert f"Version {version}, first sent 18:45" in signoff
    assert "Signed off: 1/3 stewards (33%)" in signoff
    assert "Not yet: Steward 14 (STB upper), Supervisor North" in signoff
    await ask(fake, SO, "/status", f"Briefing {version}: 1/3 stewards signed off (33%)")

    await ask(fake, ADMIN, "/fixture note gates Gates C and D close at 19:30", "note set")
    await ask(fake, SO, "/briefing send", "posted to the command and steward channels")
    new = briefing_in(fake, STEWARDS, "v")
    newer = new["text"].split("Version ")[1].split()[0]
    assert newer != version
    await tap(fake, AWAY_GATE, msg, f"The briefing has changed since {version}")
    status = await ask(fake, SO, "/status", f"Briefing {newer}: 0/3 stewards signed off (0%)")
    assert "Steward 21 (away turnstiles)" in status  # the old sign-off does not count
    await tap(fake, AWAY_GATE, new, f"Briefing {newer} signed off")
    await ask(fake, SO, "/signoff", "Signed off: 1/3 stewards (33%)")
    await sched.stop()


async def test_signoff_counts_who_had_read_it_before_the_turnstiles_opened(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    staff(core)
    await ask(fake, SO, "/signoff", "No briefing has gone to stewards yet")
    await ask(fake, AWAY_GATE, "/briefed", "No briefing has gone to stewards yet")
    await ask(fake, AWAY_GATE, "/briefing", "Version v")
    await ask(fake, AWAY_GATE, "/briefed", "signed off")  # typed: the current version
    clock.set(START + timedelta(minutes=15))
    await ask(fake, SO, "/timing turnstiles", "Turnstiles open")
    got = await ask(fake, SO, "/signoff", "Before the turnstiles opened (18:15): 1/3 (33%)")
    assert "Signed off: 1/3" in got
    await ask(fake, SO, "/status", "33% before turnstiles opened")
    await ask(fake, SO, "/signoff nonsense", "Version")  # reads take no arguments but pages


async def test_the_automatic_roll_call_goes_out_once_from_two_replicas(
        core: Core, fake: FakeTelegram, polling, clock, redis_url, settings) -> None:  # noqa: F811
    staff(core)
    store2 = Store.from_url(redis_url)
    core2 = build_core(store2, settings, clock, cache_ttl=0)
    for c in (core, core2):
        c.notifier.outbox = Outbox(c.store.gateway)
    scheds = [attach_scheduler(c, scheduler_for(c, clock, live=False)) for c in (core, core2)]
    for s in scheds:
        await s.start()
    fx = await core.active_fixture()
    [slot] = [s for s in scheds[0].jobs.values() if s.kind == "rollcall"]
    assert slot.label == "T-90m" and slot.due == fx.kickoff - timedelta(minutes=90)
    await asyncio.gather(*(s.run_due(START + timedelta(minutes=20)) for s in scheds))
    reader = OutboxReader(core.notifier, Outbox(core.store.gateway), owner="r1", block_ms=100,
                          rescan_s=0.1)
    reader.start()
    await reader.drain()
    got = await fake.wait_for(sends_to(AWAY_GATE, "📋 Roll call T-90m"))
    await fake.wait_for(sends_to(CONTROL, "📋 Roll call T-90m"))
    rows = got[0].params["reply_markup"]["inline_keyboard"]
    assert [b["text"] for row in rows for b in row] == ["On post: Gate B search lane 1 ✓",
                                                        "On post: Gate B search lane 2 ✓"]
    await reader.drain()
    assert len(sends_to(AWAY_GATE, "Roll call")(fake.calls)) == 1
    ids = await core.store.gateway.r.lrange(f"md:{{{fx.id}}}:bc:ids", 0, -1)
    assert len(ids) == 1
    latest = await core.facades.stewarding.latest(fx.id)
    assert latest is not None and latest.kind == "rollcall" and latest.sent == 3
    await reader.stop()
    for s in scheds:
        await s.stop()
    await store2.close()


async def test_a_fixture_sets_its_own_roll_call_time_or_none(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    staff(core)
    sched = attach_scheduler(core, scheduler_for(core, clock, live=False))
    await sched.start()
    await ask(fake, ADMIN, "/fixture note rollcall T-1h", "note set")
    fx = await core.active_fixture()
    [slot] = [s for s in sched.jobs.values() if s.kind == "rollcall"]
    assert slot.due == fx.kickoff - timedelta(hours=1) and slot.label == "T-1h"
    await ask(fake, ADMIN, "/fixture note rollcall soon", "The roll call time is T-")
    await ask(fake, ADMIN, "/fixture note rollcall off", "note set")
    assert not [s for s in sched.jobs.values() if s.kind == "rollcall"]
    await sched.run_due(fx.kickoff)
    assert not sends_to(AWAY_GATE, "Roll call")(fake.calls)
    await sched.stop()


MISSING = "/missing age=7 desc=red coat, blue hat, fair hair seen=gate b at=19:20"


async def test_a_missing_child_goes_to_the_police_at_t_plus_15_unless_found(
        core: Core, fake: FakeTelegram, polling, clock, redis_url, settings) -> None:  # noqa: F811
    staff(core)
    said = await ask(fake, SO, MISSING, "Police are told at 18:15")
    mid = re.findall(r"M-[0-9a-f]{6}", said)[0]
    await fake.wait_for(sends_to(AWAY_GATE, "red coat"))
    assert await sweep_escalations(core, core.store, START + timedelta(minutes=14)) == []
    # a restart: another process, built afresh, finds the deadline in Redis
    store2 = Store.from_url(redis_url)
    core2 = build_core(store2, settings, clock, cache_ttl=0)
    await sweep_escalations(core2, core2.store, START + timedelta(minutes=1))  # nothing due yet
    outs = await sweep_escalations(core, core.store, START + timedelta(minutes=15))
    assert sorted(o.audience for o in outs) == ["control", "police"]
    police = next(o for o in outs if o.audience == "police").reply
    assert police.title.startswith(f"🔎 MISSING CHILD {mid}: not found after 15 min")
    assert "red coat, blue hat" in police.text and "Last seen: Away turnstiles" in police.text
    await fake.wait_for(sends_to(CONTROL, f"MISSING CHILD {mid}: not found after 15 min"))
    assert await sweep_escalations(core2, core2.store, START + timedelta(minutes=16)) == []  # once
    fx = await core.active_fixture()
    assert (await core.facades.stewarding.search(fx.id, mid))["search"] == "police"
    told = []
    core.notifier.taps.append(lambda out: _keep(told, out))
    await ask(fake, SO, f"/found {mid} with her father at the Gate B family point", "sent to")
    assert {o.audience for o in told} >= {"police", "control"}  # the police hear it is over
    assert (await core.facades.stewarding.search(fx.id, mid))["search"] == "found"
    await store2.close()


async def _keep(told: list, out) -> None:
    told.append(out)


async def test_found_first_stops_the_police_timer(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    staff(core)
    said = await ask(fake, SO, MISSING, "Police are told at")
    mid = re.findall(r"M-[0-9a-f]{6}", said)[0]
    clock.set(START + timedelta(minutes=9))
    await ask(fake, SO, "/found M-zzzzzz the family stand", "No missing-person report")
    await ask(fake, SO, f"/found {mid} reunited at the Gate B family point", "sent to")
    assert await sweep_escalations(core, core.store, START + timedelta(minutes=16)) == []
    fx = await core.active_fixture()
    search = await core.facades.stewarding.search(fx.id, mid)
    assert search["search"] == "found" and search["found_at"].endswith("18:09:00+00:00")
    assert not [c for c in fake.calls if "not found after" in str(c.params.get("text"))]
    assert await core.facades.deadlines.deadlines(fx.id) == {}


NEW = 300000041  # joins by invite, then links their account to tabard 311 on the rota


async def linked_steward(core: Core, fake: FakeTelegram) -> None:  # noqa: F811
    """Staff, a rota with tabard 311 on it, and NEW joined by invite and linked to it."""
    staff(core)
    await core.facades.members.create_invite("stw311", "steward", "console:admin", 3600)
    await Feed(fake)(fake.message_update(NEW, "/start stw311", first_name="Phone"))
    await fake.wait_for(sends_to(NEW, "registered as"))
    await ask(fake, SO, "/deploy import\nsteward id,name,post\n311,A. Steward,stb_250_gangway\n",
              "Deployed A. Steward [311]")
    await ask(fake, NEW, "/tabard 311", "Your account is tabard 311")


async def test_signoff_counts_the_stewards_linked_to_a_tabard_by_the_rota_s_name(
        core: Core, fake: FakeTelegram, polling) -> None:  # noqa: F811
    await linked_steward(core, fake)
    await ask(fake, NEW, "/briefing", "Version v")
    got = await ask(fake, SO, "/signoff", "Signed off: 0/4 stewards (0%)")
    assert "A. Steward" in got.split("Not yet:")[1]  # by the rota's name, not "Phone"
    await ask(fake, NEW, "/briefed", "signed off")
    got = await ask(fake, SO, "/signoff", "Signed off: 1/4 stewards (25%)")
    assert "A. Steward" not in got.split("Not yet:")[1]
    assert "Not yet: Steward 14 (STB upper), Steward 21 (away turnstiles), Supervisor North" \
        in got
    await ask(fake, SO, "/status", "Briefing v")
    status = await ask(fake, SO, "/status", "1/4 stewards signed off (25%)")
    assert "A. Steward" not in status


async def test_the_automatic_roll_call_reaches_the_stewards_linked_to_a_tabard(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    await linked_steward(core, fake)
    core.notifier.outbox = Outbox(core.store.gateway)
    sched = attach_scheduler(core, scheduler_for(core, clock, live=False))
    await sched.start()
    reader = OutboxReader(core.notifier, core.notifier.outbox, owner="r1", block_ms=100,
                          rescan_s=0.1)
    try:
        await sched.run_due(START + timedelta(minutes=20))
        reader.start()
        await reader.drain()
        await fake.wait_for(sends_to(NEW, "📋 Roll call T-90m"))
        fx = await core.active_fixture()
        latest = await core.facades.stewarding.latest(fx.id)
        assert latest is not None and latest.kind == "rollcall" and latest.sent == 4
    finally:
        await reader.stop()
        await sched.stop()


def said_to(chat: int, needle: str):  # noqa: ANN201
    """Predicate: a message sent or edited in place in a chat with needle in its text."""
    return lambda calls: [c for c in calls if c.ok and c.params.get("chat_id") == chat
                          and c.method in ("sendMessage", "editMessageText")
                          and needle in str(c.params.get("text"))]


async def press(fake: FakeTelegram, who: int, needle: str, label: str,  # noqa: F811
                then: str) -> None:
    """Tap the button `label` on the latest message with `needle`; wait for `then`."""
    msg = sent_message(fake, who, needle)
    data = next(b["callback_data"] for row in msg["reply_markup"]["inline_keyboard"]
                for b in row if b["text"] == label)
    before = len(fake.calls)
    await Feed(fake)(fake.callback_update(who, msg, data))
    await fake.wait_for(lambda calls: said_to(who, then)(calls[before:]))


async def test_the_guided_missing_form_taps_through_to_the_exit_posts(
        core: Core, fake: FakeTelegram, polling, clock) -> None:  # noqa: F811
    staff(core)
    for typed, then in (("/missing", "How old?"), ("7", "Describe them"),
                        ("red coat, blue cap, about 120cm", "Where were they last seen?")):
        await ask(fake, SO, typed, then)  # each answer typed, each next question asked
    await press(fake, SO, "Where were they last seen?", "Away turnstiles (Gate B)",
                "When were they last seen?")
    await press(fake, SO, "When were they last seen?", "Just now", "This goes to every")
    confirm = sent_message(fake, SO, "This goes to every")["text"]
    assert "Age 7. red coat, blue cap, about 120cm" in confirm
    assert sends_to(AWAY_GATE, "MISSING")(fake.calls) == []  # nothing before the tap
    await press(fake, SO, "This goes to every", "Send to supervisors and exits",
                "Police are told at")
    alert = (await fake.wait_for(sends_to(AWAY_GATE, "MISSING CHILD")))[-1]
    assert "red coat, blue cap, about 120cm" in alert.params["text"]
    assert "Last seen: Away turnstiles (Gate B) at 18:00." in alert.params["text"]
    await fake.wait_for(sends_to(CONTROL, "red coat, blue cap"))
    await press(fake, SO, "This goes to every", "Send to supervisors and exits",
                "Already sent")  # a second tap on the same confirm
    assert len(sends_to(AWAY_GATE, "MISSING CHILD")(fake.calls)) == 1
