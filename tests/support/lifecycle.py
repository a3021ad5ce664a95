"""Helpers for the lifecycle tests: record outbound messages, read a fixture's log."""

from __future__ import annotations

from bot.core.dispatch import Core
from bot.domain.ledger import Event
from bot.domain.messages import Outbound


def record(core: Core) -> list[Outbound]:
    """Every outbound message the core's notifier sends from now on."""
    sent: list[Outbound] = []

    async def tap(out: Outbound) -> None:
        sent.append(out)

    core.notifier.taps.append(tap)
    return sent


async def log_of(core: Core, kind: str | None = None) -> list[Event]:
    """The active fixture's events (of one kind)."""
    fx = await core.active_fixture()
    assert fx is not None
    return [e for e in await core.store.events(fx.id) if kind is None or e.kind == kind]
