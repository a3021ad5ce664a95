"""A post Slack will never take (invalid_blocks, msg_too_long) is dropped for its channel
with a logged reason and its outbox entry done, once: before, it was logged as a traceback
and its entry left pending, sent again by every replica that took the outbox over."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.core.dispatch import Core
from bot.runtime import slack_for
from bot.settings import Settings
from bot.store.outbox import Outbox
from rigs.fakes.slack_api import FakeSlack
from tests.support.cards import card
from tests.support.delivery import (
    durable,
)
from tests.support.slack import (
    slack_settings,
)

CONTROL = "C0CONTROL"


async def test_a_post_slack_refuses_is_dropped_once_and_the_channel_moves_on(
        core: Core, settings: Settings, slack_api: FakeSlack,
        caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.WARNING)
    core.notifier.channels = {"control": {"slack": [CONTROL]}}
    adapter = slack_for(core, slack_settings(settings, slack_api))
    await adapter.start()
    try:
        fx = (await core.active_fixture()).id  # type: ignore[union-attr]
        outbox = Outbox(core.store.gateway)
        await outbox.ensure_group(fx)
        slack_api.fail_next("chat.postMessage", 200, body={"ok": False, "error": "invalid_blocks"})
        await outbox.add(fx, [card(71, fixture=fx), card(72, fixture=fx)])
        reader = await durable(core)
        try:
            await asyncio.wait_for(reader.drain(), 15)
        finally:
            await reader.stop()
        posts = slack_api.of("chat.postMessage")
        assert [(c.ok, "INC-71" in str(c.params.get("text"))) for c in posts] == \
            [(False, True), (True, False)]  # the refused card once; the next one goes
        assert (await outbox.backlog(fx))[0] == 0
        assert await outbox.claim_all(fx, "another-replica") == []  # not in doubt
        warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("invalid_blocks" in m and "refused" in m for m in warned), warned
    finally:
        await adapter.stop()
