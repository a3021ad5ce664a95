"""Which fixture a command applies to, as a strategy the composition root gives the Core:
the live bot's (the store's choices, cached briefly) or a replay's (only fixtures it made)."""

from __future__ import annotations

from typing import Any, Protocol

from bot.core.drill import NO_DRILL_FIXTURE, Drill
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Command
from bot.store import Store
from bot.store.choices import Choices

NO_ACTIVE_FIXTURE = "No active fixture. An admin sets one with /fixture use <id>."


class Cache(Protocol):
    """The Core's brief memory of reads (bot.core.dispatch.TTLCache)."""

    def get(self, key: str) -> tuple[bool, Any]:
        """(hit, value)."""
        ...

    def put(self, key: str, value: Any) -> None:
        """Remember a value for the cache's time."""
        ...


class FixtureScope(Protocol):
    """Where fixture choices are read and written; `drill` is the replay's fence, or None."""

    drill: Drill | None

    async def active(self) -> Fixture | None:
        """The fixture commands apply to by default."""
        ...

    async def chosen(self, cmd: Command) -> str | None:
        """The fixture id a command's chat (not in private) or its sender chose, if any."""
        ...

    async def choose(self, cmd: Command, fx_id: str, scope: str) -> str | None:
        """Record a `/fixture use` choice ("me", "chat" or "all"); a refusal, or None."""
        ...

    async def use(self, fx_id: str, *, if_none: bool) -> str | None:
        """Make a fixture the default (only if none is, with if_none); a refusal, or None."""
        ...

    def no_fixture(self) -> str:
        """Why a command has no fixture to apply to (one line)."""
        ...


class LiveFixtures:
    """The live bot: choices are kept in the store and shared by every replica."""

    drill: Drill | None = None

    def __init__(self, store: Store, cache: Cache, choices: Choices) -> None:
        """`store`: the incident log (fixtures); `choices`: who and which chat uses which."""
        self.store = store
        self.cache = cache
        self.choices = choices

    async def active(self) -> Fixture | None:
        """The store's active fixture (cached briefly)."""
        hit, fx = self.cache.get("active")
        if hit:
            return fx
        fx_id = await self.choices.active_fixture_id()
        fx = await self.store.fixture(fx_id) if fx_id else None
        self.cache.put("active", fx)
        return fx

    async def chosen(self, cmd: Command) -> str | None:
        """The chat's or the sender's stored choice (cached briefly)."""
        key = f"use:{cmd.who}:{cmd.platform}:{cmd.chat}:{cmd.private}"
        hit, fx_id = self.cache.get(key)
        if not hit:
            # the web view acts as its signed-in member: their choice, not a "web:" one
            who = cmd.who.removeprefix("web:") if cmd.platform == "web" else cmd.who
            chat_fx, person_fx = await self.choices.fixture_choice(who, cmd.platform, cmd.chat)
            fx_id = (None if cmd.private else chat_fx) or person_fx
            self.cache.put(key, fx_id)
        return fx_id

    async def choose(self, cmd: Command, fx_id: str, scope: str) -> str | None:
        """Store the choice for the sender, their chat or everyone."""
        if scope == "all":
            await self.choices.set_active_fixture(fx_id)
        elif scope == "me":
            await self.choices.choose_fixture(fx_id, who=cmd.who)
        else:
            await self.choices.choose_fixture(fx_id, platform=cmd.platform, chat=cmd.chat)
        return None

    async def use(self, fx_id: str, *, if_none: bool) -> str | None:
        """Set the store's active fixture."""
        if not (if_none and await self.choices.active_fixture_id()):
            await self.choices.set_active_fixture(fx_id)
        return None

    def no_fixture(self) -> str:
        """An admin has not set one yet."""
        return NO_ACTIVE_FIXTURE


class DrillFixtures:
    """A replay: choices live in the drill and only its own fixtures (or, with --live, the
    store's active one) may be used; the live bot's choices are never written."""

    def __init__(self, store: Store, choices: Choices, drill: Drill) -> None:
        """`store`: the incident log (fixtures); `choices`: the live default (--live)."""
        self.store = store
        self.choices = choices
        self.drill: Drill | None = drill
        self._drill = drill

    async def active(self) -> Fixture | None:
        """The drill's fixture, else (with --live) the store's active one."""
        fx_id = self._drill.active
        if fx_id is None and self._drill.live:
            fx_id = await self.choices.active_fixture_id()
        return await self.store.fixture(fx_id) if fx_id else None

    async def chosen(self, cmd: Command) -> str | None:
        """The drill's record of the chat's or the sender's choice."""
        got = self._drill.chosen
        return (None if cmd.private else got.get(f"chat:{cmd.platform}:{cmd.chat}")) \
            or got.get(f"person:{cmd.who}")

    async def choose(self, cmd: Command, fx_id: str, scope: str) -> str | None:
        """Record the choice in the drill, for one of its own fixtures only."""
        if not self._drill.may_use(fx_id):
            return self._drill.refusal(fx_id)
        if scope == "all":
            self._drill.active = fx_id
        else:
            key = f"person:{cmd.who}" if scope == "me" else f"chat:{cmd.platform}:{cmd.chat}"
            self._drill.chosen[key] = fx_id
        return None

    async def use(self, fx_id: str, *, if_none: bool) -> str | None:
        """Make one of the drill's fixtures its default."""
        if not self._drill.may_use(fx_id):
            return self._drill.refusal(fx_id)
        if not (if_none and self._drill.active):
            self._drill.active = fx_id
        return None

    def no_fixture(self) -> str:
        """A drill without --live needs a fixture of its own."""
        return NO_ACTIVE_FIXTURE if self._drill.live else NO_DRILL_FIXTURE
