"""Telegram's webhook: one update a POST, checked against the secret-token header and
processed before it is answered, so a failure makes Telegram retry (the core dedupes by
`telegram:<update_id>`)."""

from __future__ import annotations

import hmac
import json
from typing import Any

from telegram.ext import Application

from bot.adapters.telegram.probes import MessageIds
from bot.adapters.telegram.updates import parse_update
from bot.domain.routes import Answer, Request

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class Webhook:
    """The POST /telegram endpoint."""

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any], secret: str,
                 ids: MessageIds) -> None:
        self.application = application
        self.secret = secret
        self.ids = ids

    async def handle(self, request: Request) -> Answer:
        """One update from Telegram; refused (403) without the right secret-token header."""
        got = next((v for k, v in request.headers.items() if k.lower() == SECRET_HEADER.lower()),
                   "")
        if not self.secret or not hmac.compare_digest(got.encode(), self.secret.encode()):
            return Answer(403, "forbidden")
        if not self.application.running:  # Telegram retries later
            return Answer(503, "starting")
        try:
            data = json.loads(request.body)
        except ValueError:  # not JSON, or not UTF-8
            data = None
        # Not JSON, or fields this library version cannot read: logged once and answered
        # 200, since a 4xx makes Telegram redeliver the same update again and again.
        update = parse_update(data, self.application.bot)
        if update is not None:
            self.ids.learn_update(data)
            await self.application.process_update(update)
        return Answer(200, "ok")
