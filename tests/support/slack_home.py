"""The Slack App Home tab as a user opens it."""

from __future__ import annotations

import json

from rigs.fakes.slack_api import bolt_request, event_body


def home_text(call) -> str:  # type: ignore[no-untyped-def]
    return json.dumps(call.params["view"], ensure_ascii=False)


async def open_home(slack, user: str, event: str) -> None:
    ev = {"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": "home"}
    resp = await slack.bolt_app.async_dispatch(
        bolt_request(event_body(ev, event), content_type="application/json"))
    assert resp.status == 200
