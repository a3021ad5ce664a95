"""A club with two matches at once (a national Saturday on one deployment, #39): a steward
who chose the other fixture is at the other ground, so an EVACUATE here neither goes to them
nor counts them in its plan; with no choice a roster steward is still this fixture's."""

from __future__ import annotations

from bot.core.dispatch import Core
from tests.conftest import Chat


def _sent_to(result) -> set[str]:  # type: ignore[no-untyped-def]
    return {o.audience for o in result.outbound if o.audience.startswith("user:")}


async def test_an_evacuate_skips_the_stewards_at_the_clubs_other_ground(
        say: Chat, core: Core) -> None:
    here = await core.active_fixture()
    assert here is not None
    r = await say("/fixture add West Ham v Spurs 2026-12-05 12:30 cat=C ground=london_stadium",
                  as_="admin")
    assert r.reply.ok, r.reply.text
    other = next(f for f in await core.store.fixtures() if f.id != here.id)
    ask = await say("/evacuate all fire in the east stand", as_="safety_officer")
    both = int(ask.reply.text.split("It goes to ")[1].split()[0])
    await say("cancel", as_="safety_officer")
    # the console steward goes to the other match
    assert (await say(f"/fixture use {other.id} me", as_="steward")).reply.ok
    ask = await say("/evacuate all fire in the east stand", as_="safety_officer")
    assert f"It goes to {both - 1} stewards" in ask.reply.text, ask.reply.text
    sent = await say("yes", as_="safety_officer")
    assert sent.reply.ok, sent.reply.text
    assert "user:console:steward" not in _sent_to(sent)
    assert "user:console:supervisor" in _sent_to(sent)  # chose nothing: still here
    # and the procedure's own count has them neither planned nor waiting
    status = (await say("/status", as_="safety_officer")).reply.text
    assert f"0/{both - 1} have it" in status, status


async def test_i_have_it_counts_on_the_fixture_it_was_sent_for(say: Chat, core: Core) -> None:
    # the steward got the EVACUATE, then moved to the club's other match (/fixture use):
    # their "I have it" on the message they hold still counts, on the fixture it was for
    here = await core.active_fixture()
    assert here is not None
    await say("/fixture add West Ham v Spurs 2026-12-05 12:30 cat=C ground=london_stadium",
              as_="admin")
    other = next(f for f in await core.store.fixtures() if f.id != here.id)
    await say("/evacuate all fire in the east stand", as_="safety_officer")
    sent = await say("yes", as_="safety_officer")
    bid = sent.reply.title.split()[-1]
    assert (await say(f"/fixture use {other.id} me", as_="steward")).reply.ok
    got = await say(f"/ihaveit {bid}", as_="steward")
    assert got.reply.ok, got.reply.text
    bc = await core.facades.stewarding.broadcast(here.id, bid)
    assert bc is not None and "console:steward" in bc.acked
    # and someone it was never sent to is still refused in one line
    refused = await say(f"/ihaveit {bid}", as_="police_commander")
    assert refused.reply.text == "That message was not sent to you."
