"""The per-chat worker: takes one chat's queue in order and hands each message to the
platform, as a digest at a flashpoint, as an album while paced, or as the live board's turn;
retries until it goes (429s wait, outages back off) unless the platform refuses it for good
(dropped, its text alone sent once in place of media); journals outbox entries around sends."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from bot.delivery import board as boards
from bot.delivery.chat_queue import ChatQueue, Health, Item, Journaled
from bot.delivery.lane import Lane, Spacer
from bot.delivery.pacing import Pacer, Ticket, tap_answer
from bot.delivery.ratelimit import CHASE, EDIT, PIN, POST
from bot.delivery.sink import (
    BOT_WIDE,
    SENDING,
    Gone,
    PlatformSink,
    Refused,
    RetryLater,
    Unsupported,
)
from bot.domain.incident.incident_model import incident_id
from bot.domain.messages import Outbound, Reply
from bot.domain.vocab import SEVERITIES
from bot.observe import metrics
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

DIGEST_HORIZON = 5.0  # seconds: more new incidents than fit in this go out as a digest
# seconds: new incidents also go out as a digest once the oldest waiting has waited this
# long (incidents arriving faster than the chat takes them, however many it could take)
DIGEST_LAG = 2.0
ACTIONABLE = boards.ACTIONABLE  # severity from which an incident always gets its own card
MAX_BACKOFF = 30.0
UNPINNED = "the flashpoint board is not pinned"
NOT_PINNED = "the procedure's post is not pinned"
PINNED = "pinned:"  # live-message ref prefix of a pin slot's post
ALBUM_MAX = 10  # items in one album (Telegram's sendMediaGroup takes 2-10)

T = TypeVar("T")


@dataclass
class Desk:
    """What every chat's worker shares: the sinks, the pacer, where live messages' ids are
    kept, the outbox journal, and each chat's health and posted live messages."""

    pacer: Pacer
    clock: Callable[[], float]
    sinks: dict[str, PlatformSink] = field(default_factory=dict)
    store: Any = None  # where live messages' platform ids are kept (set by the app)
    wall: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))  # board HH:MM
    # Waits for a board's next turn; real time even when the limiter's clock is injected
    # (tests replace it and call poke() after moving their clock).
    board_sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
    health: dict[tuple[str, str], Health] = field(default_factory=dict)
    queues: dict[tuple[str, str], ChatQueue] = field(default_factory=dict)
    posted: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    unreachable: set[tuple[str, str]] = field(default_factory=set)  # platform calls failing
    store_waits: dict[str, float] = field(default_factory=dict)  # "platform:chat" -> backoff
    lane: Lane | None = None  # while a procedure holds it, only its messages are sent
    chasers: Spacer = field(default_factory=Spacer)  # chasers' slots, one at a time

    def call_kind(self, platform: str, chat: str, out: Outbound) -> str:
        """The platform call a message will most likely take: an edit for an answer into a
        tapped message or a live message already posted here, else a post (a chaser's post,
        or an acknowledgement's reaction, within the chasers' share: a thousand stewards'
        "ok" never hold control's cards)."""
        if out.edit or out.respond or (out.ref and not out.quote and
                        out.ref in self.posted.get((platform, chat), set())):
            return EDIT
        return CHASE if out.chase or self.reaction(platform, out) else POST

    def reaction(self, platform: str, out: Outbound) -> bool:
        """An acknowledgement answered by a reaction on the message it quotes."""
        sink = self.sinks.get(platform)
        return bool(out.reply.ack and out.quote and sink is not None and sink.reacts)

    def live_boards(self, platform: str) -> int:
        """Chats of a platform with a live board (they share its edit limit)."""
        return sum(1 for (p, _), q in self.queues.items() if p == platform and q.board.live)

    def update_health(self, platform: str, chat: str, queue: ChatQueue) -> None:
        """A chat's queue length and oldest message, for /status."""
        h = self.health.setdefault((platform, chat), Health(platform, chat))
        h.queued = len(queue.items) + (1 if queue.busy else 0)
        h.oldest_at = min((i.queued_at for i in queue.items), default=None)

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


