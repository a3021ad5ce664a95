"""The life-safety lane: while a procedure (evacuate, lockdown, …) goes out, the bot sends
nothing else, on any replica.

The procedure's command holds the lane in Redis before its messages enter the outbox; every
replica's delivery asks whether it is held (at most every `poll_s`) before each message that
is not part of the procedure, and waits while it is. The hold lives only as long as a replica
delivering the procedure is alive: it expires after `beat_s` unless the replica with the
procedure's messages queued renews it (a heartbeat, like the delivery lease), up to a cap.
That replica gives the lane back once it has delivered every message of the procedure. When
it dies, the hold lapses within `beat_s` and the other replicas' messages go again; the
replica that takes over the fixture's outbox holds the lane afresh for what it claimed, and
gives it back when that is delivered."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.store import StoreUnavailable
from bot.tasks import cancel_and_wait

log = logging.getLogger(__name__)
# A procedure's sends are spaced a little wider than the bot-wide pace: they leave on time
# but arrive with a few milliseconds of jitter, and at exactly 30/s one in a thousand
# arrived inside Telegram's window (bench/broadcast.py).
HEADROOM = 1.03
BEAT_S = 5.0  # as long as a fixture's delivery lease (bot.store.outbox.LEASE_MS)
BEATS_PER_HOLD = 4  # renewals within one hold: a slow round trip never lets it lapse
# A message waits at most this long for the lane to be read (once every poll_s, one read for
# all of a replica's chats); a slower read goes on beside the sends, which go on with what
# was last known meanwhile, as when the store does not answer. With the lane's master paused,
# every chat's next message waited out the store's timeouts (two tries of 2 s) each poll_s:
# very likely the stop of every Telegram send for a whole 8 s pause in an earlier
# bench/saturday.py --fault pause run, whose paused master also held `{lane}`.
READ_WAIT_S = 0.25


class LaneState(Protocol):
    """Where the lane is held (bot.store.stewarding_keys.Stewarding)."""

    async def hold_lane(self, bid: str, messages: int, ttl_s: float) -> None:
        """Hold the lane for a procedure of `messages` sends, for ttl_s."""

    async def keep_lane(self, bid: str, messages: int, ttl_s: float, *,
                        recount: bool = False) -> bool:
        """Renew the procedure's hold for ttl_s (recount: as `messages` sends from now), or
        take the lane for it as `messages` sends when nobody holds it; False when another
        procedure holds it."""

    async def lane(self) -> tuple[str, int] | None:
        """(procedure id, messages) while held."""

    async def release_lane(self, bid: str) -> bool:
        """Give the lane back if the procedure holds it."""


def lane_cap(messages: int, per_second: float = 30.0) -> float:
    """How long a procedure may hold the lane: twice the platform's floor, plus a margin."""
    return 2.0 * messages / per_second + 30.0


class Spacer:
    """Takes rate-limit slots one at a time, each at least `gap` seconds after the last: a
    thousand chat workers polling the shared limiter at once would bunch their sends into
    bursts that arrive too close together (429s)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._admitting = asyncio.Semaphore(1)
        self._next = float("-inf")

    async def admit(self, take: Callable[[], Awaitable[None]], gap: float) -> None:
        """Take one slot (`take`) on this spacer's schedule."""
        async with self._admitting:
            now = self.clock()
            if self._next > now:
                await asyncio.sleep(self._next - now)
            start = max(self._next, now)  # on schedule: the round trip is not added to it
            await take()
            self._next = max(start + gap * HEADROOM, self.clock() - gap)


