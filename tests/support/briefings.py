"""Briefing history of a fixture."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ledger import Event
from handlers.fixtures.commands import create_fixture, fixture_id

PAST = fixture_id("Chelsea", "West Ham United", datetime(2026, 9, 20))  # West Ham away
OTHER = fixture_id("West Ham United", "Arsenal", datetime(2026, 10, 10))  # same ground
LAST_SEASON = fixture_id("West Ham United", "Chelsea", datetime(2026, 3, 1))


async def run(say, *lines: str, as_: str = "control") -> None:
    for line in lines:
        r = await say(line, as_=as_)
        assert r.reply.ok, (line, r.reply.text)


async def history(say, core) -> str:
    """Three earlier fixtures with incidents, arrests and bans; returns the tonight's id."""
    tonight = (await core.active_fixture()).id
    away_game = Fixture(PAST, "Chelsea", "West Ham United", datetime(2026, 9, 20, 14, tzinfo=UTC),
                        "stamford_bridge", category="C")
    ev = Event("fixture.created", "2026-09-01T00:00:00+00:00", "system:test", "admin",
               {"id": PAST, **away_game.to_hash()}, phase="pre")
    assert await create_fixture(core, core.store, away_game, ev, "test:away-game")
    await run(say, "/fixture add West Ham United v Arsenal 2026-10-10 15:00 cat=B",
              "/fixture add West Ham United v Chelsea 2026-03-01 15:00 cat=C-IRD", as_="admin")
    await run(say, f"/fixture use {PAST} all", as_="admin")
    await run(say, "/incident missile @stb_walkway s4", "/incident alcohol @stb_lower s2",
              "/incident pyro @stb_upper s3", as_="steward")
    await run(say, "/arrest missiles x2 inside away", "/arrest disorder outside home",
              as_="police_liaison")
    await run(say, "/ban club_lifetime x3 away status=active", "/ban fbo_s14a away",
              as_="police_liaison")  # West Ham supporters, banned after the away game
    await run(say, f"/fixture use {OTHER} all", as_="admin")
    await run(say, "/incident pyro @stb_upper s2", as_="steward")
    await run(say, "/arrest pyro inside home", as_="police_liaison")
    await run(say, f"/fixture use {LAST_SEASON} all", as_="admin")
    await run(say, "/incident disorder @stb_walkway s4", as_="steward")
    await run(say, "/arrest violent x5 outside away", as_="police_liaison")
    await run(say, f"/fixture use {tonight} all", as_="admin")
    return tonight
