"""One bot replica as `matchday run --webhook` wires it, for the HA tests with several: its own
store connection and outage log, the durable core with the shared limiter, the PTB adapter
in webhook mode on a fake Bot API, an outbox reader, and its webhook on a local server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientSession
from aiohttp.test_utils import TestServer
from pydantic import SecretStr

from bot.adapters.telegram.webhook import SECRET_HEADER
from bot.app import build_core
from bot.core.dispatch import Core
from bot.delivery.durable import OutboxReader
from bot.delivery.ratelimit import SharedRateLimiter
from bot.domain.clock import Clock
from bot.observe.outage import OutageLog
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.store import Store
from bot.web.host import application
from rigs.fakes.telegram_api import TOKEN

SECRET = "replica-webhook-secret"


@dataclass
class WebhookReplica:
    """A running replica: post updates to its webhook with `post`."""

    name: str
    core: Core
    server: TestServer
    outage: OutageLog

    @property
    def limiter(self) -> SharedRateLimiter:
        """The replica's limiter (shared windows in Redis)."""
        limiter = self.core.notifier.limiter
        assert isinstance(limiter, SharedRateLimiter)
        return limiter

    async def post(self, http: ClientSession, update: dict[str, Any]) -> None:
        """Deliver one update as Telegram does (its answer is sent, not returned)."""
        async with http.post(self.server.make_url("/telegram"), json=update,
                             headers={SECRET_HEADER: SECRET}) as resp:
            assert resp.status == 200, await resp.text()


@asynccontextmanager
async def webhook_replica(name: str, redis_url: str, settings: Settings, clock: Clock,
                          base_url: str) -> AsyncIterator[WebhookReplica]:
    """Start a replica against the Bot API at `base_url`; all stopped after."""
    outage = OutageLog()
    store = Store.from_url(redis_url, observe_answer=outage.observe)
    core = build_core(store, settings, clock, cache_ttl=0, durable=True, outage=outage)
    conf = settings.model_copy(update={"telegram_bot_token": SecretStr(TOKEN),
                                       "telegram_base_url": base_url,
                                       "telegram_webhook_secret": SecretStr(SECRET)})
    adapter = telegram_for(core, conf, webhook=True, poll_timeout=1)
    await adapter.start()
    reader = OutboxReader(core.notifier, core.facades.delivery.outbox, owner=f"replica-{name}",
                          block_ms=100, rescan_s=0.2)
    reader.start()
    server = TestServer(application(adapter.routes()))
    await server.start_server()
    try:
        yield WebhookReplica(name, core, server, outage)
    finally:
        await server.close()
        await reader.stop()
        await adapter.stop()
        await store.close()
