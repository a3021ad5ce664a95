"""Slack listeners by kind, each module with register(app, inbound), as in Bolt's starter
template: slash commands, block actions (buttons), view submissions (modals), events."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.app.async_app import AsyncApp

from bot.adapters.slack.listeners import actions, commands, events, submissions
from bot.adapters.slack.slack_inbound import Inbound

log = logging.getLogger(__name__)


def register(app: AsyncApp, inbound: Inbound) -> None:
    """Attach every listener (and the error handler) to the Bolt app."""
    commands.register(app, inbound)
    actions.register(app, inbound)
    submissions.register(app, inbound)
    events.register(app, inbound)

    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        log.error("slack: listener failed for %s: %r", body.get("type") or body.get("command"),
                  error, exc_info=error)

    app.error(on_error)
