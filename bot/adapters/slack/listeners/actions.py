"""Block actions: a button on a bot message is the command its value holds."""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp

from bot.adapters.slack.blocks import BUTTON_PREFIX
from bot.adapters.slack.slack_inbound import Inbound
from bot.domain.messages import Command

BUTTON_ACTION = re.compile(rf"^{BUTTON_PREFIX}\d+$")  # the action ids of rendered buttons


def register(app: AsyncApp, inbound: Inbound) -> None:
    """Buttons the bot rendered (action ids cmd_<n>)."""

    async def on_button(ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user = body.get("user", {}).get("id", "")
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
        key = f"slack:act:{body.get('trigger_id') or action.get('action_ts')}"
        if not await inbound.first_time(key):
            return
        msg_ts = container.get("message_ts") or (body.get("message") or {}).get("ts") or ""
        cmd = Command(platform="slack", chat=channel or user, user=user,
                      text=str(action.get("value", "")), dedupe_key=key,
                      reply_to=await inbound.incident_of(channel, msg_ts),
                      private=not channel or channel.startswith("D"),
                      user_name=body.get("user", {}).get("username", ""),
                      reply_via=inbound.respond_via(user, body.get("response_url")))
        result = await inbound.core.handle(cmd)
        await inbound.answer(result, user=user, channel=channel,
                             response_url=body.get("response_url"))

    app.action(BUTTON_ACTION)(on_button)
