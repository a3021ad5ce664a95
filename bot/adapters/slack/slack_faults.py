"""Slack's Web API errors sorted once into the delivery layer's faults, and raised in its
terms."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.delivery.sink import Fault, Gone, Refused, RetryLater, Unsupported

# The channel itself cannot be posted in: no message to it can go.
GONE = frozenset({"channel_not_found", "not_in_channel", "is_archived", "account_inactive"})
# The message itself will never be taken as it is (chat.postMessage / chat.update errors).
REFUSED = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_too_long",
                     "msg_blocks_too_long", "no_text", "too_many_attachments",
                     "invalid_attachments", "invalid_metadata_format",
                     "invalid_metadata_schema", "metadata_too_large", "restricted_action"})
# Slack's own trouble: the same call later.
TRANSIENT = frozenset({"internal_error", "fatal_error", "service_unavailable",
                       "request_timeout"})


def fault(exc: SlackApiError) -> Fault | None:
    """What a Web API error means for the message; None for an answer the calling method
    handles itself (message_not_found, already_pinned, …)."""
    data = exc.response.data if isinstance(exc.response.data, dict) else {}
    error = str(data.get("error", ""))
    if exc.response.status_code == 429 or error == "ratelimited":
        return Fault.RATE_LIMITED
    if exc.response.status_code >= 500 or error in TRANSIENT:
        return Fault.TRANSIENT
    if error in GONE:
        return Fault.GONE
    if error in REFUSED:
        return Fault.PERMANENT
    return None


async def native(call: Awaitable[Any]) -> Any:
    """A Web API call with Slack's errors in the delivery layer's terms."""
    try:
        return await call
    except SlackApiError as exc:
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        error = str(data.get("error", ""))
        if error == "missing_scope":  # the app lacks it: add it, reinstall
            raise Unsupported(f"the Slack app lacks the {data.get('needed', '?')} scope") \
                from None
        kind = fault(exc)
        if kind is Fault.RATE_LIMITED:
            raise RetryLater(float(exc.response.headers.get("Retry-After", 1) or 1),
                             "slack 429") from None
        if kind is Fault.TRANSIENT:
            raise ConnectionError(f"slack: {error or exc.response.status_code}") from None
        if kind is Fault.GONE:
            raise Gone(f"slack: {error}") from None
        if kind is Fault.PERMANENT:
            raise Refused(f"slack: {error}") from None
        raise
    except Exception as exc:
        # slack_sdk's client raises aiohttp's ClientError family when Slack cannot be
        # reached (ServerDisconnectedError is not an OSError): the delivery layer's
        # "unreachable", retried quietly, not a traceback
        if type(exc).__module__.startswith("aiohttp"):
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from None
        raise
