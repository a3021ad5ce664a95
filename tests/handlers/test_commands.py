"""Every command's happy path and its refusals, through the core on a real Redis."""

from __future__ import annotations

import pytest

from bot.domain.ledger import recount


async def events(core, kind=None):
    fx = await core.active_fixture()
    evs = await core.store.events(fx.id)
    return [e for e in evs if kind is None or e.kind == kind]


async def test_one_line_report_logs_and_alerts_control(say, core):
    sent = []
    core.notifier.taps.append(lambda out: _append(sent, out))
    r = await say("/incident missile @stb_walkway s4 aff=away x40 coins thrown", as_="steward")
    assert r.reply.ok and r.reply.title == "Logged INC-1"
    (ev,) = await events(core, "incident.reported")
    assert ev.data["type"] == "missile" and ev.data["location"] == "stb_walkway"
    assert ev.data["severity"] == 4 and ev.data["people"] == "40"
    assert ev.phase == "pre"
    assert [o.audience for o in sent] == ["control", "command"]
    assert sent[0].ref == "INC-1" and any(b.command == "/ack 1" for b in sent[0].reply.buttons[0])


async def _append(lst, item):
    lst.append(item)


async def test_report_defaults_to_the_stewards_zone_and_type_severity(say, core):
    r = await say("/report flare", as_="steward")  # alias, type alias, no location
    assert r.reply.ok, r.reply.text
    (ev,) = await events(core, "incident.reported")
    assert ev.data["type"] == "pyro" and ev.data["location"] == "stb_upper"
    assert ev.data["severity"] == 3


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("/incident missle @stb_walkway", "Did you mean missile?"),
        ("/incident missile @stb_walkwy", "Did you mean @stb_walkway"),
        ("/incidnt missile", "Did you mean /incident?"),
        ("/incident", None),  # the guided form, not an error
        ("/ack", "Which incident?"),
        ("/ack seven", "not an incident id"),
        ("/ack 99", "No incident INC-99"),
    ],
)
async def test_typos_get_one_line_and_write_nothing(say, core, text, expect):
    r = await say(text, as_="control")
    if expect is None:
        assert r.reply.ok
    else:
        assert not r.reply.ok and expect in r.reply.text, r.reply.text
        assert "Traceback" not in r.reply.text
    assert await events(core, "incident.reported") == []


async def test_usage_line_follows_a_malformed_command(say):
    r = await say("/incident missle", as_="steward")
    assert r.reply.text.splitlines()[-1].startswith("Usage: /incident <type> @<location>")


async def test_lifecycle_with_skips_and_refusals(say, core):
    await say("/incident medical @bms_lower s3 fan collapsed", as_="steward")
    assert (await say("/dispatch 1 first aid team 2", as_="supervisor")).reply.ok
    r = await say("/ack 1", as_="control")  # going back is refused, not overwritten
    assert not r.reply.ok and "already dispatched" in r.reply.text
    assert (await say("/onscene 1", as_="supervisor")).reply.ok
    assert (await say("/resolve 1 taken to medical room", as_="control")).reply.ok
    r = await say("/resolve 1", as_="control")
    assert not r.reply.ok and "already closed" in r.reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "closed" and inc.marks["dispatched_by"] == "console:supervisor"
    rt = await core.facades.views.response_times(fx.id)
    assert rt["acknowledged"] == 1 and rt["closed"] == 1


async def test_reporter_is_told_when_acknowledged_and_closed(say, core):
    told = []
    core.notifier.taps.append(lambda out: _append(told, out))
    await say("/incident antisocial @stb_upper", as_="steward")
    await say("/ack 1", as_="supervisor")
    await say("/resolve 1 spoken to", as_="supervisor")
    personal = [o.reply.text for o in told if o.audience == "user:console:steward"]
    assert len(personal) == 2
    assert "acknowledged by Supervisor North" in personal[0]
    assert "closed" in personal[1] and "spoken to" in personal[1]


async def test_a_bare_status_or_outcome_word_is_taken_as_such(say, core):
    r = await say("/ban club_lifetime pending away", as_="police_liaison")
    assert r.reply.ok, r.reply.text
    r = await say("/arrest violent_disorder charged outside home", as_="police_liaison")
    assert r.reply.ok, r.reply.text
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    assert counts["ban:status:pending_court"] == 1 and counts["arr:total"] == 1
    [arrest] = [e for e in await core.store.events(fx.id) if e.kind == "arrest.recorded"]
    assert (arrest.data["outcome"], arrest.data["place"]) == ("charged", "outside")
    r = await say("/arrest violent_disorder charged Smith", as_="police_liaison")
    assert not r.reply.ok and "no names" in r.reply.text  # any other word: nothing stored


