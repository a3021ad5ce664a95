"""A replica says it sends (beside the bot-wide rate windows, once a second) without holding
the send that said so: awaited, one send a second waited out the store's timeouts (two tries
of 2 s) while the master of those windows was paused (#34)."""

from __future__ import annotations

import asyncio

from bot.delivery.ratelimit import SharedRateLimiter
from bot.store import Store
from bot.store.windows import Windows
from tests.support.shared_limits import BOT_WIDE_30


class SlowToSay(Windows):
    """Real windows whose presence write does not answer until told."""

    def __init__(self, store: Store) -> None:
        super().__init__(store.gateway)
        self.answer = asyncio.Event()
        self.said = 0

    async def present(self, platform: str, replica: str, now: float, ttl_s: float) -> int:
        self.said += 1
        await self.answer.wait()
        return await super().present(platform, replica, now, ttl_s)


async def test_a_presence_write_that_does_not_answer_holds_no_send(store: Store) -> None:
    windows = SlowToSay(store)
    limiter = SharedRateLimiter(windows, BOT_WIDE_30)
    await store.gateway.call(lambda r: r.delete(*[k for k, _, _ in
                                                  limiter._scopes("telegram", "9001")]))
    # the sends go while the replica's presence write is still on its way
    await asyncio.wait_for(asyncio.gather(*[limiter.acquire("telegram", str(9000 + k))
                                            for k in range(5)]), 15.0)
    assert windows.said == 1  # one write at a time, not one per send
    windows.answer.set()
    for _ in range(100):
        if limiter.replicas.get("telegram"):
            break
        await asyncio.sleep(0.01)
    assert limiter.replicas["telegram"] == 1  # ... and its answer is heard when it comes
