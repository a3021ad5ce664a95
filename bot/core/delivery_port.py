"""What the core asks of delivery, as ports: the outbox every message goes through first, and
the delivery layer behind it (bot.delivery implements both; the core imports neither)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from bot.domain.messages import Outbound

if TYPE_CHECKING:  # typing only
    from bot.store.ops import Op


class Outbox(Protocol):
    """Where every message the bot must show goes first: durable in the store
    (bot.store.outbox.Outbox) or, for console, replay and tests, in memory
    (bot.delivery.memory.MemoryOutbox); both deliver each command's messages once."""

    def ops(self, outs: list[Outbound]) -> list[Op]:
        """What a store write must carry so these messages are written with it (marked
        `stored`); none where the outbox is not in the store (they are added after)."""

    async def add(self, fx: str, outs: list[Outbound], once: str = "") -> bool:
        """Queue messages about a fixture; with `once` (a command's dedupe key), only the
        first add for that key counts: False when an earlier one did."""


class Delivery(Protocol):
    """The delivery layer as the core and its scheduled duties see it."""

    outbox: Outbox

    async def send(self, outs: list[Outbound], once: str = "") -> None:
        """Queue messages for every chat of their audiences (through the outbox)."""

    def readers_of(self, audience: str, fixture: str = "") -> frozenset[str] | None:
        """Every role reading an audience's chats (None: some chat's readers undeclared)."""

    async def learn_grounds(self, fixtures: list[str]) -> None:
        """Know the ground of each fixture whose messages may go to per-ground chats."""

    async def drain(self) -> None:
        """Wait until everything queued has been handed to its platform."""
