"""/missing keeps names out even inside the description, and keeps what was typed about the
place beyond the zone it names (issue 36 §17)."""

from __future__ import annotations

from tests.support.lifecycle import record

SO = "safety_officer"


async def test_a_name_inside_the_description_is_refused_on_the_one_line_and_in_the_form(
        say, core):
    sent = record(core)
    for desc in ("boy called Tommy Smith, red coat", "red coat, her name is Lily Jones"):
        r = await say(f"/missing age=7 desc={desc} seen=gate c at=19:20", as_=SO)
        assert not r.reply.ok and "No name" in r.reply.text, r.reply.text
        assert "Tommy" not in str(sent) and "Lily" not in str(sent)
    await say("/missing", as_=SO)
    await say("7", as_=SO)
    r = await say("a boy called Tommy Smith in a red coat", as_=SO)
    assert not r.reply.ok and "No name" in r.reply.text
    assert r.reply.text.splitlines()[-1].startswith("Describe them")  # asked again
    assert not [o for o in sent if "MISSING" in o.reply.title]
    r = await say("red coat, called for help near the toilets", as_=SO)  # no name in it
    assert r.reply.ok and r.reply.text.startswith("Where were they last seen?")


async def test_the_guided_form_keeps_near_kiosk_4_in_the_place(say, core):
    await say("/missing", as_=SO)
    await say("7", as_=SO)
    await say("red coat, blue hat", as_=SO)
    r = await say("gate c near kiosk 4", as_=SO)
    assert r.reply.text.startswith("When were they last seen?"), r.reply.text
    r = await say("19:20", as_=SO)
    assert "Last seen: Gate C turnstiles (gate c near kiosk 4) at 19:20." in r.reply.text
    r = await say("/missing age=7 desc=red coat seen=gate c near kiosk 4 at=19:20", as_=SO)
    assert "(gate c near kiosk 4)" in str([o.reply.text for o in r.outbound])
