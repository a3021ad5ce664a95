"""A procedure to a big ground's 15,000 stewards is recorded in its one write (its recipients
in parts: Lua's unpack takes ~8,000 values at most) and the last of them can acknowledge it."""

from __future__ import annotations

from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.domain.messages import Command
from bot.store.stewarding_keys import Stewarding

STEWARDS = 15_000


async def test_an_evacuate_to_15000_stewards_is_sent_and_acknowledged(say, core: Core,
                                                                       store) -> None:
    for i in range(STEWARDS):
        uid = str(700_000_000 + i)
        core.roster[f"telegram:{uid}"] = Member("telegram", uid, "steward", f"Tabard {i}",
                                                "stb_upper")
    ask = await say("/evacuate all", as_="safety_officer")
    done = await say(ask.reply.buttons[0][0].command, as_="safety_officer")
    assert done.reply.ok, done.reply.text
    bid = done.reply.title.split()[-1]
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    bc = await Stewarding(store.gateway).broadcast(fx, bid)
    assert bc is not None and bc.sent >= STEWARDS and len(bc.missing) == bc.sent
    last = str(700_000_000 + STEWARDS - 1)
    got = await core.handle(Command("telegram", last, last, f"/ihaveit {bid}", "tg:1"))
    assert got is not None and got.reply.ok, got.reply.text if got else None
    bc = await Stewarding(store.gateway).broadcast(fx, bid)
    assert bc is not None and bc.acked == (f"telegram:{last}",)
