"""The control room marks a drill's fixture: its live screen and post-match page say DRILL,
a live fixture's never do (fetched over HTTP as a signed-in member)."""

from __future__ import annotations

from bot.app import build_core
from bot.core.dispatch import Core
from bot.core.drill import Drill
from tests.conftest import Chat
from tests.web.test_web import sign_in


async def test_a_drill_fixture_page_shows_drill(client, core: Core, say: Chat, settings,
                                               clock) -> None:  # noqa: F811
    live = (await core.active_fixture()).id
    replay = build_core(core.store, settings, clock, cache_ttl=0, drill=Drill())
    r = await Chat(replay)("/fixture add West Ham v Chelsea 2026-11-25 19:45", as_="admin")
    assert r.reply.ok, r.reply.text  # a replay added the same match as a drill
    [drill] = replay.drill.created

    await sign_in(client, say, "control")
    for path in ("/control/", "/control/post-match"):
        page = await client.get(f"{path}?fixture={drill}")
        assert page.status == 200
        html = await page.text()
        assert ">DRILL</span>" in html and "<title>DRILL · " in html
        page = await client.get(f"{path}?fixture={live}")
        assert page.status == 200 and "DRILL" not in await page.text()
