"""What one replica tells the others it changed (a fixture, a phase, the active fixture,
unsure writes), on one pub/sub channel, so each can drop what it cached."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from bot.store.base import ops_prefix
from bot.store.gateway import Gateway


class Changes:
    """The replicas' changes channel, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        # pub/sub channel: "what|fixture|origin" for other replicas
        self.channel = ops_prefix(gateway.space) + "changes"

    async def publish_change(self, what: str, fixture: str, origin: str) -> None:
        """Tell other replicas something they may cache changed (fixture, phase, active)."""
        await self.gateway.call(lambda r: r.publish(self.channel, f"{what}|{fixture}|{origin}"))

    async def changes(self, subscribed: Callable[[], Awaitable[None]] | None = None,
                      ) -> AsyncIterator[tuple[str, str, str]]:
        """(what, fixture, origin) as other replicas publish them; ends when Redis goes
        away (the caller resubscribes). `subscribed` runs once listening (to catch up)."""
        pubsub = self.gateway.pubsub()
        try:
            await self.gateway.call(pubsub.subscribe(self.channel))
            if subscribed is not None:
                await subscribed()
            while True:
                msg = await self.gateway.call(pubsub.get_message(ignore_subscribe_messages=True,
                                                          timeout=1.0))
                if msg and isinstance(msg.get("data"), str):
                    what, _, rest = msg["data"].partition("|")
                    fixture, _, origin = rest.partition("|")
                    yield what, fixture, origin
        finally:
            await pubsub.aclose()
