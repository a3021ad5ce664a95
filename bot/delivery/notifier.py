"""The one delivery layer: one ordered queue per chat, one edit-or-send path, one retry policy.

Every adapter is a `Sink` (send / edit natively); everything the bot says goes through here:
replies, incident cards, threads, escalations, briefings. Per (platform, chat):

- one worker sends in order, each platform call only when the rate limiter (shared in Redis
  when the app wires one) grants a slot for its kind (post, edit, pin): Telegram counts them
  alike, Slack limits each method apart (posts per channel, edits and pins per workspace,
  shared fairly between the chats with a live board);
- a live message (`Outbound.ref`, e.g. an incident card) is posted once, its platform id kept
  in the store, and later versions edit it in place; queued versions of the same card are
  coalesced, so only its latest state is sent;
- when more new incidents wait than the chat can take in the next few seconds, or they
  have started to wait longer than a couple of seconds (a flashpoint), they go out as one
  digest naming each (highest severity first); cards of severity 4+ still follow
  individually;
- while a chat is in that digest mode it also gets a live board (bot.delivery.board): one
  pinned message listing the open incidents, edited at most once per few of the chat's
  slots, finally marked "no longer live" and unpinned when the burst is over;
- while a chat is paced (more waiting than it can take in the next few seconds), photos and
  videos for one incident queued one after another go as one album where the sink can send
  albums (Telegram's sendMediaGroup), each item with its own caption; they may go ahead of
  that incident's queued card edit (its latest state follows them). The album counts one
  message per item against the group and bot-wide limits, once against the per-chat pace;
- a 429 waits the platform's retry_after and tries again, for ever: a message is delivered
  or superseded, never dropped. `on_done` tells the outbox when an entry is delivered.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import time
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from bot.core.messages import Outbound, Reply
from bot.delivery import board as boards
from bot.delivery.lane import Lane
from bot.delivery.ratelimit import (
    EDIT,
    PIN,
    POST,
    RateLimiter,
    chat_gap,
    counted,
    is_group,
    shared_interval,
)
from bot.delivery.scopes import Scopes, audience_readers
from bot.delivery.sink import BOT_WIDE, SENDING, Gone, RetryLater, Sink, Unsupported
from bot.observe import metrics
from bot.store import StoreUnavailable
from bot.tasks import cancel_and_wait

log = logging.getLogger(__name__)
READERS = "readers"

DIGEST_HORIZON = 5.0  # seconds: more new incidents than fit in this go out as a digest
# seconds: new incidents also go out as a digest once the oldest waiting has waited this
# long (incidents arriving faster than the chat takes them, however many it could take)
DIGEST_LAG = 2.0
ACTIONABLE = boards.ACTIONABLE  # severity from which an incident always gets its own card
MAX_BACKOFF = 30.0
SEVERITY = re.compile(r"^Severity (\d)")
UNPINNED = "the flashpoint board is not pinned"
ALBUM_MAX = 10  # items in one album (Telegram's sendMediaGroup takes 2-10)

Done = Callable[[str, str, str], Awaitable[None]]  # (platform, chat, message id) once sent
T = TypeVar("T")


def load_channels(path: Path) -> dict[str, dict[str, list[str]]]:
    """audience -> platform -> chat ids, from channels.toml."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return {aud: {plat: [str(c) for c in chats] for plat, chats in plats.items()
                  if plat != READERS}
            for aud, plats in data.get("audiences", {}).items()}


def load_readers(path: Path) -> dict[str, frozenset[str]]:
    """audience -> the roles of the people in its chats (`readers = [...]` in channels.toml)."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return audience_readers(data.get("audiences", {}), path.name)


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
        m = SEVERITY.match(self.out.reply.text)
        return int(m.group(1)) if m else 0


@dataclass
class Health:
    """What /status shows about one chat's delivery."""

    platform: str
    chat: str
    queued: int = 0
    oldest_at: float | None = None
    last_429_at: float | None = None
    delivered: int = 0
    digests: int = 0
    warned: bool = False
    # what does not work in this chat for want of a permission -> why (see degraded)
    unsupported: dict[str, str] = field(default_factory=dict)


@dataclass
class Ticket:
    """A rate-limit slot taken before a call is known: which kind, for which chat (the chat,
    or BOT_WIDE for a tap's answer). Spent by the first call it covers."""

    call: str | None
    chat: str


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
        self.board_at = float("-inf")  # when the board last took one of the chat's slots
        self.board_retry = float("-inf")  # no board edit before (no shared edit slot free)
        self.timer: asyncio.Task[None] | None = None  # wakes the worker for the board

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


