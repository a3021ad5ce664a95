"""Rate-limit windows in Redis, shared by every replica (sorted sets of send times)."""

from __future__ import annotations

import itertools
import os
from importlib import resources

from bot.store.client import Store

_ids = itertools.count()


class Windows:
    """Take a slot in several sliding windows at once, or learn how long to wait."""

    def __init__(self, store: Store) -> None:
        self.store = store
        lua = resources.files("bot.store").joinpath("ratelimit.lua").read_text()
        self._take = store.r.register_script(lua)

    @staticmethod
    def key(platform: str, scope: str) -> str:
        """One window's key; all of a platform's windows share a hash slot (one bot token)."""
        return f"md:{{rl:{platform}}}:{scope}"

    async def take(self, windows: list[tuple[str, int, float]], now: float) -> float:
        """(key, count, per seconds) windows: 0 if a slot was taken in all, else seconds to
        wait before asking again."""
        if not windows:
            return 0.0
        args: list[object] = [int(now * 1000), f"{os.getpid()}:{next(_ids)}"]
        for _, count, per in windows:
            args += [count, int(per * 1000)]
        ms = await self.store._call(self._take(keys=[k for k, _, _ in windows], args=args))
        return int(ms) / 1000.0

    async def used(self, windows: list[tuple[str, int, float]], now: float) -> list[int]:
        """How many sends each window holds right now."""
        pipe = self.store.r.pipeline(transaction=False)
        for key, _, per in windows:
            pipe.zcount(key, f"({int((now - per) * 1000)}", "+inf")
        return [int(n) for n in await self.store._call(pipe.execute())]
