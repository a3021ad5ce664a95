"""The one delivery layer: one ordered queue per chat, one edit-or-send path, one retry policy.

Every adapter is a sink (bot.delivery.sink.PlatformSink); everything the bot says goes through
here, by way of an outbox (durable in the store, or in memory): replies, incident cards,
threads, escalations, briefings. The layer is in parts, each in its own module:

- routing.py: audience -> platform -> chats (per fixture where several run at once);
- pacing.py: each platform call waits for the rate limiter's slot of its kind (post, edit,
  pin; shared in Redis when the app wires one), spaced from the platform's last answer;
- chat_queue.py and chat_worker.py: one ordered queue and one worker per (platform, chat). A live
  message (`Outbound.ref`, e.g. an incident card) is posted once, its platform id kept in the
  store, and later versions edit it in place; queued versions of a card are coalesced. At a
  flashpoint (more new incidents than the chat can take in the next few seconds, or waiting
  longer than a couple of seconds) they go out as one digest, highest severity first (cards
  of severity 4+ still follow one by one), with a live board (board.py, its timers too);
  while paced, one incident's photos and videos go as one album where the sink has albums.
  A 429 waits the platform's retry_after and tries again, for ever: a message is delivered
  or superseded, never dropped.

This module holds the front: queueing (`send`, `reply`, `enqueue`), sinks, health, drain.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from bot.core.delivery_port import Outbox
from bot.delivery.chat_queue import ChatQueue, Done, Health, Item, Journaled
from bot.delivery.chat_worker import ChatWorker, Desk
from bot.delivery.lane import Lane
from bot.delivery.limits import Limiter
from bot.delivery.memory import MemoryOutbox
from bot.delivery.pacing import Pacer
from bot.delivery.ratelimit import RateLimiter
from bot.delivery.routing import Channels, Routes
from bot.delivery.scopes import Scopes
from bot.delivery.sink import PlatformSink, Unsupported
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_card import LiveRef
from bot.domain.messages import Outbound, Reply, Respond
from bot.tasks import cancel_and_wait

log = logging.getLogger(__name__)

# (fixture, references) -> each rendered from its record now (left out: it is gone)
Views = Callable[[str, list[LiveRef]], Awaitable[dict[LiveRef, Reply]]]


class Notifier:
    """Routes each Outbound to every sink that has chats for its audience, and delivers it."""

    def __init__(self, channels: Channels, limiter: Limiter | None = None,
                 readers: dict[str, frozenset[str]] | None = None, *,
                 clock: Callable[[], float] = time.monotonic, scopes: Scopes | None = None,
                 store: Any = None, outbox: Outbox | None = None,
                 wall: Callable[[], datetime] | None = None,
                 views: Views | None = None, lane: Lane | None = None,
                 fixtures: Callable[[str], Awaitable[Fixture | None]] | None = None) -> None:
        """`store`: where live messages' platform ids are kept (bot.store.message_refs);
        `fixtures`: a fixture by id (its ground, for per-ground chats); `outbox`: the durable one
        (bot.store.outbox.Outbox, read by bot.delivery.durable), else one in memory; `wall`:
        the board's local clock (its HH:MM); `views`: renders the outbox's live references
        at send time; `lane`: the life-safety lane (bot.delivery.lane)."""
        self.routes = Routes(channels, readers, scopes)
        self.views = views
        self.fixtures = fixtures
        self.pacer = Pacer(limiter or RateLimiter())
        self.clock = clock
        self.desk = Desk(self.pacer, clock, store=store, lane=lane,
                         **({"wall": wall} if wall is not None else {}))
        self.memory = MemoryOutbox(self._route)  # what has no fixture, or finds Redis away
        self.outbox: Outbox = outbox or self.memory
        # Observers that see every outbound once, by audience (console, replay, tests).
        self.taps: list[Callable[[Outbound], Awaitable[None]]] = []
        self._workers: dict[tuple[str, str], asyncio.Task[None]] = {}

    # ------------------------------------------------------------ the parts' settings
    @property
    def channels(self) -> Channels:
        """audience -> platform -> chats (the top-level audiences of channels.toml)."""
        return self.routes.channels

    @channels.setter
    def channels(self, channels: Channels) -> None:
        self.routes.channels = channels

    @property
    def scopes(self) -> Scopes:
        """Per-ground and per-fixture audiences."""
        return self.routes.scopes

    @scopes.setter
    def scopes(self, scopes: Scopes) -> None:
        self.routes.scopes = scopes

    @property
    def limiter(self) -> Limiter:
        """The rate limiter every platform call waits on."""
        return self.pacer.limiter

    @limiter.setter
    def limiter(self, limiter: Limiter) -> None:
        self.pacer.limiter = limiter

    @property
    def lane(self) -> Lane | None:
        """The life-safety lane: while a procedure holds it, nothing else is sent."""
        return self.desk.lane

    @lane.setter
    def lane(self, lane: Lane | None) -> None:
        self.desk.lane = lane

    @property
    def sinks(self) -> dict[str, PlatformSink]:
        """platform -> its sink."""
        return self.desk.sinks

    @property
    def store(self) -> Any:
        """Where live messages' platform ids are read."""
        return self.desk.store

    @store.setter
    def store(self, store: Any) -> None:
        self.desk.store = store

    @property
    def wall(self) -> Callable[[], datetime]:
        """The board's wall clock (its HH:MM)."""
        return self.desk.wall

    @wall.setter
    def wall(self, wall: Callable[[], datetime]) -> None:
        self.desk.wall = wall

    @property
    def board_sleep(self) -> Callable[[float], Awaitable[object]]:
        """How a board waits for its next turn (tests replace it and call poke())."""
        return self.desk.board_sleep

    @board_sleep.setter
    def board_sleep(self, sleep: Callable[[float], Awaitable[object]]) -> None:
        self.desk.board_sleep = sleep

    @property
    def health(self) -> dict[tuple[str, str], Health]:
        """(platform, chat) -> what /status shows of its delivery."""
        return self.desk.health

    @property
    def _queues(self) -> dict[tuple[str, str], ChatQueue]:
        return self.desk.queues

    def add_sink(self, sink: PlatformSink) -> None:
        """Register an adapter; one per platform. A sink that sends a reply as several
        messages asks its gate for a rate-limit slot before each after the first."""
        self.desk.sinks[sink.platform] = sink
        sink.gate = self.pacer.gate

    # ------------------------------------------------------------ routing
    def readers_of(self, audience: str, fixture: str = "") -> frozenset[str] | None:
        """Every role that reads an audience's chats (see Routes.readers_of)."""
        return self.routes.readers_of(audience, fixture)

    async def learn_grounds(self, fixtures: list[str]) -> None:
        """Know the ground of each fixture whose messages may go to per-ground chats."""
        if self.fixtures is not None:
            await self.routes.learn_grounds(fixtures, self.fixtures)

    def targets(self, audience: str, fixture: str = "") -> dict[str, list[str]]:
        """platform -> chats for an audience (see Routes.targets)."""
        return self.routes.targets(audience, fixture)

    def reachable(self, audience: str, fixture: str = "") -> int:
        """How many chats a message to an audience reaches (platforms with a sink)."""
        return sum(len(chats) for platform, chats in self.targets(audience, fixture).items()
                   if platform in self.sinks)

    # ------------------------------------------------------------ queueing
    async def send(self, outs: list[Outbound], once: str = "") -> None:
        """Queue everything for delivery and return at once: chats in parallel, each chat in
        order. The sender's own reply never waits for a busy control group; one failing
        platform never stops the others. `drain()` waits until the queues are empty.
        `once`: the command's dedupe key; a redelivered command adds nothing to an outbox
        its first run already wrote to."""
        for out in outs:
            for tap in self.taps:
                await tap(out)
        by_fx: dict[str, list[Outbound]] = {}
        for out in outs:
            if not out.stored:  # else the write that caused it already put it in the outbox
                by_fx.setdefault(out.fixture, []).append(out)
        for fx, group in by_fx.items():
            if not fx:  # about no fixture: no outbox of its own, and never deduped
                await self.memory.add(fx, group)
                continue
            try:
                await self.outbox.add(fx, group, once=once)
            except Exception:  # the store is down: deliver from memory rather than not
                log.warning("outbox unavailable; %d message(s) sent from memory", len(group))
                await self.memory.add(fx, group)

    async def _route(self, outs: list[Outbound]) -> None:
        """Queue messages for every chat of their audiences (the in-memory outbox's reader)."""
        if self.scopes:
            try:
                await self.learn_grounds([o.fixture for o in outs])
            except Exception:  # the store is down: the top-level audiences, not silence
                log.warning("fixture grounds unavailable; sending to the default chats")
        for out in outs:
            for platform, chats in self.targets(out.audience, out.fixture).items():
                if platform not in self.sinks:
                    continue
                for chat in chats:
                    self.enqueue(platform, chat, out)

    def reply(self, platform: str, chat: str, reply: Reply, *, quote: str = "",
              edit: str = "", respond: Respond | None = None) -> None:
        """Queue the answer to someone who just asked (quoting or editing a message, or
        through the command's own answer channel)."""
        self.enqueue(platform, chat, Outbound(f"user:{platform}:{chat}", reply, quote=quote,
                                              edit=edit, respond=respond))

    def enqueue(self, platform: str, chat: str, out: Outbound,
                done: Done | None = None) -> None:
        """Queue one message for one chat; `done` is awaited once it is delivered."""
        key = (platform, chat)
        if platform not in self.sinks:  # its adapter never started: nobody to hand it to
            log.warning("no %s sink: a message for %s:%s is not sent", platform, platform, chat)
            return
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = ChatQueue()
            worker = ChatWorker(self.desk, platform, chat, queue)
            self._workers[key] = asyncio.create_task(worker.run())
        call = self.desk.call_kind(platform, chat, out)
        slot = self.pacer.reserve(platform, chat, out, call)  # in call order: fair
        queue.put(Item(out, self.clock(), [done] if done else [], slot, call=call))
        if out.urgent and self.desk.lane is not None:  # this replica keeps its hold alive
            self.desk.lane.queued(out.urgent)
        queue.board.note(out, self.clock())
        if queue.board.dirty:
            queue.wake.set()
        self.desk.update_health(platform, chat, queue)

    # ------------------------------------------------------------ health
    def degraded(self, platform: str, chat: str, feature: str, exc: Unsupported) -> None:
        """A feature the platform refused for want of a permission (see Desk.degraded)."""
        self.desk.degraded(platform, chat, feature, exc)

    def restored(self, platform: str, chat: str, feature: str) -> None:
        """A feature that failed for want of a permission works again."""
        self.desk.restored(platform, chat, feature)

    def waiting(self, fixture: str) -> dict[str, list[tuple[str, str, float, bool]]]:
        """A fixture's live messages not yet delivered: ref -> (platform, chat, seconds
        queued, the platform answered 429 in the last minute), for the screens' per-incident
        line; seconds is -1 for a card only named in a digest."""
        now = self.clock()
        out: dict[str, list[tuple[str, str, float, bool]]] = {}
        for (platform, chat), q in self._queues.items():
            h = self.health.get((platform, chat))
            limited = bool(h and h.last_429_at is not None and now - h.last_429_at < 60)
            for item in q.items + q.sending:
                o = item.out
                if o.ref and o.fixture == fixture and not o.quote and not o.edit:
                    out.setdefault(o.ref, []).append((platform, chat, now - item.queued_at,
                                                      limited))
            for fx, ref in q.digested:
                if fx == fixture and ref not in out:
                    out.setdefault(ref, []).append((platform, chat, -1.0, False))
        return out

    def pending(self) -> list[Health]:
        """Delivery health of every chat that has had traffic, worst first."""
        return sorted(self.health.values(), key=lambda h: (h.oldest_at is None,
                                                          h.oldest_at or 0))

    def journaled(self) -> list[Journaled]:
        """Every outbox entry's mark waiting in a chat's queue or being sent."""
        return [d for q in self._queues.values() for item in q.items + q.sending
                for d in item.done if isinstance(d, Journaled)]

    def queued(self) -> int:
        """Messages waiting in every chat's queue."""
        return sum(len(q.items) for q in self._queues.values())

    # ------------------------------------------------------------ lifecycle
    def poke(self) -> None:
        """Have every chat's worker look again at what is due (its board, e.g.)."""
        for queue in self._queues.values():
            queue.wake.set()

    async def drain(self) -> None:
        """Wait until every queued message has been handed to its platform."""
        while True:
            waiting = [q for q in self._queues.values() if q.items or q.busy]
            if not waiting:
                return
            await asyncio.gather(*(q.idle.wait() for q in waiting))
            await asyncio.sleep(0)

    async def close(self) -> None:
        """Deliver what is queued, then stop the workers."""
        await self.drain()
        for queue in self._queues.values():
            queue.board.disarm()
        await cancel_and_wait(self._workers.values())
        self._workers.clear()
        self._queues.clear()
        if self.desk.lane is not None:
            await self.desk.lane.close()
