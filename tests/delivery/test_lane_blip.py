"""The life-safety lane when the replica delivering a procedure claims its own outbox entries
back after a Redis blip: it goes on counting as before (the lane is not given back early, so
nothing else slips in), and gives the lane back after the procedure's last message."""

from __future__ import annotations

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
