"""A message Telegram will never take (a 400 other than a chat move, a 403) does not stall its
chat: it is tried once, a photo's text alone (the facts) goes in its place, the outbox entry
is marked done (not retried, not in doubt after a crash) and the chat's next messages go at
once. Before, a 400 "wrong file identifier" was retried "until it answers" and control's
later photos never arrived. Time is the fake's and the limiter's injected clock."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from bot.core.dispatch import Core
from bot.delivery.ratelimit import RateLimiter
from bot.domain.messages import Attachment, Outbound, Reply
from bot.settings import Settings
from bot.store.outbox import Outbox
from rigs.fakes.telegram_api import Call, FakeTelegram
from tests.support.albums import (
    SLOW,
    photos,
)
from tests.support.albums import (
    evidence as album_item,
)
from tests.support.albums import (
    shown as album_shown,
)
from tests.support.cards import card
from tests.support.control_group import GROUP, control_group
from tests.support.delivery import (
    durable,
)
from tests.support.fake_time import (
    FakeTime,
)
from tests.support.photo_burst import HeldTime

STEWARD = 100000001
BAD = "AgACnever-seen"  # a file id Telegram does not know (another bot's, or a typo)
GOOD = "AgACgood"
LINE = "Evidence on INC-61 from Sam: 📷 photo"  # what the bad photo's caption says


def evidence(fx: str, file_id: str, n: int = 61) -> Outbound:
    photo = Attachment("photo", file_id=file_id, platform="telegram")
    return Outbound("control", Reply(f"Evidence on INC-{n} from Sam: 📷 photo", media=[photo]),
                    fixture=fx, thread=f"INC-{n}")


def to_group(calls: list[Call], method: str) -> list[Call]:
    """Calls of a method to the control group, refused ones too."""
    return [c for c in calls if c.method == method and str(c.params.get("chat_id")) == GROUP]


@asynccontextmanager
async def on_virtual_time(core: Core, settings: Settings
                          ) -> AsyncIterator[tuple[FakeTelegram, FakeTime, str, Outbox]]:
    """Control as a Telegram group on a fake enforcing Telegram's limits, the fake and the
    delivery layer on one clock that moves only when delivery waits."""
    time = FakeTime()
    fake = FakeTelegram(enforce_limits=True, clock=time.clock)
    await fake.start()
    core.notifier.limiter = RateLimiter(clock=time.clock, sleep=time.sleep)
    core.notifier.clock = time.clock
    try:
        async with control_group(core, settings, fake) as (_, fx, outbox):
            yield fake, time, fx, outbox
    finally:
        await fake.stop()


async def test_a_photo_telegram_refuses_leaves_its_text_and_the_chat_moves_on(
        core: Core, settings: Settings, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.WARNING)
    async with on_virtual_time(core, settings) as (fake, time, fx, outbox):
        fake.message_update(STEWARD, photo=GOOD)  # a steward's photo: Telegram knows its id
        await outbox.add(fx, [evidence(fx, BAD), card(62, fixture=fx), evidence(fx, GOOD, 62)])
        start = time.now
        reader = await durable(core)
        try:
            # Before: the bad photo was retried for ever and these never came (a bound
            # on waiting, not on time: the figures below are on the injected clock).
            shown = await fake.wait_for(lambda calls: [
                c for c in to_group(calls, "sendPhoto") if c.ok and c.params["photo"] == GOOD],
                timeout=15)
            await asyncio.wait_for(reader.drain(), 15)
        finally:
            await reader.stop()
        took = shown[0].at - start
        print(f"the photo after a refused one reached control after {took:.1f} s (virtual)")
        assert took <= 5.0, fake.describe()
        assert fake.too_many == 0, fake.too_many_at  # the refusal counted, the next spaced
        bad = [c for c in to_group(fake.calls, "sendPhoto") if c.params["photo"] == BAD]
        assert len(bad) == 1 and not bad[0].ok  # tried once, answered 400, never again
        texts = [str(c.params["text"]) for c in to_group(fake.calls, "sendMessage") if c.ok]
        assert sum(LINE in t for t in texts) == 1  # its facts, once, without the photo
        assert sum("INC-62" in t for t in texts) == 1  # the next card went
        assert (await outbox.backlog(fx))[0] == 0  # every entry done
        assert await outbox.claim_all(fx, "another-replica") == []  # nothing left in doubt
        warned = [r for r in caplog.records if "refused" in r.getMessage()]
        assert warned and all(r.levelno == logging.WARNING for r in warned)
        assert "wrong file identifier" in warned[0].getMessage().lower()
        assert not [r for r in caplog.records if "Evidence on" in r.getMessage()]  # ids only


async def test_a_chat_telegram_cannot_reach_drops_the_message_without_retrying(
        core: Core, settings: Settings, caplog: pytest.LogCaptureFixture):
    """A 403 (the steward blocked the bot) is the chat gone: their message is dropped with a
    warning and its entry done; a photo to a group Telegram says does not exist is tried
    once, and its text not sent after it (it cannot arrive either)."""
    caplog.set_level(logging.WARNING)
    async with on_virtual_time(core, settings) as (fake, time, fx, outbox):
        fake.fail("sendMessage", code=403, description="Forbidden: bot was blocked by the user",
                  retry_after=None)
        fake.forget(int(GROUP))
        dm = f"user:telegram:{STEWARD}"
        await outbox.add(fx, [Outbound(dm, Reply("Logged INC-7"), fixture=fx),
                              Outbound(dm, Reply("Logged INC-8"), fixture=fx),
                              evidence(fx, GOOD)])
        reader = await durable(core)
        try:
            await asyncio.wait_for(reader.drain(), 15)
        finally:
            await reader.stop()
        to_steward = [c for c in fake.calls_of("sendMessage", ok_only=False)
                      if c.params.get("chat_id") == STEWARD]
        assert [(c.ok, c.params["text"]) for c in to_steward] == \
            [(False, "Logged INC-7"), (True, "Logged INC-8")]  # once each; the next goes
        assert len(to_group(fake.calls, "sendPhoto")) == 1
        assert to_group(fake.calls, "sendMessage") == []  # no text after a missing chat
        assert (await outbox.backlog(fx))[0] == 0
        assert await outbox.claim_all(fx, "another-replica") == []
        reasons = " ".join(r.getMessage() for r in caplog.records
                           if r.levelno == logging.WARNING)
        assert "blocked by the user" in reasons and "chat not found" in reasons.lower()


async def test_an_album_with_a_photo_telegram_refuses_goes_item_by_item(
        core: Core, settings: Settings):
    """One unknown file id makes Telegram refuse the whole album: each photo then goes
    alone, the bad one as its text, and every outbox entry is done."""
    time = HeldTime()
    fake = FakeTelegram(enforce_limits=True, clock=time.clock)
    await fake.start()
    try:
        core.notifier.limiter = RateLimiter(SLOW, clock=time.clock, sleep=time.sleep)
        core.notifier.clock = time.clock
        async with control_group(core, settings, fake) as (_, fx, outbox):
            photos(fake, 4)
            items = [album_item(fx, k) for k in range(1, 5)]
            bad = album_item(fx, 3)
            bad.reply.media[0] = Attachment("photo", file_id=BAD, platform="telegram")
            items[2] = bad
            await outbox.add(fx, items)
            reader = await durable(core)
            try:
                for _ in range(500):  # every entry queued before time moves (real Redis time)
                    if len(reader._left) == 4 or not await outbox.backlog(fx):
                        break
                    await asyncio.sleep(0.01)
                time.go.set()
                await asyncio.wait_for(reader.drain(), 15)
            finally:
                await reader.stop()
        refused = [c for c in to_group(fake.calls, "sendMediaGroup") if not c.ok]
        assert len(refused) == 1  # the album, tried once
        assert album_shown(fake.calls) == ["AgACalbum1", "AgACalbum2", "AgACalbum4"]
        texts = [str(c.params["text"]) for c in to_group(fake.calls, "sendMessage") if c.ok]
        assert sum("shot 3" in t for t in texts) == 1  # the refused photo's facts, once
        assert (await outbox.backlog(fx))[0] == 0
        assert fake.too_many == 0, fake.too_many_at
    finally:
        await fake.stop()


async def test_evidence_telegram_refuses_under_its_line_leaves_the_line_once(
        core: Core, settings: Settings):
    """Two items of evidence go as a line with the media under it: a refused file id leaves
    the line, once (before, each retry posted the line again)."""
    async with on_virtual_time(core, settings) as (fake, time, fx, outbox):
        fake.message_update(STEWARD, photo=GOOD)
        shots = [Attachment("photo", file_id=BAD, platform="telegram"),
                 Attachment("photo", file_id=GOOD, platform="telegram")]
        await outbox.add(fx, [Outbound("control", Reply("Evidence on INC-63 from Sam: 2 photos",
                                                        media=shots), fixture=fx),
                              card(64, fixture=fx)])
        reader = await durable(core)
        try:
            await asyncio.wait_for(reader.drain(), 15)
        finally:
            await reader.stop()
        texts = [str(c.params["text"]) for c in to_group(fake.calls, "sendMessage") if c.ok]
        assert sum("INC-63" in t for t in texts) == 1 and sum("INC-64" in t for t in texts) == 1
        assert len([c for c in to_group(fake.calls, "sendPhoto")
                    if c.params["photo"] == BAD]) == 1
        assert (await outbox.backlog(fx))[0] == 0
