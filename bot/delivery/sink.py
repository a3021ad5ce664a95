"""What a platform adapter offers the delivery layer: native send and edit, nothing more.

Queues, ordering, dedupe, rate limits, retries and "edit the live message or post a new one"
live once, in bot.delivery.notifier; an adapter only speaks its platform.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol, runtime_checkable

from bot.domain.messages import Reply

# A sink's `gate` asked for this 'chat' takes a slot of the bot-wide limit only: for calls
# that may or may not post and whose chat the sink paces itself (Telegram's lookup forwards).
BOT_WIDE = "*"

# The outbox entries ('<fixture>/<entry id>') the message being sent delivers, set by the
# delivery layer around a send: a platform that can carry and read back metadata (Slack)
# tags the message with them, so after a crash an unknown outcome can be looked up.
SENDING: ContextVar[tuple[str, ...]] = ContextVar("SENDING", default=())


class RetryLater(Exception):
    """The platform said "too many requests": try the same call again after `seconds`."""

    def __init__(self, seconds: float, why: str = "") -> None:
        super().__init__(why or f"retry after {seconds}s")
        self.seconds = max(0.0, float(seconds))


class Unsupported(Exception):
    """The platform refused a feature for want of a permission the bot was not given (e.g. a
    Slack scope missing from the app): that feature is skipped, not retried; the delivery
    health says so until it works."""


class Gone(Exception):
    """The chat cannot be reached at all (bot removed, chat deleted): retrying is useless."""


@runtime_checkable
class Sink(Protocol):
    """A platform's delivery side: send, edit, reply in a thread, post images, natively."""

    platform: str

    def cost(self, reply: Reply) -> int:
        """How many platform messages sending this reply takes (rate-limit units)."""

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Post a reply (chunks, keys, images) to a chat, under the live message `thread` or
        quoting message `quote` (platform message ids); the first message's id."""

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """Replace a message's content in place; False when it is gone (send anew)."""
