"""Ingress on the clock (issue 35): the scheduler's tick checks the turnstiles' alerts even
when no batch comes at all (a stalled bank may send nothing), and the wall's ingress tile is
pushed to the screens when its figures change, with nothing logged (virtual clock)."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest_asyncio

from bot.runtime import make_scheduler
from bot.schedule.scheduler import Scheduler
from bot.web.access import Session
from bot.web.visibility import Viewer
from tests.support.ingress import pour
from tests.support.web import room  # noqa: F401  (the fixture)


@pytest_asyncio.fixture
async def ticking(core, clock):
    """The app's scheduler (every ticker as `matchday` registers them) on the test's clock."""
    app = SimpleNamespace(core=core, clock=clock, lease=None, settings=core.settings)
    scheduler = make_scheduler(app, live=False)  # type: ignore[arg-type]
    await scheduler.start()
    yield scheduler
    await scheduler.stop()


async def _tick(scheduler: Scheduler, clock, seconds: int) -> None:
    """Virtual seconds pass, the scheduler ticking each one."""
    for _ in range(seconds):
        clock.advance(timedelta(seconds=1))
        await scheduler.run_due(clock.now())


def _stalled(sent: list) -> list:
    return [o for o in sent if o.reply.title == "Turnstiles stalled" and o.audience == "control"]


async def test_a_bank_that_falls_silent_alerts_control_with_no_batch_at_all(core, clock,
                                                                             ticking):
    sent: list = []

    async def tap(out) -> None:
        sent.append(out)
    core.notifier.taps.append(tap)
    await pour(core, clock, "gate_e", 200, 3)  # counting, then nothing: no batch, no zeros
    await _tick(ticking, clock, 110)
    assert _stalled(sent) == []  # under two minutes: not yet
    await _tick(ticking, clock, 15)
    [o] = _stalled(sent)
    assert o.reply.text.startswith("Gate E turnstiles: the turnstile bank is STALLED")
    fx = await core.active_fixture()
    assert [e.data["alert"] for e in await core.store.events(fx.id)
            if e.kind == "ingress.alert"] == ["stalled"]


async def test_a_typed_tally_then_quiet_is_not_a_stalled_bank(core, clock, ticking, say):
    await pour(core, clock, "gate_e", 200, 1)
    sent: list = []

    async def tap(out) -> None:
        sent.append(out)
    core.notifier.taps.append(tap)
    r = await say("/ingress count 15m gate_a=600")
    assert r is not None and r.reply.ok, r.reply.text if r else None
    await _tick(ticking, clock, 200)  # the next tally is 15 minutes away: silence is normal
    assert [o for o in _stalled(sent) if "Gate A" in o.reply.text] == []


async def test_the_wall_tile_is_pushed_when_the_figures_change_with_nothing_logged(
        core, clock, ticking, room):  # noqa: F811
    fx = await core.active_fixture()
    feed = room.live.fixture_feed(fx.id)
    viewer = Viewer("console:control", "control", "Control", core.roles)
    q = await feed.subscribe(Session("sid", viewer, "csrf", 2**40))
    await pour(core, clock, "gate_away", 180, 2)
    logged = len(await core.store.events(fx.id))

    async def pushed() -> list[dict]:
        for _ in range(50):  # the push runs in the background: let it finish
            if feed._ingress is None or feed._ingress.done():
                break
            await feed._ingress
        out = []
        while not q.empty():
            item = q.get_nowait()
            if getattr(item, "kind", None) == "ingress":
                out.append(item.make(False))
        return out

    await _tick(ticking, clock, 1)
    [first] = await pushed()
    away = next(s for s in first["stands"] if s["zone"] == "away_upper")
    assert first["inside"] == 360 and away["rate"] > 0
    await _tick(ticking, clock, 60)  # nobody counted for a minute: the rate falls
    later = (await pushed())[-1]  # pushed as it fell, the newest last
    assert next(s for s in later["stands"] if s["zone"] == "away_upper")["rate"] < away["rate"]
    assert len(await core.store.events(fx.id)) == logged  # nothing was logged for it
    await ticking.run_due(clock.now())  # ticked again, the same second
    assert await pushed() == []  # the same figures: not pushed again
