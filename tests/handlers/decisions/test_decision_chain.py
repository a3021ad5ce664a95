"""The decision log kept as JESIP asks (issue 36 §7-9): a correction chain stays a chain,
a later rationale is filed with its decision, and a form step takes only its own answer."""

from __future__ import annotations

import io

from bot.domain.decision_log import Decision
from bot.runtime import console_for
from bot.store.decision_keys import DecisionLog


async def _log(core) -> list[Decision]:
    fx = await core.active_fixture()
    return list((await DecisionLog(core.store.gateway).read(fx.id)).entries)


async def test_a_superseded_decision_is_not_superseded_again_and_the_chain_shows(say, core):
    await say("/decision d=Open gate F why=Queue at gate E", as_="control")
    await say("/decision d=Open gate G why=F is the away exit supersedes=D-1", as_="control")
    r = await say("/decision d=Open gate H why=G is jammed supersedes=D-1", as_="control")
    assert not r.reply.ok and "D-1 is already superseded by D-2" in r.reply.text
    assert "\n" not in r.reply.text.split("Usage")[0].strip()
    assert len(await _log(core)) == 2  # nothing written
    r = await say("/decision supersedes D-1", as_="control")  # the guided correction too
    assert not r.reply.ok and "already superseded by D-2" in r.reply.text
    r = await say("/decision d=Open gate H why=G is jammed supersedes=D-2", as_="control")
    assert r.reply.ok
    text = (await say("/decisions", as_="control")).reply.text
    chain = "Chain: D-1 superseded by D-2 superseded by D-3"
    assert text.count(chain) == 3  # seen from every link


async def test_the_rationale_after_a_procedure_is_filed_as_that_decisions_rationale(say, core):
    ask = await say("/evacuate all fire in the east stand", as_="safety_officer")
    r = await say(ask.reply.buttons[0][0].command, as_="safety_officer")
    why = r.reply.buttons[-1][0].command
    await say(why + " fire alarm confirmed", as_="safety_officer")
    first, second = await _log(core)
    assert second.explains == 1 and second.kind == "rationale"  # not a decision of type other
    text = (await say("/decisions", as_="control")).reply.text
    assert "Rationale for D-1" in text and "Other" not in text


async def test_a_command_typed_in_the_middle_of_a_decision_form_does_not_become_its_options(
        core):
    out = io.StringIO()
    console = console_for(core, "safety_officer", stdout=out)
    for line in ("/decision Close gate B", "Crowd density at the away turnstiles", "/status",
                 "1"):
        await console.say(line)
    assert "is not a list of options" in out.getvalue()
    await console.say("1")  # now the None button of the question asked again
    await console.say("none")
    await console.say("yes")
    [d] = await _log(core)
    assert (d.decision, d.options) == ("Close gate B", "")


async def test_a_decision_keeps_when_taken_who_was_consulted_what_it_rested_on_and_review(
        say, core, clock):
    from datetime import timedelta

    from handlers import sweep_escalations

    r = await say("/decision d=Close gate C why=crush at the turnstiles taken=17:55 "
                  "consulted=police commander, ground safety officer "
                  "info=CCTV camera 12, gate C turnstile counts review=+30m", as_="safety_officer")
    assert r.reply.ok, r.reply.text
    [d] = await _log(core)
    assert d.taken is not None and d.taken.strftime("%H:%M") == "17:55" and d.at != d.taken
    assert d.consulted == "police commander, ground safety officer"
    assert d.information == "CCTV camera 12, gate C turnstile counts"
    text = (await say("/decisions", as_="control")).reply.text
    assert "Taken: 17:55 (logged 18:00)" in text and "Review by: 18:30" in text
    assert "Consulted: police commander" in text and "Information: CCTV camera 12" in text
    r = await say("/decision d=x why=y review=tomorrowish", as_="control")
    assert not r.reply.ok and "review= is a time" in r.reply.text and len(await _log(core)) == 1
    # the reminder, from the scheduler's sweep at the review time (the clock is the test's)
    assert await sweep_escalations(core, core.store, clock.now() + timedelta(minutes=29)) == []
    outs = await sweep_escalations(core, core.store, clock.now() + timedelta(minutes=30))
    assert {o.audience for o in outs} == {"command", "control"}
    assert all(o.reply.title == "⏰ Decision D-1 is due for review" for o in outs)
    assert await sweep_escalations(core, core.store, clock.now() + timedelta(minutes=31)) == []


async def test_a_superseded_decision_is_not_reminded_for_review(say, core, clock):
    from datetime import timedelta

    from handlers import sweep_escalations

    await say("/decision d=Close gate C why=crush review=+30m", as_="safety_officer")
    await say("/decision d=Reopen gate C why=cleared supersedes=D-1", as_="safety_officer")
    assert await sweep_escalations(core, core.store, clock.now() + timedelta(minutes=40)) == []
