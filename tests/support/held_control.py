"""A control chat for delivery tests that records which outbox entries each send carried
(the ids the delivery layer hands a sink, as Slack's message metadata does) and can hold
its sends until the test lets them through: a slow chat with a queue behind it."""

from __future__ import annotations

import asyncio

from bot.delivery.sink import SENDING
from bot.domain.messages import Reply
from rigs.recording_sink import RecordingSink


class HeldControl(RecordingSink):
    """A control chat's sink: which outbox entries reached it (digests' too), and while
    `open` is clear every send waits, the first one noted as under way."""

    def __init__(self, platform: str) -> None:
        super().__init__(platform)
        self.entries: set[str] = set()  # 'fixture/entry' of every send that went out
        self.open = asyncio.Event()
        self.open.set()
        self.under_way = asyncio.Event()

    def hold(self) -> None:
        """Hold every send from now on until `release`."""
        self.open.clear()
        self.under_way.clear()

    def release(self) -> None:
        """Let the held send and every later one through."""
        self.open.set()

    async def _through(self) -> None:
        if not self.open.is_set():
            self.under_way.set()
            await self.open.wait()
        self.entries |= {t.removeprefix("d:") for t in SENDING.get()}

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Wait while held; then record the entries this send carries."""
        await self._through()
        return await super().send(chat, reply, thread=thread, quote=quote)

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """Wait while held; then record the entries this edit carries."""
        await self._through()
        return await super().edit(chat, message_id, reply)
