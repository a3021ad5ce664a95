"""An outbox that falls behind and keeps falling (messages taken and not going out) raises
the alarm once: a WARNING line, /healthz's outbox_lag_alarm, and one message to control;
once it catches up, one "recovered" of each. Nothing in between, however often it samples."""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Callable

import aiohttp
import pytest

from bot.core.dispatch import Core
from bot.domain.outbox_lag import OutboxLag
from bot.observe.endpoints import health_routes
from bot.observe.lag_alarm import lag_reply
from bot.runtime import lag_alarm
from bot.store.base import fx_prefix
from rigs.net import serving
from tests.support.held_control import HeldControl

STUCK_S = 120  # the oldest entry's age: written two minutes ago, never delivered


async def _stuck_outbox(core: Core) -> tuple[HeldControl, str, str]:
    """Control's chat (held), and an outbox entry written STUCK_S ago and never delivered:
    (control, its stream, its id)."""
    control = HeldControl("telegram")
    core.notifier.add_sink(control)
    fx = await core.facades.choices.active_fixture_id()
    assert fx
    stream = fx_prefix(fx) + "obx"
    stuck = f"{int(time.time() * 1000) - STUCK_S * 1000}-0"
    await core.store.gateway.r.xadd(stream, {"m": "{}"}, id=stuck)
    return control, stream, stuck


def _ticking() -> Callable[[], float]:
    """Wall time that moves a second on each reading: every sample sees the lag grow, however
    quickly the samples follow each other (real time rounded to the ms could read the same
    twice: the alarm was left down once in CI)."""
    ticks = itertools.count(time.time(), 1.0)
    return lambda: next(ticks)


async def _healthz(port: int) -> dict[str, object]:
    async with aiohttp.ClientSession() as http, \
            http.get(f"http://127.0.0.1:{port}/healthz") as resp:
        return json.loads(await resp.text())


async def test_a_growing_outbox_lag_is_told_once_and_its_recovery_once(
        core: Core, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "bot")
    control, stream, stuck = await _stuck_outbox(core)
    alarm = lag_alarm(core, wall=_ticking())
    routes = health_routes(core.store.gateway.ping, lambda: "leader", alarm.probe,
                           lag_alarm=lambda: alarm.raised)
    async with serving(routes) as port:
        assert (await _healthz(port))["outbox_lag_alarm"] is False
        for _ in range(4):  # sampled again and again while it grows: told once
            await alarm.check()
        body = await _healthz(port)
        assert body["outbox_lag_alarm"] is True and body["outbox_lag_s"] >= STUCK_S
        await core.store.gateway.r.xdel(stream, stuck)  # delivered at last
        for _ in range(3):
            await alarm.check()
        assert (await _healthz(port))["outbox_lag_alarm"] is False
    await core.notifier.drain()
    titles = [reply.title for _, reply in control.got]
    assert titles == [lag_reply(OutboxLag(STUCK_S, True)).title,
                      lag_reply(OutboxLag(0, False)).title]
    lines = [r.getMessage() for r in caplog.records if "outbox lag" in r.getMessage()]
    assert len(lines) == 2 and "growing" in lines[0] and "recovered" in lines[1]
    await core.notifier.close()


async def test_only_the_leading_replica_tells_control(
        core: Core, caplog: pytest.LogCaptureFixture) -> None:
    # every replica samples the same store-wide lag: the 40-club Saturday's three replicas
    # each told a flashpoint club's control; now the lease holder does, the others only log
    caplog.set_level(logging.WARNING, "bot")
    control, _, _ = await _stuck_outbox(core)
    follower = lag_alarm(core, lambda: False, _ticking())
    leader = lag_alarm(core, lambda: True, _ticking())
    for _ in range(3):
        await follower.check()
        await leader.check()
    await core.notifier.drain()
    assert follower.raised and leader.raised  # both say so in /healthz and the log
    assert [reply.title for _, reply in control.got] == [
        lag_reply(OutboxLag(STUCK_S, True)).title]  # control is told once
    assert sum("growing" in r.getMessage() for r in caplog.records) == 2
    await core.notifier.close()


async def test_an_outbox_that_keeps_delivering_behind_an_old_entry_raises_nothing(
        core: Core, caplog: pytest.LogCaptureFixture) -> None:
    # a flashpoint's actionable cards go to a Telegram group one every 3 s for minutes: the
    # oldest waits its turn, long past the limit, while the rest keep going out (the
    # 80-fixture Saturday told control "falling behind" at 47 s with nothing stuck)
    caplog.set_level(logging.WARNING, "bot")
    control, stream, _ = await _stuck_outbox(core)
    alarm = lag_alarm(core)
    for _ in range(4):
        await alarm.check()
        sent = await core.store.gateway.r.xadd(stream, {"m": "{}"})  # one more card ...
        await core.store.gateway.r.xdel(stream, sent)  # ... gone out (acknowledged, dropped)
    await core.notifier.drain()
    assert not alarm.raised
    assert control.got == []
    assert not [r for r in caplog.records if "outbox lag" in r.getMessage()]
    await core.notifier.close()
