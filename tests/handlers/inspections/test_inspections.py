"""Pre-event inspections (issue 25 §2): the ground's checklist from config, ticked by the
role it is assigned to, a failure raising an incident and showing red, and the "ready to
open turnstiles" gate with the Safety Officer's override logged as a decision."""

from __future__ import annotations

from bot.domain.messages import Attachment, ReplyVia
from bot.store.decision_keys import DecisionLog
from bot.store.inspection_keys import Inspections
from tests.support.lifecycle import log_of

CRITICAL = {"walkway_netting": "supervisor", "exits_gates": "steward",
            "missiles_removed": "steward", "pa_tested": "control",
            "turnstile_counters": "control"}


async def test_each_role_gets_buttons_for_its_own_items(say):
    r = await say("/inspect", as_="steward")
    assert "NOT READY to open turnstiles: 5 safety-critical item(s) not passed." in r.reply.text
    assert "○ TO DO (due from" in r.reply.text and "Medical room" in r.reply.text
    cmds = [b.command for row in r.reply.buttons for b in row]
    assert cmds == ["/inspect exits_gates pass", "/inspect exits_gates fail",
                    "/inspect missiles_removed pass", "/inspect missiles_removed fail"]
    r = await say("/inspect walkway_netting pass", as_="steward")
    assert not r.reply.ok and "for a supervisor (or above)" in r.reply.text
    r = await say("/inspect", as_="safety_officer")  # above every assignee: all of them
    assert len(r.reply.buttons) == 6


async def test_a_pass_keeps_its_photo_and_a_failure_raises_an_incident(say, core):
    photo = Attachment("photo", file_id="AgAD-netting", platform="telegram")
    r = await say("/inspect exits_gates pass", as_="steward", attachments=(photo,))
    assert r.reply.text.startswith("✔ PASSED: Exit gates unlocked, staffed and clear with 1 photo.")
    r = await say("/inspect walkway_netting fail netting cut at the top of stairway 4",
                  as_="supervisor")
    assert "✖ FAILED: Segregation netting, Sir Trevor Brooking walkway. Raised INC-1." \
        in r.reply.text
    assert "send it with the caption /inspect walkway_netting fail" in r.reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert (inc.type, inc.location, inc.severity) == ("structural", "stb_walkway", 3)
    assert "netting cut at the top of stairway 4" in inc.description
    checks = await Inspections(core.store.gateway).read(fx.id)
    assert [(c.item, c.outcome, c.photos, c.incident) for c in checks] == [
        ("exits_gates", "pass", ("AgAD-netting",), None),
        ("walkway_netting", "fail", (), 1)]
    listing = (await say("/inspect", as_="control")).reply.text
    assert "✖ FAILED" in listing and "INC-1" in listing  # red shown in words, not colour
    assert [e.data["item"] for e in await log_of(core, "inspection.checked")] == [
        "exits_gates", "walkway_netting"]


async def test_turnstiles_wait_for_every_critical_item_or_a_logged_override(say, core):
    await say("/inspect walkway_netting fail", as_="supervisor")
    ready = (await say("/inspect ready", as_="control")).reply.text
    # what failed is told apart from what nobody has checked yet
    assert "✖ FAILED: Segregation netting" in ready and "○ TO DO: Exit gates" in ready
    r = await say("/timing turnstiles_open", as_="control")
    assert not r.reply.ok
    assert "Not ready to open turnstiles: 5 safety-critical items" in r.reply.text
    r = await say("/phase gates", as_="control")
    assert not r.reply.ok and (await core.active_fixture()).phase == "pre"
    r = await say("/inspect override walkway is closed off, away fans use gate F route",
                  as_="control")
    assert not r.reply.ok  # the Safety Officer's call only
    r = await say("/inspect override walkway is closed off, away fans use gate F route",
                  as_="safety_officer")
    assert r.reply.title == "Decision D-1"
    fx = await core.active_fixture()
    [d] = (await DecisionLog(core.store.gateway).read(fx.id)).entries
    assert d.source == "inspect override" and "Segregation netting" in d.decision
    assert d.rationale.startswith("walkway is closed off") and d.role == "safety_officer"
    r = await say("/inspect ready", as_="control")
    assert r.reply.text.startswith("OPENING ON OVERRIDE (decision D-1)")
    r = await say("/timing turnstiles_open", as_="control")
    assert r.reply.ok and (await core.active_fixture()).phase == "gates"


