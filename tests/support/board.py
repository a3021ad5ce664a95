"""A notifier whose sink pins messages."""

from __future__ import annotations

import asyncio

from bot.domain.messages import Reply
from bot.store import Store
from tests.support.delivery import Recorder, notifier
from tests.support.fake_time import FakeTime


class Pinning(Recorder):
    """A native sink that can pin, like the real adapters (so the board is on)."""

    pins = True

    def __init__(self, time: FakeTime) -> None:
        super().__init__(time)
        self.pinned: list[str] = []
        self.texts: dict[str, str] = {}

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        mid = await super().send(chat, reply, thread=thread, quote=quote)
        self.texts[mid] = reply.title + "\n" + reply.text
        return mid

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        await super().edit(chat, message_id, reply)
        self.texts[message_id] = reply.title + "\n" + reply.text
        return True

    async def pin(self, chat: str, message_id: str) -> None:
        self._check()
        self.log.append((self.time.now, "pin", chat, message_id))
        self.pinned.append(message_id)

    async def unpin(self, chat: str, message_id: str) -> None:
        self._check()
        self.log.append((self.time.now, "unpin", chat, message_id))
        self.pinned.remove(message_id)

    def board(self) -> str:
        return self.texts[self.pinned[-1]] if self.pinned else ""


def pinning_notifier(store: Store, time: FakeTime):  # type: ignore[no-untyped-def]
    n, _ = notifier(store, time)
    sink = Pinning(time)
    n.add_sink(sink)
    n.board_sleep = lambda _s: asyncio.Event().wait()  # the test moves the clock, pokes
    return n, sink
