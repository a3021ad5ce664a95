"""Issue 20, item 3: an open live feed ends with its session (sign-out, expiry, removal, role
change) and carries nothing logged after it."""

from __future__ import annotations

import json
from datetime import timedelta

from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.web.server import ControlRoom
from tests.conftest import Chat
from tests.security.screens import follow, invited, new_client, sign_in, until_end


async def test_sign_out_ends_the_open_feed_at_once_and_not_the_members_other_screen(
        room: ControlRoom, client, say: Chat) -> None:
    room.session_check_s = 3600  # no periodic check in time: only the revocation can end it
    csrf = await sign_in(client, say, "control")
    feed = await follow(client)
    other = await new_client(room)  # the same member on the wall screen, signed in apart
    try:
        await sign_in(other, say, "control")
        wall = await follow(other)
        out = await client.post("/control/logout", data={"csrf": csrf})
        assert out.status == 200
        await say("/incident pyro @away_upper s3 flare", as_="steward")
        events, ended = await until_end(feed)
        assert [k for k, _ in events] == ["signout"], events  # the report never reached it
        assert ended
        # the wall screen's own session is untouched: it gets the report
        line = b""
        while not line.startswith(b"data: "):
            line = await wall.content.readline()
        assert json.loads(line[6:])["incident"]["id"] == "INC-1"
        wall.close()
    finally:
        await other.close()


async def test_an_expired_session_ends_an_idle_feed(room: ControlRoom, client, say: Chat,
                                                    core: Core, clock: VirtualClock) -> None:
    await sign_in(client, say, "control")
    feed = await follow(client)
    clock.advance(timedelta(seconds=core.settings.web_session_ttl_seconds + 1))
    events, ended = await until_end(feed)  # nothing logged: the idle check must see it
    assert ended and [k for k, _ in events] == ["signout"], events


async def test_a_removed_member_gets_nothing_more(room: ControlRoom, client, say: Chat,
                                                  core: Core) -> None:
    room.session_check_s = 3600
    await invited(say, "supervisor", "newbie")
    await sign_in(client, say, "newbie")
    feed = await follow(client)
    await core.store.gateway.r.hdel("md:{ops}:members", "console:newbie")
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    events, ended = await until_end(feed)
    assert ended and [k for k, _ in events] == ["signout"], events


async def test_a_demoted_police_member_gets_no_more_arrest_lines(room: ControlRoom, client,
                                                                 say: Chat,
                                                                 core: Core) -> None:
    room.session_check_s = 3600
    await invited(say, "police_commander", "newcop")
    await sign_in(client, say, "newcop")
    feed = await follow(client)
    record = json.loads(await core.store.gateway.r.hget("md:{ops}:members", "console:newcop"))
    await core.store.gateway.r.hset("md:{ops}:members", "console:newcop",
                            json.dumps(record | {"role": "viewer"}))
    await say("/arrest violent_disorder inside away ref=MPS/CU/9", as_="police_liaison")
    events, ended = await until_end(feed)
    assert not any(k == "change" for k, _ in events), events
    assert ended and [k for k, _ in events] == ["signout"]


async def test_a_second_screen_of_a_removed_member_ends_when_the_first_notices(
        room: ControlRoom, client, say: Chat, core: Core) -> None:
    """A removal noticed by one screen (or replica) ends every screen of the member at once."""
    room.session_check_s = 3600
    await invited(say, "supervisor", "newbie")
    await sign_in(client, say, "newbie")
    feed = await follow(client)
    other = await new_client(room)
    try:
        await sign_in(other, say, "newbie")
        await core.store.gateway.r.hdel("md:{ops}:members", "console:newbie")
        assert (await other.get("/control/")).status == 401  # notices, ends their sessions
        events, ended = await until_end(feed)
        assert ended and [k for k, _ in events] == ["signout"], events
    finally:
        await other.close()