async def test_passing_every_critical_item_makes_the_ground_ready(say, core):
    for item, role in CRITICAL.items():
        await say(f"/inspect {item} pass", as_=role)
    r = await say("/inspect ready", as_="viewer")
    assert not r.reply.ok  # viewers read the pack, not the checklist
    r = await say("/inspect ready", as_="control")
    assert r.reply.text == "READY to open turnstiles: every safety-critical item passed."
    assert (await say("/phase gates", as_="control")).reply.ok
    r = await say("/inspect nets pass", as_="control")
    assert not r.reply.ok and "No inspection item 'nets'" in r.reply.text


async def test_a_check_before_its_window_does_not_count(say, core):
    r = await say("/fixture add Leyton Orient v Barnet 2027-03-06 15:00", as_="admin")
    fx_id = next(f.id for f in await core.store.fixtures() if "barnet" in f.id)
    await say(f"/fixture use {fx_id} all", as_="admin")
    r = await say("/inspect pa_tested pass", as_="control")
    assert not r.reply.ok
    assert "PA and voice alarm tested in every zone is due from Thu 04 Mar 15:00 (48 h " \
        "before kick-off)" in r.reply.text
    assert await core.store.gateway.r.xlen(f"md:{{{fx_id}}}:insp") == 0


async def test_a_redelivered_failure_is_one_write_answered_once(core):
    """The failed tick, the incident it raises and the inspector's answer are one write: the
    same tap delivered twice (a retry, or to both replicas) logs one incident, one tick and
    queues one answer, rendered from the incident at send time."""
    from bot.domain.messages import Command
    from bot.store.base import fx_prefix
    from bot.store.outbox import Outbox, decode

    core.notifier.outbox = Outbox(core.store.gateway)
    tap = Command(platform="console", chat="supervisor", user="supervisor",
                  text="/inspect walkway_netting fail netting cut", dedupe_key="tg:upd:9",
                  reply_via=ReplyVia())
    first = await core.handle(tap)
    again = await core.handle(tap)
    assert first is not None and again is not None and first.queued and again.queued
    assert "Raised INC-1." in first.reply.text and "Raised INC-1." in again.reply.text
    fx = await core.active_fixture()
    assert [e.data["id"] for e in await log_of(core, "incident.reported")] == ["INC-1"]
    [ev] = await log_of(core, "inspection.checked")
    assert ev.data["incident"] == "INC-1"
    assert [(c.item, c.incident) for c in await Inspections(core.store.gateway).read(fx.id)] == [
        ("walkway_netting", 1)]
    outs = [decode(f["m"]) for _, f in await core.store.gateway.r.xrange(fx_prefix(fx.id) + "obx")]
    mine = [o for o in outs if o.audience == "user:console:supervisor"]
    assert [(o.live.view, o.live.n) for o in mine if o.live] == [("raised", 1)] and \
        len(mine) == 1
    shown = await core.notifier.views(fx.id, [mine[0].live])
    assert shown[mine[0].live].text == ("✖ FAILED: Segregation netting, Sir Trevor Brooking "
                                        "walkway. Raised INC-1; control has it.\nNOT READY to "
                                        "open turnstiles: a safety-critical item failed. Pass "
                                        "it with /inspect, or the Safety Officer opens on "
                                        "override.")


async def test_only_a_safety_critical_failure_says_the_turnstiles_wait(core):
    """The inspector's answer on a chat (rendered from the incident at send time) says NOT
    READY for a failed safety-critical item, and not for the medical room, which is not."""
    from bot.domain.messages import Command
    from bot.store.base import fx_prefix
    from bot.store.outbox import Outbox, decode

    core.notifier.outbox = Outbox(core.store.gateway)
    for k, item in enumerate(("medical_room", "walkway_netting")):
        await core.handle(Command(platform="console", chat="supervisor", user="supervisor",
                                  text=f"/inspect {item} fail", dedupe_key=f"tg:upd:{k}",
                                  reply_via=ReplyVia()))
    fx = await core.active_fixture()
    outs = [decode(f["m"]) for _, f in await core.store.gateway.r.xrange(fx_prefix(fx.id) + "obx")]
    refs = [o.live for o in outs if o.audience == "user:console:supervisor" and o.live]
    shown = await core.notifier.views(fx.id, refs)
    texts = {ref.n: shown[ref].text for ref in refs}
    assert "Medical room" in texts[1] and "NOT READY" not in texts[1]
    assert "Segregation netting" in texts[2] and "NOT READY to open turnstiles" in texts[2]
