"""Rate-limit windows in Redis, shared by every replica (sorted sets of send times)."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Awaitable, Callable
from functools import partial
from importlib import resources
from typing import Any, TypeVar

from bot.store.base import StoreUnavailable, chat_prefix, platform_prefix
from bot.store.copies import ALONE_DEADLINE_S, Copies, hash_tag, in_copy, second_tag
from bot.store.gateway import Gateway

_ids = itertools.count()
T = TypeVar("T")


class Windows:
    """Take a slot in several sliding windows at once, or learn how long to wait.

    A chat's windows carry the chat's own hash tag, the platform-wide ones the platform's
    (`{rl:<platform>}`): on a Cluster, a slot that stops taking writes stops only the chats
    whose windows live there (and the rate limiter paces locally meanwhile). Windows in
    different slots are taken one slot at a time; when a later slot says wait, the slots
    already taken are given back, so a refused send holds no room anywhere.

    On a Cluster the platform-wide windows (every chat's) are kept in two copies on slots of
    different masters (bot.store.copies): with the master of one paused or lost, sends go
    on counted in the other, where they would all stop for the client's timeouts."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        lua = resources.files("bot.store").joinpath("ratelimit.lua").read_text()
        self._take = gateway.fenced_script(lua)  # a late take would count nowhere
        self.copies = Copies()
        self._second: dict[str, str] = {}  # a platform tag -> its second copy's tag

    def copies_of(self, tag: str) -> list[str]:
        """The hash tags a group of windows is kept under: two for a platform's shared tag
        on a Cluster, else the tag alone."""
        if not self.gateway.cluster or not _platform_wide(tag):
            return [tag]
        if tag not in self._second:
            self._second[tag] = second_tag(tag)
        return [tag, self._second[tag]]

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
        taken: list[str] = []
        try:
            for tag, group in _groups(windows).items():
                args: list[object] = [int(now * 1000), member]
                for key, count, per in group:
                    args += [count, int(per * 1000), int((hold or {}).get(key, 0.0) * 1000)]
                ms, took = await self._take_group(tag, [k for k, _, _ in group], args)
                taken += took
                if ms > 0:
                    await self._give_back(taken, member)
                    return ms / 1000.0
        except StoreUnavailable:
            await self._give_back(taken, member)
            raise
        return 0.0

    async def _take_group(self, tag: str, keys: list[str], args: list[object]
                          ) -> tuple[int, list[str]]:
        """Take a slot in the windows of one hash tag, in each of its copies that answers:
        the longest wait any asks for (0: taken), and the keys a slot was taken in."""
        answers = await self._first(tag, keys, self._take_in, args)
        return (max(int(ms) for ms in answers.values()),
                [k for c, ms in answers.items() if int(ms) <= 0 for k in _named(keys, tag, c)])

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
        for tag, group in _groups(windows).items():
            keys, pers = [k for k, _, _ in group], [per for _, _, per in group]
            await self._first(tag, keys, self._restamp, pers, member, now)

    async def _first(self, tag: str, keys: list[str],
                     call: Callable[..., Awaitable[T]], *args: Any) -> dict[str, T]:
        """`call(keys, *args)` once per copy of a tag's windows, the keys named in it (see
        Copies.first). On a Cluster a tag kept alone (a chat's) is given up on after
        ALONE_DEADLINE_S, and not asked again while that call is pending: its chat's windows
        are then taken under the platform's tag, in its two copies. On one master there is
        nowhere else to take them: the call waits for the store as every write does."""
        copies = self.copies_of(tag)
        if len(copies) == 1 and not self.gateway.cluster:  # one master: no task per call
            return {tag: await call(keys, *args)}
        alone = len(copies) == 1
        return await self.copies.first({c: partial(call, _named(keys, tag, c), *args)
                                        for c in copies}, ALONE_DEADLINE_S if alone else None)

    async def _take_in(self, keys: list[str], args: list[object]) -> int:
        return int(await self.gateway.run_fenced(self._take, keys, args))

    async def _restamp(self, keys: list[str], pers: list[float], member: str,
                       now: float) -> None:
        pipe = self.gateway.pipeline(transaction=False)
        for key, per in zip(keys, pers, strict=True):
            pipe.zadd(key, {member: int(now * 1000)}, xx=True)
            pipe.pexpire(key, int(per * 1000) + 1000)
        await self.gateway.call(pipe.execute())

    async def seed(self, windows: list[tuple[str, int, float]], sends: dict[str, float],
                   now: float) -> None:
        """Count in these windows sends made while they could not be asked (member -> the
        time each counts from), those still within each window; one already counted stays
        as it is. So a chat's sends counted in one place are not forgotten in the other."""
        for tag, group in _groups(windows).items():
            keys, pers = [k for k, _, _ in group], [per for _, _, per in group]
            await self._first(tag, keys, self._seed_in, pers, sends, now)

    async def _seed_in(self, keys: list[str], pers: list[float], sends: dict[str, float],
                       now: float) -> None:
        pipe = self.gateway.pipeline(transaction=False)
        queued = False
        for key, per in zip(keys, pers, strict=True):
            inside = {m: int(at * 1000) for m, at in sends.items() if at > now - per}
            if inside:
                pipe.zadd(key, inside, nx=True)
                pipe.pexpire(key, int(per * 1000) + 1000)
                queued = True
        if queued:
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
        """How many sends each window holds right now (the most any copy of it holds)."""
        counts = [0] * len(windows)

        async def count(keys: list[str], pers: list[float]) -> list[int]:
            pipe = self.gateway.pipeline(transaction=False)
            for key, per in zip(keys, pers, strict=True):
                pipe.zcount(key, f"({int((now - per) * 1000)}", "+inf")
            return [int(n) for n in await self.gateway.call(pipe.execute())]

        async def part(tag: str, places: list[int]) -> None:
            answers = await self._first(tag, [windows[i][0] for i in places], count,
                                        [windows[i][2] for i in places])
            for j, i in enumerate(places):
                counts[i] = max(ns[j] for ns in answers.values())

        places: dict[str, list[int]] = {}
        for i, (key, _, _) in enumerate(windows):
            places.setdefault(hash_tag(key), []).append(i)
        await asyncio.gather(*(part(tag, at) for tag, at in places.items()))
        return counts


def _chat_of(rest: str) -> str:
    """The chat id in a scope's tail ('<chat>:<count>/<per>[:<call>]'); chat ids hold no
    '/' and the limit part always does."""
    parts = rest.split(":")
    for i, part in enumerate(parts):
        if "/" in part:
            return ":".join(parts[:i])
    return rest


def _groups(windows: list[tuple[str, int, float]]) -> dict[str, list[tuple[str, int, float]]]:
    """Windows by hash tag (one round trip per slot), in the order first named."""
    groups: dict[str, list[tuple[str, int, float]]] = {}
    for w in windows:
        groups.setdefault(hash_tag(w[0]), []).append(w)
    return groups


def _named(keys: list[str], tag: str, copy: str) -> list[str]:
    """Keys of one hash tag as named in one of its copies."""
    return keys if copy == tag else [in_copy(k, tag, copy) for k in keys]


def _platform_wide(tag: str) -> bool:
    """Whether a hash tag is a platform's shared one ('rl:<platform>', in a club's space
    '<club>/rl:<platform>'), not a chat's or a copy's."""
    name = tag.rpartition("/")[2]
    return name.startswith("rl:") and name.count(":") == 1

