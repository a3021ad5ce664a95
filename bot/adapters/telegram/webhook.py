"""Telegram's webhook: one update a POST, checked against the secret-token header and
processed before it is answered, so a failure makes Telegram retry (the core dedupes by
`telegram:<update_id>`)."""

from __future__ import annotations

import hmac
from typing import Any

from aiohttp import web
from telegram.ext import Application

from bot.adapters.telegram.probes import MessageIds
from bot.adapters.telegram.updates import parse_update

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class Webhook:
    """The POST /telegram endpoint."""

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any], secret: str,
                 ids: MessageIds) -> None:
        self.application = application
        self.secret = secret
        self.ids = ids

    async def handle(self, request: web.Request) -> web.Response:
        """One update from Telegram; refused (403) without the right secret-token header."""
        got = request.headers.get(SECRET_HEADER, "")
        if not self.secret or not hmac.compare_digest(got.encode(), self.secret.encode()):
            return web.Response(status=403, text="forbidden")
        if not self.application.running:  # Telegram retries later
            return web.Response(status=503, text="starting")
        try:
            data = await request.json()
        except ValueError:
            data = None
        # Not JSON, or fields this library version cannot read: logged once and answered
        # 200, since a 4xx makes Telegram redeliver the same update again and again.
        update = parse_update(data, self.application.bot)
        if update is not None:
            self.ids.learn_update(data)
            await self.application.process_update(update)
        return web.Response(text="ok")
