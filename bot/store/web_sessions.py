"""Sign-in links and sessions of the control-room web view (keys under the `{ops}` tag).

Only SHA-256 digests of link tokens and session ids are stored, so a copy of the database
does not hand out live sessions.
"""

from __future__ import annotations

import hashlib

from bot.store.client import OPS, Store


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class WebSessions:
    """One-time sign-in links and the sessions they open."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.r = store.r

    async def save_link(self, token: str, who: str, role: str, expires_ts: int,
                        ttl: int) -> None:
        """Keep a one-time link for `who` (as `role`) until expires_ts (Redis drops it later)."""
        key = f"{OPS}weblink:{_digest(token)}"
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, mapping={"who": who, "role": role, "exp": str(expires_ts)})
        pipe.expire(key, ttl)
        await self.store._call(pipe.execute())

    async def take_link(self, token: str) -> dict[str, str] | None:
        """Use a link once, atomically: its record, or None if unknown, used or dropped."""
        key = f"{OPS}weblink:{_digest(token)}"
        pipe = self.r.pipeline(transaction=True)
        pipe.hgetall(key)
        pipe.delete(key)
        rec, _ = await self.store._call(pipe.execute())
        return rec or None

    async def open_session(self, sid: str, who: str, role: str, csrf: str, expires_ts: int,
                           ttl: int) -> None:
        """Record a session, indexed by member so it can be ended with them."""
        d = _digest(sid)
        key, index = f"{OPS}websess:{d}", f"{OPS}websess_of:{who}"
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, mapping={"who": who, "role": role, "csrf": csrf,
                                "exp": str(expires_ts)})
        pipe.expire(key, ttl)
        pipe.sadd(index, d)
        pipe.expire(index, ttl)
        await self.store._call(pipe.execute())

    async def session(self, sid: str) -> dict[str, str] | None:
        """A session's record, or None."""
        rec = await self.store._call(self.r.hgetall(f"{OPS}websess:{_digest(sid)}"))
        return rec or None

    async def end_session(self, sid: str, who: str) -> None:
        """Sign one session out."""
        d = _digest(sid)
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(f"{OPS}websess:{d}")
        pipe.srem(f"{OPS}websess_of:{who}", d)
        await self.store._call(pipe.execute())

    async def end_sessions_of(self, who: str) -> int:
        """End every session of a member (removed or role changed); how many there were."""
        index = f"{OPS}websess_of:{who}"
        digests = await self.store._call(self.r.smembers(index))
        pipe = self.r.pipeline(transaction=True)
        for d in digests:
            pipe.delete(f"{OPS}websess:{d}")
        pipe.delete(index)
        await self.store._call(pipe.execute())
        return len(digests)
