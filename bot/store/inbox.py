"""The Telegram inbox: fetched updates kept in Redis until processed.

Polling confirms an update to Telegram by asking for the next offset; the bot asks only after
the fetched batch is recorded here, and processes from the record, so a crash after a fetch
loses nothing: on restart the recorded updates are processed first. One hash per bot token
(tagged by the bot's id), plus the next offset to ask for.
"""

from __future__ import annotations

import json
from typing import Any

from bot.store.client import Store

KEEP = 7 * 86400


class Inbox:
    """Recorded-but-unprocessed updates of one bot."""

    def __init__(self, store: Store, bot_id: str) -> None:
        self.store = store
        self.key = f"md:{{tg:{bot_id}}}:inbox"
        self.offset_key = f"md:{{tg:{bot_id}}}:offset"

    async def record(self, updates: list[dict[str, Any]]) -> None:
        """Keep a fetched batch and the offset that confirms it, atomically."""
        if not updates:
            return
        pipe = self.store.r.pipeline(transaction=True)
        pipe.hset(self.key, mapping={str(u["update_id"]): json.dumps(u) for u in updates})
        pipe.expire(self.key, KEEP)
        pipe.set(self.offset_key, max(int(u["update_id"]) for u in updates) + 1, ex=KEEP)
        await self.store._call(pipe.execute())

    async def done(self, update_id: int) -> None:
        """An update was processed: forget it."""
        await self.store._call(self.store.r.hdel(self.key, str(update_id)))

    async def pending(self) -> list[dict[str, Any]]:
        """Recorded updates not yet processed, oldest first."""
        rows = await self.store._call(self.store.r.hgetall(self.key))
        return [json.loads(v) for _, v in sorted(rows.items(), key=lambda kv: int(kv[0]))]

    async def offset(self) -> int | None:
        """The offset to ask for next (None: nothing recorded yet)."""
        raw = await self.store._call(self.store.r.get(self.offset_key))
        return int(raw) if raw else None
