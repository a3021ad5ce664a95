"""Chat moves live in the shared {ops} slot and every Telegram send asks them: once read, a
send never waits for that slot again (a paused master there held every fixture's Telegram
sends for as long as it was paused), and a move another replica records still arrives."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from bot.store.chat_moves import ChatMoves
from bot.store.gateway import Gateway
from rigs.stall_link import StallLink, through


class Clock:
    """An injected monotonic clock."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


async def test_a_send_never_waits_for_a_stalled_ops_slot_once_the_moves_are_read(redis_url):
    link = StallLink(urlsplit(redis_url).port or 6379)
    clock = Clock()
    slow = Gateway.from_url(through(redis_url, link.port))
    direct = Gateway.from_url(redis_url)
    mine, other = ChatMoves(slow, monotonic=clock), ChatMoves(direct)
    try:
        await direct.call(lambda r: r.delete(other.key))
        await other.record("telegram", "-100", "-1009")
        assert await mine.resolve("telegram", "-100") == "-1009"  # the first read waits
        clock.t += 60  # the copy is stale now
        link.stall()  # ... and the {ops} master stops answering
        send = asyncio.create_task(mine.resolve("telegram", "-100"))
        for _ in range(5):
            await asyncio.sleep(0)
        assert send.done(), "a send waited for the stalled slot"
        assert send.result() == "-1009"
    finally:
        link.cut()
        await slow.close()
    mine = ChatMoves(direct, monotonic=clock)
    try:  # the background read brings a move another replica recorded
        assert await mine.resolve("telegram", "-200") == "-200"
        await other.record("telegram", "-200", "-2009")
        clock.t += 60
        for _ in range(200):
            if await mine.resolve("telegram", "-200") == "-2009":
                break
            await asyncio.sleep(0.01)
        assert await mine.resolve("telegram", "-200") == "-2009"
    finally:
        await direct.call(lambda r: r.delete(other.key))
        await direct.close()
