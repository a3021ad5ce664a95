"""Photos for one incident sent to a paced Telegram group as one album keep the outbox's
promise: every entry in the album is marked delivered exactly once (in flight before, all
delivered after), and an album a crash left in doubt is found item by item on recovery
instead of being sent again."""

from __future__ import annotations

import asyncio

from bot.core.dispatch import Core
from bot.delivery.ratelimit import Limit, RateLimiter, SharedRateLimiter
from bot.domain.messages import Attachment, Outbound, Reply
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.store.outbox import Outbox
from bot.store.windows import Windows
from rigs.fakes.telegram_api import Call, FakeTelegram
from tests.adapters.telegram.test_telegram_adapter import STEWARD, sends_to
from tests.adapters.telegram.test_telegram_photo_burst import BOUND_S, PHOTOS, HeldTime
from tests.adapters.telegram.test_telegram_photo_burst import shown as burst_shown
from tests.delivery.test_delivery import durable, tg_settings

GROUP = "-1001000000001"
ARCHIVE = "-1009999999999"
# A group paced to one message every 3 s: 8 photos are more than it takes in 5 s.
SLOW = {"telegram": (Limit(1, 3.0, "chat"), Limit(20, 60.0, "group"),
                     Limit(30, 1.0, "platform"))}


def photos(fake: FakeTelegram, n: int) -> None:
    """A steward's photos the fake knows, as their file ids are what control is shown."""
    for k in range(1, n + 1):
        fake.message_update(100000001, photo=f"AgACalbum{k}")


def evidence(fx: str, k: int) -> Outbound:
    photo = Attachment("photo", file_id=f"AgACalbum{k}", platform="telegram")
    return Outbound("control", Reply(f"Evidence on INC-61 from Sam: 📷 photo — shot {k}",
                                     media=[photo]), fixture=fx, thread="INC-61")


def shown(calls: list[Call]) -> list[str]:
    """The file ids of the photos the group was shown, alone or in albums."""
    out: list[str] = []
    for c in calls:
        if not c.ok or str(c.params.get("chat_id")) != GROUP:
            continue
        if c.method == "sendPhoto":
            out.append(str(c.params["photo"]))
        elif c.method == "sendMediaGroup":
            out += [str(m["media"]) for m in c.params["media"]]
    return out


async def test_an_album_marks_every_outbox_entry_delivered_once(core: Core, settings: Settings):
    time = HeldTime()
    fake = FakeTelegram(enforce_limits=True, clock=time.clock)
    await fake.start()
    core.notifier.channels = {"control": {"telegram": [GROUP]}}
    core.notifier.limiter = RateLimiter(SLOW, clock=time.clock, sleep=time.sleep)
    core.notifier.clock = time.clock
    adapter = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    outbox = Outbox(core.store.gateway)
    await outbox.ensure_group(fx)
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
        await adapter.stop()
        await fake.stop()


async def test_an_album_left_in_doubt_is_found_not_sent_twice(core: Core, settings: Settings,
                                                            fake: FakeTelegram):
    core.notifier.channels = {"control": {"telegram": [GROUP]}}
    conf = tg_settings(settings, fake).model_copy(update={"telegram_archive_chat": ARCHIVE})
    adapter = telegram_for(core, conf, poll_timeout=1)
    await adapter.start()
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    outbox = Outbox(core.store.gateway)
    await outbox.ensure_group(fx)
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
        await adapter.stop()


async def test_eight_photos_reach_a_smoothed_control_group_within_15_s(
        core: Core, settings: Settings):
    """As the app runs it: the limits shared in Redis, with the live-delivery smoothing (a
    group gets at most 3 messages in any 9 s). An album is one arrival for that smoothing,
    while Telegram's own limits count its items (the fake answers 429 when they break)."""
    time = HeldTime()
    time.go.set()
    fake = FakeTelegram(enforce_limits=True, clock=time.clock)
    await fake.start()
    core.notifier.limiter = SharedRateLimiter(Windows(core.store.gateway), clock=time.clock,
                                              sleep=time.sleep, monotonic=time.clock)
    core.notifier.clock = time.clock
    adapter = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    try:
        await fake.push(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 glass"))
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
        [eighth] = await fake.wait_for(
            lambda c: [x for x in burst_shown(c) if x[0] == last], timeout=60)
        await adapter.drain()
        took = eighth[2] - t0
        print(f"8th photo visible to smoothed Telegram control after {took:.1f} s")
        assert took <= BOUND_S, (took, fake.describe(40))
        assert [p[0] for p in burst_shown(fake.calls)] == \
            [f"AgACburst{k}" for k in range(1, PHOTOS + 1)]  # each once, in order
        assert fake.too_many == 0, fake.too_many_at
    finally:
        await adapter.stop()
        await fake.stop()
