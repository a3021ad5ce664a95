# ruff: noqa: F811  (pytest fixtures imported from tests.support)
"""The Slack adapter through real Bolt code: signed requests, modals, live messages, Home."""

from __future__ import annotations

import json
import time

import aiohttp
from pydantic import SecretStr

from bot.runtime import slack_for
from rigs.fakes.slack_api import (
    bolt_request,
    button_payload,
    event_body,
    interactive_body,
    signed_headers,
    slash_body,
    slash_payload,
    submission_payload,
)
from rigs.net import serving
from tests.support.slack import (  # noqa: F401 (fixtures)
    CHANNEL,
    CONTROL,
    block_text,
    fake,
    open_incidents,
    slack,
    slack_settings,
    slash,
    trig,
)


def buttons_of(blocks: list[dict]) -> dict[str, str]:
    return {e["text"]["text"]: e["value"] for b in blocks if b["type"] == "actions"
            for e in b["elements"]}


# ------------------------------------------------------------------------------ the story
async def test_modal_report_posts_live_message_and_ack_edits_it(slack, fake, core):
    resp = await slash(slack, fake, "/incident")
    assert resp.status == 200
    [opened] = await fake.wait_call("views.open")
    view = opened.params["view"]
    assert view["callback_id"] == "md_incident"
    types = [o["value"] for o in view["blocks"][0]["element"]["options"]]
    assert "missile" in types and "segregation_breach" in types
    zones = [o["value"] for g in view["blocks"][1]["element"]["option_groups"]
             for o in g["options"]]
    assert "stb_walkway" in zones

    shown = {**view, "id": "V1", "hash": "h1"}
    payload = submission_payload(shown, {
        "type": ("select", "missile"), "location": ("select", "stb_walkway"),
        "severity": ("select", "4"), "description": "coins & <bottles> thrown",
        "affiliation": ("select", "away"), "people": "30"}, user=CONTROL)
    resp = await slack.bolt_app.async_dispatch(bolt_request(interactive_body(payload)))
    assert resp.status == 200, resp.body
    body = json.loads(resp.body)
    assert body["response_action"] == "update"
    assert "INC-1" in json.dumps(body["view"])

    [posted] = await fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == CHANNEL)
    text = block_text(posted.params["blocks"])
    assert "INC-1" in text and "*" in text  # bold title
    assert "coins &amp; &lt;bottles&gt; thrown" in text  # user text escaped
    assert "<bottles>" not in json.dumps(posted.params)
    ts = (await fake.wait_for(lambda: [k for k in fake.messages if k[0] == CHANNEL]))[0][1]
    [inc] = await open_incidents(core)
    assert (inc.type, inc.location, inc.severity) == ("missile", "stb_walkway", 4)
    assert (inc.affiliation, inc.people) == ("away", "30")

    ack_cmd = buttons_of(posted.params["blocks"])["Acknowledge"]
    press = button_payload(user=CONTROL, channel=CHANNEL, message_ts=ts, value=ack_cmd,
                           trigger=trig(), response_url=fake.response_url("press"))
    resp = await slack.bolt_app.async_dispatch(bolt_request(interactive_body(press)))
    assert resp.status == 200
    [update] = await fake.wait_call("chat.update", lambda c: c.params["channel"] == CHANNEL)
    assert (update.params["channel"], update.params["ts"]) == (CHANNEL, ts)
    assert "Acknowledged" in block_text(update.params["blocks"])
    assert "Acknowledge" not in buttons_of(update.params["blocks"])
    [answer] = await fake.wait_call("respond", lambda c: c.params["key"] == "press")
    assert answer.params["response_type"] == "ephemeral"
    assert "acknowledged" in answer.params["text"]
    [inc] = await open_incidents(core)
    assert inc.status == "acknowledged"


async def test_modal_errors_stay_on_the_field(slack, fake, core):
    await slash(slack, fake, "/incident")
    [opened] = await fake.wait_call("views.open")
    view = {**opened.params["view"], "id": "V2", "hash": "h2"}
    # The core refuses (no such place): the error goes on the location field.
    payload = submission_payload(view, {"type": ("select", "missile"),
                                        "location": ("select", "nowhere_at_all")}, user=CONTROL)
    resp = await slack.bolt_app.async_dispatch(bolt_request(interactive_body(payload)))
    body = json.loads(resp.body)
    assert body["response_action"] == "errors"
    assert list(body["errors"]) == ["location"] and "nowhere" in body["errors"]["location"]
    assert await open_incidents(core) == []

    # No modal for a command the role may not use: the core's refusal instead.
    await slash(slack, fake, "/arrest", user=CONTROL)
    refusal = await fake.wait_call("respond")
    assert "not for your role" in refusal[0].params["text"]  # control may not record arrests


