"""Briefing plans: re-timing, clock changes, exactly-once across replicas, restarts (the
cadence itself, pure: tests/domain/briefing/test_briefing_cadence.py)."""

from __future__ import annotations

import asyncio
from datetime import datetime

from bot.app import build_core
from bot.domain.clock import VirtualClock
from bot.runtime import attach_scheduler, scheduler_for
from bot.store import Store
from tests.support.scheduler import (  # noqa: F401 (fixtures)
    FX,
    FX_TITLE,
    Recorder,
    add,
    started,
    utc,
)


# ---------------------------------------------------------------- plans in Redis
async def test_plan_from_fixture_and_retiming(core, say, clock):
    s = await started(core, clock)
    await add(say, "Arsenal v Spurs 2026-11-28 15:00 cat=C-IRD")
    plan = await core.facades.plans.load_plan(FX)
    assert [(p.label, p.due) for p in plan] == [
        ("T-48h", utc(2026, 11, 26, 15)), ("T-3h", utc(2026, 11, 28, 12)),
        ("T-60m", utc(2026, 11, 28, 14))]
    assert {k for k in s.jobs if k.startswith(FX) and "rollcall@" not in k} == {
        p.key for p in plan}
    await say(f"/fixture use {FX} all", as_="admin")
    await say("/fixture kickoff 2026-11-28 17:30", as_="admin")
    plan = await core.facades.plans.load_plan(FX)
    assert [p.due for p in plan] == [utc(2026, 11, 26, 17, 30), utc(2026, 11, 28, 14, 30),
                                     utc(2026, 11, 28, 16, 30)]
    assert {k for k in s.jobs if k.startswith(FX) and "rollcall@" not in k} == {
        p.key for p in plan}
    await say("/fixture category B intelligence downgraded", as_="admin")
    assert [p.label for p in await core.facades.plans.load_plan(FX)] == ["T-3h"]
    await say("/fixture category A", as_="admin")
    assert await core.facades.plans.load_plan(FX) == []
    await say("/fixture category C", as_="admin")
    assert [p.label for p in await core.facades.plans.load_plan(FX)] == ["T-24h", "T-2h"]
    await say("/fixture cancel", as_="admin")
    assert await core.facades.plans.load_plan(FX) == []
    assert not any(k.startswith(FX) for k in s.jobs)
    await s.stop()


async def test_dst_end_to_end(core, say, clock):
    s = await started(core, clock)
    await add(say, "Arsenal v Spurs 2027-03-28 15:00 cat=C-IRD")  # spring change 2027
    plan = await core.facades.plans.load_plan("arsenal-spurs-20270328")
    assert [p.due for p in plan] == [utc(2027, 3, 26, 14), utc(2027, 3, 28, 11),
                                     utc(2027, 3, 28, 13)]
    await add(say, "Arsenal v Spurs 2027-10-31 13:30 cat=B")  # autumn change 2027
    plan = await core.facades.plans.load_plan("arsenal-spurs-20271031")
    assert [p.due for p in plan] == [utc(2027, 10, 31, 10, 30)]
    await s.stop()


async def test_run_due_fires_in_time_order_at_due_virtual_time(core, say, clock):
    rec = Recorder(core)
    s = await started(core, clock)
    await add(say, "Arsenal v Spurs 2026-11-28 15:00 cat=C-IRD")
    await s.run_due(utc(2026, 11, 28, 16))
    mine = [(t, r.title) for t, c, r in rec.sent if c == "command" and FX_TITLE in r.title]
    assert [t for t, _ in mine] == [utc(2026, 11, 26, 15), utc(2026, 11, 28, 12),
                                    utc(2026, 11, 28, 14)]
    assert ["T-48h" in m and "LATE" not in m for _, m in mine] == [True, False, False]
    assert clock.now() == utc(2026, 11, 28, 16)
    for p in await core.facades.plans.load_plan(FX):
        assert (await core.facades.plans.slot_claim(p))["state"] == "sent"
    await s.run_due(utc(2026, 11, 28, 18))  # nothing fires twice
    assert len(rec.titles()) == 3
    await s.stop()


