"""Outbound rate limits per platform and chat (sliding windows), with an injectable clock.

A reservation is planned synchronously (so concurrent senders queue fairly, in call order),
the caller sleeps until its slot, then is admitted against the log of real send times (which
absorbs late starts). Limits are exact sliding windows: at most `count`
messages in any `per` seconds, per chat, per group chat, or per platform. A limit may count
only some kinds of platform call (Slack limits each Web API method apart: posts per channel,
chat.update and pins per workspace), so a call is asked for with its kind.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Protocol

from bot.delivery.sink import BOT_WIDE
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)
Sleeper = Callable[[float], Awaitable[object]]

# Kinds of platform call, as limits count them.
POST = "post"  # a new message (Telegram sendMessage, Slack chat.postMessage)
EDIT = "edit"  # a message changed in place (editMessageText, chat.update)
PIN = "pin"  # pinning or unpinning a message
# A post that is a chaser (Outbound.chase): counted as a post by every limit, and also by the
# chasers' own bot-wide share, which leaves the rest of the bot's rate to control's cards.
CHASE = "chase"
CHASER_SHARE = 25  # of Telegram's 30 messages a second per bot (issue 32)


@dataclass(frozen=True)
class Limit:
    """At most `count` messages in any `per` seconds within a scope."""

    count: int
    per: float
    scope: str  # "chat" (every chat), "group" (group chats only) or "platform" (the bot)
    # Also counted from when the platform answered the chat's last message (see
    # Notifier._spaced): the platforms count arrivals, and a send held up on the way was seen
    # to arrive too close to the next (Telegram private chats in the crash bench; Slack once,
    # in the crash test on Sentinel). On Slack it costs the control channel ~0.3 s of
    # flashpoint p95. The shared windows count such a send from its answer on every replica
    # (SharedRateLimiter.answered): Telegram's bot-wide 30/s too, which a replica taking
    # over a backlog (a busy process) broke when its sends arrived bunched behind another's.
    from_answer: bool = False
    calls: tuple[str, ...] = ()  # the kinds of call it counts (POST, EDIT, PIN); () every call
    # Counts an album as one call, not one message per item: the per-chat pace, and our own
    # smoothing below (what control sees arrive, not a platform limit).
    once: bool = False


# Telegram: ~1 msg/s per chat, 20/min per group, ~30/s per bot; sends, edits and pins alike.
# Slack limits each Web API method apart, "per API method per workspace per app"
# (https://docs.slack.dev/apis/web-api/rate-limits): chat.postMessage ~1/s per channel with
# short bursts (its workspace-wide limit is not published: a 429 there is waited out),
# chat.update Tier 3 (50+/min per workspace), pins.add / pins.remove Tier 2 (20+/min).
DEFAULT_LIMITS: dict[str, tuple[Limit, ...]] = {
    "telegram": (Limit(1, 1.0, "chat", from_answer=True), Limit(20, 60.0, "group"),
                 Limit(30, 1.0, "platform", from_answer=True),
                 Limit(CHASER_SHARE, 1.0, "platform", calls=(CHASE,))),
    "slack": (Limit(1, 1.0, "chat", from_answer=True, calls=(POST,)),
              Limit(50, 60.0, "platform", calls=(EDIT,)),
              Limit(20, 60.0, "platform", calls=(PIN,))),
}


# For live delivery the minute windows are also paced, so a burst cannot spend a whole
# minute's budget in its first seconds and then leave a control room dark for the rest:
# a Telegram group gets at most 3 messages in any 9 s (a card every 3 s on average, 3 at
# once on a quiet night), Slack at most 5 chat.update calls in any 6 s across the workspace.
# An album is one arrival for that smoothing; Telegram's own limits still count its items
# (field reports: each item of a sendMediaGroup counts against a group's 20 a minute).
PACED_LIMITS: dict[str, tuple[Limit, ...]] = {
    "telegram": (*DEFAULT_LIMITS["telegram"], Limit(3, 9.0, "group", once=True)),
    "slack": (*DEFAULT_LIMITS["slack"], Limit(5, 6.0, "platform", calls=(EDIT,))),
}


def interval(limits: tuple[Limit, ...], platform: str, chat: str, call: str = POST) -> float:
    """The chat's sustained pace for one kind of call: seconds per call under its tightest
    limit."""
    return max((lim.per / lim.count for lim in limits
                if applies(lim, platform, chat, call)), default=0.0)


def shared_interval(limits: tuple[Limit, ...], platform: str, call: str) -> float:
    """Seconds per call of a kind under the platform-wide limits alone (what every chat of
    the platform shares)."""
    return max((lim.per / lim.count for lim in limits
                if lim.scope == "platform" and counts(lim, call)), default=0.0)


def chat_gap(limits: dict[str, tuple[Limit, ...]], platform: str, call: str = POST) -> float:
    """Seconds from the platform's answer to one message to the next message to that chat,
    under a per-chat limit counted `from_answer` (0: none)."""
    return max((lim.per / lim.count for lim in limits.get(platform, ())
                if lim.scope == "chat" and lim.from_answer and counts(lim, call)),
               default=0.0)


def counted(limits: dict[str, tuple[Limit, ...]], platform: str, chat: str,
            call: str) -> tuple[Limit, ...]:
    """The limits a call of this kind to this chat counts against."""
    return tuple(lim for lim in limits.get(platform, ()) if applies(lim, platform, chat, call))


def itemwise(lim: Limit) -> bool:
    """Whether a limit counts each item of an album (else the album once)."""
    return lim.scope != "chat" and not lim.once


def counts(lim: Limit, call: str) -> bool:
    """Whether a limit counts this kind of call (a chaser is a post too)."""
    return not lim.calls or call in lim.calls or (call == CHASE and POST in lim.calls)


def applies(lim: Limit, platform: str, chat: str, call: str = POST) -> bool:
    """Whether a limit counts a call of this kind to this chat (group limits only groups;
    BOT_WIDE only the bot-wide limit)."""
    if not counts(lim, call):
        return False
    if chat == BOT_WIDE:
        return lim.scope == "platform"
    return lim.scope != "group" or is_group(platform, chat)


def is_group(platform: str, chat: str) -> bool:
    """Telegram groups and channels have negative ids (or @names)."""
    return platform == "telegram" and chat.startswith(("-", "@"))


class RateLimiter:
    """Sliding-window limits per (platform, chat); unknown platforms are unlimited."""

    def __init__(self, limits: dict[str, tuple[Limit, ...]] | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Sleeper = asyncio.sleep) -> None:
        self.limits = DEFAULT_LIMITS if limits is None else limits
        self.clock = clock
        self.sleep = sleep
        self._planned: dict[tuple[str, str, int], list[float]] = {}
        self._sent: dict[tuple[str, str, int], list[float]] = {}

    def _windows(self, log: dict[tuple[str, str, int], list[float]], platform: str,
                 chat: str, call: str = POST) -> list[tuple[Limit, list[float]]]:
        out = []
        for i, lim in enumerate(self.limits.get(platform, ())):
            if not applies(lim, platform, chat, call):
                continue
            key = (platform, "" if lim.scope == "platform" else chat, i)
            out.append((lim, log.setdefault(key, [])))
        return out

    @staticmethod
    def _fits(lim: Limit, sent: list[float], t: float, need: int = 1) -> bool:
        """Would `need` sends at t keep every window [x, x+per) at or under the limit?"""
        lo = bisect.bisect_right(sent, t - lim.per)
        starts = [x for x in sent[lo:bisect.bisect_right(sent, t)]] + [t]
        for a in starts:
            n = bisect.bisect_left(sent, a + lim.per) - bisect.bisect_left(sent, a)
            if n + need > lim.count:
                return False
        return True

    def _earliest(self, windows: list[tuple[Limit, list[float]]], t0: float) -> float:
        cands = sorted({t0} | {x + lim.per for lim, sent in windows for x in sent
                               if x + lim.per > t0})
        for t in cands:
            if all(self._fits(lim, sent, t) for lim, sent in windows):
                return t
        return cands[-1]  # unreachable: after the last send every window is empty

    def _book(self, log: dict[tuple[str, str, int], list[float]], platform: str, chat: str,
              cost: int, call: str = POST) -> list[float]:
        """Book `cost` calls at the earliest times every window allows: those times."""
        windows = self._windows(log, platform, chat, call)
        now = self.clock()
        for lim, sent in windows:  # forget sends no window can see any more
            del sent[:bisect.bisect_right(sent, now - lim.per)]
        t, booked = now, []
        for _ in range(max(1, cost)):
            t = self._earliest(windows, t)
            for _, sent in windows:
                bisect.insort(sent, t)
            booked.append(t)
        return booked

    def reserve(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> float:
        """Plan `cost` calls to a chat (in call order): the clock time the first may go."""
        return self._book(self._planned, platform, chat, cost, call)[0]

    async def admit(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """Just before sending: check against the real send times (waking late elsewhere can
        bunch sends), wait if needed, and record the send at the moment it is let through."""
        await self._let_through(platform, chat, cost, call)

    # the longest sleep before looking at the sends again (see HeldLimiter)
    recheck_s = float("inf")

    async def _let_through(self, platform: str, chat: str, cost: int, call: str) -> list[float]:
        """`admit`: the times the sends were recorded at."""
        while True:
            windows = self._windows(self._sent, platform, chat, call)
            now = self.clock()
            t = self._earliest(windows, now)
            if t <= now:
                return self._book(self._sent, platform, chat, cost, call)
            await self.sleep(min(t - now, self.recheck_s))

    def release(self, platform: str, chat: str, slot: float) -> None:
        """Give back a planned slot whose message went with another (an album's items)."""
        for _, planned in self._windows(self._planned, platform, chat):
            i = bisect.bisect_left(planned, slot)
            if i < len(planned) and planned[i] == slot:
                del planned[i]

    async def together(self, platform: str, chat: str, want: int) -> int:
        """How many more messages (at most `want`) may go now in the same call as the one
        just admitted: an album, one call to the chat whose items every limit counting
        messages (group, bot) counts one by one, while the per-chat pace and the smoothing
        (`Limit.once`) count the call."""
        now = self.clock()
        windows = [(lim, sent) for lim, sent in self._windows(self._sent, platform, chat)
                   if itemwise(lim)]
        n = 0
        while n < want and all(self._fits(lim, sent, now, n + 1) for lim, sent in windows):
            n += 1
        return n

    async def admit_extra(self, platform: str, chat: str, n: int) -> None:
        """Count `n` messages going with the one just admitted (see `together`)."""
        now = self.clock()
        for lim, sent in self._windows(self._sent, platform, chat):
            if itemwise(lim):
                for _ in range(n):
                    bisect.insort(sent, now)

    async def answered(self, platform: str, chat: str) -> None:
        """The platform answered a call to the chat: nothing to share in one process (the
        pacer spaces its next call from the answer)."""

    async def wait_until(self, at: float) -> None:
        """Sleep (through the injected sleeper) until clock time `at`."""
        delay = at - self.clock()
        if delay > 0:
            await self.sleep(delay)

    def interval(self, platform: str, chat: str, call: str = POST) -> float:
        """Seconds per call of this kind this chat can sustain."""
        return interval(self.limits.get(platform, ()), platform, chat, call)

    async def budget(self, platform: str, chat: str, horizon: float, call: str = POST) -> int:
        """How many calls this chat could still take within the next `horizon` seconds."""
        return self.budget_now(platform, chat, horizon, call)

    def budget_now(self, platform: str, chat: str, horizon: float, call: str = POST) -> int:
        """`budget`, without waiting for anything (it never needs to here)."""
        if not self.limits.get(platform):
            return 10**6
        now = self.clock()
        windows = [(lim, list(sent))
                   for lim, sent in self._windows(self._sent, platform, chat, call)]
        n, t = 0, now
        while n < 100:
            t = self._earliest(windows, t)
            if t > now + horizon:
                break
            for _, sent in windows:
                bisect.insort(sent, t)
            n += 1
        return n

    async def acquire(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """Plan, wait for the slot, and admit."""
        await self.wait_until(self.reserve(platform, chat, cost, call))
        await self.admit(platform, chat, cost, call)


def unlimited() -> RateLimiter:
    """A limiter that never waits (tests of other parts, console-only runs)."""
    return RateLimiter({})


# How often a sending replica says so beside the bot-wide windows, and for how long it
# counts as sending. It never assumes it is alone: another may have been quiet when it last
# heard, and once the windows' slot refuses writes nobody hears of anybody any more.
PRESENCE_EVERY_S = 1.0
PRESENCE_TTL_S = 60.0
ASSUMED_REPLICAS = 2
# Paced apart, replicas' sends still arrive bunched (each one's batch held up on the way,
# then landing with the other's: 30 sends in 0.34 s were seen at 15/s each): a split leaves
# this much of the rate, so two replicas' bunches together stay under the platform's. 0.8
# (12/s each) and 0.7 (10/s each) still met a 429 in the write-dead-slot test on a loaded
# 2-core machine: a busy loop's sends arrive up to ~1.5 times as dense as they left. Half
# (7/s each) is slower only while the shared windows are away.
SPLIT_SHARE = 0.5


def shared_out(limits: tuple[Limit, ...], replicas: int) -> tuple[Limit, ...]:
    """One replica's part of a platform's bot-wide limits while it cannot count in the
    shared windows: SPLIT_SHARE of the count divided by the replicas sending (at least
    ASSUMED_REPLICAS: 30/s → 7/s each for two), never the whole budget per replica. Other
    limits are left as they are."""
    replicas = max(replicas, ASSUMED_REPLICAS)
    return tuple(replace(lim, count=max(1, int(lim.count * SPLIT_SHARE) // replicas))
                 if lim.scope == "platform" else lim for lim in limits)


def _bot_wide(limits: tuple[Limit, ...]) -> tuple[Limit, ...]:
    return tuple(lim for lim in limits if lim.scope == "platform")


# A send counts in the shared windows as if this much later until the platform's answer
# re-stamps it: another replica's next message cannot overtake one still on its way (a busy
# process that has not yet heard its answers). Waits are asked again at least this often.
HOLD_S = 1.0
RECHECK_S = 0.25
# A take answered this much after it was asked is counted again from its answer (see _take).
LATE_S = 0.25


class HeldLimiter(RateLimiter):
    """A local limiter that counts a send as the shared windows do: HOLD_S later than it
    was let through until the platform answers it, then from the answer. The platform
    counts arrivals; a busy process's sends can leave late and arrive bunched, and counting
    them from when they were let through would not see it."""

    # An answer re-stamps a held send earlier: a wait is looked at again this often, not
    # slept out to when the held stamps would expire.
    recheck_s = RECHECK_S

    def __init__(self, limits: dict[str, tuple[Limit, ...]], *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Sleeper = asyncio.sleep) -> None:
        super().__init__(limits, clock=clock, sleep=sleep)
        # the last call's stamps (held HOLD_S later) and kind, per chat, until answered
        self._held: dict[tuple[str, str], tuple[list[float], str]] = {}

    async def admit(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """Let a call through (see RateLimiter.admit), counted HOLD_S later until answered.
        The stamps moved are the very ones booked: this used to re-read the clock after the
        booking and look for a stamp at that reading, which a real clock has moved on from,
        so nothing was ever held (nor re-stamped at the answer) and the local share counted
        sends from when they left. Two replicas' sends held up on the way (a busy loop) then
        arrived bunched: a replica's 10 let through at 0.08 s arrived at 0.19 s, its next 10
        (let through at 1.08 s, a second after the first left) at 1.08-1.12 s, and with the
        other replica's 30 reached Telegram within 0.95 s (429)."""
        stamps = await self._let_through(platform, chat, cost, call)
        held = [t + HOLD_S for t in stamps]
        for old, new in zip(stamps, held, strict=True):
            self._restamp(platform, chat, call, old, new)
        self._held[(platform, chat)] = (held, call)

    async def answered(self, platform: str, chat: str) -> None:
        """The platform answered this process's last call to the chat: count it from now."""
        held = self._held.pop((platform, chat), None)
        if held is not None:
            now = self.clock()
            for old in held[0]:
                self._restamp(platform, chat, held[1], old, now)

    def _restamp(self, platform: str, chat: str, call: str, old: float, new: float) -> None:
        for _, sent in self._windows(self._sent, platform, chat, call):
            i = bisect.bisect_left(sent, old)
            if i < len(sent) and sent[i] == old:
                del sent[i]
                bisect.insort(sent, new)


class SharedWindows(Protocol):
    """Sliding windows every replica counts in (bot.store.windows.Windows)."""

    @staticmethod
    def key(platform: str, scope: str) -> str:
        """The window key of a platform's chat (or bot-wide) scope."""

    @staticmethod
    def member() -> str:
        """A unique name for one send in the windows (see `take`, `answered`)."""

    async def take(self, windows: list[tuple[str, int, float]], now: float,
                   member: str = "", hold: dict[str, float] | None = None) -> float:
        """Take one slot in each window (as `member`, counted `hold` seconds later per key
        until `answered`), or the seconds to wait before trying again."""

    async def answered(self, windows: list[tuple[str, int, float]], member: str,
                       now: float) -> None:
        """The platform answered `member`'s send: the windows count it from `now`."""

    async def seed(self, windows: list[tuple[str, int, float]], sends: dict[str, float],
                   now: float) -> None:
        """Count sends made elsewhere (member -> time) in these windows, if not yet."""

    async def used(self, windows: list[tuple[str, int, float]], now: float) -> list[int]:
        """The slots taken in each window now."""

    async def present(self, platform: str, replica: str, now: float, ttl_s: float) -> int:
        """Say this replica sends on `platform`: how many replicas did within `ttl_s`."""


class SharedRateLimiter:
    """The same limits, counted in Redis so every replica shares them (sends and edits alike).

    `windows` is bot.store.windows.Windows; `clock` is wall time (replicas share it). While
    the windows of a call are away (Redis, or on a Cluster a slot that does not answer or
    takes no writes), its chat's windows and the bot-wide ones are taken apart, each where
    it still can: the chat's in its own slot, else under the platform's tag, else paced by
    a local limiter with the chat's limits; the bot-wide ones in their slot, else paced
    locally at this replica's share of them (`shared_out`: never the whole bot-wide rate
    per replica). So an answer that needs nothing else from the store still leaves. The
    windows that were away are asked again every `retry_s` seconds."""

    def __init__(self, windows: SharedWindows, limits: dict[str, tuple[Limit, ...]] | None = None,
                 *, clock: Callable[[], float] = time.time,
                 sleep: Sleeper = asyncio.sleep, monotonic: Callable[[], float] = time.monotonic,
                 retry_s: float = 5.0) -> None:
        self.windows = windows
        self.limits = PACED_LIMITS if limits is None else limits
        self.clock = clock
        self.sleep = sleep
        # the chat's own limits, and this replica's share of the bot-wide ones, when their
        # shared windows are away
        self.local = RateLimiter({p: tuple(lim for lim in lims if lim.scope != "platform")
                                  for p, lims in self.limits.items()},
                                 clock=monotonic, sleep=sleep)
        self.local_bot = HeldLimiter({p: shared_out(_bot_wide(lims), ASSUMED_REPLICAS)
                                      for p, lims in self.limits.items()},
                                     clock=monotonic, sleep=sleep)
        self.retry_s = retry_s
        self.replica = uuid.uuid4().hex[:12]  # this limiter's name among the replicas
        self.replicas: dict[str, int] = {}  # platform -> replicas sending, as last heard
        self._presence_due: dict[str, float] = {}  # platform -> monotonic time to say so
        self._saying: set[asyncio.Task[None]] = set()  # presence writes under way
        # (platform, chat) -> monotonic time to ask Redis again, while its windows are away
        self.away: dict[tuple[str, str], float] = {}
        # the first key of a part of them (see `_apart`) -> the same, for that part
        self.part_away: dict[str, float] = {}
        # (platform, chat) -> this replica's last send there, while its answer is awaited
        # ... and the shared windows counting it from the answer
        self._taken: dict[tuple[str, str], tuple[str, list[tuple[str, int, float]]]] = {}
        # (platform, chat) -> this replica's recent sends there (member -> the time each
        # counts from): a chat's windows taken in one place (its own slot, or under the
        # platform's tag while that slot is away) are told of those taken in the other, so
        # the switch never starts a chat's count afresh (a group's 20 a minute broken by one)
        self._recent: dict[tuple[str, str], dict[str, float]] = {}
        # (platform, chat) whose windows under the platform's tag were told this spell
        self._seeded: set[tuple[str, str]] = set()

    def _shared(self, platform: str, chat: str) -> bool:
        """Whether to ask the shared windows now (up, or time to look again)."""
        until = self.away.get((platform, chat))
        return until is None or self.local.clock() >= until

    def _away(self, platform: str, chat: str) -> None:
        if (platform, chat) not in self.away:
            log.warning("shared rate limits of %s:%s unavailable (their slot is not answering "
                        "or takes no writes): taken apart where they can be, else paced "
                        "here", platform, chat)
        self.away[(platform, chat)] = self.local.clock() + self.retry_s

    def _back(self, platform: str, chat: str) -> None:
        self._seeded.discard((platform, chat))
        if self.away.pop((platform, chat), None) is not None:
            log.warning("shared rate limits of %s:%s back", platform, chat)

    async def _present(self, platform: str) -> None:
        """Say this replica sends (at most every PRESENCE_EVERY_S), beside the sends: no
        send waits on it. Awaited, it held one send a second for the store's timeouts (two
        tries of 2 s) while the master of the bot-wide windows was paused."""
        now = self.local.clock()
        if now < self._presence_due.get(platform, 0.0) or platform not in self.limits:
            return
        self._presence_due[platform] = now + PRESENCE_EVERY_S
        if not self._saying:  # one write at a time
            task = asyncio.create_task(self._say(platform))
            self._saying.add(task)
            task.add_done_callback(self._saying.discard)

    async def _say(self, platform: str) -> None:
        """Say this replica sends and learn how many do: the local pacing's share of the
        bot-wide rate follows it."""
        try:
            n = await self.windows.present(platform, self.replica, self.clock(),
                                           PRESENCE_TTL_S)
        except StoreUnavailable:
            return  # the count last heard stands
        except Exception as exc:  # beside the sends: nobody else would hear of it
            log.warning("replicas sending on %s not counted (%s)", platform,
                        type(exc).__name__)
            return
        if n != self.replicas.get(platform):
            self.replicas[platform] = n
            self.local_bot.limits[platform] = shared_out(_bot_wide(self.limits[platform]), n)

    async def _apart(self, platform: str, chat: str, call: str) -> None:
        """Take a call's windows apart (its windows together are away): the chat's, then
        the bot-wide ones, each shared where its slot takes it, else paced locally."""
        limits = self._counting(platform, chat, call)
        scopes = self._scopes(platform, chat, call)
        own = [(lim, sc) for lim, sc in zip(limits, scopes, strict=True)
               if lim.scope != "platform"]
        bot = [(lim, sc) for lim, sc in zip(limits, scopes, strict=True)
               if lim.scope == "platform"]
        held = [(lim, (self.windows.key(platform, "held:" + key.rpartition("}:")[2]), n, per))
                for lim, (key, n, per) in own]  # the same, under the platform's tag
        member = self.windows.member()
        counted: list[tuple[str, int, float]] = []
        for part in ([own, held] if own else []), ([bot] if bot else []):
            taken = None
            for windows in part:
                if windows is held and (platform, chat) not in self._seeded:
                    await self._tell(platform, chat, [sc for _, sc in held], elsewhere=True)
                elif windows is own and self._due_again(own[0][1][0]):
                    await self._tell(platform, chat, [sc for _, sc in own])
                taken = await self._take_part(windows, member, chat != BOT_WIDE)
                if taken is not None and windows is own:
                    self._seeded.discard((platform, chat))  # counted at home again
                if taken is not None:
                    break
            if taken is None and part:
                await (self.local if part[0] is own else self.local_bot).acquire(
                    platform, chat, 1, call)
            counted += taken or []
        if own:
            self._sent(platform, chat, member)
        if counted:
            self._taken[(platform, chat)] = (member, counted)

    def _sent(self, platform: str, chat: str, member: str) -> None:
        """Keep a send to a chat among its recent ones (see `_recent`)."""
        if chat == BOT_WIDE:
            return
        span = max((lim.per for lim in self._counting(platform, chat)
                    if lim.scope != "platform"), default=0.0)
        if span <= 0:
            return
        now = self.clock()
        recent = self._recent.setdefault((platform, chat), {})
        recent[member] = now
        for old in [m for m, at in recent.items() if at <= now - span]:
            del recent[old]

    def _due_again(self, first: str) -> bool:
        """Whether a part of a call's windows was away and is to be asked again now."""
        until = self.part_away.get(first)
        return until is not None and self.local.clock() >= until

    async def _tell(self, platform: str, chat: str, windows: list[tuple[str, int, float]],
                    elsewhere: bool = False) -> None:
        """Count this replica's recent sends to a chat in windows about to be taken after
        it counted them elsewhere: its own slot's again, or (`elsewhere`) those under the
        platform's tag while that slot is away."""
        recent = self._recent.get((platform, chat))
        if recent:
            try:
                await self.windows.seed(windows, recent, self.clock())
            except StoreUnavailable:
                return  # those windows are away too: the take that follows finds so
        if elsewhere:
            self._seeded.add((platform, chat))  # told for this spell

    async def _take_part(self, windows: list[tuple[Limit, tuple[str, int, float]]],
                         member: str, hold: bool) -> list[tuple[str, int, float]] | None:
        """Take a slot in windows of one slot, waiting for room: those counted from the
        platform's answer (see `answered`), or None if they are away."""
        scopes = [sc for _, sc in windows]
        later = {sc[0]: HOLD_S for lim, sc in windows if lim.from_answer} if hold else {}
        first = scopes[0][0]
        while self.local.clock() >= self.part_away.get(first, 0.0):
            try:
                wait = await self._take(scopes, member, later)
            except StoreUnavailable:
                self.part_away[first] = self.local.clock() + self.retry_s
                return None
            self.part_away.pop(first, None)
            if wait <= 0:
                return [sc for lim, sc in windows if lim.from_answer]
            await self.sleep(min(wait, RECHECK_S))
        return None

    async def _take(self, scopes: list[tuple[str, int, float]], member: str,
                    hold: dict[str, float]) -> float:
        """Take a slot in the shared windows as of now (see SharedWindows.take). A take that
        was answered late (it waited in a paused master, then went to the promoted one) is
        counted again from the time it was granted: counted from when it was asked, the
        sends it let go would sit seconds back in the windows, and the next second's sends
        would find room beside them (31 in a second after bench/saturday.py's paused master)."""
        asked = self.clock()
        wait = await self.windows.take(scopes, asked, member, hold)
        now = self.clock()
        if wait <= 0 and now - asked > LATE_S:
            held = [sc for sc in scopes if sc[0] in hold]
            for part, at in ((held, now + HOLD_S), ([sc for sc in scopes if sc not in held], now)):
                if part:
                    try:
                        await self.windows.answered(part, member, at)
                    except StoreUnavailable:
                        pass  # the slot went away again: its windows are paced apart
        return wait

    def _scopes(self, platform: str, chat: str, call: str = POST,
                per_call: bool = True) -> list[tuple[str, int, float]]:
        """The shared windows counting a call of this kind to this chat (per_call=False:
        only those counting an album's items one by one)."""
        out = []
        for lim in self.limits.get(platform, ()):
            if not applies(lim, platform, chat, call) or (not per_call and not itemwise(lim)):
                continue
            scope = "bot" if lim.scope == "platform" else f"{lim.scope}:{chat}"
            scope += f":{lim.count}/{lim.per:g}" + "".join(f":{c}" for c in lim.calls)
            out.append((self.windows.key(platform, scope), lim.count, lim.per))
        return out

    def reserve(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """No planned slots here: the shared windows are taken when a call goes (admit)."""
        return None

    def release(self, platform: str, chat: str, slot: float) -> None:
        """Nothing planned to give back (see reserve)."""

    async def wait_until(self, at: float) -> None:
        """Sleep until clock time `at`."""
        delay = at - self.clock()
        if delay > 0:
            await self.sleep(delay)

    async def admit(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """Take the shared slots for a call now (there is no plan to check it against)."""
        await self.acquire(platform, chat, cost, call)

    async def acquire(self, platform: str, chat: str, cost: int = 1, call: str = POST) -> None:
        """Wait until every window has room, and take it (once per call of `cost`). A call
        to a chat counts in the limits counted `from_answer` as if HOLD_S later until its
        answer re-stamps it (see `answered`); meanwhile a wait is asked again every
        RECHECK_S, as such a re-stamp can bring the room nearer."""
        scopes = self._scopes(platform, chat, call)
        hold = {} if chat == BOT_WIDE else {
            key: HOLD_S for lim, (key, _, _) in zip(self._counting(platform, chat, call),
                                                   scopes, strict=True) if lim.from_answer}
        await self._present(platform)
        for _ in range(max(1, cost)):
            while True:
                if not self._shared(platform, chat):
                    await self._apart(platform, chat, call)
                    break
                member = self.windows.member()
                try:
                    if (platform, chat) in self.away:  # asked again: the sends made apart
                        await self._tell(platform, chat, self._own(platform, chat, call))
                    wait = await self._take(scopes, member, hold)
                except StoreUnavailable:
                    self._away(platform, chat)
                    continue
                self._back(platform, chat)
                if wait <= 0:
                    self._sent(platform, chat, member)
                    self._taken[(platform, chat)] = (member, [
                        sc for lim, sc in zip(self._counting(platform, chat, call), scopes,
                                              strict=True) if lim.from_answer])
                    break
                await self.sleep(min(wait, RECHECK_S))

    async def answered(self, platform: str, chat: str) -> None:
        """The platform answered this replica's last call to the chat: the limits counted
        `from_answer` (the chat's pace, the bot-wide rate) count that call from now, in the
        shared windows, so another replica's next message cannot arrive too close behind one
        held up on the way (the platform counts arrivals). Best effort: it never raises, as
        the call it follows has gone."""
        await self.local_bot.answered(platform, chat)
        member, scopes = self._taken.pop((platform, chat), ("", []))
        recent = self._recent.get((platform, chat))
        if recent is not None and member in recent:
            recent[member] = self.clock()  # counted from its answer, as the windows do
        if scopes:
            try:
                await self.windows.answered(scopes, member, self.clock())
            except Exception as exc:  # a hint: the send went, nothing here may redo it
                log.debug("answer time of %s:%s not shared (%s)", platform, chat, exc)

    def _local_budget(self, platform: str, chat: str, horizon: float, call: str) -> int:
        return min(self.local.budget_now(platform, chat, horizon, call),
                   self.local_bot.budget_now(platform, chat, horizon, call))

    def _own(self, platform: str, chat: str, call: str) -> list[tuple[str, int, float]]:
        """The chat's own windows of a call (not the bot-wide ones)."""
        return [sc for lim, sc in zip(self._counting(platform, chat, call),
                                      self._scopes(platform, chat, call), strict=True)
                if lim.scope != "platform"]

    def _counting(self, platform: str, chat: str, call: str = POST) -> list[Limit]:
        """The limits `_scopes` names windows for, in the same order."""
        return [lim for lim in self.limits.get(platform, ()) if applies(lim, platform, chat, call)]

    def interval(self, platform: str, chat: str, call: str = POST) -> float:
        """Seconds per call of this kind this chat can sustain."""
        return interval(self.limits.get(platform, ()), platform, chat, call)

    async def together(self, platform: str, chat: str, want: int) -> int:
        """How many more messages (at most `want`) may go now with the one just taken, in
        one call (an album): the counts of the limits counting items (see `itemwise`)."""
        scopes = self._scopes(platform, chat, per_call=False)
        if not scopes:
            return want
        if not self._shared(platform, chat):
            return min(await self.local.together(platform, chat, want),
                       await self.local_bot.together(platform, chat, want))
        try:
            used = await self.windows.used(scopes, self.clock())
        except StoreUnavailable:
            self._away(platform, chat)
            return 0
        return max(0, min([want] + [count - n for (_, count, _), n
                                    in zip(scopes, used, strict=True)]))

    async def admit_extra(self, platform: str, chat: str, n: int) -> None:
        """Take `n` slots of the limits counting items (see `together`)."""
        scopes = self._scopes(platform, chat, per_call=False)
        for _ in range(n):
            while scopes:
                if not self._shared(platform, chat):
                    await self.local.admit_extra(platform, chat, 1)
                    await self.local_bot.admit_extra(platform, chat, 1)
                    break
                try:
                    wait = await self._take(scopes, self.windows.member(), {})
                except StoreUnavailable:
                    self._away(platform, chat)
                    continue
                if wait <= 0:
                    break
                await self.sleep(wait)

    async def budget(self, platform: str, chat: str, horizon: float, call: str = POST) -> int:
        """Roughly how many calls this chat could still take within `horizon` seconds."""
        scopes = self._scopes(platform, chat, call)
        if not scopes:
            return 10**6
        if not self._shared(platform, chat):
            return self._local_budget(platform, chat, horizon, call)
        try:
            used = await self.windows.used(scopes, self.clock())
        except StoreUnavailable:
            self._away(platform, chat)
            return self._local_budget(platform, chat, horizon, call)
        return max(0, min(int(count * max(1.0, horizon / per)) - n
                          for (_, count, per), n in zip(scopes, used, strict=True)))
