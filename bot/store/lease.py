"""A leader lease in Redis for singleton duties (Telegram polling, retention sweep).

SET NX PX to take it, PEXPIRE by its holder to keep it; whoever stops renewing loses it
after the TTL and another replica takes over. Not a consensus protocol: a duty run under it
must be safe to run twice in a rare overlap (the retention sweep and polling are: writes
carry dedupe keys, and Telegram hands each update to one getUpdates caller).
"""

from __future__ import annotations

import time

from bot.store.client import OPS, Store, StoreUnavailable

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


class Lease:
    """One named lease; `held` is true while this process holds it (with a safety margin)."""

    def __init__(self, store: Store, name: str, owner: str, ttl_ms: int = 10_000) -> None:
        self.key, self.owner, self.ttl_ms = f"{OPS}lease:{name}", owner, ttl_ms
        self._take = store.r.register_script(_TAKE)
        self._drop = store.r.register_script(_DROP)
        self._store = store
        self._until = 0.0

    @property
    def held(self) -> bool:
        """Whether this process holds the lease now (lapses a third of the TTL early)."""
        return time.monotonic() < self._until

    async def tick(self) -> bool:
        """Take or renew the lease; call every third of the TTL. Returns `held`."""
        t0 = time.monotonic()
        try:
            ok = await self._store._call(self._take(keys=[self.key],
                                                    args=[self.owner, self.ttl_ms]))
        except StoreUnavailable:
            ok = False
        self._until = t0 + self.ttl_ms / 1000 * 2 / 3 if ok else 0.0
        return self.held

    async def release(self) -> None:
        """Give the lease up (at a clean stop), so a standby takes over at once."""
        self._until = 0.0
        try:
            await self._store._call(self._drop(keys=[self.key], args=[self.owner]))
        except StoreUnavailable:
            pass
