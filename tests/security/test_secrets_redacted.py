"""Issue #20, item 5: no configured secret is printed, whatever fails: a token Telegram
rejects, a Slack invalid_auth, a Redis password that is refused (with an '@' in it), or a
library logging a secret in its message, arguments or traceback."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
import redis

from bot.app import App, StartupError, safe_url
from bot.embedded_redis.supervisor import find_server_binary
from bot.settings import load_settings
from rigs.fakes.slack_api import FakeSlack, signed_headers, slash_body
from rigs.fakes.telegram_api import FakeTelegram
from rigs.net import free_port
from tests.support.process import (
    kill_if_running,
    started_or_exited,
    stop_and_read,
)

ROOT = Path(__file__).resolve().parent.parent.parent
TG_SECRET_PART = "AAH-rejected_Secret-Token-value"
SECRETS = {"TELEGRAM_BOT_TOKEN": f"987654321:{TG_SECRET_PART}",
           "TELEGRAM_WEBHOOK_SECRET": "tg-webhook-Secret-42",
           "SLACK_BOT_TOKEN": "xoxb-1111-2222-SlackBotSecret",
           "SLACK_APP_TOKEN": "xapp-1-A0-3333-SlackAppSecret",
           "SLACK_SIGNING_SECRET": "slack-signing-Secret-55"}
REDIS_PASSWORD = "hunter2@not-the-pass"  # an '@' in it: the part after it used to show


def leaks(text: str, secrets: list[str]) -> list[str]:
    """The secrets (or their telling halves) found in the text."""
    found = [s for s in secrets if s in text]
    for s in secrets:  # a password split at an '@' or ':' must not show in part either
        found += [p for p in s.replace(":", "@").split("@") if len(p) >= 6 and p in text]
    return found


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SLACK_", "REDIS_URL", "MATCHDAY_"))}
    return env | extra


async def matchday(*args: str, env: dict[str, str], timeout: float = 60) -> tuple[int, str]:
    """Run `matchday <args>` to its end; (exit code, stdout + stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args, env=env, cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode or 0, out.decode() + err.decode()


# ------------------------------------------------------------------ real failures, real CLI
@pytest.mark.parametrize("fmt", ["text", "json"])
async def test_a_token_telegram_rejects_is_not_printed(redis_url, tmp_path, fmt):
    tg = FakeTelegram()  # answers 401 to any token but its own, as Telegram does
    base = await tg.start()
    try:
        code, output = await matchday("run", env=clean_env(
            REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path), TELEGRAM_BASE_URL=base,
            MATCHDAY_LOG_FORMAT=fmt, **SECRETS))
    finally:
        await tg.stop()
    assert code == 1 and "Telegram refused the bot token" in output, output
    assert leaks(output, [*SECRETS.values(), TG_SECRET_PART]) == [], output


async def test_a_slack_invalid_auth_prints_no_secret(redis_url, tmp_path):
    slack = FakeSlack()
    await slack.start()
    slack.fail_next("auth.test", status=200, body={"ok": False, "error": "invalid_auth"})
    port = free_port()
    secrets = {k: v for k, v in SECRETS.items() if k.startswith("SLACK_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", "--http", cwd=ROOT,
        env=clean_env(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path), PORT=str(port),
                      SLACK_API_URL=slack.api_url, **secrets),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        assert await started_or_exited(proc, port)
        body = slash_body("/md-status", "", user="U0CONTROL1", channel="C0CONTROL",
                          trigger="t-auth", response_url=slack.response_url("x"))
        headers = signed_headers(body, secret=secrets["SLACK_SIGNING_SECRET"])
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body,
                                 headers=headers) as resp:
                assert resp.status == 200  # Bolt answers the user "could not authorize"
        output = await stop_and_read(proc)
    finally:
        await kill_if_running(proc)
        await slack.stop()
    assert "invalid_auth" in output, output  # the failure was logged ...
    assert leaks(output, list(secrets.values())) == [], output  # ... without a secret


def proc_wait(proc: subprocess.Popen[bytes]) -> None:
    """A short pause while a server starts (it ends early if the server exits)."""
    try:
        proc.wait(0.05)
    except subprocess.TimeoutExpired:
        pass


