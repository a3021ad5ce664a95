"""Eight photos from one steward to a paced Telegram control group, on a held clock: the
rig the photo-burst test (an in-process limiter) and the album test (the limits shared in
Redis) both run, and what control was shown."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.settings import Settings
from rigs.fakes.telegram_api import Call, FakeTelegram
from rigs.telegram_rig import telegram_on
from tests.support.fake_time import (
    FakeTime,
)
from tests.support.telegram import (
    CONTROL,
    STEWARD,
    sends_to,
)

PHOTOS = 8
# The 8th photo was visible to control after 68 s on this clock with two messages a photo
# (45 s in the field); one message a photo brought it to 16 s, albums while the group is
# paced to ~1 s. The goal is 15 s (Slack: 9 s).
BOUND_S = 15.0


class HeldTime(FakeTime):
    """A clock that moves only when the delivery layer waits, and (while held) not before the
    test lets it: the steward's photos all come in while control's group is paced, as they
    do in real time (a few milliseconds each against a second per message)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()

    async def sleep(self, s: float) -> None:
        # Concurrent waits (control's group, the steward's chat) overlap: each wakes at its
        # own target, and the clock is the latest target reached, never their sum.
        target = self.now + max(s, 0.0)
        await self.go.wait()
        await asyncio.sleep(0)
        self.now = max(self.now, target)


@asynccontextmanager
async def paced(core: Core, settings: Settings, limiter: Callable[[HeldTime], Any]
                ) -> AsyncIterator[tuple[FakeTelegram, TelegramAdapter, HeldTime]]:
    """The real adapter against a fake that answers 429 when a limit breaks, both on one
    injected clock that moves only when the delivery layer waits; the notifier paced by
    `limiter(time)`."""
    time = HeldTime()
    time.go.set()
    fake = FakeTelegram(enforce_limits=True, clock=time.clock)
    await fake.start()
    core.notifier.limiter = limiter(time)
    core.notifier.clock = time.clock
    adapter = telegram_on(core, settings, fake, poll_timeout=1)
    await adapter.start()
    try:
        yield fake, adapter, time
    finally:
        await adapter.stop()
        await fake.stop()


def to_control(calls: list[Call]) -> list[Call]:
    """Successful calls to the control group."""
    return [c for c in calls if c.ok and c.params.get("chat_id") == CONTROL]


def shown(calls: list[Call]) -> list[tuple[str, str, float]]:
    """Each photo control was shown: (file id, caption, when), alone or in an album."""
    out = []
    for c in to_control(calls):
        if c.method == "sendPhoto":
            out.append((str(c.params["photo"]), str(c.params.get("caption", "")), c.at))
        elif c.method == "sendMediaGroup":
            out += [(str(m["media"]), str(m.get("caption", "")), c.at) for m in c.params["media"]]
    return out


async def burst(core: Core, fake: FakeTelegram, adapter: TelegramAdapter,
                time: HeldTime) -> float:
    """The steward logs INC-1, then sends PHOTOS photos while control's group is paced;
    seconds on the held clock until the last is visible to control."""
    await fake.push(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await adapter.drain()
    t0 = time.now
    time.go.clear()  # the group is paced from here: the photos queue up meanwhile
    for k in range(1, PHOTOS + 1):
        await fake.push(fake.message_update(STEWARD, photo=f"AgACburst{k}",
                                            caption=f"thrower {k}"))
    fx = await core.active_fixture()
    assert fx is not None
    for _ in range(1000):  # every photo is in the log (Redis round trips, in real time)
        if len([e for e in await core.store.events(fx.id)
                if e.kind == "incident.evidence"]) == PHOTOS:
            break
        await asyncio.sleep(0.01)
    time.go.set()
    last = f"AgACburst{PHOTOS}"
    [eighth] = await fake.wait_for(lambda c: [x for x in shown(c) if x[0] == last], timeout=60)
    await adapter.drain()
    return eighth[2] - t0
