"""A send a crash left in doubt (in-flight mark, no delivered mark) is resolved on recovery:
Slack is asked whether the post arrived (its metadata names the outbox entry); Telegram,
which cannot be read back, gets it again, once."""

from __future__ import annotations

import json

from bot.core.dispatch import Core
from bot.delivery.sink import SENDING
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


async def test_a_slack_post_in_doubt_is_looked_up_not_posted_twice(core: Core,
                                                                   settings: Settings,
                                                                   slack_api: FakeSlack):
    core.notifier.channels = {"control": {"slack": [CONTROL]}}
    adapter = slack_for(core, slack_settings(settings, slack_api))
    await adapter.start()
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    outbox = Outbox(core.store.gateway)
    await outbox.ensure_group(fx)
    await outbox.add(fx, [card(41, fixture=fx), card(42, fixture=fx)])
    (e41, o41), (e42, _) = await outbox.read(fx, "dead-replica", 10)
    # The dead replica marked both in flight; Slack took INC-41, then the process died
    # before its answer was recorded. INC-42's post never reached Slack.
    await outbox.flying([(fx, e41), (fx, e42)], f"slack:{CONTROL}")
    token = SENDING.set((f"{fx}/{e41}",))
    posted = await adapter.send(CONTROL, o41.reply)
    SENDING.reset(token)

    reader = await durable(core)
    await reader.drain()
    posts = [c.params["text"] for c in slack_api.of("chat.postMessage") if c.ok]
    assert sum("INC-41" in t for t in posts) == 1  # found in the history: not posted again
    assert sum("INC-42" in t for t in posts) == 1  # never arrived: posted now
    assert (await outbox.backlog(fx))[0] == 0
    # The found post is the card's live message: its next state edits it in place.
    assert await core.facades.delivery.refs.message_ref(fx, "slack", CONTROL, "INC-41") == posted
    await core.notifier.send([card(41, fixture=fx, status="Acknowledged")])
    await reader.drain()
    [edit] = [c for c in slack_api.of("chat.update") if c.ok]
    assert edit.params["ts"] == posted and "Acknowledged" in json.dumps(edit.params)
    assert sum("INC-41" in c.params["text"] for c in slack_api.of("chat.postMessage") if c.ok) == 1
    await reader.stop()
    await adapter.stop()


async def test_every_slack_post_from_the_outbox_names_its_entry(core: Core, settings: Settings,
                                                                slack_api: FakeSlack):
    core.notifier.channels = {"control": {"slack": [CONTROL]}}
    adapter = slack_for(core, slack_settings(settings, slack_api))
    await adapter.start()
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    reader = await durable(core)
    await core.notifier.send([card(43, fixture=fx)])
    await reader.drain()
    [post] = [c for c in slack_api.of("chat.postMessage") if c.ok]
    assert post.params["metadata"]["event_payload"]["ids"].startswith(f"{fx}/")
    await reader.stop()
    await adapter.stop()