async def test_arrest_modal_local_and_core_validation(core, settings, fake):
    core.roster["slack:U0DFO"] = core.roster["console:police_liaison"].__class__(
        "slack", "U0DFO", "police_liaison", "DFO (Slack)")
    adapter = slack_for(core, slack_settings(settings, fake))
    await adapter.start()
    try:
        await slash(adapter, fake, "/arrest", user="U0DFO", channel="C0POLICE")
        [opened] = await fake.wait_call("views.open")
        view = {**opened.params["view"], "id": "V3", "hash": "h3"}
        assert view["callback_id"] == "md_arrest"
        bad = submission_payload(view, {"offence": ("select", "violent_disorder"),
                                        "inc": "seven"}, user="U0DFO")
        body = json.loads((await adapter.bolt_app.async_dispatch(
            bolt_request(interactive_body(bad)))).body)
        assert body["response_action"] == "errors" and "inc" in body["errors"]
        good = submission_payload(view, {"offence": ("select", "violent_disorder"),
                                         "count": "2", "place": ("select", "inside"),
                                         "side": ("select", "away"), "ref": "CR/123"},
                                  user="U0DFO")
        body = json.loads((await adapter.bolt_app.async_dispatch(
            bolt_request(interactive_body(good)))).body)
        assert body["response_action"] == "update", body
        fx = await core.active_fixture()
        counts = await core.store.counts(fx.id)
        assert any(v == 2 for k, v in counts.items() if "violent_disorder" in k), counts
    finally:
        await adapter.stop()


# ------------------------------------------------------------------------------ security
async def test_forged_and_stale_signatures_are_refused(slack, fake, core):
    resp = await slash(slack, fake, "/incident", "missile @stb_walkway", secret="wrong-secret")
    assert resp.status == 401
    resp = await slash(slack, fake, "/incident", "missile @stb_walkway",
                       timestamp=int(time.time()) - 6 * 60)
    assert resp.status == 401
    assert fake.of("respond") == [] and fake.of("views.open") == []
    assert await open_incidents(core) == []


async def test_a_stranger_is_refused(slack, fake, core):
    await slash(slack, fake, "/incident", "missile @stb_walkway", user="U0STRANGER")
    [answer] = await fake.wait_call("respond")
    assert "not registered" in answer.params["text"]
    await slash(slack, fake, "/incident", user="U0STRANGER")  # no modal for strangers either
    await fake.wait_call("respond", count=2)
    assert fake.of("views.open") == []
    assert await open_incidents(core) == []
    audit = await core.facades.audit.stranger_refusals()  # strangers' stream, apart from members'
    assert any(a.get("who") == "slack:U0STRANGER" or "U0STRANGER" in json.dumps(a)
               for a in audit)


async def test_retries_are_logged_once(slack, fake, core, settings):
    body = slash_body("/incident", "pyro @stb_walkway s3 flare", user=CONTROL, channel=CHANNEL,
                      trigger="trig-retry", response_url=fake.response_url("r"))
    first = await slack.bolt_app.async_dispatch(bolt_request(body))
    again = await slack.bolt_app.async_dispatch(bolt_request(body, retry_num=1))
    assert first.status == again.status == 200
    await fake.wait_call("respond")
    # Another replica (one Redis) gets the retry: it drops it, shared dedupe in Redis.
    other = slack_for(core, slack_settings(settings, fake))
    await other.bolt_app.async_dispatch(bolt_request(body, retry_num=2))
    later = slash_body("/incident", "list", user=CONTROL, channel=CHANNEL, trigger="trig-later",
                       response_url=fake.response_url("later"))
    await other.bolt_app.async_dispatch(bolt_request(later))  # handled after the retry
    await fake.wait_call("respond", lambda c: c.params["key"] == "later")
    assert [c.params["key"] for c in fake.of("respond")] == ["r", "later"]
    assert len(await open_incidents(core)) == 1

    # An Events API redelivery (same event_id) in a DM: handled once, by either replica.
    ev = {"type": "message", "channel_type": "im", "channel": "D0CONTROL1", "user": CONTROL,
          "text": "/incident drone @stb_walkway", "ts": "1700000100.000100"}
    raw = event_body(ev, "Ev0RETRY")
    for retry in (None, 1):
        resp = await slack.bolt_app.async_dispatch(
            bolt_request(raw, content_type="application/json", retry_num=retry))
        assert resp.status == 200
    await fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "D0CONTROL1")
    await other.bolt_app.async_dispatch(
        bolt_request(raw, content_type="application/json", retry_num=2))
    ev2 = {**ev, "text": "/incident list", "ts": "1700000100.000200"}
    await other.bolt_app.async_dispatch(
        bolt_request(event_body(ev2, "Ev0LATER"), content_type="application/json"))
    await fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "D0CONTROL1",
                         count=2)
    await other.flush()
    dm = [c for c in fake.of("chat.postMessage") if c.params["channel"] == "D0CONTROL1"]
    assert len(dm) == 2 and "Logged" in dm[0].params["text"]  # the drone, then the list
    assert [i.type for i in await open_incidents(core)].count("drone") == 1


