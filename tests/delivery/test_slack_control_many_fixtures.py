"""Eight fixtures' Slack control channels at once, each getting new cards at 2 a second: every
channel sees its cards (or a digest naming them) within seconds, with no 429. Slack limits
each Web API method apart (posts ~1/s per channel, chat.update and pins per workspace), and
the fake Slack enforces exactly that; one workspace-wide cap on every call made each
channel's wait grow with the number of fixtures (#27 item 8). Time is virtual: it moves
only when every chat's worker is asleep on it or idle."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json
import re
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import pytest_asyncio
from pydantic import SecretStr

from bot.app import build_core
from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import SharedRateLimiter
from bot.delivery.scopes import Scopes
from bot.runtime import slack_for
from bot.settings import Settings
from bot.store import Store
from bot.store.windows import Windows
from rigs.fakes.slack_api import SIGNING_SECRET, FakeSlack
from tests.support.cards import card

FIXTURES = 8
PER_SECOND = 2  # new cards a second into each control channel
SECONDS = 20
INC = re.compile(r"INC-(\d+)\b")  # in JSON a line break before it reads "\\nINC-"


class VirtualTime:
    """Monotonic time that jumps to the next sleeper's wake-up once every chat's worker is
    asleep on it or idle (real I/O, to Redis and the fake, runs in between)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self.asleep: set[asyncio.Task[Any]] = set()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        fut = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (self.now + max(0.0, seconds), next(self._seq), fut))
        task = asyncio.current_task()
        assert task is not None
        self.asleep.add(task)
        try:
            await fut
        finally:
            self.asleep.discard(task)

    def _settled(self, n: Notifier, driver: asyncio.Task[Any]) -> bool:
        if not (driver.done() or driver in self.asleep):
            return False
        for key, queue in n._queues.items():
            worker = n._workers[key]
            if worker in self.asleep:
                continue
            if queue.busy or queue.items or queue.wake.is_set() or not queue.idle.is_set():
                return False
        return all(q.board.timer is None or q.board.timer.done() or q.board.timer in self.asleep
                   for q in n._queues.values())

    async def run(self, n: Notifier, coro: Coroutine[Any, Any, None]) -> None:
        """Run the driver to its end and the queues dry, moving time when all is settled."""
        driver = asyncio.ensure_future(coro)
        while True:
            for _ in range(5):
                await asyncio.sleep(0.001)
            if not self._settled(n, driver):
                continue
            await asyncio.sleep(0.003)  # settled twice in a row: nothing in flight
            if not self._settled(n, driver):
                continue
            if driver.done() and not any(q.items or q.busy for q in n._queues.values()):
                break
            if not self._heap:
                continue
            t, _, fut = heapq.heappop(self._heap)
            self.now = max(self.now, t)
            if not fut.done():
                fut.set_result(None)
        await driver


@pytest_asyncio.fixture
async def slack_fake() -> AsyncIterator[tuple[FakeSlack, VirtualTime]]:
    """The fake Slack Web API enforcing Slack's per-method limits on virtual time."""
    t = VirtualTime()
    fake = FakeSlack(enforce_limits=True, clock=t.clock)
    await fake.start()
    yield fake, t
    await fake.stop()


def channel(k: int) -> str:
    return f"C0CONTROL{k}"


async def test_eight_fixtures_slack_control_channels_each_see_their_cards_within_seconds(
        store: Store, settings: Settings, clock, slack_fake) -> None:
    fake, t = slack_fake
    core = build_core(store, settings, clock)
    n = core.notifier
    n.channels = {}
    n.scopes = Scopes(fixtures={f"fx{k}": {"control": {"slack": [channel(k)]}}
                                for k in range(FIXTURES)})
    n.limiter = SharedRateLimiter(Windows(store.gateway), clock=t.clock, sleep=t.sleep,
                                  monotonic=t.clock)
    n.clock = t.clock
    n.board_sleep = t.sleep
    s = settings.model_copy(update={
        "slack_bot_token": SecretStr("xoxb-test"),
        "slack_signing_secret": SecretStr(SIGNING_SECRET), "slack_api_url": fake.api_url})
    adapter = slack_for(core, s)
    await adapter.start()
    queued: dict[int, tuple[float, str]] = {}  # incident number -> (queued at, channel)

    async def reports() -> None:
        number = itertools.count(1)
        for _ in range(SECONDS * PER_SECOND):
            batch = []
            for k in range(FIXTURES):
                inc = next(number)
                queued[inc] = (t.now, channel(k))
                batch.append(card(inc, fixture=f"fx{k}"))
            await n.send(batch)
            await t.sleep(1 / PER_SECOND)

    try:
        await asyncio.wait_for(t.run(n, reports()), 240)
    finally:
        await adapter.stop(drain_seconds=0)

    seen: dict[int, float] = {}  # incident number -> first time its channel showed it
    for call in fake.calls:
        if call.method not in ("chat.postMessage", "chat.update") or not call.ok:
            continue
        if "Live board" in json.dumps(call.params):
            continue  # the board lists them too; what counts here is the card or digest
        for m in INC.finditer(json.dumps(call.params)):
            inc = int(m.group(1))
            if inc in queued and queued[inc][1] == call.params.get("channel"):
                seen.setdefault(inc, call.at)
    missing = sorted(set(queued) - set(seen))
    assert not missing, f"{len(missing)} cards never shown, e.g. {missing[:5]}"
    waits = sorted(seen[i] - queued[i][0] for i in queued)
    p95 = waits[int(0.95 * (len(waits) - 1))]
    worst = waits[-1]
    figures = (f"{FIXTURES} Slack control channels at {PER_SECOND}/s: {len(waits)} cards, "
               f"p95 {p95:.1f} s, worst {worst:.1f} s, {fake.too_many} x 429")
    print("\n" + figures)
    assert fake.too_many == 0, figures
    assert p95 <= 3.0 and worst <= 5.0, figures
