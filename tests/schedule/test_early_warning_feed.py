"""Early warning at run time: two replicas following the log warn control and command once
(bot/schedule/early_warning_feed.py; the rules themselves: tests/domain/test_early_warning.py)."""

from __future__ import annotations

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
