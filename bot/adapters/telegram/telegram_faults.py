"""Telegram's errors sorted once into the delivery layer's faults, and raised in its terms."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter, TelegramError

from bot.adapters.telegram.probes import retry_seconds
from bot.delivery.sink import Fault, Gone, Refused, RetryLater

T = TypeVar("T")
# A 400 naming the chat itself (not the message): no message to it can go.
NO_CHAT = ("chat not found", "chat_write_forbidden", "have no rights to send",
           "not enough rights to send", "need administrator rights")


def fault(exc: TelegramError) -> Fault:
    """What a Bot API error means for the message: a 429 waits, a moved group is sent to
    at its new id, a 403 (blocked, kicked) or a 400 about the chat is the chat gone, any
    other 400 is the message itself refused for good, anything else (timeouts, 5xx, no
    network) is tried again."""
    if isinstance(exc, RetryAfter):
        return Fault.RATE_LIMITED
    if isinstance(exc, ChatMigrated):
        return Fault.MIGRATED
    if isinstance(exc, Forbidden):
        return Fault.GONE
    if isinstance(exc, BadRequest):  # PTB raises it for HTTP 400 only
        why = exc.message.lower()
        return Fault.GONE if any(n in why for n in NO_CHAT) else Fault.PERMANENT
    return Fault.TRANSIENT


async def native(call: Awaitable[T]) -> T:
    """A Bot API call with Telegram's errors in the delivery layer's terms (a moved chat's
    ChatMigrated passes through: the sink sends again at the new id)."""
    try:
        return await call
    except TelegramError as exc:
        kind = fault(exc)
        if kind is Fault.MIGRATED:
            raise
        if kind is Fault.RATE_LIMITED and isinstance(exc, RetryAfter):
            raise RetryLater(retry_seconds(exc), "telegram 429") from None
        if kind is Fault.GONE:
            raise Gone(f"telegram: {exc.message}") from None
        if kind is Fault.PERMANENT:
            raise Refused(f"telegram: {exc.message}") from None
        raise ConnectionError(str(exc)) from None
