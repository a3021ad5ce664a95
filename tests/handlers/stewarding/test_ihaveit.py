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


async def test_ihaveit_alone_acknowledges_the_newest_message_waiting_for_it(
        say, core, store) -> None:
    r = await say("/ihaveit", as_="steward")
    assert not r.reply.ok and "nothing was recorded" in r.reply.text
    first = (await say("/broadcast all radios on channel 2", as_="control")).reply.title
    second = (await say("/broadcast stb keep the gangways clear", as_="control")).reply.title
    got = await say("/ihaveit", as_="steward")
    assert got.reply.ok and second.split()[-1] in got.reply.text
    got = await say("/ihaveit", as_="steward")  # then the older one still waiting
    assert got.reply.ok and first.split()[-1] in got.reply.text
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    for title in (first, second):
        bc = await Stewarding(store.gateway).broadcast(fx, title.split()[-1])
        assert bc is not None and "console:steward" in bc.acked
    assert not (await say("/ihaveit", as_="steward")).reply.ok  # nothing left


async def test_a_steward_typing_ok_or_received_to_a_broadcast_has_it_counted(
        say, core, store) -> None:
    sent = (await say("/evacuate all", as_="safety_officer")).reply
    done = await say(sent.buttons[0][0].command, as_="safety_officer")
    pid = done.reply.title.split()[-1]
    got = await say("Received.", as_="steward")
    assert got.reply.ok and pid in got.reply.text and "have it" in got.reply.text
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    bc = await Stewarding(store.gateway).broadcast(fx, pid)
    assert bc is not None and "console:steward" in bc.acked
    again = await say("ok", as_="steward")  # nothing else waiting: one line, nothing added
    assert not again.reply.ok and "Nothing is waiting for 'ok'" in again.reply.text
