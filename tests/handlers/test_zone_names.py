"""Zones by the names people use: the longest run of leading words that names a zone of the
ground (id, name or alias, as `@place` resolves them) is the target, the rest is the text;
an unknown zone is refused with the ground's zones listed."""

from __future__ import annotations

from bot.core.dispatch import Core
from tests.conftest import Chat


async def _sent(core: Core) -> list[tuple[str, str]]:
    fx = await core.active_fixture()
    return [(e.data["target"], e.data["text"]) for e in await core.store.events(fx.id)
            if e.kind in ("stewards.broadcast", "stewards.procedure")]


async def test_a_two_word_zone_is_not_eaten_into_the_text(say: Chat, core: Core) -> None:
    r = await say("/broadcast STB upper hold the walkway", as_="control")
    assert r.reply.ok, r.reply.text
    assert await _sent(core) == [("zone:stb_upper", "hold the walkway")]


async def test_stands_and_gates_by_their_names(say: Chat, core: Core) -> None:
    assert (await say("/broadcast north stand keep the gangways clear", as_="control")).reply.ok
    ask = await say("/lockdown gate b", as_="safety_officer")
    assert ask.reply.title == "Confirm LOCKDOWN · Away turnstiles (Gate B)?", ask.reply.text
    ask = await say("/evacuate Sir Trevor Brooking Stand", as_="safety_officer")
    assert ask.reply.title == "Confirm EVACUATE · Sir Trevor Brooking Stand?", ask.reply.text
    assert (await say("yes", as_="safety_officer")).reply.ok
    assert await _sent(core) == [("zone:stb", "keep the gangways clear"), ("zone:stb", "")]


async def test_west_stand_is_a_zone(say: Chat) -> None:
    ask = await say("/evacuate West Stand", as_="safety_officer")
    assert ask.reply.title == "Confirm EVACUATE · West Stand?", ask.reply.text


async def test_an_unknown_zone_is_refused_with_the_grounds_zones(say: Chat,
                                                                core: Core) -> None:
    r = await say("/broadcast narnia hold the line", as_="control")
    assert not r.reply.ok
    assert "'narnia' is not a zone" in r.reply.text
    assert "stb upper" in r.reply.text and "west stand" in r.reply.text \
        and "gate b" in r.reply.text, r.reply.text
    assert await _sent(core) == []
