"""A copy that stops answering is named in the log once, however many calls beside each other
found it silent: bench/saturday.py --fault pause logged the same live-message copy three
times in the same millisecond, once per card being read."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.store.copies import Copies


async def test_a_silent_copy_is_one_line_for_calls_beside_each_other(
        caplog: pytest.LogCaptureFixture) -> None:
    copies = Copies(grace_s=0.01, what="live messages' ids")
    silent: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def answers() -> str:
        return "42"

    async def paused() -> str:
        return await silent

    caplog.set_level(logging.WARNING, "bot.store.copies")
    got = await asyncio.gather(*(copies.first({"fx": answers, "fx:copy7": paused})
                                 for _ in range(3)))
    assert got == [{"fx": "42"}] * 3
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["a copy of live messages' ids is not answering (fx:copy7): going on "
                     "with the other"], lines
    silent.set_result("42")
