"""Two bot replicas on one bot token stay within Telegram's limits together (#27 item 6): the
per-chat spacing counted from the platform's answer is kept in the shared windows, so a
replica's answer cannot arrive too close behind another replica's message that was held up
on the way. Real replicas' parts (store, core, notifier with the shared limiter, the PTB
adapter in webhook mode) against one fake Bot API that enforces the limits per token."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer
from pydantic import SecretStr

from bot.adapters.telegram.webhook import SECRET_HEADER
from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.domain.messages import Reply
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.store import Store
from bot.web.host import application
from rigs.fakes.telegram_api import TOKEN, FakeTelegram

STEWARD = 100000001  # roster: a Telegram member
SECRET = "shared-limits-secret"
HELD_S = 0.3  # how long one replica's calls are held up on the way to Telegram


class SlowLink:
    """An HTTP hop in front of the fake Bot API that holds every call up for a while (a busy
    host, a slow network path) before passing it on."""

    def __init__(self, upstream: str, held_s: float) -> None:
        self.upstream = upstream.rstrip("/")
        self.held_s = held_s
        self._runner: web.AppRunner | None = None
        self._http: ClientSession | None = None
        self.url = ""

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._pass)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._http = ClientSession()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def _pass(self, request: web.Request) -> web.Response:
        body = await request.read()
        await asyncio.sleep(self.held_s)  # the network's delay, not a wait for a condition
        assert self._http is not None
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() in ("content-type",)}
        async with self._http.request(request.method, self.upstream + request.path_qs,
                                      data=body, headers=headers) as resp:
            return web.Response(status=resp.status, body=await resp.read(),
                                content_type=resp.content_type)

    async def stop(self) -> None:
        if self._http is not None:
            await self._http.close()
        if self._runner is not None:
            await self._runner.cleanup()


@asynccontextmanager
async def replica(redis_url: str, settings: Settings, clock: VirtualClock,
                  base_url: str) -> AsyncIterator[tuple[TestServer, Core]]:
    """One bot replica as `matchday run --webhook` wires it: its own store connection, the
    shared limiter, the PTB adapter; its webhook served by a local test server."""
    store = Store.from_url(redis_url)
    core = build_core(store, settings, clock, cache_ttl=0, durable=True)  # the shared limiter
    conf = settings.model_copy(update={"telegram_bot_token": SecretStr(TOKEN),
                                       "telegram_base_url": base_url,
                                       "telegram_webhook_secret": SecretStr(SECRET)})
    adapter = telegram_for(core, conf, webhook=True, poll_timeout=1)
    await adapter.start()
    server = TestServer(application(adapter.routes()))
    await server.start_server()
    try:
        yield server, core
    finally:
        await server.close()
        await adapter.stop()
        await store.close()


async def test_one_members_quick_commands_answered_by_two_replicas_break_no_limit(
        store: Store, redis_url: str, settings: Settings, clock: VirtualClock) -> None:
    fake = FakeTelegram(enforce_limits=True)
    await fake.start()
    slow = SlowLink(fake.base_url, HELD_S)
    await slow.start()
    try:
        async with replica(redis_url, settings, clock, slow.url) as (a, _), \
                replica(redis_url, settings, clock, fake.base_url) as (b, _), \
                ClientSession() as http:
            for k in range(12):  # one member's quick commands, answered alternately
                update = fake.message_update(STEWARD, f"/help {k}")
                server = (a, b)[k % 2]
                async with http.post(server.make_url("/telegram"), json=update,
                                     headers={SECRET_HEADER: SECRET}) as resp:
                    assert resp.status == 200, await resp.text()

            def answers(calls):  # type: ignore[no-untyped-def]
                got = [c for c in calls if c.ok and c.method == "sendMessage"
                       and str(c.params.get("chat_id")) == str(STEWARD)]
                return got if len(got) >= 12 else None
            await fake.wait_for(answers, timeout=60)
        assert fake.too_many == 0, fake.too_many_at
    finally:
        await slow.stop()
        await fake.stop()


async def test_two_replicas_sending_backlogs_stay_within_the_bot_wide_rate(
        store: Store, redis_url: str, settings: Settings, clock: VirtualClock) -> None:
    """Each replica has 40 messages for 40 different people at once (a replica taking over a
    backlog while the other is busy): together within Telegram's ~30 a second per bot, though
    one replica's sends arrive late."""
    fake = FakeTelegram(enforce_limits=True)
    await fake.start()
    slow = SlowLink(fake.base_url, HELD_S)
    await slow.start()
    people = [str(500000001 + k) for k in range(80)]
    try:
        async with replica(redis_url, settings, clock, slow.url) as (_, a), \
                replica(redis_url, settings, clock, fake.base_url) as (_, b):
            for k, person in enumerate(people):
                (a, b)[k % 2].notifier.reply("telegram", person, Reply(f"message {k}"))

            def delivered(calls):  # type: ignore[no-untyped-def]
                got = {str(c.params.get("chat_id")) for c in calls
                       if c.ok and c.method == "sendMessage"}
                return got >= set(people)
            await fake.wait_for(delivered, timeout=60)
        assert fake.too_many == 0, fake.too_many_at
    finally:
        await slow.stop()
        await fake.stop()