class ChatWorker:
    """Delivers one chat's queue, in order, for as long as it runs."""

    def __init__(self, desk: Desk, platform: str, chat: str, queue: ChatQueue) -> None:
        self.desk = desk
        self.pacer = desk.pacer
        self.platform = platform
        self.chat = chat
        self.queue = queue
        self.sink = desk.sinks[platform]
        self._fault = 0.0  # backoff after a failure before a message was taken (0: none)

    @property
    def posted(self) -> set[str]:
        """Live messages (refs) already posted in this chat by this process."""
        return self.desk.posted.setdefault((self.platform, self.chat), set())

    @property
    def health(self) -> Health:
        """This chat's delivery health."""
        key = (self.platform, self.chat)
        return self.desk.health.setdefault(key, Health(self.platform, self.chat))

    async def run(self) -> None:
        """Deliver the queue for ever: the board's turn when due, else the next message."""
        platform, chat, queue = self.platform, self.chat, self.queue
        while True:
            lane = self.desk.lane
            if lane is not None and (queue.items or queue.board.live) and \
                    not (queue.items and queue.items[0].out.urgent) and await lane.held():
                await self._lane_wait(lane)
                continue
            turn = self._board_due()
            if turn == "edit":
                wait = await self.pacer.edit_wait(platform, chat)
                if wait:
                    queue.board.retry_at = self.desk.clock() + wait
                    turn = ""
            if turn:
                queue.busy = True
                try:
                    await self._board_turn(turn)
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
                queue.board.arm(self.desk.clock(), self._board_gap, self.desk.board_sleep,
                                queue.wake)
                await queue.wake.wait()
                continue
            queue.busy = True
            taken = False
            try:
                await self._pace()
                first = queue.items[0]
                if tap_answer(platform, chat, first.out):
                    await self.pacer.admit_tap(platform, first.slot, first.call)
                    ticket = self.pacer.ticket(first.call, BOT_WIDE)
                elif first.out.urgent and self.desk.lane is not None:
                    await self.desk.lane.admit(
                        partial(self.pacer.admit, platform, chat, first.slot, first.call),
                        self.pacer.limiter.interval(platform, BOT_WIDE))
                    ticket = self.pacer.ticket(first.call, chat)
                elif first.call == CHASE:  # one at a time, within the chasers' share
                    await self.desk.chasers.admit(
                        partial(self.pacer.admit, platform, chat, first.slot, first.call),
                        self.pacer.limiter.interval(platform, BOT_WIDE, CHASE))
                    ticket = self.pacer.ticket(first.call, chat)
                else:
                    await self.pacer.admit(platform, chat, first.slot, first.call)
                    ticket = self.pacer.ticket(first.call, chat)
                batch, out = await self._compose()
                taken, self._fault = True, 0.0
                queue.sending = batch
                if out is None:  # an album: its slots were taken with the first item's
                    await self._album(batch)
                    continue
                sent = await self._journaled(batch, out, ticket)
                mid = sent if sent is not None else await self._deliver(out, ticket=ticket)
                await self._lane_done(out)
                await self._pin(out, mid)  # after the lane: nothing waits for the pin
                if sent is not None:
                    continue
                for item in batch:
                    for done in item.done:
                        try:
                            await done(platform, chat, mid)
                        except Exception:
                            log.exception("delivery mark failed for %s:%s", platform, chat)
                self.health.sent(len(batch), self.desk.clock())
            except asyncio.CancelledError:
                raise
            except StoreUnavailable:  # what it needs from Redis is away: wait, don't spin
                await self._store_away()
                continue
            except Exception:  # e.g. the chat is gone: nothing more to do for this message
                if taken:
                    log.exception("delivery to %s:%s failed", platform, chat)
                else:  # pacing failed with the message still queued: retry it, without spinning
                    await self._fault_wait()
                    continue
            finally:
                queue.busy = False
                queue.sending = []
                self.desk.update_health(platform, chat, queue)

    async def _lane_wait(self, lane: Lane) -> None:
        """Hold this chat's other messages while a procedure has the lane; an urgent message
        queued meanwhile wakes it at once."""
        self.queue.wake.clear()
        try:
            await asyncio.wait_for(self.queue.wake.wait(), lane.poll_s)
        except TimeoutError:
            pass

    async def _lane_done(self, out: Outbound) -> None:
        """One message of a procedure delivered: the lane counts it."""
        if out.urgent and self.desk.lane is not None:
            try:
                await self.desk.lane.delivered(out.urgent)
            except Exception:
                log.exception("life-safety lane bookkeeping failed")

    @property
    def _where(self) -> str:
        return f"{self.platform}:{self.chat}"

    async def _fault_wait(self) -> None:
        """Pacing or the lane failed unexpectedly before the next message was taken: it stays
        first in line; one log line, then back off (1 s, doubling, at most MAX_BACKOFF)."""
        if not self._fault:
            log.exception("delivery to %s:%s: pacing failed; the message waits and is tried "
                          "again", self.platform, self.chat)
        self._fault = min(self._fault * 2 or 1.0, MAX_BACKOFF)
        await self.pacer.sleep(self._fault)

    async def _store_away(self) -> None:
        """The log store is not answering: one log line when a chat's delivery starts
        waiting for it, then back off (1 s, doubling, at most MAX_BACKOFF)."""
        backoff = self.desk.store_waits.get(self._where)
        if backoff is None:
            log.warning("delivery to %s waiting for the log store (Redis is not answering)",
                        self._where)
            backoff = 1.0
        await self.pacer.sleep(backoff)
        self.desk.store_waits[self._where] = min(backoff * 2, MAX_BACKOFF)

    def _store_back(self) -> None:
        if self.desk.store_waits.pop(self._where, None) is not None:
            log.warning("delivery to %s going again (the log store is back)", self._where)

    async def _journaled(self, batch: list[Item], out: Outbound,
                         ticket: Ticket) -> str | None:
        """Deliver outbox entries with the journal: an in-flight mark before the send, and
        right after the platform's answer the delivered marks plus the live message's id
        in one round trip, so a crash can only leave the send itself in doubt (the outbox
        reader resolves that on recovery). The message's id ('' when not sent from here);
        None when the batch is not from the outbox."""
        marks = [d for item in batch for d in item.done]
        if not marks or not all(isinstance(d, Journaled) for d in marks):
            return None
        journal = marks[0].journal  # one outbox reader per process queues every mark
        marks = await journal.flying(self.platform, self.chat, marks)
        if not marks:
            return ""  # stale copies, or another replica holds the outbox now and sends these
        digest = not batch or out is not batch[0].out
        token = SENDING.set(tuple(("d:" if digest else "") + m.tag for m in marks))
        try:
            mid = await self._deliver(out, keep_ref=False, ticket=ticket)
        finally:
            SENDING.reset(token)
        await journal.delivered(self.platform, self.chat, marks, out, mid)
        self.health.sent(len(batch), self.desk.clock())
        return mid

    async def _pin(self, out: Outbound, mid: str) -> None:
        """Pin a post that stays on top (a procedure's, once the platform took it) and
        unpin the one pinned before in its slot; a refused pin leaves the post unpinned,
        said once in the log and the delivery health, as the board's."""
        store, platform, chat, pacer = self.desk.store, self.platform, self.chat, self.pacer
        if not (out.pin and mid and self.sink.pins) or store is None:
            return
        ref = PINNED + out.pin
        before = await store.message_ref(out.fixture, platform, chat, ref)
        try:
            await self._retrying(lambda: pacer.call(
                platform, chat, PIN, lambda: self.sink.pin(chat, mid)), ticketed=True)
            await store.set_message_ref(out.fixture, platform, chat, ref, mid)
            if before and before != mid:
                await self._retrying(lambda: pacer.call(
                    platform, chat, PIN, lambda: self.sink.unpin(chat, before)), ticketed=True)
        except Unsupported as exc:
            self.desk.degraded(platform, chat, NOT_PINNED, exc)
        except Refused as exc:
            log.warning("%s:%s: %s (%s)", platform, chat, NOT_PINNED, exc.reason)
        else:
            self.desk.restored(platform, chat, NOT_PINNED)

    async def _pace(self) -> None:
        """At a flashpoint, digests and board turns are spaced at the sustained rate."""
        q = self.queue
        last = None if q.last_digest is None else max(q.last_digest, q.board.turn_at)
        await self.pacer.pace(self.platform, self.chat, last, self.desk.clock())

    async def _budget(self, call: str = POST, horizon: float = DIGEST_HORIZON) -> int:
        return await self.pacer.budget(self.platform, self.chat, call, horizon)

    def _is_new_card(self, item: Item) -> bool:
        out = item.out
        return bool(out.ref and not out.edit and not out.quote and out.ref not in self.posted)

    async def _compose(self) -> tuple[list[Item], Outbound | None]:
        """Take what to send now: the next message, a digest of the new incidents waiting
        when there are more than the chat's budget allows to send one by one, or (no
        Outbound) an album of one incident's media while the chat is paced."""
        queue, clock = self.queue, self.desk.clock
        if queue.items[0].out.urgent:  # a procedure's message goes alone, before all else
            item = queue.items.pop(0)
            return [item], item.out
        fresh = [i for i in queue.items if not i.named and self._is_new_card(i)]
        behind = bool(fresh) and clock() - fresh[0].queued_at >= DIGEST_LAG
        if len(fresh) >= 2 and (behind or len(fresh) > await self._budget()):
            fresh.sort(key=lambda i: -i.severity)
            covered = [i for i in fresh if i.severity < ACTIONABLE]
            for i in covered:
                queue.items.remove(i)
                if i.out.ref:
                    queue.digested.add((i.out.fixture, i.out.ref))
            for i in fresh:
                i.named = True
            self.health.digests += 1
            queue.last_digest = clock()
            if self.sink.pins:  # the live board needs a pin (recorders have none)
                queue.board.burst(queue.last_digest, fresh[0].out.fixture, len(fresh))
            lines = [digest_line(i.out.reply) for i in fresh]
            title = f"{len(fresh)} new incidents (worst first)"
            reply = Reply("\n".join(lines), title=title)
            return covered, Outbound(fresh[0].out.audience, reply, fixture=fresh[0].out.fixture)
        if not fresh:
            queue.last_digest = None  # the burst is over: back to one card at a time
        # After a digest, the actionable cards it named come next, worst first.
        named = [i for i in queue.items if i.named]
        if not named:
            album = await self._album_items()
            if album:
                return album, None
        item = max(named, key=lambda i: i.severity) if named else queue.items[0]
        queue.items.remove(item)
        return [item], item.out

    def _album_item(self, out: Outbound) -> bool:
        """A message under an incident that is one photo or video (its text the caption)."""
        return bool(out.thread and not out.ref and not out.edit and not out.quote
                    and self.sink.albumable(self.chat, out.reply))

    async def _album_items(self) -> list[Item]:
        """The media to send now as one album, taken off the queue (or none): the next
        message and those after it that are media for the same incident, passing over that
        incident's card when it is already posted (an edit: its latest state follows), when
        more wait than the chat's budget allows one by one and the limits let them go
        together (the first is already admitted)."""
        queue, platform, chat = self.queue, self.platform, self.chat
        first = queue.items[0].out
        if not self._album_item(first):
            return []
        posted = self.posted
        run = [queue.items[0]]
        for item in queue.items[1:]:
            o = item.out
            if o.fixture == first.fixture and o.thread == first.thread and \
                    self._album_item(o):
                run.append(item)
                if len(run) == ALBUM_MAX:
                    break
            elif not (o.ref == first.thread and o.fixture == first.fixture and
                      not o.edit and not o.quote and o.ref in posted):
                break
        if len(run) < 2 or len(run) <= await self._budget():
            return []
        limiter = self.pacer.limiter
        extra = await limiter.together(platform, chat, len(run) - 1)
        if extra < 1:
            return []
        run = run[:1 + extra]
        await limiter.admit_extra(platform, chat, extra)
        for item in run:
            queue.items.remove(item)
            if item.slot is not None and item is not run[0]:
                limiter.release(platform, chat, item.slot)
        return run

    async def _album(self, batch: list[Item]) -> None:
        """Send items as one album, with the journal's marks around it for every outbox
        entry in it (in flight before, all delivered in one round trip after, like
        `_journaled`); other items' `done` each get their own message's id."""
        platform, chat, store = self.platform, self.chat, self.desk.store
        marks = [d for item in batch for d in item.done if isinstance(d, Journaled)]
        journal = marks[0].journal if marks else None
        if marks and journal is not None:
            marks = await journal.flying(platform, chat, marks)
            if not marks:
                return  # stale copies, or another replica holds the outbox now
        out = batch[0].out

        async def send() -> list[str]:
            thread = ""
            if out.thread and store is not None:
                thread = await store.message_ref(out.fixture, platform, chat, out.thread) or ""
            return await self.sink.send_album(chat, [i.out.reply for i in batch],
                                              thread=thread)

        token = SENDING.set(tuple(m.tag for m in marks))
        try:
            mids = await self._retrying(send)
        except Refused as exc:  # one bad item refuses them all: each goes alone instead
            what = f"an album of {len(batch)}"
            if isinstance(exc, Gone):
                self._refused(what, exc, dropped=len(batch))
                mids = [""] * len(batch)
            else:
                self._refused(what, exc, "its items go one by one")
                mids = [await self._deliver(i.out, keep_ref=False, ticket=Ticket(None, chat))
                        for i in batch]
        finally:
            SENDING.reset(token)
        if marks and journal is not None:
            last = max(mids, key=lambda m: int(m) if m.isdigit() else 0, default="")
            await journal.delivered(platform, chat, marks, None, last)
        for item, mid in zip(batch, mids + [""] * len(batch), strict=False):
            for done in item.done:
                if isinstance(done, Journaled) and journal is not None:
                    continue
                try:
                    await done(platform, chat, mid)
                except Exception:
                    log.exception("delivery mark failed for %s:%s", platform, chat)
        self.health.sent(len(batch), self.desk.clock())

    async def _deliver(self, out: Outbound, keep_ref: bool = True, *, ticket: Ticket) -> str:
        """Edit the live message in place, or send anew; retry 429s until it goes. One the
        platform refuses for good is dropped ('': no message id), a media message's text
        alone (the facts) sent once first; either way the chat moves on, and an outbox
        entry is marked done, never left in doubt."""
        async def attempt(o: Outbound) -> str:
            mid = await self._retrying(lambda: self._edit_or_send(o, keep_ref, ticket),
                                       ticketed=True)
            if keep_ref and o.about and mid:  # else the journal records it
                await self._tie(o, mid)
            return mid
        try:
            return await attempt(out)
        except Refused as exc:
            bare = None if isinstance(exc, Gone) else facts(out)
            if bare is None:
                self._refused(self._what(out), exc, dropped=1)
                return ""
            self._refused(self._what(out), exc, "sending its text alone")
        try:
            return await attempt(bare)
        except Refused as exc:
            self._refused(self._what(out) + "'s text", exc, dropped=1)
            return ""

    def _what(self, out: Outbound) -> str:
        """A message by its ids only (outbox entries, live reference), for the log."""
        return ", ".join(SENDING.get()) or out.ref or (out.thread and f"under {out.thread}") \
            or "a message"

    def _refused(self, what: str, exc: Refused, then: str = "", *, dropped: int = 0) -> None:
        """One warning line for a send the platform will never take, naming it by ids (no
        message text): what follows, or that `dropped` messages are dropped."""
        self.health.refused += dropped
        log.warning("%s:%s refused %s for good (%s); %s", self.platform, self.chat, what,
                    exc.reason, then or "dropped")

    async def _retrying(self, call: Callable[[], Awaitable[T]], *,
                        ticketed: bool = False) -> T:
        """Run one platform call until it goes: 429s wait retry_after, outages back off.
        `ticketed`: the call takes its own slots (see Pacer.slot), so a retry needs none."""
        platform, chat, key = self.platform, self.chat, (self.platform, self.chat)
        unreachable = self.desk.unreachable
        backoff = 1.0
        while True:
            try:
                done = await call()
                await self.pacer.heard(platform, chat)
                self._store_back()
                if key in unreachable:
                    unreachable.discard(key)
                    log.warning("%s:%s reachable again", platform, chat)
                return done
            except RetryLater as exc:
                await self.pacer.heard(platform, chat)
                self.health.last_429_at = self.desk.clock()
                metrics.RATE_LIMITED.labels(platform).inc()
                log.warning("%s:%s rate limited; retrying in %.1fs", platform, chat,
                            exc.seconds)
                await self.pacer.sleep(exc.seconds)
                if not ticketed:
                    await self.pacer.readmit(platform, chat)
            except Refused:  # never taken as it is: not tried again (see _deliver)
                await self.pacer.heard(platform, chat)  # it answered: the next is spaced
                raise
            except StoreUnavailable:  # before the send (a live message's id): try again
                await self._store_away()
            except (ConnectionError, TimeoutError, OSError) as exc:
                if key not in unreachable:  # one line per state change
                    unreachable.add(key)
                    log.warning("%s:%s unreachable (%s); retrying until it answers",
                                platform, chat, str(exc).splitlines()[0] if str(exc) else
                                type(exc).__name__)
                await self.pacer.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)

    async def _tie(self, out: Outbound, mid: str) -> None:
        """Remember the incident a message that is not live is about: a reply to it is tied
        to that incident. A hint: with Redis away the message is still sent."""
        store = self.desk.store
        if store is None:
            return
        try:
            await store.tie_message(out.fixture, self.platform, self.chat,
                                    incident_id(out.about), mid)
        except StoreUnavailable:
            log.warning("%s:%s: a message about INC-%d sent, not tied to it (Redis is not "
                        "answering)", self.platform, self.chat, out.about)

    async def _edit_or_send(self, out: Outbound, keep_ref: bool, ticket: Ticket) -> str:
        platform, chat, sink, store = self.platform, self.chat, self.sink, self.desk.store
        slot = self.pacer.slot
        if self.desk.reaction(platform, out):
            await slot(ticket, platform, chat, POST)  # the chasers' slot taken (see call_kind)
            try:
                await sink.react(chat, out.quote)
                return ""  # no message: nothing to edit or quote later
            except (Refused, Unsupported) as exc:  # said with a message instead
                log.info("%s:%s: reaction refused (%s); answered with a message", platform,
                         chat, exc)
        if out.respond is not None:  # no message of the bot's: nothing to edit or quote later
            await slot(ticket, platform, chat, EDIT)
            await sink.respond(chat, out.respond, out.reply)
            return ""
        if out.edit:
            await slot(ticket, platform, chat, EDIT)
            if await sink.edit(chat, out.edit, out.reply):
                return out.edit
            await slot(ticket, platform, chat, POST)
            return await sink.send(chat, out.reply)
        if out.ref and store is not None:
            mid = await store.message_ref(out.fixture, platform, chat, out.ref)
            if mid:
                self.posted.add(out.ref)
                await slot(ticket, platform, chat, EDIT)
                if await sink.edit(chat, mid, out.reply):
                    return mid
        thread = ""
        if out.thread and store is not None:
            thread = await store.message_ref(out.fixture, platform, chat, out.thread) or ""
        await slot(ticket, platform, chat, POST)
        mid = await sink.send(chat, out.reply, thread=thread, quote=out.quote)
        if out.ref:
            self.posted.add(out.ref)
            if store is not None and mid and keep_ref:  # else the journal records it
                try:
                    await store.set_message_ref(out.fixture, platform, chat, out.ref, mid,
                                                int(self.desk.wall().timestamp() * 1000))
                except StoreUnavailable:  # sent: not again; its next version is a new post
                    log.warning("%s:%s: %s sent, its message id not kept (Redis is not "
                                "answering)", platform, chat, out.ref)
        return mid

    # ---------------------------------------------------------------- the live board
    def _board_gap(self) -> float:
        return self.pacer.board_gap(self.platform, self.chat,
                                    self.desk.live_boards(self.platform))

    def _board_due(self) -> str:
        q = self.queue
        return q.board.due(self.desk.clock(), self._board_gap, not q.items, q.last_digest)

    async def _board_turn(self, turn: str) -> None:
        """Post and pin the board, edit it with the latest state, or end it."""
        platform, chat, sink, queue = self.platform, self.chat, self.sink, self.queue
        desk, pacer, board = self.desk, self.pacer, self.queue.board
        hhmm = desk.wall().strftime("%H:%M")
        ref = (board.fixture, platform, chat, boards.REF)
        mid = await desk.store.message_ref(*ref) if desk.store is not None else None
        if turn == "end":
            board.live = False
            if not mid:
                return
            reply = board.final(hhmm, self.posted)
            await self._retrying(lambda: pacer.call(
                platform, chat, EDIT, lambda: sink.edit(chat, mid, reply)), ticketed=True)
            if board.pin_owed:  # never pinned: nothing to take down
                board.pin_owed = ""
            else:
                try:
                    await self._retrying(lambda: pacer.call(
                        platform, chat, PIN, lambda: sink.unpin(chat, mid)), ticketed=True)
                except Unsupported as exc:
                    desk.degraded(platform, chat, UNPINNED, exc)
            if desk.store is not None:
                await desk.store.drop_message_ref(*ref)
            return
        await self._pace()
        call = PIN if turn == "pin" else EDIT if mid else POST
        await pacer.readmit(platform, chat, call)  # a pin counts like a message in a group
        ticket = pacer.ticket(call, chat)
        board.turn_at = desk.clock()
        if turn == "pin":
            pin, board.pin_owed = board.pin_owed, ""
            try:
                await self._retrying(lambda: pacer.call(
                    platform, chat, PIN, lambda: sink.pin(chat, pin), ticket), ticketed=True)
            except Unsupported as exc:  # the board still works, unpinned
                desk.degraded(platform, chat, UNPINNED, exc)
            else:
                desk.restored(platform, chat, UNPINNED)
            return
        board.dirty = False
        board.last_edit = desk.clock()
        just_in = [boards.incident_id(i.out.reply) for i in queue.items
                   if not i.named and self._is_new_card(i)]
        reply = board.render(hhmm, [j for j in just_in if j])
        if mid and await self._retrying(lambda: pacer.call(
                platform, chat, EDIT, lambda: sink.edit(chat, mid, reply), ticket),
                ticketed=True):
            return
        new = await self._retrying(lambda: pacer.call(
            platform, chat, POST, lambda: sink.send(chat, reply), ticket), ticketed=True)
        if desk.store is not None and new:
            await desk.store.set_message_ref(*ref, new)
        board.pin_owed = new


def facts(out: Outbound) -> Outbound | None:
    """A media message as its text alone (what it says, without what it shows), or None
    when it has no media to leave out."""
    reply = out.reply
    if not (reply.media or reply.images) or not (reply.text or reply.title):
        return None
    return replace(out, reply=replace(reply, media=[], images=[]))


def digest_line(reply: Reply) -> str:
    """One line naming an incident: its card's title, place and severity."""
    card = reply.card
    if card is None:
        return reply.title.strip()
    return " · ".join(p for p in (reply.title.strip(), card.place,
                                  f"severity {SEVERITIES.get(card.severity, card.severity)}")
                      if p)
