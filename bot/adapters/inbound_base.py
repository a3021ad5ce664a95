"""What both platforms' inbound handlers share: the core they hand Commands to, the one
delivery door, and the platform state in the store (an update taken once across replicas,
the incident a bot message is the live message of)."""

from __future__ import annotations

from bot.core.ports import CoreAPI
from bot.delivery.notifier import Notifier
from bot.store.facades import PlatformState
from bot.store.inbox import Seen


class InboundBase:
    """The parts an inbound handler turns platform events into Commands with."""

    platform = ""  # the Command.platform a subclass makes

    def __init__(self, core: CoreAPI, delivery: Notifier, state: PlatformState,
                 seen: Seen) -> None:
        self.core = core
        self.delivery = delivery
        self.state = state  # which incident a bot message is the live message of
        self.seen = seen

    async def seen_first(self, key: str) -> bool:
        """False for a redelivery any replica already took: shared in Redis, so two replicas
        never both handle it."""
        return await self.seen.first(key)

    async def live_ref(self, chat: str, message_id: str) -> str:
        """What a bot message in a chat is the live message of ('INC-7'; '' if nothing)."""
        found = await self.state.ref_of_message(self.platform, chat, message_id)
        return found[1] if found else ""