async def test_update_and_plain_text_go_to_the_latest_report(say, core):
    await say("/incident crowd_density @gate_a s4", as_="steward")
    r = await say("queue now backing onto the bridge", as_="steward")
    assert r.reply.ok and "Added to INC-1" in r.reply.text
    r = await say("/update 1 gates held", as_="control")
    assert r.reply.ok
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).updates == 2
    r = await say("/update 1", as_="control")
    assert not r.reply.ok


async def test_arrest_and_ban_counts_and_no_free_text(say, core):
    await say("/incident disorder @stb_walkway s5", as_="steward")
    r = await say("/arrest violent_disorder x3 inside away ref=MPS/1 inc=1", as_="police_liaison")
    assert r.reply.ok, r.reply.text
    assert "MPS/1" not in r.reply.text  # references never go into chat
    r = await say("/arrest vd John Smith", as_="police_liaison")
    assert not r.reply.ok and "no names" in r.reply.text
    r = await say("/ban lifetime x2 inc=1", as_="police_liaison")
    assert r.reply.ok, r.reply.text
    r = await say("/ban lifetime years=x", as_="police_liaison")
    assert not r.reply.ok
    r = await say("/arrest violent_disorder inside away inc=42", as_="police_liaison")
    assert not r.reply.ok and "INC-42" in r.reply.text
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    assert counts["arr:total"] == 3 and counts["arr:x:violent_disorder:inside:away"] == 3
    assert counts["ban:type:club_lifetime"] == 2
    assert (await core.store.incident(fx.id, 1)).arrests == 3


async def test_fixture_admin(say, core):
    r = await say("/fixture add Arsenal v Spurs 2027-03-14 16:30 cat=C ground=london_stadium",
                  as_="admin")
    assert r.reply.ok, r.reply.text
    assert "arsenal-spurs-20270314" in r.reply.text
    r = await say("/fixture add Arsenal v Spurs 2027-03-14 16:30", as_="admin")
    assert not r.reply.ok and "already exists" in r.reply.text
    r = await say("/fixture add Arsenal v Spurs 2027-02-30 16:30", as_="admin")
    assert not r.reply.ok and "not a date" in r.reply.text
    assert (await say("/fixture use arsenal-spurs-20270314 all", as_="admin")).reply.ok
    fx = await core.active_fixture()
    assert fx.category == "C" and fx.kickoff.hour == 16  # GMT in March before the change
    r = await say("/fixture kickoff 2027-03-28 12:30", as_="admin")  # BST from 28 March
    assert r.reply.ok
    fx = await core.active_fixture()
    assert fx.kickoff.hour == 11 and fx.kickoff.minute == 30
    assert (await say("/fixture category C-IRD new intelligence", as_="admin")).reply.ok
    assert (await core.active_fixture()).category == "C-IRD"
    r = await say("/fixture category Z", as_="admin")
    assert not r.reply.ok and "Unknown risk category" in r.reply.text
    r = await say("/fixtures", as_="viewer")
    assert "arsenal-spurs-20270314" in r.reply.text


async def test_phase_tags_later_events(say, core):
    assert (await say("/phase 2h", as_="control")).reply.ok
    await say("/incident pyro @away_upper", as_="steward")
    (ev,) = await events(core, "incident.reported")
    assert ev.phase == "second_half"
    r = await say("/phase extra_time", as_="control")
    assert not r.reply.ok


async def test_invite_and_join(core):
    from tests.conftest import Chat

    say = Chat(core)
    r = await say("/incident fire @ws_concourse", as_="newbie", platform="telegram")
    assert not r.reply.ok and "not registered" in r.reply.text
    r = await say("/invite steward", as_="control")
    assert not r.reply.ok and "not for your role" in r.reply.text  # invites are admin's
    r = await say("/invite steward", as_="admin")
    code = r.reply.text.split("/join ")[1].split()[0]
    r = await say(f"/join {code}", as_="newbie", platform="telegram")
    assert r.reply.ok and "Steward" in r.reply.text
    r = await say(f"/join {code}", as_="other", platform="telegram")
    assert not r.reply.ok  # one use only
    r = await say("/incident fire @ws_concourse s4 bin on fire", as_="newbie", platform="telegram")
    assert r.reply.ok, r.reply.text
    r = await say("/whoami", as_="newbie", platform="telegram")
    assert "Steward" in r.reply.text
    r = await say("/invite admin", as_="control")
    assert not r.reply.ok
    r = await say("/invite admin", as_="admin")
    assert r.reply.ok and "/join " in r.reply.text


