"""Photos for one incident sent to a paced Telegram group as one album keep the outbox's
promise: every entry in the album is marked delivered exactly once (in flight before, all
delivered after), and an album a crash left in doubt is found item by item on recovery
instead of being sent again."""

from __future__ import annotations

import asyncio

from bot.core.dispatch import Core
from bot.delivery.ratelimit import RateLimiter, SharedRateLimiter
from bot.settings import Settings
from bot.store.windows import Windows
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.albums import (  # noqa: F401 (fixtures)
    SLOW,
    evidence,
    photos,
    shown,
)
from tests.support.control_group import ARCHIVE, GROUP, control_group
from tests.support.delivery import (
    durable,
)
from tests.support.photo_burst import BOUND_S, PHOTOS, HeldTime, burst, paced
from tests.support.photo_burst import shown as burst_shown

# A group paced to one message every 3 s: 8 photos are more than it takes in 5 s.


async def test_an_album_marks_every_outbox_entry_delivered_once(core: Core, settings: Settings):
    time = HeldTime()
    fake = FakeTelegram(enforce_limits=True, clock=time.clock)
    await fake.start()
    try:
        core.notifier.limiter = RateLimiter(SLOW, clock=time.clock, sleep=time.sleep)
        core.notifier.clock = time.clock
        async with control_group(core, settings, fake) as (adapter, fx, outbox):
            photos(fake, 8)
            await outbox.add(fx, [evidence(fx, k) for k in range(1, 9)])
            reader = await durable(core)
            try:
                for _ in range(500):  # every entry handed to the chat's queue (real Redis time)
                    if len(reader._left) == 8 or not await outbox.backlog(fx):
                        break
                    await asyncio.sleep(0.01)
                time.go.set()
                await reader.drain()
                assert shown(fake.calls) == [f"AgACalbum{k}" for k in range(1, 9)]  # each once
                assert [c for c in fake.calls if c.method == "sendMediaGroup"]
                assert fake.too_many == 0, fake.too_many_at
                assert (await outbox.backlog(fx))[0] == 0
                entries = await outbox.claim_all(fx, "someone-else")
                assert entries == []  # acknowledged: nothing left for another replica to send
            finally:
                await reader.stop()
    finally:
        await fake.stop()


async def test_an_album_left_in_doubt_is_found_not_sent_twice(core: Core, settings: Settings,
                                                            fake: FakeTelegram):
    async with control_group(core, settings, fake, ARCHIVE) as (adapter, fx, outbox):
        photos(fake, 3)
        await outbox.add(fx, [evidence(fx, k) for k in range(1, 4)])
        read = await outbox.read(fx, "dead-replica", 10)
        floor = fake.message_update(100000001, "/status", chat_id=int(GROUP))["message"]
        # The dead process marked the album's entries in flight, Telegram took the album, and
        # the process died before the delivered marks were written.
        await outbox.flying([(fx, e) for e, _ in read], f"telegram:{GROUP}", floor["message_id"])
        await adapter.sink.send_album(GROUP, [o.reply for _, o in read])
        reader = await durable(core)
        try:
            await reader.drain()
            assert shown(fake.calls) == ["AgACalbum1", "AgACalbum2", "AgACalbum3"]  # not again
            assert fake.calls_of("forwardMessage")
            assert (await outbox.backlog(fx))[0] == 0
        finally:
            await reader.stop()


async def test_eight_photos_reach_a_smoothed_control_group_within_15_s(
        core: Core, settings: Settings):
    """As the app runs it: the limits shared in Redis, with the live-delivery smoothing (a
    group gets at most 3 messages in any 9 s). An album is one arrival for that smoothing,
    while Telegram's own limits count its items (the fake answers 429 when they break)."""
    async with paced(core, settings,
                     lambda time: SharedRateLimiter(Windows(core.store.gateway), clock=time.clock,
                                                    sleep=time.sleep, monotonic=time.clock)
                     ) as (fake, adapter, time):
        took = await burst(core, fake, adapter, time)
        print(f"8th photo visible to smoothed Telegram control after {took:.1f} s")
        assert took <= BOUND_S, (took, fake.describe(40))
        assert [p[0] for p in burst_shown(fake.calls)] == \
            [f"AgACburst{k}" for k in range(1, PHOTOS + 1)]  # each once, in order
        assert fake.too_many == 0, fake.too_many_at
