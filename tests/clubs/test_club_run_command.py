# ruff: noqa: F811  (pytest fixtures imported from tests.support)
"""`matchday run --webhook` as an operator starts it, with clubs registered by `matchday club
add`: the real process runs every enabled club on one port, says which in its log, serves
each club under /c/<club>/, and prints no club secret (#39)."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import aiohttp

from rigs.fakes.slack_api import FakeSlack
from rigs.fakes.telegram_api import FakeTelegram
from rigs.net import free_port
from tests.support.cli import ROOT, env, matchday  # noqa: F401 (fixture)
from tests.support.process import kill_if_running, started_or_exited, stop_and_read

SECRETS = {
    "WHU_TG": "800000011:WHUsecret-token-for-the-run-command-test",
    "WHU_HOOK": "whu-webhook-secret-a17c",
    "WHU_SLACK": "xoxb-whu-run-command",
    "WHU_SIGN": "whu-signing-secret-0f3e",
}


async def test_run_serves_every_enabled_club_and_prints_no_secret(
        env) -> None:  # type: ignore[no-untyped-def]
    added = matchday("club", "add", "west-ham", "--name", "West Ham United",
                     "--telegram-token", "env:WHU_TG", "--telegram-secret", "env:WHU_HOOK",
                     "--slack-token", "env:WHU_SLACK", "--slack-signing-secret", "env:WHU_SIGN",
                     env=env)
    assert added.returncode == 0, added.stderr
    matchday("club", "add", "spare", "--name", "Spare FC", "--telegram-token", "env:NONE_TG",
             "--telegram-secret", "env:NONE_HOOK", "--slack-token", "env:NONE_SLACK",
             "--slack-signing-secret", "env:NONE_SIGN", env=env)
    assert matchday("club", "disable", "spare", env=env).returncode == 0
    telegram, slack = FakeTelegram(), FakeSlack()
    telegram.add_bot(SECRETS["WHU_TG"])
    slack.add_workspace("T0WHU", SECRETS["WHU_SLACK"], SECRETS["WHU_SIGN"])
    await telegram.start()
    await slack.start()
    port = free_port()
    full = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | env | SECRETS | {
        "PORT": str(port), "TELEGRAM_BASE_URL": telegram.base_url,
        "SLACK_API_URL": slack.api_url}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", "--webhook", cwd=ROOT, env=full,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        assert await started_or_exited(proc, port, timeout=60)
        async with aiohttp.ClientSession() as http:
            health: dict[str, object] = {}
            for _ in range(300):  # the HTTP server answers first, the clubs' bots start after
                async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                    health = json.loads(await resp.text())
                if health["clubs_up"] == 1 or proc.returncode is not None:
                    break
                await asyncio.sleep(0.1)
            assert health == {"status": "ok", "clubs_up": 1, "clubs_down": 0}  # not `spare`
            async with http.get(f"http://127.0.0.1:{port}/c/west-ham/healthz") as resp:
                assert resp.status == 200 and json.loads(await resp.text())["status"] == "ok"
            async with http.get(f"http://127.0.0.1:{port}/c/spare/healthz") as resp:
                assert resp.status == 404
        output = await stop_and_read(proc)
    finally:
        await kill_if_running(proc)
        await telegram.stop()
        await slack.stop()
    assert proc.returncode == 0, output
    assert "running: 1 of 1 clubs" in output and "west-ham up" in output, output
    assert [s for s in SECRETS.values() if s in output] == [], output
    assert SECRETS["WHU_TG"].partition(":")[2] not in output
