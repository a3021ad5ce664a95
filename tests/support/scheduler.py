"""A scheduler on an injected clock, recording what it sends."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.dispatch import Core
from bot.delivery.ratelimit import unlimited
from bot.domain.messages import Reply
from bot.runtime import attach_scheduler, scheduler_for
from bot.schedule.scheduler import Scheduler
from rigs.recording_sink import RecordingSink

FX = "arsenal-spurs-20261128"  # Sat 28 Nov 2026 15:00 GMT
FX_TITLE = "Arsenal v Spurs"


class Recorder(RecordingSink):
    """A console sink that remembers what went where, and when (virtual time)."""

    def __init__(self, core: Core) -> None:
        super().__init__("console")
        self.core = core
        self.sent: list[tuple[datetime, str, Reply]] = []
        core.notifier.limiter = unlimited()
        core.notifier.add_sink(self)

    async def on_send(self, chat: str, reply: Reply) -> None:
        self.sent.append((self.core.clock.now(), chat, reply))

    def titles(self, chat: str = "command", of: str = FX_TITLE) -> list[str]:
        """Titles of what reached a chat about one fixture (briefings name it)."""
        return [r.title for _, c, r in self.sent if c == chat and of in r.title]


async def add(say, text: str = "Arsenal v Spurs 2026-11-28 15:00 cat=B") -> None:
    r = await say(f"/fixture add {text}", as_="admin")
    assert r.reply.ok, r.reply.text


async def started(core: Core, clock, live: bool = False) -> Scheduler:
    s = attach_scheduler(core, scheduler_for(core, clock, live=live))
    await s.start()
    return s


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)
