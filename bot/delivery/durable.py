"""The outbox reader: durable messages from Redis into the delivery layer's chat queues.

For each fixture, the replica holding its delivery lease reads the fixture's outbox with a
consumer group and hands each entry to the notifier, one copy per chat, skipping chats its
delivered marks name. An entry is acknowledged once every chat has it, so a crash at any
point leaves it pending; the next lease holder claims it and sends what is missing. Edits of
a live message are idempotent, and a card's platform id is stored as soon as it is posted,
so a redelivered card edits instead of posting twice.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable

from bot.core.messages import Outbound
from bot.delivery.notifier import Notifier
from bot.store import StoreUnavailable
from bot.store.outbox import Outbox

log = logging.getLogger(__name__)


class OutboxReader:
    """Feeds every fixture's outbox into the notifier while this replica holds its lease."""

    def __init__(self, notifier: Notifier, outbox: Outbox, *, owner: str = "",
                 block_ms: int = 500, rescan_s: float = 2.0) -> None:
        self.notifier = notifier
        self.outbox = outbox
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}"
        self.block_ms = block_ms
        self.rescan_s = rescan_s
        self._loops: dict[str, asyncio.Task[None]] = {}
        self._main: asyncio.Task[None] | None = None
        self.watchdog: asyncio.Task[None] | None = None  # bot.delivery.health.watch, if run
        self._left: dict[tuple[str, str], int] = {}  # (fixture, entry) -> chats still to reach

    def start(self) -> None:
        """Begin watching every fixture's outbox."""
        self._main = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        """Stop reading and hand the leases over (what is unsent stays in the outbox)."""
        tasks = [t for t in [self._main, self.watchdog, *self._loops.values()]
                 if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for fx in list(self._loops):
            try:
                await self.outbox.release(fx, self.owner)
            except Exception:
                pass
        self._loops.clear()

    async def _watch(self) -> None:
        while True:
            try:
                for fx in await self.outbox.fixture_ids():
                    if fx not in self._loops:
                        self._loops[fx] = asyncio.create_task(self._fixture(fx))
            except StoreUnavailable:
                pass
            await asyncio.sleep(self.rescan_s)

    async def _fixture(self, fx: str) -> None:
        leader = False
        while True:
            try:
                if not leader:
                    await self.outbox.ensure_group(fx)
                has = await self.outbox.lease(fx, self.owner)
                if not has:
                    leader = False
                    await asyncio.sleep(1.0)
                    continue
                if not leader:  # just became the reader: take over what the last one held
                    leader = True
                    for entry, out in await self.outbox.claim_all(fx, self.owner):
                        await self._dispatch(fx, entry, out)
                for entry, out in await self.outbox.read(fx, self.owner, self.block_ms):
                    await self._dispatch(fx, entry, out)
            except asyncio.CancelledError:
                raise
            except StoreUnavailable:
                leader = False  # the lease may lapse meanwhile: claim again when back
                await asyncio.sleep(1.0)
            except Exception:
                log.exception("outbox reader for %s failed; retrying", fx)
                leader = False
                await asyncio.sleep(1.0)

    async def _dispatch(self, fx: str, entry: str, out: Outbound) -> None:
        await self.notifier.learn_grounds([fx])  # per-ground chats (several fixtures at once)
        chats = [(p, c) for p, cs in self.notifier.targets(out.audience, fx).items()
                 if p in self.notifier.sinks for c in cs]
        done = await self.outbox.done_chats(fx, entry, [f"{p}:{c}" for p, c in chats])
        todo = [(p, c) for p, c in chats if f"{p}:{c}" not in done]
        if not todo:
            await self.outbox.mark(fx, entry, "-", last=True)
            return
        if (fx, entry) in self._left:
            return  # already queued by this replica (claimed back after a blip)
        self._left[(fx, entry)] = len(todo)
        for platform, chat in todo:
            self.notifier.enqueue(platform, chat, out, self._marker(fx, entry))

    def _marker(self, fx: str, entry: str) -> Callable[[str, str, str], Awaitable[None]]:
        async def delivered(platform: str, chat: str, _mid: str) -> None:
            left = self._left.get((fx, entry), 1) - 1
            if left <= 0:
                self._left.pop((fx, entry), None)
            else:
                self._left[(fx, entry)] = left
            await self.outbox.mark(fx, entry, f"{platform}:{chat}", last=left <= 0)
        return delivered

    async def drain(self, timeout: float = 30.0) -> None:
        """Wait until every watched outbox is empty and the chat queues are idle (tests)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            await self.notifier.drain()
            fixtures = await self.outbox.fixture_ids()
            counts = [(await self.outbox.backlog(fx))[0] for fx in fixtures]
            if not any(counts) and not self._left:
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("outbox not drained")
