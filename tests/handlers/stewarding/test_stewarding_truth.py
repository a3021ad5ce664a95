"""Stewarding figures that are true (issue 36 §11-14): who may sign the steward briefing
off, and the one-per-250 mobile-steward rule when the attendance is unknown."""

from __future__ import annotations

from bot.core.dispatch import Core
from tests.conftest import Chat


async def test_the_police_cannot_sign_off_the_steward_briefing(say: Chat, core: Core) -> None:
    await say("/briefing", as_="steward")  # the version stewards read
    for role in ("police_liaison", "police_commander"):
        r = await say("/briefed", as_=role)
        assert not r.reply.ok, role
        assert "/briefed is not for your role" in r.reply.text  # and who to ask:
        assert r.reply.text.endswith("Ask a steward.") and "\n" not in r.reply.text
    r = await say("/briefed", as_="steward")
    assert r.reply.ok and "signed off" in r.reply.text


async def test_the_mobile_steward_rule_asks_for_the_attendance_when_there_is_none(
        say: Chat, core: Core) -> None:
    r = await say("/fixture add West Ham v Spurs 2026-12-05 12:30 cat=C ground=london_stadium",
                  as_="admin")
    assert r.reply.ok, r.reply.text
    fx = await core.active_fixture()
    new = [f for f in await core.store.fixtures() if f.id != fx.id][0]
    assert new.attendance == 0
    assert (await say(f"/fixture use {new.id} all", as_="admin")).reply.ok
    text = (await say("/deploy", as_="control")).reply.text
    assert "expected attendance not set" in text and "/deploy attendance <n>" in text
    await say("/deploy attendance 41000", as_="control")
    text = (await say("/deploy", as_="control")).reply.text
    assert "expected attendance not set" not in text and "MOBILE" in text


ROTA = ("/deploy import\nsteward id,name,post\n14,A. Smith,stb_250_gangway\n"
        "15,B. Jones,stb_256_gangway\n9,C. Patel,stb_105_vom\n")


async def test_a_roll_call_counts_each_steward_once_since_it_went_out_on_the_plan(
        say: Chat, core: Core, clock) -> None:
    from datetime import timedelta

    assert (await say(ROTA, as_="admin")).reply.ok
    await say("/tabard 14", as_="steward")
    await say("/tabard 15", as_="supervisor")
    await say("/onpost stb_250_gangway", as_="steward")  # before the roll call
    clock.advance(timedelta(minutes=1))
    assert (await say("/rollcall stb", as_="control")).reply.ok
    status = (await say("/status", as_="control")).reply.text
    assert "Roll call 18:01: 0/5 posts on" in status, status  # not an answer to it
    clock.advance(timedelta(minutes=1))
    await say("/onpost stb_250_gangway", as_="steward")
    await say("/onpost stb_105_vom", as_="steward")  # then moved: counted once, there
    await say("/onpost stb_256_gangway", as_="supervisor")
    await say("/standdown", as_="supervisor")  # stood down: not on post
    status = (await say("/status", as_="control")).reply.text
    line = next(x for x in status.splitlines() if "Roll call" in x)
    assert "1/5 posts on" in line, line
    assert "not yet: Block 250 gangway (A. Smith), Block 256 gangway (B. Jones)" in line, line
    assert "2 unfilled posts" in line and "(unfilled)" not in line, line
