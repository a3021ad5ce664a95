"""The control-room web view over HTTP: sign-in links, sessions, roles, CSRF, SSE resume."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

import pytest

from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.runtime import control_room_for
from bot.web.access import COOKIE
from bot.web.live import stream_key
from bot.web.server import takes_gzip
from tests.conftest import Chat
from tests.support.web import new_client
from tests.support.web_session import (  # noqa: F401 (fixtures)
    link_for,
    read_events,
    refusals,
    sign_in,
    state_of,
)
from tests.web.conftest import TG_CONTROL


# ---------------------------------------------------------------- sessions
async def test_no_session_no_page_and_the_denial_is_audited(client, core) -> None:
    for path in ("/control/", "/control/events", "/control/chart.svg", "/control/post-match"):
        resp = await client.get(path)
        assert resp.status == 401, path
    resp = await client.post("/control/action", json={"action": "ack", "incident": "INC-1"})
    assert resp.status == 401
    assert "Send /web" in await (await client.get("/control/")).text()
    denied = await refusals(core)
    assert any("GET /control/events" in a["detail"] for a in denied)
    assert all(a["who"] == "web:anonymous" for a in denied)


async def test_link_signs_in_once_and_sets_a_strict_httponly_cookie(client, say, core) -> None:
    path = await link_for(say, "control")
    assert (await client.get(path)).status == 200  # a chat app's link preview uses nothing
    resp = await client.post(path)
    assert resp.status == 200
    cookie = resp.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/control"
    assert not cookie["secure"]  # plain http on 127.0.0.1
    page = await client.get("/control/")
    assert page.status == 200
    assert "West Ham United v Chelsea" in await page.text()
    again = await client.post(path)  # reused
    assert again.status == 403
    assert any("used or expired" in a["detail"] for a in await refusals(core))


async def test_a_sign_in_posted_from_another_site_is_refused(client, say, core) -> None:
    path = await link_for(say, "control")
    resp = await client.post(path, headers={"Origin": "https://evil.example"})
    assert resp.status == 403 and COOKIE not in resp.cookies
    assert (await client.post(path)).status == 200  # the link was not used up


async def test_secure_cookie_behind_https(core, say) -> None:
    room = control_room_for(core, "https://control.example.test")
    c = await new_client(room)
    try:
        path = await link_for(say, "control")
        resp = await c.post(path)
        assert resp.cookies[COOKIE]["secure"]
    finally:
        await c.close()
        await room.live.close()


async def test_forged_and_expired_links_are_refused(client, say, core,
                                                    clock: VirtualClock) -> None:
    forged = await client.post("/control/login/" + "A" * 32)
    assert forged.status == 403
    path = await link_for(say, "control")
    clock.advance(timedelta(seconds=core.settings.web_link_ttl_seconds + 1))
    expired = await client.post(path)
    assert expired.status == 403
    assert (await client.get("/control/")).status == 401
    details = [a["detail"] for a in await refusals(core)]
    assert any("expired link of console:control" in d for d in details)
    assert any("unknown, used or expired" in d for d in details)


async def test_session_expires_and_ends_when_the_member_is_removed(client, say, core,
                                                                   clock) -> None:
    await sign_in(client, say, "control")
    clock.advance(timedelta(seconds=core.settings.web_session_ttl_seconds + 1))
    assert (await client.get("/control/")).status == 401
    # a member who joined by invite, then was removed
    invite = await say("/invite supervisor", as_="admin")
    code = re.search(r"/join (\w+)", invite.reply.text).group(1)
    await say(f"/join {code}", as_="newbie")
    await sign_in(client, say, "newbie")
    await core.store.gateway.r.hdel("md:{ops}:members", "console:newbie")
    resp = await client.get("/control/")
    assert resp.status == 401
    assert any("no longer a supervisor" in a["detail"] for a in await refusals(core))


async def test_strangers_get_no_link_and_groups_see_none(say) -> None:
    result = await say("/web", as_="nobody")
    assert not result.reply.ok and "/control/login/" not in result.reply.text
    in_group = await say("/web", as_="control", private=False)
    assert not in_group.reply.ok and "direct message" in in_group.reply.text


# ---------------------------------------------------------------- actions
async def test_acknowledge_needs_the_csrf_token_and_goes_through_the_core(client, say,
                                                                          core) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    csrf = await sign_in(client, say, "control")
    body = {"action": "ack", "incident": "INC-1", "id": "press-0001"}
    resp = await client.post("/control/action", json=body)
    assert resp.status == 403
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).status == "reported"  # nothing written
    assert any("CSRF" in a["detail"] for a in await refusals(core))
    resp = await client.post("/control/action", json=body, headers={"X-CSRF-Token": csrf})
    assert resp.status == 200 and (await resp.json())["text"] == "INC-1 acknowledged."
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "acknowledged" and inc.marks["acknowledged_by"] == "web:console:control"
    # the same press again (a retry) is deduplicated like a redelivered chat update
    again = await client.post("/control/action", json=body, headers={"X-CSRF-Token": csrf})
    assert "Already done" in (await again.json())["text"]


async def test_a_viewer_cannot_act(client, say, core) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    csrf = await sign_in(client, say, "viewer")
    page = state_of(await (await client.get("/control/")).text())
    assert page["me"]["actions"] == []
    resp = await client.post("/control/action", headers={"X-CSRF-Token": csrf},
                             json={"action": "ack", "incident": "INC-1", "id": "press-0002"})
    assert resp.status == 409 and "not for your role" in (await resp.json())["text"]
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).status == "reported"


async def test_the_screen_follows_its_members_own_fixture(client, say, core) -> None:
    r = await say("/fixture add West Ham Women v Chelsea Women 2026-11-25 18:30 cat=B",
                  as_="admin")
    assert r.reply.ok, r.reply.text
    women = next(f for f in await core.store.fixtures() if "Women" in f.home)
    for who in ("steward", "control"):
        assert (await say(f"/fixture use {women.id}", as_=who)).reply.ok
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    csrf = await sign_in(client, say, "control")
    html = await (await client.get("/control/")).text()
    assert "West Ham Women v Chelsea Women" in html  # not the deployment's default fixture
    resp = await client.post("/control/action", headers={"X-CSRF-Token": csrf},
                             json={"action": "ack", "incident": "INC-1", "id": "press-0003"})
    assert resp.status == 200, await resp.text()
    assert (await core.store.incident(women.id, 1)).status == "acknowledged"
    default = await core.active_fixture()
    assert default.id != women.id and await core.store.incident(default.id, 1) is None

# ---------------------------------------------------------------- roles
async def _night(say: Chat) -> None:
    await say("/incident missile @seg_ne s4 coins thrown", as_="steward")
    await say("/incident pyro @away_upper s3 flare", as_="supervisor")
    await say("/arrest violent_disorder x2 inside away inc=1 ref=MPS/CU/1101",
              as_="police_liaison")
    await say("/ban club_lifetime away ref=CLUB/77 inc=1", as_="police_liaison")


async def test_viewer_sees_no_restricted_data(client, say) -> None:
    await _night(say)
    await sign_in(client, say, "viewer")
    html = await (await client.get("/control/")).text()
    state = state_of(html)
    assert "MPS/CU" not in html and "CLUB/77" not in html
    assert not any(e["kind"].startswith(("arrest", "ban")) for e in state["log"])
    assert "arrests_by_offence" not in state["tiles"] and "bans_by_type" not in state["tiles"]
    assert set(state["incidents"]) == {"INC-1", "INC-2"}
    chart = await (await client.get("/control/chart.svg")).text()
    assert 'class="arrest"' not in chart
    post = await (await client.get("/control/post-match")).text()
    assert "Arrests by offence" not in post and "MPS/CU" not in post


async def test_police_see_arrests_and_bans_but_never_custody_refs(client, say) -> None:
    await _night(say)
    await sign_in(client, say, "police_commander")
    html = await (await client.get("/control/")).text()
    state = state_of(html)
    kinds = {e["kind"] for e in state["log"]}
    assert {"arrest.recorded", "ban.recorded"} <= kinds
    assert state["tiles"]["arrests_by_offence"] == {"Violent disorder": 2}
    assert "MPS/CU" not in html and "CLUB/77" not in html
    post = await (await client.get("/control/post-match")).text()
    assert "Arrests by offence" in post and "MPS/CU" not in post


async def test_a_steward_sees_only_their_own_reports(client, say) -> None:
    await _night(say)
    await sign_in(client, say, "steward")
    state = state_of(await (await client.get("/control/")).text())
    assert set(state["incidents"]) == {"INC-1"}
    assert all(e.get("incident") in (None, "INC-1") for e in state["log"])
    assert not any(e["kind"].startswith(("arrest", "ban")) for e in state["log"])
    assert state["me"]["actions"] == []
    assert (await client.get("/control/post-match")).status == 403
    rest = await (await client.get("/control/incidents")).json()
    assert set(rest["incidents"]) == {"INC-1"}


async def test_the_page_is_bounded_and_the_rest_comes_after(client, say, core) -> None:
    for i in range(35):
        core.clock.advance(timedelta(minutes=11))  # past the merge window: new incidents
        await say(f"/incident antisocial @bms_lower s2 noise {i}", as_="steward")
    await say("/ack 1")
    assert (await client.get("/control/incidents")).status == 401
    await sign_in(client, say, "control")
    state = state_of(await (await client.get("/control/")).text())
    # the board draws the oldest 30 reported cards and counts the rest
    assert state["partial"] and state["columns"] == {"reported": 34, "acknowledged": 1}
    assert {"INC-2", "INC-31", "INC-1"} <= set(state["incidents"])
    rest = await (await client.get("/control/incidents")).json()
    assert len(rest["incidents"]) == 35 and rest["incidents"]["INC-1"]["status"] == \
        "acknowledged"


# ---------------------------------------------------------------- live


async def test_sse_resume_with_last_event_id_delivers_exactly_the_missed_events(
        client, say, core) -> None:
    await sign_in(client, say, "control")
    for what in ("antisocial @bms_lower", "pyro @away_upper", "medical @gate_f"):
        await say(f"/incident {what} s2", as_="steward")
    fx = await core.active_fixture()
    log = await core.store.events(fx.id)
    seen = log[-3].id  # the screen had the first report, then lost its connection
    missed = [e.id for e in log if stream_key(e.id) > stream_key(seen)]
    assert len(missed) == 2
    resp = await client.get("/control/events", headers={"Last-Event-ID": seen})
    assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
    # one gzip stream of self-contained pieces, shared by every screen (the client inflates)
    assert resp.headers["Content-Encoding"] == "gzip"
    got = await read_events(resp, 2)
    assert [sid for sid, _ in got] == missed
    assert got[1][1]["incident"]["id"] == "INC-3"
    # then new events arrive live on the same connection, once each
    await say("/ack 3")
    [(sid, data)] = await read_events(resp, 1)
    assert data["event"]["kind"] == "incident.status" and data["incident"]["status"] == \
        "acknowledged"
    assert sid == (await core.store.events(fx.id))[-1].id
    resp.close()


async def test_sse_for_a_viewer_carries_no_arrests(client, say) -> None:
    await sign_in(client, say, "viewer")
    resp = await client.get("/control/events")
    await say("/arrest violent_disorder inside away ref=MPS/CU/9", as_="police_liaison")
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    [(_, data)] = await read_events(resp, 1)
    assert data["event"]["kind"] == "incident.reported"
    assert "arrests_by_offence" not in data["tiles"] and data["tiles"]["arrests"] == 1
    resp.close()


async def test_delivery_health_per_chat_reaches_the_screen_live(client, say, telegram) -> None:
    await sign_in(client, say, "control")
    state = state_of(await (await client.get("/control/")).text())
    [row] = [r for r in state["delivery"] if r["chat"] == str(TG_CONTROL)]
    assert row["queued"] == 0 and row["last_429_s"] is None and "control" in row["name"]
    resp = await client.get("/control/events")
    telegram.fail("sendMessage", 1, code=429, retry_after=1)
    await say("/incident pyro @away_upper s3 flare", as_="steward")

    async def limited_row() -> dict:  # the chat (control or command) whose send got the 429
        while True:
            [(_, data)] = await read_events(resp, 1, "delivery")
            rows = [r for r in data["rows"] if r["last_429_s"] is not None]
            if rows:
                return rows[0]
    row = await asyncio.wait_for(limited_row(), 15)  # a guard against hanging
    assert row["platform"] == "Telegram"
    while row["queued"]:  # the card goes out after retry_after, and the tile says so
        [(_, data)] = await asyncio.wait_for(read_events(resp, 1, "delivery"), 15)
        row = next(r for r in data["rows"] if r["chat"] == row["chat"])
    assert row["last_429_s"] is not None
    resp.close()


async def test_stewards_get_no_delivery_health(client, say) -> None:
    await sign_in(client, say, "steward")
    assert state_of(await (await client.get("/control/")).text())["delivery"] is None


@pytest.mark.parametrize(("header", "gzip"), [
    ("gzip, deflate, br", True), ("br, gzip;q=0.5", True), ("*", True), ("", False),
    ("identity", False), ("gzip;q=0", False), ("gzip; q=0.0", False), ("gzip;q=x", False)])
def test_which_screens_take_gzip(header: str, gzip: bool) -> None:
    assert takes_gzip(header) is gzip


async def test_a_screen_that_takes_no_gzip_gets_plain_events(client, say) -> None:
    await sign_in(client, say, "control")
    resp = await client.get("/control/events", headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in resp.headers
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    [(_, data)] = await read_events(resp, 1)
    assert data["event"]["kind"] == "incident.reported" and data["incident"]["id"] == "INC-1"
    resp.close()


async def test_the_live_chart_shows_the_last_hours_and_the_post_match_page_the_night(
        client, say, core) -> None:
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    core.clock.advance(timedelta(hours=12))
    await say("/incident medical @gate_f s2 faint", as_="steward")
    await sign_in(client, say, "control")
    live = await (await client.get("/control/chart.svg")).text()
    night = await (await client.get("/control/post-match")).text()
    assert live.count("<title>1 in ") == 1 and night.count("<title>1 in ") == 2


# ---------------------------------------------------------------- the wall screen (#23)
async def test_the_page_opens_with_the_worst_cards_however_many_older_ones(client, say,
                                                                           core) -> None:
    for i in range(65):
        core.clock.advance(timedelta(minutes=11))  # past the merge window: new incidents
        await say(f"/incident antisocial @bms_lower s2 noise {i}", as_="steward")
    await say("/incident segregation_breach @seg_ne s5 fans through the line", as_="steward")
    await sign_in(client, say, "control")
    state = state_of(await (await client.get("/control/")).text())
    # the newest incident is the worst: the first paint has it, older S2s wait their turn
    assert state["partial"] and "INC-66" in state["incidents"]
    assert state["columns"] == {"reported": 66}


async def test_a_card_has_the_short_place_the_words_the_count_and_the_reporter(client, say,
                                                                              core) -> None:
    await say("/incident missile @seg_ne s4 x30 coins thrown both ways", as_="steward")
    await sign_in(client, say, "control")
    inc = state_of(await (await client.get("/control/"))
                   .text())["incidents"]["INC-1"]
    assert inc["place"] == "NE segregation"  # the ground file's `short`, not the long name
    assert inc["location_label"] == "North-east segregation line (home/away)"
    assert inc["description"] == "coins thrown both ways"
    assert inc["people"] == "30"
    assert inc["reporter_name"] == "Steward 14 (STB upper)"  # config/roster.toml
    assert inc["severity"] == 4 and inc["reports"] == 1


async def test_each_card_says_where_its_chat_message_is(client, say, core, telegram) -> None:
    await sign_in(client, say, "control")
    resp = await client.get("/control/events")
    telegram.fail("sendMessage", 2, code=429, retry_after=3)  # control and command chats
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    states: list[list[dict]] = []

    async def until_delivered() -> None:
        while not (states and all("at" in r for r in states[-1])):
            [(_, data)] = await read_events(resp, 1, "seen")
            if "INC-1" in data["incidents"]:
                states.append(data["incidents"]["INC-1"])
    await asyncio.wait_for(until_delivered(), 20)  # a guard against hanging
    resp.close()
    # first queued behind the platform's 429, then delivered, both said per platform
    queued = [r for [r] in states if "queued_s" in r]
    assert queued and {"platform": "Telegram", "why": "rate limit"}.items() <= \
        queued[0].items()
    [done] = states[-1]
    assert done == {"platform": "Telegram", "at": int(core.clock.now().timestamp() * 1000)}
    # a screen opened now gets it with the incident
    page = state_of(await (await client.get("/control/")).text())
    assert page["incidents"]["INC-1"]["delivery"] == [done]
    rest = await (await client.get("/control/incidents")).json()
    assert rest["incidents"]["INC-1"]["delivery"] == [done]


async def test_no_link_while_no_control_room_runs(say) -> None:
    result = await say("/web", as_="control")  # no server started in this test
    assert result is not None and not result.reply.ok
    assert "not running" in result.reply.text and "/control/login/" not in result.reply.text


async def test_an_unknown_fixture_is_refused_not_ignored(client, say) -> None:
    await sign_in(client, say, "control")
    resp = await client.get("/control/?fixture=no-such-night")
    assert resp.status == 404 and "no-such-night" in await resp.text()


async def test_refusals_say_how_to_get_a_link_and_stewards_get_no_post_match_link(
        client, say) -> None:
    page = await (await client.get("/control/")).text()
    assert "/web" in page and "matchday web-link" in page  # in chat, or on the bot's machine
    await sign_in(client, say, "steward")
    assert "/control/post-match" not in await (await client.get("/control/")).text()


async def test_the_live_chart_counts_per_5_minutes_the_post_match_per_15(client, say,
                                                                          core) -> None:
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    core.clock.advance(timedelta(minutes=6))
    await say("/incident medical @gate_f s2 faint", as_="steward")
    await sign_in(client, say, "control")
    live = await (await client.get("/control/chart.svg")).text()
    night = await (await client.get("/control/post-match")).text()
    # two reports 6 minutes apart: two bars live, one in the night's quarter-hour
    assert live.count("<title>1 in ") == 2 and "per 5 minutes" in live
    assert night.count("<title>2 in ") == 1


async def session_reads(core: Core) -> int:
    """HGETALL calls the server has run (a screen's own session check is one)."""
    stats = await core.store.gateway.r.info("commandstats")
    return int(stats.get("cmdstat_hgetall", {}).get("calls", 0))


async def test_more_screens_cost_no_more_session_reads_per_report(room, client, say,
                                                                   core) -> None:
    """Every screen's session is checked before each batch reaches it, all in one read:
    eleven screens cost about the reads per report one does, not one more each (the write
    path's own reads vary by one or so from report to report)."""
    await sign_in(client, say, "control")
    others = [await new_client(room) for _ in range(10)]
    try:
        first = await client.get("/control/events", headers={"Accept-Encoding": "identity"})
        await read_events(first, 0)
        await say("/incident pyro @away_upper s2 flare", as_="steward")  # warm: scripts, feed
        await read_events(first, 1)
        before = await session_reads(core)
        await say("/incident medical @gate_f s2 fan fainted", as_="steward")
        assert (await read_events(first, 1))[0][1]["incident"]["id"] == "INC-2"
        one_screen = await session_reads(core) - before
        feeds = [first]
        for c in others:
            await sign_in(c, say, "control")
            feeds.append(await c.get("/control/events",
                                     headers={"Accept-Encoding": "identity"}))
        for f in feeds[1:]:
            assert (await f.content.readline()).startswith(b"retry:")
        before = await session_reads(core)
        await say("/incident antisocial @bms_lower s2 noise", as_="steward")
        for f in feeds:
            assert (await read_events(f, 1))[0][1]["incident"]["id"] == "INC-3"
        assert await session_reads(core) - before <= one_screen + 2, one_screen
    finally:
        for c in others:
            await c.close()
