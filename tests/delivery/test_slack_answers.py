"""A Slack command's answer (its response_url) goes through the durable outbox: a crash
before it is posted, or a 429 from Slack, loses nothing."""

from __future__ import annotations

import asyncio
import json

from bot.core.dispatch import Core
from bot.runtime import slack_for
from bot.settings import Settings
from bot.store.outbox import Outbox
from rigs.fakes.slack_api import FakeSlack, bolt_request, slash_body
from tests.support.delivery import (
    durable,
)
from tests.support.slack import (
    CHANNEL,
    CONTROL,
    slack_settings,
)


async def test_a_report_answer_survives_a_crash_and_a_429(core: Core, settings: Settings,
                                                          slack_api: FakeSlack):
    outbox = Outbox(core.store.gateway)
    core.notifier.outbox = outbox  # durable, but no reader yet: as if the bot died now
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    adapter = slack_for(core, slack_settings(settings, slack_api))
    await adapter.start()
    body = slash_body("/incident", "pyro @stb_walkway s2 flare", user=CONTROL, channel=CHANNEL,
                      trigger="trig-durable", response_url=slack_api.response_url("r1"))
    await adapter.bolt_app.async_dispatch(bolt_request(body))
    for _ in range(200):
        if (await outbox.backlog(fx))[0] >= 2:  # the card and the answer, with the report
            break
        await asyncio.sleep(0.02)
    assert slack_api.of("respond") == []
    slack_api.respond_429 = 1  # and Slack is busy when it is first tried
    reader = await durable(core)
    await slack_api.wait_call("respond", lambda c: c.ok)
    await reader.drain()
    answers = slack_api.of("respond")
    assert [a.ok for a in answers] == [False, True]
    assert "Logged INC-1" in json.dumps(answers[1].params)
    assert answers[1].params["response_type"] == "ephemeral"
    assert (await outbox.backlog(fx))[0] == 0
    await reader.stop()
    await adapter.stop()
