"""A report that joined an open incident (a one-line report or a form's final tap),
redelivered after a crash (its update still in the inbox), is answered once: nothing more
when the first answer reached the steward, and the answer and control's note when the crash
came before they were queued."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.app import build_core
from bot.core.dispatch import Core
from bot.delivery.durable import OutboxReader
from bot.domain.messages import Outbound
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.store.inbox import Inbox
from rigs.fakes.telegram_api import TOKEN, Call, FakeTelegram
from tests.adapters.telegram.test_telegram_adapter import (
    buttons,
    edits_of,
    sent_message,
    tg_settings,
)
from tests.delivery.test_delivery import GROUP, STEWARD, durable

FIRST = "/incident missile @gate_away s3"  # INC-1, from a console steward


async def one_line(fake: FakeTelegram) -> dict[str, Any]:
    """A one-line report that joins INC-1 (same type, same zone)."""
    return fake.message_update(STEWARD, "/incident missile @gate_away s3 coins")


async def form(fake: FakeTelegram) -> dict[str, Any]:
    """The guided form up to its last step; its final tap (severity 3) joins INC-1."""
    await fake.push(fake.message_update(STEWARD, "/incident"))
    await fake.wait_for(lambda calls: [c for c in fake.sent_to(STEWARD) if buttons(c)])
    prompt = sent_message(fake, STEWARD, "What is happening?")
    mid = prompt["message_id"]
    tap = next(b for b in buttons(fake.sent_to(STEWARD)[0]) if b.endswith(" type missile"))
    await fake.push(fake.callback_update(STEWARD, prompt, tap))
    where = (await fake.wait_for(edits_of(STEWARD, mid, "Where?")))[-1]
    loc = next(b for b in buttons(where) if b.endswith(" loc gate_away"))
    await fake.push(fake.callback_update(STEWARD, fake.message(STEWARD, mid), loc))
    sev = (await fake.wait_for(edits_of(STEWARD, mid, "How serious?")))[-1]
    sev3 = next(b for b in buttons(sev) if b.endswith(" sev 3"))
    return fake.callback_update(STEWARD, fake.message(STEWARD, mid), sev3)


Report = Callable[[FakeTelegram], Awaitable[dict[str, Any]]]
WAYS = pytest.mark.parametrize("report", [one_line, form], ids=["one-line", "form"])


def answers(fake: FakeTelegram) -> list[Call]:
    """What the steward was sent about INC-1 (new messages and edits of the form)."""
    return [c for c in fake.calls if c.ok and c.method in ("sendMessage", "editMessageText")
            and str(c.params.get("chat_id")) == str(STEWARD)
            and "INC-1" in str(c.params.get("text"))]


def notes_to_control(fake: FakeTelegram) -> list[Call]:
    return [c for c in fake.sent_to(GROUP) if "Same incident" in str(c.params.get("text"))]


async def restart_with(core: Core, settings: Settings, fake: FakeTelegram,
                       update: dict[str, Any]) -> tuple[TelegramAdapter, OutboxReader]:
    """A new process whose inbox still holds `update` (the old one died before forgetting
    it): it processes the update again first."""
    await Inbox(core.store.gateway, TOKEN.split(":")[0]).record([update])
    other = build_core(core.store, settings, core.clock, cache_ttl=0)
    before = fake.polls
    adapter = telegram_for(other, tg_settings(settings, fake), poll_timeout=1)
    other.notifier.add_sink(adapter.sink)
    other.notifier.store = other.facades.delivery.refs
    reader = await durable(other)
    await adapter.start()
    for _ in range(500):  # recorded updates are processed before the first fetch
        if fake.polls > before:
            return adapter, reader
        await asyncio.sleep(0.01)
    raise AssertionError("the restarted adapter never polled")


async def first_process(core: Core, settings: Settings, fake: FakeTelegram
                        ) -> tuple[TelegramAdapter, OutboxReader]:
    """The bot before the crash: polling Telegram, delivering from the outbox."""
    adapter = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    return adapter, await durable(core)


async def processed(core: Core) -> None:
    """The redelivered update is processed and forgotten (its processing runs in a task of
    its own, so the first poll may come before it is done)."""
    inbox = Inbox(core.store.gateway, TOKEN.split(":")[0])
    async with asyncio.timeout(10):
        while await inbox.pending():
            await asyncio.sleep(0.01)


async def merged(core: Core) -> int:
    fx = await core.active_fixture()
    assert fx is not None
    inc = await core.store.incident(fx.id, 1)
    assert inc is not None
    return inc.merged


@WAYS
async def test_a_redelivered_joined_report_is_not_answered_twice(
        core: Core, settings: Settings, fake: FakeTelegram, say: Any, report: Report):
    adapter, reader = await first_process(core, settings, fake)
    try:
        await say(FIRST, as_="steward")
        update = await report(fake)
        await fake.push(update)
        await fake.wait_for(lambda calls: [c for c in answers(fake)
                                           if "Added to INC-1" in c.params["text"]])
        await reader.drain()
        answered = answers(fake)
        await reader.stop()
        await adapter.stop()  # ... and the process died before the inbox forgot the update
        adapter, reader = await restart_with(core, settings, fake, update)
        await processed(core)
        await reader.drain()
        assert answers(fake) == answered  # "Added to INC-1" stands; nothing after it
        assert len(notes_to_control(fake)) == 1
        assert await merged(core) == 1
    finally:
        await reader.stop()
        await adapter.stop()


@WAYS
async def test_a_joined_report_whose_answer_died_with_the_process_is_answered_after_it(
        core: Core, settings: Settings, fake: FakeTelegram, say: Any, report: Report,
        monkeypatch: pytest.MonkeyPatch):
    adapter, reader = await first_process(core, settings, fake)
    try:
        await say(FIRST, as_="steward")
        update = await report(fake)

        async def died(outs: list[Outbound], once: str = "") -> None:
            """The process is killed after the report's write, before its messages are
            queued."""

        monkeypatch.setattr(core.notifier, "send", died)
        await fake.push(update)
        for _ in range(500):  # until the report's write is in
            if await merged(core) == 1:
                break
            await asyncio.sleep(0.01)
        await reader.stop()
        await adapter.stop()
        assert answers(fake) == [] and notes_to_control(fake) == []
        adapter, reader = await restart_with(core, settings, fake, update)
        await fake.wait_for(lambda calls: answers(fake))
        await reader.drain()
        [answer] = answers(fake)
        assert "Added to INC-1" in answer.params["text"]
        assert "Already" not in answer.params["text"]
        assert len(notes_to_control(fake)) == 1
        assert await merged(core) == 1
    finally:
        await reader.stop()
        await adapter.stop()
