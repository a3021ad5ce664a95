"""Every procedure in force stays in /status until its all-clear, with who has it against
the plan: a routine broadcast or an all-clear for another zone never hides it."""

from __future__ import annotations

from tests.conftest import Chat


async def _procedure(say: Chat, line: str) -> None:
    await say(line, as_="safety_officer")
    assert (await say("yes", as_="safety_officer")).reply.ok


async def test_an_evacuation_stays_in_status_until_its_all_clear(say: Chat) -> None:
    await _procedure(say, "/evacuate stb upper")
    await say("/ihaveit", as_="steward")
    await _procedure(say, "/lockdown gate b")
    await _procedure(say, "/allclear gate b")
    assert (await say("/broadcast all tea is on in the west concourse", as_="control")).reply.ok
    status = (await say("/status", as_="police_commander")).reply.text
    assert "EVACUATE" in status and "1/1 have it" in status, status
    assert "LOCKDOWN" not in status  # ended by its all-clear
    assert "Broadcast" in status  # the newest routine one, beside it
    await _procedure(say, "/allclear stb")
    status = (await say("/status", as_="police_commander")).reply.text
    assert "EVACUATE" not in status and "ALL CLEAR" in status, status
