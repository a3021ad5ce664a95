"""The wall screen's test helpers: a flashpoint of reports, and a control room that can be
stopped and started again on the same port (a crashed and restarted bot)."""

from __future__ import annotations

from datetime import timedelta

from aiohttp.test_utils import TestServer

from bot.core.dispatch import Core
from bot.runtime import control_room_for
from bot.web.server import ControlRoom
from rigs.botproc import TYPES, ZONES


def flashpoint_text(k: int) -> str:
    """The k-th report of a flashpoint replay (bench/flashpoint.py's mix: mostly S2/S3, every
    ninth S4, one S5 segregation breach)."""
    sev = 5 if k == 150 else 4 if k % 9 == 0 else 2 + k % 2
    kind = "segregation_breach" if sev == 5 else TYPES[k % len(TYPES)]
    zone = "seg_ne" if sev == 5 else ZONES[(k // len(TYPES) * 7 + k) % len(ZONES)]
    return f"/incident {kind} @{zone} s{sev} fans in block {k} throwing coins at stewards"


async def flashpoint(say, clock, n: int = 200, first: int = 1) -> None:
    """n distinct open incidents in about a minute of the virtual clock."""
    for k in range(first, first + n):
        result = await say(flashpoint_text(k), as_="steward", dedupe=f"flash:{k}")
        assert result is not None and result.reply.ok, result
        if not result.reply.title.startswith("Logged"):  # joined a nearby one: its own
            split = next(b.command for row in result.reply.buttons for b in row
                         if b.command.endswith(" new"))
            assert (await say(split, as_="steward")).reply.ok
        clock.advance(timedelta(milliseconds=300))


class Restartable:
    """A control-room server that can be stopped and started again on the same port."""

    def __init__(self, core: Core, port: int) -> None:
        self.core, self.port = core, port
        self.server: TestServer | None = None
        self.room: ControlRoom | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self.room = control_room_for(self.core, "http://127.0.0.1")
        self.server = TestServer(self.room.web_app(), host="127.0.0.1", port=self.port)
        await self.server.start_server()

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.close()
            self.server = None
