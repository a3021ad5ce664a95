"""Sign-in links and sessions of the control-room web view (keys under the `{ops}` tag).

Only SHA-256 digests of link tokens and session ids are stored, so a copy of the database
does not hand out live sessions. Ending a session publishes the member on its revocations
channel, so every replica ends that member's open live feeds at once. Refusals of anonymous
clients go to a small stream of their own, so nobody without a session can evict the member
audit trail.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator

from bot.store.base import ops_prefix
from bot.store.gateway import Gateway

# Read-only: KEYS = the sessions, then the members hash; ARGV = the members to look up.
STILL_OPEN = """
local out, n = {}, #KEYS - 1
for i = 1, n do out[i] = redis.call('HGET', KEYS[i], 'exp') end
for j, who in ipairs(ARGV) do out[n + j] = redis.call('HGET', KEYS[n + 1], who) end
return out
"""


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class WebSessions:
    """One-time sign-in links and the sessions they open."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.ops = ops = ops_prefix(gateway.space)
        self.revoked = ops + "websess.revoked"  # pub/sub: the member whose sessions ended
        self.running_key = ops + "web.running"  # the base URL of a running control-room server
        self.link_ttl_key = ops + "web.running.link_ttl"  # seconds its sign-in links live

    async def announce(self, base: str, ttl: int, link_ttl: int | None = None) -> None:
        """A control-room server is up at `base`, its links living `link_ttl` seconds: links
        lead there (renewed while it runs)."""
        pipe = self.gateway.pipeline(transaction=True)
        pipe.set(self.running_key, base, ex=ttl)
        if link_ttl is not None:
            pipe.set(self.link_ttl_key, str(link_ttl), ex=ttl)
        await self.gateway.call(pipe.execute())

    async def withdraw(self, base: str) -> None:
        """The server at `base` stopped (another one's announcement is left alone)."""
        pipe = self.gateway.pipeline(transaction=False)
        pipe.get(self.running_key)
        got = await self.gateway.call(pipe.execute())
        if got and got[0] == base:
            await self.gateway.call(lambda r: r.delete(self.running_key, self.link_ttl_key))

    async def running(self) -> tuple[str, int | None] | None:
        """Where a running control-room server is reached and how long its links live (None
        when it did not say), or None when none runs."""
        pipe = self.gateway.pipeline(transaction=False)
        pipe.get(self.running_key)
        pipe.get(self.link_ttl_key)
        base, link_ttl = await self.gateway.call(pipe.execute())
        if not base:
            return None
        return str(base), int(link_ttl) if link_ttl and str(link_ttl).isdigit() else None

    async def save_link(self, token: str, who: str, role: str, issued_ts: int,
                        expires_ts: int, ttl: int) -> None:
        """Keep a one-time link for `who` (as `role`), issued at issued_ts, promised until
        expires_ts (Redis drops it later)."""
        key = f"{self.ops}weblink:{_digest(token)}"
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hset(key, mapping={"who": who, "role": role, "iat": str(issued_ts),
                                "exp": str(expires_ts)})
        pipe.expire(key, ttl)
        await self.gateway.call(pipe.execute())

    async def take_link(self, token: str) -> dict[str, str] | None:
        """Use a link once, atomically: its record, or None if unknown, used or dropped."""
        key = f"{self.ops}weblink:{_digest(token)}"
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hgetall(key)
        pipe.delete(key)
        rec, _ = await self.gateway.call(pipe.execute())
        return rec or None

    async def peek_link(self, token: str) -> dict[str, str] | None:
        """A link's record without using it up (the sign-in page names its member)."""
        rec = await self.gateway.call(lambda r: r.hgetall(f"{self.ops}weblink:{_digest(token)}"))
        return rec or None

    async def open_session(self, sid: str, who: str, role: str, csrf: str, expires_ts: int,
                           ttl: int) -> None:
        """Record a session, indexed by member so it can be ended with them."""
        d = _digest(sid)
        key, index = f"{self.ops}websess:{d}", f"{self.ops}websess_of:{who}"
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hset(key, mapping={"who": who, "role": role, "csrf": csrf,
                                "exp": str(expires_ts)})
        pipe.expire(key, ttl)
        pipe.sadd(index, d)
        pipe.expire(index, ttl)
        await self.gateway.call(pipe.execute())

    async def session(self, sid: str) -> dict[str, str] | None:
        """A session's record, or None."""
        rec = await self.gateway.call(lambda r: r.hgetall(f"{self.ops}websess:{_digest(sid)}"))
        return rec or None

    async def still_open(self, sids: list[str], whos: list[str]
                         ) -> tuple[list[str | None], list[dict[str, str] | None]]:
        """Each session's expiry (None: ended) and each member's record (None: not an
        invited member), in one script call for any number of screens (checked before every
        batch the screens get: a pipeline costs the client per command)."""
        if not sids and not whos:
            return [], []
        keys = [f"{self.ops}websess:{_digest(sid)}" for sid in sids] + [self.ops + "members"]
        got = await self.gateway.call(lambda r: r.eval(STILL_OPEN, len(keys), *keys, *whos))
        exps, recs = got[:len(sids)], got[len(sids):]
        return list(exps), [json.loads(r) if r else None for r in recs]

    async def end_session(self, sid: str, who: str) -> None:
        """Sign one session out."""
        d = _digest(sid)
        pipe = self.gateway.pipeline(transaction=True)
        pipe.delete(f"{self.ops}websess:{d}")
        pipe.srem(f"{self.ops}websess_of:{who}", d)
        await self.gateway.call(pipe.execute())
        await self._revoke(who)

    async def end_sessions_of(self, who: str) -> int:
        """End every session of a member (removed or role changed); how many there were."""
        index = f"{self.ops}websess_of:{who}"
        digests = await self.gateway.call(lambda r: r.smembers(index))
        pipe = self.gateway.pipeline(transaction=True)
        for d in digests:
            pipe.delete(f"{self.ops}websess:{d}")
        pipe.delete(index)
        await self.gateway.call(pipe.execute())
        await self._revoke(who)
        return len(digests)

    async def _revoke(self, who: str) -> None:
        # after the write, outside MULTI: PUBLISH has no key, so no Cluster slot to share
        await self.gateway.call(lambda r: r.publish(self.revoked, who))

    async def revocations(self, ready: asyncio.Event | None = None) -> AsyncIterator[str]:
        """Members whose sessions ended, as any replica ends them; `ready` is set once the
        subscription is confirmed. Ends when Redis goes away (the caller resubscribes)."""
        pubsub = self.gateway.pubsub()
        try:
            await self.gateway.call(pubsub.subscribe(self.revoked))
            while True:
                msg = await self.gateway.call(pubsub.get_message(timeout=1.0))
                if msg is None:
                    continue
                if msg.get("type") == "subscribe" and ready is not None:
                    ready.set()
                elif msg.get("type") == "message" and isinstance(msg.get("data"), str):
                    yield msg["data"]
        finally:
            await pubsub.aclose()
