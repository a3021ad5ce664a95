"""The control room marks a drill's fixture: its live screen and post-match page say DRILL,
a live fixture's never do (fetched over HTTP as a signed-in member)."""

from __future__ import annotations

from datetime import timedelta

from bot.app import build_core
from bot.core.dispatch import Core
from bot.core.drill import Drill
from bot.domain.clock import VirtualClock, iso
from tests.conftest import Chat
from tests.support.web_session import (
    sign_in,
    state_of,
)


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


async def test_a_drill_screen_counts_ages_on_the_drills_own_clock(client, core: Core, say: Chat,
                                                                  settings, clock) -> None:
    """A replay's virtual night viewed on a server with another clock: ages come from the
    drill's newest event ("5014h11" was the real clock against a virtual night)."""
    virtual = VirtualClock(clock.now() - timedelta(days=209))
    replay = build_core(core.store, settings, virtual, cache_ttl=0, drill=Drill())
    chat = Chat(replay)
    assert (await chat("/fixture add West Ham v Chelsea 2026-05-09 19:45", as_="admin")).reply.ok
    [drill] = replay.drill.created
    virtual.advance(timedelta(minutes=3))
    assert (await chat("/incident pyro @away_upper s3 flare lit", as_="steward")).reply.ok
    await sign_in(client, say, "control")
    state = state_of(await (await client.get(f"/control/?fixture={drill}")).text())
    assert state["virtual"] is True
    assert state["now"] == iso(virtual.now())  # not the server's clock, 209 days on
    live = state_of(await (await client.get("/control/")).text())
    assert live["now"] == iso(clock.now()) and live["virtual"] is False
