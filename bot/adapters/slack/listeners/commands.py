"""Slash commands: `/matchday <command>` (the catch-all), `/md-<command>` (names that cannot
collide with Slack's built-ins) and any other slash name the registry knows."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp

from bot.adapters.slack.modals import MODALS
from bot.adapters.slack.slack_inbound import Inbound
from bot.domain.messages import Command

CATCH_ALL = "matchday"
PREFIX = "md-"


def command_text(slash: str, text: str) -> tuple[str, str]:
    """(command name, its arguments) from a slash command as Slack sends it."""
    name = slash.lstrip("/").lower()
    text = text.strip()
    if name == CATCH_ALL:
        if not text:
            return "help", ""  # a bare /matchday: what can I do here?
        text = text if text.startswith("/") else "/" + text
        name, _, text = text[1:].partition(" ")
        return name, text.strip()
    return name.removeprefix(PREFIX), text


def register(app: AsyncApp, inbound: Inbound) -> None:
    """Every slash command: ack at once, open a modal or ask the core."""

    async def on_command(ack: Any, body: dict[str, Any]) -> None:
        name, text = command_text(body.get("command", "/"), body.get("text") or "")
        user, channel = body.get("user_id", ""), body.get("channel_id", "")
        private = channel.startswith("D") or body.get("channel_name") == "directmessage"
        trigger = body.get("trigger_id") or hashlib.sha1(
            json.dumps(body, sort_keys=True).encode()).hexdigest()
        key = f"slack:cmd:{trigger}"
        await ack()  # within Slack's 3 seconds, always
        if not await inbound.first_time(key):
            return
        modal = MODALS.get(name) if not text else None
        if modal is not None and body.get("trigger_id") and await inbound.may(user, name):
            if await inbound.open_modal(modal, body["trigger_id"], channel, private,
                                        user=user):
                return
        cmd = Command(platform="slack", chat=channel or user, user=user,
                      text=f"/{name} {text}".strip(), dedupe_key=key, private=private,
                      user_name=body.get("user_name", ""),
                      reply_via=inbound.respond_via(user, body.get("response_url")))
        result = await inbound.core.handle(cmd)
        await inbound.answer(result, user=user, channel=channel,
                             response_url=body.get("response_url"))

    app.command(re.compile(r"^/.+"))(on_command)
