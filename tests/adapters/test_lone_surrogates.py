"""Issue 22 item 3: a lone UTF-16 surrogate in what someone sends ("\\ud800" is legal JSON; a
terminal hands undecodable bytes over as surrogates) is logged as U+FFFD on every platform,
and the message is handled like any other, never a failure."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from bot.core.dispatch import Core
from bot.domain.messages import Attachment, Command
from bot.runtime import console_for, slack_for, telegram_for
from bot.settings import Settings
from bot.web.host import application
from rigs.fakes.slack_api import FakeSlack, bolt_request, event_body
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.cli import (
    ROOT,
)
from tests.support.slack import (
    slack_settings,
)
from tests.support.telegram import (
    STEWARD,
    Feed,
    sends_to,
    tg_settings,
)

LONE = "\ud800"


async def descriptions(core: Core) -> list[str]:
    fx = await core.active_fixture()
    assert fx is not None
    return [e.data["description"] for e in await core.store.events(fx.id)
            if e.kind == "incident.reported"]


def test_a_command_and_its_evidence_hold_valid_text_from_the_start():
    cmd = Command("telegram", "1", "1", f"/note a{LONE}b", "k", user_name=f"Sam{LONE}",
                  attachments=(Attachment("document", "f", caption=f"c{LONE}",
                                          detail=f"{LONE}.pdf"),))
    assert (cmd.text, cmd.user_name) == ("/note a\ufffdb", "Sam\ufffd")
    assert (cmd.attachments[0].caption, cmd.attachments[0].detail) == ("c\ufffd", "\ufffd.pdf")
    (cmd.text + cmd.user_name).encode()  # nothing left that UTF-8 cannot hold


# ---------------------------------------------------------------- Telegram (PTB, fake Bot API)
@pytest_asyncio.fixture
async def fake_tg() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    yield fake
    await fake.stop()


async def test_telegram_polling_logs_a_lone_surrogate_as_replacement(core, settings, fake_tg):
    adapter = telegram_for(core, tg_settings(settings, fake_tg), poll_timeout=1)
    await adapter.start()
    try:
        update = fake_tg.message_update(STEWARD, f"/incident missile @stb_walkway s3 coins "
                                                 f"{LONE} thrown", first_name=f"Sam{LONE}")
        await Feed(fake_tg)(update)  # served by getUpdates as JSON: "\ud800"
        await fake_tg.wait_for(sends_to(STEWARD, "Logged INC-1"))
    finally:
        await adapter.stop()
    assert await descriptions(core) == ["coins \ufffd thrown"]


async def test_telegram_webhook_logs_a_lone_surrogate_as_replacement(core, settings, fake_tg):
    adapter = telegram_for(core, tg_settings(settings, fake_tg), webhook=True)
    await adapter.start()
    client = TestClient(TestServer(application(adapter.routes())))
    await client.start_server()
    try:
        await Feed(fake_tg, client)(fake_tg.message_update(
            STEWARD, f"/incident pyro @stb_walkway s4 flare {LONE}"))
        await fake_tg.wait_for(sends_to(STEWARD, "Logged INC-1"))
    finally:
        await client.close()
        await adapter.stop()
    assert await descriptions(core) == ["flare \ufffd"]


# ---------------------------------------------------------------- Slack (Bolt, signed request)
async def test_slack_event_logs_a_lone_surrogate_as_replacement(core: Core, settings: Settings):
    fake = FakeSlack()
    await fake.start()
    adapter = slack_for(core, slack_settings(settings, fake))
    await adapter.start()
    try:
        ev = {"type": "message", "channel_type": "im", "channel": "D0CONTROL1",
              "user": "U0CONTROL1", "text": f"/incident drone @stb_walkway s2 {LONE} over",
              "ts": "1700000100.000100"}
        resp = await adapter.bolt_app.async_dispatch(
            bolt_request(event_body(ev, "Ev0LONE"), content_type="application/json"))
        assert resp.status == 200
        done = await fake.wait_call("chat.postMessage",
                                    lambda c: "Logged INC-1" in c.params.get("text", ""))
        assert done
    finally:
        await adapter.stop()
        await fake.stop()
    assert await descriptions(core) == ["\ufffd over"]


# ---------------------------------------------------------------- console
async def test_console_logs_a_lone_surrogate_and_carries_on(core):
    out = io.StringIO()
    console = console_for(core, "steward", stdout=out, stdin=io.StringIO(
        f"/incident missile @stb_walkway s3 coins {LONE} thrown\n/incident 1\n"))
    await console.run()
    assert await descriptions(core) == ["coins \ufffd thrown"]
    assert out.getvalue().count("coins \ufffd thrown") >= 2  # logged, then read back


@pytest.mark.parametrize("io_env", [{}, {"PYTHONIOENCODING": "utf-8"}],
                         ids=["surrogateescape", "strict"])
def test_console_run_reads_undecodable_bytes_as_replacement(store, redis_url, tmp_path, io_env):
    # b"\xed\xa0\x80" is U+D800 written as if it were a character: not UTF-8
    stdin = (b"/incident missile @stb_walkway s3 coins \xed\xa0\x80 thrown\n"
             b":as police_commander\n/status\n/quit\n")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PYTHONIOENCODING")}
    env |= {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path), **io_env}
    p = subprocess.run([sys.executable, "-m", "bot.cli", "run", "--as", "steward"],
                       input=stdin, env=env, capture_output=True, timeout=60, cwd=ROOT)
    out: Any = p.stdout.decode()
    assert p.returncode == 0 and "Traceback" not in p.stderr.decode(), p.stderr.decode()
    assert "Logged INC-1" in out and "“coins \ufffd\ufffd\ufffd thrown”" in out
    assert "Open: 1 (unacknowledged 1)" in out  # the next line ran too
