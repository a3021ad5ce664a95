"""Deadlines: each fixture's `esc` sorted set (`<key>:<tag>` -> due epoch seconds, written in
the round trip of the command that starts it) and the index of fixtures the sweep reads
(bot/schedule/deadlines.py), in the key space's shared slot."""

from __future__ import annotations

import time

from bot.store.base import fx_prefix, ops_prefix
from bot.store.gateway import Gateway

ESC_RELIST_S = 60.0  # see index_escalation and retire_escalations
ESC_GRACE_S = 3 * ESC_RELIST_S
ESC_RETIRE_EVERY_S = 30.0


class Deadlines:
    """Pending deadlines of every fixture, and which fixtures have any, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        # Fixtures that may have deadlines: the sweep reads this set, not every fixture. A
        # command that writes a deadline lists its fixture first (crash-safe: an extra entry
        # is harmless), once per fixture per process (the write stays one trip).
        self.esc_index = ops_prefix(self.space) + "esc:fixtures"
        self._esc_indexed: dict[str, float] = {}  # fixture -> when this process listed it
        self._retire_after = 0.0  # monotonic time of the next retire_escalations pass

    def use_drill_index(self) -> None:
        """Index a replay's deadlines apart, so the live bot never sweeps a drill's fixtures."""
        self.esc_index = ops_prefix(self.space) + "esc:fixtures:drill"
        self._esc_indexed.clear()

    async def index_escalation(self, fx_id: str) -> None:
        """List a fixture among those the escalation sweep reads (before adding deadlines).
        Re-listed at least every ESC_RELIST_S: another replica may have retired it."""
        now = time.monotonic()
        if self._esc_indexed.get(fx_id, -ESC_RELIST_S) + ESC_RELIST_S <= now:
            await self.gateway.call(lambda r: r.sadd(self.esc_index, fx_id))
            self._esc_indexed[fx_id] = now

    async def escalating_fixtures(self) -> set[str]:
        """Fixtures that may have escalation deadlines (see index_escalation), with those
        retired in the last ESC_GRACE_S (see retire_escalations)."""
        pipe = self.gateway.pipeline()
        pipe.smembers(self.esc_index)
        pipe.zrangebyscore(self.esc_index + ":retired", time.time() - ESC_GRACE_S, "+inf")
        listed, retired = await self.gateway.call(pipe.execute())
        return set(listed) | set(retired)

    async def retire_escalations(self) -> list[str]:
        """Take fixtures with no pending deadline out of the sweep's index, so it shrinks as
        fixtures end; put back a retired one that has deadlines again. A process that listed
        a fixture less than ESC_RELIST_S ago writes deadlines without listing it again, so a
        retired fixture is still swept for ESC_GRACE_S (> ESC_RELIST_S): nothing is missed."""
        if time.monotonic() < self._retire_after:
            return []  # at most every ESC_RETIRE_EVERY_S: sweeps run every second
        self._retire_after = time.monotonic() + ESC_RETIRE_EVERY_S
        retired_key = self.esc_index + ":retired"
        now = time.time()
        ids = sorted(await self.escalating_fixtures())
        if not ids:
            return []
        pipe = self.gateway.pipeline()
        for fx_id in ids:
            pipe.zcard(fx_prefix(fx_id, self.space) + "esc")
        sizes = await self.gateway.call(pipe.execute())
        listed = set(await self.gateway.call(lambda r: r.smembers(self.esc_index)))
        out, back = [fx for fx, n in zip(ids, sizes, strict=True) if not n], \
            [fx for fx, n in zip(ids, sizes, strict=True) if n and fx not in listed]
        pipe = self.gateway.pipeline()
        for fx_id in out:
            if fx_id in listed:
                pipe.srem(self.esc_index, fx_id)
                pipe.zadd(retired_key, {fx_id: now})
        for fx_id in back:
            pipe.sadd(self.esc_index, fx_id)
            pipe.zrem(retired_key, fx_id)
        pipe.zremrangebyscore(retired_key, "-inf", now - ESC_GRACE_S)
        await self.gateway.call(pipe.execute())
        return [fx for fx in out if fx in listed]

    async def due_deadlines_of(self, fx_ids: list[str], now_ts: int,
                               limit: int = 200) -> dict[str, list[tuple[str, int]]]:
        """Deadlines due by now_ts of several fixtures, in one pipelined round trip; fixtures
        with nothing due are left out."""
        if not fx_ids:
            return {}
        pipe = self.gateway.pipeline(transaction=False)
        for fx_id in fx_ids:
            pipe.zrangebyscore(fx_prefix(fx_id, self.space) + "esc", "-inf", now_ts, start=0,
                               num=limit, withscores=True)
        rows = await self.gateway.call(pipe.execute())
        return {fx_id: [(m, int(s)) for m, s in due]
                for fx_id, due in zip(fx_ids, rows, strict=True) if due}

    async def first_deadline_of(self, fx_ids: list[str]) -> int | None:
        """The earliest pending deadline of several fixtures (one round trip), or None."""
        if not fx_ids:
            return None
        pipe = self.gateway.pipeline(transaction=False)
        for fx_id in fx_ids:
            pipe.zrange(fx_prefix(fx_id, self.space) + "esc", 0, 0, withscores=True)
        firsts = [int(rows[0][1]) for rows in await self.gateway.call(pipe.execute()) if rows]
        return min(firsts, default=None)

    async def deadlines(self, fx_id: str) -> dict[str, int]:
        """Every pending deadline of a fixture: member -> due."""
        rows = await self.gateway.call(
            lambda r: r.zrange(fx_prefix(fx_id, self.space) + "esc", 0, -1, withscores=True))
        return {m: int(s) for m, s in rows}

    async def drop_deadline(self, fx_id: str, member: str) -> None:
        """Forget a deadline that no longer applies."""
        await self.gateway.call(lambda r: r.zrem(fx_prefix(fx_id, self.space) + "esc", member))
