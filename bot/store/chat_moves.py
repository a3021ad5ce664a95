"""Chat id overrides: where a platform moved a chat (a Telegram group upgraded to a
supergroup gets a new id), persisted so every replica and every restart sends to the new id.

`ChatMoves.resolve(platform, chat)` is the chat-id resolution the delivery layer calls before
sending; it reads one small hash, cached for a few seconds per process. Once read, a send
never waits for it again: a stale copy is answered at once while one read refreshes it in the
background (the hash lives in the shared `{ops}` slot, and a paused master there held every
Telegram send of every fixture for as long as the pause). A chat moved meanwhile is
answered by Telegram's "migrated" error, which the adapter follows and records.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from bot.store.base import StoreUnavailable, chat_prefix, ops_prefix, tag_prefix
from bot.store.gateway import Gateway

MAX_HOPS = 5  # a chat moved again after its move (never seen, but cheap to follow)

log = logging.getLogger(__name__)


class ChatMoves:
    """Read and record chat moves; move live-message references along."""

    def __init__(self, gateway: Gateway, ttl: float = 5.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self.key = ops_prefix(gateway.space) + "chatmoves"  # "<platform>:<old chat>" -> new
        self.ttl = ttl
        self._monotonic = monotonic
        self._cache: dict[str, str] = {}
        self._fresh_until = float("-inf")
        self._loaded = False  # read at least once: from then on nobody waits for a read
        self._refresh: asyncio.Task[None] | None = None

    async def all(self) -> dict[str, str]:
        """Every move: "<platform>:<old>" -> new chat (cached for `ttl` seconds; once
        read, a stale copy is answered while one background read refreshes it)."""
        if self._monotonic() < self._fresh_until:
            return self._cache
        if not self._loaded:
            await self._read()
            return self._cache
        if self._refresh is None or self._refresh.done():
            self._refresh = asyncio.create_task(self._background())
        return self._cache

    async def _read(self) -> None:
        fresh = await self.gateway.call(lambda r: r.hgetall(self.key))
        # moves are only ever added: one this process recorded during the read is kept
        self._cache = {**self._cache, **fresh}
        self._loaded = True
        self._fresh_until = self._monotonic() + self.ttl

    async def _background(self) -> None:
        try:
            await self._read()
        except StoreUnavailable:
            self._fresh_until = self._monotonic() + self.ttl  # ask again after ttl
        except Exception:
            log.exception("reading the chat moves failed")
            self._fresh_until = self._monotonic() + self.ttl

    async def resolve(self, platform: str, chat: str) -> str:
        """The chat to send to now: the newest id of a moved chat, else the chat itself.
        While the store is away, the moves last read (an answer still leaves)."""
        try:
            moves = await self.all()
        except StoreUnavailable:
            moves = self._cache
            self._fresh_until = self._monotonic() + self.ttl  # ask again after ttl, not per send
        for _ in range(MAX_HOPS):
            new = moves.get(f"{platform}:{chat}")
            if not new:
                break
            chat = new
        return chat

    async def moved_from(self, platform: str) -> dict[str, str]:
        """old chat -> new chat for one platform."""
        prefix = platform + ":"
        return {k[len(prefix):]: v for k, v in (await self.all()).items()
                if k.startswith(prefix)}

    async def record(self, platform: str, old: str, new: str) -> bool:
        """Remember a move; True for the one call (on any replica) that recorded it first,
        which then moves the live-message references and tells the room."""
        first = bool(await self.gateway.call(
            lambda r: r.hsetnx(self.key, f"{platform}:{old}", new)))
        self._cache = {**self._cache, f"{platform}:{old}": new}
        if first:
            await self._move_refs(platform, old, new)
        return first

    async def _move_refs(self, platform: str, old: str, new: str) -> None:
        """Copy the live-message references (card ids to edit in place) to the new chat."""
        old_part, new_part = f":{platform}:{old}:", f":{platform}:{new}:"
        space = self.space
        old_chat, new_chat = chat_prefix(platform, old, space), chat_prefix(platform, new, space)
        # "*" as the tag: every fixture's (and the shared) references, in this club only
        refs = f"{tag_prefix('*', space)}msg:{platform}:{old}:*"

        async def scan(r: Any) -> list[str]:
            keys: list[str] = []
            for pattern in (refs, f"{old_chat}msgof:*"):
                async for key in r.scan_iter(match=pattern, count=500):
                    keys.append(key)
            return keys

        keys = await self.gateway.call(scan)  # an outage mid-scan is StoreUnavailable
        if not keys:
            return
        pipe = self.gateway.pipeline()
        for key in keys:
            pipe.get(key)
            pipe.ttl(key)
        got = await self.gateway.call(pipe.execute())
        pipe = self.gateway.pipeline()
        for i, key in enumerate(keys):
            value, ttl = got[2 * i], got[2 * i + 1]
            if value is not None:
                moved = key.replace(old_chat, new_chat, 1)
                pipe.set(moved.replace(old_part, new_part, 1), value,
                         ex=ttl if ttl and ttl > 0 else None)
        await self.gateway.call(pipe.execute())
