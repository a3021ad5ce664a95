"""Scheduled sends that fall due while Redis is down go out through the durable outbox once
it is back, marked late (or are recorded as missed: tests/schedule/test_catch_up.py)."""

from __future__ import annotations

from bot.delivery.durable import OutboxReader
from bot.store import StoreUnavailable
from bot.store.outbox import Outbox
from handlers import sweep_escalations
from tests.conftest import Chat
from tests.support.outage import (  # noqa: F401  (the fixture)
    outage,
)
from tests.support.scheduler import (
    FX,
    Recorder,
    started,
    utc,
)


async def test_a_briefing_and_an_escalation_due_in_an_outage_go_out_late_via_the_outbox(
        outage, server, clock):  # noqa: F811
    core = outage
    rec = Recorder(core)
    core.notifier.outbox = Outbox(core.store.gateway)
    say = Chat(core)
    s = await started(core, clock, live=True)
    s.aps.pause()  # the test fires the jobs itself, at virtual times
    clock.set(utc(2026, 11, 28, 11, 58, 30))
    await say(f"/fixture use {FX}", as_="admin")
    r = await say("/incident disorder @stb_walkway s4", as_="steward")
    assert r is not None and r.reply.title.startswith("Logged INC-1"), r.reply.text
    server.stop()
    clock.set(utc(2026, 11, 28, 12))  # the T-3h briefing and INC-1's first tier fall due
    assert await s._fire_live(f"{FX}/briefing@20261128T120000Z") is None
    try:
        await sweep_escalations(core, core.store, clock.now())
    except StoreUnavailable:
        pass
    server.start()
    clock.set(utc(2026, 11, 28, 12, 30))
    await s.catch_up(clock.now())
    await sweep_escalations(core, core.store, clock.now())
    fx_backlog, _ = await core.notifier.outbox.backlog(FX)
    # durable first, delivered by the reader
    assert fx_backlog >= 2 and rec.titles(chat="command", of="") == []
    reader = OutboxReader(core.notifier, Outbox(core.store.gateway), owner="r", block_ms=50,
                          rescan_s=0.05)
    reader.start()
    try:
        await reader.drain()
        titles = rec.titles(chat="command", of="")
        briefings = [t for t in titles if "briefing" in t.lower()]
        assert len(briefings) == 1 and "LATE (was due 12:00)" in briefings[0], titles
        assert "⚠ INC-1 unacknowledged 31m (late: due 11:59)" in titles, titles
        await s.catch_up(clock.now())
        while await sweep_escalations(core, core.store, clock.now()):  # the later tiers, each once
            pass
        await reader.drain()
        again = rec.titles(chat="command", of="")
        assert [t for t in again if "briefing" in t.lower()] == briefings
        assert again.count("⚠ INC-1 unacknowledged 31m (late: due 11:59)") == 1
    finally:
        await reader.stop()
        await s.stop()
