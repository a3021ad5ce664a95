"""A send let through by the shared rate windows late (the take waited in a paused master,
then reached the promoted one) counts in the second it goes, not the second it was asked
for: counted back there, the next second's sends found room beside it and Telegram's
bot-wide 30 a second broke (31 in one second after bench/saturday.py's paused master, #34)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from bot.delivery.ratelimit import SharedRateLimiter
from bot.store.gateway import Gateway
from bot.store.windows import Windows
from rigs.stall_link import StallLink, through
from tests.support.shared_limits import BOT_WIDE_30, WallClock


async def test_a_take_answered_late_counts_from_when_it_was_granted(redis_url: str) -> None:
    link = StallLink(urlsplit(redis_url).port or 6379)
    clock = WallClock()
    slow = Gateway.from_url(through(redis_url, link.port))
    direct = Windows(Gateway.from_url(redis_url))
    limiter = SharedRateLimiter(Windows(slow), BOT_WIDE_30, clock=clock)
    scopes = limiter._scopes("telegram", "5001")
    try:
        await direct.gateway.call(lambda r: r.delete(*[k for k, _, _ in scopes]))
        await limiter.acquire("telegram", "5000")  # connections up, the replica counted
        link.stall()  # the windows' master stops answering ...
        send = asyncio.create_task(limiter.acquire("telegram", "5001"))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not send.done()  # ... with this send's take on its way
        clock.t += 3.0  # ... for three seconds
        link.resume()
        await send
        # the send goes now: this second's budget has it, as Telegram will count it
        assert await direct.used(scopes, clock.t) == [1]
    finally:
        link.cut()
        await slow.close()
        await direct.gateway.close()

