"""Every message asks whether the life-safety lane is held (read at most every poll_s). With
the lane's master paused, each chat's next message waited out the store's timeouts on that
read (two tries of 2 s), once every poll_s: very likely the stop of every Telegram send for a
whole 8 s pause in an earlier bench/saturday.py --fault pause run, whose paused master also
held the lane (#34). A stalled read is one for all of a replica's chats and holds a message
at most READ_WAIT_S; the messages go on with what was last known, as when the store does not
answer, and the lane is learned when the read comes back."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from bot.delivery.lane import Lane
from bot.store.gateway import Gateway
from bot.store.stewarding_keys import Stewarding
from rigs.stall_link import StallLink, through


async def test_a_stalled_lane_read_holds_no_message_for_long(redis_url: str) -> None:
    link = StallLink(urlsplit(redis_url).port or 6379)
    gateway = Gateway.from_url(through(redis_url, link.port))
    direct = Gateway.from_url(redis_url)
    state = Stewarding(gateway)
    reads = 0
    read = state.lane

    async def counted() -> tuple[str, int] | None:
        nonlocal reads
        reads += 1
        return await read()

    state.lane = counted  # type: ignore[method-assign]
    lane = Lane(state, poll_s=0.0)
    try:
        await direct.call(lambda r: r.delete(state.lane_key))
        assert not await lane.held()  # connections up, nothing held
        link.stall()
        reads = 0
        await Stewarding(direct).hold_lane("P-stall", 5, 30.0)  # a procedure, meanwhile
        # twenty chats' next messages go on with the last known while the read is stalled
        # (not after the store's own timeouts), and one read is asked for them all
        answers = await asyncio.wait_for(asyncio.gather(*[lane.held() for _ in range(20)]),
                                         15.0)
        assert answers == [False] * 20
        assert reads == 1
        assert lane._reading is not None and not lane._reading.done()
        link.resume()  # the read comes back: the procedure holds the lane from now on
        await asyncio.wait_for(lane._reading, 15.0)
        assert await lane.held()
    finally:
        await lane.close()
        link.cut()
        await gateway.close()
        await direct.call(lambda r: r.delete(state.lane_key))
        await direct.close()
