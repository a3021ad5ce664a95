"""kill -9 after a Slack DM or @mention report was logged but before its answer reached Slack:
the restarted bot still answers it, once (the answer is in the outbox with the cards, as a
Telegram steward's is)."""

from __future__ import annotations

import json
import time

import aiohttp

from rigs.botproc import SLACK_CONTROL, Rig
from rigs.fakes.slack_api import Call, signed_headers
from rigs.net import free_port

DM = "D0CONTROL1"
LOGGED = "Logged INC-"


class SlackRig(Rig):
    """The crash rig, its bot serving Slack's Events API on one port across restarts."""

    port = free_port()

    def env(self) -> dict[str, str]:
        return {**super().env(), "PORT": str(self.port)}

    async def event(self, event_id: str, event: dict[str, object]) -> None:
        """Post one signed Events API callback, as Slack does; Slack wants a 200 back."""
        body = json.dumps({"type": "event_callback", "team_id": "T0TEAM", "api_app_id": "A0",
                           "event_id": event_id, "event_time": int(time.time()),
                           "event": event})
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://127.0.0.1:{self.port}/slack/events", data=body,
                                 headers=signed_headers(body, secret="bench-secret",
                                                        content_type="application/json")
                                 ) as resp:
                assert resp.status == 200, await resp.text()


def answer_in(channel: str, thread: str = ""):  # type: ignore[no-untyped-def]
    def where(c: Call) -> bool:
        return (c.ok and str(c.params.get("channel")) == channel and LOGGED in
                str(c.params.get("text", "")) and str(c.params.get("thread_ts") or "") == thread)
    return where


async def test_slack_dm_and_mention_answers_survive_kill_9(redis_url: str, monkeypatch) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    rig = SlackRig(0)
    await rig.start()
    try:
        await rig.spawn()
        rig.slack.lose(DM)
        rig.slack.lose(SLACK_CONTROL)
        await rig.event("EvDM1", {"type": "message", "channel_type": "im", "channel": DM,
                                  "user": "U0CONTROL1", "ts": "1700000000.000100",
                                  "text": "/incident pyro @stb_upper s3 flare by the dm"})
        mention_ts = "1700000000.000200"
        await rig.event("EvMention1", {"type": "app_mention", "channel": SLACK_CONTROL,
                                       "user": "U0CONTROL1", "ts": mention_ts,
                                       "text": "<@U0BOT> incident missile @seg_ne s4 coins"})
        # both answers are on their way (hanging on a lost network path) when the bot dies
        await rig.slack.wait_call("chat.postMessage", lambda c: c.params.get("channel") == DM,
                                  timeout=30)
        rig.kill9()
        rig.slack.mend(DM)
        rig.slack.mend(SLACK_CONTROL)
        await rig.spawn()
        await rig.slack.wait_call("chat.postMessage", answer_in(DM), timeout=60)
        await rig.slack.wait_call("chat.postMessage", answer_in(SLACK_CONTROL, mention_ts),
                                  timeout=60)
        incidents = await rig.incidents()
        assert len(incidents) == 2, [i.id for i in incidents]  # logged once each
        # the answers went out once each, though the restart found them in doubt
        assert len([c for c in rig.slack.of("chat.postMessage") if answer_in(DM)(c)]) == 1
        assert len([c for c in rig.slack.of("chat.postMessage")
                    if answer_in(SLACK_CONTROL, mention_ts)(c)]) == 1
    finally:
        await rig.stop()
