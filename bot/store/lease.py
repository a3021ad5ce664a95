"""Leader leases in Redis for singleton duties: the deployment's (retention sweep, Home tab
refreshes) under `{ops}`, and each Telegram bot's polling under the bot's own hash tag, next
to its inbox, so on a Cluster losing the `{ops}` slot does not stop polling (`polling`).

SET NX PX to take it, PEXPIRE by its holder to keep it; whoever stops renewing loses it
after the TTL and another replica takes over. Not a consensus protocol: a duty run under it
must be safe to run twice in a rare overlap (the retention sweep and polling are: writes
carry dedupe keys, and Telegram hands each update to one getUpdates caller).

After a failover the lease comes back within a second or two of the store answering: a tick
waits at most TICK_WAIT_S (a paused master would hold it for the client's whole timeout and
retry) and then asks the sentinels again, and a replica not holding the lease, or whose
last tick failed, ticks every FAST_TICK_S. The holder, whose key the promoted replica still
has, renews it at its next tick; a key lost with the old master is taken by the first
replica to tick; only a holder that died too leaves the others to wait out its TTL.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from bot.store.base import StoreUnavailable, bot_prefix, ops_prefix
from bot.store.gateway import Gateway

_TAKE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
"""
_DROP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
FAST_TICK_S = 0.5  # between ticks while the lease is not held or the store did not answer
TICK_WAIT_S = 1.0  # longest a tick waits for the store (a lease call answers in ms)


class Lease:
    """One named lease; `held` is true while this process holds it (with a safety margin)."""

    def __init__(self, gateway: Gateway, name: str, owner: str, ttl_ms: int = 10_000, *,
                 clock: Callable[[], float] = time.monotonic, prefix: str = "") -> None:
        prefix = prefix or ops_prefix(gateway.space)
        self.key, self.owner, self.ttl_ms = f"{prefix}lease:{name}", owner, ttl_ms
        self._take = gateway.script(_TAKE)
        self._drop = gateway.script(_DROP)
        self.gateway = gateway
        self._clock = clock
        self._until = 0.0
        self._answered = False  # whether the last tick got an answer from the store

    @property
    def held(self) -> bool:
        """Whether this process holds the lease now (lapses a third of the TTL early)."""
        return self._clock() < self._until

    def next_tick_s(self) -> float:
        """Seconds until the next tick: a third of the TTL while held and the store answers,
        else FAST_TICK_S, so the lease is back soon after an outage or failover ends."""
        renew = self.ttl_ms / 3000
        return renew if self.held and self._answered else min(renew, FAST_TICK_S)

    async def tick(self) -> bool:
        """Take or renew the lease (at `next_tick_s` intervals). Returns `held`."""
        t0 = self._clock()
        try:
            # A paused master would hold the call for the client's timeout and retry (10 s),
            # past the end of a failover: give up soon and ask the sentinels again.
            ok = bool(await asyncio.wait_for(self.gateway.run_script(
                self._take, [self.key], [self.owner, self.ttl_ms]),
                min(TICK_WAIT_S, self.ttl_ms / 3000)))
            self._answered = True
        except (StoreUnavailable, TimeoutError):
            ok = self._answered = False
            await self.gateway.rediscover_soon()
        self._until = t0 + self.ttl_ms / 1000 * 2 / 3 if ok else 0.0
        return self.held

    async def release(self) -> None:
        """Give the lease up (at a clean stop), so a standby takes over at once."""
        self._until = 0.0
        try:
            await self.gateway.run_script(self._drop, [self.key], [self.owner])
        except StoreUnavailable:
            pass


def polling(gateway: Gateway, bot_id: str, owner: str, ttl_ms: int = 10_000) -> Lease:
    """The lease of one Telegram bot's polling (one getUpdates caller per bot token), in the
    bot's own slot with its inbox."""
    return Lease(gateway, "polling", owner, ttl_ms,
                 prefix=bot_prefix("telegram", bot_id, gateway.space))
