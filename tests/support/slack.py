"""The Slack adapter on the fake Slack API: channels, fixtures `fake`/`slack`, slash commands."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from pydantic import SecretStr

from bot.adapters.slack.slack_adapter import SlackAdapter
from bot.core.dispatch import Core
from bot.domain.incident.incident_model import Incident
from bot.runtime import slack_for
from bot.settings import Settings
from rigs.fakes.slack_api import RESPONSE_HOSTS, SIGNING_SECRET, FakeSlack, bolt_request, slash_body
from tests.support.fakes import served

CONTROL = "U0CONTROL1"
CHANNEL = "C0CONTROL"


def slack_settings(settings: Settings, fake: FakeSlack, **extra: Any) -> Settings:
    update = {"slack_bot_token": SecretStr("xoxb-test"),
              "slack_signing_secret": SecretStr(SIGNING_SECRET),
              "slack_api_url": fake.api_url, "slack_response_hosts": RESPONSE_HOSTS, **extra}
    return settings.model_copy(update=update)


fake = served("fake", FakeSlack)


@pytest_asyncio.fixture
async def slack(core: Core, settings: Settings, fake: FakeSlack) -> AsyncIterator[SlackAdapter]:
    adapter = slack_for(core, slack_settings(settings, fake))
    await adapter.start()
    yield adapter
    await adapter.stop()


_n = iter(range(1, 10_000))


def trig() -> str:
    return f"trig-{next(_n)}-{time.time_ns()}"


async def slash(slack: SlackAdapter, fake: FakeSlack, command: str, text: str = "", *,
                user: str = CONTROL, channel: str = CHANNEL, trigger: str | None = None,
                **kw: Any) -> Any:
    body = slash_body(command, text, user=user, channel=channel, trigger=trigger or trig(),
                      response_url=fake.response_url(f"cmd-{next(_n)}"))
    return await slack.bolt_app.async_dispatch(bolt_request(body, **kw))


async def open_incidents(core: Core) -> list[Incident]:
    fx = await core.active_fixture()
    assert fx is not None
    rows, _ = await core.store.open_incidents(fx.id)
    return rows


def block_text(blocks: list[dict]) -> str:
    return "\n".join(b.get("text", {}).get("text", "") for b in blocks if b["type"] == "section")
