"""/arrest and /ban speak the domain's vocabulary (#31 item 4): a bare command or `help` lists
the Home Office offence categories, places and sides (and the ban types); labels typed with
spaces are keys; a missing inside/outside or home/away is asked for with buttons, never
recorded as a default."""

from __future__ import annotations

from bot.domain.messages import Result
from bot.domain.vocab import BAN_TYPES, OFFENCES, PLACES, SUPPORTER_SIDES

DFO = "police_liaison"


def tap(r: Result, label: str) -> str:
    """The command of the button with this label."""
    return next(b.command for row in r.reply.buttons for b in row if b.label == label)


async def _arrests(core) -> list[dict]:
    fx = await core.active_fixture()
    return [e.data for e in await core.store.events(fx.id) if e.kind == "arrest.recorded"]


async def test_a_bare_arrest_or_its_help_lists_offences_places_and_sides(say):
    for text in ("/arrest", "/arrest help"):
        r = await say(text, as_=DFO)
        assert r.reply.ok, r.reply.text
        for key in [*OFFENCES.keys(), *PLACES.keys(), *SUPPORTER_SIDES.keys()]:
            assert key in r.reply.text, (text, key)
        buttons = [b.command for row in r.reply.buttons for b in row]
        assert buttons == [f"/arrest {k}" for k in OFFENCES.keys()]  # one tap per category


async def test_an_offence_typed_with_spaces_is_the_offence_not_free_text(say, core):
    r = await say("/arrest pitch incursion outside away", as_=DFO)
    assert r.reply.ok and "Entering the pitch" in r.reply.text, r.reply.text
    r = await say("/arrest possession of pyrotechnics x2 inside away", as_=DFO)
    assert r.reply.ok and "2 arrests: Possession of pyrotechnics" in r.reply.text, r.reply.text
    assert [(a["offence"], a["count"]) for a in await _arrests(core)] == [
        ("entering_the_pitch", 1), ("possession_pyrotechnics", 2)]


async def test_a_missing_place_and_side_are_asked_for_never_defaulted(say, core):
    r = await say("/arrest pitch_incursion ref=MPS/CU/7", as_=DFO)
    assert r.reply.ok and "inside or outside the ground?" in r.reply.text, r.reply.text
    assert await _arrests(core) == []  # nothing recorded with a guessed place or side
    r = await say(tap(r, "Outside the ground"), as_=DFO)
    assert "home, away or neutral supporter?" in r.reply.text and await _arrests(core) == []
    r = await say("John Smith", as_=DFO)  # a name typed as the answer: refused, still asked
    assert not r.reply.ok and "no names" in r.reply.text and "home, away" in r.reply.text
    away = tap(r, "Away")
    r = await say(away, as_=DFO)
    assert r.reply.ok and r.reply.text.startswith("Recorded 1 arrest: Entering the pitch, "
                                                  "outside the ground, away supporter")
    [arrest] = await _arrests(core)
    assert (arrest["place"], arrest["side"], arrest["ref_recorded"]) == ("outside", "away", True)
    r = await say(away, as_=DFO)
    assert not r.reply.ok and len(await _arrests(core)) == 1  # a second tap records nothing


async def test_a_typed_answer_and_cancel_work_like_the_buttons(say, core):
    await say("/arrest violent disorder home", as_=DFO)
    r = await say("inside", as_=DFO)
    assert r.reply.ok and "inside the ground, home supporter" in r.reply.text, r.reply.text
    await say("/arrest vd", as_=DFO)
    r = await say("cancel", as_=DFO)
    assert r.reply.ok and "not recorded" in r.reply.text
    assert [(a["place"], a["side"]) for a in await _arrests(core)] == [("inside", "home")]


async def test_ban_types_are_listed_and_typed_with_spaces(say, core):
    for text in ("/ban", "/ban football_banning_order"):
        r = await say(text, as_=DFO)
        assert not r.reply.ok
        assert all(k in r.reply.text for k in BAN_TYPES.keys()), r.reply.text
    r = await say("/ban club lifetime x2 away", as_=DFO)
    assert r.reply.ok and "2 × Club ban, lifetime" in r.reply.text, r.reply.text
