"""When a fixture's delivery lease comes back to a replica (a new term), the claim queues
every pending entry again, and a card's new copy folds into its old copy still waiting in a
slow chat's queue: one item then carries marks of both terms. The old marks are refused one
by one, never the send: every card still reaches control (it used to lose them all)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.delivery.durable import OutboxReader
from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import RateLimiter
from bot.store import Store
from bot.store.base import OPS, fx_prefix
from bot.store.message_refs import MessageRefs
from bot.store.outbox import Outbox
from tests.support.cards import card
from tests.support.fake_time import FakeTime
from tests.support.held_control import HeldControl

FX = "stale-copies-fx"
GROUP = "-1001000000001"
CARDS = 6


async def _until(check, what: str, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        assert loop.time() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def _slow_control(store: Store, fx: str
                        ) -> tuple[Notifier, HeldControl, Outbox, set[str]]:
    """A notifier whose control chat holds its sends, and a fixture's outbox with CARDS
    incident cards in it: what the cards' entries are ('fixture/entry')."""
    time = FakeTime()
    n = Notifier({"control": {"telegram": [GROUP]}},
                 limiter=RateLimiter(clock=time.clock, sleep=time.sleep), clock=time.clock)
    n.store = MessageRefs(store.gateway)
    control = HeldControl("telegram")
    n.add_sink(control)
    outbox = Outbox(store.gateway)
    n.outbox = outbox
    await store.gateway.r.sadd(OPS + "fixtures", fx)
    await outbox.ensure_group(fx)
    control.hold()  # control's chat is slow: the cards queue behind the first
    await outbox.add(fx, [card(k, fixture=fx) for k in range(1, CARDS + 1)])
    return n, control, outbox, {f"{fx}/{e}" for e, _ in
                                await store.gateway.r.xrange(fx_prefix(fx) + "obx")}


async def test_new_term_copies_folded_into_old_ones_still_reach_control(
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "bot")
    n, control, outbox, written = await _slow_control(store, FX)
    reader = OutboxReader(n, outbox, owner="replica-a", block_ms=100, rescan_s=0.1)
    reader.start()
    lease = fx_prefix(FX) + "obx:lease"
    try:
        await asyncio.wait_for(control.under_way.wait(), 10)
        await _until(lambda: len(n.journaled()) == CARDS, "every card queued")
        # a's renewal came too late: another replica took the lease, and gave it up again
        await store.gateway.r.set(lease, "replica-b", px=5000)
        await _until(lambda: "lease lost" in caplog.text, "a's reader to see it")
        await store.gateway.r.set(lease, "replica-a", px=5000)
        # a's new term claims every entry again; the copies fold into the waiting items
        await _until(lambda: sum(m.term == 1 for m in n.journaled()) >= CARDS,
                     "the new term's copies queued")
        control.release()
        await reader.drain(timeout=20)
        assert control.entries >= written, sorted(written - control.entries)
        assert (await outbox.backlog(FX))[0] == 0
        assert "queued under an earlier delivery lease dropped" in caplog.text
    finally:
        control.release()
        await reader.stop()
        await n.close()


async def test_entries_taken_and_held_by_nothing_are_taken_again(
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "bot")
    n, control, outbox, written = await _slow_control(store, FX + "-idle")
    # the idle limit is Redis's own clock (XAUTOCLAIM): a second here, a minute in the bot
    reader = OutboxReader(n, outbox, owner="replica-a", block_ms=100, rescan_s=0.1,
                          idle_s=1.0, sweep_s=0.2)
    reader.start()
    try:
        await asyncio.wait_for(control.under_way.wait(), 10)
        await _until(lambda: len(n.journaled()) == CARDS, "every card queued")
        n.desk.queues[("telegram", GROUP)].items.clear()  # copies lost by some path
        control.release()
        await reader.drain(timeout=20)
        assert control.entries >= written, sorted(written - control.entries)
        assert "held by no queue or send; queued again" in caplog.text
    finally:
        control.release()
        await reader.stop()
        await n.close()
