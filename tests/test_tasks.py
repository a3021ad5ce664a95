"""Stopping background tasks: a shutdown ends even when a cancel is swallowed once."""

from __future__ import annotations

import asyncio

from bot.tasks import cancel_and_wait


async def test_a_task_that_swallows_a_cancel_is_still_stopped():
    swallowed = []

    async def loop_like_a_reader() -> None:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:  # what redis-py's client sometimes does
                if swallowed:
                    raise
                asyncio.current_task().uncancel()  # type: ignore[union-attr]
                swallowed.append(True)

    plain = asyncio.create_task(asyncio.sleep(3600))
    stubborn = asyncio.create_task(loop_like_a_reader())
    await asyncio.sleep(0)
    # bounded, so a regression fails here instead of hanging the run
    await asyncio.wait_for(cancel_and_wait([plain, stubborn, None]), 10)
    assert plain.cancelled() and stubborn.cancelled()
    assert swallowed == [True]
