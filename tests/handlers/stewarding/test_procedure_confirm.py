"""A procedure's confirm step answered by typing, as a console, Slack DM or Telegram user may:
yes sends it, cancel drops it, anything else asks again; and a bare "yes" with nothing
waiting is never added to a report as if it confirmed something."""

from __future__ import annotations

from bot.core.dispatch import Core
from tests.conftest import Chat


async def _procedures(core: Core) -> list[str]:
    fx = await core.active_fixture()
    return [e.data.get("kind", "") for e in await core.store.events(fx.id)
            if e.kind == "stewards.procedure"]


async def test_typing_yes_sends_the_evacuation(say: Chat, core: Core) -> None:
    ask = await say("/evacuate stb", as_="safety_officer")
    assert ask.reply.title.startswith("Confirm EVACUATE")
    r = await say("what?", as_="safety_officer")  # neither: asked again, nothing sent
    assert r.reply.title == ask.reply.title and "reply yes" in r.reply.text
    assert await _procedures(core) == []
    r = await say("yes", as_="safety_officer")
    assert r.reply.title.startswith("EVACUATE P-"), r.reply.text
    assert await _procedures(core) == ["evacuate"]


async def test_typing_cancel_sends_nothing(say: Chat, core: Core) -> None:
    await say("/lockdown all", as_="safety_officer")
    r = await say("cancel", as_="safety_officer")
    assert r.reply.text == "LOCKDOWN cancelled; nothing was sent."
    assert await _procedures(core) == []


async def test_a_bare_yes_with_nothing_waiting_is_not_added_to_a_report(
        say: Chat, core: Core) -> None:
    r = await say("/incident structural @stb_walkway s3 netting torn", as_="safety_officer")
    assert r.reply.title == "Logged INC-1"
    r = await say("yes", as_="safety_officer")  # within the report's note window
    assert not r.reply.ok and "Nothing is waiting for 'yes'" in r.reply.text
    fx = await core.active_fixture()
    assert [e for e in await core.store.events(fx.id) if e.kind == "incident.updated"] == []
