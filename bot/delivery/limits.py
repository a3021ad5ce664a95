"""What the delivery layer asks of a rate limiter, declared (RateLimiter in this process,
SharedRateLimiter across replicas): both have every method, so nothing is probed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.delivery.ratelimit import POST, Limit


class Limiter(Protocol):
    """Sliding-window platform limits: plan, admit and count calls of a kind to a chat."""

    limits: dict[str, tuple[Limit, ...]]
    clock: Callable[[], float]
    sleep: Callable[[float], Awaitable[object]]

    def reserve(self, platform: str, chat: str, cost: int = 1,
                call: str = POST) -> float | None:
        """Plan calls in call order: the time the first may go (None: nothing planned)."""

    async def admit(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """Just before a call: wait for room, and count it."""

    async def acquire(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """Plan, wait and admit in one."""

    def release(self, platform: str, chat: str, slot: float) -> None:
        """Give back a planned slot whose message went with another."""

    async def wait_until(self, at: float) -> None:
        """Sleep until clock time `at`."""

    def interval(self, platform: str, chat: str, call: str = POST) -> float:
        """Seconds per call of this kind the chat can sustain."""

    async def budget(self, platform: str, chat: str, horizon: float, call: str = POST) -> int:
        """How many calls of a kind the chat could take within `horizon` seconds."""

    async def together(self, platform: str, chat: str, want: int) -> int:
        """How many more messages may go now in one call with the one just admitted."""

    async def admit_extra(self, platform: str, chat: str, n: int) -> None:
        """Count `n` messages going with the one just admitted."""

    async def answered(self, platform: str, chat: str) -> None:
        """The platform answered this process's last call to the chat."""
