"""An "I have it" from someone a broadcast was not sent to is refused in one line (the store's
typed refusal), and changes nothing; the steward's own tap counts once."""

from __future__ import annotations

from bot.store.stewarding_keys import Stewarding


async def test_an_ihaveit_from_someone_not_sent_it_is_one_line(say, core, store) -> None:
    sent = await say("/broadcast stb keep the gangways clear", as_="control")
    bid = sent.reply.title.split()[-1]
    got = await say(f"/ihaveit {bid}", as_="police_commander")
    assert got.reply.text == "That message was not sent to you." and not got.reply.ok
    assert "have it" in (await say(f"/ihaveit {bid}", as_="steward")).reply.text
    await say(f"/ihaveit {bid}", as_="steward")
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    bc = await Stewarding(store.gateway).broadcast(fx, bid)
    assert bc is not None and bc.acked == ("console:steward",)
