"""Pacing: each platform call waits for its rate-limit slot, of its kind (post, edit, pin),
booked in call order, spaced from the platform's last answer, and spent once (a Ticket)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from bot.delivery.board import EDIT_EVERY_SLOTS
from bot.delivery.limits import Limiter
from bot.delivery.ratelimit import (
    CHASE,
    EDIT,
    HOLD_S,
    POST,
    chat_gap,
    counted,
    is_group,
    shared_interval,
)
from bot.delivery.sink import BOT_WIDE
from bot.domain.messages import Outbound

T = TypeVar("T")


@dataclass
class Ticket:
    """A rate-limit slot taken before a call is known: which kind, for which chat (the chat,
    or BOT_WIDE for a tap's answer). Spent by the first call it covers."""

    call: str | None
    chat: str
    at: float | None = None  # when its slot was taken, on the limiter's clock (see STALE_S)


# A slot taken longer ago than this is taken again just before the call (Pacer.slot). The
# shared windows count a send as if HOLD_S later until its answer re-stamps it; a send that
# waited longer between its take and the call (a slow store write in between: the outbox's
# in-flight mark during a failover) had left the windows when it arrived: with 1 send in 10
# held 3 s there, bench/shared_limits.py put 31 sends in 0.95 s eight times in 20 s with no
# fault at all, and none once such sends take their slot again.
STALE_S = HOLD_S / 2


def tap_answer(platform: str, chat: str, out: Outbound) -> bool:
    """An answer edited into the message whose button was just tapped, or a command's own
    answer (Slack's response_url), in a private chat (a guided form's next step): it is not
    paced at the chat's one message a second, which counts messages sent to a chat, so a
    steward's taps are answered at once. Only the bot-wide limit counts it; a 429 is still
    waited out like any other."""
    return bool(out.edit or out.respond) and chat != BOT_WIDE and not is_group(platform, chat)


class Pacer:
    """The limiter's slots for every chat, and when each chat's platform last answered."""

    def __init__(self, limiter: Limiter) -> None:
        self.limiter = limiter
        self.answered: dict[tuple[str, str], float] = {}  # when a chat's last call returned

    def now(self) -> float:
        """Now on the limiter's clock (its sleeps are what wait)."""
        return self.limiter.clock()

    def ticket(self, call: str | None, chat: str) -> Ticket:
        """A ticket for the slot just taken (of this kind, for this chat), stamped now."""
        return Ticket(call, chat, self.now())

    def answered_now(self, platform: str, chat: str) -> None:
        """The platform has just answered a call to this chat."""
        self.answered[(platform, chat)] = self.now()

    async def heard(self, platform: str, chat: str) -> None:
        """The platform has just answered a call to this chat: space the next from now,
        here and (a shared limiter) on every replica."""
        self.answered_now(platform, chat)
        await self.limiter.answered(platform, chat)

    async def sleep(self, seconds: float) -> None:
        """Wait on the limiter's sleeper (injected time in tests)."""
        await self.limiter.sleep(seconds)

    async def gate(self, platform: str, chat: str) -> None:
        """A sink's next message of one reply (see bot.delivery.sink.Gate)."""
        if chat != BOT_WIDE:  # the reply's previous message to this chat has just returned
            await self.heard(platform, chat)
            await self.spaced(platform, chat)
        await self.limiter.acquire(platform, chat, 1)

    async def spaced(self, platform: str, chat: str, call: str = POST) -> None:
        """A chat's next message waits the per-chat interval after the platform answered the
        last one, not after the limiter let it go: the limiter counts when a send leaves, the
        platform when it arrives, and a send held up on the way (a busy process, a slow
        network) would otherwise arrive too close to the next and be refused with a 429."""
        last = self.answered.get((platform, chat))
        gap = chat_gap(self.limiter.limits, platform, call)
        if last is not None and gap:
            wait = last + gap - self.now()
            if wait > 0:
                await self.limiter.sleep(wait)

    def reserve(self, platform: str, chat: str, out: Outbound, call: str) -> float | None:
        """Book a message's slot as it is queued (in call order: fair)."""
        booked = BOT_WIDE if tap_answer(platform, chat, out) else chat
        return self.limiter.reserve(platform, booked, 1, call)

    async def pace(self, platform: str, chat: str, last: float | None,
                   now: float) -> None:
        """At a flashpoint, space digests evenly at the chat's sustained rate (rather than
        spending a burst at once and then going dark), so each waits one interval at most:
        `last` is when the chat last took a digest or board turn (None: not paced)."""
        if last is None:
            return
        wait = last + self.limiter.interval(platform, chat) - now
        if 0 < wait:
            await self.limiter.sleep(wait)

    async def admit(self, platform: str, chat: str, slot: float | None,
                    call: str = POST) -> None:
        """Wait for the limiter's go for one call of this kind to this chat."""
        await self.spaced(platform, chat, call)
        if slot is not None:
            await self.limiter.wait_until(slot)
            await self.limiter.admit(platform, chat, 1, call)
        else:
            await self.limiter.acquire(platform, chat, 1, call)

    async def admit_tap(self, platform: str, slot: float | None, call: str = EDIT) -> None:
        """A tap's answer edited into the tapped message: only the bot-wide limit waits."""
        if slot is not None:
            await self.limiter.wait_until(slot)
            await self.limiter.admit(platform, BOT_WIDE, 1, call)
        else:
            await self.limiter.acquire(platform, BOT_WIDE, 1, call)

    async def readmit(self, platform: str, chat: str, call: str = POST) -> None:
        """A call not covered by a slot already taken (a retry, or a call of another kind
        than the one booked): counted anew, but not behind what is queued after it."""
        await self.spaced(platform, chat, call)
        await self.limiter.admit(platform, chat, 1, call)

    async def slot(self, ticket: Ticket, platform: str, chat: str, call: str) -> None:
        """Just before a platform call: spend the ticket when it covers this kind of call
        (the same limits count both) and was taken at most STALE_S ago, else take a slot
        for it now."""
        limits = self.limiter.limits
        held, ticket.call = ticket.call, None
        if ticket.at is not None and self.now() - ticket.at > STALE_S:
            held = None  # taken too long ago: the windows no longer count it
        if held == CHASE and call == POST:  # a chaser's slot was taken as the post it is
            return
        if held is not None and (held == call or counted(limits, platform, ticket.chat, held)
                                 == counted(limits, platform, ticket.chat, call)):
            return
        await self.readmit(platform, ticket.chat if ticket.chat == BOT_WIDE else chat, call)

    async def call(self, platform: str, chat: str, call: str,
                   fn: Callable[[], Awaitable[T]], ticket: Ticket | None = None) -> T:
        """One platform call of a kind, after its rate-limit slot (the ticket's, if it
        covers it)."""
        await self.slot(ticket or Ticket(None, chat), platform, chat, call)
        return await fn()

    async def budget(self, platform: str, chat: str, call: str, horizon: float) -> int:
        """How many calls of a kind this chat can take in the next `horizon` seconds."""
        return await self.limiter.budget(platform, chat, horizon, call)

    def interval(self, platform: str, chat: str) -> float:
        """Seconds per message this chat can sustain."""
        return self.limiter.interval(platform, chat)

    def board_gap(self, platform: str, chat: str, live_boards: int) -> float:
        """Seconds between board edits: a fixed share of the chat's sustained budget, and no
        more than its fair share of a platform-wide edit limit (Slack's chat.update counts
        per workspace) among the chats with a live board."""
        own = EDIT_EVERY_SLOTS * self.limiter.interval(platform, chat)
        limits = self.limiter.limits.get(platform, ())
        return max(1.0, own, max(1, live_boards) * shared_interval(limits, platform, EDIT))

    async def edit_wait(self, platform: str, chat: str) -> float:
        """0 when a board edit may go now; else how long before asking again. Where edits
        count against a limit shared by every chat (Slack's chat.update, per workspace) and
        none is free this moment, the edit waits its turn without holding up the chat's
        cards."""
        limits = self.limiter.limits
        wide = shared_interval(limits.get(platform, ()), platform, EDIT)
        if not wide or counted(limits, platform, chat, EDIT) == \
                counted(limits, platform, chat, POST):
            return 0.0
        if await self.budget(platform, chat, EDIT, 0.0) > 0:
            return 0.0
        return wide