async def test_help_fits_a_phone_and_lists_only_your_commands(say):
    r = await say("/help", as_="steward")
    lines = r.reply.lines()
    assert len(lines) <= 20
    assert any(line.startswith("/incident") for line in lines)
    assert not any(line.startswith("/arrest") for line in lines)
    r = await say("/help arrest", as_="steward")
    assert "not for your role" in r.reply.text and "Usage" not in r.reply.text
    r = await say("/help arrest", as_="police_liaison")
    assert "Usage: /arrest" in r.reply.text


async def test_group_chatter_is_ignored_but_commands_answer(say):
    assert await say("lovely weather", as_="steward", private=False) is None
    r = await say("/status", as_="control", private=False)
    assert r is not None and r.reply.ok


async def test_summary_and_status_agree_with_the_log(say, core):
    await say("/phase gates", as_="control")
    await say("/incident alcohol @gate_away s2", as_="steward")
    await say("/incident missile @seg_ne s4", as_="steward")
    await say("/ack 2", as_="control")
    await say("/phase second_half", as_="control")
    await say("/incident disorder @stb_walkway s5", as_="steward")
    await say("/resolve 1", as_="control")
    await say("/arrest throwing_missiles x2 outside home inc=2", as_="police_liaison")
    r = await say("/summary", as_="viewer")
    assert "Arrests: 2 (inside 0, outside 2; home 2, away 0)" in r.reply.text
    assert "Incidents: 3 (2 open)" in r.reply.text
    fx = await core.active_fixture()
    tally = recount(await core.store.events(fx.id))
    counts = await core.store.counts(fx.id)
    assert counts == dict(tally.counts)
    r = await say("/status", as_="police_commander")
    assert "Open: 2 (unacknowledged 1)" in r.reply.text
    first = r.reply.text.splitlines()[2]
    assert first.startswith("INC-3"), r.reply.text  # most severe first


async def test_fixture_notes_feed_the_briefing_and_intel_stays_with_command(say, core):
    r = await say("/fixture note gates Gate B opens 17:30 for away fans", as_="admin")
    assert r.reply.ok, r.reply.text
    await say("/fixture note intel away group planning to meet at Stratford", as_="admin")
    fx = await core.active_fixture()
    assert fx.notes["gates"] == "Gate B opens 17:30 for away fans"
    command = await say("/briefing", as_="police_commander")
    assert "Gate B opens 17:30" in command.reply.text
    assert "away group planning" in command.reply.text
    steward = await say("/briefing", as_="steward")
    assert "Gate B opens 17:30" in steward.reply.text
    assert "away group planning" not in steward.reply.text
    r = await say("/fixture note weather rain", as_="admin")
    assert not r.reply.ok and "Which note?" in r.reply.text


async def test_escalate_puts_the_incident_in_front_of_command(say, core):
    sent = []
    core.notifier.taps.append(lambda out: _append(sent, out))
    await say("/incident crowd_density @gate_a s3", as_="steward")
    r = await say("/escalate 1 queue crushing at the turnstiles", as_="steward")
    assert r.reply.ok and "escalated to the safety officer" in r.reply.text
    command = [o for o in sent if o.audience == "command"]
    assert command[-1].reply.title.startswith("⚠ Escalated: ")
    assert any(o.thread == "INC-1" and "queue crushing" in o.reply.text for o in sent)
    r = await say("/escalate 9", as_="steward")
    assert not r.reply.ok and "No incident INC-9" in r.reply.text


async def test_the_summary_lists_severity_worst_first_and_phases_in_match_order(say):
    for place in ("gate_away", "ws", "gate_a"):
        await say(f"/incident alcohol @{place} s2", as_="steward")
    await say("/incident disorder @stb_walkway s5", as_="steward")
    await say("/phase first_half", as_="control")
    await say("/incident pyro @away_upper s3", as_="steward")
    r = await say("/summary", as_="viewer")
    assert "by severity: S5 1, S3 1, S2 3" in r.reply.text, r.reply.text
    assert "by phase: Pre-match 4, First half 1" in r.reply.text  # in match order
