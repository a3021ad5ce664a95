"""Rate-limit windows in Redis, shared by every replica (sorted sets of send times)."""

from __future__ import annotations

import itertools
import os
from importlib import resources

from bot.store.base import StoreUnavailable, chat_prefix, platform_prefix
from bot.store.gateway import Gateway

_ids = itertools.count()


class Windows:
    """Take a slot in several sliding windows at once, or learn how long to wait.

    A chat's windows carry the chat's own hash tag, the platform-wide ones the platform's
    (`{rl:<platform>}`): on a Cluster, a slot that stops taking writes stops only the chats
    whose windows live there (and the rate limiter paces locally meanwhile). Windows in
    different slots are taken one slot at a time; when a later slot says wait, the slots
    already taken are given back, so a refused send holds no room anywhere."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        lua = resources.files("bot.store").joinpath("ratelimit.lua").read_text()
        self._take = gateway.fenced_script(lua)  # a late take would count nowhere

    def key(self, platform: str, scope: str) -> str:
        """One window's key: a chat's scope ('chat:<id>:…', 'group:<id>:…') with that chat,
        the bot-wide one ('bot:…') with the platform."""
        kind, _, rest = scope.partition(":")
        if kind in ("chat", "group") and rest:
            return f"{chat_prefix(platform, _chat_of(rest), self.space)}rl:{scope}"
        return platform_prefix(platform, self.space) + scope

    @staticmethod
    def member() -> str:
        """A unique name for one send in the windows (see `take`, `answered`)."""
        return f"{os.getpid()}:{next(_ids)}"

    async def take(self, windows: list[tuple[str, int, float]], now: float,
                   member: str = "", hold: dict[str, float] | None = None) -> float:
        """(key, count, per seconds) windows: 0 if a slot was taken in all (by `member`,
        a fresh one if not given), else seconds to wait before asking again. `hold`: key ->
        seconds the send counts as if later (until `answered` re-stamps it: on its way, it
        may arrive that much after it left)."""
        if not windows:
            return 0.0
        member = member or self.member()
        groups: dict[str, list[tuple[str, int, float]]] = {}
        for w in windows:
            groups.setdefault(_tag(w[0]), []).append(w)
        taken: list[str] = []
        try:
            for group in groups.values():
                args: list[object] = [int(now * 1000), member]
                for key, count, per in group:
                    args += [count, int(per * 1000), int((hold or {}).get(key, 0.0) * 1000)]
                ms = int(await self.gateway.run_fenced(
                    self._take, [k for k, _, _ in group], args))
                if ms > 0:
                    await self._give_back(taken, member)
                    return ms / 1000.0
                taken += [k for k, _, _ in group]
        except StoreUnavailable:
            await self._give_back(taken, member)
            raise
        return 0.0

    async def _give_back(self, keys: list[str], member: str) -> None:
        """Remove a send from windows it was counted in (best effort: it expires anyway)."""
        for key in keys:
            try:
                await self.gateway.call(lambda r, key=key: r.zrem(key, member))
            except StoreUnavailable:
                pass

    async def answered(self, windows: list[tuple[str, int, float]], member: str,
                       now: float) -> None:
        """The platform answered the send `member` took: from now on the windows count it
        from `now` (its arrival, as the platform counts), for every replica alike. One
        round trip per slot; a window that no longer holds the send is left alone."""
        groups: dict[str, list[tuple[str, int, float]]] = {}
        for w in windows:
            groups.setdefault(_tag(w[0]), []).append(w)
        for group in groups.values():
            pipe = self.gateway.pipeline(transaction=False)
            for key, _, per in group:
                pipe.zadd(key, {member: int(now * 1000)}, xx=True)
                pipe.pexpire(key, int(per * 1000) + 1000)
            await self.gateway.call(pipe.execute())

    async def present(self, platform: str, replica: str, now: float, ttl_s: float) -> int:
        """Say this replica sends on `platform` (beside the platform's bot-wide windows):
        how many replicas did so within the last `ttl_s` seconds, this one included."""
        key = platform_prefix(platform, self.space) + "replicas"
        pipe = self.gateway.pipeline(transaction=True)
        pipe.zadd(key, {replica: int(now * 1000)})
        pipe.zremrangebyscore(key, "-inf", int((now - ttl_s) * 1000))
        pipe.zcard(key)
        pipe.pexpire(key, int(ttl_s * 2000))
        return int((await self.gateway.call(pipe.execute()))[2])

    async def used(self, windows: list[tuple[str, int, float]], now: float) -> list[int]:
        """How many sends each window holds right now."""
        pipe = self.gateway.pipeline(transaction=False)
        for key, _, per in windows:
            pipe.zcount(key, f"({int((now - per) * 1000)}", "+inf")
        return [int(n) for n in await self.gateway.call(pipe.execute())]


def _chat_of(rest: str) -> str:
    """The chat id in a scope's tail ('<chat>:<count>/<per>[:<call>]'); chat ids hold no
    '/' and the limit part always does."""
    parts = rest.split(":")
    for i, part in enumerate(parts):
        if "/" in part:
            return ":".join(parts[:i])
    return rest


def _tag(key: str) -> str:
    """A key's hash tag (what decides its Cluster slot)."""
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start + 1:end] if start >= 0 and end > start + 1 else key
