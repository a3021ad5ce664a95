"""The decision log (issue 25 §1): guided and one-line entries, timed and attributed,
corrections as new linked entries, rationale asked for decisions taken through /methane,
command roles only, and /decisions in order."""

from __future__ import annotations

from bot.domain.decision_log import Decision
from bot.store.decision_keys import DecisionLog
from tests.support.lifecycle import log_of

ONE_LINE = ("/decision d=Hold the away fans in the ground for 15 minutes after full time "
            "why=Home fans gathering on the Sir Trevor Brooking walkway options=Open both "
            "exits at once; hold the home end inc=INC-1")


async def _log(core) -> list[Decision]:
    fx = await core.active_fixture()
    return list((await DecisionLog(core.store.gateway).read(fx.id)).entries)


async def test_one_line_decision_is_timed_attributed_and_linked(say, core, clock):
    await say("/incident disorder @stb walkway fans gathering", as_="steward")
    r = await say(ONE_LINE, as_="safety_officer")
    assert r.reply.ok and r.reply.title == "Decision D-1", r.reply.text
    [d] = await _log(core)
    assert d.decision.startswith("Hold the away fans") and d.rationale.startswith("Home fans")
    assert d.options == "Open both exits at once; hold the home end"
    assert d.incidents == (1,) and d.by == "console:safety_officer"
    assert d.name == "Safety Officer" and d.role == "safety_officer"
    assert d.at == clock.now().replace(microsecond=0) and d.phase == "pre"
    ev = (await log_of(core, "decision.logged"))[0]  # in the signed, append-only log too
    assert ev.data["id"] == "D-1" and ev.data["incidents"] == ["INC-1"]


async def test_a_decision_without_rationale_or_with_a_missing_incident_writes_nothing(say, core):
    r = await say("/decision d=Close gate C", as_="control")
    assert not r.reply.ok and "rationale" in r.reply.text
    r = await say("/decision d=Close gate C why=crush risk inc=INC-9", as_="control")
    assert not r.reply.ok and "No incident INC-9" in r.reply.text
    r = await say("/decision d=x why=y supersedes=D-7", as_="control")
    assert not r.reply.ok and "No decision D-7" in r.reply.text
    assert await _log(core) == [] and await log_of(core, "decision.logged") == []


async def test_guided_decision_asks_each_part_then_records_once(say, core):
    r = await say("/decision", as_="police_commander")
    assert r.reply.text == "What did you decide?"
    r = await say("Deploy the TSG to the walkway", as_="police_commander")  # plain text
    assert r.reply.text.startswith("Why?")
    r = await say("Missiles thrown across the segregation line", as_="police_commander")
    assert "options" in r.reply.text
    none = r.reply.buttons[0][0].command
    r = await say(none, as_="police_commander")
    assert "incidents" in r.reply.text
    r = await say("none", as_="police_commander")
    assert r.reply.title == "Record this decision?" and await _log(core) == []
    record = r.reply.buttons[0][0].command
    r = await say(record, as_="police_commander")
    assert r.reply.title == "Decision D-1"
    again = await say(record, as_="police_commander")  # a second tap records nothing more
    assert not again.reply.ok
    [d] = await _log(core)
    assert (d.decision, d.options, d.incidents, d.role) == (
        "Deploy the TSG to the walkway", "", (), "police_commander")


async def test_a_guided_decision_is_recorded_by_typing_yes_as_well_as_by_the_button(say, core):
    await say("/decision", as_="safety_officer")
    for answer in ("Close gate B for ten minutes", "Crowd density at the away turnstiles",
                   "none", "none"):
        r = await say(answer, as_="safety_officer")
    assert r.reply.title == "Record this decision?"
    r = await say("maybe", as_="safety_officer")  # neither: asked again, nothing written
    assert r.reply.title == "Record this decision?" and "Reply yes" in r.reply.text
    assert await _log(core) == []
    r = await say("yes", as_="safety_officer")
    assert r.reply.title == "Decision D-1"
    [d] = await _log(core)
    assert (d.decision, d.rationale) == ("Close gate B for ten minutes",
                                         "Crowd density at the away turnstiles")


