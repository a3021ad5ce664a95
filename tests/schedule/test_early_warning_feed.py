"""Early warning at run time: two replicas following the log warn control and command once
(bot/schedule/early_warning_feed.py; the rules themselves: tests/domain/test_early_warning.py)."""

from __future__ import annotations

from datetime import timedelta

from bot.runtime import early_warning_for


async def test_control_and_command_are_warned_once_and_it_is_logged(say, core) -> None:
    sent = []

    async def tap(out) -> None:
        sent.append(out)
    core.notifier.taps.append(tap)
    replicas = [early_warning_for(core), early_warning_for(core)]  # two replicas follow the log
    for r in replicas:
        assert await r.sweep() == []  # they start from now
    await say("/incident missile @seg_ne s4 aff=away coins thrown", as_="steward")
    await say("/incident missile @stb_walkway s4 aff=home bottles back", as_="steward",
              dedupe="second")
    assert [w.zone for w in await replicas[0].sweep()] == ["seg_ne"]
    assert await replicas[1].sweep() == []  # the other replica found it logged
    fx = await core.active_fixture()
    logged = [e for e in await core.store.events(fx.id) if e.kind == "fixture.early_warning"]
    assert len(logged) == 1 and logged[0].data["text"].startswith("Early warning — ")
    warned = [o for o in sent if o.reply.title == "Early warning"]
    assert sorted(o.audience for o in warned) == ["command", "control"]


async def test_reports_merged_into_an_incident_elsewhere_warn_where_they_were_seen(
        say, core, clock) -> None:
    """Issue #35's night: every report joins INC at the Bobby Moore concourse, yet the
    warning is at gate E, with its evidence and what to do, minutes before any crush; the
    area calming down on the fixture's clock clears it."""
    sent = []

    async def tap(out) -> None:
        sent.append(out)
    core.notifier.taps.append(tap)
    warnings = early_warning_for(core)
    await warnings.sweep()
    first = await say("/incident crowd_density @bms_concourse s2 busy by the bars",
                      as_="steward")
    assert first.reply.title.startswith("Logged")
    clock.advance(timedelta(minutes=1))
    text = "/incident crowd_density @gate_e s3 x120 crowd pressure, people climbing the barriers"
    joined = await say(text, as_="steward", dedupe="gate-1")
    assert joined.reply.title.startswith("Added to")  # merged into the concourse's incident
    await say(text, as_="steward", dedupe="gate-1")  # delivered again: one report
    clock.advance(timedelta(seconds=40))
    await say("/incident crowd_density @gate_e s3 pushing at the turnstiles", as_="steward")
    [w] = await warnings.sweep()
    assert w.zone == "gate_e"
    fx = await core.active_fixture()
    [logged] = [e for e in await core.store.events(fx.id) if e.kind == "fixture.early_warning"]
    ev = logged.data["evidence"]
    assert [(e["zone"], e["ref"], e["people"]) for e in ev if e["zone"] == "gate_e"] == \
        [("gate_e", "INC-1", 120), ("gate_e", "INC-1", 0)]
    assert logged.data["action"].startswith("Slow entry at Gate E")
    [msg] = [o for o in sent if o.reply.title == "Early warning" and o.audience == "control"]
    assert "Suggested: Slow entry at Gate E" in msg.reply.text
    assert msg.reply.buttons[0][0].command == "/warnings dismiss gate_e"
    clock.advance(timedelta(minutes=5))
    assert await warnings.sweep() == []
    assert not [e for e in await core.store.events(fx.id)
                if e.kind == "fixture.early_warning_cleared"]  # still standing
    clock.advance(timedelta(minutes=10))  # virtual time: a drill sees it clear too
    await warnings.sweep()
    [cleared] = [e for e in await core.store.events(fx.id)
                 if e.kind == "fixture.early_warning_cleared"]
    assert cleared.data["zone"] == "gate_e" and cleared.data["why"] == "cleared"


async def test_control_dismisses_a_warning_and_a_steward_cannot(say, core, clock) -> None:
    warnings = early_warning_for(core)
    await warnings.sweep()
    for t in ("crush at the gate", "people can't move"):
        await say(f"/incident crowd_density @gate_c s3 {t}", as_="steward")
        clock.advance(timedelta(seconds=30))
    [w] = await warnings.sweep()
    listed = await say("/warnings", as_="control")
    assert listed.reply.buttons[0][0].command == "/warnings dismiss gate_c"
    refused = await say("/warnings dismiss gate_c", as_="steward")
    assert not refused.reply.ok
    done = await say("/warnings dismiss gate c", as_="control")
    assert done.reply.title == "Early warning dismissed"
    fx = await core.active_fixture()
    [d] = [e for e in await core.store.events(fx.id)
           if e.kind == "fixture.early_warning_cleared"]
    assert d.data["why"] == "dismissed" and d.by.endswith("control")
    await warnings.sweep()
    assert warnings.watches[fx.id].active == {}  # every replica's watch lets it go
    again = await say("/warnings dismiss gate_c", as_="control")
    assert not again.reply.ok and "No early warning standing" in again.reply.text
    assert (await say("/warnings dismiss nowhere", as_="control")).reply.text.startswith(
        "Unknown place")
