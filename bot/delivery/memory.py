"""The outbox without a store: for console, replay and tests (no platform to deliver to
durably), and for what has no fixture or finds the store away. Same interface as the durable
outbox (bot.store.outbox.Outbox): a command's messages are added once per dedupe key, and
handed to the delivery layer's chat queues at once."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

from bot.domain.messages import Outbound
from bot.store.ops import Op

ONCE_KEPT = 10_000  # dedupe keys remembered (the store keeps its own for two days)


class MemoryOutbox:
    """Entries go straight to `route` (the delivery layer's fan-out to every chat)."""

    def __init__(self, route: Callable[[list[Outbound]], Awaitable[None]]) -> None:
        self.route = route
        self._once: OrderedDict[tuple[str, str], None] = OrderedDict()

    def ops(self, outs: list[Outbound]) -> list[Op]:
        """None: nothing of this outbox is in the store; the messages are added after the
        write (not marked stored)."""
        return []

    async def add(self, fx: str, outs: list[Outbound], once: str = "") -> bool:
        """Deliver messages, unless `once` was seen for this fixture already (False)."""
        if once:
            if (fx, once) in self._once:
                return False
            self._once[(fx, once)] = None
            while len(self._once) > ONCE_KEPT:
                self._once.popitem(last=False)
        await self.route(outs)
        return True
