"""`matchday run` with both platforms at once, as deployed: Telegram polling, Slack HTTP mode,
one shared record, then a clean stop on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import aiohttp

from rigs.fakes.slack_api import (
    RESPONSE_HOSTS,
    SIGNING_SECRET,
    FakeSlack,
    signed_headers,
    slash_body,
)
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from rigs.net import free_port

ROOT = Path(__file__).resolve().parent.parent
STEWARD, CONTROL_CHAT = 100000001, -1001000000001


async def test_both_platforms_in_one_process(core, redis_url, tmp_path):  # core: sample fixture
    tg, sl = FakeTelegram(), FakeSlack()
    tg_url, _ = await tg.start(), await sl.start()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path),
        "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_BASE_URL": tg_url,
        "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": sl.api_url, "SLACK_RESPONSE_HOSTS": RESPONSE_HOSTS, "PORT": str(port)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", "--http", env=env, cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        await tg.wait_for(lambda calls: any(c.method == "deleteWebhook" for c in calls), 30)
        # a steward reports on Telegram ...
        await tg.push(tg.message_update(STEWARD, "/incident missile @seg_ne s4 coins"))
        await tg.wait_for(lambda calls: [c for c in calls if c.method == "sendMessage" and
                                         c.params.get("chat_id") == STEWARD and
                                         "Logged INC-1" in str(c.params.get("text"))], 15)
        # ... and the Slack control channel has it
        await sl.wait_call("chat.postMessage", lambda c: c.params.get("channel") == "C0CONTROL"
                           and "INC-1" in str(c.params), timeout=15)
        # control acknowledges from Slack over real HTTP
        body = slash_body("/ack", "1", user="U0CONTROL1", channel="C0CONTROL", trigger="t1",
                          response_url=sl.response_url("r1"))
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}/slack/events"
            async with http.post(url, data=body, headers=signed_headers(body)) as resp:
                assert resp.status == 200
            forged = signed_headers(body, secret="not-the-secret")
            async with http.post(url, data=body, headers=forged) as resp:
                assert resp.status == 401
        # the Telegram reporter hears about it and the Telegram control card is edited
        await tg.wait_for(lambda calls: [c for c in calls if c.method == "sendMessage" and
                                         c.params.get("chat_id") == STEWARD and
                                         "acknowledged" in str(c.params.get("text"))], 15)
        await tg.wait_for(lambda calls: [c for c in calls if c.method == "editMessageText" and
                                         c.params.get("chat_id") == CONTROL_CHAT and
                                         "Acknowledged" in str(c.params.get("text"))], 15)
        fx = await core.active_fixture()
        assert (await core.store.incident(fx.id, 1)).status == "acknowledged"
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while proc.returncode is None and time.monotonic() < deadline:
            try:
                await asyncio.wait_for(proc.wait(), 1)
            except TimeoutError:
                pass
        assert proc.returncode == 0, (await proc.stderr.read()).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await tg.stop()
        await sl.stop()
