# ruff: noqa: F811  (pytest fixtures imported from test_slack_adapter)
"""A severity-5 report from the Slack modal is logged only once confirmed, as in the Telegram
guided form: the submit turns the modal into a confirm step; Cancel logs nothing."""

from __future__ import annotations

import json

from rigs.fakes.slack_api import bolt_request, interactive_body, submission_payload
from tests.support.slack import (  # noqa: F401
    CHANNEL,
    CONTROL,
    fake,
    open_incidents,
    slack,
    slash,
)

MAJOR = {"type": ("select", "disorder"), "location": ("select", "stb_walkway"),
         "severity": ("select", "5"), "description": "fighting on the walkway"}


async def submit(slack, view: dict, state: dict) -> dict:
    payload = submission_payload(view, state, user=CONTROL)
    resp = await slack.bolt_app.async_dispatch(bolt_request(interactive_body(payload)))
    assert resp.status == 200, resp.body
    return json.loads(resp.body) if resp.body else {}  # a bare ack closes the modal


async def form(slack, fake, view_id: str) -> dict:
    before = len(fake.of("views.open"))
    await slash(slack, fake, "/incident")
    opened = await fake.wait_for(lambda: fake.of("views.open")[before:])
    return {**opened[0].params["view"], "id": view_id, "hash": f"{view_id}-h1"}


async def test_severity_five_asks_to_confirm_and_logs_only_then(slack, fake, core):
    body = await submit(slack, await form(slack, fake, "V5"), MAJOR)
    assert body["response_action"] == "update"  # the form becomes the confirm step
    step = body["view"]
    shown = json.dumps(step["blocks"])
    assert "MAJOR INCIDENT" in shown and "Disorder" in shown and "Walkway" in shown
    assert step["submit"]["text"].startswith("Yes") and step["close"]["text"] == "Cancel"
    assert await open_incidents(core) == []  # nothing logged yet
    assert not [c for c in fake.of("chat.postMessage") if c.params["channel"] == CHANNEL]

    body = await submit(slack, {**step, "id": "V5", "hash": "V5-h2"}, {})
    assert body["response_action"] == "update" and "INC-1" in json.dumps(body["view"])
    [inc] = await open_incidents(core)
    assert (inc.type, inc.location, inc.severity) == ("disorder", "stb_walkway", 5)
    assert inc.description == "fighting on the walkway"
    # Slack retries the confirm: still one incident
    await submit(slack, {**step, "id": "V5", "hash": "V5-h2"}, {})
    assert len(await open_incidents(core)) == 1


async def test_cancelling_the_confirm_step_logs_nothing(slack, fake, core):
    body = await submit(slack, await form(slack, fake, "V6"), MAJOR)
    assert body["view"]["callback_id"] != "md_incident"  # the confirm step, not logged
    # The steward presses Cancel: Slack closes the modal and sends the bot nothing.
    assert await open_incidents(core) == []
    fx = await core.active_fixture()
    assert [e.kind for e in await core.store.events(fx.id)].count("incident.reported") == 0


async def test_lower_severities_are_logged_at_once(slack, fake, core):
    body = await submit(slack, await form(slack, fake, "V7"),
                        {**MAJOR, "severity": ("select", "4")})
    assert "INC-1" in json.dumps(body["view"])
    assert [i.severity for i in await open_incidents(core)] == [4]
