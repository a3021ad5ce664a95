"""Telegram adapter tests fail on any ERROR logged while they run: an error the bot logs on
a path a test exercises (a Bot API answer it cannot read, a failed delivery) is a failure
even when the test's own assertions pass."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from bot.core.dispatch import Core
from bot.tasks import cancel_and_wait


def logged_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The ERROR (or worse) records of the test so far, one line each."""
    return [f"{r.name}: {r.getMessage()}" + (f" ({r.exc_info[1]!r})" if r.exc_info else "")
            for when in ("setup", "call", "teardown") for r in caplog.get_records(when)
            if r.levelno >= logging.ERROR]


@pytest.fixture(autouse=True)
def no_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fail the test if anything logged an ERROR during it (its fixtures' teardown too)."""
    # Objects earlier tests (other modules) left behind are collected now, not while this
    # test runs: their "Task was destroyed but it is pending" is not this test's error.
    gc.collect()
    caplog.clear()
    caplog.set_level(logging.INFO)
    yield
    errors = logged_errors(caplog)
    if errors:
        pytest.fail("errors logged during the test:\n" + "\n".join(errors), pytrace=False)


@pytest_asyncio.fixture
async def core(core: Core) -> AsyncIterator[Core]:
    """The shared core, its delivery workers stopped at the end (after the adapters), so
    none is left to be destroyed pending while a later test runs."""
    yield core
    try:  # what a test left queued (an adapter already stopped) is not waited for long
        await asyncio.wait_for(core.notifier.drain(), 2)
    except TimeoutError:
        pass
    await cancel_and_wait(core.notifier._workers.values())