class Lane:
    """One replica's view of the lane (cached for `poll_s`, so a send costs no round trip),
    and the heartbeat of the procedures this replica is delivering."""

    def __init__(self, state: LaneState, *, poll_s: float = 0.25, beat_s: float = BEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.state = state
        self.poll_s = poll_s
        self.beat_s = beat_s
        self.clock = clock
        self._held: tuple[str, int] | None = None
        self._checked = float("-inf")
        self._delivered: dict[str, int] = {}
        self._queued: dict[str, int] = {}  # procedure -> its messages queued here
        self._outstanding: dict[str, int] = {}  # procedure -> queued here, not yet delivered
        self._since: dict[str, float] = {}  # procedure -> when this replica first queued it
        self._done: set[str] = set()  # given back: never renewed again
        self._restarted: set[str] = set()  # counted afresh after a takeover (took_over)
        self._lock = asyncio.Lock()
        self._beat: asyncio.Task[None] | None = None
        self._reading: asyncio.Task[None] | None = None  # the lane's read under way
        self._read_since = 0.0  # when it started, on the event loop's clock
        self.spacer = Spacer(clock)

    async def hold(self, bid: str, messages: int) -> None:
        """Take the lane for a procedure before its messages are queued (the replica that
        delivers them renews it from then on)."""
        await self.state.hold_lane(bid, messages, self.beat_s)
        self._held, self._checked = (bid, messages), self.clock()

    async def held(self) -> bool:
        """Whether a procedure holds the lane now (as of at most poll_s ago)."""
        if self.clock() - self._checked >= self.poll_s:
            loop = asyncio.get_running_loop()
            if self._reading is None or self._reading.done():
                self._reading = loop.create_task(self._read())
                self._read_since = loop.time()
            left = self._read_since + READ_WAIT_S - loop.time()
            if left > 0:
                await asyncio.wait({self._reading}, timeout=left)
            if self._reading.done():
                self._reading.result()  # anything but an outage is raised here
        return self._held is not None

    async def _read(self) -> None:
        try:
            self._held = await self.state.lane()
        except StoreUnavailable:  # unknown: go on with what was last known
            pass
        self._checked = self.clock()

    def queued(self, bid: str) -> None:
        """A message of a procedure entered one of this replica's chat queues: from now on
        this replica keeps the hold alive until it has delivered it."""
        self._queued[bid] = self._queued.get(bid, 0) + 1
        self._outstanding[bid] = self._outstanding.get(bid, 0) + 1
        self._since.setdefault(bid, self.clock())
        self._done.discard(bid)
        if self._beat is None or self._beat.done():
            self._beat = asyncio.get_running_loop().create_task(self._heartbeat())

    def restart(self, bids: set[str]) -> None:
        """This replica is taking over a fixture's outbox (its last reader died): the
        procedures' messages it claims are counted afresh (see took_over). One it is still
        delivering itself (claimed back after a Redis blip) goes on as it was."""
        for bid in bids:
            if self._outstanding.get(bid, 0) == 0:
                self._queued[bid] = self._delivered[bid] = 0
                self._done.discard(bid)
                self._restarted.add(bid)

    async def took_over(self, bid: str) -> None:
        """The claimed messages of a procedure are queued here: hold the lane for them (the
        dead replica's hold has lapsed or is renewed as ours), or give it back when none was
        left to send."""
        if bid not in self._restarted:
            return  # this replica was delivering it all along
        self._restarted.discard(bid)
        m = self._queued.get(bid, 0)
        async with self._lock:
            try:
                if m == 0 or self._delivered.get(bid, 0) >= m:
                    await self.state.release_lane(bid)
                    self._finish(bid)
                    return
                if await self.state.keep_lane(bid, m, self.beat_s, recount=True):
                    self._held, self._checked = (bid, m), self.clock()
            except StoreUnavailable:
                log.warning("life-safety lane of %s not taken over (Redis is not answering)",
                            bid)

    async def _heartbeat(self) -> None:
        while True:
            async with self._lock:
                now = self.clock()
                live = [b for b, k in self._outstanding.items() if k > 0
                        and b not in self._done
                        and now - self._since.get(b, now) < lane_cap(self._queued.get(b, 0))]
                if not live:
                    self._beat = None
                    return
                for bid in live:
                    try:
                        await self.state.keep_lane(bid, 0, self.beat_s)
                    except StoreUnavailable:
                        pass
            await asyncio.sleep(self.beat_s / BEATS_PER_HOLD)

    async def admit(self, take: Callable[[], Awaitable[None]], gap: float) -> None:
        """Take a procedure message's rate-limit slot (`take`), one chat at a time and at
        least `gap` seconds (the platform's bot-wide pace) after the last (see Spacer)."""
        await self.spacer.admit(take, gap)

    async def delivered(self, bid: str) -> None:
        """One message of a procedure reached its chat; the last one gives the lane back."""
        async with self._lock:
            n = self._delivered[bid] = self._delivered.get(bid, 0) + 1
            left = self._outstanding[bid] = max(0, self._outstanding.get(bid, 0) - 1)
            if left == 0:
                await self._read()  # the last one here: as the lane is now
            else:
                await self.held()
            held = self._held
            if held is None or held[0] != bid:
                return
            if not ((held[1] and n >= held[1]) or (not held[1] and left == 0)):
                return
            try:
                await self.state.release_lane(bid)
            except StoreUnavailable:  # it lapses without its heartbeat
                log.warning("life-safety lane of %s not released (Redis is not answering)",
                            bid)
                return
            self._held, self._checked = None, self.clock()
            self._finish(bid)

    def _finish(self, bid: str) -> None:
        self._done.add(bid)
        for d in (self._delivered, self._queued, self._outstanding, self._since):
            d.pop(bid, None)

    async def close(self) -> None:
        """Stop the heartbeat (a hold still renewed lapses within beat_s)."""
        # re-cancelled until it ends: a cancel that lands inside a Redis call can go unheeded
        # (see bot.tasks), and a heartbeat running on would hold every other message back
        # until the lane's cap (~30 s) after a clean shutdown
        await cancel_and_wait([self._beat, self._reading])
        self._beat = self._reading = None

    async def release(self, bid: str) -> None:
        """Give the lane back at once: the procedure's write was refused, nothing goes out."""
        await self.state.release_lane(bid)
        self._held, self._checked = None, self.clock()
        self._finish(bid)
