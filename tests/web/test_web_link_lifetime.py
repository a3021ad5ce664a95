"""Issue 31, item 7: a sign-in link lives as long as the running server says, not as long
as the process that issued it thought (another shell's `matchday web-link`, a replica
configured apart)."""

from __future__ import annotations

from datetime import timedelta

from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.runtime import control_room_for
from bot.settings import Settings
from bot.store import Store
from tests.conftest import Chat
from tests.support.web import new_client
from tests.web.test_web import link_for, refusals


async def test_the_running_servers_lifetime_bounds_a_link_issued_elsewhere(
        store: Store, settings: Settings, clock: VirtualClock, core: Core, say: Chat) -> None:
    server_core = build_core(store, settings.model_copy(update={"web_link_ttl_seconds": 30}),
                             clock, cache_ttl=0)
    room = control_room_for(server_core, "http://127.0.0.1:8080")
    browser = await new_client(room)
    try:
        assert core.settings.web_link_ttl_seconds == 300  # what the issuing process thinks
        early = await link_for(say, "control")
        late = await link_for(say, "safety_officer")
        clock.advance(timedelta(seconds=20))
        assert (await browser.post(early)).status == 200  # within the server's 30 s
        clock.advance(timedelta(seconds=25))  # 45 s after both were issued
        page = await (await browser.get(late)).text()
        assert "Safety Officer" not in page  # the sign-in page names nobody
        resp = await browser.post(late)
        assert resp.status == 403 and "expired" in await resp.text()
        assert any("expired link of console:safety_officer" in a["detail"]
                   for a in await refusals(core))
    finally:
        await browser.close()
        await room.live.close()
