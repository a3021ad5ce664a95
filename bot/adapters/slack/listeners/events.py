"""Events API: the App Home tab opened, direct messages, and @mentions in channels."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from slack_bolt.app.async_app import AsyncApp

from bot.adapters.slack.slack_inbound import Inbound
from bot.domain.messages import Attachment, Command, ReplyVia, declared_seconds

MENTION = re.compile(r"^\s*<@[A-Z0-9]+>\s*")


def file_kind(f: dict[str, Any]) -> str:
    """What a shared Slack file is, in the words of core Attachment kinds."""
    mime = str(f.get("mimetype", ""))
    if f.get("subtype") == "slack_audio":
        return "voice"  # a recorded audio clip
    for prefix, kind in (("image/", "photo"), ("audio/", "audio"), ("video/", "video")):
        if mime.startswith(prefix):
            return kind
    return "document"


def attachments(event: dict[str, Any], text: str) -> tuple[Attachment, ...]:
    """A message's files as evidence (id, kind, duration, MIME type, file name)."""
    return tuple(
        Attachment(kind=file_kind(f), file_id=str(f.get("id", "")), caption=text,
                   duration=declared_seconds(f.get("duration_ms"), 1000),
                   mime_type=str(f.get("mimetype", "")), detail=str(f.get("name", "")),
                   platform="slack")
        for f in event.get("files") or [])


def mention_text(inbound: Inbound, raw: str) -> str:
    """`@matchday status` means /status, like `@matchday /status`; other words stay text."""
    text = MENTION.sub("", raw).strip()
    word = text.split(" ", 1)[0]
    if word and not text.startswith("/") and inbound.registry.lookup(word) is not None:
        return "/" + text
    return text


def register(app: AsyncApp, inbound: Inbound) -> None:
    """app_home_opened, message (DMs) and app_mention."""

    async def on_home_opened(event: dict[str, Any]) -> None:
        if event.get("tab", "home") == "home":
            await inbound.home.opened(event.get("user", ""))

    async def on_message(body: dict[str, Any], event: dict[str, Any]) -> None:
        if event.get("channel_type") != "im" or event.get("bot_id"):
            return
        if event.get("subtype") not in (None, "file_share"):
            return
        await event_command(body, event, event.get("text") or "", private=True)

    async def on_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        await event_command(body, event, mention_text(inbound, event.get("text") or ""),
                            private=False)

    def sent_at(ts: object) -> datetime | None:
        try:  # Slack's message ts is epoch seconds: when Slack says it was sent
            return datetime.fromtimestamp(float(str(ts)), UTC) if ts else None
        except (ValueError, OverflowError, OSError):
            return None

    async def event_command(body: dict[str, Any], event: dict[str, Any], text: str, *,
                            private: bool) -> None:
        key = f"slack:evt:{body.get('event_id') or event.get('client_msg_id') or event.get('ts')}"
        if not await inbound.first_time(key):
            return
        channel, user = event.get("channel", ""), event.get("user", "")
        thread = "" if private else str(event.get("thread_ts") or event.get("ts") or "")
        # like Telegram's: an answer to a write goes durably with the cards it caused
        cmd = Command(platform="slack", chat=channel, user=user, text=text.strip(),
                      dedupe_key=key, attachments=attachments(event, text),
                      reply_to=await inbound.incident_of(channel, event.get("thread_ts", "")),
                      private=private, reply_via=ReplyVia(quote=thread),
                      at=sent_at(event.get("ts")))
        result = await inbound.core.handle(cmd)
        if result is None or result.queued:  # queued: the outbox delivers it
            return
        await inbound.post(channel, result.reply, thread_ts=thread or None)

    app.event("app_home_opened")(on_home_opened)
    app.event("message")(on_message)
    app.event("app_mention")(on_mention)
