"""Issue #20, item 1: Slack over HTTP is signed, pinned to the installed workspace, and a
command's answer (a control-room sign-in link) goes only to a response_url on Slack's hosts."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio
from pydantic import SecretStr

from bot.adapters.slack.slack_adapter import SlackAdapter
from bot.core.dispatch import Core
from bot.runtime import slack_for
from bot.settings import Settings
from bot.store.web_sessions import WebSessions
from rigs.fakes.slack_api import SIGNING_SECRET, FakeSlack, signed_headers, slash_body
from rigs.net import free_port, serving
from tests.support.fakes import served
from tests.support.process import (  # noqa: F401 (fixtures)
    started_or_exited,
)

ROOT = Path(__file__).resolve().parent.parent.parent
CONTROL, DM = "U0CONTROL1", "D0CONTROL1"  # a roster control user, in their DM with the bot
_n = iter(range(1, 10_000))


def bot_env(redis_url: str, tmp_path: Path, port: int, slack: FakeSlack,
            **extra: str) -> dict[str, str]:
    """The environment of a `matchday run` with Slack pointed at the fake."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SLACK_", "REDIS_URL", "MATCHDAY_"))}
    return env | {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path),
                  "PORT": str(port), "SLACK_API_URL": slack.api_url,
                  "SLACK_BOT_TOKEN": "xoxb-test", **extra}


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()
            await proc.wait()


fake = served("fake", FakeSlack)


# ------------------------------------------------------------------ start-up, transports
async def test_http_mode_without_signing_secret_refuses_to_start(redis_url, tmp_path, fake):
    port = free_port()
    env = bot_env(redis_url, tmp_path, port, fake, SLACK_APP_TOKEN="xapp-test")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", "--http", env=env, cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        started = await started_or_exited(proc, port)
        assert not started, "served Slack over HTTP with no signing secret"
        err = (await proc.stderr.read()).decode()
        assert proc.returncode == 1
        lines = [line for line in err.splitlines() if line.strip()
                 and "a crash can lose reports" not in line]  # the test Redis keeps no AOF
        assert len(lines) == 1 and "Traceback" not in err, err
        assert lines[0].startswith("matchday: ") and "SLACK_SIGNING_SECRET" in lines[0]
    finally:
        await stop(proc)


async def test_socket_mode_has_no_slack_http_route(redis_url, tmp_path, fake):
    port = free_port()
    env = bot_env(redis_url, tmp_path, port, fake, SLACK_APP_TOKEN="xapp-test",
                  SLACK_SIGNING_SECRET=SIGNING_SECRET)
    proc = await asyncio.create_subprocess_exec(  # the control room keeps an HTTP port open
        sys.executable, "-m", "bot.cli", "run", "--web", env=env, cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE)
    try:
        assert await started_or_exited(proc, port)
        await fake.connected(timeout=30)  # Socket Mode is what carries Slack here
        body = slash_body("/md-web", "", user=CONTROL, channel=DM, trigger="t-sock",
                          response_url=fake.response_url("sock"), channel_name="directmessage")
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body,
                                 headers=signed_headers(body)) as resp:
                assert resp.status == 404
    finally:
        await stop(proc)
    assert proc.returncode == 0


# ------------------------------------------------------------------ requests over HTTP mode
def http_settings(settings: Settings, fake: FakeSlack) -> Settings:
    # The legitimate answers go to the fake as http://localhost:<port>: that host is the one
    # allowed here, so 127.0.0.1 (the attacker's server below) stands for any other host.
    return settings.model_copy(update={
        "slack_bot_token": SecretStr("xoxb-test"),
        "slack_signing_secret": SecretStr(SIGNING_SECRET), "slack_api_url": fake.api_url,
        "slack_response_hosts": "localhost"})


@pytest_asyncio.fixture
async def endpoint(core: Core, settings: Settings, fake: FakeSlack
                   ) -> AsyncIterator[tuple[SlackAdapter, str]]:
    adapter = slack_for(core, http_settings(settings, fake))
    await adapter.start()
    # a control-room screen is running (links are handed out only then)
    await WebSessions(core.store.gateway).announce("http://127.0.0.1:8080", 60)
    async with serving(adapter.routes()) as port:
        yield adapter, f"http://127.0.0.1:{port}/slack/events"
    await adapter.stop()


# Someone else's server, listening for whatever the bot posts to its response_url.
attacker = served("attacker", FakeSlack)


def slack_url(fake: FakeSlack, key: str) -> str:
    return fake.response_url(key).replace("127.0.0.1", "localhost")


