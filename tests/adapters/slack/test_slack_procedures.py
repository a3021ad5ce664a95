# ruff: noqa: F811  (pytest fixtures imported from test_slack_adapter)
"""Control on Slack reaches every steward at once (issue 24 §4) through slack-bolt against
the fake Web API: a procedure asks to be confirmed, the confirm press sends it (to the control
channel here, and is recorded for every targeted steward), a second press sends nothing more,
and /md-status counts who has it."""

from __future__ import annotations

import json

from bot.store.stewarding_keys import Stewarding
from rigs.fakes.slack_api import bolt_request, button_payload, interactive_body
from tests.support.slack import (  # noqa: F401
    CHANNEL,
    CONTROL,
    fake,
    slack,
    slash,
    trig,
)


def posted(fake, needle: str) -> list:
    return [c for c in fake.of("chat.postMessage")
            if c.params.get("channel") == CHANNEL
            and needle in json.dumps(c.params, ensure_ascii=False)]


async def press(slack, fake, value: str) -> None:
    payload = button_payload(user=CONTROL, channel=CHANNEL, message_ts="1700000000.000100",
                             value=value, trigger=trig(),
                             response_url=fake.response_url(f"press-{trig()}"))
    resp = await slack.bolt_app.async_dispatch(bolt_request(interactive_body(payload)))
    assert resp.status == 200


async def test_a_slack_lockdown_is_confirmed_then_sent_once_and_counted(slack, fake, core):
    await slash(slack, fake, "/md-lockdown", "stb hold the concourse doors")
    ask = await fake.wait_for(lambda: [c for c in fake.of("respond")
                                       if "Confirm LOCKDOWN" in json.dumps(c.params)])
    blocks = ask[-1].params.get("blocks") or []
    values = [e["value"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    confirm = next(v for v in values if "confirm" in v)
    assert "2 stewards" in json.dumps(ask[-1].params)  # the STB steward and supervisor
    assert posted(fake, "🚨 LOCKDOWN") == []  # nothing before the confirm

    await press(slack, fake, confirm)
    await fake.wait_for(lambda: posted(fake, "🚨 LOCKDOWN"))
    fx = await core.active_fixture()
    bc = await Stewarding(core.store.gateway).latest(fx.id)
    assert bc is not None and bc.kind == "lockdown" and bc.target == "zone:stb"
    assert bc.missing == ("console:steward", "console:supervisor") and bc.acked == ()

    await press(slack, fake, confirm)  # a second press of the same confirm
    await fake.wait_for(lambda: [c for c in fake.of("respond")
                                 if "already sent" in json.dumps(c.params)])
    assert len(posted(fake, "🚨 LOCKDOWN")) == 1

    await slash(slack, fake, "/md-status")
    status = await fake.wait_for(lambda: [c for c in fake.of("respond")
                                          if "have it" in json.dumps(c.params)])
    text = json.dumps(status[-1].params, ensure_ascii=False)
    assert "LOCKDOWN" in text and "0/2 have it" in text and "Steward 14" in text


async def test_a_broadcast_to_nowhere_known_is_refused_in_one_line(slack, fake, core):
    await slash(slack, fake, "/md-broadcast", "narnia the lamp post is out")
    got = await fake.wait_for(lambda: [c for c in fake.of("respond")
                                       if "narnia" in json.dumps(c.params)])
    assert "not a zone" in json.dumps(got[-1].params)
    fx = await core.active_fixture()
    assert await Stewarding(core.store.gateway).latest(fx.id) is None