async def test_fixture_added_late_skips_past_slots(core, say, clock):
    rec = Recorder(core)
    s = await started(core, clock)
    clock.set(utc(2026, 11, 28, 12, 30))  # after T-48h and T-3h
    await add(say, "Arsenal v Spurs 2026-11-28 15:00 cat=C-IRD")
    assert [p.label for p in await core.facades.plans.load_plan(FX)] == ["T-60m"]
    await s.run_due(utc(2026, 11, 28, 16))
    assert len(rec.titles()) == 1
    await s.stop()


async def test_two_replicas_send_each_briefing_once(core, say, clock, redis_url, settings):
    await add(say)
    store2 = Store.from_url(redis_url)
    core2 = build_core(store2, settings, clock, cache_ttl=0)
    rec1, rec2 = Recorder(core), Recorder(core2)
    s1, s2 = await started(core, clock), await started(core2, clock)
    await asyncio.gather(s1.run_due(utc(2026, 11, 28, 12)), s2.run_due(utc(2026, 11, 28, 12)))
    assert len(rec1.titles()) + len(rec2.titles()) == 1
    assert len(rec1.titles("stewards") + rec2.titles("stewards")) == 1
    await s1.stop()
    await s2.stop()
    await store2.close()


async def test_two_live_replicas_apscheduler_jobs_fire_once(core, say, clock, redis_url,
                                                            settings):
    await add(say)
    store2 = Store.from_url(redis_url)
    core2 = build_core(store2, settings, clock, cache_ttl=0)
    rec1, rec2 = Recorder(core), Recorder(core2)
    # wall-clock time is past these virtual due times: pause before the loop runs the jobs
    s1 = await started(core, clock, live=True)
    s1.aps.pause()
    s2 = await started(core2, clock, live=True)
    s2.aps.pause()
    key = f"{FX}/briefing@20261128T120000Z"
    assert s1.aps.get_job(key).next_run_time == utc(2026, 11, 28, 12)
    assert s2.aps.get_job(key).next_run_time == utc(2026, 11, 28, 12)
    clock.set(utc(2026, 11, 28, 12))
    await asyncio.gather(s1._fire_live(key), s2._fire_live(key))
    # delivery is the chat workers' (they ask the life-safety lane first): wait for it
    await asyncio.gather(core.notifier.drain(), core2.notifier.drain())
    assert len(rec1.titles()) + len(rec2.titles()) == 1
    # a re-time on one replica reaches the other through the plan in Redis
    await say(f"/fixture use {FX} all", as_="admin")
    await say("/fixture kickoff 2026-11-28 17:30", as_="admin")
    assert s1.aps.get_job(f"{FX}/briefing@20261128T143000Z") is not None
    await s2.resync()
    assert s2.aps.get_job(f"{FX}/briefing@20261128T143000Z") is not None
    await s1.stop()
    await s2.stop()
    await store2.close()


async def test_restart_before_due(core, say, clock):
    rec = Recorder(core)
    s1 = await started(core, clock)
    await add(say)
    await s1.stop()
    clock.set(utc(2026, 11, 28, 11))
    s2 = await started(core, clock)
    assert rec.titles() == []
    await s2.run_due(utc(2026, 11, 28, 12, 1))
    assert len(rec.titles()) == 1 and "LATE" not in rec.titles()[0]
    await s2.stop()


async def test_restart_during_outage_sends_late_once(core, say, clock, redis_url, settings):
    rec = Recorder(core)
    s1 = await started(core, clock)
    await add(say)
    await s1.stop()
    clock.set(utc(2026, 11, 28, 12, 40))  # down over the T-3h slot, back before kick-off
    store2 = Store.from_url(redis_url)
    core2 = build_core(store2, settings, clock, cache_ttl=0)
    rec2 = Recorder(core2)
    s2, s3 = await started(core2, clock), await started(core, clock)  # two replicas restart
    titles = rec.titles() + rec2.titles()
    assert len(titles) == 1 and "LATE (was due 12:00)" in titles[0]
    plan = await core.facades.plans.load_plan(FX)
    assert (await core.facades.plans.slot_claim(plan[0]))["state"] == "late"
    await s2.stop()
    await s3.stop()
    await store2.close()


