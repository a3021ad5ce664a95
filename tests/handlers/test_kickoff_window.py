"""Kick-offs far in the past or future are refused: they broke hooks, retention and replay."""

from __future__ import annotations

import pytest

from handlers.fixtures.commands import KICKOFF_AHEAD, KICKOFF_BACK


@pytest.mark.parametrize("when", ["0001-01-01 15:00", "9999-12-31 15:00", "2025-11-01 15:00",
                                  "2028-12-01 15:00"])
async def test_add_refuses_a_kickoff_outside_the_window(say, core, when):
    before = await core.store.fixtures()
    r = await say(f"/fixture add Arsenal v Spurs {when} cat=B", as_="admin")
    assert not r.reply.ok
    first, usage = r.reply.text.split("\n")
    assert "kick-off" in first.lower() and "1 year back" in first and "2 years ahead" in first
    assert usage.startswith("Usage: /fixture add")
    assert await core.store.fixtures() == before  # nothing written


@pytest.mark.parametrize("when", ["0001-01-01 15:00", "9999-12-31 15:00"])
async def test_kickoff_change_refuses_outside_the_window(say, core, when):
    fx = await core.active_fixture()
    r = await say(f"/fixture kickoff {when}", as_="admin")
    assert not r.reply.ok and "2 years ahead" in r.reply.text and "Usage:" in r.reply.text
    assert (await core.active_fixture()).kickoff == fx.kickoff


async def test_kickoffs_inside_the_window_are_accepted(say, clock):
    assert KICKOFF_BACK.days == 365 and KICKOFF_AHEAD.days == 730
    r = await say("/fixture add Arsenal v Spurs 2026-01-10 15:00", as_="admin")  # 10 months ago
    assert r.reply.ok, r.reply.text
    r = await say("/fixture add Spurs v Arsenal 2028-10-01 15:00", as_="admin")  # 22 months on
    assert r.reply.ok, r.reply.text
