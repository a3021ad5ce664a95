"""Resends after a "NOT CONFIRMED" answer, shared by every replica: per reporter, the first
dedupe key of each command whose outcome is unknown (a hash, content key -> dedupe key, with
a short TTL), and one marker key that lives as long as any such entry may, so a replica that
(re)subscribes to the changes channel learns that there are unsure writes to look up."""

from __future__ import annotations

from bot.store.base import ops_prefix
from bot.store.gateway import Gateway


class Unsure:
    """Reporters' unsure commands, shared by every replica, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        ops = ops_prefix(gateway.space)
        self.entries = ops + "unsure:"  # unsure:<platform>:<user> -> {content: first dedupe}
        self.marker = ops + "unsure-any"  # exists while some reporter may have an entry

    async def remember_unsure(self, who: str, entries: dict[str, str], ttl_s: int) -> None:
        """Record a reporter's unsure commands (content key -> first dedupe key) for ttl_s
        from now (always the same window: each write only lengthens what is there)."""
        ttl_s = max(1, ttl_s)
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hset(self.entries + who, mapping=entries)
        pipe.expire(self.entries + who, ttl_s)
        pipe.set(self.marker, "1", ex=ttl_s)
        await self.gateway.call(pipe.execute())

    async def unsure_key(self, who: str, content: str) -> str | None:
        """The first dedupe key of a reporter's unsure command with this content, if any."""
        return await self.gateway.call(lambda r: r.hget(self.entries + who, content))

    async def forget_unsure(self, who: str, content: str) -> None:
        """The command's outcome is known now: a repeat of it is a new command."""
        await self.gateway.call(lambda r: r.hdel(self.entries + who, content))

    async def unsure_ttl(self) -> float:
        """Seconds for which some reporter may still have an unsure command (0: none)."""
        ms = await self.gateway.call(lambda r: r.pttl(self.marker))
        return max(0, int(ms)) / 1000
