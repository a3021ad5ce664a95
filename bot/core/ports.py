"""The seams between the core and its adapters, typed: what an adapter may ask of the core."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from bot.core.delivery_port import Delivery
from bot.core.roles import Member
from bot.domain.clock import Clock
from bot.domain.grounds import Ground
from bot.domain.messages import Command, Result
from bot.domain.models import Fixture

if TYPE_CHECKING:  # typing only
    from bot.core.dispatch import Registry
    from bot.settings import Settings
    from bot.store import Store


class CoreAPI(Protocol):
    """The core as adapters see it."""

    store: Store
    registry: Registry
    clock: Clock
    grounds: dict[str, Ground]
    roster: dict[str, Member]
    notifier: Delivery
    settings: Settings
    hooks: list[Callable[[str, str], Awaitable[None]]]

    async def handle(self, cmd: Command) -> Result | None:
        """Answer one command (None: not for the bot)."""

    async def member(self, who: str) -> Member | None:
        """A roster member or someone who joined by invite."""

    async def active_fixture(self) -> Fixture | None:
        """The fixture commands apply to."""
