"""Keys kept in two copies on a Cluster, on slots of different masters, so that one master
paused or lost does not stop what every chat shares (the bot-wide rate windows): each call
goes to both copies at once, and the first answer (with the other's, if it comes soon after)
is the answer. A fixture's live messages' ids and its outbox's away journal use the second
copy's slot too (`copy_key`), so its cards go on while its own master is away."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from bot.store.base import StoreUnavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

# How long a copy that has not answered yet is waited for once the other has. Two masters
# answer within milliseconds of each other; a paused one not for seconds (the client's two
# tries of 2 s), and meanwhile every send of every chat would wait for it.
GRACE_S = 0.25
# How long a group kept in one copy only (a chat's own windows) is waited for before its
# caller goes on without it (the chat's windows then kept under the platform's tag, in two
# copies): a paused master would hold each of its chats' sends for the client's timeouts.
ALONE_DEADLINE_S = 0.5
# A copy whose call failed is left out this long before it is asked again (one call then).
RETRY_S = 5.0
# The second copy's slot is about this far round the ring from the first's: on slots split
# evenly among 2, 3 or 4 masters, two slots this far apart are on different masters.
APART = REDIS_CLUSTER_HASH_SLOTS // 2
APART_WITHIN = 40


@functools.lru_cache(maxsize=4096)
def second_tag(tag: str) -> str:
    """The hash tag of a tag's second copy: the first `<tag>:copy<n>` whose slot is about
    half the ring from the tag's (the same on every replica: it is computed, not chosen)."""
    first = key_slot(tag.encode())
    for n in range(1, 100_000):
        candidate = f"{tag}:copy{n}"
        apart = abs(key_slot(candidate.encode()) - first)
        if abs(min(apart, REDIS_CLUSTER_HASH_SLOTS - apart) - APART) <= APART_WITHIN:
            return candidate
    raise AssertionError("unreachable: CRC16 spreads tags over every slot")


def in_copy(key: str, tag: str, copy: str) -> str:
    """`key` (carrying hash tag `tag`) as it is named in the copy tagged `copy`."""
    return key.replace("{" + tag + "}", "{" + copy + "}", 1)


def hash_tag(key: str) -> str:
    """A key's hash tag (what decides its Cluster slot); the key itself when it has none."""
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start + 1:end] if start >= 0 and end > start + 1 else key


def copy_key(key: str) -> str:
    """`key` as named in its hash tag's second copy (on another master's slot)."""
    tag = hash_tag(key)
    return in_copy(key, tag, second_tag(tag))


class Copies:
    """Calls to the copies of a group of keys (a tag alone is one copy), and which to ask: a
    copy whose call is still pending after it was given up on is not asked again until that
    call ends, and one whose call failed is asked only when no other is in (for RETRY_S)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 grace_s: float = GRACE_S, retry_s: float = RETRY_S,
                 what: str = "the shared rate windows") -> None:
        self.clock = clock
        self.what = what  # what the copies hold, as the log names it
        self.grace_s = grace_s
        self.retry_s = retry_s
        self._out: dict[str, float] = {}  # copy -> clock time to ask it again (inf: pending)

    def live(self, copies: list[str]) -> list[str]:
        """The copies to ask now: those in, else those not still pending (maybe none)."""
        now = self.clock()
        idle = [c for c in copies if self._out.get(c, 0.0) != math.inf]
        return [c for c in idle if self._out.get(c, 0.0) <= now] or idle

    async def first(self, calls: dict[str, Callable[[], Awaitable[T]]],
                    deadline_s: float | None = None) -> dict[str, T]:
        """Run one call per live copy at once: the answers in when the first came, and any
        other within the grace after it. A call still running then is left to finish on its
        own, and its copy is left out until it has (a rate-window take that lands late stays
        counted: one send too many in one copy, for one window, errs on the safe side).
        StoreUnavailable when no copy answered (within `deadline_s`, if given)."""
        live = self.live(list(calls))
        if not live:
            raise StoreUnavailable("still waiting for an earlier call to " + ", ".join(calls))
        tasks = {asyncio.ensure_future(calls[c]()): c for c in live}
        answers: dict[str, T] = {}
        failure: BaseException | None = None
        pending = set(tasks)
        end = None if deadline_s is None else self.clock() + deadline_s
        while pending and not answers:
            left = None if end is None else max(0.0, end - self.clock())
            done, pending = await asyncio.wait(pending, timeout=left,
                                               return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                failure = self._settle(task, tasks[task], answers) or failure
            if not done:
                break  # the deadline
        if pending and answers:
            done, pending = await asyncio.wait(pending, timeout=self.grace_s)
            for task in done:
                self._settle(task, tasks[task], answers)
        for task in pending:  # not cancelled: a cut call may leave the client mid-reply
            copy = tasks[task]
            said = self._out.get(copy) == math.inf  # a call beside this one said so already
            self._out[copy] = math.inf
            if len(calls) > 1 and not said:
                log.warning("a copy of %s is not answering (%s): going on with the other",
                            self.what, copy)
            task.add_done_callback(lambda t, c=copy: self._finish_late(t, c))
        if answers:
            return answers
        raise failure or StoreUnavailable("no answer within %.2f s" % (deadline_s or 0.0))

    def _settle(self, task: asyncio.Future[T], copy: str, answers: dict[str, T]
                ) -> BaseException | None:
        """Note one copy's answer (or failure, returned)."""
        exc = task.exception()
        if exc is None:
            answers[copy] = task.result()
            self._back(copy)
            return None
        if not isinstance(exc, StoreUnavailable):  # a fault of ours, not the store's
            log.warning("a call to %s failed (%s)", self.what, type(exc).__name__)
        self._out[copy] = self.clock() + self.retry_s
        return exc

    def _back(self, copy: str) -> None:
        if self._out.pop(copy, None) == math.inf:
            log.info("%s: copy %s answers again", self.what, copy)

    def _finish_late(self, task: asyncio.Future[T], copy: str) -> None:
        """A call left to finish on its own has: its copy is in again, or out for RETRY_S."""
        if task.cancelled() or task.exception() is not None:
            self._out[copy] = self.clock() + self.retry_s
        else:
            self._back(copy)