async def test_restart_after_kickoff_records_missed_in_status(core, say, clock):
    rec = Recorder(core)
    s1 = await started(core, clock)
    await add(say)
    await s1.stop()
    clock.set(utc(2026, 11, 28, 15, 5))
    s2 = await started(core, clock)
    assert rec.titles() == []
    await say(f"/fixture use {FX} all", as_="admin")
    r = await say("/status", as_="police_commander")
    assert "Missed briefing: T-3h (12:00)" in r.reply.text, r.reply.text
    await s2.stop()


async def test_summary_after_full_time_once(core, say, clock, redis_url, settings):
    rec = Recorder(core)
    store2 = Store.from_url(redis_url)
    clock2 = VirtualClock(clock.now())  # each process has its own clock
    core2 = build_core(store2, settings, clock2, cache_ttl=0)
    rec2 = Recorder(core2)
    s1, s2 = await started(core, clock), await started(core2, clock2)
    fx = await core.active_fixture()
    await say("/incident missile @stb_walkway s4 coins", as_="steward")
    await say("/arrest missiles x2 inside away", as_="police_liaison")
    clock.set(utc(2026, 11, 25, 21, 40))
    await say("/phase full_time", as_="control")
    plan = await core.facades.plans.load_plan(fx.id)
    summary = [p for p in plan if p.kind == "summary"]
    assert [p.due for p in summary] == [utc(2026, 11, 25, 21, 50)]
    await s2.resync()  # the other replica learns of it from Redis
    await asyncio.gather(s1.run_due(utc(2026, 11, 25, 22)), s2.run_due(utc(2026, 11, 25, 22)))
    got = [(t, o) for t, c, o in rec.sent + rec2.sent if c == "summary"]
    assert len(got) == 1
    t, out = got[0]
    assert t == utc(2026, 11, 25, 21, 50) and out.images[0][:8] == b"\x89PNG\r\n\x1a\n"
    assert "Arrests: 2" in out.text
    await say("/phase egress", as_="control")  # a later phase does not plan a second one
    assert len([p for p in await core.facades.plans.load_plan(fx.id) if p.kind == "summary"]) == 1
    await s1.stop()
    await s2.stop()
    await store2.close()


async def test_tickers_run_at_due_times(core, say, clock):
    s = attach_scheduler(core, scheduler_for(core, clock, live=False))
    seen: list[datetime] = []

    async def sweep(now: datetime) -> None:
        seen.append(now)

    s.add_ticker(sweep, 1.0)
    await s.start()
    await add(say)
    await s.run_due(utc(2026, 11, 28, 13))
    assert seen[-1] == utc(2026, 11, 28, 13) and utc(2026, 11, 28, 12) in seen
    await s.stop()


async def test_three_durable_replicas_claim_and_queue_each_briefing_once(
        core, say, clock, redis_url, settings):
    """The claim and the outbox entry are one write: one replica wins, its briefing is
    durable at once, and a reader delivers it once per chat."""
    from bot.delivery.durable import OutboxReader
    from bot.store.outbox import Outbox

    await add(say)
    stores = [Store.from_url(redis_url) for _ in range(2)]
    cores = [core] + [build_core(s, settings, clock, cache_ttl=0) for s in stores]
    for c in cores:
        c.notifier.outbox = Outbox(c.store.gateway)
    scheds = [await started(c, clock) for c in cores]
    states = await asyncio.gather(*(s.run_due(utc(2026, 11, 28, 12)) for s in scheds))
    assert states is not None
    outbox = Outbox(core.store.gateway)
    await outbox.ensure_group(FX)
    entries = await outbox.read(FX, "peek", 10)
    audiences = [o.audience for _, o in entries]
    assert entries and len(audiences) == len(set(audiences))  # one firing's messages, once
    rec = Recorder(core)
    reader = OutboxReader(core.notifier, outbox, owner="r1", block_ms=100, rescan_s=0.1)
    reader.start()
    await reader.drain()
    assert len(rec.titles()) == 1 and len(rec.titles("stewards")) == 1
    await reader.stop()
    for s in scheds:
        await s.stop()
    for st in stores:
        await st.close()
