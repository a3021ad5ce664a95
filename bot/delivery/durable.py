"""The outbox reader: durable messages from Redis into the delivery layer's chat queues.

For each fixture, the replica holding its delivery lease reads the fixture's outbox with a
consumer group and hands each entry to the notifier, one copy per chat, skipping chats its
delivered marks name. An entry is acknowledged once every chat has it, so a crash at any
point leaves it pending; the next lease holder claims it and sends what is missing.

Exactly once, as far as the platforms allow: before each send an in-flight mark is written;
right after the platform's answer, ONE round trip writes the delivered marks (and a card's
platform message id, so a redelivered card edits instead of posting twice). A crash can
therefore leave only the send itself in doubt: an in-flight mark without a delivered one.
On recovery such a send is resolved per platform:

- Slack: every post carries the outbox entries in its message metadata; the reader looks
  the message up (conversations.history / .replies) and, if it is there, records it as
  delivered instead of posting again.
- Telegram has no way to read a chat back, but its message ids grow within a chat: the
  in-flight mark holds the highest id known in the chat then, and the adapter forwards the
  few ids above it into a private archive chat (MATCHDAY_TELEGRAM_ARCHIVE_CHAT), looking
  for the bot's own message with the entry's text. Found: delivered (its id kept for later
  edits). Not found, or no archive chat configured: sent again (at least once; a lost
  safety message would be worse than a repeated one).

While a fixture's own master is away (paused, or lost until its replica takes over) on a
Cluster, its cards still go: if its slot does not answer an in-flight mark within
AWAY_AFTER_S, and this replica surely still holds the fixture's lease (no other may take it
before the lease's grace, LEASE_GRACE_MS after this replica last renewed it, has run out), the
in-flight and delivered marks are kept in the fixture's away journal, in another master's slot
(Outbox.journal_away). Whoever holds the lease next writes that journal home before it claims
anything (Outbox.fold_away), so nothing sent meanwhile is sent again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from bot.delivery.chat_queue import Journaled
from bot.delivery.notifier import Notifier
from bot.delivery.sink import Doubt, Unsupported
from bot.domain.incident.incident_model import incident_id
from bot.domain.messages import Outbound
from bot.observe.repeats import RepeatedFailure
from bot.store import StoreUnavailable, Unconfirmed
from bot.store.outbox import LEASE_GRACE_MS, TAKEN_OVER, Outbox
from bot.tasks import cancel_and_wait

log = logging.getLogger(__name__)
LOOKUP_OFF = "a send a crash left in doubt is not looked up, so it may show twice"
# How long one send left in doubt may be looked for (Telegram forwards, rate limited in the
# archive chat) before it is sent again: the lookup holds up the fixture's other sends, and
# control seeing them in seconds matters more than never repeating one message.
PROBE_WAIT_S = 6.0
# How long a send left in doubt may wait, from its claim, for its turn to be looked up (one
# lookup at a time: the archive chat's limits) before it is sent again without looking.
DOUBT_BUDGET_S = 30.0
# An entry this replica took and that no chat queue, send or lookup has held for this long
# is taken again (a copy dropped somewhere must not strand it: control would never see it).
IDLE_S = 60.0
SWEEP_S = 10.0  # how often the lease holder looks for such entries
# How long a fixture's slot may take to answer an in-flight mark before the send goes with
# the mark in the away journal (a Cluster only): a paused master answers nothing for
# seconds, and control must see the fixture's cards meanwhile.
AWAY_AFTER_S = 0.5
# Taken off the lease's grace when judging how long no other replica can take the lease:
# clocks of the bot and of a promoted replica differ a little.
SURE_MARGIN_S = 1.5


class OutboxReader:
    """Feeds every fixture's outbox into the notifier while this replica holds its lease."""

    def __init__(self, notifier: Notifier, outbox: Outbox, *, owner: str = "",
                 block_ms: int = 500, rescan_s: float = 2.0, idle_s: float = IDLE_S,
                 sweep_s: float = SWEEP_S) -> None:
        self.notifier = notifier
        self.outbox = outbox
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}"
        self.block_ms = block_ms
        self.rescan_s = rescan_s
        self.idle_s = idle_s
        self.sweep_s = sweep_s
        self._loops: dict[str, asyncio.Task[None]] = {}
        self._main: asyncio.Task[None] | None = None
        self.watchdog: asyncio.Task[None] | None = None  # bot.delivery.chat_health.watch, if run
        self._left: dict[tuple[str, str], int] = {}  # (fixture, entry) -> chats still to reach
        # The fixture's lease was seen to move away (a send refused at its in-flight mark, or
        # the lease held by another): when it is ours again, a new term begins, and what was
        # queued under the old one is not sent (the claim queues what is still missing).
        self._lost: set[str] = set()
        self._term: dict[str, int] = {}
        # Sends a crash left in doubt, looked up one at a time beside the fixture's other
        # sends, which do not wait for them (control's cards went minutes late behind them).
        self._doubts: asyncio.Queue[tuple[str, str, Mark, Outbound, float]] = asyncio.Queue()
        self._doubting: asyncio.Task[None] | None = None
        self.refused = 0  # copies not sent: the lease had moved (counts, for the log)
        self.stale_dropped = 0  # copies not sent: queued under an earlier term
        self._probing: Counter[tuple[str, str]] = Counter()  # (fixture, entry) being looked up
        # fixture -> clock time until which no other replica can take its lease (see
        # AWAY_AFTER_S); records this replica put in a fixture's away journal, not yet home;
        # the (fixture, entry, 'platform:chat') sends whose in-flight mark went there; and a
        # call to a fixture's slot given up on and still running (the slot is taken as away)
        self._sure: dict[str, float] = {}
        self._journalled: Counter[str] = Counter()
        self._away_marks: set[tuple[str, str, str]] = set()
        self._slow: dict[str, asyncio.Future[Any]] = {}
        self._folding: dict[str, asyncio.Future[None]] = {}

    def start(self) -> None:
        """Begin watching every fixture's outbox."""
        self._main = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        """Stop reading and hand the leases over (what is unsent stays in the outbox)."""
        await cancel_and_wait([self._main, self.watchdog, self._doubting,
                               *self._loops.values()])
        for fx in list(self._loops):
            try:
                await self.outbox.release(fx, self.owner)
            except Exception:
                pass
        self._loops.clear()

    async def _watch(self) -> None:
        while True:
            try:
                for fx in await self.outbox.fixture_ids():
                    if fx not in self._loops:
                        self._loops[fx] = asyncio.create_task(self._fixture(fx))
            except StoreUnavailable:
                pass
            await asyncio.sleep(self.rescan_s)

    async def _fixture(self, fx: str) -> None:
        leader = False
        swept = time.monotonic()
        failures = RepeatedFailure(log, f"outbox reader for {fx}")
        while True:
            try:
                if not leader:
                    await self.outbox.ensure_group(fx)
                if fx in self._lost:
                    leader = False
                asked = time.monotonic()
                has = await self.outbox.lease(fx, self.owner)
                if has:
                    self._sure[fx] = asked + LEASE_GRACE_MS / 1000 - SURE_MARGIN_S
                else:
                    self._sure.pop(fx, None)
                if has == TAKEN_OVER:  # another replica held it meanwhile: a new term
                    log.warning("outbox of %s: delivery lease taken over from another "
                                "replica; what was queued here before is claimed afresh", fx)
                    self._lost.add(fx)
                    leader = False
                if not has:
                    if leader:
                        log.warning("outbox of %s: delivery lease lost to another replica", fx)
                        self._lost.add(fx)
                    leader = False
                    await asyncio.sleep(1.0)
                    continue
                if not leader:  # just became the reader: take over what the last one held
                    leader = True
                    if fx in self._lost:  # a new term: nothing queued before it is sent
                        self._lost.discard(fx)
                        self._term[fx] = self._term.get(fx, 0) + 1
                        for key in [k for k in self._left if k[0] == fx]:
                            del self._left[key]
                    await self._fold(fx, every=True)  # before the claim: none sent twice
                    await self._take_over(fx, await self._rendered(
                        fx, await self.outbox.claim_all(fx, self.owner)))
                elif self._journalled[fx]:
                    await self._fold(fx)
                for entry, out in await self._rendered(
                        fx, await self.outbox.read(fx, self.owner, self.block_ms)):
                    await self._dispatch(fx, entry, out)
                if time.monotonic() - swept >= self.sweep_s:
                    swept = time.monotonic()
                    await self._sweep(fx)
                failures.ok()
            except asyncio.CancelledError:
                raise
            except Unconfirmed:  # read, but not yet on the replicas (each try WAITs a while)
                leader = False  # claim them again, and re-check, on the next turn
                await asyncio.sleep(0.05)
            except StoreUnavailable:
                leader = False  # the lease may lapse meanwhile: claim again when back
                await asyncio.sleep(1.0)
            except Exception as exc:
                failures.failed(exc)
                leader = False
                await asyncio.sleep(1.0)

    async def _fold(self, fx: str, every: bool = False) -> None:
        """Write the fixture's away journal home (this replica's records, or with `every`
        anyone's: a new lease holder's first step) once its own slot answers again. While
        this replica's own records are not home, nothing of the fixture is claimed; another
        master's slot not answering does not hold up a fixture that has none there."""
        if not self.outbox.gateway.cluster or not (every or self._journalled[fx]):
            return
        fold = self._folding.get(fx)
        if fold is None or fold.done():
            fold = self._folding[fx] = asyncio.ensure_future(self._fold_now(fx))
            fold.add_done_callback(_quiet)
        done, _ = await asyncio.wait({fold}, timeout=AWAY_AFTER_S)
        if done and fold.exception() is None:
            return
        if self._journalled[fx]:
            raise StoreUnavailable(f"the away journal of {fx} is not written home yet")
        log.warning("outbox of %s: its away journal (another master's slot) is not "
                    "answering; claimed without it", fx)

    async def _fold_now(self, fx: str) -> None:
        n = await self.outbox.fold_away(fx)
        self._journalled[fx] = max(0, self._journalled[fx] - n)
        if n:
            log.warning("outbox of %s: %d mark(s) kept in another slot while its master was "
                        "away written home", fx, n)

    async def _sweep(self, fx: str) -> None:
        """Take again the entries this replica took long ago that nothing holds now (no
        chat queue, send or lookup): whatever dropped them, they are sent, not stranded."""
        claimed = await self.outbox.claim_idle(fx, self.owner, int(self.idle_s * 1000))
        if not claimed:
            return
        held = self._held(fx)
        stranded = [(e, o) for e, o in claimed if e not in held]
        if not stranded:
            return
        log.warning("outbox of %s: %d entr%s taken over %.0fs ago and held by no queue or "
                    "send; queued again", fx, len(stranded),
                    "y" if len(stranded) == 1 else "ies", self.idle_s)
        for entry, _ in stranded:
            self._left.pop((fx, entry), None)
        for entry, out in await self._rendered(fx, stranded):
            await self._dispatch(fx, entry, out)

    def _held(self, fx: str) -> set[str]:
        """A fixture's entries with a copy of this term in a chat queue, a send or a lookup."""
        term = self._term.get(fx, 0)
        held = {m.entry for m in self.notifier.journaled() if m.fx == fx and m.term == term}
        return held | {e for (f, e), n in self._probing.items() if f == fx and n > 0}

    async def _take_over(self, fx: str, claimed: list[tuple[str, Outbound]]) -> None:
        """Send what the last reader left; a procedure among it holds the life-safety lane
        afresh, counting only what this replica sends of it."""
        lane = self.notifier.lane
        urgent = {out.urgent for _, out in claimed if out.urgent}
        if lane is not None and urgent:
            lane.restart(urgent)
        for entry, out in claimed:
            await self._dispatch(fx, entry, out)
        if lane is not None:
            for bid in sorted(urgent):
                await lane.took_over(bid)

    async def _rendered(self, fx: str, entries: list[tuple[str, Outbound]]
                        ) -> list[tuple[str, Outbound]]:
        """The entries with their live references rendered now, from the records as they
        are (one read for the batch); a reference that cannot be shown (its incident is
        gone, e.g. a reset) is acknowledged and left out."""
        refs = [out.live for _, out in entries if out.live is not None]
        if not refs:
            return entries
        views = self.notifier.views
        shown = await views(fx, refs) if views is not None else {}
        out: list[tuple[str, Outbound]] = []
        for entry, o in entries:
            if o.live is None:
                out.append((entry, o))
            elif (reply := shown.get(o.live)) is not None:
                out.append((entry, replace(o, reply=reply, live=None, about=o.live.n)))
            else:
                log.warning("outbox entry %s/%s names INC-%d, which cannot be shown; dropped",
                            fx, entry, o.live.n)
                await self.outbox.mark(fx, entry, "-", last=True)
        return out

    async def _dispatch(self, fx: str, entry: str, out: Outbound) -> None:
        await self.notifier.learn_grounds([fx])  # per-ground chats (several fixtures at once)
        chats = [(p, c) for p, cs in self.notifier.targets(out.audience, fx).items()
                 if p in self.notifier.sinks for c in cs]
        states = await self.outbox.chat_states(fx, entry, [f"{p}:{c}" for p, c in chats])
        todo = [(p, c) for p, c in chats if states[f"{p}:{c}"] != "done"]
        if (fx, entry) in self._left:
            return  # already queued by this replica (claimed back after a blip)
        if todo:
            self._left[(fx, entry)] = len(todo)
        for platform, chat in todo:
            mark = Mark(self, fx, entry, self._term.get(fx, 0))
            # an edit is simply redone; an answer through the command's own channel leaves
            # nothing to look up
            if states[f"{platform}:{chat}"] != "fly" or out.edit or out.respond:
                self.notifier.enqueue(platform, chat, out, mark)
            elif out.urgent or out.chase:  # a procedure's (counted in the lane's hold) or a
                # steward's direct message: looked up now, before anything is sent again
                if not await self._found(platform, chat, mark, out, PROBE_WAIT_S):
                    self.notifier.enqueue(platform, chat, out, mark)
            else:
                self._doubt(platform, chat, mark, out)
        if not todo:
            await self.outbox.mark(fx, entry, "-", last=True)

    def _doubt(self, platform: str, chat: str, mark: Mark, out: Outbound) -> None:
        """Look up a send left in doubt in the background (sent again if not found)."""
        self._probing[(mark.fx, mark.entry)] += 1
        self._doubts.put_nowait((platform, chat, mark, out, time.monotonic()))
        if self._doubting is None or self._doubting.done():
            self._doubting = asyncio.create_task(self._resolve_doubts())

    async def _resolve_doubts(self) -> None:
        skipped = 0
        while not self._doubts.empty():
            platform, chat, mark, out, since = self._doubts.get_nowait()
            try:
                skipped += await self._resolve(platform, chat, mark, out, since)
            finally:
                self._probing[(mark.fx, mark.entry)] -= 1
                if self._probing[(mark.fx, mark.entry)] <= 0:
                    del self._probing[(mark.fx, mark.entry)]
        if skipped:
            log.warning("%d send(s) left in doubt by a crash were sent again without looking "
                        "(the lookups took over %.0fs): they may show twice", skipped,
                        DOUBT_BUDGET_S)

    async def _resolve(self, platform: str, chat: str, mark: Mark, out: Outbound,
                       since: float) -> bool:
        """One send left in doubt: looked up, or queued again; True when queued again
        without looking (its turn came too late)."""
        if mark.term != self._term.get(mark.fx, 0) or mark.fx in self._lost:
            return False  # the lease moved meanwhile: its new claim queues what is missing
        left = DOUBT_BUDGET_S - (time.monotonic() - since)
        try:
            if left > 0 and await self._found(platform, chat, mark, out,
                                              min(PROBE_WAIT_S, left)):
                return False
        except Exception:  # never strand it: sending again beats losing it
            log.exception("looking up %s in %s:%s failed; sending it again", mark.tag,
                          platform, chat)
        self.notifier.enqueue(platform, chat, out, mark)
        return left <= 0

    async def _found(self, platform: str, chat: str, mark: Mark, out: Outbound,
                     wait_s: float) -> bool:
        """A send a crash left in doubt: if the platform can show it arrived, record it as
        delivered (and where the card is) instead of sending it again."""
        sink = self.notifier.sinks[platform]
        store = self.notifier.store
        try:
            thread = (await store.message_ref(out.fixture, platform, chat, out.thread) or ""
                      if out.thread and store is not None else "")
            doubt = Doubt(tag=mark.tag, since=int(mark.entry.split("-", 1)[0]) / 1000 - 60,
                          thread=thread, reply=out.reply, edit=bool(out.edit),
                          floor=await self.outbox.floor(mark.fx, mark.entry,
                                                        f"{platform}:{chat}"))
            found = await asyncio.wait_for(sink.find_sent(chat, doubt), wait_s)
        except TimeoutError:
            log.warning("looking up %s in %s:%s took over %.0fs; sending it again",
                        mark.tag, platform, chat, wait_s)
            return False
        except Unsupported as exc:  # e.g. no scope to read a DM's history: sent again
            self.notifier.degraded(platform, chat, LOOKUP_OFF, exc)
            return False
        except Exception as exc:  # the lookup failed: sending again beats losing it
            log.warning("could not look up %s in %s:%s (%s); sending again", mark.tag,
                        platform, chat, exc)
            return False
        if found is None:
            log.info("%s to %s:%s was in flight at a crash and is not there; sending it",
                     mark.tag, platform, chat)
            return False
        if found.message_id:
            await self.delivered(platform, chat, [mark], out, found.message_id)
        else:  # named in a digest that went out
            await self.delivered(platform, chat, [mark])
        return True

    async def flying(self, platform: str, chat: str,
                     marks: list[Journaled]) -> list[Journaled]:
        """The notifier is about to send these entries to a chat: note it (one round trip a
        fixture). The marks cleared to go, judged one by one: a copy queued under an earlier
        lease term is not sent (the claim since queued it anew, perhaps into the same item:
        that newer copy goes), nor one of a fixture whose lease moved meanwhile (its new
        holder claimed the entries and sends them)."""
        current = [m for m in marks if m.term == self._term.get(m.fx, 0)]
        if len(current) < len(marks):
            self.stale_dropped += len(marks) - len(current)
            log.warning("%s:%s: %d copie(s) queued under an earlier delivery lease dropped "
                        "(queued again since); %d other(s) in the same send go", platform,
                        chat, len(marks) - len(current), len(current))
        moved = [m for m in current if m.fx in self._lost]
        go = [m for m in current if m.fx not in self._lost]
        if go:
            known = self.notifier.sinks[platform].floor(chat)
            where = f"{platform}:{chat}"
            held = {fx for fx in {m.fx for m in go}
                    if await self._fly(fx, [m.entry for m in go if m.fx == fx], where, known)}
            moved += [m for m in go if m.fx not in held]
            go = [m for m in go if m.fx in held]
        if moved:
            self._refused(platform, chat, moved)
        return go

    async def _fly(self, fx: str, entries: list[str], where: str, floor: int) -> bool:
        """The in-flight marks of one fixture's entries to a chat: True once written, in
        its slot or (its master away, the lease surely still ours) in its away journal;
        False when the lease moved."""
        cluster = self.outbox.gateway.cluster
        if cluster and not self._away(fx):
            call = asyncio.ensure_future(self.outbox.flying(
                [(fx, e) for e in entries], where, floor, owner=self.owner))
            done, _ = await asyncio.wait({call}, timeout=AWAY_AFTER_S)
            if done and not isinstance(call.exception(), StoreUnavailable):
                return fx in call.result()  # answered (or failed for a reason of ours)
            if not done:  # left to finish on its own: a cut call may leave the client mid-reply
                self._slow[fx] = call
                call.add_done_callback(_quiet)
        if cluster and time.monotonic() < self._sure.get(fx, 0.0):
            try:
                await self.outbox.journal_away(fx, {"k": "fly", "e": entries, "c": where,
                                                    "f": max(floor, 0)})
            except StoreUnavailable:
                pass
            else:
                if time.monotonic() < self._sure.get(fx, 0.0):
                    if not self._journalled[fx]:
                        log.warning("outbox of %s: its master is not answering; sends go on "
                                    "with their marks kept in another slot", fx)
                    self._journalled[fx] += 1
                    self._away_marks.update((fx, e, where) for e in entries)
                    return True
        held: set[str] = set()

        async def write() -> None:
            nonlocal held
            held = await self.outbox.flying([(fx, e) for e in entries], where, floor,
                                            owner=self.owner)
        await _persist(write)
        return fx in held

    def _refused(self, platform: str, chat: str, marks: list[Journaled]) -> None:
        """Copies queued under a lease this replica no longer holds: dropped, and their
        fixtures claimed afresh when the lease is ours again."""
        for m in marks:
            self._left.pop((m.fx, m.entry), None)
            self._lost.add(m.fx)
        self.refused += len(marks)
        log.warning("%s:%s: %d queued outbox message(s) of %s not sent from here: the "
                    "delivery lease moved (they are claimed again by its holder)", platform,
                    chat, len(marks), ", ".join(sorted({m.fx for m in marks})))

    async def delivered(self, platform: str, chat: str, marks: list[Journaled],
                        out: Outbound | None = None, mid: str = "") -> None:
        """The platform took the send: the delivered marks, acks of entries now done
        everywhere and the live message's id, in one round trip."""
        rows = []
        for m in marks:
            key = (m.fx, m.entry)
            if m.term != self._term.get(m.fx, 0):  # sent as a new term began: marked only
                rows.append((m.fx, m.entry, False))  # (the new copies count what is left)
                continue
            left = self._left.get(key, 1) - 1
            if left <= 0:
                self._left.pop(key, None)
            else:
                self._left[key] = left
            rows.append((m.fx, m.entry, left <= 0))
        ref = about = None
        if out is not None and out.ref and mid and not out.edit:
            ref = (out.fixture, platform, chat, out.ref, mid)
        elif out is not None and out.about and mid:
            about = (out.fixture, platform, chat, incident_id(out.about), mid)
        space = self.notifier.sinks[platform].id_space(chat)
        last = (f"{platform}:{space}", int(mid)) if space and mid.isdigit() else None
        reached = _reached(out, platform, rows)
        at = int(self.notifier.wall().timestamp() * 1000) if ref or reached else None
        where = f"{platform}:{chat}"

        def write() -> Awaitable[None]:
            return self.outbox.delivered(rows, where, ref, last, at_ms=at, about=about,
                                         reached=reached)
        if not self.outbox.gateway.cluster or not rows:
            await _persist(write)
            return
        fixtures = sorted({fx for fx, _, _ in rows})
        away = any((fx, e, where) in self._away_marks for fx, e, _ in rows) or any(
            self._away(fx) for fx in fixtures)
        self._away_marks.difference_update((fx, e, where) for fx, e, _ in rows)
        if not away:  # its slot answers as a rule: the marks go home at once
            call = asyncio.ensure_future(write())
            done, _ = await asyncio.wait({call}, timeout=AWAY_AFTER_S)
            if done and not isinstance(call.exception(), StoreUnavailable):
                return call.result()
            if not done:  # left to finish on its own (writing the same marks is harmless)
                call.add_done_callback(_quiet)
                for fx in fixtures:
                    self._slow[fx] = call
        # the platform took it: delivered marks need no lease, and the away journal keeps
        # them until the fixture's slot answers (the chat's next sends do not wait for it)
        home = out.fixture if out is not None and out.fixture in fixtures else fixtures[0]
        try:
            for fx in fixtures:
                mine = fx == home
                await self.outbox.journal_away(fx, {
                    "k": "done", "c": where, "rows": [r for r in rows if r[0] == fx],
                    "last": last, "at": at, "ref": ref if mine else None,
                    "about": about if mine else None, "reached": reached if mine else None})
                self._journalled[fx] += 1
        except StoreUnavailable:  # written home once the slot answers, as before
            await _persist(write)

    def _away(self, fx: str) -> bool:
        """Whether a call to the fixture's slot was given up on and is still running."""
        call = self._slow.get(fx)
        return call is not None and not call.done()

    async def drain(self, timeout: float = 30.0) -> None:
        """Wait until every watched outbox is empty and the chat queues are idle (tests)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            await self.notifier.drain()
            fixtures = await self.outbox.fixture_ids()
            counts = [(await self.outbox.backlog(fx))[0] for fx in fixtures]
            if not any(counts) and not self._left:
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("outbox not drained")


class Mark(Journaled):
    """An outbox entry's delivered callback for one chat; the notifier hands batches of them
    to the reader's journal (`flying`, `delivered`) rather than calling them one by one."""

    def __init__(self, reader: OutboxReader, fx: str, entry: str, term: int = 0) -> None:
        self.journal = self.reader = reader
        self.fx = fx
        self.entry = entry
        self.term = term  # the reader's lease term it was queued under

    async def __call__(self, platform: str, chat: str, _mid: str) -> None:
        await self.reader.delivered(platform, chat, [self])


def _reached(out: Outbound | None, platform: str, rows: list[tuple[str, str, bool]]
             ) -> tuple[str, str, str] | None:
    """(fixture, broadcast id, who or 'post:<platform>') when this send put a broadcast in
    front of its targeted stewards (its one-to-many post, or a steward's direct message)."""
    if out is None or not rows or out.edit:
        return None
    fx = rows[0][0]
    if out.reaches:
        return fx, out.reaches, f"post:{platform}"
    if out.chase and out.audience.startswith("user:"):
        return fx, out.chase, out.audience.removeprefix("user:")
    return None


def _quiet(call: asyncio.Future[Any]) -> None:
    """A call given up on has ended: its outcome is read, so asyncio does not log it."""
    if not call.cancelled():
        call.exception()


async def _persist(write: Callable[[], Awaitable[None]], tries: int = 30) -> None:
    """A mark must be written: a store blip is waited out (up to ~a minute) rather than
    letting a delivered message be sent again."""
    for i in range(tries):
        try:
            await write()
            return
        except StoreUnavailable:
            if i == tries - 1:
                raise
            await asyncio.sleep(min(2.0, 0.1 * 2 ** i))
