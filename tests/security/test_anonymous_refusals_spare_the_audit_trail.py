"""Issue 20, item 4: requests without a session cannot flush the member audit trail, and what
they send is stored cut short."""

from __future__ import annotations

from datetime import timedelta

from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.domain.messages import Command
from tests.conftest import Chat
from tests.security.screens import link_for, sign_in

FLOOD = 200
PER_MINUTE = 50  # at most a few dozen refusals of clients without a session a minute
ORIGIN = "https://evil.example/" + "A" * 8000  # an 8 KB header, as a flood would send


async def test_a_flood_of_refused_requests_leaves_the_member_audit_trail_alone(
        client, say: Chat, core: Core, clock: VirtualClock) -> None:
    await sign_in(client, say, "control")
    trail = await core.facades.audit.audit_log(1000)
    assert [a["action"] for a in trail[:2]] == ["web.signin", "web.link"]
    path = await link_for(say, "police_commander")
    trail = await core.facades.audit.audit_log(1000)
    client.session.cookie_jar.clear()  # from here on: a client without a session
    for i in range(FLOOD):
        if i % 2:
            resp = await client.get("/control/", headers={"Origin": ORIGIN})
            assert resp.status == 401
        else:
            resp = await client.post(path + "x", headers={"Origin": ORIGIN})
            assert resp.status == 403
    # the member trail is exactly as it was: nothing pushed in, so nothing pushed out
    assert await core.facades.audit.audit_log(1000) == trail
    kept = await core.facades.audit.stranger_refusals(1000)
    assert 0 < len(kept) <= PER_MINUTE
    assert any("sign-in posted from https://evil.example/AAA" in a["detail"] for a in kept)
    assert max(len(v) for a in kept for v in a.values()) < 300  # not 8 KB each
    clock.advance(timedelta(minutes=1))
    assert (await client.get("/control/")).status == 401
    newest = (await core.facades.audit.stranger_refusals(1))[0]
    assert newest["not_written_before"] == str(FLOOD - len(kept))  # counted, not lost
    # and the link the flood aimed next to still works for its member
    assert (await client.post(path)).status == 200


async def test_a_flood_of_strangers_in_chat_leaves_the_member_audit_trail_alone(
        say: Chat, core: Core) -> None:
    await say("/incident missile @seg_ne s4", as_="steward")
    await say("/arrest throwing_missiles", as_="steward")  # a member's refusal: kept
    trail = await core.facades.audit.audit_log(1000)
    assert trail and trail[0]["who"] == "console:steward"
    for i in range(FLOOD):  # someone the bot does not know, typing commands
        cmd = Command(platform="telegram", chat=str(900 + i), user=str(900 + i),
                      text="/status " + "x" * 500, dedupe_key=f"flood:{i}", private=True)
        result = await core.handle(cmd)
        assert result is not None and not result.reply.ok
    assert await core.facades.audit.audit_log(1000) == trail  # nothing pushed in, nothing out
    kept = await core.facades.audit.stranger_refusals(1000)
    assert 0 < len(kept) <= PER_MINUTE
    assert kept[0]["who"].startswith("telegram:") and "x" * 50 not in str(kept)
