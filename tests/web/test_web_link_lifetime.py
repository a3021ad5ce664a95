"""Issue 31, item 7: a sign-in link lives as long as the running server says, not as long
as the process that issued it thought (another shell's `matchday web-link`, a replica
configured apart, a server since restarted with a shorter setting); /web promises no longer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from urllib.parse import urlsplit

import pytest_asyncio
from aiohttp.test_utils import TestClient

from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.runtime import control_room_for
from bot.settings import Settings
from bot.store import Store
from bot.web.access import Access, Server
from tests.conftest import Chat
from tests.support.web import new_client
from tests.support.web_session import (
    refusals,
)

SERVER_TTL = 30  # the running server's MATCHDAY_WEB_LINK_TTL; the issuing core has 300


@pytest_asyncio.fixture
async def server(store: Store, settings: Settings, clock: VirtualClock
                 ) -> AsyncIterator[TestClient]:
    """A browser on a control room whose process gives links 30 s, beside the test's core."""
    strict = build_core(store, settings.model_copy(
        update={"web_link_ttl_seconds": SERVER_TTL}), clock, cache_ttl=0)
    room = control_room_for(strict, "http://127.0.0.1:8080")
    browser = await new_client(room)
    yield browser
    await browser.close()
    await room.live.close()


async def test_the_redeeming_servers_lifetime_bounds_a_link_issued_for_longer(
        server: TestClient, core: Core, clock: VirtualClock) -> None:
    # issued by a process that believed links live 300 s (an older replica, another
    # shell, this server before a restart with a shorter setting)
    issuer = Access(core, core.facades)
    believed = Server("http://127.0.0.1:8080", 300)
    early, late = [urlsplit(await issuer.issue_link(f"console:{who}", believed) or "").path
                   for who in ("control", "safety_officer")]
    clock.advance(timedelta(seconds=20))
    assert (await server.post(early)).status == 200  # within the server's 30 s
    clock.advance(timedelta(seconds=25))  # 45 s after both were issued
    page = await (await server.get(late)).text()
    assert "Safety Officer" not in page  # the sign-in page names nobody
    resp = await server.post(late)
    assert resp.status == 403 and "expired" in await resp.text()
    assert any("expired link of console:safety_officer" in a["detail"]
               for a in await refusals(core))


async def test_web_promises_the_running_servers_lifetime(server: TestClient, say: Chat,
                                                         core: Core) -> None:
    assert core.settings.web_link_ttl_seconds == 300  # what the issuing process thinks
    said = await say("/web", as_="viewer")
    assert said is not None and "valid 30 seconds" in said.reply.text
