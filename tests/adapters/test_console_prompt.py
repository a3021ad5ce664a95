"""The console chat while it waits for input: a message pushed to it then (an escalation,
someone else's report) starts on a line of its own and the prompt is shown again under it,
so the user sees where to type."""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TextIO

from bot.core.dispatch import Core
from bot.runtime import console_for
from handlers import sweep_escalations

PROMPT = "control> "


class Screen(io.StringIO):
    """The console's output, with a way to wait for what it writes next."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = asyncio.Event()

    def write(self, text: str) -> int:
        self.changed.set()
        return super().write(text)

    async def until(self, check: Callable[[], bool], timeout: float = 10) -> None:
        """Wait until check() holds, woken by each write (fails after `timeout`)."""
        while not check():
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), timeout)


@asynccontextmanager
async def console_at_prompt(core: Core) -> AsyncIterator[tuple[TextIO, Screen]]:
    """The control room's console chat, running and showing its first prompt: (what the
    user types, its screen); /quit and its tap removed after."""
    read_fd, write_fd = os.pipe()
    typed = os.fdopen(write_fd, "w")
    out = Screen()
    console = console_for(core, "control", stdin=os.fdopen(read_fd), stdout=out)
    chat = asyncio.create_task(console.run())
    try:
        await out.until(lambda: out.getvalue().endswith(PROMPT))
        yield typed, out
    finally:
        typed.write("/quit\n")
        typed.close()
        await asyncio.wait_for(chat, 10)
        core.notifier.taps.remove(console.tap)


async def test_a_pushed_escalation_is_followed_by_the_prompt(core, clock, say) -> None:
    async with console_at_prompt(core) as (_, out):
        await say("/incident missile @seg_ne s4 coins thrown", as_="steward")
        # the first tier
        await sweep_escalations(core, core.store, clock.now() + timedelta(seconds=61))
        screen = out.getvalue()
        pushed = screen.rindex("INC-1 unacknowledged")
        assert screen.endswith("\n" + PROMPT), screen[-200:]  # where to type, under it
        assert screen.rindex(PROMPT) > pushed
        assert PROMPT + "  →" not in screen  # never glued to the prompt line
        assert screen.count(PROMPT) >= 3  # first prompt, after the card, after each tier


async def test_the_own_answer_is_not_followed_by_a_second_prompt(core) -> None:
    async with console_at_prompt(core) as (typed, out):
        typed.write("/incident pyro @away_upper s3 flare\n")
        typed.flush()
        await out.until(lambda: "Logged INC-1" in out.getvalue()
                    and out.getvalue().endswith(PROMPT))
        after = out.getvalue().split(PROMPT)[1]  # between the first prompt and the next
        assert "→ control: " in after and "Logged INC-1" in after  # the card, then the answer
        assert out.getvalue().count(PROMPT) == 2
