"""One fake Slack serves every club's workspace, each by its own bot token, as Slack does:
each workspace is itself, keeps its own messages and rate limits, and uninstalling the app
from one revokes only that one's token (issue 39)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from rigs.fakes.slack_api import FakeSlack
from tests.support.clubs import CLUB_A_TEAM, CLUB_B_TEAM, club_slack

CONTROL = "C0CONTROL"


async def test_each_club_workspace_is_itself_and_keeps_its_own(slack_clubs: FakeSlack):
    fake = slack_clubs
    a, b = club_slack(fake, CLUB_A_TEAM), club_slack(fake, CLUB_B_TEAM)
    assert (await a.auth_test())["team_id"] == "T0CLUBA"
    assert (await b.auth_test())["team_id"] == "T0CLUBB"
    await a.chat_postMessage(channel=CONTROL, text="Club A: gate 4 open")
    await b.chat_postMessage(channel=CONTROL, text="Club B: turnstiles closed")
    assert [c.params["text"] for c in fake.posted_by("T0CLUBA")] == ["Club A: gate 4 open"]
    assert [c.params["text"] for c in fake.posted_by("T0CLUBB")] == ["Club B: turnstiles closed"]
    history = await a.conversations_history(channel=CONTROL)
    assert [m["text"] for m in history["messages"]] == ["Club A: gate 4 open"]


async def test_one_workspaces_burst_never_rate_limits_another(slack_clubs: FakeSlack):
    fake = slack_clubs
    a, b = club_slack(fake, CLUB_A_TEAM), club_slack(fake, CLUB_B_TEAM)
    await a.chat_postMessage(channel=CONTROL, text="Club A: first")
    with pytest.raises(SlackApiError) as refused:  # ~1 a second in one channel
        await a.chat_postMessage(channel=CONTROL, text="Club A: second")
    assert refused.value.response.status_code == 429
    assert refused.value.response["error"] == "ratelimited"
    assert int(refused.value.response.headers["Retry-After"]) >= 1
    await b.chat_postMessage(channel=CONTROL, text="Club B: same second")
    # pins.add is Tier 2 (~20 a minute per workspace): A uses all of it, B still pins
    posted = [await a.chat_postMessage(channel=f"C0A{n:02d}", text="pin me") for n in range(21)]
    for sent in posted[:20]:
        await a.pins_add(channel=sent["channel"], timestamp=sent["ts"])
    with pytest.raises(SlackApiError, match="ratelimited"):
        await a.pins_add(channel=posted[20]["channel"], timestamp=posted[20]["ts"])
    mine = await b.chat_postMessage(channel="C0B00", text="pin me")
    await b.pins_add(channel=mine["channel"], timestamp=mine["ts"])
    assert fake.workspace("T0CLUBA").too_many == 2 and fake.workspace("T0CLUBB").too_many == 0


async def test_an_uninstalled_workspace_is_refused_while_the_others_post(slack_clubs: FakeSlack):
    fake = slack_clubs
    a, b = club_slack(fake, CLUB_A_TEAM), club_slack(fake, CLUB_B_TEAM)
    await a.chat_postMessage(channel=CONTROL, text="Club A: before")
    fake.uninstall("T0CLUBA")
    for call in (a.auth_test(), a.chat_postMessage(channel=CONTROL, text="Club A: after")):
        with pytest.raises(SlackApiError) as refused:
            await call
        assert refused.value.response.status_code == 200
        assert refused.value.response.data == {"ok": False, "error": "token_revoked"}
    await b.chat_postMessage(channel=CONTROL, text="Club B: still here")
    assert (await b.auth_test())["team_id"] == "T0CLUBB"
    assert [c.params["text"] for c in fake.posted_by("T0CLUBA")] == ["Club A: before"]
    assert [c.params["text"] for c in fake.posted_by("T0CLUBB")] == ["Club B: still here"]


async def test_a_token_no_workspace_has_is_refused(slack_clubs: FakeSlack):
    fake = slack_clubs
    for token, error in (("xoxb-club-a-old", "invalid_auth"), ("", "not_authed")):
        with pytest.raises(SlackApiError) as refused:
            await AsyncWebClient(token=token, base_url=fake.api_url).auth_test()
        assert refused.value.response.data == {"ok": False, "error": error}
    assert (await club_slack(fake, CLUB_A_TEAM).auth_test())["team_id"] == "T0CLUBA"


def verified(secret: str, body: str, headers: dict[str, str]) -> bool:
    """Whether Slack's signature check (slack_sdk's, as Bolt runs it) accepts a request."""
    return SignatureVerifier(secret).is_valid(body, headers["X-Slack-Request-Timestamp"],
                                              headers["X-Slack-Signature"])


async def test_each_workspaces_requests_are_signed_with_its_own_secret(slack_clubs: FakeSlack):
    fake = slack_clubs
    body, headers = fake.signed_event("T0CLUBA", {"type": "app_mention", "text": "hi"})
    assert json.loads(body)["team_id"] == "T0CLUBA"
    assert verified(CLUB_A_TEAM[2], body, headers)
    assert not verified(CLUB_B_TEAM[2], body, headers)
    body, headers = fake.signed_action("T0CLUBB", {"type": "block_actions", "actions": []})
    assert json.loads(parse_qs(body)["payload"][0])["team"] == {"id": "T0CLUBB"}
    assert verified(CLUB_B_TEAM[2], body, headers)
    assert not verified(CLUB_A_TEAM[2], body, headers)
