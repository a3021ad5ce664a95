"""What a platform adapter offers the delivery layer: a declared family of capabilities.

Every platform sink has them all (`PlatformSink`): send and edit (`Sink`), pin and unpin
(`Pins`), a reaction on a message (`Reactions`), albums (`Albums`), a command's own answer
channel (`Answers`) and the lookup of a send a crash left in doubt (`InDoubt`). A platform
without one says so explicitly (`pins = False`, `reacts = False`, `albumable` always False,
a lookup that finds nothing, Unsupported) rather than leaving the method out: the delivery
layer never probes.
Queues, ordering, dedupe, rate limits, retries and "edit the live message or post a new one"
live once, in bot.delivery; an adapter only speaks its platform.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

from bot.domain.messages import Reply, Respond

# A sink's `gate` asked for this 'chat' takes a slot of the bot-wide limit only: for calls
# that may or may not post and whose chat the sink paces itself (Telegram's lookup forwards).
BOT_WIDE = "*"

# The outbox entries ('<fixture>/<entry id>') the message being sent delivers, set by the
# delivery layer around a send: a platform that can carry and read back metadata (Slack)
# tags the message with them, so after a crash an unknown outcome can be looked up.
SENDING: ContextVar[tuple[str, ...]] = ContextVar("SENDING", default=())


class Fault(Enum):
    """What a platform's error means for the message that met it: each adapter sorts its
    platform's errors into these in one place (`fault` in its *_faults module) and raises
    accordingly."""

    RATE_LIMITED = "rate limited"  # the same call after the wait it names (RetryLater)
    MIGRATED = "chat migrated"  # the same call at the chat's new id (the adapter's own move)
    TRANSIENT = "transient"  # not reached, or no answer: tried again (it may be in doubt)
    PERMANENT = "permanent"  # never taken as it is: dropped for this chat (Refused)
    GONE = "chat gone"  # the chat cannot be reached at all: dropped (Gone)


class RetryLater(Exception):
    """The platform said "too many requests": try the same call again after `seconds`."""

    def __init__(self, seconds: float, why: str = "") -> None:
        super().__init__(why or f"retry after {seconds}s")
        self.seconds = max(0.0, float(seconds))


class Unsupported(Exception):
    """The platform refused a feature for want of a permission the bot was not given (e.g. a
    Slack scope missing from the app): that feature is skipped, not retried; the delivery
    health says so until it works."""


class Refused(Exception):
    """The platform will never take this message as it is (e.g. Telegram's 400 "wrong file
    identifier"): not retried and not in doubt; the delivery layer drops it for this chat
    with a logged reason, after sending a media message's text alone once."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Gone(Refused):
    """The chat cannot be reached at all (bot blocked or removed, chat not found): the
    message is dropped for this chat, its text alone not tried."""


# Before each platform message after the first of one reply, a sink awaits its gate for a
# rate-limit slot: (platform, chat or BOT_WIDE).
Gate = Callable[[str, str], Awaitable[None]]


async def no_gate(platform: str, chat: str) -> None:
    """The gate of a sink not (yet) handed to a delivery layer: every call goes at once."""
    return None


@dataclass(frozen=True)
class Doubt:
    """A send a crash left in doubt, as the lookup needs it: the outbox entry's tag (what
    the message's metadata carries), the entry's time less skew (epoch s), the live message
    it went under (platform id), the highest message id known in the chat when it began
    (0: unknown), and what was sent."""

    tag: str
    since: float
    thread: str
    floor: int
    reply: Reply
    edit: bool = False  # an edit in place (simply redone where nothing can be read back)


@dataclass(frozen=True)
class Found:
    """A send found on the platform: the message's id ('' when only a digest naming it was
    found: delivered, but no message of its own to edit later)."""

    message_id: str = ""


@runtime_checkable
class Sink(Protocol):
    """A platform's delivery side: send, edit, reply in a thread, post images, natively."""

    platform: str
    gate: Gate  # handed over by the delivery layer (see Gate)

    def cost(self, reply: Reply) -> int:
        """How many platform messages sending this reply takes (rate-limit units)."""

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Post a reply (chunks, keys, images) to a chat, under the live message `thread` or
        quoting message `quote` (platform message ids); the first message's id."""

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """Replace a message's content in place; False when it is gone (send anew)."""


@runtime_checkable
class Pins(Protocol):
    """Pinning a message the bot posted (the flashpoint board). A platform that cannot has
    `pins = False` and raises Unsupported."""

    pins: bool

    async def pin(self, chat: str, message_id: str) -> None:
        """Pin a message quietly."""

    async def unpin(self, chat: str, message_id: str) -> None:
        """Unpin a message the bot pinned."""


@runtime_checkable
class Reactions(Protocol):
    """A reaction on someone's message (a typed acknowledgement answered without a message).
    A platform that cannot has `reacts = False`."""

    reacts: bool

    async def react(self, chat: str, message_id: str) -> None:
        """Mark a message as seen and taken (👍); Refused when the platform will not."""


@runtime_checkable
class Albums(Protocol):
    """Several photos or videos as one message (Telegram's sendMediaGroup)."""

    def albumable(self, chat: str, reply: Reply) -> bool:
        """Whether a reply can be one item of an album (always False where none exist)."""

    async def send_album(self, chat: str, replies: list[Reply], *,
                         thread: str = "") -> list[str]:
        """Send 2-10 albumable replies as one album; each one's message id."""


@runtime_checkable
class Answers(Protocol):
    """A command's own answer channel (Slack's response_url: an answer only the person who
    asked sees). A platform without one never makes a Respond, and raises Unsupported."""

    async def respond(self, chat: str, via: Respond, reply: Reply) -> None:
        """Answer through `via`; directly to the person when it no longer takes it."""


@runtime_checkable
class InDoubt(Protocol):
    """Looking up a send a crash left in doubt, and the message-id hints that help."""

    def floor(self, chat: str) -> int:
        """The highest message id known in the chat (0: unknown, or ids are not ordered)."""

    def id_space(self, chat: str) -> str:
        """Which ordered message-id sequence the chat's ids come from ('' when none)."""

    async def find_sent(self, chat: str, doubt: Doubt) -> Found | None:
        """The send, if the platform shows it arrived; None when not (or it cannot tell).
        Unsupported when a permission to look is missing."""


@runtime_checkable
class PlatformSink(Sink, Pins, Reactions, Albums, Answers, InDoubt, Protocol):
    """Every capability a platform sink declares (implemented or explicitly not)."""