async def test_typing_cancel_at_the_last_step_writes_nothing(say, core):
    await say("/decision Close gate B", as_="safety_officer")
    await say("Crowd density", as_="safety_officer")
    await say("none", as_="safety_officer")
    r = await say("none", as_="safety_officer")
    assert r.reply.title == "Record this decision?"
    r = await say("cancel", as_="safety_officer")
    assert "not recorded" in r.reply.text and await _log(core) == []
    assert "Nothing is waiting" in (await say("yes", as_="safety_officer")).reply.text


async def test_a_correction_is_a_new_entry_and_the_old_one_stays(say, core):
    await say("/decision d=Open gate F why=Queue at gate E", as_="control")
    r = await say("/decision d=Open gate G, not F why=Gate F is the away exit "
                  "supersedes=D-1", as_="control")
    assert r.reply.title == "Decision D-2" and "supersedes D-1" in r.reply.text
    first, second = await _log(core)
    assert first.decision == "Open gate F" and second.supersedes == 1
    r = await say("/decisions", as_="safety_officer")
    text = r.reply.text
    assert text.index("D-1 ") < text.index("D-2 ")
    assert "Open gate F" in text and "SUPERSEDED by D-2 (kept as it was)" in text


async def test_methane_declared_is_a_decision_with_its_rationale_asked_for(say, core):
    r = await say("/methane m=yes e=stb walkway t=crush h=surge a=gate A ramp n=12 "
                  "s=police and LAS on scene", as_="safety_officer")
    assert "Logged as decision D-1: what was the rationale?" in r.reply.text
    [d] = await _log(core)
    assert d.decision == "Major incident declared (INC-1)" and d.rationale == ""
    assert d.source == "methane INC-1" and d.incidents == (1,)
    assert "(rationale not yet given)" in (await say("/decisions", as_="control")).reply.text
    why = r.reply.buttons[-1][0].command
    assert why == "/decision why D-1"
    r = await say(why, as_="safety_officer")
    assert r.reply.text.startswith("Why?")
    await say("Casualties on the stairs, more expected", as_="safety_officer")
    r = await say("none", as_="safety_officer")
    r = await say(r.reply.buttons[0][0].command, as_="safety_officer")
    assert r.reply.title == "Decision D-2"
    first, second = await _log(core)
    assert first.rationale == "" and second.explains == 1  # D-1 itself is never rewritten
    text = (await say("/decisions", as_="control")).reply.text
    assert "Why: Casualties on the stairs" in text and "not yet given" not in text


async def test_only_command_roles_log_or_read_decisions(say, core):
    for role in ("steward", "supervisor", "police_liaison", "viewer"):
        for cmd in ("/decision d=x why=y", "/decisions"):
            r = await say(cmd, as_=role)
            assert not r.reply.ok, (role, cmd)
    assert await _log(core) == []
    r = await say("/methane m=yes e=stb walkway t=crush h=surge a=gate A n=2 s=LAS",
                  as_="supervisor")  # a supervisor's METHANE is not a command decision
    assert r.reply.ok and "decision" not in r.reply.text
    assert await _log(core) == []


async def test_a_redelivered_decision_is_logged_once(say, core):
    await say("/decision d=Stop the sale of alcohol why=Drunk entry at gate C",
              as_="safety_officer", dedupe="tg:77")
    r = await say("/decision d=Stop the sale of alcohol why=Drunk entry at gate C",
                  as_="safety_officer", dedupe="tg:77")
    assert r.reply.title == "Decision D-1"
    assert len(await _log(core)) == 1 and len(await log_of(core, "decision.logged")) == 1


async def test_handing_to_police_is_a_decision_and_why_can_follow_on_one_line(say, core):
    await say("/incident disorder @stb walkway fighting", as_="steward")
    r = await say("/handover INC-1 TSG deploying", as_="police_commander")
    assert "Logged as decision D-1: what was the rationale?" in r.reply.text
    r = await say("/decision why D-1 Disorder beyond the stewards; police primacy",
                  as_="police_commander")
    assert r.reply.title == "Decision D-2" and "rationale for D-1" in r.reply.text
    first, second = await _log(core)
    assert first.decision == "Hand INC-1 to police: TSG deploying" and first.incidents == (1,)
    assert second.explains == 1 and second.rationale.startswith("Disorder beyond")
    await say("/incident disorder @gate_c scuffle", as_="steward")
    await say("/handover INC-2", as_="police_liaison")  # no decision right: no entry
    assert len(await _log(core)) == 2


