"""The App Home tab: a member's live /status board, republished only when it changed.

Only members get the board (a stranger who opens the tab is told how to join, once), and a
change anywhere republishes a member's tab only if what that member can see is different.
With several replicas, who has the tab open is kept in Redis (for HOME_WATCH_S after they
last opened it) and one replica, the leader-lease holder, refreshes every open tab when a
change arrives (its own, or another replica's through Redis pub/sub).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.parts import AdapterParts
from bot.adapters.slack.blocks import home_view
from bot.core.ports import CoreAPI
from bot.domain.messages import Command, Reply, Result
from bot.settings import Settings
from bot.store import StoreUnavailable, WritesRefused

log = logging.getLogger(__name__)

HOME_WATCH_S = 30 * 60  # an opened tab is kept fresh this long after each opening
NOT_A_MEMBER = Reply("You are not registered. Ask control for an invite code, then send "
                     "/matchday join <code>.", title="Matchday Ops")


class HomeTab:
    """Publishes members' Home tabs (views.publish) from their /status."""

    def __init__(self, core: CoreAPI, parts: AdapterParts, settings: Settings,
                 client: AsyncWebClient,
                 spawn: Callable[[Awaitable[Any]], None],
                 leader: Callable[[], bool] = lambda: True) -> None:
        self.core = core
        self.platform = parts.platform  # who has a Home tab open
        self.clock = parts.clock
        self.outage = parts.outage
        self.settings = settings
        self.client = client
        self.spawn = spawn
        self.leader = leader  # whether this replica holds the singleton lease
        self._shown: dict[str, str] = {}  # user -> digest of what their tab shows
        self._busy = False
        self._again = False

    async def opened(self, user: str) -> None:
        """app_home_opened: a member gets their board; a stranger the way in, once."""
        try:
            member = await self.core.member(f"slack:{user}")
        except StoreUnavailable:
            return
        if member is None:
            await self._publish(user, NOT_A_MEMBER)
            return
        try:
            await self.platform.watch_home(user, time.time() + HOME_WATCH_S)
        except StoreUnavailable as exc:
            self.outage.count("{n} Home tab openings not recorded",
                              refused=isinstance(exc, WritesRefused))
        await self.publish(user)

    async def publish(self, user: str) -> None:
        """Render the member's /status (asked of the core as them) on their Home tab, and
        the stewarding plan per zone (/posts) when their role may see it."""
        result = await self._ask(user, "/status")
        more: list[Reply] = []
        member = await self.core.member(f"slack:{user}")
        if member is not None and self.core.may(member.role, "posts"):
            plan = await self._ask(user, "/posts")
            if plan is not None and plan.reply.ok:
                more.append(plan.reply)
        await self._publish(user, result.reply if result is not None
                            else Reply("Nothing to show yet."), more)

    async def _ask(self, user: str, text: str) -> Result | None:
        cmd = Command(platform="slack", chat=user, user=user, text=text,
                      dedupe_key=f"slack:home:{user}:{time.time_ns()}", private=True)
        return await self.core.handle(cmd)

    async def _publish(self, user: str, reply: Reply, more: list[Reply] | None = None) -> None:
        more = more or []
        digest = hashlib.sha1(json.dumps(home_view(reply, "", more), sort_keys=True)
                              .encode()).hexdigest()
        if self._shown.get(user) == digest:
            return  # what they see has not changed
        now = self.clock.now().astimezone(self.settings.zone).strftime("%H:%M:%S")
        await self.client.views_publish(user_id=user, view=home_view(reply, now, more))
        self._shown[user] = digest

    async def on_change(self, what: str, fixture_id: str) -> None:
        """Core hook: something changed here or on another replica: the leader refreshes
        every open tab (coalesced, in background)."""
        if not self.leader():
            return
        if self._busy:
            self._again = True
            return
        self._busy = True
        self.spawn(self._refresh())

    async def _refresh(self) -> None:
        try:
            while True:
                self._again = False
                try:
                    users = await self.platform.home_watchers(time.time())
                except StoreUnavailable:
                    return
                for user in users:
                    try:
                        if await self.core.member(f"slack:{user}") is None:
                            await self.platform.unwatch_home(user)  # no longer a member
                            continue
                        await self.publish(user)
                    except Exception:
                        log.exception("slack: home refresh failed for %s", user)
                if not self._again:
                    break
        finally:
            self._busy = False
