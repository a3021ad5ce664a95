"""The life-safety lane when the replica delivering a procedure claims its own outbox entries
back after a Redis blip: it goes on counting as before (the lane is not given back early, so
nothing else slips in), and gives the lane back after the procedure's last message."""

from __future__ import annotations

import asyncio

from bot.delivery.lane import Lane
from bot.store import Store
from bot.store.stewarding_keys import Stewarding


async def test_a_claim_back_after_a_blip_keeps_the_lane_until_the_last_message(
        store: Store) -> None:
    state = Stewarding(store.gateway)
    lane = Lane(state, poll_s=0.0, beat_s=5.0)
    try:
        await lane.hold("P-blip", 3)
        for _ in range(3):
            lane.queued("P-blip")
        await lane.delivered("P-blip")
        lane.restart({"P-blip"})  # the reader claimed its own pending entries back
        await lane.took_over("P-blip")  # nothing re-queued: they are queued here already
        assert await state.lane() == ("P-blip", 3)
        await lane.delivered("P-blip")
        assert await state.lane() == ("P-blip", 3)
        await lane.delivered("P-blip")
        assert await state.lane() is None
    finally:
        await lane.close()


async def test_a_takeover_with_nothing_left_gives_the_dead_replicas_hold_back(
        store: Store) -> None:
    state = Stewarding(store.gateway)
    await state.hold_lane("P-done", 4, 5.0)  # a dead replica's hold: all had been delivered
    lane = Lane(state, poll_s=0.0, beat_s=5.0)
    lane.restart({"P-done"})
    await lane.took_over("P-done")
    assert await state.lane() is None


class Deaf:
    """A lane state whose renewal swallows the first cancel that lands in it, as redis-py's
    asyncio client can (redis/redis-py#2028)."""

    def __init__(self) -> None:
        self.renewals = 0
        self.inside = asyncio.Event()
        self.swallowed = False

    async def hold_lane(self, bid: str, messages: int, ttl_s: float) -> None:
        """Nothing to keep."""

    async def keep_lane(self, bid: str, messages: int, ttl_s: float, *,
                        recount: bool = False) -> bool:
        self.renewals += 1
        self.inside.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if self.swallowed:
                raise
            self.swallowed = True
        return True

    async def lane(self) -> tuple[str, int] | None:
        return None

    async def release_lane(self, bid: str) -> bool:
        return True


async def test_closing_stops_the_heartbeat_even_if_a_cancel_goes_unheeded() -> None:
    """A shutdown whose cancel lands inside a Redis call still stops the heartbeat at once:
    a heartbeat running on would keep every other message back until the lane's cap."""
    state = Deaf()
    lane = Lane(state, poll_s=0.0, beat_s=5.0)
    lane.queued("P-deaf")
    await asyncio.wait_for(state.inside.wait(), 5)
    closing = asyncio.ensure_future(lane.close())
    done, _ = await asyncio.wait({closing}, timeout=5)
    assert done, "close() waits on a heartbeat that runs on"
    assert state.swallowed and lane._beat is None
    assert state.renewals == 1  # no renewal after the shutdown began
