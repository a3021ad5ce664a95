"""Counts that tell the truth: a procedure's or broadcast's denominator is the rota (the
stewards planned for the targeted zones), not the linked accounts, and the planned stewards
the bot cannot reach are named (tabard, rota name, post) before the confirm, in the reply
and in /status, so control can radio them."""

from __future__ import annotations

from bot.core.dispatch import Core
from tests.conftest import Chat

ROTA = ("/deploy import\nsteward id,name,post\n14,A. Smith,stb_250_gangway\n"
        "15,B. Jones,stb_256_gangway\n9,C. Patel,stb_105_vom\n21,D. Okafor,gate_b_lane_1")


async def _rota(say: Chat) -> None:
    """Four stewards on the rota; only tabard 14 (the console steward) is on the bot."""
    assert (await say(ROTA, as_="admin")).reply.ok
    assert (await say("/tabard 14", as_="steward")).reply.ok


async def test_evacuate_names_the_rota_stewards_the_bot_cannot_reach(
        say: Chat, core: Core) -> None:
    await _rota(say)
    ask = await say("/evacuate STB upper clear the walkway", as_="safety_officer")
    assert ask.reply.title == "Confirm EVACUATE · Sir Trevor Brooking Stand upper tier " \
                              "(blocks 250-262)?", ask.reply.title
    assert "2 stewards planned in" in ask.reply.text
    assert "1 not on the bot — radio them: 15 B. Jones (Block 256 gangway)" in ask.reply.text
    sent = await say("yes", as_="safety_officer")
    assert "sent to 1 of 2 stewards planned" in sent.reply.text, sent.reply.text
    assert "15 B. Jones (Block 256 gangway)" in sent.reply.text
    status = (await say("/status", as_="police_commander")).reply.text
    assert "EVACUATE" in status and "0/2 have it" in status, status
    assert "1 not on the bot, radio them: 15 B. Jones (Block 256 gangway)" in status


async def test_roll_call_counts_the_rota_not_the_linked_accounts(say: Chat) -> None:
    await _rota(say)
    r = await say("/rollcall stb", as_="control")
    assert "sent to 2 of 4 stewards planned" in r.reply.text, r.reply.text
    assert "15 B. Jones (Block 256 gangway), 9 C. Patel (Block 105 vomitory)" in r.reply.text


async def test_a_procedure_goes_to_the_command_and_police_chats_with_who_to_radio(
        say: Chat) -> None:
    await _rota(say)
    await say("/evacuate stb upper", as_="safety_officer")
    sent = await say("yes", as_="safety_officer")
    copies = {o.audience: o.reply.text for o in sent.outbound
              if not o.audience.startswith("user:")}
    assert set(copies) == {"control", "command", "police"}, set(copies)
    assert all("15 B. Jones (Block 256 gangway)" in t for t in copies.values())
    await say("/allclear stb upper", as_="safety_officer")
    done = await say("yes", as_="safety_officer")
    assert {o.audience for o in done.outbound} >= {"control", "command", "police"}


async def test_stand_down_counts_the_rota_and_names_who_to_radio(say: Chat) -> None:
    await _rota(say)
    assert (await say("/onpost stb_250_gangway", as_="steward")).reply.ok
    r = await say("/standdown all", as_="control")
    assert r.reply.text.startswith("Stood down 1 of 4 stewards planned at"), r.reply.text
    assert "radio them: 15 B. Jones (Block 256 gangway), 9 C. Patel (Block 105 vomitory), " \
           "21 D. Okafor (Gate B search lane 1)" in r.reply.text


async def test_briefing_sign_off_counts_the_rota(say: Chat) -> None:
    await _rota(say)
    assert (await say("/briefing send", as_="safety_officer")).reply.ok
    assert (await say("/briefed", as_="steward")).reply.ok
    r = await say("/signoff", as_="safety_officer")
    # on the bot: the steward (tabard 14), the supervisor and the Telegram steward at gate B;
    # on the rota but not the bot: 15, 9 and 21
    assert "Signed off: 1/6 stewards (17%)" in r.reply.text, r.reply.text
    assert "brief them in person: 15 B. Jones (Block 256 gangway)" in r.reply.text
    status = (await say("/status", as_="safety_officer")).reply.text
    assert "1/6 stewards signed off (17%)" in status, status


async def test_status_counts_a_stand_wide_procedure_per_zone(say: Chat) -> None:
    await _rota(say)
    await say("/lockdown stb hold the doors", as_="safety_officer")
    await say("yes", as_="safety_officer")
    await say("/ihaveit", as_="steward")
    status = (await say("/status", as_="police_commander")).reply.text
    assert "LOCKDOWN" in status and "1/4 have it" in status, status
    assert "STB upper 250-262: 1/2 have it, 1 not reached" in status
    assert "STB lower 101-112: 0/1 have it, 1 not reached" in status
    assert "STB (north stand): 0/1 have it" in status


async def test_a_zone_with_nobody_on_the_bot_still_gets_its_procedure_to_control(
        say: Chat) -> None:
    assert (await say("/deploy 40 gate_a_fire E. Novak", as_="control")).reply.ok
    ask = await say("/evacuate gate a", as_="safety_officer")
    assert "It goes to 0 stewards and control" in ask.reply.text, ask.reply.text
    assert "1 steward planned in Gate A: 1 not on the bot — radio them: 40 E. Novak " \
           "(Gate A fire point)" in ask.reply.text
    sent = await say("yes", as_="safety_officer")
    assert sent.reply.ok and "EVACUATE sent to 0 of 1 steward planned (Gate A)" \
        in sent.reply.text, sent.reply.text
    assert {o.audience for o in sent.outbound} == {"control", "command", "police"}


async def test_the_automatic_roll_call_counts_the_rota_and_names_who_to_radio(
        say: Chat, core: Core, clock) -> None:
    """The scheduled roll call (handlers/stewarding/rollcall_timer.py) counts like /rollcall."""
    from bot.domain.briefing.briefing_cadence import Slot
    from handlers.stewarding.rollcall_timer import send_rollcall

    await _rota(say)
    fx = await core.active_fixture()
    outs = await send_rollcall(core, core.store, core.facades, fx, Slot(fx.id, "rollcall", "T-90",
                                                                        clock.now()),
                               "on time", "test", clock.now())
    control = next(o.reply.text for o in outs if o.audience == "control")
    assert "radio them: 15 B. Jones (Block 256 gangway), 9 C. Patel" in control, control
    status = (await say("/status", as_="control")).reply.text
    assert "Roll call 18:00: 0/8 posts on" in status, status  # the plan: every post