# ------------------------------------------------------------------------------ transports
async def test_http_mode_endpoint(slack, fake, core):
    async with serving(slack.routes()) as port:
        url = f"http://127.0.0.1:{port}/slack/events"
        body = slash_body("/incident", "missile @stb_walkway s4", user=CONTROL, channel=CHANNEL,
                          trigger="trig-http", response_url=fake.response_url("http"))
        async with aiohttp.ClientSession() as http:
            async with http.post(url, data=body, headers=signed_headers(body)) as resp:
                assert resp.status == 200
            async with http.post(url, data=body,
                                 headers=signed_headers(body, secret="forged")) as resp:
                assert resp.status == 401
        [answer] = await fake.wait_call("respond")
        assert "Logged INC-1" in answer.params["text"]
        await fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == CHANNEL)
        assert len(await open_incidents(core)) == 1


async def test_socket_mode_envelope_is_acked(core, settings, fake):
    s = slack_settings(settings, fake, slack_app_token=SecretStr("xapp-test"))
    adapter = slack_for(core, s)
    await adapter.start()
    try:
        await fake.connected()
        assert fake.of("apps.connections.open")[0].token == "xapp-test"
        payload = slash_payload("/incident", "medical @stb_lower s3", user=CONTROL,
                                channel=CHANNEL, trigger="trig-sock",
                                response_url=fake.response_url("sock"))
        envelope = await fake.send_envelope("slash_commands", payload)
        ack = await fake.ack_of(envelope)
        assert ack["envelope_id"] == envelope
        [answer] = await fake.wait_call("respond", lambda c: c.params["key"] == "sock")
        assert "Logged INC-1" in answer.params["text"]
    finally:
        await adapter.stop()


# ------------------------------------------------------------------------------ Home, delivery
async def test_app_home_board_refreshes_on_change(slack, fake, core, say):
    ev = {"type": "app_home_opened", "user": CONTROL, "channel": "D0CONTROL1", "tab": "home"}
    resp = await slack.bolt_app.async_dispatch(
        bolt_request(event_body(ev, "Ev0HOME"), content_type="application/json"))
    assert resp.status == 200
    [first] = await fake.wait_call("views.publish")
    assert first.params["user_id"] == CONTROL and first.params["view"]["type"] == "home"
    assert "INC-1" not in json.dumps(first.params["view"])
    await say("/incident disorder @stb_walkway s4 fight", as_="steward")
    calls = await fake.wait_call("views.publish", count=2)
    assert "INC-1" in json.dumps(calls[-1].params["view"])


async def test_thread_images_pacing_and_rate_limit(core, settings, fake):
    from bot.delivery.ratelimit import RateLimiter
    from bot.domain.messages import Outbound, Reply

    slept: list[float] = []
    now = [100.0]

    async def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    core.notifier.limiter = RateLimiter(clock=lambda: now[0], sleep=sleep)
    adapter = slack_for(core, slack_settings(settings, fake))
    await adapter.start()
    fake.fail_next("chat.postMessage")  # one 429 with Retry-After: 0, retried by the layer
    to = f"user:slack:{CHANNEL}"
    await core.notifier.send([
        Outbound(to, Reply("card", title="INC-9"), ref="INC-9", fixture="fx"),
        Outbound(to, Reply("update <1>"), thread="INC-9", fixture="fx"),
        Outbound(to, Reply("chart", images=[b"\x89PNG fake"]), fixture="fx")])
    await adapter.flush()
    posts = fake.of("chat.postMessage")
    assert len(posts) == 4  # the 429 and its retry, then two more
    parent_ts = await core.facades.delivery.refs.message_ref("fx", "slack", CHANNEL, "INC-9")
    assert posts[2].params["thread_ts"] == parent_ts
    assert "update &lt;1&gt;" in posts[2].params["text"]
    # one message a second in a channel; the 429'd try counts, then Retry-After (0) is kept
    assert [s for s in slept if s] == [1.0, 1.0, 1.0]
    await fake.wait_call("files.completeUploadExternal")
    assert list(fake.uploads.values()) == [b"\x89PNG fake"]
    await adapter.stop()


