"""The Telegram inbox: fetched updates kept in Redis until processed.

Polling confirms an update to Telegram by asking for the next offset; the bot asks only after
the fetched batch is recorded here, and processes from the record, so a crash after a fetch
loses nothing: on restart the recorded updates are processed first. One hash per bot token
(tagged by the bot's id), plus the next offset to ask for.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from bot.store.base import OPS, StoreUnavailable, bot_prefix
from bot.store.gateway import Gateway

KEEP = 7 * 86400
SEEN_TTL = 86400  # platforms retry within minutes (Slack) or hours (Telegram webhooks)
SEEN_LOCAL = 10_000


class Inbox:
    """Recorded-but-unprocessed updates of one bot."""

    def __init__(self, gateway: Gateway, bot_id: str) -> None:
        self.gateway = gateway
        self.key = bot_prefix("telegram", bot_id) + "inbox"
        self.offset_key = bot_prefix("telegram", bot_id) + "offset"

    async def record(self, updates: list[dict[str, Any]]) -> None:
        """Keep a fetched batch and the offset that confirms it, atomically."""
        if not updates:
            return
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hset(self.key, mapping={str(u["update_id"]): json.dumps(u) for u in updates})
        pipe.expire(self.key, KEEP)
        pipe.set(self.offset_key, max(int(u["update_id"]) for u in updates) + 1, ex=KEEP)
        await self.gateway.call(pipe.execute())

    async def done(self, update_id: int) -> None:
        """An update was processed: forget it."""
        await self.gateway.call(lambda r: r.hdel(self.key, str(update_id)))

    async def pending(self) -> list[dict[str, Any]]:
        """Recorded updates not yet processed, oldest first."""
        rows = await self.gateway.call(lambda r: r.hgetall(self.key))
        return [json.loads(v) for _, v in sorted(rows.items(), key=lambda kv: int(kv[0]))]

    async def offset(self) -> int | None:
        """The offset to ask for next (None: nothing recorded yet)."""
        raw = await self.gateway.call(lambda r: r.get(self.offset_key))
        return int(raw) if raw else None


class Seen:
    """Inbound dedupe shared by every replica: the first to see a key (a Slack retry's
    event id, a Telegram update id) takes it with SET NX in Redis, one round trip; the
    others drop it. Keys this process saw are also remembered locally (no round trip for a
    retry that reaches the same replica, and a guard while the store is down)."""

    def __init__(self, gateway: Gateway, ttl: int = SEEN_TTL) -> None:
        self.gateway = gateway
        self.ttl = ttl
        self._local: OrderedDict[str, None] = OrderedDict()

    async def first(self, key: str) -> bool:
        """True if no replica has taken this inbound key yet (and now this one has)."""
        if key in self._local:
            return False
        try:
            got = bool(await self.gateway.call(lambda r: r.set(f"{OPS}seen:{key}", "1",
                                                               nx=True, ex=self.ttl)))
        except StoreUnavailable:
            got = True  # the store is down: this process's memory is all there is
        self._local[key] = None
        if len(self._local) > SEEN_LOCAL:
            self._local.popitem(last=False)
        return got
