"""A fixture's delivery lease remembers its last holder: a lease that lapsed while nobody
else took it (its master paused longer than the lease) comes back to its holder with the
same term, and its next send renews it, so nothing queued is refused or claimed again; a
lease another replica held meanwhile is a take-over (a new term), and a send from the old
holder is refused. After a failover every replica asks for the lapsed lease at once: its
holder wins, and another takes it only once the holder's grace has run out (it crashed)."""

from __future__ import annotations

from bot.store import Store
from bot.store.base import fx_prefix
from bot.store.outbox import KEPT, TAKEN_OVER, Outbox

FX = "lease-fx"
LEASE = fx_prefix(FX) + "obx:lease"
GRACE = LEASE + ":grace"


async def test_a_lapsed_lease_nobody_took_comes_back_to_its_holder(store: Store) -> None:
    outbox = Outbox(store.gateway)
    assert await outbox.lease(FX, "a") == KEPT  # the first holder
    assert await outbox.lease(FX, "b") == 0
    await store.gateway.r.delete(LEASE)  # lapsed: a's master was paused past its TTL
    # a's next send finds no lease and nobody since: it renews it and goes
    assert await outbox.flying([(FX, "1-0")], "telegram:-100", owner="a") == {FX}
    assert await store.gateway.r.get(LEASE) == "a"
    await store.gateway.r.delete(LEASE)
    assert await outbox.lease(FX, "a") == KEPT  # ... and so does its reader's renewal


async def test_after_a_failover_the_holder_wins_the_race_for_its_lapsed_lease(
        store: Store) -> None:
    outbox = Outbox(store.gateway)
    assert await outbox.lease(FX, "a") == KEPT
    await store.gateway.r.delete(LEASE)  # lapsed during the pause; every replica asks
    assert await outbox.lease(FX, "b") == 0  # within a's grace: not b's to take
    assert await outbox.lease(FX, "a") == KEPT


async def test_a_lease_another_replica_held_meanwhile_is_a_take_over(store: Store) -> None:
    outbox = Outbox(store.gateway)
    assert await outbox.lease(FX, "a") == KEPT
    await store.gateway.r.delete(LEASE, GRACE)  # a crashed: its lease and grace ran out
    assert await outbox.lease(FX, "b") == TAKEN_OVER  # b took the lapsed lease
    assert await outbox.flying([(FX, "1-0")], "telegram:-100", owner="a") == set()
    await store.gateway.r.delete(LEASE, GRACE)  # and b's lapsed too: a's old sends stay refused
    assert await outbox.flying([(FX, "1-0")], "telegram:-100", owner="a") == set()
    assert await outbox.lease(FX, "a") == TAKEN_OVER  # a's reader starts a new term
