"""Reading a fixture's log as a change feed: catch-up reads and blocking waits for new events.

Blocking reads (XREAD BLOCK) run on a connection pool of their own, so a screen waiting for
the next event never holds a connection a report needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis.asyncio as aioredis

from bot.domain.ledger import Event
from bot.store.base import KeySpace, fx_prefix
from bot.store.connect import on_key_node
from bot.store.gateway import Gateway

# Read-only: the incident hashes (KEYS, declared, one fixture's slot), whole or some fields.
READ = """
local out = {}
for i, k in ipairs(KEYS) do
  if #ARGV == 0 then out[i] = redis.call('HGETALL', k)
  else out[i] = redis.call('HMGET', k, unpack(ARGV)) end
end
return out
"""


def _log(fx_id: str, space: KeySpace) -> str:
    return fx_prefix(fx_id, space) + "log"


class Feed:
    """Reads of one store's fixture logs for live screens."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self._blocking: aioredis.Redis | None = None  # opened by the first blocking read

    async def close(self) -> None:
        """Close the blocking connections."""
        if self._blocking is not None:
            await self._blocking.aclose()
            self._blocking = None

    async def last_id(self, fx_id: str) -> str:
        """The id of the newest event of a fixture's log ("0-0" when empty)."""
        rows = await self.gateway.call(lambda r: r.xrevrange(_log(fx_id, self.space), count=1))
        return rows[0][0] if rows else "0-0"

    async def after(self, fx_id: str, after_id: str, count: int = 1000) -> list[Event]:
        """Events logged after the given stream id, oldest first (at most `count`)."""
        rows = await self.gateway.call(
            lambda r: r.xrange(_log(fx_id, self.space), f"({after_id}", "+", count=count))
        return [Event.from_stream(sid, f) for sid, f in rows]

    async def wait_after(self, fx_id: str, after_id: str, block_ms: int,
                         count: int = 500) -> list[Event]:
        """Events after the id, waiting up to block_ms for the first one (XREAD BLOCK)."""
        if self._blocking is None:
            self._blocking = self.gateway.blocking_client()
        key = _log(fx_id, self.space)
        res = await self.gateway.call(on_key_node(
            self._blocking, key, "XREAD", "COUNT", count, "BLOCK", block_ms, "STREAMS", key,
            after_id))
        if not res:
            return []
        return [Event.from_stream(sid, f) for sid, f in res[0][1]]

    async def unacked_count(self, fx_id: str) -> int:
        """How many incidents are still unacknowledged."""
        key = fx_prefix(fx_id, self.space) + "unacked"
        return int(await self.gateway.call(lambda r: r.zcard(key)))

    async def newest(self, fx_id: str, count: int, end: str = "+") -> list[Event]:
        """The newest events (up to the stream id `end`, included), newest first."""
        key = _log(fx_id, self.space)
        rows = await self.gateway.call(lambda r: r.xrevrange(key, end, count=count))
        return [Event.from_stream(sid, f) for sid, f in rows]

    async def incidents_by_n(self, fx_id: str, ns: list[int]) -> dict[int, dict[str, str]]:
        """Some incidents by number, in one round trip (missing ones left out)."""
        if not ns:
            return {}
        p = fx_prefix(fx_id, self.space)
        rows = await self._read(f"{p}inc:{n}" for n in ns)
        return {n: h for n, h in zip(ns, rows, strict=True) if h}

    async def _read(self, keys: Iterable[str], fields: tuple[str, ...] = ()) -> list[Any]:
        """HGETALL (or HMGET of `fields`) of each key, as ONE script call: a pipeline of a
        thousand commands costs the client a millisecond each to pack and parse (a screen's
        first paint of a busy night), one script's nested reply a few in all."""
        keys = list(keys)
        if not keys:
            return []
        rows = await self.gateway.call(lambda r: r.eval(READ, len(keys), *keys, *fields))
        if fields:
            return list(rows)
        return [dict(zip(r[::2], r[1::2], strict=True)) for r in rows]

    async def _each_incident(self, fx_id: str, limit: int,
                             fields: tuple[str, ...] = ()) -> list[Any]:
        """Each incident (the newest `limit`, report order): an index read, then one script."""
        p = fx_prefix(fx_id, self.space)
        ns = await self.gateway.call(lambda r: r.zrange(p + "all", -limit, -1))
        return await self._read((f"{p}inc:{n}" for n in ns), fields)

    async def incidents(self, fx_id: str, limit: int = 5000) -> list[dict[str, str]]:
        """Every incident of a fixture in report order (the newest `limit`)."""
        return [h for h in await self._each_incident(fx_id, limit) if h]

    async def incident_fields(self, fx_id: str, fields: tuple[str, ...],
                              limit: int = 5000) -> list[dict[str, str]]:
        """A few fields of every incident (the newest `limit`) in report order, in one
        round trip after the index read: what a map or a count needs, not whole records."""
        rows = await self._each_incident(fx_id, limit, fields)
        return [{k: v for k, v in zip(fields, row, strict=True) if v is not None}
                for row in rows if any(v is not None for v in row)]
