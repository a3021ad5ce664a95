"""A fixture's delivery lease moving to another replica while this one still has its
messages queued (a slow, paced chat) does not send them twice: the new holder claims and
sends them, and the old holder's queued copies are refused at their in-flight mark (the
lease is checked in the same script). Only the one send already under way when the lease
moved may show twice (at least once, as after a crash)."""

from __future__ import annotations

import asyncio
from collections import Counter

from bot.delivery.durable import OutboxReader
from bot.domain.messages import Outbound, Reply
from bot.store import Store
from bot.store.base import OPS, fx_prefix
from bot.store.outbox import Outbox
from tests.support.delivery import (
    Recorder,
    notifier,
)
from tests.support.fake_time import (
    FakeTime,
)

FX = "lease-moves-fx"


class Held(Recorder):
    """A sink whose first send stays on the way until the test lets it through."""

    def __init__(self, time: FakeTime) -> None:
        super().__init__(time)
        self.on_the_way = asyncio.Event()
        self.through = asyncio.Event()

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        if not self.on_the_way.is_set():
            self.on_the_way.set()
            await self.through.wait()
        return await super().send(chat, reply, thread=thread, quote=quote)


async def test_messages_queued_when_the_lease_moves_go_out_once(store: Store) -> None:
    time = FakeTime()
    a, _ = notifier(store, time)
    held = Held(time)
    a.add_sink(held)
    b, sink_b = notifier(store, time)
    outbox = Outbox(store.gateway)
    await store.gateway.r.sadd(OPS + "fixtures", FX)  # a fixture the readers watch
    await outbox.ensure_group(FX)
    texts = [f"message {k}" for k in range(1, 6)]
    await outbox.add(FX, [Outbound("control", Reply(t), fixture=FX) for t in texts])
    reader_a = OutboxReader(a, outbox, owner="replica-a", block_ms=100, rescan_s=0.1)
    a.outbox = outbox
    reader_a.start()
    reader_b: OutboxReader | None = None
    try:
        await asyncio.wait_for(held.on_the_way.wait(), 10)  # a's first send is under way
        # a's renewal came too late: the lease lapsed and b took it
        await store.gateway.r.set(fx_prefix(FX) + "obx:lease", "replica-b", px=5000)
        reader_b = OutboxReader(b, outbox, owner="replica-b", block_ms=100, rescan_s=0.1)
        b.outbox = outbox
        reader_b.start()
        for _ in range(1000):  # b delivers everything a had not finished (real Redis time)
            if len(sink_b.sent()) >= len(texts):
                break
            await asyncio.sleep(0.01)
        held.through.set()
        await a.drain()
        await reader_b.drain(timeout=10)
        sent = Counter(x.strip() for x in held.sent() + sink_b.sent())
        assert sent["message 1"] <= 2  # under way at the move: at least once
        assert all(sent[t] == 1 for t in texts[1:]), sent  # queued copies: once
        assert (await outbox.backlog(FX))[0] == 0
    finally:
        held.through.set()
        await reader_a.stop()
        if reader_b is not None:
            await reader_b.stop()
        await a.close()
        await b.close()
