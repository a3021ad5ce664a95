"""A platform sink for tests and benchmarks that records what reaches each chat: every
capability of bot.delivery.sink.PlatformSink, the optional ones explicitly not supported."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from itertools import count

from bot.delivery.sink import Doubt, Found, Gate, Unsupported, no_gate
from bot.domain.messages import Reply, Respond


class RecordingSink:
    """Sends and edits succeed at once and are handed to `on_send(chat, reply)` (or the
    `hook` given), which keeps (chat, reply) in `got` unless overridden."""

    pins = False
    reacts = False
    platform = ""  # a subclass may name it here instead

    def __init__(self, platform: str = "",
                 hook: Callable[[str, Reply], Awaitable[None]] | None = None) -> None:
        self.platform = platform or self.platform
        self.gate: Gate = no_gate
        self.got: list[tuple[str, Reply]] = []
        self.hook = hook
        self._ids = count(1)

    async def on_send(self, chat: str, reply: Reply) -> None:
        """What reached a chat (a send, or an edit's new state)."""
        self.got.append((chat, reply))

    def cost(self, reply: Reply) -> int:
        """One message per reply."""
        return 1

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Record a new message; its id."""
        await (self.hook or self.on_send)(chat, reply)
        return str(next(self._ids))

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """Record the new state of a message as a message of its own."""
        await (self.hook or self.on_send)(chat, reply)
        return True

    async def respond(self, chat: str, via: Respond, reply: Reply) -> None:
        """Record a command's answer as a message to its chat."""
        await (self.hook or self.on_send)(chat, reply)

    async def pin(self, chat: str, message_id: str) -> None:
        """Not supported."""
        raise Unsupported("a recorder pins nothing")

    async def unpin(self, chat: str, message_id: str) -> None:
        """Not supported."""
        raise Unsupported("a recorder pins nothing")

    async def react(self, chat: str, message_id: str) -> None:
        """Not supported."""
        raise Unsupported("a recorder reacts to nothing")

    def albumable(self, chat: str, reply: Reply) -> bool:
        """No albums."""
        return False

    async def send_album(self, chat: str, replies: list[Reply], *,
                         thread: str = "") -> list[str]:
        """Not supported."""
        raise Unsupported("a recorder sends no albums")

    def floor(self, chat: str) -> int:
        """No ordered ids."""
        return 0

    def id_space(self, chat: str) -> str:
        """No ordered ids."""
        return ""

    async def find_sent(self, chat: str, doubt: Doubt) -> Found | None:
        """Nothing to look up."""
        return None
