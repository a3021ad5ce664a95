"""A report that joined an open incident, redelivered after a crash (its update still in the
inbox), is answered once: never a second message when the first reached the steward, and the
answer and control's note when the crash came before they were queued."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.app import build_core
from bot.core.dispatch import Core
from bot.core.messages import Outbound
from bot.delivery.durable import OutboxReader
from bot.settings import Settings
from bot.store.inbox import Inbox
from tests.adapters.telegram.test_telegram_adapter import tg_settings
from tests.delivery.test_delivery import GROUP, STEWARD, durable
from tests.fakes.telegram_api import TOKEN, FakeTelegram

SAME = "/incident medical @bbs s3 fainted"  # joins INC-1 (medical, the adjacent zone)


def about_inc1(fake: FakeTelegram, chat: int | str, needle: str = "INC-1") -> list[Any]:
    """Messages to a chat naming INC-1 (sends; edits of one message are not new ones)."""
    return [c for c in fake.sent_to(chat) if needle in str(c.params.get("text"))]


async def restart_with(core: Core, settings: Settings, fake: FakeTelegram,
                       update: dict[str, Any]) -> tuple[TelegramAdapter, OutboxReader]:
    """A new process whose inbox still holds `update` (the old one died before forgetting
    it): it processes the update again first."""
    await Inbox(core.store, TOKEN.split(":")[0]).record([update])
    other = build_core(core.store, settings, core.clock, cache_ttl=0)
    before = fake.polls
    adapter = TelegramAdapter(other, tg_settings(settings, fake), poll_timeout=1)
    other.notifier.add_sink(adapter)
    other.notifier.store = core.store
    reader = await durable(other)
    await adapter.start()
    for _ in range(500):  # recorded updates are processed before the first fetch
        if fake.polls > before:
            return adapter, reader
        await asyncio.sleep(0.01)
    raise AssertionError("the restarted adapter never polled")


async def first_incident(core: Core, say: Any, fake: FakeTelegram) -> None:
    await say("/incident medical @bbs_lower s3", as_="steward")
    await fake.wait_for(lambda calls: about_inc1(fake, GROUP))


async def test_a_redelivered_joined_report_is_not_answered_twice(
        core: Core, settings: Settings, fake: FakeTelegram, say: Any):
    adapter = TelegramAdapter(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    reader = await durable(core)
    try:
        await first_incident(core, say, fake)
        update = fake.message_update(STEWARD, SAME)
        await fake.push(update)
        await fake.wait_for(lambda calls: about_inc1(fake, STEWARD, "Added to INC-1"))
        await reader.drain()
        await reader.stop()
        await adapter.stop()  # ... and the process died before the inbox forgot the update
        adapter, reader = await restart_with(core, settings, fake, update)
        assert await Inbox(core.store, TOKEN.split(":")[0]).pending() == []
        await reader.drain()
        assert len(about_inc1(fake, STEWARD)) == 1  # "Added to INC-1", nothing after it
        assert len(about_inc1(fake, GROUP, "Same incident")) == 1
        fx = await core.active_fixture()
        assert (await core.store.incident(fx.id, 1)).merged == 1  # type: ignore[union-attr]
    finally:
        await reader.stop()
        await adapter.stop()


async def test_a_joined_report_whose_answer_died_with_the_process_is_answered_after_it(
        core: Core, settings: Settings, fake: FakeTelegram, say: Any,
        monkeypatch: pytest.MonkeyPatch):
    adapter = TelegramAdapter(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    reader = await durable(core)
    try:
        await first_incident(core, say, fake)

        async def died(outs: list[Outbound], once: str = "") -> None:
            """The process is killed after the report's write, before its messages are
            queued."""

        monkeypatch.setattr(core.notifier, "send", died)
        update = fake.message_update(STEWARD, SAME)
        await fake.push(update)
        fx = await core.active_fixture()
        assert fx is not None
        for _ in range(500):  # until the report's write is in
            if (await core.store.incident(fx.id, 1)).merged == 1:  # type: ignore[union-attr]
                break
            await asyncio.sleep(0.01)
        await reader.stop()
        await adapter.stop()
        assert about_inc1(fake, STEWARD) == []
        adapter, reader = await restart_with(core, settings, fake, update)
        await fake.wait_for(lambda calls: about_inc1(fake, STEWARD))
        await reader.drain()
        [answer] = about_inc1(fake, STEWARD)
        assert "Added to INC-1" in answer.params["text"]
        assert "Already" not in answer.params["text"]
        assert len(about_inc1(fake, GROUP, "Same incident")) == 1
        assert (await core.store.incident(fx.id, 1)).merged == 1  # type: ignore[union-attr]
    finally:
        await reader.stop()
        await adapter.stop()
