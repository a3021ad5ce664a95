"""A send that waited between its rate-limit slot and the platform call (a slow store write in
between: the outbox's in-flight mark while a failover is under way) takes its slot again just
before the call. The shared windows count a send as if HOLD_S later until its answer; a send
that waited longer had left them when it arrived, and other replicas' sends filled its place
(31 sends in 0.95 s, #34)."""

from __future__ import annotations

from bot.delivery.pacing import STALE_S, Pacer
from bot.delivery.ratelimit import POST, SharedRateLimiter
from bot.store.gateway import Gateway
from bot.store.windows import Windows
from tests.support.shared_limits import BOT_WIDE_30, WallClock


async def _sends_counted(redis_url: str, waited: float) -> int:
    """The bot-wide window's count after one send whose call came `waited` s after its slot."""
    gateway = Gateway.from_url(redis_url)
    clock = WallClock()
    limiter = SharedRateLimiter(Windows(gateway), BOT_WIDE_30, clock=clock,
                                monotonic=clock)
    pacer = Pacer(limiter)
    scopes = limiter._scopes("telegram", "5001")
    try:
        await gateway.call(lambda r: r.delete(*[k for k, _, _ in scopes]))
        await pacer.admit("telegram", "5001", None, POST)
        ticket = pacer.ticket(POST, "5001")
        clock.t += waited  # composing, the outbox's in-flight mark ...
        await pacer.slot(ticket, "telegram", "5001", POST)  # ... then the call
        return (await limiter.windows.used(scopes, clock.t))[0]
    finally:
        await gateway.close()


async def test_a_send_that_waited_past_its_hold_takes_its_slot_again(redis_url: str) -> None:
    assert await _sends_counted(redis_url, 0.1) == 1  # spent as taken
    # taken 0.6 s before the call: counted again from the call, so the window holds it
    assert await _sends_counted(redis_url, STALE_S + 0.1) == 2
