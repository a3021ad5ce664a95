# ruff: noqa: F811  (pytest fixtures imported from test_slack_adapter)
"""Real-world Slack behaviour (issue #14 items 7, 8, 11): payloads shaped as in Slack's
reference pages, signed and dispatched through real Bolt code to the fake Web API."""

from __future__ import annotations

import json

from bot.adapters.slack.slack_adapter import SlackAdapter
from bot.core.dispatch import Core
from rigs.fakes.slack_api import (
    FakeSlack,
    bolt_request,
    event_body,
    interactive_body,
    submission_payload,
)
from tests.support.slack import (  # noqa: F401
    CHANNEL,
    CONTROL,
    fake,
    slack,
    slash,
)


# ---------------------------------------------------------------- 7: foreign private_metadata
async def test_view_with_foreign_private_metadata_gets_an_error_not_a_500(
        slack: SlackAdapter, fake: FakeSlack, core: Core) -> None:
    """A view_submission payload (api.slack.com/reference/interaction-payloads/views) whose
    view.private_metadata is not the JSON the bot wrote (a stale or foreign view): HTTP 200
    with response_action "errors" on the view, nothing logged."""
    await slash(slack, fake, "/incident")
    [opened] = await fake.wait_call("views.open")
    view = {**opened.params["view"], "id": "V7", "hash": "h7",
            "private_metadata": "channel=C0CONTROL;private=0"}
    payload = submission_payload(view, {"type": ("select", "missile"),
                                        "location": ("select", "stb_walkway")}, user=CONTROL)
    resp = await slack.bolt_app.async_dispatch(bolt_request(interactive_body(payload)))
    assert resp.status == 200, resp.body
    body = json.loads(resp.body)
    assert body["response_action"] == "errors"
    assert "out of date" in next(iter(body["errors"].values()))
    fx = await core.active_fixture()
    assert (await core.store.open_incidents(fx.id))[0] == []


# ---------------------------------------------------------------- 8: @matchday status
async def test_mention_without_a_slash_works_like_the_command(
        slack: SlackAdapter, fake: FakeSlack) -> None:
    """An app_mention event (api.slack.com/events/app_mention): "<@U0BOT> status" answers
    like /status, in the thread of the mention."""
    event = {"type": "app_mention", "user": CONTROL, "text": "<@U0BOT> status",
             "ts": "1700000200.000100", "channel": CHANNEL, "event_ts": "1700000200.000100",
             "client_msg_id": "c0ffee00-0000-4000-8000-000000000001"}
    resp = await slack.bolt_app.async_dispatch(
        bolt_request(event_body(event, "Ev0MENTION"), content_type="application/json"))
    assert resp.status == 200
    [posted] = await fake.wait_call("chat.postMessage",
                                    lambda c: c.params["channel"] == CHANNEL)
    assert "Status" in posted.params["text"]
    assert posted.params["thread_ts"] == "1700000200.000100"


# ---------------------------------------------------------------- 11: Home tab
async def test_home_tab_only_for_members_and_only_when_it_changed(
        slack: SlackAdapter, fake: FakeSlack, core: Core, say) -> None:
    """app_home_opened events (api.slack.com/events/app_home_opened) from a member and a
    stranger: the stranger is told how to join once and never gets the board; the member's
    tab is republished when an incident changes it, not when nothing they see changed."""
    for user, event_id in ((CONTROL, "Ev0HOME1"), ("U0STRANGER", "Ev0HOME2")):
        event = {"type": "app_home_opened", "user": user, "channel": "D" + user[1:],
                 "tab": "home", "event_ts": "1700000300.000100"}
        resp = await slack.bolt_app.async_dispatch(
            bolt_request(event_body(event, event_id), content_type="application/json"))
        assert resp.status == 200
    await fake.wait_call("views.publish", count=2)

    def published(user: str) -> list:
        return [c for c in fake.of("views.publish") if c.params["user_id"] == user]

    assert "not registered" in json.dumps(published("U0STRANGER")[0].params["view"])
    fx = await core.active_fixture()
    await core.changed("fixture", fx.id)  # nothing anyone sees has changed
    await say("/incident disorder @stb_walkway s4 fight", as_="steward")
    await fake.wait_for(lambda: len(published(CONTROL)) == 2)
    await core.changed("fixture", fx.id)
    await slack.flush()
    for task in list(slack._tasks):
        await task
    assert len(published(CONTROL)) == 2
    assert "INC-1" in json.dumps(published(CONTROL)[-1].params["view"])
    assert len(published("U0STRANGER")) == 1


# ---------------------------------------------------------------- 10: new command names
async def test_manifest_command_names_work_end_to_end(slack: SlackAdapter,
                                                      fake: FakeSlack) -> None:
    """Slash command payloads (api.slack.com/interactivity/slash-commands) for /md-status
    and the newly declared /md-fixtures: the adapter runs them as /status and /fixtures."""
    await slash(slack, fake, "/md-status")
    await slash(slack, fake, "/md-fixtures")
    answers = await fake.wait_call("respond", count=2)
    texts = sorted(a.params["text"] for a in answers)
    assert not any("Unknown command" in t for t in texts), texts
    assert any("Status" in t for t in texts) and any("West Ham" in t for t in texts), texts


# ---------------------------------------------------------------- 2: Slack files as evidence
async def test_slack_audio_clip_is_kept_as_a_voice_note(slack: SlackAdapter, fake: FakeSlack,
                                                        core: Core) -> None:
    """A message.im event with subtype file_share carrying a recorded clip (Slack "File"
    object: api.slack.com/types/file, subtype slack_audio, mimetype, duration_ms): kept as
    evidence with what it is, and control's thread gets a line saying so."""
    dm = "D0CONTROL1"
    report = {"type": "message", "channel_type": "im", "channel": dm, "user": CONTROL,
              "text": "/incident disorder @stb_walkway s3 fight", "ts": "1700000400.000100"}
    await slack.bolt_app.async_dispatch(
        bolt_request(event_body(report, "Ev0REPORT"), content_type="application/json"))
    await fake.wait_call("chat.postMessage", lambda c: "Logged INC-1" in c.params["text"])
    clip = {"type": "message", "subtype": "file_share", "channel_type": "im", "channel": dm,
            "user": CONTROL, "text": "", "ts": "1700000401.000100", "upload": False,
            "files": [{"id": "F0AUDIO1", "created": 1700000401, "name": "audio_message.webm",
                       "title": "Audio clip", "mimetype": "audio/webm", "filetype": "webm",
                       "subtype": "slack_audio", "duration_ms": 12000, "user": CONTROL,
                       "size": 48213, "mode": "hosted", "is_external": False}]}
    await slack.bolt_app.async_dispatch(
        bolt_request(event_body(clip, "Ev0CLIP"), content_type="application/json"))
    [added] = await fake.wait_call("chat.postMessage",
                                   lambda c: "Added to INC-1" in c.params["text"])
    assert "🎤 voice note 0:12" in added.params["text"]
    await fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == CHANNEL
                         and "🎤 voice note 0:12" in c.params["text"])
    fx = await core.active_fixture()
    [ev] = [e for e in await core.store.events(fx.id) if e.kind == "incident.evidence"]
    kept = ev.data["evidence"][0]
    assert (kept["kind"], kept["file_id"], kept["duration"], kept["mime_type"]) == \
        ("voice", "F0AUDIO1", 12, "audio/webm")
