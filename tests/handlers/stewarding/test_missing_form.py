"""The guided /missing form (age, description, last seen place and time, then a confirm):
the same alert the one-line command sends, never a name, one send for a double tap, nothing
for a cancel, one line for an expired form."""

from __future__ import annotations

from datetime import timedelta

from bot.domain.messages import Outbound, Result
from tests.conftest import START
from tests.support.lifecycle import log_of, record

ONE_LINE = "/missing age=7 desc=red coat, blue hat, fair hair seen=gate c at=19:20"
SO = "safety_officer"


def tap(r: Result, label: str) -> str:
    """The command of the button with this label."""
    return next(b.command for row in r.reply.buttons for b in row if b.label == label)


def alerts(sent: list[Outbound], mid: str) -> list[tuple[str, str, str]]:
    """(audience, title, text) of every copy of the alert, its id made neutral."""
    return sorted((o.audience, o.reply.title.replace(mid, "M-id"), o.reply.text.replace(mid, ""))
                  for o in sent if "MISSING" in o.reply.title)


async def _to_confirm(say) -> Result:
    r = await say("/missing", as_=SO)
    assert r.reply.text == "How old? (years)" and r.reply.title == "Missing person · 1 of 4"
    r = await say("7", as_=SO)
    assert r.reply.text.startswith("Describe them")
    r = await say("red coat, blue hat, fair hair", as_=SO)
    assert r.reply.text.startswith("Where were they last seen?")
    r = await say(tap(r, "Gate C turnstiles"), as_=SO)
    assert r.reply.text.startswith("When were they last seen?")
    return await say("19:20", as_=SO)


async def test_the_guided_form_sends_what_the_one_line_command_sends(say, core):
    sent = record(core)
    one = await say(ONE_LINE, as_=SO)
    mid_one = one.reply.title.split()[-1]
    by_line = alerts(sent, mid_one)
    assert by_line and sent
    sent.clear()
    r = await _to_confirm(say)
    assert r.reply.title == "Send this missing-person alert?"
    send = tap(r, "Send to supervisors and exits")
    mid = "M-" + send.split()[2]
    assert f"🔎 MISSING CHILD {mid} · supervisors and exits" in r.reply.text
    assert "Age 7. red coat, blue hat, fair hair\nLast seen: Gate C turnstiles at 19:20." \
        in r.reply.text
    assert alerts(sent, mid) == []  # nothing goes before the tap
    done = await say(send, as_=SO)
    assert done.reply.ok and done.reply.title == f"MISSING {mid}", done.reply.text
    assert f"Police are told at 18:15 unless /found {mid}" in done.reply.text
    assert alerts(sent, mid) == by_line  # same recipients, title and text
    search = await core.facades.stewarding.search((await core.active_fixture()).id, mid)
    assert search == {"search": "open", "who": "child"}


async def test_a_name_in_the_description_is_refused_and_the_form_stays_there(say, core):
    sent = record(core)
    await say("/missing", as_=SO)
    await say("9", as_=SO)
    r = await say("name=Sam red coat", as_=SO)
    assert not r.reply.ok and r.reply.text.startswith("No name: it would go to every steward")
    assert r.reply.text.endswith("Describe them: clothing, hair, height. Not their name.")
    r = await say("red coat, about 130cm", as_=SO)  # still the description step
    assert r.reply.text.startswith("Where were they last seen?")
    assert "Sam" not in str([o.reply for o in sent])


async def test_a_bad_age_is_asked_again_in_one_line(say):
    await say("/missing", as_=SO)
    for bad in ("seven", "130", "-3"):
        r = await say(bad, as_=SO)
        assert not r.reply.ok
        assert r.reply.text == (f"'{bad}' is not an age: type the years as a number, 0 to 120."
                                "\nHow old? (years)")
    r = await say("7 years", as_=SO)
    assert r.reply.ok and r.reply.text.startswith("Describe them")


async def test_details_given_on_the_line_are_kept_and_the_rest_asked(say, clock):
    r = await say("/missing age=70 desc=grey anorak, walking stick", as_=SO)
    assert r.reply.text.startswith("Where were they last seen?")
    r = await say("the moon", as_=SO)
    assert not r.reply.ok and "No place at London Stadium called 'the moon'" in r.reply.text
    r = await say("gate c", as_=SO)
    clock.set(START + timedelta(minutes=3))
    r = await say(tap(r, "Just now"), as_=SO)
    assert "MISSING VULNERABLE PERSON" in r.reply.text
    assert "Last seen: Gate C turnstiles at 18:03." in r.reply.text


async def test_cancel_sends_and_writes_nothing(say, core):
    sent = record(core)
    r = await _to_confirm(say)
    send = tap(r, "Send to supervisors and exits")
    r = await say(tap(r, "Cancel"), as_=SO)
    assert r.reply.text == "Missing-person alert cancelled; nothing was sent."
    r = await say(send, as_=SO)  # the confirm of the cancelled form
    assert not r.reply.ok and r.reply.text.startswith("This missing-person form has expired")
    assert not [o for o in sent if "MISSING" in o.reply.title]
    assert await log_of(core, "stewards.procedure") == []


async def test_tapping_send_twice_or_a_redelivered_tap_sends_once(say, core):
    sent = record(core)
    r = await _to_confirm(say)
    send = tap(r, "Send to supervisors and exits")
    first = await say(send, as_=SO, dedupe="tg:cb:9")
    again = await say(send, as_=SO, dedupe="tg:cb:9")  # the same tap, redelivered
    twice = await say(send, as_=SO, dedupe="tg:cb:10")  # a second tap
    mid = "M-" + send.split()[2]
    assert first.reply.title == f"MISSING {mid}"
    assert again.reply.text == twice.reply.text == f"Already sent as {mid}; see /status for " \
        "who has it."
    events = await log_of(core, "stewards.procedure")
    assert [e.data["id"] for e in events] == [mid]
    copies = [o for o in sent if "MISSING" in o.reply.title]
    assert len(copies) == len({o.audience for o in copies})  # each recipient once


async def test_an_expired_or_unknown_form_answers_one_line(say):
    r = await say("/missing step abc123 send", as_=SO)
    assert not r.reply.ok and r.reply.text == ("This missing-person form has expired. "
                                               "Send /missing to start again.")
    r = await say("/missing step abc123 seen gate_c", as_=SO)
    assert r.reply.text.startswith("This missing-person form has expired")


async def test_typing_yes_at_the_confirm_sends_it_once(say, core):
    sent = record(core)
    r = await _to_confirm(say)
    mid = "M-" + tap(r, "Send to supervisors and exits").split()[2]
    r = await say("hold on", as_=SO)  # neither yes nor cancel: asked again, nothing sent
    assert not r.reply.ok and "reply yes" in r.reply.text and alerts(sent, mid) == []
    done = await say("yes", as_=SO)
    assert done.reply.ok and done.reply.title == f"MISSING {mid}", done.reply.text
    assert alerts(sent, mid)
