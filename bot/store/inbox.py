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

from bot.store.base import StoreUnavailable, bot_prefix, ops_prefix
from bot.store.gateway import Gateway

KEEP = 7 * 86400
SEEN_TTL = 86400  # platforms retry within minutes (Slack) or hours (Telegram webhooks)
SEEN_LOCAL = 10_000
# KEYS[1] the inbox, KEYS[2] the next offset; ARGV[1] TTL (s), ARGV[2] the batch's offset,
# ARGV[3] how many updates follow, then update id and JSON each. The offset never goes back:
# a batch recorded late (an older getUpdates answer) leaves a later one's offset alone.
_RECORD = """
local n = tonumber(ARGV[3])
for i = 0, n - 1 do redis.call('HSET', KEYS[1], ARGV[4 + 2 * i], ARGV[5 + 2 * i]) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > (tonumber(redis.call('GET', KEYS[2])) or 0) then
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[1])
else
  redis.call('EXPIRE', KEYS[2], ARGV[1])
end
return 1
"""
_TAKE_SEEN = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 1 end
return 0
"""


class Inbox:
    """Recorded-but-unprocessed updates of one bot."""

    def __init__(self, gateway: Gateway, bot_id: str) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self.key = bot_prefix("telegram", bot_id, self.space) + "inbox"
        self.offset_key = bot_prefix("telegram", bot_id, self.space) + "offset"
        # fenced: a batch recorded in a paused master would be lost with it after the bot
        # had confirmed it to Telegram (see Gateway.fenced_script)
        self._record = gateway.fenced_script(_RECORD)

    async def record(self, updates: list[dict[str, Any]]) -> None:
        """Keep a fetched batch and the offset that confirms it, atomically."""
        if not updates:
            return
        rows: list[object] = []
        for u in updates:
            rows += [str(u["update_id"]), json.dumps(u)]
        offset = max(int(u["update_id"]) for u in updates) + 1
        await self.gateway.run_fenced(self._record, [self.key, self.offset_key],
                                      [KEEP, offset, len(updates), *rows])

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
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self.ttl = ttl
        # fenced: a mark taken in a paused master is lost with it, and a retry reaching
        # another replica would be handled twice (see Gateway.fenced_script)
        self._take = gateway.fenced_script(_TAKE_SEEN)
        self._local: OrderedDict[str, None] = OrderedDict()

    async def first(self, key: str) -> bool:
        """True if no replica has taken this inbound key yet (and now this one has)."""
        if key in self._local:
            return False
        try:
            got = bool(await self.gateway.run_fenced(
                self._take, [f"{ops_prefix(self.space)}seen:{key}"], ["1", self.ttl]))
        except StoreUnavailable:
            got = True  # the store is down: this process's memory is all there is
        self._local[key] = None
        if len(self._local) > SEEN_LOCAL:
            self._local.popitem(last=False)
        return got