def tap_answer(platform: str, chat: str, out: Outbound) -> bool:
    """An answer edited into the message whose button was just tapped, in a private chat
    (a guided form's next step): it is not paced at the chat's one message a second, which
    counts messages sent to a chat, so a steward's taps are answered at once. Only the
    bot-wide limit counts it; a 429 is still waited out like any other."""
    return bool(out.edit) and chat != BOT_WIDE and not is_group(platform, chat)


class Notifier:
    """Routes each Outbound to every sink that has chats for its audience, and delivers it."""

    def __init__(self, channels: dict[str, dict[str, list[str]]],
                 limiter: RateLimiter | None = None,
                 readers: dict[str, frozenset[str]] | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 lane: Lane | None = None) -> None:
        self.channels = channels
        self.lane = lane  # while a procedure holds it, only its messages are sent
        self.readers = readers or {}  # audience -> roles reading it (who may see what)
        self.scopes = Scopes()  # per-ground / per-fixture audiences (several fixtures at once)
        self.limiter: Any = limiter or RateLimiter()
        self.clock = clock
        self.sinks: dict[str, Sink] = {}
        self.store: Any = None  # where live messages' platform ids are kept (set by the app)
        self.outbox: Any = None  # the durable outbox (bot.store.outbox.Outbox) when wired
        # Writes outbox entries' in-flight and delivered marks around each send (the outbox
        # reader, bot.delivery.durable, when wired): see _journaled.
        self.journal: Any = None
        # Observers that see every outbound once, by audience (console, replay, tests).
        self.taps: list[Callable[[Outbound], Awaitable[None]]] = []
        self.wall: Callable[[], datetime] = lambda: datetime.now(UTC)  # the board's HH:MM
        # Waits for a board's next turn; real time even when the limiter's clock is injected
        # (tests replace it and call poke() after moving their clock).
        self.board_sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
        self.health: dict[tuple[str, str], Health] = {}
        self._queues: dict[tuple[str, str], ChatQueue] = {}
        self._workers: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._posted: dict[tuple[str, str], set[str]] = {}
        self._answered: dict[tuple[str, str], float] = {}  # when a chat's last call returned
        self._unreachable: set[tuple[str, str]] = set()  # platform calls failing now
        self._store_waits: dict[str, float] = {}  # "platform:chat" -> next backoff (store away)

    def add_sink(self, sink: Sink) -> None:
        """Register an adapter; one per platform. A sink that sends a reply as several
        messages asks `gate` for a rate-limit slot before each after the first."""
        self.sinks[sink.platform] = sink
        if hasattr(sink, "gate"):
            sink.gate = self._gate

    async def _gate(self, platform: str, chat: str) -> None:
        if chat != BOT_WIDE:  # the reply's previous message to this chat has just returned
            self._answered[(platform, chat)] = self._limiter_now()
            await self._spaced(platform, chat)
        await self.limiter.acquire(platform, chat, 1)

    def _call_kind(self, platform: str, chat: str, out: Outbound) -> str:
        """The platform call a message will most likely take: an edit for an answer into a
        tapped message or a live message already posted here, else a post."""
        if out.edit or (out.ref and not out.quote and
                        out.ref in self._posted.get((platform, chat), set())):
            return EDIT
        return POST

    def _limiter_now(self) -> float:
        """Now on the limiter's clock (its sleeps are what wait)."""
        return getattr(self.limiter, "clock", self.clock)()

    async def _spaced(self, platform: str, chat: str, call: str = POST) -> None:
        """A chat's next message waits the per-chat interval after the platform answered the
        last one, not after the limiter let it go: the limiter counts when a send leaves, the
        platform when it arrives, and a send held up on the way (a busy process, a slow
        network) would otherwise arrive too close to the next and be refused with a 429."""
        last = self._answered.get((platform, chat))
        gap = chat_gap(getattr(self.limiter, "limits", {}), platform, call)
        if last is not None and gap:
            wait = last + gap - self._limiter_now()
            if wait > 0:
                await self.limiter.sleep(wait)

    def readers_of(self, audience: str, fixture: str = "") -> frozenset[str] | None:
        """Every role that reads an audience's chats (for one fixture's messages), counting
        other audiences sharing a chat; None when some audience involved does not declare
        its readers."""
        channels = self.scopes.channels(self.channels, fixture)
        readers = self.scopes.readers_for(self.readers, fixture)
        chats = {(p, c) for p, cs in channels.get(audience, {}).items() for c in cs}
        roles: set[str] = set(readers.get(audience, ()))
        if audience not in readers:
            return None
        for other, plats in channels.items():
            if any((p, c) in chats for p, cs in plats.items() for c in cs):
                if other not in readers:
                    return None
                roles |= readers[other]
        return frozenset(roles)

    async def learn_grounds(self, fixtures: list[str]) -> None:
        """Know the ground of each fixture whose messages may go to per-ground chats."""
        for fx in {f for f in fixtures if self.scopes.needs_ground(f)}:
            got = await self.store.fixture(fx) if self.store is not None else None
            if got is not None:
                self.scopes.ground_of[fx] = got.ground

    def targets(self, audience: str, fixture: str = "") -> dict[str, list[str]]:
        """platform -> chats for an audience ('user:<platform>:<id>' is one person or chat);
        with a fixture, that fixture's chats (see bot/delivery/scopes.py)."""
        channels = self.scopes.channels(self.channels, fixture)
        if audience.startswith("user:"):
            _, platform, user = audience.split(":", 2)
            return {platform: [user]}
        if "," in audience:  # one message for several audiences: each chat once
            out: dict[str, list[str]] = {}
            for part in audience.split(","):
                for platform, chats in channels.get(part, {}).items():
                    have = out.setdefault(platform, [])
                    have += [c for c in chats if c not in have]
            return out
        return channels.get(audience, {})

    # ---------------------------------------------------------------- queueing
    async def send(self, outs: list[Outbound], once: str = "") -> None:
        """Queue everything for delivery and return at once: chats in parallel, each chat in
        order. The sender's own reply never waits for a busy control group; one failing
        platform never stops the others. `drain()` waits until the queues are empty.
        `once`: the command's dedupe key; a redelivered command adds nothing to an outbox
        its first run already wrote to."""
        for out in outs:
            for tap in self.taps:
                await tap(out)
        if self.outbox is not None:  # about a fixture: durable, delivered by the outbox reader
            by_fx: dict[str, list[Outbound]] = {}
            for out in outs:
                if out.fixture and not out.stored:
                    by_fx.setdefault(out.fixture, []).append(out)
            for fx, group in by_fx.items():
                try:
                    await self.outbox.add(fx, group, once=once)
                except Exception:  # the store is down: deliver from memory rather than not
                    log.warning("outbox unavailable; %d message(s) sent from memory", len(group))
                    self._fan_out(group)
            outs = [o for o in outs if not o.fixture]
        if self.scopes:
            try:
                await self.learn_grounds([o.fixture for o in outs])
            except Exception:  # the store is down: the top-level audiences, not silence
                log.warning("fixture grounds unavailable; sending to the default chats")
        self._fan_out(outs)

    def _fan_out(self, outs: list[Outbound]) -> None:
        for out in outs:
            for platform, chats in self.targets(out.audience, out.fixture).items():
                if platform not in self.sinks:
                    continue
                for chat in chats:
                    self.enqueue(platform, chat, out)

    def reply(self, platform: str, chat: str, reply: Reply, *, quote: str = "",
              edit: str = "") -> None:
        """Queue the answer to someone who just asked (quoting or editing a message)."""
        self.enqueue(platform, chat, Outbound(f"user:{platform}:{chat}", reply, quote=quote,
                                              edit=edit))

    def enqueue(self, platform: str, chat: str, out: Outbound,
                done: Done | None = None) -> None:
        """Queue one message for one chat; `done` is awaited once it is delivered."""
        key = (platform, chat)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = ChatQueue()
            self._workers[key] = asyncio.create_task(self._worker(platform, chat, queue))
        reserve = getattr(self.limiter, "reserve", None)
        booked = BOT_WIDE if tap_answer(platform, chat, out) else chat
        call = self._call_kind(platform, chat, out)
        slot = reserve(platform, booked, 1, call) if reserve else None  # in call order: fair
        queue.put(Item(out, self.clock(), [done] if done else [], slot, call=call))
        queue.board.note(out, self.clock())
        if queue.board.dirty:
            queue.wake.set()
        self._update_health(platform, chat, queue)

    def _update_health(self, platform: str, chat: str, queue: ChatQueue) -> None:
        h = self.health.setdefault((platform, chat), Health(platform, chat))
        h.queued = len(queue.items) + (1 if queue.busy else 0)
        h.oldest_at = min((i.queued_at for i in queue.items), default=None)

    # ---------------------------------------------------------------- the worker
    async def _worker(self, platform: str, chat: str, queue: ChatQueue) -> None:
        sink = self.sinks[platform]
        while True:
            if self.lane is not None and (queue.items or queue.board.live) and \
                    not (queue.items and queue.items[0].out.urgent) and await self.lane.held():
                await self._lane_wait(queue)
                continue
            turn = self._board_due(platform, chat, queue)
            if turn == "edit" and not await self._edit_room(platform, chat, queue):
                turn = ""
            if turn:
                queue.busy = True
                try:
                    await self._board_turn(sink, platform, chat, queue, turn)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("board for %s:%s failed", platform, chat)
                    queue.board.dirty = False
                finally:
                    queue.busy = False
                continue
            if not queue.items:
                queue.idle.set()
                queue.wake.clear()
                self._arm_board_timer(platform, chat, queue)
                await queue.wake.wait()
                continue
            queue.busy = True
            try:
                await self._pace(platform, chat, queue)
                first = queue.items[0]
                if tap_answer(platform, chat, first.out):
                    await self._admit_tap(platform, first.slot, first.call)
                    ticket = Ticket(first.call, BOT_WIDE)
                else:
                    await self._admit(platform, chat, first.slot, first.call)
                    ticket = Ticket(first.call, chat)
                batch, out = await self._compose(platform, chat, queue)
                if out is None:  # an album: its slots were taken with the first item's
                    await self._album(sink, platform, chat, batch)
                    continue
                if await self._journaled(sink, platform, chat, batch, out, ticket):
                    await self._lane_done(out)
                    continue
                mid = await self._deliver(sink, platform, chat, out, ticket=ticket)
                await self._lane_done(out)
                for item in batch:
                    for done in item.done:
                        try:
                            await done(platform, chat, mid)
                        except Exception:
                            log.exception("delivery mark failed for %s:%s", platform, chat)
                self.health[(platform, chat)].delivered += len(batch)
            except asyncio.CancelledError:
                raise
            except StoreUnavailable:  # what it needs from Redis is away: wait, don't spin
                await self._store_away(f"{platform}:{chat}")
                continue
            except Exception:  # e.g. the chat is gone: nothing more to do for this message
                log.exception("delivery to %s:%s failed", platform, chat)
            finally:
                queue.busy = False
                self._update_health(platform, chat, queue)

    async def _lane_wait(self, queue: ChatQueue) -> None:
        """Hold this chat's other messages while a procedure has the lane; an urgent message
        queued meanwhile wakes it at once."""
        assert self.lane is not None
        queue.wake.clear()
        try:
            await asyncio.wait_for(queue.wake.wait(), self.lane.poll_s)
        except TimeoutError:
            pass

    async def _lane_done(self, out: Outbound) -> None:
        if out.urgent and self.lane is not None:
            try:
                await self.lane.delivered(out.urgent)
            except Exception:
                log.exception("life-safety lane bookkeeping failed")

    def reachable(self, audience: str, fixture: str = "") -> int:
        """How many chats a message to an audience reaches (platforms with a sink)."""
        return sum(len(chats) for platform, chats in self.targets(audience, fixture).items()
                   if platform in self.sinks)

    async def _store_away(self, where: str) -> None:
        """The log store is not answering: one log line when a chat's delivery starts
        waiting for it, then back off (1 s, doubling, at most MAX_BACKOFF)."""
        backoff = self._store_waits.get(where)
        if backoff is None:
            log.warning("delivery to %s waiting for the log store (Redis is not answering)",
                        where)
            backoff = 1.0
        await self.limiter.sleep(backoff)
        self._store_waits[where] = min(backoff * 2, MAX_BACKOFF)

    def _store_back(self, where: str) -> None:
        if self._store_waits.pop(where, None) is not None:
            log.warning("delivery to %s going again (the log store is back)", where)

    async def _journaled(self, sink: Sink, platform: str, chat: str, batch: list[Item],
                         out: Outbound, ticket: Ticket) -> bool:
        """Deliver outbox entries with the journal: an in-flight mark before the send, and
        right after the platform's answer the delivered marks plus the live message's id
        in one round trip, so a crash can only leave the send itself in doubt (the outbox
        reader resolves that on recovery). False when the batch is not from the outbox."""
        marks = [d for item in batch for d in item.done]
        if self.journal is None or not marks or \
                not all(getattr(d, "journaled", False) for d in marks):
            return False
        await self.journal.flying(platform, chat, marks)
        digest = not batch or out is not batch[0].out
        token = SENDING.set(tuple(("d:" if digest else "") + m.tag for m in marks))
        try:
            mid = await self._deliver(sink, platform, chat, out, keep_ref=False,
                                      ticket=ticket)
        finally:
            SENDING.reset(token)
        await self.journal.delivered(platform, chat, marks, out, mid)
        self.health[(platform, chat)].delivered += len(batch)
        return True

    async def _pace(self, platform: str, chat: str, queue: ChatQueue) -> None:
        """At a flashpoint, space digests evenly at the chat's sustained rate (rather than
        spending a burst at once and then going dark), so each waits one interval at most."""
        if queue.last_digest is None:
            return
        gap = getattr(self.limiter, "interval", None)
        last = max(queue.last_digest, queue.board_at)  # board turns share the pace
        wait = last + (gap(platform, chat) if gap else 0.0) - self.clock()
        if 0 < wait:
            await self.limiter.sleep(wait)

    async def _admit(self, platform: str, chat: str, slot: float | None,
                     call: str = POST) -> None:
        """Wait for the limiter's go for one call of this kind to this chat."""
        await self._spaced(platform, chat, call)
        if slot is not None:
            await self.limiter.wait_until(slot)
            await self.limiter.admit(platform, chat, 1, call)
        else:
            await self.limiter.acquire(platform, chat, 1, call)

    async def _admit_tap(self, platform: str, slot: float | None, call: str = EDIT) -> None:
        """A tap's answer edited into the tapped message: only the bot-wide limit waits."""
        if slot is not None:
            await self.limiter.wait_until(slot)
            await self.limiter.admit(platform, BOT_WIDE, 1, call)
        else:
            await self.limiter.acquire(platform, BOT_WIDE, 1, call)

    async def _readmit(self, platform: str, chat: str, call: str = POST) -> None:
        """A call not covered by a slot already taken (a retry, or a call of another kind
        than the one booked): counted anew, but not behind what is queued after it."""
        await self._spaced(platform, chat, call)
        admit = getattr(self.limiter, "admit", None)
        if admit is not None:
            await admit(platform, chat, 1, call)
        else:
            await self.limiter.acquire(platform, chat, 1, call)

    async def _slot(self, ticket: Ticket, platform: str, chat: str, call: str) -> None:
        """Just before a platform call: spend the ticket when it covers this kind of call
        (the same limits count both), else take a slot for it now."""
        limits = getattr(self.limiter, "limits", {})
        held, ticket.call = ticket.call, None
        if held is not None and (held == call or counted(limits, platform, ticket.chat, held)
                                 == counted(limits, platform, ticket.chat, call)):
            return
        await self._readmit(platform, ticket.chat if ticket.chat == BOT_WIDE else chat, call)

    async def _compose(self, platform: str, chat: str,
                       queue: ChatQueue) -> tuple[list[Item], Outbound | None]:
        """Take what to send now: the next message, a digest of the new incidents waiting
        when there are more than the chat's budget allows to send one by one, or (no
        Outbound) an album of one incident's media while the chat is paced."""
        fresh = [i for i in queue.items
                 if not i.named and self._is_new_card(platform, chat, i)]
        behind = bool(fresh) and self.clock() - fresh[0].queued_at >= DIGEST_LAG
        if len(fresh) >= 2 and (behind or len(fresh) > await self._budget(platform, chat)):
            fresh.sort(key=lambda i: -i.severity)
            covered = [i for i in fresh if i.severity < ACTIONABLE]
            for i in covered:
                queue.items.remove(i)
            for i in fresh:
                i.named = True
            self.health[(platform, chat)].digests += 1
            queue.last_digest = self.clock()
            if self._pins(platform):
                queue.board.burst(queue.last_digest, fresh[0].out.fixture)
            lines = [digest_line(i.out.reply) for i in fresh]
            title = f"{len(fresh)} new incidents (worst first)"
            reply = Reply("\n".join(lines), title=title)
            return covered, Outbound(fresh[0].out.audience, reply, fixture=fresh[0].out.fixture)
        if not fresh:
            queue.last_digest = None  # the burst is over: back to one card at a time
        # After a digest, the actionable cards it named come next, worst first.
        named = [i for i in queue.items if i.named]
        if not named:
            album = await self._album_items(platform, chat, queue)
            if album:
                return album, None
        item = max(named, key=lambda i: i.severity) if named else queue.items[0]
        queue.items.remove(item)
        return [item], item.out

    async def _album_items(self, platform: str, chat: str, queue: ChatQueue) -> list[Item]:
        """The media to send now as one album, taken off the queue (or none): the next
        message and those after it that are media for the same incident, passing over that
        incident's card when it is already posted (an edit: its latest state follows), when
        more wait than the chat's budget allows one by one and the limits let them go
        together (the first is already admitted)."""
        sink = self.sinks[platform]
        fits = getattr(sink, "albumable", None)
        if fits is None or hasattr(sink, "deliver"):
            return []
        first = queue.items[0].out
        if not self._album_item(first, fits, chat):
            return []
        posted = self._posted.get((platform, chat), set())
        run = [queue.items[0]]
        for item in queue.items[1:]:
            o = item.out
            if o.fixture == first.fixture and o.thread == first.thread and \
                    self._album_item(o, fits, chat):
                run.append(item)
                if len(run) == ALBUM_MAX:
                    break
            elif not (o.ref == first.thread and o.fixture == first.fixture and
                      not o.edit and not o.quote and o.ref in posted):
                break
        if len(run) < 2 or len(run) <= await self._budget(platform, chat):
            return []
        together = getattr(self.limiter, "together", None)
        extra = await together(platform, chat, len(run) - 1) if together else 0
        if extra < 1:
            return []
        run = run[:1 + extra]
        await self.limiter.admit_extra(platform, chat, extra)
        release = getattr(self.limiter, "release", None)
        for item in run:
            queue.items.remove(item)
            if release is not None and item.slot is not None and item is not run[0]:
                release(platform, chat, item.slot)
        return run

    @staticmethod
    def _album_item(out: Outbound, fits: Callable[[str, Reply], bool], chat: str) -> bool:
        """A message under an incident that is one photo or video (its text the caption)."""
        return bool(out.thread and not out.ref and not out.edit and not out.quote
                    and fits(chat, out.reply))

    async def _album(self, sink: Sink, platform: str, chat: str, batch: list[Item]) -> None:
        """Send items as one album, with the journal's marks around it for every outbox
        entry in it (in flight before, all delivered in one round trip after, like
        `_journaled`); other items' `done` each get their own message's id."""
        marks = [d for item in batch for d in item.done if getattr(d, "journaled", False)]
        if marks and self.journal is not None:
            await self.journal.flying(platform, chat, marks)
        out = batch[0].out
        store = self.store

        async def send() -> list[str]:
            thread = ""
            if out.thread and store is not None:
                thread = await store.message_ref(out.fixture, platform, chat, out.thread) or ""
            return await sink.send_album(chat, [i.out.reply for i in batch],  # type: ignore[attr-defined]
                                         thread=thread)

        token = SENDING.set(tuple(m.tag for m in marks))
        try:
            mids = await self._retrying(platform, chat, send)
        finally:
            SENDING.reset(token)
        if marks and self.journal is not None:
            last = max(mids, key=lambda m: int(m) if m.isdigit() else 0, default="")
            await self.journal.delivered(platform, chat, marks, None, last)
        for item, mid in zip(batch, mids + [""] * len(batch), strict=False):
            for done in item.done:
                if getattr(done, "journaled", False) and self.journal is not None:
                    continue
                try:
                    await done(platform, chat, mid)
                except Exception:
                    log.exception("delivery mark failed for %s:%s", platform, chat)
        self.health[(platform, chat)].delivered += len(batch)

    def _is_new_card(self, platform: str, chat: str, item: Item) -> bool:
        out = item.out
        return bool(out.ref and not out.edit and not out.quote
                    and out.ref not in self._posted.get((platform, chat), set()))

    async def _budget(self, platform: str, chat: str, call: str = POST,
                      horizon: float = DIGEST_HORIZON) -> int:
        """How many calls of a kind this chat can take in the next few seconds."""
        budget = getattr(self.limiter, "budget", None)
        if budget is None:
            return 10**6
        n = budget(platform, chat, horizon, call)
        return await n if inspect.isawaitable(n) else n

    async def _deliver(self, sink: Sink, platform: str, chat: str, out: Outbound,
                       keep_ref: bool = True, *, ticket: Ticket) -> str:
        """Edit the live message in place, or send anew; retry 429s until it goes."""
        return await self._retrying(
            platform, chat,
            lambda: self._edit_or_send(sink, platform, chat, out, keep_ref, ticket),
            ticketed=True)

    async def _retrying(self, platform: str, chat: str,
                        call: Callable[[], Awaitable[T]], *, ticketed: bool = False) -> T:
        """Run one platform call until it goes: 429s wait retry_after, outages back off.
        `ticketed`: the call takes its own slots (see _slot), so a retry needs none here."""
        backoff = 1.0
        while True:
            try:
                done = await call()
                self._answered[(platform, chat)] = self._limiter_now()
                self._store_back(f"{platform}:{chat}")
                if (platform, chat) in self._unreachable:
                    self._unreachable.discard((platform, chat))
                    log.warning("%s:%s reachable again", platform, chat)
                return done
            except RetryLater as exc:
                self._answered[(platform, chat)] = self._limiter_now()
                self.health[(platform, chat)].last_429_at = self.clock()
                metrics.RATE_LIMITED.labels(platform).inc()
                log.warning("%s:%s rate limited; retrying in %.1fs", platform, chat,
                            exc.seconds)
                await self.limiter.sleep(exc.seconds)
                if not ticketed:
                    await self._readmit(platform, chat)
            except Gone:
                raise
            except StoreUnavailable:  # before the send (a live message's id): try again
                await self._store_away(f"{platform}:{chat}")
            except (ConnectionError, TimeoutError, OSError) as exc:
                if (platform, chat) not in self._unreachable:  # one line per state change
                    self._unreachable.add((platform, chat))
                    log.warning("%s:%s unreachable (%s); retrying until it answers",
                                platform, chat, str(exc).splitlines()[0] if str(exc) else
                                type(exc).__name__)
                await self.limiter.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)

    async def _edit_or_send(self, sink: Sink, platform: str, chat: str, out: Outbound,
                            keep_ref: bool, ticket: Ticket) -> str:
        store = self.store
        whole = getattr(sink, "deliver", None)
        if whole is not None:  # a recorder of whole Outbounds (tests, benchmarks)
            await self._slot(ticket, platform, chat, ticket.call or POST)
            await whole(out, [chat])
            return ""
        if out.edit:
            await self._slot(ticket, platform, chat, EDIT)
            if await sink.edit(chat, out.edit, out.reply):
                return out.edit
            await self._slot(ticket, platform, chat, POST)
            return await sink.send(chat, out.reply)
        if out.ref and store is not None:
            mid = await store.message_ref(out.fixture, platform, chat, out.ref)
            if mid:
                self._posted.setdefault((platform, chat), set()).add(out.ref)
                await self._slot(ticket, platform, chat, EDIT)
                if await sink.edit(chat, mid, out.reply):
                    return mid
        thread = ""
        if out.thread and store is not None:
            thread = await store.message_ref(out.fixture, platform, chat, out.thread) or ""
        await self._slot(ticket, platform, chat, POST)
        mid = await sink.send(chat, out.reply, thread=thread, quote=out.quote)
        if out.ref:
            self._posted.setdefault((platform, chat), set()).add(out.ref)
            if store is not None and mid and keep_ref:  # else the journal records it
                try:
                    await store.set_message_ref(out.fixture, platform, chat, out.ref, mid)
                except StoreUnavailable:  # sent: not again; its next version is a new post
                    log.warning("%s:%s: %s sent, its message id not kept (Redis is not "
                                "answering)", platform, chat, out.ref)
        return mid

    # ---------------------------------------------------------------- the live board
    def _pins(self, platform: str) -> bool:
        """Whether this platform's sink can keep a pinned board (recorders cannot)."""
        sink = self.sinks.get(platform)
        return sink is not None and hasattr(sink, "pin") and not hasattr(sink, "deliver")

    def _board_gap(self, platform: str, chat: str) -> float:
        """Seconds between board edits: a fixed share of the chat's sustained budget, and no
        more than its fair share of a platform-wide edit limit (Slack's chat.update counts
        per workspace) among the chats with a live board."""
        gap = getattr(self.limiter, "interval", None)
        own = boards.EDIT_EVERY_SLOTS * (gap(platform, chat) if gap else 0.0)
        limits = getattr(self.limiter, "limits", {}).get(platform, ())
        live = sum(1 for (p, _), q in self._queues.items() if p == platform and q.board.live)
        return max(1.0, own, max(1, live) * shared_interval(limits, platform, EDIT))

    def _board_due(self, platform: str, chat: str, queue: ChatQueue) -> str:
        """'end', 'pin' or 'edit' when the board's turn has come, else ''."""
        board = queue.board
        if not board.live:
            return ""
        now = self.clock()
        if board.last_burst is not None and now - board.last_burst >= boards.QUIET_S \
                and not queue.items:
            return "end"
        if board.pin_owed and (board.last_edit is None or queue.last_digest is None or
                               queue.last_digest > board.last_edit or not queue.items):
            return "pin"  # not straight after the post: a digest goes in between
        if board.dirty and now >= queue.board_retry and (
                board.last_edit is None or
                now - board.last_edit >= self._board_gap(platform, chat)):
            return "edit"
        return ""

    def _arm_board_timer(self, platform: str, chat: str, queue: ChatQueue) -> None:
        """While a board is live and the queue idle, wake the worker when its turn comes."""
        board = queue.board
        if queue.timer is not None:
            queue.timer.cancel()
            queue.timer = None
        if not board.live or board.last_burst is None:
            return
        now = self.clock()
        at = board.last_burst + boards.QUIET_S
        if board.dirty and board.last_edit is not None:
            at = min(at, max(board.last_edit + self._board_gap(platform, chat),
                             queue.board_retry))

        async def wake() -> None:
            await self.board_sleep(max(0.0, at - now))
            queue.wake.set()
        queue.timer = asyncio.create_task(wake())

    async def _edit_room(self, platform: str, chat: str, queue: ChatQueue) -> bool:
        """Whether a board edit may go now. Where edits count against a limit shared by
        every chat (Slack's chat.update, per workspace) and none is free this moment, the
        edit waits its turn without holding up the chat's cards."""
        limits = getattr(self.limiter, "limits", {})
        wide = shared_interval(limits.get(platform, ()), platform, EDIT)
        if not wide or counted(limits, platform, chat, EDIT) == \
                counted(limits, platform, chat, POST):
            return True
        if await self._budget(platform, chat, EDIT, 0.0) > 0:
            return True
        queue.board_retry = self.clock() + wide
        return False

    async def _board_turn(self, sink: Sink, platform: str, chat: str, queue: ChatQueue,
                          turn: str) -> None:
        """Post and pin the board, edit it with the latest state, or end it."""
        board = queue.board
        hhmm = self.wall().strftime("%H:%M")
        ref = (board.fixture, platform, chat, boards.REF)
        mid = await self.store.message_ref(*ref) if self.store is not None else None
        if turn == "end":
            board.live = False
            if not mid:
                return
            reply = board.final(hhmm, self._posted.get((platform, chat), set()))
            await self._retrying(platform, chat, lambda: self._call(
                platform, chat, EDIT, lambda: sink.edit(chat, mid, reply)), ticketed=True)
            if board.pin_owed:  # never pinned: nothing to take down
                board.pin_owed = ""
            else:
                try:
                    await self._retrying(platform, chat, lambda: self._call(
                        platform, chat, PIN, lambda: sink.unpin(chat, mid)), ticketed=True)  # type: ignore[attr-defined]
                except Unsupported as exc:
                    self.degraded(platform, chat, UNPINNED, exc)
            if self.store is not None:
                await self.store.drop_message_ref(*ref)
            return
        await self._pace(platform, chat, queue)
        call = PIN if turn == "pin" else EDIT if mid else POST
        await self._readmit(platform, chat, call)  # a pin counts like a message in a group
        ticket = Ticket(call, chat)
        queue.board_at = self.clock()
        if turn == "pin":
            pin, board.pin_owed = board.pin_owed, ""
            try:
                await self._retrying(platform, chat, lambda: self._call(
                    platform, chat, PIN, lambda: sink.pin(chat, pin), ticket), ticketed=True)  # type: ignore[attr-defined]
            except Unsupported as exc:  # the board still works, unpinned
                self.degraded(platform, chat, UNPINNED, exc)
            else:
                self.restored(platform, chat, UNPINNED)
            return
        board.dirty = False
        board.last_edit = self.clock()
        just_in = [boards.incident_id(i.out.reply) for i in queue.items
                   if not i.named and self._is_new_card(platform, chat, i)]
        reply = board.render(hhmm, [j for j in just_in if j])
        if mid and await self._retrying(platform, chat, lambda: self._call(
                platform, chat, EDIT, lambda: sink.edit(chat, mid, reply), ticket),
                ticketed=True):
            return
        new = await self._retrying(platform, chat, lambda: self._call(
            platform, chat, POST, lambda: sink.send(chat, reply), ticket), ticketed=True)
        if self.store is not None and new:
            await self.store.set_message_ref(*ref, new)
        board.pin_owed = new

    def degraded(self, platform: str, chat: str, feature: str, exc: Unsupported) -> None:
        """A feature the platform refused for want of a permission: one warning line the
        first time, and a line in the delivery health (/status, the Slack Home tab)."""
        h = self.health.setdefault((platform, chat), Health(platform, chat))
        if h.unsupported.get(feature) != str(exc):
            log.warning("%s:%s: %s (%s)", platform, chat, feature, exc)
        h.unsupported[feature] = str(exc)

    def restored(self, platform: str, chat: str, feature: str) -> None:
        """A feature that failed for want of a permission works again."""
        h = self.health.get((platform, chat))
        if h is not None:
            h.unsupported.pop(feature, None)

    async def _call(self, platform: str, chat: str, call: str,
                    fn: Callable[[], Awaitable[T]], ticket: Ticket | None = None) -> T:
        """One platform call of a kind, after its rate-limit slot (the ticket's, if it
        covers it)."""
        await self._slot(ticket or Ticket(None, chat), platform, chat, call)
        return await fn()

    # ---------------------------------------------------------------- lifecycle
    def poke(self) -> None:
        """Have every chat's worker look again at what is due (its board, e.g.)."""
        for queue in self._queues.values():
            queue.wake.set()

    def queued(self) -> int:
        """Messages waiting in every chat's queue."""
        return sum(len(q.items) for q in self._queues.values())

    def pending(self) -> list[Health]:
        """Delivery health of every chat that has had traffic, worst first."""
        return sorted(self.health.values(), key=lambda h: (h.oldest_at is None,
                                                          h.oldest_at or 0))

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
            if queue.timer is not None:
                queue.timer.cancel()
        await cancel_and_wait(self._workers.values())
        self._workers.clear()
        self._queues.clear()


def digest_line(card: Reply) -> str:
    """One line naming an incident: its card's title, place and severity."""
    lines = card.text.splitlines()
    where = next((x.removeprefix("Where: ") for x in lines if x.startswith("Where: ")), "")
    sev = next((x.removeprefix("Severity ") for x in lines if x.startswith("Severity ")), "")
    return " · ".join(p for p in (card.title.strip(), where, f"severity {sev}" if sev else "")
                      if p)
