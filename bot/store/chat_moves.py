"""Chat id overrides: where a platform moved a chat (a Telegram group upgraded to a
supergroup gets a new id), persisted so every replica and every restart sends to the new id.

`ChatMoves.resolve(platform, chat)` is the chat-id resolution the delivery layer calls before
sending; it reads one small hash, cached for a few seconds per process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bot.store.base import StoreUnavailable, chat_prefix, ops_prefix, tag_prefix
from bot.store.gateway import Gateway

MAX_HOPS = 5  # a chat moved again after its move (never seen, but cheap to follow)


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

    async def all(self) -> dict[str, str]:
        """Every move: "<platform>:<old>" -> new chat (cached for `ttl` seconds)."""
        if self._monotonic() >= self._fresh_until:
            self._cache = await self.gateway.call(lambda r: r.hgetall(self.key))
            self._fresh_until = self._monotonic() + self.ttl
        return self._cache

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