@pytest.fixture
def locked_redis() -> Iterator[int]:
    """A Redis server of the test's own that wants a password the bot does not have."""
    port = free_port()
    proc = subprocess.Popen([str(find_server_binary()), "--port", str(port), "--bind",
                             "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--requirepass", "the-right-one"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, password="the-right-one", retry_on_error=[],
                         socket_connect_timeout=1)
    try:
        deadline = time.monotonic() + 10
        while True:  # until it listens (it was just started)
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert proc.poll() is None and time.monotonic() < deadline, "no redis-server"
                proc_wait(proc)
        yield port
    finally:
        client.close()
        proc.terminate()
        proc.wait(10)


async def test_a_refused_redis_password_with_an_at_is_not_printed(locked_redis, tmp_path):
    url = f"redis://:{REDIS_PASSWORD}@127.0.0.1:{locked_redis}/0"
    code, output = await matchday("fixtures", env=clean_env(
        REDIS_URL=url, MATCHDAY_DATA_DIR=str(tmp_path)))
    assert code == 1 and f"127.0.0.1:{locked_redis}" in output, output
    assert leaks(output, [REDIS_PASSWORD]) == [], output


# ------------------------------------------------------------------ every REDIS_URL form
AT_PASSWORD = "s3cret@passw0rd:more@words-here"


@pytest.mark.parametrize("template", [
    "redis://:{pw}@127.0.0.1:{port}/0",
    "redis://matchday:{pw}@127.0.0.1:{port}/0",
    "rediss://:{pw}@127.0.0.1:{port}/0",
    "unix://:{pw}@/nonexistent/redis.sock?db=0",
    "unix:///nonexistent/redis.sock?db=0&password={pw}",
    "redis+sentinel://:{pw}@127.0.0.1:{port},127.0.0.1:{port}/matchday",
    "redis+cluster://matchday:{pw}@127.0.0.1:{port}",
])
async def test_no_part_of_a_redis_password_shows_when_the_store_is_down(template, tmp_path):
    url = template.format(pw=AT_PASSWORD, port=free_port())  # nothing listens there
    assert leaks(safe_url(url), [AT_PASSWORD]) == [], safe_url(url)
    app = App(load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=str(tmp_path)))
    with pytest.raises(StartupError) as err:
        await app.start_store()
    assert "not answering" in str(err.value)
    assert leaks(str(err.value), [AT_PASSWORD]) == [], str(err.value)


# ------------------------------------------------------------------ the log records themselves
@pytest.fixture
def root_logging() -> Iterator[io.StringIO]:
    """The root logger as `matchday` sets it up (one stderr-like handler), restored after."""
    from bot.observe import redact

    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    out = io.StringIO()
    root.handlers = [logging.StreamHandler(out)]
    try:
        yield out
    finally:
        redact.uninstall()
        root.handlers, root.level = saved, level


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_secrets_are_masked_in_message_args_and_traceback_even_on_a_later_handler(
        root_logging, fmt, redis_url):
    from bot.observe.logs import configure_logging
    from bot.observe.redact import add_secret, settings_secrets

    url = f"redis://:{REDIS_PASSWORD}@127.0.0.1:1/0"
    settings = load_settings(REDIS_URL=url, **SECRETS)
    configure_logging(fmt, secrets=settings_secrets(settings))
    own = io.StringIO()  # a library that adds its own handler after start-up
    library = logging.getLogger("some.library")
    library.addHandler(logging.StreamHandler(own))
    add_secret("added-later-Secret-77")
    try:
        everything = [*SECRETS.values(), TG_SECRET_PART, REDIS_PASSWORD, "added-later-Secret-77"]
        for secret in everything:
            library.warning("calling https://api.example/bot%s/getMe", secret)
            library.error("as message " + secret)
            try:
                raise RuntimeError(f"The token `{secret}` was rejected")
            except RuntimeError:
                library.exception("failed with %r", {"token": secret})
        library.error("url %s", url.replace(REDIS_PASSWORD, "hunter2%40not-the-pass"))
    finally:
        library.handlers.clear()
    for text in (root_logging.getvalue(), own.getvalue()):
        assert "RuntimeError: The token `***` was rejected" in text
        assert leaks(text, everything) == [], text
    if fmt == "json":
        rows = [json.loads(line) for line in root_logging.getvalue().splitlines()
                if line.startswith("{")]
        assert any("***" in r.get("exc", "") for r in rows)
