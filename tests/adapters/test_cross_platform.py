"""One record across platforms: Telegram and Slack adapters on one core, both fakes running."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from bot.adapters.slack.slack_adapter import SlackAdapter
from bot.core.dispatch import Core
from bot.settings import Settings
from rigs.fakes.slack_api import (
    FakeSlack,
    bolt_request,
    button_payload,
    interactive_body,
    slash_body,
)
from rigs.fakes.telegram_api import Call, FakeTelegram
from tests.support.adapters import both_adapters

TG_STEWARD = 100000001  # roster: Telegram steward
TG_CONTROL = -1001000000001  # channels.toml: control audience on Telegram
SLACK_CONTROL_USER = "U0CONTROL1"
SLACK_CONTROL = "C0CONTROL"


@pytest_asyncio.fixture
async def both(core: Core, settings: Settings
               ) -> AsyncIterator[tuple[FakeTelegram, FakeSlack, SlackAdapter]]:
    tg_fake, slack_fake = FakeTelegram(), FakeSlack()
    async with both_adapters(core, settings, tg_fake, slack_fake) as slack:
        yield tg_fake, slack_fake, slack


def tg_sends(chat: int, needle: str) -> Any:
    def pred(calls: list[Call]) -> list[Call]:
        return [c for c in calls if c.ok and c.method == "sendMessage"
                and c.params.get("chat_id") == chat and needle in str(c.params.get("text"))]
    return pred


def tg_edits(chat: int, message_id: int, needle: str) -> Any:
    def pred(calls: list[Call]) -> list[Call]:
        return [c for c in calls if c.ok and c.method == "editMessageText"
                and c.params.get("chat_id") == chat and c.params.get("message_id") == message_id
                and needle in str(c.params.get("text"))]
    return pred


def buttons_of(blocks: list[dict]) -> dict[str, str]:
    return {e["text"]["text"]: e["value"] for b in blocks if b["type"] == "actions"
            for e in b["elements"]}


async def test_reported_on_telegram_acknowledged_in_slack(both) -> None:
    tg, sl, slack = both
    await tg.push(tg.message_update(TG_STEWARD, "/incident missile @stb_walkway s3 coins"))
    await tg.wait_for(tg_sends(TG_STEWARD, "Logged INC-1"))
    # The Slack control channel gets the live message...
    [posted] = await sl.wait_call("chat.postMessage",
                                  lambda c: c.params["channel"] == SLACK_CONTROL)
    assert "INC-1" in posted.params["text"]
    ts = (await sl.wait_for(lambda: [k for k in sl.messages if k[0] == SLACK_CONTROL]))[0][1]
    # ...and so does the Telegram control chat.
    [tg_card] = await tg.wait_for(tg_sends(TG_CONTROL, "INC-1"))
    card_id = next(m["message_id"] for (c, _), m in tg.messages.items()
                   if c == TG_CONTROL and "INC-1" in m.get("text", ""))

    press = button_payload(user=SLACK_CONTROL_USER, channel=SLACK_CONTROL, message_ts=ts,
                           value=buttons_of(posted.params["blocks"])["Acknowledge"],
                           trigger="trig-x1", response_url=sl.response_url("press"))
    resp = await slack.bolt_app.async_dispatch(bolt_request(interactive_body(press)))
    assert resp.status == 200
    # Slack's message is edited in place, the Telegram reporter is told, and the Telegram
    # control card is edited too.
    await sl.wait_call("chat.update", lambda c: c.params["channel"] == SLACK_CONTROL
                       and c.params["ts"] == ts)
    await tg.wait_for(tg_sends(TG_STEWARD, "acknowledged"))
    await tg.wait_for(tg_edits(TG_CONTROL, card_id, "Acknowledged"))


async def test_reported_in_slack_shows_in_telegram_control(both) -> None:
    tg, sl, slack = both
    body = slash_body("/incident", "segregation_breach @seg_ne s4 gate forced",
                      user=SLACK_CONTROL_USER, channel=SLACK_CONTROL, trigger="trig-x2",
                      response_url=sl.response_url("cmd"))
    resp = await slack.bolt_app.async_dispatch(bolt_request(body))
    assert resp.status == 200
    [answer] = await sl.wait_call("respond")
    assert "Logged INC-1" in answer.params["text"]
    await tg.wait_for(tg_sends(TG_CONTROL, "INC-1"))
    await sl.wait_call("chat.postMessage", lambda c: c.params["channel"] == SLACK_CONTROL)
