"""At start-up the bot says in one line when its Redis could lose a report already answered
"Logged" (or, with MATCHDAY_REQUIRE_DURABLE=1, refuses to start), and control sees it in
/status (the Slack Home tab shows the same board)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.app import App, StartupError
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from tests.conftest import Chat

LOST = "a crash can lose reports already answered 'Logged'"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


async def test_embedded_default_always_starts_without_a_warning(tmp_path: Path, caplog):
    app = App(load_settings(MATCHDAY_DATA_DIR=str(tmp_path)))
    try:
        with caplog.at_level(logging.WARNING):
            await app.start()
        assert not [w for w in _warnings(caplog) if LOST in w]
    finally:
        await app.stop()


async def test_everysec_warns_in_one_line_and_require_durable_refuses(tmp_path: Path, caplog):
    app = App(load_settings(MATCHDAY_DATA_DIR=str(tmp_path), MATCHDAY_APPENDFSYNC="everysec"))
    try:
        with caplog.at_level(logging.WARNING):
            await app.start()
    finally:
        await app.stop()
    lines = [w for w in _warnings(caplog) if LOST in w]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "appendfsync everysec" in lines[0] and "no replica" in lines[0]

    app = App(load_settings(MATCHDAY_DATA_DIR=str(tmp_path), MATCHDAY_APPENDFSYNC="everysec",
                            MATCHDAY_REQUIRE_DURABLE="1"))
    try:
        with pytest.raises(StartupError) as err:
            await app.start()
    finally:
        await app.stop()
    assert "\n" not in str(err.value) and "appendfsync everysec" in str(err.value)
    assert "MATCHDAY_REQUIRE_DURABLE" in str(err.value)


async def test_control_sees_the_risk_in_status_and_a_supervisor_does_not(redis_url, tmp_path):
    # the session's server keeps no append-only file and has no replica
    app = App(load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path)))
    try:
        core = await app.start()
        await ensure_sample_fixture(core)
        say = Chat(core)
        control = (await say("/status", as_="control")).reply.text
        assert "keeps no append-only file and has no replica" in control
        assert LOST in control
        seen = (await say("/status", as_="supervisor")).reply
        assert seen.ok and LOST not in seen.text  # not their concern
    finally:
        await app.stop()
