"""One chat's queue: the messages waiting for it, in order, and what /status shows of it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from bot.delivery import board as boards
from bot.delivery.ratelimit import POST
from bot.domain.messages import Outbound

Done = Callable[[str, str, str], Awaitable[None]]  # (platform, chat, message id) once sent


class Journal(Protocol):
    """Outbox entries' marks around each send (bot.delivery.durable.OutboxReader)."""

    async def flying(self, platform: str, chat: str,
                     marks: list[Journaled]) -> list[Journaled]:
        """A send of these entries to a chat is about to begin: those cleared to go (one
        left out: not from this replica, its copy is stale or the outbox's lease moved)."""

    async def delivered(self, platform: str, chat: str, marks: list[Journaled],
                        out: Outbound | None = None, mid: str = "") -> None:
        """The platform took the send (and where the live message now is)."""


class Journaled:
    """A `Done` that is an outbox entry's delivered mark (bot.delivery.durable.Mark): the
    worker hands these to the journal in batches, around the send, not one by one after."""

    fx: str
    entry: str
    term: int = 0  # the reader's lease term it was queued under (see OutboxReader.flying)
    journal: Journal  # the reader that queued it writes its marks around the send

    @property
    def tag(self) -> str:
        """How a platform's message metadata names this entry."""
        return f"{self.fx}/{self.entry}"


@dataclass
class Item:
    """One message waiting for one chat, plus who to tell once it is delivered."""

    out: Outbound
    queued_at: float
    done: list[Done] = field(default_factory=list)
    slot: float | None = None  # the time the limiter booked for it (in-process limiter)
    named: bool = False  # already named in a digest; its own card follows when there's room
    call: str = POST  # the kind of platform call it was booked as (a post, or an edit)

    @property
    def severity(self) -> int:
        """An incident card's severity (0 for other messages)."""
        card = self.out.reply.card
        return card.severity if card is not None else 0


@dataclass
class Health:
    """What /status shows about one chat's delivery."""

    platform: str
    chat: str
    queued: int = 0
    oldest_at: float | None = None
    last_429_at: float | None = None
    delivered: int = 0
    last_sent_at: float | None = None  # when the platform last took a message for it
    digests: int = 0
    refused: int = 0  # messages the platform refused for good (dropped, reason logged)
    warned: bool = False
    # what does not work in this chat for want of a permission -> why (see degraded)
    unsupported: dict[str, str] = field(default_factory=dict)

    def sent(self, n: int, at: float) -> None:
        """The platform took `n` of its messages at `at`."""
        self.delivered += n
        self.last_sent_at = at

    def stuck(self, now: float, after: float) -> bool:
        """Messages have waited over `after` seconds and none went out for as long (one
        waiting behind a flashpoint's cards, while the chat sends at its limit, is late,
        not stuck)."""
        return (self.oldest_at is not None and now - self.oldest_at > after
                and (self.last_sent_at is None or now - self.last_sent_at > after))


class ChatQueue:
    """The messages waiting for one chat, in order."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.wake = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()
        self.busy = False
        self.last_digest: float | None = None  # when the last digest went (flashpoint mode)
        self.board = boards.Board()
        self.sending: list[Item] = []  # taken off the queue, being sent (or retried)
        self.digested: set[tuple[str, str]] = set()  # (fixture, ref)s named in a digest only

    def put(self, item: Item) -> None:
        """Queue a message; a newer version of a queued live message replaces it in place."""
        out = item.out
        if out.urgent:  # life-safety: ahead of everything but earlier urgent messages
            at = next((i for i, old in enumerate(self.items) if not old.out.urgent),
                      len(self.items))
            self.items.insert(at, item)
            self.idle.clear()
            self.wake.set()
            return
        if out.ref and not out.quote and not out.edit:
            for old in self.items:
                o = old.out
                if o.ref == out.ref and o.fixture == out.fixture and not o.quote and not o.edit:
                    old.out = out  # superseded: only the latest state is sent
                    old.done += item.done
                    return
        self.items.append(item)
        self.idle.clear()
        self.wake.set()
