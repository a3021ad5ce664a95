"""When the bot starts (`matchday run`) it says in one line if its Redis could lose a report
already answered "Logged" (or, with MATCHDAY_REQUIRE_DURABLE=1, refuses to start), and control
sees it in /status (the Slack Home tab shows the same board)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import App
from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from rigs.net import free_port
from tests.conftest import Chat

ROOT = Path(__file__).resolve().parent.parent
LOST = "a crash can lose reports already answered 'Logged'"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


async def _checked(app: App, caplog: pytest.LogCaptureFixture) -> list[str]:
    with caplog.at_level(logging.WARNING):
        await app.start()
        await app.check_durability()  # what `matchday run` does before answering anyone
    return [w for w in _warnings(caplog) if LOST in w]


async def test_embedded_default_always_starts_without_a_warning(tmp_path: Path, caplog):
    app = App(load_settings(REDIS_URL=None, MATCHDAY_DATA_DIR=str(tmp_path)))
    try:
        assert await _checked(app, caplog) == []
    finally:
        await app.stop()


async def test_embedded_everysec_warns_in_one_line(tmp_path: Path, caplog):
    app = App(load_settings(REDIS_URL=None, MATCHDAY_DATA_DIR=str(tmp_path),
                            MATCHDAY_APPENDFSYNC="everysec"))
    try:
        lines = await _checked(app, caplog)
    finally:
        await app.stop()
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "appendfsync everysec" in lines[0] and "no replica" in lines[0]


def test_run_with_require_durable_refuses_to_start_in_one_line(tmp_path: Path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SLACK_", "REDIS_URL"))} | {
        "MATCHDAY_DATA_DIR": str(tmp_path), "MATCHDAY_APPENDFSYNC": "everysec",
        "MATCHDAY_REQUIRE_DURABLE": "1", "PORT": str(free_port())}
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "run", "--web"], env=env, cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("matchday: Redis at "), proc.stderr
    assert "appendfsync everysec" in lines[0] and "MATCHDAY_REQUIRE_DURABLE=1" in lines[0]
    assert "running:" not in proc.stderr


async def test_control_sees_the_risk_in_status_and_a_supervisor_does_not(tmp_path, caplog):
    # a server of its own that keeps no append-only file and has no replica (not REDIS_URL,
    # which in CI may be a Sentinel set with replicas: durable, so nothing to warn about)
    server = EmbeddedRedis(tmp_path / "lone", persistent=False)
    app = App(load_settings(REDIS_URL=server.start(), MATCHDAY_DATA_DIR=str(tmp_path)))
    try:
        assert len(await _checked(app, caplog)) == 1
        assert app.core is not None
        await ensure_sample_fixture(app.core)
        say = Chat(app.core)
        control = (await say("/status", as_="control")).reply.text
        assert "keeps no append-only file and has no replica" in control
        assert LOST in control
        seen = (await say("/status", as_="supervisor")).reply
        assert seen.ok and LOST not in seen.text  # not their concern
    finally:
        await app.stop()
        server.stop()
