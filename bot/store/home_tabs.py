"""Who has the Slack Home tab open, shared by every replica: a sorted set of user -> when
their watch lapses (renewed each time they open the tab), so the one replica refreshing
Home tabs (under the leader lease) knows whom to refresh, whichever replica they opened it on."""

from __future__ import annotations

from bot.store.base import OPS, StoreBase

WATCHERS = OPS + "home:watchers"


class HomeWatchers(StoreBase):
    """The Home-tab watch list."""

    async def watch_home(self, user: str, until_ts: float) -> None:
        """A Slack user opened the Home tab: watch it until `until_ts` (epoch seconds)."""
        await self._call(self.r.zadd(WATCHERS, {user: until_ts}))

    async def unwatch_home(self, user: str) -> None:
        """Stop refreshing a user's Home tab (no longer a member)."""
        await self._call(self.r.zrem(WATCHERS, user))

    async def home_watchers(self, now_ts: float) -> list[str]:
        """Users whose watch has not lapsed (lapsed ones are forgotten)."""
        pipe = self._pipe()
        pipe.zremrangebyscore(WATCHERS, "-inf", now_ts)
        pipe.zrangebyscore(WATCHERS, now_ts, "+inf")
        _, users = await self._call(pipe.execute())
        return list(users)