async def test_join_links_a_slack_user_and_matchday_catch_all(slack, fake, core):
    await core.facades.members.create_invite("sup777", "supervisor", "console:admin", 3600)
    for i, (command, text) in enumerate((("/whoami", ""), ("/join", "sup777"),
                                         ("/matchday", "whoami")), 1):
        await slash(slack, fake, command, text, user="U0NEWSUP", channel="D0NEWSUP")
        answers = await fake.wait_call("respond", count=i)
    texts = [a.params["text"] for a in answers]
    assert "not registered" in texts[0]
    assert "Supervisor" in texts[2] or "supervisor" in texts[2], texts
    member = await core.member("slack:U0NEWSUP")
    assert member is not None and member.role == "supervisor"


async def test_non_numeric_timestamp_is_401_not_500(slack, fake, core, caplog):
    async with serving(slack.routes()) as port:
        url = f"http://127.0.0.1:{port}/slack/events"
        body = slash_body("/incident", "missile @stb_walkway s4", user=CONTROL, channel=CHANNEL,
                          trigger="trig-badts", response_url=fake.response_url("badts"))
        async with aiohttp.ClientSession() as http:
            for ts in ("abc", "", "1e9", " 12 ", "9" * 400, "9" * 5000, "1.5"):
                headers = {**signed_headers(body), "X-Slack-Request-Timestamp": ts}
                async with http.post(url, data=body, headers=headers) as resp:
                    assert resp.status == 401, (ts, resp.status)
            headers = signed_headers(body)
            del headers["X-Slack-Request-Timestamp"]
            async with http.post(url, data=body, headers=headers) as resp:
                assert resp.status == 401
        assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
        assert fake.of("respond") == [] and await open_incidents(core) == []
        # Bolt's own dispatch path (Socket-less, no aiohttp) refuses it the same way.
        resp = await slack.bolt_app.async_dispatch(bolt_request(body, timestamp="abc"))
        assert resp.status == 401


async def test_refusal_marks_the_field_the_core_names(core, settings, fake):
    """Errors as data: the core's UsageError(field=...) travels as Reply.field and the modal
    marks that block (Slack view_submission `response_action: errors`, keyed by block_id:
    https://api.slack.com/surfaces/modals#displaying_errors), whatever the wording."""
    from bot.domain.messages import Command

    core.roster["slack:U0DFO"] = core.roster["console:police_liaison"].__class__(
        "slack", "U0DFO", "police_liaison", "DFO (Slack)")
    for text, field in (("/arrest violent_disorder zone=nowhere", "zone"),
                        ("/arrest violent_disorder outcome=zapped", "outcome"),
                        ("/ban club_lifetime years=many", "years"),
                        ("/incident missile @nowhere_at_all", "location"),
                        ("/incident flying_saucer @stb_walkway", "type")):
        result = await core.handle(Command("slack", "D0DFO", "U0DFO", text, f"k:{text}"))
        assert result is not None and not result.reply.ok and result.reply.field == field, text
    adapter = slack_for(core, slack_settings(settings, fake))
    await adapter.start()
    try:
        await slash(adapter, fake, "/arrest", user="U0DFO", channel="C0POLICE")
        [opened] = await fake.wait_call("views.open")
        view = {**opened.params["view"], "id": "V9", "hash": "h9"}
        # a stale view offering a zone the ground no longer has
        bad = submission_payload(view, {"offence": ("select", "violent_disorder"),
                                        "zone": ("select", "old_zone_gone")}, user="U0DFO")
        body = json.loads((await adapter.bolt_app.async_dispatch(
            bolt_request(interactive_body(bad)))).body)
        assert body["response_action"] == "errors"
        assert list(body["errors"]) == ["zone"], body
    finally:
        await adapter.stop()