async def post_web(url: str, response_url: str, org: str = "", **kw: Any) -> int:
    """A correctly signed `/md-web` from the control user's DM; the HTTP status."""
    body = slash_body("/md-web", "", user=CONTROL, channel=DM, trigger=f"t-{next(_n)}",
                      response_url=response_url, channel_name="directmessage", **kw)
    body += f"&enterprise_id={org}" if org else ""
    async with aiohttp.ClientSession() as http:
        async with http.post(url, data=body, headers=signed_headers(body)) as resp:
            return resp.status


async def sign_in_links(core: Core) -> list[dict[str, str]]:
    return [e for e in await core.facades.audit.audit_log(50) if e["action"] == "web.link"]


async def test_the_control_user_gets_a_sign_in_link_at_slacks_response_url(
        endpoint, fake, core):
    _, url = endpoint
    assert await post_web(url, slack_url(fake, "mine")) == 200
    [answer] = await fake.wait_call("respond", lambda c: c.params["key"] == "mine")
    assert "/control/" in answer.params["text"] and "Control room" in str(answer.params)


async def test_a_response_url_on_another_host_gets_nothing_and_is_audited(
        endpoint, fake, attacker, core):
    adapter, url = endpoint
    assert await post_web(url, attacker.response_url("steal")) == 400
    [refusal] = [e for e in await core.facades.audit.audit_log(10) if e["action"] == "refused"]
    assert refusal["who"] == f"slack:{CONTROL}" and "response_url" in refusal["detail"]
    assert "127.0.0.1" in refusal["detail"]
    # the same person asking properly is answered: the refused request left nothing behind
    assert await post_web(url, slack_url(fake, "mine")) == 200
    await fake.wait_call("respond", lambda c: c.params["key"] == "mine")
    await adapter.flush()
    assert attacker.calls == [] and len(await sign_in_links(core)) == 1


async def test_a_signed_request_from_another_workspace_is_refused(endpoint, fake, core):
    adapter, url = endpoint
    assert await post_web(url, slack_url(fake, "other"), team="T0OTHER") == 403
    [refusal] = [e for e in await core.facades.audit.audit_log(10) if e["action"] == "refused"]
    assert "T0OTHER" in refusal["detail"] and "workspace" in refusal["detail"]
    assert await post_web(url, slack_url(fake, "mine")) == 200
    await fake.wait_call("respond", lambda c: c.params["key"] == "mine")
    await adapter.flush()
    assert [c.params["key"] for c in fake.of("respond")] == ["mine"]
    assert len(await sign_in_links(core)) == 1


async def test_an_org_wide_install_takes_its_workspaces_and_refuses_other_orgs(
        core, settings):
    grid = FakeSlack(team_id="T0HQ", enterprise_id="E0ORG", enterprise_install=True)
    await grid.start()
    adapter = slack_for(core, http_settings(settings, grid))
    await adapter.start()  # the delivery layer's Slack sink: answers go out through it
    try:
        async with serving(adapter.routes()) as port:
            url = f"http://127.0.0.1:{port}/slack/events"
            # a slash command from any workspace of the org carries that workspace and the org
            assert await post_web(url, slack_url(grid, "org"), team="T0BRANCH", org="E0ORG") == 200
            assert await post_web(url, slack_url(grid, "else"), team="T0BRANCH",
                                  org="E0ELSE") == 403
            assert await post_web(url, slack_url(grid, "none"), team="T0HQ") == 403
            await grid.wait_call("respond", lambda c: c.params["key"] == "org")
            await adapter.flush()
            assert [c.params["key"] for c in grid.of("respond")] == ["org"]
    finally:
        await adapter.stop()
        await grid.stop()


def test_response_hosts_are_slacks_unless_configured():
    from bot.adapters.slack.guard import host_allowed

    default = ("hooks.slack.com", "*.slack.com")
    assert host_allowed("https://hooks.slack.com/commands/T0/1/abc", default)
    assert host_allowed("https://hooks.slack.com:443/actions/T0/1/abc", default)
    assert not host_allowed("http://hooks.slack.com/commands/T0/1/abc", default)  # https only
    for bad in ("https://hooks.slack.com.evil.example/x", "https://evilslack.com/x",
                "https://slack.com@evil.example/x", "https://evil.example/hooks.slack.com",
                "https://hooks.slack-gov.com/commands/x", "javascript:alert(1)", "",
                "https://[::1/x"):
        assert not host_allowed(bad, default), bad
    gov = ("hooks.slack-gov.com", "*.slack-gov.com")
    assert host_allowed("https://hooks.slack-gov.com/commands/x", gov)
