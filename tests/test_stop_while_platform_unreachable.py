"""SIGTERM stops the bot within 5 s whatever it is doing, also while Slack's API is
unreachable (Socket Mode still connecting at start-up, or a message waiting to be posted),
and an unreachable platform is one log line, never a traceback (#22 item 22)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from bot.app import build_core
from bot.domain.clock import SystemClock
from bot.domain.messages import Outbound, Reply
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from bot.store.outbox import Outbox
from rigs.botproc import ROOT
from rigs.net import free_port

STOP_WITHIN_S = 5.0


async def queue_a_control_message(redis_url: str, data: Path) -> None:
    """A fixture with one outbox message for the control room (Slack C0CONTROL)."""
    store = Store.from_url(redis_url)
    await store.reset_for_tests()
    settings = load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(data))
    core = build_core(store, settings, SystemClock())
    fx = (await ensure_sample_fixture(core)).id
    await Outbox(store.gateway).add(fx, [Outbound("control", Reply("Kick-off in 10 minutes"),
                                          fixture=fx)])
    await store.close()


class Unreachable:
    """A port that drops every connection at once (Slack's API unreachable), counting them."""

    def __init__(self) -> None:
        self.attempts = 0
        self.more = asyncio.Event()
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        async def drop(_r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            self.attempts += 1
            self.more.set()
            w.transport.abort()

        self.server = await asyncio.start_server(drop, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def tried(self, n: int) -> None:
        while self.attempts < n:
            self.more.clear()
            await self.more.wait()

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


async def wait_for_line(err: asyncio.StreamReader, seen: list[str], words: str) -> None:
    while not any(words in line for line in seen):
        line = await err.readline()
        if not line:
            raise AssertionError("the bot exited early:\n" + "".join(seen))
        seen.append(line.decode())


@pytest.mark.parametrize("mode", ["socket mode start-up", "http, a message to post"])
async def test_sigterm_stops_the_bot_while_slack_is_unreachable(redis_url, tmp_path, mode):
    await queue_a_control_message(redis_url, tmp_path)
    slack = Unreachable()
    closed = await slack.start()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SLACK_", "REDIS_URL"))} | {
        "REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path), "PORT": str(free_port()),
        "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"http://127.0.0.1:{closed}/api/",
        "PYTHONUNBUFFERED": "1"}
    args = ["run"]
    if mode.startswith("socket"):
        env["SLACK_APP_TOKEN"] = "xapp-test"
        expect = "Failed to connect"  # Socket Mode retrying: start-up is not over
    else:
        env["SLACK_SIGNING_SECRET"] = "test-secret"
        args.append("--http")
        expect = "slack:C0CONTROL unreachable"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args, env=env, cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        await asyncio.wait_for(wait_for_line(proc.stderr, seen, expect), 30)
        await asyncio.wait_for(slack.tried(3), 30)  # retried: still one line
        proc.send_signal(signal.SIGTERM)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        rest = await asyncio.wait_for(proc.stderr.read(), STOP_WITHIN_S)
        await asyncio.wait_for(proc.wait(), STOP_WITHIN_S - (loop.time() - t0))
        err = "".join(seen) + rest.decode()
        assert "Traceback" not in err, err
        assert sum(expect in line for line in err.splitlines()) == 1, err
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await slack.stop()
