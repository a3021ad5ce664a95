"""A Slack command's answer (its response_url) goes through the durable outbox: a crash
before it is posted, or a 429 from Slack, loses nothing."""

from __future__ import annotations

import asyncio
import json

from bot.core.dispatch import Core
from bot.domain.messages import Outbound, Reply, Respond
from bot.runtime import slack_for
from bot.settings import Settings
from bot.store.base import fx_prefix
from bot.store.outbox import Outbox, decode, encode
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


async def test_an_answer_queued_by_an_earlier_version_still_goes_to_its_response_url(
        core: Core, settings: Settings, slack_api: FakeSlack):
    """During a rolling upgrade the outbox may hold answers an earlier replica queued, whose
    response_url is packed into the message id they 'edit': the answer still goes only to
    the person who asked (ephemeral), never posted in the channel or refused as an edit."""
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    outbox = Outbox(core.store.gateway)
    await outbox.ensure_group(fx)
    url = slack_api.response_url("old")
    entry = json.loads(encode(Outbound(f"user:slack:{CHANNEL}", Reply("Logged INC-9"),
                                       fixture=fx)))
    entry["edit"] = f"respond:{CONTROL}:{url}"  # as versions before the typed Respond wrote it
    await core.store.gateway.r.xadd(fx_prefix(fx) + "obx", {"m": json.dumps(entry)})
    adapter = slack_for(core, slack_settings(settings, slack_api))
    await adapter.start()
    reader = await durable(core)
    [answer] = await slack_api.wait_call("respond", lambda c: c.ok)
    await reader.drain()
    assert answer.params["response_type"] == "ephemeral"
    assert "Logged INC-9" in json.dumps(answer.params)
    assert slack_api.of("chat.update") == [] and slack_api.of("chat.postMessage") == []
    await reader.stop()
    await adapter.stop()


def test_an_answer_through_the_response_url_is_kept_typed_and_readable_by_either_version():
    out = Outbound(f"user:slack:{CHANNEL}", Reply("ok"), respond=Respond(CONTROL, "https://x/1"))
    raw = encode(out)
    assert decode(raw).respond == Respond(CONTROL, "https://x/1") and decode(raw).edit == ""
    # an earlier replica reads only `edit`: it finds the answer's response_url there
    assert json.loads(raw)["edit"] == f"respond:{CONTROL}:https://x/1"