async def test_a_long_log_comes_in_pages_that_fit_a_chat_message(say, core):
    for i in range(1, 31):
        await say(f"/decision d=Decision number {i} {'about the walkway ' * 8}"
                  f"why=Because {'the crowd was building ' * 8}", as_="control")
    first = (await say("/decisions", as_="control")).reply
    assert len(first.text) < 4096 and "D-1 " in first.text and "D-30 " not in first.text
    more = [b.command for row in first.buttons for b in row]
    assert "/decisions page 2" in more
    pages = [first.text]
    n = 2
    while True:
        r = (await say(f"/decisions page {n}", as_="control")).reply
        if not r.ok:
            break
        pages.append(r.text)
        n += 1
    assert "D-30 " in pages[-1] and all(len(p) < 4096 for p in pages)


async def test_a_procedure_is_a_decision_in_the_same_write_with_its_rationale_asked_for(
        say, core):
    ask = await say("/evacuate all fire in the east stand", as_="safety_officer")
    assert await _log(core) == []  # nothing is decided before the confirm
    confirm = ask.reply.buttons[0][0].command
    r = await say(confirm, as_="safety_officer", dedupe="tg:cb:1")
    assert "Logged as decision D-1: what was the rationale?" in r.reply.text
    [d] = await _log(core)
    pid = confirm.split()[-1]
    assert (d.kind, d.source, d.rationale, d.role) == (
        "procedure", f"evacuate {pid}", "", "safety_officer")
    assert d.decision.startswith("EVACUATE") and "fire in the east stand" in d.decision
    # the procedure and its decision are one write: a redelivered confirm adds neither,
    # and a second tap on the confirm (another update) is refused as already sent
    await say(confirm, as_="safety_officer", dedupe="tg:cb:1")
    again = await say(confirm, as_="safety_officer")
    assert "already sent" in again.reply.text
    assert len(await _log(core)) == 1 and len(await log_of(core, "stewards.procedure")) == 1
    kinds = [e.kind for e in await log_of(core)]
    i = kinds.index("stewards.procedure")
    assert kinds[i + 1] == "decision.logged"  # logged together, in the procedure's write
    why = r.reply.buttons[-1][0].command
    await say(why + " fire alarm confirmed, smoke on the east concourse", as_="safety_officer")
    first, second = await _log(core)
    assert second.explains == 1 and first.rationale == ""  # D-1 is never rewritten
    assert "Why: fire alarm confirmed" in (await say("/decisions", as_="control")).reply.text


async def test_a_stoppage_gate_or_police_support_decision_has_its_type(say, core):
    r = await say("/decision", as_="safety_officer")  # the form offers the types
    labels = [b.label for row in r.reply.buttons for b in row]
    assert {"Match stoppage", "Closing or opening a gate", "Calling police support"} <= \
        set(labels)
    tap = next(b.command for row in r.reply.buttons for b in row if b.label == "Match stoppage")
    r = await say(tap, as_="safety_officer")
    assert r.reply.text == "Type: Match stoppage.\nWhat did you decide?"
    await say("Suspend play: crowd on the pitch perimeter", as_="safety_officer")
    await say("Pitch incursion risk from the away end", as_="safety_officer")
    r = await say("none", as_="safety_officer")
    r = await say("none", as_="safety_officer")
    assert "Type: Match stoppage" in r.reply.text
    await say(r.reply.buttons[0][0].command, as_="safety_officer")
    await say("/decision d=Close gate C why=crush at the turnstiles type=gate", as_="control")
    await say("/decision d=Ask for the TSG why=missiles at the away end type=police",
              as_="police_commander")
    assert [d.kind for d in await _log(core)] == ["stoppage", "gate", "police_support"]
    r = await say("/decision d=x why=y type=banana", as_="control")
    assert not r.reply.ok and "not a decision type" in r.reply.text
    text = (await say("/decisions", as_="control")).reply.text
    assert "· Match stoppage" in text and "· Calling police support" in text

